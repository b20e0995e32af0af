"""Build src/zorder/spark/zorder-spark.jar from jvm/src with javac, byte for byte reproducibly.

    .venv/bin/python scripts/build_jar.py [--out PATH]

Compiled for Java 17 against the Spark jars of the installed pyspark. The jar's
entries carry a fixed timestamp, so the same sources and javac give the same
bytes (tests/spark/test_committer.py checks the committed jar that way).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pyspark

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "jvm" / "src"
JAR = ROOT / "src" / "zorder" / "spark" / "zorder-spark.jar"
_EPOCH = (1980, 1, 1, 0, 0, 0)


def build(out: Path) -> None:
    spark_jars = Path(pyspark.__file__).parent / "jars"
    sources = sorted(str(p) for p in SOURCES.rglob("*.java"))
    with tempfile.TemporaryDirectory() as classes:
        subprocess.run(
            ["javac", "--release", "17", "-cp", f"{spark_jars}/*", "-d", classes, *sources],
            check=True,
        )
        compiled = sorted(Path(classes).rglob("*.class"))
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as jar:
            manifest = zipfile.ZipInfo("META-INF/MANIFEST.MF", _EPOCH)
            jar.writestr(manifest, "Manifest-Version: 1.0\r\nCreated-By: zorder\r\n\r\n")
            for path in compiled:
                info = zipfile.ZipInfo(path.relative_to(classes).as_posix(), _EPOCH)
                jar.writestr(info, path.read_bytes(), zipfile.ZIP_DEFLATED)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=JAR)
    build(parser.parse_args().out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
