"""Delta Spark (the reference implementation of Delta's PROTOCOL.md) for the tests.

The tests' SparkSession loads Delta Spark's jars from Maven Central through
Spark's own ``spark.jars.packages`` (Ivy resolves ``delta-spark`` and what it
needs, cached under ``~/.cache/zorder-tests/ivy`` between runs) and is built
as most users build theirs: with Delta's SQL extension and catalog. The jars
only: the ``delta-spark`` PyPI package pins pyspark and would replace the
one under test.

Which Delta release goes with which Spark line is Delta's own table (its
release notes): Delta 3.3 is the last for Spark 3.5, Delta 4.4 is built for
Spark 4.0.1, 4.1.0 and 4.2.0 (artifacts ``delta-spark_<spark line>_2.13``).
No Delta release is built for Spark 4.3 yet: a run on it goes without Delta,
and the tests that need it skip and say why. Everywhere else a run that cannot
get the jars stops with the reason (``make test`` never skips Delta quietly).

``ZORDER_TEST_DELTA`` overrides the choice: a Maven coordinate, or ``none``
to run without Delta (the tests that need it then skip, naming the setting).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

EXTENSIONS = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}

# Spark line -> the newest Delta Spark built for it (Maven Central, checked 2026-12-02).
_PACKAGES = {
    "3.5": "io.delta:delta-spark_2.12:3.3.2",
    "4.0": "io.delta:delta-spark_4.0_2.13:4.4.0",
    "4.1": "io.delta:delta-spark_4.1_2.13:4.4.0",
    "4.2": "io.delta:delta-spark_4.2_2.13:4.4.0",
}


def ivy_home() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "zorder-tests" / "ivy"


@contextlib.contextmanager
def resolving() -> Iterator[None]:
    """Hold the Ivy cache's lock: two processes resolving into one cache at once corrupt it
    (each writes the same ``.part`` files), so sessions that fetch start one at a time."""
    home = ivy_home()
    home.mkdir(parents=True, exist_ok=True)
    with open(home.parent / "ivy.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def package(spark_version: str) -> tuple[str | None, str]:
    """The Delta Spark coordinate for this pyspark, or None, with the reason in words."""
    chosen = os.environ.get("ZORDER_TEST_DELTA", "").strip()
    if chosen.lower() == "none":
        return None, "ZORDER_TEST_DELTA=none: this run goes without Delta Spark"
    if chosen:
        return chosen, f"ZORDER_TEST_DELTA={chosen}"
    line = ".".join(spark_version.split(".")[:2])
    found = _PACKAGES.get(line)
    if found is None:
        return None, f"no Delta Spark release is built for Spark {line} yet"
    return found, f"{found}, the newest Delta Spark for Spark {line}"


def session_conf(spark_version: str) -> tuple[dict[str, str], str | None, str]:
    """The settings that add Delta Spark to a session: (conf, coordinate or None, reason)."""
    coordinate, reason = package(spark_version)
    if coordinate is None:
        return {}, None, reason
    conf = {
        "spark.jars.packages": coordinate,
        "spark.jars.ivy": str(ivy_home()),
        **EXTENSIONS,
        # Delta rebuilds a snapshot's state in 50 tasks by default: on the tests' small
        # tables that is most of every command's time.
        "spark.databricks.delta.snapshotPartitions": "2",
        # VACUUM lists and compares files in this many tasks (10,000 by default).
        "spark.sql.sources.parallelPartitionDiscovery.parallelism": "4",
    }
    return conf, coordinate, reason
