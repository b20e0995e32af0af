"""Idempotent writes: ``txn_app_id`` / ``txn_version`` make a replayed write add nothing.

The table records Delta's ``txn`` action in the data's own commit; a write
whose version the table records already (or a newer one) for its app id
writes and commits nothing, whether an earlier run made it or a concurrent
writer committed it first (which deltalake's conflict check catches). Every
result is read back by DuckDB's ``delta_scan`` and delta-rs.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake
from deltalake.transaction import CommitProperties, Transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrame, SparkSession

import zorder
import zorder.plan.runs as runs_module
from tests.spark.helpers import delta_rs_rows, kernel_rows, row_multiset
from zorder.errors import InvalidArgumentError, InvalidArgumentTypeError, TableExistsError
from zorder.plan.modes import Engine
from zorder.spark.compat import collect_arrow
from zorder.table.clustering import SPEC_TRANSACTION
from zorder.table.delta.commit import commit_files

pytestmark = pytest.mark.spark

COLUMNS = ["a", "b"]
APP = "nightly-load"


def batch(spark: SparkSession, start: int, count: int = 500) -> DataFrame:
    return spark.range(start, start + count).selectExpr("id AS a", "(id * 37) % 101 AS b")


def expected(*ranges: tuple[int, int]) -> Counter[tuple[Any, ...]]:
    return Counter(
        (i, (i * 37) % 101) for start, count in ranges for i in range(start, start + count)
    )


def read_back(kernel: duckdb.DuckDBPyConnection, path: Path) -> Counter[tuple[Any, ...]]:
    """The table's rows as delta-rs reads them, checked equal to DuckDB's delta_scan."""
    rows = delta_rs_rows(str(path), COLUMNS)
    assert kernel_rows(kernel, str(path), COLUMNS) == rows
    return rows


def transactions(path: Path) -> list[tuple[int, str, int]]:
    """Every ``txn`` action of the writer's app ids, by commit: (version, app id, version);
    zorder's own (its runs', and the one naming the spec) left out."""
    found = []
    for commit in sorted((path / "_delta_log").glob("*.json")):
        for line in commit.read_text().splitlines():
            txn = json.loads(line).get("txn") if line.strip() else None
            if txn and not txn["appId"].startswith(("zorder.run.", SPEC_TRANSACTION)):
                found.append((int(commit.stem), txn["appId"], txn["version"]))
    return found


def run_directories(path: Path) -> set[str]:
    return {p.name for p in path.iterdir() if p.name.startswith("zorder-")}


@pytest.mark.compat
def test_a_replayed_or_older_transaction_adds_nothing(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    path = tmp_path / "t"
    first = zorder.write(
        batch(spark, 0), str(path), by=COLUMNS, mode="append", txn_app_id=APP, txn_version=0
    )
    assert not first.skipped
    assert first.data_version == 0
    assert transactions(path) == [(0, APP, 0)]  # in the data's own commit
    table = zorder.Table(str(path))
    second = table.write(batch(spark, 500), mode="append", txn_app_id=APP, txn_version=3)
    assert not second.skipped
    version, directories = DeltaTable(str(path)).version(), run_directories(path)
    for replay in (3, 0, 2):  # the same batch again, an older one
        again = table.write(batch(spark, 500), mode="append", txn_app_id=APP, txn_version=replay)
        assert again.skipped
        assert again.version is None
        assert again.data_version is None
        assert (again.files_added, again.rows, again.run_id) == (0, 0, "")
    assert DeltaTable(str(path)).version() == version  # nothing committed
    assert run_directories(path) == directories  # nothing written
    assert read_back(kernel, path) == expected((0, 500), (500, 500))
    newer = table.write(batch(spark, 1000), mode="append", txn_app_id=APP, txn_version=4)
    other = table.write(batch(spark, 1500), mode="append", txn_app_id="other", txn_version=0)
    assert not newer.skipped
    assert not other.skipped
    assert read_back(kernel, path) == expected((0, 2000))
    assert DeltaTable(str(path)).transaction_version(APP) == 4
    assert [t[1:] for t in transactions(path)] == [(APP, 0), (APP, 3), (APP, 4), ("other", 0)]


def test_an_overwrite_takes_the_transaction(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    path = tmp_path / "t"
    zorder.write(batch(spark, 0), str(path), by=COLUMNS)
    replaced = zorder.write(
        batch(spark, 700, 300), str(path), mode="overwrite", txn_app_id=APP, txn_version=7
    )
    assert not replaced.skipped
    again = zorder.write(
        batch(spark, 0), str(path), mode="overwrite", txn_app_id=APP, txn_version=7
    )
    assert again.skipped
    assert read_back(kernel, path) == expected((700, 300))
    # mode="error" refuses an existing table whatever it records
    with pytest.raises(TableExistsError):
        zorder.write(batch(spark, 0), str(path), by=COLUMNS, txn_app_id=APP, txn_version=7)


@pytest.mark.parametrize("engine", ["spark", "arrow"])
def test_a_concurrent_writer_that_commits_the_transaction_first_wins(
    spark: SparkSession,
    kernel: duckdb.DuckDBPyConnection,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    engine: Engine,
) -> None:
    """Ours read the table before the other commit and checked then: deltalake's conflict
    check at the commit sees the other's txn, and ours deletes its files and skips. Ours
    writes a DataFrame in Spark, or Parquet files in this process."""
    path = tmp_path / "t"
    zorder.write(batch(spark, 0), str(path), by=COLUMNS, mode="append")
    other = pa.table(
        {
            "a": pa.array(range(500, 1000), pa.int64()),
            "b": [(i * 37) % 101 for i in range(500, 1000)],
        }
    )

    def commit(*args: Any, **kwargs: Any) -> int:
        write_deltalake(
            str(path),
            other,
            mode="append",
            commit_properties=CommitProperties(app_transactions=[Transaction(APP, 5)]),
        )
        return commit_files(*args, **kwargs)

    source: DataFrame | str = batch(spark, 500)
    if engine == "arrow":  # the same rows as files, which this process writes
        source = str(tmp_path / "batch.parquet")
        pq.write_table(collect_arrow(batch(spark, 500)), source)
    monkeypatch.setattr(runs_module, "commit_files", commit)
    directories, before = run_directories(path), DeltaTable(str(path)).version()
    raced = zorder.write(
        source, str(path), mode="append", txn_app_id=APP, txn_version=5, engine=engine
    )
    assert raced.skipped
    assert raced.version is None
    assert run_directories(path) == directories  # its files were deleted
    assert read_back(kernel, path) == expected((0, 1000))
    assert DeltaTable(str(path)).version() == before + 1  # the other writer's commit only


def test_a_new_table_records_the_transaction(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    path = tmp_path / "t"
    for _ in range(2):
        zorder.write(
            batch(spark, 0).selectExpr("*", "a % 2 AS p"),
            str(path),
            by=COLUMNS,
            mode="append",
            partition_by=["p"],
            txn_app_id=APP,
            txn_version=0,
        )
    assert read_back(kernel, path) == expected((0, 500))
    assert transactions(path) == [(0, APP, 0)]


@pytest.mark.parametrize(
    ("app_id", "version", "error", "named"),
    [
        (APP, None, InvalidArgumentError, "txn_app_id was given without txn_version"),
        (None, 3, InvalidArgumentError, "txn_version was given without txn_app_id"),
        (APP, -1, InvalidArgumentError, "between 0 and"),
        (APP, True, InvalidArgumentTypeError, "True"),
        (APP, "3", InvalidArgumentTypeError, "'3'"),
        ("", 3, InvalidArgumentTypeError, "''"),
        (7, 3, InvalidArgumentTypeError, "7"),
        ("zorder.run.0123456789ab", 3, InvalidArgumentError, "reserved"),
    ],
)
def test_a_bad_transaction_is_refused_before_anything_is_written(
    spark: SparkSession,
    tmp_path: Path,
    app_id: Any,
    version: Any,
    error: type[Exception],
    named: str,
) -> None:
    path = tmp_path / "t"
    zorder.write(batch(spark, 0, 10), str(path), by=COLUMNS)
    before = DeltaTable(str(path)).version()
    with pytest.raises(error, match=named):
        zorder.write(
            batch(spark, 10, 10), str(path), mode="append", txn_app_id=app_id, txn_version=version
        )
    assert DeltaTable(str(path)).version() == before
    assert len(run_directories(path)) == 1


# A sequence of idempotent appends: (app id, version) each, of rows of their own.
WRITES = st.lists(st.tuples(st.sampled_from(["x", "y"]), st.integers(0, 3)), min_size=1, max_size=5)


@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(writes=WRITES)
def test_a_write_lands_exactly_when_its_version_is_newer_than_the_app_s(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory, writes: list[tuple[str, int]]
) -> None:
    """Against the protocol's rule, kept by hand: the table records the newest version per
    app id, and a write lands iff its version is above the one recorded for its app."""
    path = tmp_path_factory.mktemp("writes") / "t"
    zorder.write(batch(spark, 100_000, 10), str(path), by=COLUMNS)
    recorded: dict[str, int] = {}
    landed = [(100_000, 10)]
    for number, (app, version) in enumerate(writes):
        metrics = zorder.write(
            batch(spark, number * 100, 10),
            str(path),
            mode="append",
            num_files=1,
            txn_app_id=app,
            txn_version=version,
        )
        lands = version > recorded.get(app, -1)
        assert metrics.skipped is not lands
        if lands:
            recorded[app] = version
            landed.append((number * 100, 10))
    table = DeltaTable(str(path))
    assert {app: table.transaction_version(app) for app in ("x", "y")} == {
        app: recorded.get(app) for app in ("x", "y")
    }
    assert delta_rs_rows(str(path), COLUMNS) == expected(*landed)


@pytest.mark.parametrize(
    "name", ["table-with-dv-small", "table_with_column_mapping", "table_with_deletion_logs"]
)
def test_a_replayed_append_into_a_table_delta_spark_wrote_adds_nothing(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path, name: str
) -> None:
    """Deletion vectors, column mapping with physical names, a checkpoint: the append lands
    once, the replay writes nothing, and the table's own rows stay as they were."""
    path = tmp_path / name
    shutil.copytree(Path(__file__).resolve().parents[1] / "data" / name, path)
    table = zorder.read(spark, str(path))
    columns = table.columns
    before = delta_rs_rows(str(path), columns)
    collected = table.limit(3).collect()  # fixed rows: the replay is the same batch
    batch_rows = spark.createDataFrame(collected, table.schema)
    appended = row_multiset(tuple(row[c] for c in columns) for row in collected)
    partitions = set(DeltaTable(str(path)).metadata().partition_columns)
    by = [next(c for c in columns if c not in partitions)]
    first = zorder.write(batch_rows, str(path), by=by, mode="append", txn_app_id=APP, txn_version=1)
    again = zorder.write(batch_rows, str(path), by=by, mode="append", txn_app_id=APP, txn_version=1)
    assert not first.skipped
    assert again.skipped
    rows = delta_rs_rows(str(path), columns)
    assert rows == before + appended
    assert kernel_rows(kernel, str(path), columns) == rows
    assert DeltaTable(str(path)).transaction_version(APP) == 1
