"""A zorder run to be killed: ``python -m tests.spark.crash_child OPERATION PATH MOMENT``.

OPERATION is ``optimize`` (re-cluster the table by a, b, s), ``incremental``
(``optimize`` without arguments: the table's spec, what needs it),
``optimize-day`` (re-cluster one partition of a table partitioned by ``day``),
``append`` (zorder.write mode="append" of a DataFrame of 3,000 new rows, clustered by
a, b, s: always Spark's) or ``append-files`` (the same rows, written first as a Parquet
file beside the table, then appended from its path). MOMENT says which engine runs,
where the run announces itself on stdout and, where a kill must land, waits for it:

- ``spark``: ``engine="spark"``; every key batch is slowed down, so the Spark job is
  still running when the parent sees its first files appear;
- ``arrow``: ``engine="arrow"`` (this process, no JVM); the first file of the run is
  written, then the run prints WRITING and waits before writing the others;
- ``before-commit``: prints COMMITTING, then waits instead of committing;
- ``during-commit``: prints COMMITTING and commits at once (the kill races it);
- ``after-commit``: commits, prints COMMITTED, then waits.

The commit moments run the default engine (``auto``: an optimize or a write of files
this small runs in process). A Spark session is started only when Spark runs.

Test code only: the hooks wrap zorder's functions from outside.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import SparkSession

import zorder
import zorder.arrow.engine as inprocess_module
import zorder.plan.runs as runs_module
import zorder.spark.engine as in_spark
from tests.spark.jvm import QUICK_JVM_OPTIONS
from zorder.arrow.layout import FileRows
from zorder.arrow.writes import write_files
from zorder.plan.modes import Engine
from zorder.spark import local_session
from zorder.spark.layout import cluster
from zorder.spark.partitions import cluster_partitions
from zorder.table.delta.commit import commit_files

COLUMNS = ["a", "b", "s"]
APPENDED = 3_000
# The engine each moment runs: the commit moments leave the choice to zorder.
ENGINES: dict[str, Engine] = {"spark": "spark", "arrow": "arrow"}


def _say(line: str) -> None:
    print(line, flush=True)


def _slow(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        time.sleep(2)
        yield batch


def _session() -> SparkSession:
    quick = {"spark.driver.extraJavaOptions": QUICK_JVM_OPTIONS}
    spark = local_session(master="local[2]", app_name="zorder-crash-child", conf=quick)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def appended_rows() -> pa.Table:
    """The rows ``append-files`` adds: those of ``append``'s DataFrame."""
    ids = range(APPENDED)
    return pa.table(
        {
            "a": pa.array([i + 1_000_000 for i in ids], pa.int64()),
            "b": pa.array([i % 97 for i in ids], pa.int64()),
            "s": pa.array([f"new-{i}" for i in ids]),
        }
    )


def announcing_commit(moment: str) -> Callable[..., int]:
    """zorder's commit, announced on stdout (COMMITTING, COMMITTED), and held where
    ``moment`` says a kill must land: ``before-commit`` or ``after-commit``."""

    def commit(*args: Any, **kwargs: Any) -> int:
        _say("COMMITTING")
        if moment == "before-commit":
            time.sleep(600)
        version = commit_files(*args, **kwargs)
        _say("COMMITTED")
        if moment == "after-commit":
            time.sleep(600)
        return version

    return commit


def main(operation: str, path: str, moment: str) -> None:
    engine = ENGINES.get(moment, "auto")
    commit = announcing_commit(moment)

    def slowed(laid_out: Any) -> Any:
        frame = laid_out.frame.mapInArrow(_slow, laid_out.frame.schema)
        return dataclasses.replace(laid_out, frame=frame)

    def slow_cluster(df: Any, *args: Any, **kwargs: Any) -> Any:
        return slowed(cluster(df, *args, **kwargs))

    def slow_partitions(*args: Any, **kwargs: Any) -> Any:
        layout = cluster_partitions(*args, **kwargs)
        return dataclasses.replace(layout, laid_out=slowed(layout.laid_out))

    def first_file_then_wait(rows: pa.Table, files: FileRows, **kwargs: Any) -> list[str]:
        first = dataclasses.replace(files, numbers=files.numbers[:1], bounds=files.bounds[:2])
        write_files(rows, first, **kwargs)
        _say("WRITING")
        time.sleep(600)
        raise AssertionError("the kill never came")

    # The process ends with the run (or is killed in it): nothing is put back.
    patch.object(runs_module, "commit_files", commit).start()
    if moment == "spark":
        patch.object(in_spark, "cluster", slow_cluster).start()
        patch.object(in_spark, "cluster_partitions", slow_partitions).start()
    if moment == "arrow":
        patch.object(inprocess_module, "write_files", first_file_then_wait).start()
    source = Path(f"{path}-input")  # append-files' input, beside the table
    if operation == "append-files":
        source.mkdir()
        pq.write_table(appended_rows(), source / "rows.parquet")
    _say("STARTED")
    if operation == "optimize":
        zorder.optimize(_session, path, by=COLUMNS, num_files=6, engine=engine)
    elif operation == "incremental":
        zorder.optimize(_session, path, engine=engine)
    elif operation == "optimize-day":
        where = "day = 'd1'"
        zorder.optimize(_session, path, by=["a", "b"], where=where, num_files=3, engine=engine)
    elif operation == "append-files":
        zorder.write(
            str(source),
            path,
            by=COLUMNS,
            mode="append",
            num_files=4,
            engine=engine,
            spark=_session,
        )
    else:
        new_rows = (
            _session()
            .range(APPENDED)
            .selectExpr(
                "CAST(id + 1000000 AS BIGINT) AS a",
                "CAST(id % 97 AS BIGINT) AS b",
                "concat('new-', CAST(id AS STRING)) AS s",
            )
        )
        zorder.write(new_rows, path, by=COLUMNS, mode="append", num_files=4, engine=engine)
    _say("DONE")


if __name__ == "__main__":
    main(*sys.argv[1:4])
