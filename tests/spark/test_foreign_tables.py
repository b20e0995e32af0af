"""Tables other writers made, read and written by zorder, or refused before anything is.

Whatever zorder cannot yet do exactly on such a table it refuses by name,
before a row is returned or a file written; what it does, other readers
(DuckDB's delta_scan, delta-rs) confirm.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from pyspark.sql import SparkSession

import zorder
from tests.delta_writer import widen_columns
from tests.spark.helpers import arrow_rows, delta_rs_rows, kernel_rows, row_multiset
from zorder.errors import BrokenTableError, SparkVersionError, UnsupportedTableError
from zorder.spark.compat import TYPE_WIDENING_SPARK, arrow_frame, spark_version

pytestmark = pytest.mark.spark

DATA = Path(__file__).resolve().parents[1] / "data"


def copy_of(name: str, tmp_path: Path) -> str:
    target = tmp_path / name
    shutil.copytree(DATA / name, target)
    return str(target)


def log_listing(path: str) -> dict[str, bytes]:
    root = Path(path)
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def every_path(spark: SparkSession) -> dict[str, Callable[[str], Any]]:
    return {
        "to_arrow": lambda path: zorder.to_arrow(path),
        "read": lambda path: zorder.read(spark, path).collect(),
        "explain": lambda path: zorder.explain(path, "true"),
        "describe": lambda path: zorder.describe(path),
        "optimize": lambda path: zorder.optimize(spark, path, by=["a"], full=True),
        "append": lambda path: zorder.write(
            spark.createDataFrame([(1, "x")], "a long, b string"), path, mode="append", by=["a"]
        ),
        "vacuum": lambda path: zorder.vacuum(path),
    }


@pytest.mark.parametrize(
    "operation", ["to_arrow", "read", "explain", "describe", "optimize", "append", "vacuum"]
)
def test_an_unknown_feature_is_refused_on_every_path(
    spark: SparkSession, tmp_path: Path, operation: str
) -> None:
    # A reader feature zorder does not know (here a column mapping mode of the future):
    # nothing may touch the table, and the refusal names the table, version and feature.
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"a": [1, 2], "b": ["x", "y"]}))
    commit = Path(path) / "_delta_log" / f"{1:020d}.json"
    protocol = {
        "minReaderVersion": 3,
        "minWriterVersion": 7,
        "readerFeatures": ["futureFeature"],
        "writerFeatures": ["futureFeature"],
    }
    commit.write_text(json.dumps({"commitInfo": {}}) + "\n" + json.dumps({"protocol": protocol}))
    before = log_listing(path)
    with pytest.raises(UnsupportedTableError, match="futureFeature") as error:
        every_path(spark)[operation](path)
    assert path in str(error.value)
    assert "version" in str(error.value)
    assert log_listing(path) == before


def test_v2_checkpoint_table_reads_exactly_and_refuses_writes_by_name(
    spark: SparkSession, kernel: Any, tmp_path: Path
) -> None:
    # Delta Spark's v2 checkpoints with sidecar files, and an identity column, which
    # deltalake (zorder's committer) does not write to.
    path = copy_of("checkpoint-v2-table", tmp_path)
    columns = ["id", "name", "created_at"]
    expected = kernel_rows(kernel, path, columns)
    assert sum(expected.values()) == 44
    assert arrow_rows(zorder.to_arrow(path), columns) == expected
    assert row_multiset(zorder.read(spark, path).select(*columns).collect()) == expected
    before = log_listing(path)
    with pytest.raises(UnsupportedTableError, match="'id' is an identity column"):
        zorder.optimize(spark, path, by=["id", "created_at"], num_files=2)
    with pytest.raises(UnsupportedTableError, match="'id' is an identity column"):
        zorder.write(zorder.read(spark, path).limit(1), path, mode="append", by=["id"])
    assert log_listing(path) == before


def test_a_data_file_storage_lacks_is_named_on_the_spark_paths(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    for value in (1, 2):
        write_deltalake(path, pa.table({"a": [value]}), mode="append")
    next(Path(path).glob("*.parquet")).unlink()
    with pytest.raises(BrokenTableError, match="storage does not hold"):
        zorder.read(spark, path)
    with pytest.raises(BrokenTableError, match="storage does not hold"):
        zorder.optimize(spark, path, by=["a"], full=True)


def test_timestamp_ntz_table_from_delta_rs(
    spark: SparkSession, kernel: Any, tmp_path: Path
) -> None:
    # delta-rs gives a zone-less timestamp the timestampNtz feature (reader 3, writer 7).
    path = str(tmp_path / "t")
    moments = [dt.datetime(2026, 11, 1, 8) + dt.timedelta(minutes=37 * i) for i in range(300)]
    write_deltalake(path, pa.table({"seen_at": moments, "n": list(range(300))}))
    assert "timestampNtz" in (DeltaTable(path).protocol().reader_features or [])
    columns = ["seen_at", "n"]
    expected = kernel_rows(kernel, path, columns)
    assert arrow_rows(zorder.to_arrow(path), columns) == expected
    assert row_multiset(zorder.read(spark, path).select(*columns).collect()) == expected
    where = "seen_at < TIMESTAMP_NTZ'2026-11-01 12:00:00'"
    wanted = kernel_rows(kernel, path, columns, "seen_at < TIMESTAMP '2026-11-01 12:00:00'")
    assert arrow_rows(zorder.to_arrow(path, where), columns) == wanted
    zorder.optimize(spark, path, by=["seen_at", "n"], num_files=3)
    assert kernel_rows(kernel, path, columns) == expected
    assert delta_rs_rows(path, columns) == expected
    assert DeltaTable(path).protocol().reader_features == ["timestampNtz"]  # unchanged


def test_type_widened_table_reads_exactly_and_refuses_writes(
    spark: SparkSession, kernel: Any, tmp_path: Path
) -> None:
    # Delta Spark's type widening: older files hold the narrower types.
    path = str(tmp_path / "t")
    narrow = pa.table(
        {
            "i": pa.array(range(-50, 50), pa.int32()),
            "b": pa.array([v % 100 for v in range(100)], pa.int8()),
            "f": pa.array([v / 8 for v in range(100)], pa.float32()),
            "d": pa.array([decimal.Decimal(v).scaleb(-2) for v in range(100)], pa.decimal128(5, 2)),
            "day": pa.array([dt.date(2026, 1, 1) + dt.timedelta(days=v) for v in range(100)]),
        }
    )
    write_deltalake(path, narrow)
    widen_columns(
        path,
        {"i": "long", "b": "integer", "f": "double", "d": "decimal(10,4)", "day": "timestamp_ntz"},
    )
    columns = ["i", "b", "f", "d", "day"]
    expected = kernel_rows(kernel, path, columns)
    assert sum(expected.values()) == 100
    assert arrow_rows(zorder.to_arrow(path), columns) == expected
    where = "i > 40 OR d < 0.05"
    wanted = kernel_rows(kernel, path, columns, where)
    assert arrow_rows(zorder.to_arrow(path, where), columns) == wanted
    if spark_version(spark) < TYPE_WIDENING_SPARK:  # its Parquet reader cannot widen
        with pytest.raises(SparkVersionError, match=r"i: integer -> long.*Spark 4\.0"):
            zorder.read(spark, path)
    else:
        assert row_multiset(zorder.read(spark, path).select(*columns).collect()) == expected
        assert row_multiset(zorder.read(spark, path, where).select(*columns).collect()) == wanted
    before = log_listing(path)
    with pytest.raises(UnsupportedTableError, match="typeWidening"):
        zorder.optimize(spark, path, by=["i"], full=True)
    with pytest.raises(UnsupportedTableError, match="typeWidening"):
        zorder.write(arrow_frame(spark, zorder.to_arrow(path)), path, mode="append", by=["i"])
    assert log_listing(path) == before


def test_an_unknown_writer_feature_is_read_but_never_written(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"a": [1, 2], "b": ["x", "y"]}))
    protocol = {
        "minReaderVersion": 1,
        "minWriterVersion": 7,
        "writerFeatures": ["futureWriterFeature"],
    }
    commit = Path(path) / "_delta_log" / f"{1:020d}.json"
    commit.write_text(json.dumps({"commitInfo": {}}) + "\n" + json.dumps({"protocol": protocol}))
    assert zorder.to_arrow(path).num_rows == 2
    before = log_listing(path)
    for operation in ("optimize", "append", "vacuum"):
        with pytest.raises(UnsupportedTableError, match="futureWriterFeature"):
            every_path(spark)[operation](path)
    assert log_listing(path) == before


def test_int96_timestamps_past_2262_read_exactly(spark: SparkSession, kernel: Any) -> None:
    # Spark 3.1 wrote INT96 timestamps; read as nanoseconds, year 9999 overflows to 1816.
    path = str(DATA / "table_with_edge_timestamps")
    columns = ["BIG_DATE", "NORMAL_DATE", "SOME_VALUE"]
    expected = kernel_rows(kernel, path, columns)
    assert {row[0].year for row in expected} == {9999}
    assert arrow_rows(zorder.to_arrow(path), columns) == expected
    assert row_multiset(zorder.read(spark, path).select(*columns).collect()) == expected
