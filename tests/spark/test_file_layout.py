"""How a run lays its files out: one task a file, so no two files share a name, and no
column of zorder's own among the rows, so none shadows a user's; and tables an earlier
version wrote, with each file's number as a hidden ``zorder_file=<n>/`` directory, still
read, describe and optimize."""

from __future__ import annotations

import posixpath
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from typer.testing import CliRunner

import zorder
from tests.spark.helpers import (
    arrow_rows,
    assert_stats_bound_files,
    delta_rows,
    kernel_rows,
    row_multiset,
    spark_rows,
)
from zorder.cli import app
from zorder.spark.layout import cluster, plan_clustering
from zorder.table import (
    CommitRequest,
    Storage,
    commit_files,
    describe_written_files,
    record_properties,
    remove_writer_markers,
)
from zorder.table.clustering import CommitClustering, Run, spec_properties
from zorder.table.delta.schema import delta_schema

pytestmark = pytest.mark.spark

# The name the hidden file-number column had, in the case the table spells it and not.
NAMES = ["zorder_file", "ZORDER_FILE"]
DAYS = ["2026-11-01", "2026-11-02"]


def _frame(spark: SparkSession, column: str, rows: int) -> DataFrame:
    """Rows with a user column ``column`` of distinct values and some NULLs."""
    return spark.range(rows).select(
        "id",
        (F.col("id") * 7919 % 1000).alias("a"),
        (F.col("id") * 104729 % 997).alias("b"),
        F.when(F.col("id") % 11 == 0, None).otherwise(F.col("id") * 3 + 1).alias(column),
        F.when(F.col("id") % 2 == 0, DAYS[0]).otherwise(DAYS[1]).alias("day"),
    )


def _arrow_rows(rows: int, column: str) -> pa.Table:
    ids = list(range(rows))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "a": pa.array([i * 7919 % 1000 for i in ids], pa.int64()),
            "b": pa.array([i * 104729 % 997 for i in ids], pa.int64()),
            column: pa.array([None if i % 11 == 0 else i * 3 + 1 for i in ids], pa.int64()),
            "day": pa.array([DAYS[i % 2] for i in ids], pa.string()),
        }
    )


def _fingerprint(path: str) -> str:
    spec = zorder.describe(path).spec
    assert spec is not None
    return spec.fingerprint


def _committed(path: str) -> list[str]:
    """The paths (relative to the table root) of the table's live files."""
    actions = pa.RecordBatchReader.from_stream(DeltaTable(path).get_add_actions(flatten=True))
    return [str(p) for p in actions.read_all().column("path").to_pylist()]


def _assert_every_reader_sees(
    path: str, columns: list[str], expected: Counter[tuple[Any, ...]], kernel: Any
) -> None:
    assert delta_rows(path, columns) == expected
    assert kernel_rows(kernel, path, columns) == expected
    assert row_multiset(pl.read_delta(path).select(columns).rows()) == expected
    assert arrow_rows(zorder.to_arrow(path), columns) == expected


def _assert_one_name_a_file(path: str) -> list[str]:
    files = _committed(path)
    names = [posixpath.basename(f) for f in files]
    assert len(set(names)) == len(names), sorted(names)
    assert not any("zorder_file=" in f.lower() for f in files), files
    return files


@pytest.mark.parametrize("partitioned", [False, True], ids=["unpartitioned", "partitioned"])
@pytest.mark.parametrize("column", NAMES)
def test_write_keeps_a_user_column_named_like_the_old_hidden_one(
    spark: SparkSession,
    kernel: duckdb.DuckDBPyConnection,
    tmp_path: Path,
    column: str,
    partitioned: bool,
) -> None:
    """Small files (30 for 6,000 rows): the case an earlier version wrote with a hidden
    ``zorder_file`` partition column, which took a user column of that name into directory
    names and left every reader NULLs."""
    frame = _frame(spark, column, 6_000)
    path = str(tmp_path / "t")
    metrics = zorder.write(
        frame,
        path,
        by=["a", column],  # the column clusters too
        num_files=30,
        partition_by=["day"] if partitioned else None,
    )
    columns = ["id", "a", "b", column, "day"]
    expected = spark_rows(frame.select(*columns))
    assert sum(1 for row in expected if row[3] is None) > 0  # NULLs survive as NULLs
    _assert_every_reader_sees(path, columns, expected, kernel)
    assert spark_rows(zorder.read(spark, path).select(*columns)) == expected
    files = _assert_one_name_a_file(path)
    assert metrics.files_added == len(files) == 30
    assert DeltaTable(path).schema().fields[3].name == column
    assert assert_stats_bound_files(path) == 30  # the column's statistics hold for its rows
    if partitioned:
        assert {f.split("/")[1] for f in files} == {f"day={d}" for d in DAYS}


@pytest.mark.parametrize("partitioned", [False, True], ids=["unpartitioned", "partitioned"])
@pytest.mark.parametrize("column", NAMES)
def test_optimize_keeps_a_user_column_named_like_the_old_hidden_one(
    spark: SparkSession,
    kernel: duckdb.DuckDBPyConnection,
    tmp_path: Path,
    column: str,
    partitioned: bool,
) -> None:
    path = str(tmp_path / "t")
    data = _arrow_rows(4_000, column)
    for start in range(0, 4_000, 500):  # eight small files from another writer (delta-rs)
        write_deltalake(
            path,
            data.slice(start, 500),
            mode="append",
            partition_by=["day"] if partitioned else None,
        )
    columns = ["id", "a", "b", column, "day"]
    expected = arrow_rows(data, columns)
    metrics = zorder.optimize(spark, path, by=["a", "b"], num_files=12)
    assert metrics.rows == 4_000
    _assert_every_reader_sees(path, columns, expected, kernel)
    files = _assert_one_name_a_file(path)
    assert metrics.files_added == len(files) == 12
    assert {f.split("/")[0] for f in files} == {f"zorder-{_fingerprint(path)}-{metrics.run_id}"}


def _write_as_an_earlier_version(
    spark: SparkSession, frame: DataFrame, path: str, by: list[str], files: int, tasks: int
) -> Run:
    """A table as zorder wrote small files before each file had a task of its own: the
    rows of each file numbered in a ``zorder_file`` column that the writer partitioned by,
    a few tasks writing them all, committed with the run's ``txn`` and spec, as then."""
    plan = plan_clustering(frame, by)
    run = Run.new(plan.spec)
    laid_out = cluster(frame, plan, num_files=files)
    if laid_out.file_column is None:  # a task a file
        numbered = laid_out.frame.withColumn("zorder_file", F.spark_partition_id())
    else:
        numbered = laid_out.frame.withColumnRenamed(laid_out.file_column, "zorder_file")
    numbered = numbered.coalesce(tasks)
    numbered.write.partitionBy("zorder_file").parquet(f"{path}/{run.directory}")
    storage = Storage.of(path)
    remove_writer_markers(storage, run.directory)
    written = describe_written_files(storage, run.directory, frame.columns, {})
    commit_files(
        CommitRequest(
            storage=storage,
            schema=delta_schema(frame.schema.json()),
            files=written,
            mode="create",
            clustering=CommitClustering("write", run, plan.spec, len(written)),
        )
    )
    record_properties(storage, spec_properties(plan.spec))
    return run


def test_a_table_in_the_earlier_layout_reads_describes_and_optimizes(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    frame = _frame(spark, "c", 4_000).drop("day")
    old = _write_as_an_earlier_version(spark, frame, path, ["a", "b"], files=10, tasks=2)
    columns = ["id", "a", "b", "c"]
    expected = spark_rows(frame.select(*columns))
    layout = _committed(path)
    assert len(layout) == 10
    assert all(f.startswith(f"{old.directory}/zorder_file=") for f in layout)
    names = Counter(posixpath.basename(f) for f in layout)
    assert max(names.values()) > 1  # the earlier layout's defect: two tasks, ten files

    # Read: no reader takes zorder_file for a column (the log holds none).
    _assert_every_reader_sees(path, columns, expected, kernel)
    assert "zorder_file" not in zorder.to_arrow(path).column_names
    found = zorder.read(spark, path, where="a < 100")
    assert found.columns == columns
    assert spark_rows(found) == spark_rows(frame.where("a < 100"))
    assert arrow_rows(zorder.to_arrow(path, where="a < 100"), columns) == spark_rows(
        frame.where("a < 100")
    )

    # Describe: every file is the run's, its name within the run the directory and task.
    described = zorder.describe(path)
    assert {f.run for f in described.files} == {old}
    assert [(r.run, r.files, r.rows, r.current) for r in described.runs] == [(old, 10, 4_000, True)]
    assert {f.name for f in described.files} == {
        f.removeprefix(f"{old.directory}/") for f in layout
    }
    shown = CliRunner().invoke(app, ["stats", path], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    short = {f.name.split("-")[0] + "-" + f.name.split("-")[1] for f in described.files}
    assert all(name in shown.output for name in short)  # zorder_file=3/part-00001, ...

    # Optimize: the earlier run is a run of the spec (left alone while its tier has room);
    # a blind append is clustered into a run of the current layout.
    write_deltalake(path, _arrow_rows(500, "c").drop_columns(["day"]), mode="append")
    incremental = zorder.optimize(spark, path, num_files=2)
    assert (incremental.files_removed, incremental.files_added) == (1, 2)
    assert sum(1 for f in _committed(path) if f.startswith(f"{old.directory}/")) == 10
    grown = expected + arrow_rows(_arrow_rows(500, "c"), columns)
    _assert_every_reader_sees(path, columns, grown, kernel)

    # A full optimize rewrites the earlier run's files too, into names of their own.
    full = zorder.optimize(spark, path, full=True, num_files=6)
    assert (full.files_removed, full.files_added) == (12, 6)
    files = _assert_one_name_a_file(path)
    assert all(Run.of_path(f) == Run(full.run_id, old.fingerprint) for f in files)
    _assert_every_reader_sees(path, columns, grown, kernel)
    assert [(r.files, r.rows) for r in zorder.describe(path).runs] == [(6, 4_500)]


def test_a_partition_column_named_like_spark_s_row_count_is_written(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    """Rows are counted by partition before a partitioned write: under a name of zorder's
    own, not ``count()``'s."""
    frame = _frame(spark, "c", 3_000).withColumn("count", F.col("id") % 3)
    path = str(tmp_path / "t")
    metrics = zorder.write(frame, path, by=["a", "b"], partition_by=["count"], num_files=6)
    columns = ["id", "a", "b", "c", "count"]
    _assert_every_reader_sees(path, columns, spark_rows(frame.select(*columns)), kernel)
    files = _assert_one_name_a_file(path)
    assert metrics.files_added == len(files) == 6
    assert {f.split("/")[1] for f in files} == {"count=0", "count=1", "count=2"}
