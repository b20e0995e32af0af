"""A Structured Streaming query into a zorder table, in a process of its own, to be killed.

``python -m tests.spark.stream_child MOMENT SOURCE TABLE CHECKPOINT BY [BATCH]``

runs ``spark.readStream`` over the JSON files in SOURCE (one file a batch:
``maxFilesPerTrigger`` 1) with ``writeStream.foreachBatch(zorder.foreach_batch(TABLE,
by=BY))`` (BY: comma-separated columns; ``-`` for none, the table's spec) and the
checkpoint CHECKPOINT, ``trigger(availableNow=True)``: every file there is, then
the query stops. After each batch it prints ``BATCH {json}`` (the batch id, the
query's id, and what the writer's ``last`` metrics say: ``skipped``, rows, the data
commit's version). MOMENT says where batch BATCH announces itself on stdout and
waits to be killed:

- ``run``: nowhere; the query runs to the end and prints DONE (the tests restart a
  killed query in their own session instead, with :func:`start_query` and
  :func:`write_batch`);
- ``after-commit``: zorder's write of the batch returned (its data and properties
  are committed), so Spark's commit log lacks the batch: prints ``COMMITTED <batch>``;
- ``before-commit``: the run's Parquet files are written, the commit not made: prints
  ``COMMITTING <batch>``;
- ``spark``: the batch's clustering job is slowed down (each task sleeps), so it is
  still writing files when the parent sees them appear: prints ``WRITING <batch>``.

``python -m tests.spark.stream_child race ROWS TABLE BARRIER INDEX APP VERSION``

appends the JSON file ROWS to TABLE with ``zorder.write(..., mode="append",
txn_app_id=APP, txn_version=VERSION)``; just before its commit it touches
``BARRIER/ready-<INDEX>`` and waits for the other racer's (indexes 0 and 1), so
both read the table before either commits. Prints ``METRICS {json}``.

Test code only: the hooks wrap zorder's functions from outside.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming.query import StreamingQuery

import zorder
import zorder.plan.runs as runs_module
import zorder.spark.engine as in_spark
from tests.spark.jvm import QUICK_JVM_OPTIONS
from zorder.api.streams import BatchWriter
from zorder.spark import local_session
from zorder.spark.layout import cluster
from zorder.table.delta.commit import commit_files

SCHEMA = "id BIGINT, a BIGINT, b BIGINT, c STRING"
COLUMNS = ["id", "a", "b", "c"]
KILL_MOMENTS = ("after-commit", "before-commit", "spark")
BARRIER_SECONDS = 120


def say(line: str) -> None:
    print(line, flush=True)


def session(name: str) -> SparkSession:
    quick = {"spark.driver.extraJavaOptions": QUICK_JVM_OPTIONS}
    spark = local_session(master="local[2]", app_name=name, conf=quick)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _slow(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        time.sleep(10)  # the kill comes a second after the job's first files
        yield batch


@dataclasses.dataclass
class Current:
    """The batch the query is in (foreachBatch runs on the driver, one batch at a time)."""

    batch: int = -1


def write_batch(writer: BatchWriter, df: DataFrame, batch_id: int) -> dict[str, Any]:
    """Batch ``batch_id`` written by ``writer``; what its metrics say, as JSON values."""
    writer(df, batch_id)
    last = writer.last
    assert last is not None
    return {
        "batch": batch_id,
        "query": df.sparkSession.sparkContext.getLocalProperty("sql.streaming.queryId"),
        "skipped": last.skipped,
        "rows": last.rows,
        "data_version": last.data_version,
        "by": list(last.by),
    }


def start_query(
    spark: SparkSession, source: str, checkpoint: str, sink: Callable[[DataFrame, int], None]
) -> StreamingQuery:
    """The query over SOURCE's files, one a batch, each passed to ``sink``, until all are."""
    frames = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(source)
    return (
        frames.writeStream.foreachBatch(sink)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )


def stream(moment: str, source: str, table: str, checkpoint: str, by: str, at: int) -> None:
    spark = session("zorder-stream-child")
    current = Current()

    def commit(*args: Any, **kwargs: Any) -> int:
        if current.batch == at and moment == "before-commit":
            say(f"COMMITTING {at}")
            time.sleep(600)
        return commit_files(*args, **kwargs)

    def slow_cluster(df: Any, *args: Any, **kwargs: Any) -> Any:
        laid_out = cluster(df, *args, **kwargs)
        if current.batch != at or moment != "spark":
            return laid_out
        say(f"WRITING {at}")
        frame = laid_out.frame.mapInArrow(_slow, laid_out.frame.schema)
        return dataclasses.replace(laid_out, frame=frame)

    # The process ends with the query (or is killed in it): nothing is put back.
    patch.object(runs_module, "commit_files", commit).start()
    patch.object(in_spark, "cluster", slow_cluster).start()

    writer = zorder.foreach_batch(table, by=None if by == "-" else by.split(","))

    def sink(df: DataFrame, batch_id: int) -> None:
        current.batch = batch_id
        say(f"BATCH {json.dumps(write_batch(writer, df, batch_id))}")
        if batch_id == at and moment == "after-commit":
            say(f"COMMITTED {at}")
            time.sleep(600)

    query = start_query(spark, source, checkpoint, sink)
    say(f"STARTED {query.id}")
    query.awaitTermination()
    say("DONE")
    spark.stop()


def race(rows: str, table: str, barrier: str, index: int, app_id: str, version: int) -> None:
    spark = session(f"zorder-race-child-{index}")
    ready = Path(barrier)

    def commit(*args: Any, **kwargs: Any) -> int:
        (ready / f"ready-{index}").touch()
        deadline = time.monotonic() + BARRIER_SECONDS
        while not all((ready / f"ready-{i}").exists() for i in (0, 1)):
            if time.monotonic() > deadline:
                raise TimeoutError("the other racer never reached its commit")
            time.sleep(0.01)
        say("COMMITTING")
        return commit_files(*args, **kwargs)

    patch.object(runs_module, "commit_files", commit).start()
    df = spark.read.schema(SCHEMA).json(rows)
    metrics = zorder.write(
        df, table, mode="append", by=["a", "b"], txn_app_id=app_id, txn_version=version
    )
    say(f"METRICS {json.dumps(dataclasses.asdict(metrics), default=str)}")
    spark.stop()


def main(argv: list[str]) -> None:
    moment = argv[0]
    if moment == "race":
        rows, table, barrier, index, app_id, version = argv[1:7]
        race(rows, table, barrier, int(index), app_id, int(version))
        return
    if moment != "run" and moment not in KILL_MOMENTS:
        raise SystemExit(f"unknown moment {moment!r}")
    source, table, checkpoint, by = argv[1:5]
    at = int(argv[5]) if len(argv) > 5 else -1
    stream(moment, source, table, checkpoint, by, at)


if __name__ == "__main__":
    main(sys.argv[1:])
