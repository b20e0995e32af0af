"""What differs between Spark lines (zorder.spark.compat), checked on the Spark installed.

`make compat` runs this module on the oldest and the newest pyspark zorder
supports; `make test` on the development line.
"""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import pyarrow as pa
import pyspark
import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

import zorder
from zorder.errors import SparkVersionError
from zorder.spark.compat import (
    ARROW_UDF_SPARK,
    PYSPARK_VERSION,
    arrow_frame,
    collect_arrow,
    hash_repartition_by_id,
    repartition_by_id,
    version_tuple,
)
from zorder.spark.jar import jvm_classes_available

pytestmark = pytest.mark.compat

SCHEMA = StructType(
    [
        StructField("l", LongType()),
        StructField("x", DoubleType()),
        StructField("d", DecimalType(38, 18)),
        StructField("s", StringType()),
        StructField("bin", BinaryType()),
        StructField("flag", BooleanType()),
        StructField("day", DateType()),
        StructField("t", TimestampType()),
        StructField("ntz", TimestampNTZType()),
    ]
)
ROWS = [
    (
        -(2**63),
        float("-inf"),
        decimal.Decimal("-99999999999999999999.999999999999999999"),
        "héllo wörld ☃",
        b"\x00\xff",
        True,
        dt.date(1, 1, 1),
        dt.datetime(1970, 1, 1, tzinfo=dt.UTC),
        dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
    ),
    (2**63 - 1, 0.5, decimal.Decimal("0.000000000000000001"), "", b"", False, None, None, None),
    (None, None, None, None, None, None, dt.date(9999, 12, 31), None, dt.datetime(1, 1, 1)),
]


def test_the_session_is_the_installed_pyspark(spark: SparkSession) -> None:
    assert version_tuple(spark.version) == version_tuple(pyspark.__version__) == PYSPARK_VERSION


def test_zorders_jar_loads_on_this_spark(spark: SparkSession) -> None:
    # Built once against Spark 4.1 for Java 17; its classes use no Scala collection, so the
    # same jar serves Scala 2.12 (Spark 3.5) and 2.13 (Spark 4.x).
    assert jvm_classes_available(spark)


def test_arrow_in_and_out_keeps_every_value(spark: SparkSession) -> None:
    expected = spark.createDataFrame(ROWS, SCHEMA)
    table = collect_arrow(expected)
    assert table.num_rows == len(ROWS)
    back = arrow_frame(spark, table, SCHEMA)
    assert back.schema == SCHEMA
    assert sorted(back.collect(), key=repr) == sorted(expected.collect(), key=repr)
    empty = collect_arrow(expected.where("false"))
    assert empty.num_rows == 0
    assert empty.schema == table.schema
    assert arrow_frame(spark, empty, SCHEMA).count() == 0


def test_an_arrow_frame_without_a_schema_takes_arrows_types(spark: SparkSession) -> None:
    table = pa.table({"k": pa.array([1, 2, None], pa.int64()), "v": ["a", None, "c"]})
    frame = arrow_frame(spark, table)
    assert [f.dataType for f in frame.schema.fields] == [LongType(), StringType()]
    assert frame.count() == 3


@pytest.mark.parametrize("count", [1, 2, 7, 64, 301])
@pytest.mark.parametrize("form", ["this line's", "hash"])
def test_each_row_lands_in_the_partition_it_names(
    spark: SparkSession, count: int, form: str
) -> None:
    rows = spark.range(5_000).select((F.col("id") * 7919 % count).cast("int").alias("target"))
    shuffle = repartition_by_id if form == "this line's" else hash_repartition_by_id
    placed = shuffle(rows, count, F.col("target")).select(
        "target", F.spark_partition_id().alias("partition")
    )
    assert placed.rdd.getNumPartitions() == count
    assert placed.where("target != partition").count() == 0
    assert placed.count() == 5_000


def test_keys_in_python_need_pyspark_4_1(spark: SparkSession, tmp_path: Path) -> None:
    """Direct keys run as an Arrow UDF: refused by name before 4.1, before anything is written."""
    df = spark.range(2_000).select((F.col("id") % 17).alias("a"), (F.col("id") % 5).alias("b"))
    path = tmp_path / "direct"
    if PYSPARK_VERSION < ARROW_UDF_SPARK:
        with pytest.raises(SparkVersionError, match=r"needs pyspark 4\.1 or newer"):
            zorder.write(df, str(path), by=["a", "b"], method="direct", num_files=2)
        assert not (path / "_delta_log").exists()
    else:
        zorder.write(df, str(path), by=["a", "b"], method="direct", num_files=2)
        assert zorder.read(spark, str(path), "a = 3").count() == df.where("a = 3").count()
