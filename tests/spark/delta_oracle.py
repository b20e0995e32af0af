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
    """Files the executed scans of ``df`` read (after ``df`` was collected).

    Adaptive execution's query stages (an aggregate's shuffle) hold their plans
    apart from the tree's children: the walk goes into them.
    """
    total, scans = 0, 0
    pending = [df._jdf.queryExecution().executedPlan()]
    while pending:
        node = pending.pop()
        name = node.nodeName()
        if name.startswith("AdaptiveSparkPlan"):
            pending.append(node.executedPlan())
            continue
        if "QueryStage" in name:
            pending.append(node.plan())
            continue
        metrics = node.metrics()
        if node.children().isEmpty() and metrics.contains("numFiles"):
            total += int(metrics.apply("numFiles").value())
            scans += 1
        children = node.children()
        pending += [children.apply(i) for i in range(children.size())]
    assert scans, f"no file scan in {df._jdf.queryExecution().executedPlan().toString()}"
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
