"""zorder.to_arrow returns exactly the rows Spark returns, or refuses the filter.

Filters are generated from the skipping grammar with the literals a user
writes (untyped decimals, DOUBLE literals, strings against numbers and
dates, NaN, NULL in lists, nested NOT/AND/OR), on a clustered table of every
type, a partitioned table and tables delta-rs wrote. Spark evaluating the
same SQL on the same rows is the reference.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import random
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import zorder
from tests.spark.helpers import PREFIX, all_types_frame, row_multiset, spark_rows
from zorder.errors import FilterEvaluationError, ForbiddenFilterError, UnsupportedFilterError
from zorder.spark.compat import arrow_frame
from zorder.spark.settings import session_ansi

pytestmark = pytest.mark.spark

COLUMNS = ["b", "i8", "i16", "i32", "i64", "f32", "f64", "dec", "wide", "d", "ts", "ntz", "s"]


@pytest.fixture(scope="module")
def clustered(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, DataFrame]:
    df = all_types_frame(spark, 2000, seed=11).cache()
    path = str(tmp_path_factory.mktemp("to_arrow") / "t")
    zorder.write(df, path, by=["i32", "s", "ts", "f64"], num_files=10)
    return path, df


def values_of(df: DataFrame, rng: random.Random) -> dict[str, list[Any]]:
    rows = df.select(*COLUMNS).limit(300).collect()
    return {c: [r[c] for r in rows if r[c] is not None] for c in COLUMNS}


def literal(column: str, value: Any, rng: random.Random) -> str:
    """``value`` written as a user might: typed, untyped, as a string, across types."""
    if isinstance(value, bool):
        return rng.choice(["TRUE", "FALSE"])
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            word = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
            return rng.choice([f"CAST('{word}' AS DOUBLE)", f"'{word}'"])
        return rng.choice([repr(value), f"{value!r}D", f"'{value!r}'", "0.5", "-1.5e0", "1e3"])
    if isinstance(value, int):
        return rng.choice(
            [str(value), f"{value}.5", f"{value}.0D", f"'{value}'", f"{value}BD", str(value + 1)]
        )
    if isinstance(value, decimal.Decimal):
        return rng.choice([str(value), f"{value}BD", f"{value}D", f"'{value}'", "1.0005"])
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:  # timestamp_ntz
            text = value.isoformat(sep=" ")
            return rng.choice([f"TIMESTAMP_NTZ'{text}'", f"'{text}'", f"TIMESTAMP'{text}'"])
        utc = value.astimezone(dt.UTC).replace(tzinfo=None).isoformat(sep=" ")
        return rng.choice(
            [f"TIMESTAMP'{utc}'", f"'{utc}'", f"TIMESTAMP'{utc}+00:00'", f"DATE'{utc[:10]}'"]
        )
    if isinstance(value, dt.date):
        text = value.isoformat()
        return rng.choice(
            [f"DATE'{text}'", f"'{text}'", f"TIMESTAMP'{text} 00:00:00'", f"'{text} 12:00'"]
        )
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace("'", "\\'")
        return rng.choice([f"'{escaped}'", f"'{escaped[:3]}'", "5"])
    raise AssertionError(value)


def leaf(values: dict[str, list[Any]], rng: random.Random) -> str:
    column = rng.choice(COLUMNS)
    value = literal(column, rng.choice(values[column]), rng)
    other = literal(column, rng.choice(values[column]), rng)
    template = rng.choice(
        [
            "{c} = {v}",
            "{c} < {v}",
            "{c} <= {v}",
            "{c} > {v}",
            "{c} >= {v}",
            "{c} != {v}",
            "{v} < {c}",
            "{c} <=> {v}",
            "{c} IN ({v}, {w})",
            "{c} IN ({v}, NULL)",
            "{c} NOT IN ({v}, {w})",
            "{c} NOT IN ({v}, NULL)",
            "{c} IS NULL",
            "{c} IS NOT NULL",
            "{c} BETWEEN {v} AND {w}",
            "{c} = NULL",
        ]
    )
    if column in ("f32", "f64") and rng.random() < 0.2:
        return rng.choice([f"isnan({column})", f"NOT isnan({column})"])
    if column == "s" and rng.random() < 0.3:
        prefix = rng.choice([PREFIX, PREFIX + "1", "a", "", "é"])
        return rng.choice([f"s LIKE '{prefix}%'", f"startswith(s, '{prefix}')"])
    return template.format(c=column, v=value, w=other)


def random_filter(values: dict[str, list[Any]], rng: random.Random, depth: int = 0) -> str:
    roll = rng.random()
    if depth >= 2 or roll < 0.4:
        return leaf(values, rng)
    if roll < 0.6:
        return f"NOT ({random_filter(values, rng, depth + 1)})"
    joiner = rng.choice(["AND", "OR"])
    left, right = random_filter(values, rng, depth + 1), random_filter(values, rng, depth + 1)
    return f"({left}) {joiner} ({right})"


def arrow_rows(table: pa.Table, columns: list[str]) -> Counter[tuple[Any, ...]]:
    return row_multiset(zip(*[table.column(c).to_pylist() for c in columns], strict=True))


def check_same_rows(spark: SparkSession, path: str, where: str, *, time_zone: str = "UTC") -> bool:
    """True when to_arrow answered (and equalled Spark), False when it refused.

    The reference is Spark filtering every file of the table: no skipping, and
    no cached frame (whose batch statistics ignore NaN: Spark's in-memory
    cache drops NaN rows for `f32 > 'Infinity'`).
    """
    df = zorder.read(spark, path)
    ansi = session_ansi(spark)  # off on Spark 3.5: to_arrow is asked for the same meaning
    try:
        expected = spark_rows(df.where(F.expr(where)))
    except Exception:  # Spark itself rejects the filter (an ANSI cast of a bad string)
        with pytest.raises((UnsupportedFilterError, ValueError, FilterEvaluationError)):
            zorder.to_arrow(path, where, time_zone=time_zone, ansi=ansi)
        return False
    try:
        got = zorder.to_arrow(path, where, time_zone=time_zone, ansi=ansi)
    except UnsupportedFilterError as refused:
        if "zorder.read" not in str(refused):
            raise  # a refusal always says where the filter can run
        return False
    assert got.column_names == df.columns
    assert arrow_rows(got, df.columns) == expected, where
    return True


def test_fuzzed_filters_give_spark_s_rows(
    spark: SparkSession, clustered: tuple[str, DataFrame]
) -> None:
    path, df = clustered
    rng = random.Random(2024)
    values = values_of(df, rng)
    answered = [check_same_rows(spark, path, random_filter(values, rng)) for _ in range(150)]
    # Most of the grammar is answered, not refused; with ANSI off, less (what the modes
    # disagree on is refused).
    assert sum(answered) >= (100 if session_ansi(spark) else 50)


@contextmanager
def session_zone(spark: SparkSession, zone: str) -> Iterator[None]:
    before = spark.conf.get("spark.sql.session.timeZone")
    assert before is not None  # set by default
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        yield
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)


@pytest.mark.parametrize("zone", ["America/New_York", "+05:30"])
@pytest.mark.usefixtures(
    "ansi_on"
)  # the zone is the point: the filters answered with ANSI's meaning
def test_zone_less_timestamps_are_read_in_the_given_zone(
    spark: SparkSession, clustered: tuple[str, DataFrame], zone: str
) -> None:
    path, df = clustered
    rng = random.Random(7)
    stamps = [r.ts for r in df.select("ts").where("ts IS NOT NULL").limit(40).collect()]
    filters = []
    for stamp in rng.sample(stamps, 10):
        text = stamp.isoformat(sep=" ")[:19]
        filters += [f"ts < TIMESTAMP'{text}'", f"ts >= '{text}'", f"ts = '{text}'"]
    filters += ["ts > DATE'1950-03-01'", "d < TIMESTAMP'1990-01-01 00:00:00'"]
    with session_zone(spark, zone):
        answered = [check_same_rows(spark, path, where, time_zone=zone) for where in filters]
    assert sum(answered) >= 30


def test_columns_and_limit(spark: SparkSession, clustered: tuple[str, DataFrame]) -> None:
    path, df = clustered
    where = "i32 > 0 OR s IS NULL"
    everything = arrow_rows(zorder.to_arrow(path, where), df.columns)
    picked = zorder.to_arrow(path, where, columns=["S", "i8"])  # names as Spark resolves them
    assert picked.column_names == ["s", "i8"]
    assert arrow_rows(picked, ["s", "i8"]) == spark_rows(df.where(where).select("s", "i8"))
    limited = zorder.to_arrow(path, where, limit=7)
    assert limited.num_rows == 7
    assert not arrow_rows(limited, df.columns) - everything  # some of the matching rows
    assert zorder.to_arrow(path, where, limit=0).num_rows == 0
    assert zorder.to_arrow(path, "i32 < 0 AND i32 > 0").schema == zorder.to_arrow(path).schema


@pytest.mark.usefixtures("ansi_on")  # abs(i32) overflows only with ANSI on: refused with it off
def test_unsupported_filters_are_refused_by_name(
    spark: SparkSession, clustered: tuple[str, DataFrame]
) -> None:
    path, _ = clustered
    for where, named in {"rand() > 0.5": "rand", "i32 IN (SELECT 1)": "subquery"}.items():
        with pytest.raises(ForbiddenFilterError, match=named):  # on every path (guard.py)
            zorder.to_arrow(path, where)
    refused = {
        "s RLIKE '(?i)a'": "(?i)a",
        "ts = '10:00:00'": "10:00:00",  # a time without a date: today's, to Spark
    }
    for where, named in refused.items():
        with pytest.raises(UnsupportedFilterError, match=r"zorder\.read") as error:
            zorder.to_arrow(path, where)
        assert named in str(error.value), where
    # Refused before the translation to DuckDB (skipping/translate.py) answered them:
    for where in [
        "abs(i32) > 5",
        "s LIKE 'a%b'",
        "NOT (i32 = NULL)",
        "i32 < i64",
        "ts = '2024-01-01T00'",  # read as Spark casts it (skipping/texts.py), once refused
    ]:
        assert check_same_rows(spark, path, where), where
    with pytest.raises(FilterEvaluationError, match="five"):  # as Spark: CAST_INVALID_INPUT
        zorder.to_arrow(path, "i32 = 'five'")
    with pytest.raises(ValueError, match="unknown column 'nope'"):
        zorder.to_arrow(path, "nope = 1")
    with pytest.raises(ValueError, match="unknown column 'nope'"):
        zorder.to_arrow(path, None, columns=["nope"])
    with pytest.raises(ValueError, match="limit must be an int >= 0"):
        zorder.to_arrow(path, None, limit=-1)
    with pytest.raises(TypeError, match="SQL text"):
        zorder.to_arrow(path, F.col("i32") > 1)  # type: ignore[arg-type]


def test_partitioned_and_delta_rs_tables(spark: SparkSession, tmp_path: Path) -> None:
    """Partition values come from the log; files of other writers; a checkpoint."""
    rng = random.Random(3)
    rows = 3000
    data = pa.table(
        {
            "day": pa.array(
                [rng.choice([dt.date(2024, 1, 1), dt.date(2024, 1, 2), None]) for _ in range(rows)]
            ),
            "region": pa.array(
                [rng.choice(["eu/west", "a=b", "100%", "zoé", None]) for _ in range(rows)]
            ),
            "x": pa.array([rng.choice([rng.random(), math.nan, None]) for _ in range(rows)]),
            "n": pa.array(range(rows), pa.int64()),
        }
    )
    path = str(tmp_path / "p")
    for start in range(0, rows, 1000):
        write_deltalake(
            path, data.slice(start, 1000), mode="append", partition_by=["day", "region"]
        )
    DeltaTable(path).create_checkpoint()
    zorder.write(
        arrow_frame(spark, data.slice(0, 500)).withColumn("n", F.col("n") + rows),
        path,
        mode="append",
        by=["x", "n"],
    )
    filters = [
        "day = DATE'2024-01-01'",
        "day IS NULL AND x > 0.5",
        "region = 'a=b' OR region = '100%'",
        "region IN ('eu/west', NULL)",
        "NOT (region LIKE 'zo%') AND n < 1500",
        "x = CAST('NaN' AS DOUBLE) OR day > '2024-01-01'",
        "x >= 0.25 AND x <= 0.75 AND region IS NOT NULL",
        "n BETWEEN 2990 AND 3010",
    ]
    for where in filters:
        assert check_same_rows(spark, path, where), where
    report = zorder.scan(path, "day = DATE'2024-01-02'").report
    assert report.partitions_scanned is not None
    assert report.partitions_scanned < (report.partitions_total or 0)


def test_files_of_an_evolved_schema(spark: SparkSession, tmp_path: Path) -> None:
    """A column added later reads as NULL in older files; a widened int is read alike."""
    path = str(tmp_path / "evolved")
    old = pa.table({"n": pa.array(range(100), pa.int32()), "s": [f"v{i % 9}" for i in range(100)]})
    write_deltalake(path, old)
    new = pa.table(
        {
            "n": pa.array(range(100, 200), pa.int32()),
            "s": [f"v{i % 9}" for i in range(100)],
            "extra": [i % 4 for i in range(100)],
        }
    )
    write_deltalake(path, new, mode="append", schema_mode="merge")
    for where in [
        "s = 'v3'",
        "n >= 95 AND n < 105",
        "extra = 2 OR n = 7",
        "extra IS NULL AND s = 'v1'",
    ]:
        assert check_same_rows(spark, path, where), where
    got = zorder.to_arrow(path, "s = 'v3' AND n < 50", columns=["n", "extra"])
    assert got.column("extra").null_count == got.num_rows > 0
