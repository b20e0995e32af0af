"""Filters beyond a column against literals (columns against columns, arithmetic, functions,
CASE, casts), answered in-process by the DuckDB translation, checked against Spark.

For each generated filter, Spark (an ANSI session in the same zone) filters every row of
the table; ``to_arrow`` must return the same rows, or raise where Spark raised, or refuse
with UnsupportedFilterError (counted and printed, not a failure). Both UTC and a zone with
daylight saving time. ``ZORDER_FUZZ_EXAMPLES`` sets how many filters each zone gets.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import os
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession
from pyspark.sql.types import (
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

import zorder
from zorder.errors import FilterEvaluationError, UnsupportedFilterError, ZorderError

pytestmark = pytest.mark.spark

EXAMPLES = int(os.environ.get("ZORDER_FUZZ_EXAMPLES", "25"))
ZONES = ["UTC", "America/New_York"]

SCHEMA = StructType(
    [
        StructField("id", IntegerType()),
        StructField("i", IntegerType()),
        StructField("j", IntegerType()),
        StructField("l", LongType()),
        StructField("x", DoubleType()),
        StructField("y", DoubleType()),
        StructField("m", DecimalType(10, 2)),
        StructField("s", StringType()),
        StructField("s2", StringType()),
        StructField("d", DateType()),
        StructField("d2", DateType()),
        StructField("t", TimestampType()),
        StructField("tn", TimestampNTZType()),
        StructField("bo", BooleanType()),
    ]
)
STRINGS = ["K17", "k1", "k17x", "straße", "İstanbul", "Ωmega", "中文", "", "a_b", "a%b", "5", " 7 "]


def _rows() -> list[tuple[object, ...]]:
    rng = random.Random(7)
    rows: list[tuple[object, ...]] = []
    for index in range(240):

        def maybe(value: object) -> object:
            return None if rng.random() < 0.1 else value

        base = dt.date(2024, 1, 1) + dt.timedelta(days=rng.randint(-60, 400))
        rows.append(
            (
                index,
                maybe(rng.choice([rng.randint(-3000, 6000), 0, 2147483647, -7])),
                maybe(rng.randint(-50, 50)),
                maybe(rng.choice([rng.randint(-(10**6), 10**6), 2**62])),
                maybe(rng.choice([math.nan, -0.0, 0.0, 2.5, -1e300, rng.uniform(-9000, 9000)])),
                maybe(rng.choice([math.nan, 0.0, rng.uniform(-100, 100)])),
                maybe(decimal.Decimal(rng.randint(-99_999, 99_999)).scaleb(-2)),
                maybe(rng.choice(STRINGS)),
                maybe(rng.choice(STRINGS)),
                maybe(base),
                maybe(base + dt.timedelta(days=rng.randint(-10, 90))),
                maybe(
                    dt.datetime(2024, 3, 1, tzinfo=dt.UTC)
                    + dt.timedelta(minutes=rng.randint(-(10**5), 10**5))
                ),
                maybe(dt.datetime(2024, 3, 10, 1, 30) + dt.timedelta(hours=rng.randint(-50, 50))),
                maybe(rng.random() < 0.5),
            )
        )
    return rows


@pytest.fixture(scope="module")
def table(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("translate") / "t")
    frame = spark.createDataFrame(_rows(), SCHEMA)
    zorder.write(frame, path, by=["i", "d"], num_files=4)
    return path


@pytest.fixture(scope="module")
def outcomes() -> Iterator[Counter[str]]:
    counts: Counter[str] = Counter()
    yield counts
    print(f"\ntranslation fuzz outcomes: {dict(counts)}")


@pytest.fixture(scope="module", autouse=True)
def _zone_restored(spark: SparkSession) -> Iterator[None]:
    key = "spark.sql.session.timeZone"
    previous = spark.conf.get(key)
    yield
    spark.conf.set(key, str(previous))


def _spark_ids(spark: SparkSession, path: str, where: str, zone: str) -> set[int] | Exception:
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        rows = spark.read.format("delta").load(path).where(where).select("id").collect()
    except Exception as error:  # an AnalysisException or an ANSI runtime error: Spark's answer
        return error
    return {int(r[0]) for r in rows}


def check(spark: SparkSession, path: str, where: str, zone: str, counts: Counter[str]) -> str:
    """'answered', 'raised' or 'refused'; AssertionError where to_arrow and Spark disagree."""
    expected = _spark_ids(spark, path, where, zone)
    try:
        got = zorder.to_arrow(path, where, columns=["id"], time_zone=zone)
    except UnsupportedFilterError as refusal:
        counts["refused"] += 1
        counts[f"refused: {str(refusal).split(' outside Spark')[0][:70]}"] += 1
        return "refused"
    except ZorderError as error:
        if not isinstance(expected, Exception):
            raise AssertionError(f"{where!r} ({zone}): only to_arrow raised {error}") from error
        kind = "raised" if isinstance(error, FilterEvaluationError) else "refused"
        counts[f"{kind} as Spark"] += 1
        return "raised"
    if isinstance(expected, Exception):
        # Files skipped by statistics may hold the rows that make Spark raise; zorder.read
        # skips them too, and then answers.
        spark.conf.set("spark.sql.session.timeZone", zone)
        try:
            through_read = zorder.read(spark, path, where).select("id").collect()
        except Exception:
            raise AssertionError(
                f"{where!r} ({zone}): to_arrow answered, Spark raised {expected}"
            ) from None
        expected = {int(r[0]) for r in through_read}
    assert set(got.column("id").to_pylist()) == expected, f"{where!r} ({zone})"
    counts["answered"] += 1
    return "answered"


# ---------------------------------------------------------------------------------------
# The filters of issue 32 (item 3): all answered, all equal to Spark's rows

REQUIRED = [
    "d < d2",
    "d2 >= d + interval '30' day",
    "x * 2 > 9000",
    "year(d) = 2024 and month(d) = 3",
    "upper(s) = 'K17'",
    "abs(x - 2500) < 100",
    "coalesce(m, 0) > 50",
    "datediff(d2, d) > 40",
    "x > 1000 + 500",
    "d >= date '2024-06-01' - interval '7' day",
    "cast(t as date) = date '2024-03-01'",
    "s rlike '^K1'",
    "s ilike 'k%'",
    "CASE WHEN i > 1000 THEN 'big' WHEN i < 0 THEN 'negative' ELSE 'small' END = 'big'",
    "x IS DISTINCT FROM y",
    "j * 2 > 90",
    "abs(i - 2500) < 100",
    "upper(s) = 'STRASSE'",
    "lower(s) = 'i̇stanbul'",
    "s ilike 'İ%'",
    "length(s) = 2",
    "substring(s, -3, 2) = 'ss'",
    "hour(t) = 5",
    "cast(tn as timestamp) < t",
    "d = cast(t as date)",
    "i div 7 = -1 or i % 7 = -3",
    "nullif(i, 0) is null",
    "if(bo, x, y) > 0",
    "add_months(d, 1) > d2",
    "date_add(d, 30) <= d2",
    "s2 || s = 'K17K17'",
    "i between j and 100",
    "i in (j, 0, 7)",
    "x = y",
    "x > y",
    "x <=> y",
    "coalesce(x, y) = cast('NaN' as double)",
    "isnan(x) or x = -0.0",
    "m * 2 > i",
    "m + 1 > 100.5",
    "cast(m as int) = 3",
    "not (i = null)",
    "i + 2147483647 > 0 and i < 0",
    "dayofweek(d) = 1",
]
# Spark raises (an ANSI overflow, a malformed cast): so must to_arrow.
RAISING = [
    "i + 1 > 0",
    "i * 2 > 9000",
    "s = 5",
    "cast(s as int) > 0",
    "cast(x as bigint) = 2",
    "i / (j - j) > 0",
    "l * 2 > 0",
]


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("where", REQUIRED)
def test_required_filters_are_answered_as_spark_answers(
    spark: SparkSession, table: str, outcomes: Counter[str], where: str, zone: str
) -> None:
    assert check(spark, table, where, zone, outcomes) == "answered"


@pytest.mark.parametrize("where", RAISING)
def test_rows_that_make_spark_raise_make_to_arrow_raise(
    spark: SparkSession, table: str, outcomes: Counter[str], where: str
) -> None:
    assert check(spark, table, where, "UTC", outcomes) == "raised"


# ---------------------------------------------------------------------------------------
# Generated filters

NUMBERS = ["i", "j", "l", "x", "y", "m", "0", "7", "-3", "2.5", "1e0", "100L", "NULL"]
TEXTS = ["s", "s2", "'K17'", "'k1'", "'straße'", "''"]
DATES = ["d", "d2", "date '2024-03-01'"]
PATTERNS = ["k%", "K1_", "%ß%", "a\\_b", "%", "_", "İ%", "a%b", "%7%"]
REGEXES = ["^K1", "7$", "^.{2}$", "[a-k]+", "ß", "^(k|K)1", "\\d", "a.b", "^\\w+$"]


@st.composite
def numeric(draw: st.DrawFn, depth: int = 2) -> str:
    if depth == 0 or draw(st.integers(0, 4)) == 0:
        return draw(st.sampled_from(NUMBERS))
    a, b = draw(numeric(depth - 1)), draw(numeric(depth - 1))
    shapes = [
        f"({a} + {b})",
        f"({a} - {b})",
        f"({a} * {b})",
        f"({a} / {b})",
        f"({a} div {b})",
        f"({a} % {b})",
        f"abs({a})",
        f"-({a})",
        f"coalesce({a}, {b})",
        f"nullif({a}, {b})",
        f"if({draw(boolean(0))}, {a}, {b})",
        f"CASE WHEN {draw(boolean(0))} THEN {a} ELSE {b} END",
        f"length({draw(text(1))})",
        f"year({draw(date(1))})",
        f"month({draw(date(1))})",
        f"dayofmonth({draw(date(1))})",
        f"datediff({draw(date(1))}, {draw(date(1))})",
        f"cast({a} as int)",
        f"cast({a} as double)",
        f"cast({a} as decimal(12,3))",
        "hour(t)",
    ]
    return draw(st.sampled_from(shapes))


@st.composite
def text(draw: st.DrawFn, depth: int = 2) -> str:
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from(TEXTS))
    a, b = draw(text(depth - 1)), draw(text(depth - 1))
    shapes = [
        f"upper({a})",
        f"lower({a})",
        f"substring({a}, {draw(st.integers(-4, 4))}, {draw(st.integers(-1, 4))})",
        f"substr({a}, {draw(st.integers(-4, 4))})",
        f"concat({a}, {b})",
        f"coalesce({a}, {b})",
        f"cast({draw(numeric(0))} as string)",
        "cast(d as string)",
        f"CASE WHEN {draw(boolean(0))} THEN {a} END",
    ]
    return draw(st.sampled_from(shapes))


@st.composite
def date(draw: st.DrawFn, depth: int = 1) -> str:
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from(DATES))
    a = draw(date(depth - 1))
    n = draw(st.integers(-40, 40))
    shapes = [
        f"({a} + interval '{n}' day)",
        f"({a} - interval '{abs(n)}' day)",
        f"({a} + interval '{n % 13}' month)",
        f"date_add({a}, {n})",
        f"date_sub({a}, {n})",
        f"add_months({a}, {n % 25})",
        "cast(t as date)",
        "cast(tn as date)",
        f"coalesce({a}, d2)",
    ]
    return draw(st.sampled_from(shapes))


@st.composite
def boolean(draw: st.DrawFn, depth: int = 2) -> str:
    op = draw(st.sampled_from(["=", "<>", "<", "<=", ">", ">=", "<=>"]))
    kind = draw(st.integers(-3, 11 if depth > 0 else 9))
    if kind <= 0:  # numbers most often: arithmetic is where Spark's types matter most
        return f"{draw(numeric())} {op} {draw(numeric())}"
    if kind == 1:
        return f"{draw(text())} {op} {draw(text())}"
    if kind == 2:
        return f"{draw(date())} {op} {draw(date())}"
    if kind == 3:
        other = draw(st.sampled_from(["t", "cast(tn as timestamp)", "cast(d as timestamp)"]))
        return f"t {op} {other}"
    if kind == 4:
        word = draw(st.sampled_from(["LIKE", "NOT LIKE", "ILIKE", "NOT ILIKE"]))
        pattern = draw(st.sampled_from(PATTERNS)).replace("\\", "\\\\")
        return f"{draw(text())} {word} '{pattern}'"
    if kind == 5:
        regex = draw(st.sampled_from(REGEXES)).replace("\\", "\\\\")
        return f"{draw(text())} RLIKE '{regex}'"
    if kind == 6:
        negated = draw(st.sampled_from(["", "NOT "]))
        return f"{draw(numeric())} IS {negated}DISTINCT FROM {draw(numeric())}"
    if kind == 7:
        items = draw(st.lists(st.sampled_from(NUMBERS), min_size=1, max_size=3))
        return f"{draw(numeric())} {draw(st.sampled_from(['IN', 'NOT IN']))} ({', '.join(items)})"
    if kind == 8:
        target = draw(st.sampled_from([numeric(), text(), date()]))
        return f"{draw(target)} IS {draw(st.sampled_from(['', 'NOT ']))}NULL"
    if kind == 9:
        return draw(st.sampled_from(["bo", "isnan(x)", "NOT bo", "bo IS TRUE"]))
    left, right = draw(boolean(depth - 1)), draw(boolean(depth - 1))
    if kind == 10:
        return f"({left}) {draw(st.sampled_from(['AND', 'OR']))} ({right})"
    return f"NOT ({left})"


FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=EXAMPLES <= 100,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.mark.parametrize("zone", ZONES)
def test_generated_filters_agree_with_spark(
    spark: SparkSession, table: str, outcomes: Counter[str], zone: str
) -> None:
    @FUZZ
    @given(where=boolean())
    def run(where: str) -> None:
        check(spark, table, where, zone, outcomes)

    run()


def test_table_is_what_spark_wrote(spark: SparkSession, table: str, tmp_path: Path) -> None:
    assert zorder.to_arrow(table, columns=["id"]).num_rows == len(_rows())
