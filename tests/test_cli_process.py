"""The `zorder` command as a user runs it, in a process of its own, where no JVM is
needed: refusals in process, a query with no Java to be found."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tests.spark.jvm import QUICK_JVM_OPTIONS

# Where a command does start Spark (tests/spark/test_cli_process.py), a quick JVM.
QUICK_JVM = ("--conf", f"spark.driver.extraJavaOptions={QUICK_JVM_OPTIONS}")


def zorder_command(
    *arguments: str, temporary: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYSPARK_PYTHON"}
    if temporary is not None:
        env["TMPDIR"] = str(temporary)
    return subprocess.run(
        [sys.executable, "-m", "zorder", *arguments, "--master", "local[2]", *QUICK_JVM],
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, "COLUMNS": "100"},
    )


def test_a_failure_in_process_names_no_spark_log(tmp_path: Path) -> None:
    """A write this small runs in process (the default --engine auto): no JVM, no log."""
    source = tmp_path / "src.parquet"
    pq.write_table(pa.table({"a": [1, 2, 3]}), source)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    options = ["--by", "a", "--partition-by", "nope", "--json"]
    done = zorder_command("write", str(source), str(tmp_path / "t"), *options, temporary=temporary)
    assert done.returncode == 2
    assert done.stdout == ""
    error = json.loads(done.stderr)
    assert error["error"] == "ColumnNotFoundError"
    assert "unknown partition column 'nope'" in error["message"]
    assert "spark_log" not in error
    assert not list(temporary.glob("zorder-spark-*.log"))


def test_a_query_starts_no_jvm(tmp_path: Path) -> None:
    """Without --spark, `zorder query` answers with no Java to be found at all."""
    from deltalake import write_deltalake

    path = tmp_path / "t"
    write_deltalake(
        path, pa.table({"ip": [f"10.0.0.{i % 50}" for i in range(500)], "n": range(500)})
    )
    no_java = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "SPARK_HOME")}
    no_java["PATH"] = str(Path(sys.executable).parent)  # the venv's tools, no java
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "zorder",
            "query",
            str(path),
            "--where",
            "ip = '10.0.0.7'",
            "--limit",
            "3",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**no_java, "JAVA_HOME": str(tmp_path / "no-java")},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line for line in done.stdout.splitlines() if line.strip()]
    assert len(rows) == 3
    assert all('"ip": "10.0.0.7"' in row for row in rows)
