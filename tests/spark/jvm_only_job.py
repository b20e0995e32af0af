"""Writes, partitioned writes and optimizes whose executors cannot start Python; one JSON line.

``python -m tests.spark.jvm_only_job PATH``: a ``local-cluster[2,1,1024]``
master whose Python workers would run ``/bin/false``, so any step that needed
Python (and zorder, NumPy, pyarrow) on an executor fails the job. Rank keys
in a classic session need none: the file plan runs in the JVM
(``zorder.spark.FileKeys``), the sample and the statistics travel to the
driver as Arrow.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import zorder
from tests.spark.jvm import executors, local_cluster_session
from zorder.demo import network_frame

BY = ["src_ip", "dst_ip", "src_port", "dst_port"]


def steps(spark: SparkSession, df: DataFrame, path: str) -> dict[str, Any]:
    """Z-order and partitioned writes of ``df``, Hilbert and partitioned optimizes, reads.
    The optimizes run in Spark (``engine="spark"``): ones this small would otherwise run
    in process, on no executor."""
    days = df.withColumn("day", F.concat(F.lit("2026-11-0"), (F.col("src_port") % 3 + 1)))
    flat, parted = f"{path}/flat", f"{path}/parted"
    written = zorder.write(df, flat, by=BY, num_files=8)
    hilbert = zorder.optimize(spark, flat, by=BY, curve="hilbert", num_files=6, engine="spark")
    by_day = zorder.write(days, parted, by=BY, partition_by=["day"], num_files=9)
    optimized = zorder.optimize(
        spark, parted, by=BY, curve="hilbert", where="day >= '2026-11-02'", engine="spark"
    )
    ip = df.select("src_ip").first()[0]  # type: ignore[index]
    return {
        "executors": executors(spark),
        "files": [written.files_added, hilbert.files_added, by_day.files_added],
        "optimized": [optimized.files_removed, optimized.rows],
        "rows": [zorder.read(spark, flat).count(), zorder.read(spark, parted).count()],
        "none": zorder.read(spark, flat, "src_port < 0").count(),  # no file read: an empty frame
        "matches": zorder.read(spark, flat, f"src_ip = '{ip}'").count(),
        "expected_matches": df.where(f"src_ip = '{ip}'").count(),
    }


def main(path: str) -> None:
    os.environ["PYSPARK_PYTHON"] = "/bin/false"  # what every Python UDF's workers would run
    spark = local_cluster_session("zorder-jvm-only")
    result = steps(spark, network_frame(spark, 20_000, seed=12), path)
    print(json.dumps(result), flush=True)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
