"""The benchmarks' Spark session, built as a user builds theirs.

A plain ``SparkSession.builder`` with only what keeps Spark on this machine's
loopback and without its UI: Spark's own defaults otherwise (200 shuffle
partitions with adaptive execution, no session time zone, no Arrow setting),
not ``zorder.spark.local_session``'s. A benchmark that needs a setting (a
driver heap) passes it and its section says so.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

import pyspark
from pyspark.sql import SparkSession

SESSION = "a session built with SparkSession.builder, Spark's defaults"


def user_session(
    app_name: str, *, master: str = "local[2]", conf: Mapping[str, str] | None = None
) -> SparkSession:
    """Get or create the session; Python workers run this interpreter, as in a user's venv."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
    )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def delta_user_session(app_name: str) -> tuple[SparkSession, str]:
    """The session a Delta user builds: Delta Spark's jars from Maven Central (the release
    ``tests/delta_spark.py`` picks for this Spark line), its SQL extension and catalog, Delta's
    defaults otherwise (not the tests' tuning); with the Delta coordinate it runs."""
    from tests import delta_spark

    from zorder.errors import BenchmarkError

    conf, coordinate, reason = delta_spark.session_conf(pyspark.__version__)
    if coordinate is None:
        raise BenchmarkError(f"needs Delta Spark: {reason}")
    for tuning in (  # the tests' own settings, not a user's
        "spark.databricks.delta.snapshotPartitions",
        "spark.sql.sources.parallelPartitionDiscovery.parallelism",
    ):
        conf.pop(tuning)
    conf["spark.ui.showConsoleProgress"] = "false"
    with delta_spark.resolving():
        return user_session(app_name, conf=conf), coordinate
