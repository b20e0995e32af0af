"""``write(partition_by=...)``: each partition clustered on its own, values in the log."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import zorder
from tests.spark.helpers import row_multiset
from zorder.spark.compat import collect_arrow

pytestmark = pytest.mark.spark

ODD = ["x y/z=é", "100%", "a=b", "日本語", "[b]", None]


def rows_of(table: pa.Table, columns: list[str]) -> Counter[tuple[Any, ...]]:
    return row_multiset(zip(*(table.column(c).to_pylist() for c in columns), strict=True))


def odd_frame(spark: SparkSession, rows: int = 6000) -> DataFrame:
    labels = F.array(*[F.lit(v) for v in ODD])
    return spark.range(rows).select(
        (F.col("id") * 7919 % 1000).cast("int").alias("a"),
        (F.col("id") * 104729 % 997).cast("int").alias("b"),
        F.element_at(labels, (F.col("id") % len(ODD) + 1).cast("int")).alias("region"),
    )


def test_odd_partition_values_round_trip(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    df = odd_frame(spark)
    metrics = zorder.write(df, path, by=["a", "b"], partition_by=["region"], num_files=30)
    expected = rows_of(collect_arrow(df), ["a", "b", "region"])
    assert rows_of(collect_arrow(zorder.read(spark, path)), ["a", "b", "region"]) == expected
    assert rows_of(DeltaTable(path).to_pyarrow_table(), ["a", "b", "region"]) == expected
    table = DeltaTable(path)
    assert table.metadata().partition_columns == ["region"]
    # 30 files shared by six equal partitions: five each, each file one partition.
    described = zorder.describe(path)
    per_partition = Counter(f.partition["region"] for f in described.files)
    assert per_partition == dict.fromkeys(ODD, 5)
    assert metrics.files_added == 30
    for value in ODD:
        where = "region IS NULL" if value is None else f"region = '{value}'"
        assert zorder.read(spark, path, where).count() == 1000, value
        # Inside the partition the files are clustered: a point lookup skips most of them.
        report = zorder.explain(path, f"{where} AND a = 500")
        assert report.partitions_scanned == 1
        assert report.files_scanned <= 3, value


def test_typed_partitions_and_appends(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "typed")
    df = spark.range(400).selectExpr(
        "id AS n",
        "CAST(id % 3 AS INT) AS k",
        "DATE'2026-11-01' + CAST(id % 2 AS INT) AS day",
        "TIMESTAMP'2026-11-01 12:30:01.000500+00:00'"
        " + make_interval(0, 0, 0, 0, CAST(id % 2 AS INT)) AS t",
        "id % 2 = 0 AS flag",
        "CAST(CASE WHEN id % 2 = 0 THEN -3.50 ELSE 1.25 END AS DECIMAL(5,2)) AS m",
    )
    partitions = ["k", "day", "t", "flag", "m"]
    zorder.write(df, path, by=["n"], partition_by=partitions, num_files=4)
    got = zorder.read(spark, path)
    assert [f.dataType.simpleString() for f in got.schema.fields] == [
        "bigint",
        "int",
        "date",
        "timestamp",
        "boolean",
        "decimal(5,2)",
    ]
    columns = ["n", *partitions]
    assert rows_of(collect_arrow(got), columns) == rows_of(collect_arrow(df), columns)
    assert zorder.read(spark, path, "m < 0 AND day = DATE'2026-11-01'").count() == 200
    t = "TIMESTAMP'2026-11-01 13:30:01.000500+00:00'"
    assert zorder.read(spark, path, f"t = {t}").count() == 200
    # An append takes the table's partition columns; another list is refused by name.
    zorder.write(df.limit(10), path, by=["n"], mode="append", num_files=1)
    assert zorder.read(spark, path).count() == 410
    with pytest.raises(zorder.errors.InvalidArgumentError, match=r"partitioned by \['k', 'day'"):
        zorder.write(df, path, by=["n"], mode="append", partition_by=["k"])


def test_bad_partitioning_is_refused_before_anything_is_written(
    spark: SparkSession, tmp_path: Path
) -> None:
    df = spark.range(10).selectExpr("id", "id % 2 AS k", "CAST(id AS DOUBLE) AS x")
    path = tmp_path / "never"
    with pytest.raises(zorder.errors.InvalidArgumentError, match="both a partition column and a"):
        zorder.write(df, str(path), by=["id", "k"], partition_by=["k"])
    with pytest.raises(zorder.errors.ColumnNotFoundError, match="unknown partition column 'kk'"):
        zorder.write(df, str(path), by=["id"], partition_by=["kk"])
    with pytest.raises(zorder.errors.UnsupportedColumnTypeError, match="'x' has type double"):
        zorder.write(df, str(path), by=["id"], partition_by=["x"])
    assert not path.exists()
    # An append naming other partition columns hears the table's, whatever else is wrong.
    table = tmp_path / "by_k"
    zorder.write(df, str(table), by=["id"], partition_by=["k"], num_files=2)
    version = DeltaTable(str(table)).version()
    with pytest.raises(
        zorder.errors.InvalidArgumentError, match=r"partitioned by \['k'\], not by \['id'\]"
    ):
        zorder.write(df, str(table), by=["id"], partition_by=["id"], mode="append")
    assert DeltaTable(str(table)).version() == version


def test_an_empty_partitioned_write_makes_an_empty_partitioned_table(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "empty")
    df = spark.range(0).selectExpr("id AS a", "CAST(id AS STRING) AS day")
    zorder.write(df, path, by=["a"], partition_by=["day"], num_files=3)
    assert DeltaTable(path).metadata().partition_columns == ["day"]
    assert zorder.read(spark, path).count() == 0
    created = DeltaTable(path).version()
    optimized = zorder.optimize(spark, path, by=["a"])
    assert optimized.data_version is None  # no file to write
    # Nor a file size: a run with nothing to do commits nothing.
    assert optimized.version is None
    assert DeltaTable(path).version() == created
