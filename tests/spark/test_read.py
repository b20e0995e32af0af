"""zorder.read equals a full scan, always, while scanning fewer files."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

import zorder
from tests.spark.helpers import PREFIX, all_types_frame, spark_rows
from zorder.spark.scan import read_files

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def clustered(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, DataFrame]:
    df = all_types_frame(spark, 1500, seed=5).cache()
    path = str(tmp_path_factory.mktemp("read") / "t")
    zorder.write(df, path, by=["i32", "s", "ts", "f64"], curve="hilbert", num_files=12)
    return path, df


def sample_value(df: DataFrame, column: str, rng: random.Random) -> object:
    values = [r[0] for r in df.select(column).where(F.col(column).isNotNull()).limit(200).collect()]
    return rng.choice(values)


def sql_literal(value: object) -> str:
    """A literal as a user types it, not as zorder.skipping.sql.sql_literal writes it.

    Zone-less timestamps and untyped numbers (Spark reads 1.5 as a decimal)
    keep those binding paths under the random filters too.
    """
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, dt.datetime):
        return f"TIMESTAMP'{value.astimezone(dt.UTC).strftime('%Y-%m-%d %H:%M:%S.%f')}'"
    if isinstance(value, dt.date):
        return f"DATE'{value.isoformat()}'"
    if isinstance(value, float):
        return (
            f"CAST('{value!r}' AS DOUBLE)"
            if value != value or value in (float("inf"), -float("inf"))
            else repr(value)
        )
    return str(value)


def random_filters(df: DataFrame, count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        column = rng.choice(["i32", "s", "ts", "f64", "d", "dec", "i64"])
        value = sql_literal(sample_value(df, column, rng))
        template = rng.choice(
            [
                "{c} = {v}",
                "{c} < {v}",
                "{c} >= {v}",
                "{c} != {v}",
                "{v} > {c}",
                "{c} <=> {v}",
                "{c} IN ({v}, NULL)",
                "{c} NOT IN ({v})",
                "{c} IS NULL",
                "NOT ({c} <= {v}) OR {c} IS NULL",
                "{c} BETWEEN {v} AND {v}",
            ]
        )
        out.append(template.format(c=column, v=value))
    out += [
        f"s LIKE '{PREFIX}1%'",
        f"startswith(s, '{PREFIX}')",
        "isnan(f64)",
        "NOT isnan(f64)",
        "d > TIMESTAMP'1900-06-01 12:00:00'",
        "ts < DATE'1980-01-01'",
        "abs(i32) > 5 AND i32 IS NOT NULL",
    ]
    return out


def test_read_equals_a_full_scan_for_fuzzed_sql(
    spark: SparkSession, clustered: tuple[str, DataFrame]
) -> None:
    path, df = clustered
    skipped_somewhere = False
    for where in random_filters(df, 40, seed=9):
        expected = spark_rows(df.where(F.expr(where)))
        got = spark_rows(zorder.read(spark, path, where))
        assert got == expected, where
        report = zorder.explain(path, where)
        skipped_somewhere |= report.files_scanned < report.files_total
        assert report.rows_scanned >= sum(expected.values())
    assert skipped_somewhere


def test_read_with_columns(spark: SparkSession, clustered: tuple[str, DataFrame]) -> None:
    path, df = clustered
    value = sample_value(df, "i32", random.Random(1))
    assert isinstance(value, int)
    filters = [
        F.col("i32") == value,
        (F.col("I32") > 0) & F.col("s").startswith(PREFIX),
        F.col("ts") < F.lit(dt.datetime(1950, 1, 1, tzinfo=dt.UTC)),
        ~F.col("i16").isin(1, 2) | F.col("d").isNull(),
        F.col("f64").between(-1.0, 1.0),
    ]
    for where in filters:
        assert spark_rows(zorder.read(spark, path, where)) == spark_rows(df.where(where)), where
    report = zorder.explain(path, F.col("i32") == value, spark=spark)
    assert report.files_scanned < report.files_total


def test_explain_report_and_effectiveness(
    spark: SparkSession, clustered: tuple[str, DataFrame]
) -> None:
    path, _ = clustered
    full = zorder.explain(path, None)
    assert full.files_scanned == full.files_total == 12
    assert full.rows_scanned == full.rows_total == 1500
    none = zorder.explain(path, "i32 = 1 AND i32 = 2 AND FALSE")
    assert none.files_scanned == 0
    assert "scanned 0 of 12 files" in none.summary()
    assert zorder.read(spark, path, "FALSE").count() == 0
    assert 0.0 < zorder.skipping_effectiveness(path, ["i32 = 0", "i32 < -2000000000"]) <= 1.0


def test_bad_filters_are_clear_errors(
    spark: SparkSession, clustered: tuple[str, DataFrame]
) -> None:
    path, _ = clustered
    with pytest.raises(
        ValueError, match=r"syntax error in filter 'i32 = = 1' at or near '=' \(line 1, column"
    ):
        zorder.read(spark, path, "i32 = = 1")
    with pytest.raises(ValueError, match=r"unknown column 'i33' in filter; table columns: b, i8"):
        zorder.explain(path, "i33 = 1")


def test_tables_from_delta_rs_are_pruned_correctly(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "rs")
    rng = random.Random(3)
    for part in range(6):
        rows = [
            {
                "k": part * 100 + i,
                "x": rng.choice([float("nan"), rng.uniform(part, part + 1)]),
                "s": f"{part}-{'y' * 40}-{i}",
                "t": dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
                + dt.timedelta(microseconds=part * 10**6 + i * 997),
            }
            for i in range(50)
        ]
        write_deltalake(path, pa.Table.from_pylist(rows), mode="append")
    full = spark_rows(zorder.read(spark, path))
    assert sum(full.values()) == 300
    df = read_files(zorder.table.load_snapshot(zorder.table.Storage.of(path)), spark, None)
    for where in [
        "k = 249",
        "x > 5.5",
        "x >= 5.99",
        "isnan(x)",
        f"s > '3-{'y' * 40}-9'",
        "t > TIMESTAMP'2020-01-01 00:00:03.048'",
        "t <= TIMESTAMP'2020-01-01 00:00:00.001'",
    ]:
        assert spark_rows(zorder.read(spark, path, where)) == spark_rows(df.where(F.expr(where))), (
            where
        )
    assert zorder.explain(path, "k = 249").files_scanned == 1


@pytest.mark.parametrize("zone", ["America/New_York", "+05:30"])
def test_zone_less_timestamps_follow_the_session_time_zone(
    spark: SparkSession, tmp_path: Path, zone: str
) -> None:
    # Spark reads TIMESTAMP'2020-01-01 00:00:00' in the session time zone (05:00
    # UTC in New York). Files are two hours wide here, so reading the literal
    # as UTC would skip files that hold matching rows.
    hours = spark.range(0, 96).select(
        F.timestamp_seconds(F.lit(1577836800 - 48 * 3600) + F.col("id") * 3600).alias("ts"),
        F.col("id"),
    )
    df = hours.withColumn("d", F.to_date("ts")).withColumn("ntz", F.col("ts").cast("string"))
    df = df.withColumn("ntz", F.to_timestamp_ntz("ntz")).cache()
    path = str(tmp_path / "t")
    zorder.write(df, path, by=["ts"], num_files=48)
    filters: list[str | Column] = [
        "ts <= TIMESTAMP'2020-01-01 00:00:00'",
        "ts > TIMESTAMP'2020-01-01 00:00:00'",
        "ts = TIMESTAMP'2020-01-01 03:00:00'",
        "ts <= '2020-01-01 00:00:00'",
        "ts IN (TIMESTAMP'2020-01-01 02:00:00', TIMESTAMP'2019-12-31 23:00:00')",
        "d >= TIMESTAMP'2020-01-01 02:00:00'",
        "ntz <= TIMESTAMP'2020-01-01 00:00:00'",
        "ntz <= TIMESTAMP_NTZ'2020-01-01 00:00:00'",
        "ts <= TIMESTAMP'2020-01-01 00:00:00+00:00'",
        F.col("ts") <= F.lit("2020-01-01 00:00:00").cast("timestamp"),
    ]
    previous = spark.conf.get("spark.sql.session.timeZone")
    assert previous is not None  # set by default
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        for where in filters:
            condition = F.expr(where) if isinstance(where, str) else where
            expected = spark_rows(df.where(condition))
            assert spark_rows(zorder.read(spark, path, where)) == expected, where
        # An explicit offset is an instant in any session zone, so it still skips.
        report = zorder.explain(path, "ts <= TIMESTAMP'2020-01-01 00:00:00+00:00'", spark=spark)
        assert report.files_scanned < report.files_total
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)


# A UDF named as Spark's built-in, on purpose; no type hints (pyspark 4.1 would read them).
def year(value):  # type: ignore[no-untyped-def]
    return None if value is None else value.year + 1000


def test_column_filters_with_udfs_filter_in_spark_and_skip_on_the_rest(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A lambda UDF (Spark's SQL for it, ``<lambda>(i)``, parses nowhere), a UDF named as a
    built-in (``year(d)``, which zorder's parser would read as Spark's year, and skip every
    file by), and a nondeterministic conjunct are left out of the skipping; the conjuncts
    beside them still skip; Spark filters the rows."""
    from pyspark.sql.types import BooleanType, IntegerType

    path = str(tmp_path / "t")
    df = spark.range(2_000).selectExpr(
        "CAST(id AS INT) AS i", "date_add(DATE'2024-01-01', CAST(id % 700 AS INT)) AS d"
    )
    zorder.write(df, path, by=["i", "d"], num_files=8)
    even = F.udf(lambda value: value is not None and value % 2 == 0, BooleanType())
    shadow = F.udf(year, IntegerType())  # year + 1000: every row has 3024 or 3025
    filters: list[Column] = [
        even(F.col("i")),
        even(F.col("i")) & (F.col("i") < 100),
        shadow(F.col("d")) > 3000,
        (shadow(F.col("d")) == 3025) & (F.col("i") > 1_500),
        (F.rand(seed=3) < 2) & (F.col("i") == 17),
    ]
    for where in filters:
        expected = df.where(where).count()
        assert expected > 0
        assert zorder.read(spark, path, where).count() == expected, where
    whole = zorder.explain(path, even(F.col("i")), spark=spark)
    assert whole.files_scanned == whole.files_total  # nothing to skip by
    narrowed = zorder.explain(path, even(F.col("i")) & (F.col("i") == 18), spark=spark)
    assert narrowed.files_scanned < narrowed.files_total  # i = 18 still skips
