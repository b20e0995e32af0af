"""Structured Streaming into a zorder table: ``zorder.foreach_batch`` and optimize beside it.

Real streaming queries read a directory of JSON files (one file a batch)
and write through :func:`zorder.foreach_batch`; optimize runs between
batches and while the query keeps appending. Each table ends with exactly
the source rows (read by DuckDB's ``delta_scan`` and delta-rs), the query's
``txn`` at its last batch and every run's ``txn`` kept. The kills and
restarts are in ``test_stream_faults.py``.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pytest
from deltalake import DeltaTable
from deltalake.exceptions import TableNotFoundError
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming.query import StreamingQuery

import zorder
import zorder.plan.runs as runs_module
from tests.spark.helpers import delta_rs_rows, kernel_rows
from zorder.errors import ConcurrentCommitError, InvalidArgumentError
from zorder.plan.modes import Engine
from zorder.table.delta.commit import CommitRequest, commit_files

pytestmark = pytest.mark.spark

COLUMNS = ["id", "a", "b", "day"]
SCHEMA = "id BIGINT, a BIGINT, b BIGINT, day STRING"
ROWS_PER_FILE = 300


def source_rows(number: int, day: str) -> list[dict[str, Any]]:
    start = number * ROWS_PER_FILE
    return [
        {"id": i, "a": (i * 7919) % 1000, "b": (i * 104729) % 997, "day": day}
        for i in range(start, start + ROWS_PER_FILE)
    ]


def add_source_file(source: Path, number: int, day: str = "d0") -> Counter[tuple[Any, ...]]:
    """One more file for the query to read as a batch of its own; its rows."""
    rows = source_rows(number, day)
    staged = source.parent / f".{number:04d}.json"
    staged.write_text("\n".join(json.dumps(r) for r in rows))
    staged.rename(source / f"{number:04d}.json")  # the query never sees half a file
    return Counter(tuple(r[c] for c in COLUMNS) for r in rows)


def start_query(
    spark: SparkSession, source: Path, checkpoint: Path, writer: zorder.BatchWriter
) -> StreamingQuery:
    stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source))
    return (
        stream.writeStream.foreachBatch(writer)
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime="200 milliseconds")
        .start()
    )


def read_back(kernel: duckdb.DuckDBPyConnection, path: Path) -> Counter[tuple[Any, ...]]:
    rows = delta_rs_rows(str(path), COLUMNS)
    assert kernel_rows(kernel, str(path), COLUMNS) == rows
    return rows


def run_transactions_kept(path: Path) -> None:
    """Every run whose files are live is still vouched for by its txn (describe trusts it)."""
    files = zorder.describe(str(path)).files
    untrusted = [f.path for f in files if f.path.startswith("zorder-") and f.run is None]
    assert not untrusted


def wait_for_batch(path: Path, query_id: str, batch: int, timeout: float = 120) -> None:
    """Until the table records ``batch`` of the query (its txn version)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(TableNotFoundError):  # the first batch makes the table
            if (DeltaTable(str(path)).transaction_version(query_id) or -1) >= batch:
                return
        time.sleep(0.1)
    raise AssertionError(f"the query did not commit batch {batch} in {timeout} s")


@pytest.mark.compat
def test_each_batch_is_appended_once_clustered_by_the_spec(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    source, path = tmp_path / "source", tmp_path / "t"
    source.mkdir()
    expected = sum((add_source_file(source, n) for n in range(3)), Counter())
    writer = zorder.foreach_batch(str(path), by=["a", "b"], num_files=2)
    query = start_query(spark, source, tmp_path / "checkpoint", writer)
    try:
        query.processAllAvailable()
        expected += add_source_file(source, 3)
        query.processAllAvailable()
    finally:
        query.stop()
    assert read_back(kernel, path) == expected
    table = DeltaTable(str(path))
    assert table.transaction_version(str(query.id)) == 3  # batches 0..3, one file each
    described = zorder.describe(str(path))
    assert described.spec is not None
    assert described.spec.columns == ("a", "b")
    assert len(described.runs) == 4  # each batch a clustered run
    assert writer.last is not None
    assert not writer.last.skipped
    run_transactions_kept(path)


@pytest.mark.parametrize("engine", ["spark", "arrow"])
def test_optimize_commits_between_and_beside_live_batches(
    spark: SparkSession,
    kernel: duckdb.DuckDBPyConnection,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    engine: Engine,
) -> None:
    """A query keeps appending to day d1 while optimize rewrites the table between its
    batches (whole, then where= on the day it is not writing); each optimize commits after
    the query committed another batch since the optimize read the table. The optimize runs
    in Spark or in this process; the batches, DataFrames, are always Spark's."""
    source, path = tmp_path / "source", tmp_path / "t"
    source.mkdir()
    expected = sum((add_source_file(source, n, "d0") for n in range(2)), Counter())
    writer = zorder.foreach_batch(str(path), by=["a", "b"], partition_by=["day"], num_files=2)
    query = start_query(spark, source, tmp_path / "checkpoint", writer)
    files = iter(range(2, 100))
    beside: list[int] = []

    def commit(request: CommitRequest, *args: Any, **kwargs: Any) -> int:
        nonlocal expected
        if request.mode == "rewrite":  # optimize's: a batch commits in between
            number = next(files)
            expected += add_source_file(source, number, "d1")
            wait_for_batch(path, str(query.id), number)
            beside.append(number)
        return commit_files(request, *args, **kwargs)

    monkeypatch.setattr(runs_module, "commit_files", commit)
    optimized = []
    try:
        wait_for_batch(path, str(query.id), 1)
        for round_ in range(2):
            expected += add_source_file(source, next(files), "d1")  # and one between
            where = None if round_ % 2 == 0 else "day = 'd0'"
            done = zorder.optimize(spark, str(path), where=where, full=True, engine=engine)
            optimized.append(done)
        query.processAllAvailable()
    finally:
        query.stop()
    assert query.exception() is None
    assert all(m.version is not None and m.files_removed for m in optimized)
    assert [m.engine for m in optimized] == [engine, engine]
    assert len(beside) == 2
    assert read_back(kernel, path) == expected
    last_batch = next(files) - 1  # one file a batch
    assert DeltaTable(str(path)).transaction_version(str(query.id)) == last_batch
    run_transactions_kept(path)


def test_a_batch_that_meets_a_concurrent_metadata_change_is_written_again(
    spark: SparkSession,
    kernel: duckdb.DuckDBPyConnection,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A metadata commit (here a table property, as an optimize with a new spec makes one)
    lands between the batch's read of the table and its commit: the commit fails, nothing
    of it is committed, and the writer writes the batch again, once."""
    path = tmp_path / "t"
    frame = spark.createDataFrame(source_rows(0, "d0"), SCHEMA)
    zorder.write(frame, str(path), by=["a", "b"])
    writer = zorder.foreach_batch(str(path), app_id="loader", retries=1)
    changes = iter([{"delta.logRetentionDuration": "interval 31 days"}])
    attempts = []

    def commit(*args: Any, **kwargs: Any) -> int:
        change = next(changes, None)
        if change is not None:
            DeltaTable(str(path)).alter.set_table_properties(change)
        attempts.append(change)
        return commit_files(*args, **kwargs)

    monkeypatch.setattr(runs_module, "commit_files", commit)
    second = spark.createDataFrame(source_rows(1, "d0"), SCHEMA)
    writer(second, 0)
    assert len(attempts) == 2  # the first commit failed on the metadata change
    assert writer.last is not None
    assert not writer.last.skipped
    writer(second, 0)  # Spark's replay after a restart
    assert writer.last.skipped
    expected = Counter(tuple(r[c] for c in COLUMNS) for n in (0, 1) for r in source_rows(n, "d0"))
    assert read_back(kernel, path) == expected


def test_a_batch_that_keeps_meeting_conflicts_fails_with_nothing_committed(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "t"
    frame = spark.createDataFrame(source_rows(0, "d0"), SCHEMA)
    zorder.write(frame, str(path), by=["a", "b"])
    count = iter(range(100))

    def commit(*args: Any, **kwargs: Any) -> int:
        value = f"interval {30 + next(count)} days"
        DeltaTable(str(path)).alter.set_table_properties({"delta.logRetentionDuration": value})
        return commit_files(*args, **kwargs)

    monkeypatch.setattr(runs_module, "commit_files", commit)
    writer = zorder.foreach_batch(str(path), app_id="loader", retries=2)
    with pytest.raises(ConcurrentCommitError) as raised:
        writer(spark.createDataFrame(source_rows(1, "d0"), SCHEMA), 4)
    assert any("tried 3 times" in note for note in raised.value.__notes__)
    assert DeltaTable(str(path)).transaction_version("loader") is None
    assert DeltaTable(str(path)).to_pyarrow_table().num_rows == ROWS_PER_FILE


def test_foreach_batch_refuses_bad_options_at_once(spark: SparkSession, tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError, match="retries"):
        zorder.foreach_batch(str(tmp_path), retries=-1)
    with pytest.raises(InvalidArgumentError, match="curve"):
        zorder.foreach_batch(str(tmp_path), curve="peano")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="reserved"):
        zorder.foreach_batch(str(tmp_path), app_id="zorder.run.x")
    frame: DataFrame = spark.range(3)
    writer = zorder.foreach_batch(str(tmp_path / "t"), by=["id"])
    with pytest.raises(InvalidArgumentError, match="app_id="):
        writer(frame, 0)  # not in a streaming batch: no query id to key it by
    assert not (tmp_path / "t").exists()
