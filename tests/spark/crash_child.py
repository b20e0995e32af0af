"""A zorder run to be killed: ``python -m tests.spark.crash_child OPERATION PATH MOMENT``.

OPERATION is ``optimize`` (re-cluster the table by a, b, s), ``incremental``
(``optimize`` without arguments: the table's spec, what needs it),
``optimize-day`` (re-cluster one partition of a table partitioned by ``day``)
or ``append`` (zorder.write mode="append" of 3,000 new rows, clustered by a,
b, s). MOMENT says where the run announces itself
on stdout and, where a kill must land, waits for it:

- ``spark``: every key batch is slowed down, so the Spark job is still running
  when the parent sees its first files appear;
- ``before-commit``: prints COMMITTING, then waits instead of committing;
- ``during-commit``: prints COMMITTING and commits at once (the kill races it);
- ``after-commit``: commits, prints COMMITTED, then waits.

Test code only: the hooks wrap zorder's functions from outside.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Iterator
from typing import Any
from unittest.mock import patch

import pyarrow as pa

import zorder
import zorder.api.cluster as cluster_module
from tests.spark.jvm import QUICK_JVM_OPTIONS
from zorder.spark import local_session
from zorder.spark.layout import cluster
from zorder.spark.partitions import cluster_partitions
from zorder.table.commit import commit_files

COLUMNS = ["a", "b", "s"]


def _say(line: str) -> None:
    print(line, flush=True)


def _slow(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        time.sleep(2)
        yield batch


def main(operation: str, path: str, moment: str) -> None:
    quick = {"spark.driver.extraJavaOptions": QUICK_JVM_OPTIONS}
    spark = local_session(master="local[2]", app_name="zorder-crash-child", conf=quick)
    spark.sparkContext.setLogLevel("ERROR")

    def commit(*args: Any, **kwargs: Any) -> int:
        _say("COMMITTING")
        if moment == "before-commit":
            time.sleep(600)
        version = commit_files(*args, **kwargs)
        _say("COMMITTED")
        if moment == "after-commit":
            time.sleep(600)
        return version

    def slowed(laid_out: Any) -> Any:
        frame = laid_out.frame.mapInArrow(_slow, laid_out.frame.schema)
        return dataclasses.replace(laid_out, frame=frame)

    def slow_cluster(df: Any, *args: Any, **kwargs: Any) -> Any:
        return slowed(cluster(df, *args, **kwargs))

    def slow_partitions(*args: Any, **kwargs: Any) -> Any:
        layout = cluster_partitions(*args, **kwargs)
        return dataclasses.replace(layout, laid_out=slowed(layout.laid_out))

    # The process ends with the run (or is killed in it): nothing is put back.
    patch.object(cluster_module, "commit_files", commit).start()
    if moment == "spark":
        patch.object(cluster_module, "cluster", slow_cluster).start()
        patch.object(cluster_module, "cluster_partitions", slow_partitions).start()
    _say("STARTED")
    if operation == "optimize":
        zorder.optimize(spark, path, by=COLUMNS, num_files=6)
    elif operation == "incremental":
        zorder.optimize(spark, path)
    elif operation == "optimize-day":
        zorder.optimize(spark, path, by=["a", "b"], where="day = 'd1'", num_files=3)
    else:
        new_rows = spark.range(3_000).selectExpr(
            "CAST(id + 1000000 AS BIGINT) AS a",
            "CAST(id % 97 AS BIGINT) AS b",
            "concat('new-', CAST(id AS STRING)) AS s",
        )
        zorder.write(new_rows, path, by=COLUMNS, mode="append", num_files=4)
    _say("DONE")


if __name__ == "__main__":
    main(*sys.argv[1:4])
