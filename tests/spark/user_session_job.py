"""Every public call, in a session built as a user builds theirs; prints one JSON line.

``python -m tests.spark.user_session_job DIR [MASTER]``: a plain
``SparkSession.builder`` with loopback settings only (no
``zorder.spark.local_session``, no time zone, Spark's own ANSI default), then
write, append, optimize, read, to_arrow, explain, Hilbert, a partitioned write
and ``optimize(where=)``, advise and vacuum. Each call's rows are compared with
Spark's answer on the source frame; the parent also checks that the process
exits with status 0 (pyspark 4.3 once aborted at exit beside DuckDB's threads).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import zorder


def user_session(master: str) -> SparkSession:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master(master)
        .appName("a user's own session")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def source(spark: SparkSession, rows: int) -> DataFrame:
    return spark.range(rows).select(
        (F.col("id") % 997).alias("a"),
        (F.col("id") * 7 % 1009).alias("b"),
        F.expr("date_add(date'2026-11-01', CAST(id % 3 AS INT))").alias("day"),
        F.concat(F.lit("host-"), (F.col("id") % 53).cast("string")).alias("host"),
        F.col("id"),
    )


def main(directory: str, master: str) -> None:
    spark = user_session(master)
    src = source(spark, 60_000)
    more = source(spark, 61_000).where("id >= 60000")
    both = src.unionByName(more)
    table, hilbert, parted = (f"{directory}/{name}" for name in ("z", "h", "p"))
    where = "a < 40 AND b >= 500"
    result: dict[str, Any] = {
        "spark": spark.version,
        "ansi": spark.conf.get("spark.sql.ansi.enabled"),
    }

    zorder.write(src, table, by=["a", "b", "host"], num_files=8)
    result["write"] = [zorder.read(spark, table).count(), src.count()]
    zorder.write(more, table, mode="append")
    result["append"] = [zorder.read(spark, table).count(), both.count()]
    zorder.optimize(spark, table)
    result["optimize"] = [zorder.read(spark, table).count(), both.count()]
    result["read"] = [zorder.read(spark, table, where).count(), both.where(where).count()]
    result["to_arrow"] = [zorder.to_arrow(table, where).num_rows, both.where(where).count()]
    report = zorder.explain(table, where)
    result["explain"] = [report.files_scanned < report.files_total, True]

    zorder.write(src, hilbert, by=["a", "b"], curve="hilbert", num_files=6)
    result["hilbert"] = [zorder.read(spark, hilbert, "b = 7").count(), src.where("b = 7").count()]

    day = "day = '2026-11-02' AND a = 3"
    zorder.write(src, parted, by=["a", "b"], partition_by=["day"], num_files=3)
    result["partitioned"] = [zorder.read(spark, parted, day).count(), src.where(day).count()]
    zorder.write(more, parted, mode="append")
    zorder.optimize(spark, parted, where="day = '2026-11-02'")
    result["optimize_where"] = [zorder.read(spark, parted, day).count(), both.where(day).count()]

    advice = zorder.advise(table, ["a = 5", "b = 9 AND a < 100"], spark=spark, num_files=8)
    result["advise"] = [bool(advice.spec.columns), True]
    vacuumed = zorder.vacuum(table)
    result["vacuum"] = [zorder.read(spark, table).count(), both.count()]
    result["vacuum_files"] = len(vacuumed.files)
    print(json.dumps(result), flush=True)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "local[2]")
