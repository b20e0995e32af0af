"""Partitioned tables written by others read exactly: values from the log, paths decoded.

Partition values live in the log, not in the Parquet files; paths in the log
are percent-encoded, on storage they are not. A read must equal the table's
contents, whoever wrote it, and filters on partition columns prune partitions.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import zorder
from tests.spark.helpers import row_multiset

pytestmark = pytest.mark.spark


def rows_of(table: pa.Table, columns: list[str]) -> Counter[tuple[Any, ...]]:
    return row_multiset(zip(*(table.column(c).to_pylist() for c in columns), strict=True))


def test_partition_values_come_back_and_prune(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "days")
    for day in ("2026-11-01", "2026-11-02"):
        write_deltalake(
            path,
            pa.table({"n": list(range(1000)), "day": [day] * 1000}),
            partition_by=["day"],
            mode="append",
        )
    everything = zorder.read(spark, path)
    assert everything.columns == ["n", "day"]
    assert everything.where("day IS NULL").count() == 0
    assert zorder.read(spark, path, "day = '2026-11-02'").count() == 1000
    report = zorder.explain(path, "day = '2026-11-02' AND n < 10")
    assert (report.partitions_scanned, report.partitions_total) == (1, 2)
    assert (report.files_scanned, report.files_total) == (1, 2)
    assert report.summary().startswith("scanned 1 of 2 partitions, 1 of 2 files")
    assert zorder.read(spark, path, "day = '2026-11-02' AND n < 10").count() == 10
    by_column = (F.col("day") == "2026-11-01") & (F.col("n") >= 990)
    assert zorder.read(spark, path, by_column).count() == 10
    assert zorder.explain(path, by_column, spark=spark).files_scanned == 1


ODD = ["x y/z=é", "100%", "a=b", "semi;colon", "tab\\there", "日本語", "[brackets]", "{*?}"]


def test_odd_partition_values_read_exactly(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "odd")
    values = [*ODD, None, ""]
    data = pa.table({"n": list(range(len(values) * 3)), "p": [v for v in values for _ in range(3)]})
    write_deltalake(path, data, partition_by=["p"])
    got = zorder.read(spark, path).toArrow()
    # Delta reads an empty partition value as NULL, as deltalake does.
    assert rows_of(got, ["n", "p"]) == rows_of(DeltaTable(path).to_pyarrow_table(), ["n", "p"])
    assert sum(v is None for v in got.column("p").to_pylist()) == 6
    for value in ODD:
        literal = "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
        assert zorder.read(spark, path, f"p = {literal}").count() == 3, value
        assert zorder.explain(path, f"p = {literal}").files_scanned == 1, value
    assert zorder.read(spark, path, "p IS NULL").count() == 6
    assert zorder.explain(path, "p IS NULL").files_scanned == 2
    assert zorder.read(spark, path, "p = ''").count() == 0


def test_typed_partition_values_read_as_the_table_types(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "typed")
    utc = dt.UTC
    data = pa.table(
        {
            "n": pa.array([1, 2, 3, 4], pa.int64()),
            "b": pa.array([1, -2, None, 4], pa.int8()),
            "s": pa.array([100, None, -3, 4], pa.int16()),
            "i": pa.array([7, 7, None, -1], pa.int32()),
            "d": pa.array([dt.date(2026, 11, 1), None, dt.date(1970, 1, 1), dt.date(2026, 1, 2)]),
            "t": pa.array(
                [
                    dt.datetime(2026, 11, 1, 12, 30, 1, 500, tzinfo=utc),
                    None,
                    None,
                    dt.datetime(1999, 12, 31, 23, 59, 59, tzinfo=utc),
                ],
                pa.timestamp("us", tz="UTC"),
            ),
            "f": pa.array([True, False, None, True]),
            "m": pa.array(
                # Not negative: write_deltalake 1.6 logs -3.50 as '-3.-50' and fails.
                [decimal.Decimal("1.25"), None, decimal.Decimal("3.50"), decimal.Decimal("0.00")],
                pa.decimal128(5, 2),
            ),
        }
    )
    partitions = ["b", "s", "i", "d", "t", "f", "m"]
    write_deltalake(path, data, partition_by=partitions)
    frame = zorder.read(spark, path)
    table_fields = {f.name: f.dataType.simpleString() for f in frame.schema.fields}
    assert table_fields == {
        "n": "bigint",
        "b": "tinyint",
        "s": "smallint",
        "i": "int",
        "d": "date",
        "t": "timestamp",
        "f": "boolean",
        "m": "decimal(5,2)",
    }
    expected = DeltaTable(path).to_pyarrow_table()
    columns = ["n", *partitions]
    assert rows_of(frame.toArrow(), columns) == rows_of(expected, columns)
    cases = {
        "d = DATE'2026-11-01'": 1,
        "t > TIMESTAMP'2000-01-01 00:00:00+00:00'": 1,
        "f = false": 1,
        "m > 3": 1,
        "i = 7 AND b > 0": 1,
        "b IS NULL": 1,
    }
    for where, count in cases.items():
        assert zorder.read(spark, path, where).count() == count, where
        assert zorder.explain(path, where).files_scanned == count, where
