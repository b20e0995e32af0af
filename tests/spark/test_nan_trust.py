"""Double bounds are trusted to exclude NaN only for files of zorder's own committed runs.

Spark's Parquet statistics count NaN as the largest double, and zorder then
leaves such a column unbounded; pyarrow-based writers leave NaN out of their
bounds instead. A directory name proves nothing: another writer's files
under ``zorder-<hex>-<hex>/`` must be read as any other writer's.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import Schema
from deltalake.transaction import AddAction, create_table_with_add_actions
from pyspark.sql import SparkSession

import zorder
from tests.spark.helpers import logged_stats

pytestmark = pytest.mark.spark

FILTERS = {"isnan(y)": 4, "y > 1000": 4, "NOT (y < 1000)": 4, "y = CAST('NaN' AS DOUBLE)": 4}


def _foreign_table_under_a_zorder_like_directory(path: Path) -> None:
    """Four files, each with a NaN, bounds without it, as a pyarrow-based writer commits them."""
    directory = "zorder-0123abcd-0123456789ab"
    (path / directory).mkdir(parents=True)
    actions = []
    for index in range(4):
        values = [float(index), float(index) + 0.5, math.nan]
        name = f"{directory}/part-{index}.parquet"
        pq.write_table(
            pa.table({"id": [3 * index, 3 * index + 1, 3 * index + 2], "y": values}), path / name
        )
        finite = [v for v in values if not math.isnan(v)]
        stats = {
            "numRecords": 3,
            "minValues": {"id": 3 * index, "y": min(finite)},
            "maxValues": {"id": 3 * index + 2, "y": max(finite)},
            "nullCount": {"id": 0, "y": 0},
        }
        actions.append(
            AddAction(
                path=name,
                size=(path / name).stat().st_size,
                partition_values={},
                modification_time=int(time.time() * 1000),
                data_change=True,
                stats=json.dumps(stats),
            )
        )
    schema = Schema.from_arrow(pa.schema([("id", pa.int64()), ("y", pa.float64())]))
    create_table_with_add_actions(str(path), schema, actions, mode="error")


def test_foreign_files_under_a_zorder_like_path_are_not_trusted(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = tmp_path / "foreign"
    _foreign_table_under_a_zorder_like_directory(path)
    for where, expected in FILTERS.items():
        assert zorder.explain(str(path), where).files_scanned == 4, where
        assert zorder.read(spark, str(path), where).count() == expected, where


def test_zorder_runs_are_trusted_and_skip_on_the_upper_side(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "ours")
    df = spark.range(4000).selectExpr("id", "CAST(id AS DOUBLE) AS y")
    zorder.write(df, path, by=["y"], num_files=4)
    report = zorder.explain(path, "y > 3500")
    assert (report.files_scanned, report.files_total) == (1, 4)
    assert zorder.read(spark, path, "y > 3500").count() == 499
    assert zorder.explain(path, "isnan(y)").files_scanned == 0


def test_a_zorder_file_holding_nan_is_unbounded_and_read_exactly(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "nan")
    df = spark.range(4000).selectExpr(
        "id", "CASE WHEN id % 97 = 0 THEN CAST('NaN' AS DOUBLE) ELSE CAST(id AS DOUBLE) END AS y"
    )
    zorder.write(df, path, by=["y", "id"], num_files=8)
    expected = {"isnan(y)": 42, "y > 3900": 98 + 42, "NOT (y < 1000)": 3000 - 31 + 42}
    for where, count in expected.items():
        assert zorder.read(spark, path, where).count() == count, where


def test_nan_rows_are_set_aside_in_few_files(spark: SparkSession, tmp_path: Path) -> None:
    # NaN in 1% of one of four columns: spread over the top slab of that column it
    # took the bounds of about a quarter of the files; set aside, of one or two.
    path = str(tmp_path / "nan-layout")
    df = spark.range(60_000).selectExpr(
        "CAST(rand(1) * 1000 AS INT) AS a",
        "rand(2) AS b",
        "CAST(rand(3) * 1e9 AS BIGINT) AS c",
        "CASE WHEN rand(4) < 0.01 THEN CAST('NaN' AS DOUBLE) ELSE rand(5) END AS y",
    )
    zorder.write(df, path, by=["a", "b", "c", "y"], num_files=100)
    stats = logged_stats(path)
    assert len(stats) == 100
    unbounded = [s for s in stats.values() if "y" not in s["maxValues"]]
    assert 1 <= len(unbounded) <= 2
    assert zorder.read(spark, path, "isnan(y)").count() == df.where("isnan(y)").count()


def test_nested_doubles_of_foreign_files_keep_their_nan_rows(
    spark: SparkSession, tmp_path: Path
) -> None:
    # Spark pushes predicates on struct fields down to parquet-mr too.
    path = tmp_path / "nested"
    path.mkdir()
    table = pa.table({"s": pa.array([{"y": 1.0}, {"y": math.nan}, {"y": 2.0}])})
    pq.write_table(table, path / "part-0.parquet")
    stats = {"numRecords": 3, "minValues": {"s": {"y": 1.0}}, "maxValues": {"s": {"y": 2.0}}}
    stats["nullCount"] = {"s": {"y": 0}}
    action = AddAction(
        path="part-0.parquet",
        size=(path / "part-0.parquet").stat().st_size,
        partition_values={},
        modification_time=int(time.time() * 1000),
        data_change=True,
        stats=json.dumps(stats),
    )
    create_table_with_add_actions(str(path), Schema.from_arrow(table.schema), [action])
    assert zorder.read(spark, str(path), "s.y > 1000").count() == 1
