"""Delta Spark as the oracle: its rows for a filter, and the files its scan read.

The files come from the scan node's own metric (``numFiles`` of Spark's
``FileSourceScanExec``: the files Delta's data skipping and partition pruning
left), read off the executed plan after the rows are collected. ``inputFiles()``
would not do: on a Delta table it lists every file of the snapshot.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from tests.spark.helpers import spark_rows


def files_read(df: DataFrame) -> int:
    """Files the executed scans of ``df`` read (after ``df`` was collected)."""
    plan = df._jdf.queryExecution().executedPlan()
    if plan.nodeName().startswith("AdaptiveSparkPlan"):
        plan = plan.executedPlan()
    leaves = plan.collectLeaves()
    total = 0
    scans = 0
    for i in range(leaves.size()):
        leaf = leaves.apply(i)
        metrics = leaf.metrics()
        if metrics.contains("numFiles"):
            total += int(metrics.apply("numFiles").value())
            scans += 1
    assert scans, f"no file scan in {plan.toString()}"
    return total


def delta_scan(
    spark: SparkSession, path: str, columns: list[str], where: str | None = None
) -> tuple[Counter[tuple[Any, ...]], int]:
    """Delta Spark's rows of ``columns`` matching ``where``, and the files it read for them."""
    df = spark.read.format("delta").load(path)
    if where is not None:
        df = df.where(where)
    df = df.select(*[f"`{c}`" for c in columns])
    rows = spark_rows(df)
    return rows, files_read(df)


def delta_rows(spark: SparkSession, path: str, columns: list[str]) -> Counter[tuple[Any, ...]]:
    return delta_scan(spark, path, columns)[0]
