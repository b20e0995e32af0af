"""Hostile data: each table is clustered and read back with nothing lost or doubled.

Every case writes with ``zorder.write``, then checks the rows read back by
delta-rs and by ``zorder.read`` against the input, and that every logged
statistic bounds its file's rows.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import zorder
from tests.spark.helpers import assert_stats_bound_files, delta_rows, logged_stats, row_multiset
from zorder.curves.kinds import SpaceFillingCurve
from zorder.errors import InvalidArgumentError
from zorder.spark.compat import collect_arrow

pytestmark = pytest.mark.spark

UTC = dt.UTC


def spark_rows(df: DataFrame) -> Counter[tuple[Any, ...]]:
    # Through Arrow: PySpark's collect() cannot turn year-1 timestamps into datetimes.
    table = collect_arrow(df)
    return row_multiset(zip(*(c.to_pylist() for c in table.columns), strict=True))


EMOJI = "\U0001f600"
COMBINING = "e\u0301"  # e + combining acute: two code points, one character


def big_strings(spark: SparkSession) -> tuple[DataFrame, list[str]]:
    rows = [(i, ("x" * 1_048_576) if i % 10 == 0 else f"small-{i}") for i in range(60)]
    rows += [(100 + i, chr(ord("a") + i) * 1_048_576) for i in range(3)]
    return spark.createDataFrame(rows, "id int, s string"), ["s", "id"]


def all_null_column(spark: SparkSession) -> tuple[DataFrame, list[str]]:
    df = spark.range(500).select("id", F.lit(None).cast("int").alias("nothing"))
    return df, ["nothing", "id"]


def special_doubles(spark: SparkSession) -> tuple[DataFrame, list[str]]:
    specials = [math.nan, math.inf, -math.inf, -0.0, 0.0, 5e-324, -1.7976931348623157e308, None]
    rows = [(i, specials[i % len(specials)], float(i)) for i in range(400)]
    return spark.createDataFrame(rows, "id int, x double, y double"), ["x", "y"]


def integer_extremes(spark: SparkSession) -> tuple[DataFrame, list[str]]:
    bounds = {"t": 7, "s": 15, "i": 31, "l": 63}
    rows = []
    for k in range(200):
        rows.append(
            tuple(
                (-(2**b) if k % 3 == 0 else 2**b - 1 if k % 3 == 1 else k - 100)
                for b in bounds.values()
            )
        )
    schema = "t tinyint, s smallint, i int, l bigint"
    return spark.createDataFrame(rows, schema), ["t", "s", "i", "l"]


def full_precision_decimals(spark: SparkSession) -> tuple[DataFrame, list[str]]:
    # Made by Spark from text: PySpark's own conversion of Python decimals rounds to 28 digits.
    nines = "9" * 38
    fraction = f"{'9' * 20}.{'9' * 18}"
    df = spark.range(200).selectExpr(
        f"""CASE id % 3 WHEN 0 THEN CAST('{nines}' AS DECIMAL(38,0))
                        WHEN 1 THEN CAST('-{nines}' AS DECIMAL(38,0))
                        ELSE CAST(id AS DECIMAL(38,0)) END AS w""",
        f"""CASE id % 3 WHEN 0 THEN CAST('{fraction}' AS DECIMAL(38,18))
                        WHEN 1 THEN CAST('-{fraction}' AS DECIMAL(38,18))
                        ELSE CAST('0.000000000000000001' AS DECIMAL(38,18)) END AS f""",
    )
    return df, ["w", "f"]


def far_dates_and_times(spark: SparkSession) -> tuple[DataFrame, list[str]]:
    times = [
        dt.datetime(1, 1, 1, tzinfo=UTC),
        dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        dt.datetime(1582, 10, 10, 12, 0, 0, 1, tzinfo=UTC),  # inside the Julian/Gregorian gap
        dt.datetime(2262, 4, 12, tzinfo=UTC),  # past int64 nanoseconds
        dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    ]
    dates = [dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(1582, 10, 10), dt.date(1970, 1, 1)]
    rows = [(dates[k % len(dates)], times[k % len(times)], k) for k in range(100)]
    return spark.createDataFrame(rows, "d date, ts timestamp, k int"), ["d", "ts"]


def unicode_around_truncation(spark: SparkSession) -> tuple[DataFrame, list[str]]:
    # The 32nd and 33rd characters are astral (emoji) or combining, where a
    # statistics cut could split a surrogate pair or a grapheme.
    stems = ["a" * 31 + EMOJI * 3, "a" * 31 + COMBINING * 2, "a" * 30 + EMOJI, EMOJI * 40]
    stems += ["\uffff" * 33, "z" * 31 + "\U0010ffff" + "z"]
    rows = [(f"{stems[k % len(stems)]}{k}", k) for k in range(300)]
    return spark.createDataFrame(rows, "s string, k int"), ["s", "k"]


def odd_column_names(spark: SparkSession) -> tuple[DataFrame, list[str]]:
    df = spark.range(300).select(
        F.col("id").alias("source ip"),
        (F.col("id") % 17).alias("dst.port"),
        (F.col("id") % 5).cast("string").alias("UPPER Case"),
        (F.col("id") * 3 % 11).alias("длина"),
    )
    return df, ["source ip", "dst.port", "UPPER Case", "длина"]


def one_row(spark: SparkSession) -> tuple[DataFrame, list[str]]:
    return spark.createDataFrame([(1, "only")], "a int, b string"), ["a", "b"]


def duplicated_rows(spark: SparkSession) -> tuple[DataFrame, list[str]]:
    same = spark.range(2_000).select(F.lit(7).alias("a"), F.lit("dup").alias("b"))
    others = spark.range(300).select(
        (F.col("id") % 13).cast("int").alias("a"), F.lit("x").alias("b")
    )
    return same.unionByName(others), ["a", "b"]


CASES: dict[str, Callable[[SparkSession], tuple[DataFrame, list[str]]]] = {
    "1 MB strings": big_strings,
    "an all-null column": all_null_column,
    "NaN, infinities, -0.0": special_doubles,
    "integer extremes": integer_extremes,
    "38-digit decimals": full_precision_decimals,
    "years 1 and 9999": far_dates_and_times,
    "emoji and combining characters at 32": unicode_around_truncation,
    "spaces, dots, case and Cyrillic in names": odd_column_names,
    "one row": one_row,
    "duplicated rows": duplicated_rows,
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("curve", ["zorder", "hilbert"])
def test_hostile_table_round_trips(
    spark: SparkSession, tmp_path: Path, case: str, curve: SpaceFillingCurve
) -> None:
    df, by = CASES[case](spark)
    path = tmp_path / "t"
    if case == "an all-null column":
        # No table records a spec whose column holds no value; an append into a table with
        # a spec of its own may still bring rows whose clustering column is all NULL.
        with pytest.raises(InvalidArgumentError, match="'nothing' is NULL in all 500 rows"):
            zorder.write(df, str(path), by=by, curve=curve, num_files=5)
        zorder.write(df.limit(0), str(path), by=["id"], curve=curve, num_files=1)
        metrics = zorder.write(df, str(path), by=by, curve=curve, num_files=5, mode="append")
    else:
        metrics = zorder.write(df, str(path), by=by, curve=curve, num_files=5)
    expected = spark_rows(df)
    assert metrics.rows == sum(expected.values())
    assert delta_rows(path, df.columns) == expected
    assert spark_rows(zorder.read(spark, str(path))) == expected
    assert assert_stats_bound_files(path) == metrics.files_added


def test_more_files_than_rows(spark: SparkSession, tmp_path: Path) -> None:
    df = spark.range(7).select("id", (F.col("id") % 2).alias("p"))
    metrics = zorder.write(df, str(tmp_path / "t"), by=["id", "p"], num_files=50)
    assert 1 <= metrics.files_added <= 7
    assert delta_rows(tmp_path / "t", ["id", "p"]) == spark_rows(df)


def test_forty_columns_get_statistics_on_the_first_32(spark: SparkSession, tmp_path: Path) -> None:
    df = spark.range(400).select(
        *[(F.col("id") * (i + 1) % 97).alias(f"c{i:02d}") for i in range(40)]
    )
    path = tmp_path / "t"
    zorder.write(df, str(path), by=["c00", "c35"], num_files=4)
    assert delta_rows(path, df.columns) == spark_rows(df)
    for stats in logged_stats(path).values():
        assert set(stats["minValues"]) == {f"c{i:02d}" for i in range(32)}
    # Skipping on a column past the 32nd is never wrong, just never possible.
    assert zorder.explain(str(path), "c35 = 3").files_scanned == 4
    assert zorder.read(spark, str(path), "c35 = 3").count() == df.where("c35 = 3").count()
