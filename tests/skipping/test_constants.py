"""Constant folding without a JVM: worked examples measured on Spark 4.1 (ANSI mode, its
default), refusals, and properties against exact arithmetic. The differential test
against Spark itself is tests/spark/test_constants_spark.py."""

from __future__ import annotations

import datetime as dt
import decimal
import zoneinfo
from typing import Any

import pytest
import sqlglot
from hypothesis import given
from hypothesis import strategies as st
from sqlglot import exp

from zorder.skipping.coercion import ComputedLiteral, InexactError, comparison_type
from zorder.skipping.constants import FoldContext, NotConstantError, constant
from zorder.skipping.nodes import TypedLiteral
from zorder.skipping.sql import parse_predicate
from zorder.skipping.zones import SESSION_ZONE

D = decimal.Decimal
NEW_YORK = zoneinfo.ZoneInfo("America/New_York")
UTC_CONTEXT = FoldContext(zone=dt.UTC)
NY_CONTEXT = FoldContext(
    zone=NEW_YORK,
    now=dt.datetime(2024, 6, 1, 3, 0, tzinfo=dt.UTC),
    zone_name="America/New_York",
)


def fold(text: str, context: FoldContext | None = None) -> TypedLiteral | None:
    node = sqlglot.parse_one(text, dialect="spark")
    assert isinstance(node, exp.Expression)
    return constant(node, context)


# Each measured on Spark 4.1 with `SELECT <text>` (value and df.schema).
MEASURED: list[tuple[str, Any, str]] = [
    ("1 / 2", 0.5, "double"),
    ("1L / 2", 0.5, "double"),
    ("1.0 / 3", D("0.333333"), "decimal(7,6)"),
    ("1.5 / 2", D("0.750000"), "decimal(7,6)"),
    ("1.5 / -2", D("-0.750000"), "decimal(7,6)"),
    ("1.5 / (1+1)", D("0.750000000000"), "decimal(13,12)"),
    ("1.5 + (1+1)", D("3.5"), "decimal(12,1)"),
    ("1.5 + -2", D("-0.5"), "decimal(3,1)"),
    ("0.06 + 0.01", D("0.07"), "decimal(3,2)"),
    ("1 + 0.5", D("1.5"), "decimal(3,1)"),
    ("0.1 * 0.1", D("0.01"), "decimal(3,2)"),
    ("CAST(1 AS DECIMAL(38,10)) / 3", D("0.3333333333"), "decimal(38,10)"),
    ("CAST(1 AS DECIMAL(38,0)) * CAST(1 AS DECIMAL(38,10))", D("1.000000"), "decimal(38,6)"),
    ("1 div 2", 0, "bigint"),
    ("-7 div 2", -3, "bigint"),
    ("7.5 div 2", 3, "bigint"),
    ("-7 % 3", -1, "int"),
    ("7 % -3", 1, "int"),
    ("-7.5 % 2", D("-1.5"), "decimal(2,1)"),
    ("-7e0 % 2", -1.0, "double"),
    ("-2147483648 % -1", 0, "int"),
    ("pmod(-7, 3)", 2, "int"),
    ("pmod(7, -3)", 1, "int"),
    ("pmod(-2147483647, -2147483648)", 1, "int"),  # Java's int addition wraps there
    ("pmod(1.5, 2)", D("1.5"), "decimal(2,1)"),
    ("pmod(-7e0, 2)", 1.0, "double"),
    ("2147483647L + 1", 2147483648, "bigint"),
    ("1Y + 1Y", 2, "tinyint"),
    ("1S * 1Y", 1, "smallint"),
    ("1 + 1e0", 2.0, "double"),
    ("1.5F + 1", 2.5, "double"),
    ("1.5F + 1.5F", 3.0, "float"),
    ("1.5 * 1e0", 1.5, "double"),
    ("1e308 * 10", float("inf"), "double"),
    ("-2147483648", -2147483648, "int"),
    ("abs(-1.5)", D("1.5"), "decimal(2,1)"),
    ("abs(-1Y)", 1, "tinyint"),
    ("round(2.5)", D("3"), "decimal(2,0)"),
    ("round(-2.5)", D("-3"), "decimal(2,0)"),
    ("round(1.25, 1)", D("1.3"), "decimal(3,1)"),
    ("round(1.234, -1)", D("0"), "decimal(2,0)"),
    ("round(5)", 5, "int"),
    ("floor(1.5)", D("1"), "decimal(2,0)"),
    ("floor(-1.5e0)", -2, "bigint"),
    ("ceil(1.25)", D("2"), "decimal(2,0)"),
    ("floor(5)", 5, "bigint"),
    ("coalesce(NULL, 1, 2L)", 1, "bigint"),
    ("if(true, 1, 2.5)", D("1.0"), "decimal(11,1)"),
    ("if(NULL, 1, 2)", 2, "int"),
    ("CASE WHEN false THEN 1 WHEN true THEN 2L END", 2, "bigint"),
    ("CASE 1 WHEN NULL THEN 2 ELSE 3 END", 3, "int"),
    ("greatest(1, 2.5, NULL)", D("2.5"), "decimal(11,1)"),
    ("least(1, 2L)", 1, "bigint"),
    ("greatest('a', 'b')", "b", "string"),
    ("NULL <=> NULL", True, "boolean"),
    ("'a' || 'b'", "ab", "string"),
    ("concat('a', 1)", "a1", "string"),
    ("concat(1, 2)", "12", "string"),
    ("substring('hello', 0, 2)", "he", "string"),
    ("substring('hello', -3, 2)", "ll", "string"),
    ("substring('hello', 2)", "ello", "string"),
    ("substring('hello', -10, 3)", "", "string"),
    ("substring('hello', 2, -1)", "", "string"),
    ("left('hello', -1)", "", "string"),
    ("right('hello', 10)", "hello", "string"),
    ("trim('  a  ')", "a", "string"),
    ("ltrim('  a  ')", "a  ", "string"),
    ("length('héllo')", 5, "int"),
    ("length('😀')", 1, "int"),
    ("lpad('a', 5, 'xy')", "xyxya", "string"),
    ("lpad('abcdef', 3, 'x')", "abc", "string"),
    ("rpad('a', 5)", "a    ", "string"),
    ("lpad('a', -1, 'x')", "", "string"),
    ("replace('abcb', 'b', 'XY')", "aXYcXY", "string"),
    ("replace('abc', '', 'X')", "abc", "string"),
    ("CAST(1.50 AS STRING)", "1.50", "string"),
    ("CAST(true AS STRING)", "true", "string"),
    ("CAST(DATE '2024-06-01' AS STRING)", "2024-06-01", "string"),
    ("CAST(TIMESTAMP_NTZ '2024-06-01 10:00:00.500' AS STRING)", "2024-06-01 10:00:00.5", "string"),
    # Dates
    ("DATE '2024-06-01' - INTERVAL '7' DAY", dt.date(2024, 5, 25), "date"),
    ("DATE '2024-06-01' - INTERVAL 7 DAYS", dt.date(2024, 5, 25), "date"),
    ("DATE '2024-01-31' + INTERVAL '1' MONTH", dt.date(2024, 2, 29), "date"),
    ("DATE '2024-06-01' + INTERVAL '1-2' YEAR TO MONTH", dt.date(2025, 8, 1), "date"),
    ("DATE '2024-06-01' + INTERVAL 1 YEAR 2 MONTHS", dt.date(2025, 8, 1), "date"),
    ("DATE '2024-06-01' + INTERVAL '1' WEEK", dt.date(2024, 6, 8), "date"),
    ("DATE '2024-01-31' + INTERVAL '1' MONTH + INTERVAL '1' DAY", dt.date(2024, 3, 1), "date"),
    ("DATE '2024-06-01' + 1", dt.date(2024, 6, 2), "date"),
    ("DATE '2024-06-01' - 1", dt.date(2024, 5, 31), "date"),
    ("DATE '2024-06-01' + 1S", dt.date(2024, 6, 2), "date"),
    ("date_add(DATE '2024-06-01', 1)", dt.date(2024, 6, 2), "date"),
    ("date_add('2024-06-01', 1)", dt.date(2024, 6, 2), "date"),
    ("date_sub(DATE '2024-06-01', 1Y)", dt.date(2024, 5, 31), "date"),
    ("add_months(DATE '2024-01-31', 1)", dt.date(2024, 2, 29), "date"),
    ("add_months('2024-01-31', 1)", dt.date(2024, 2, 29), "date"),
    ("add_months(DATE '2024-02-29', 12)", dt.date(2025, 2, 28), "date"),
    ("add_months(DATE '2024-06-01', 1L)", dt.date(2024, 7, 1), "date"),
    ("to_date('2024-01-01')", dt.date(2024, 1, 1), "date"),
    ("to_date('2024-01-01 10:00')", dt.date(2024, 1, 1), "date"),
    ("to_date('2024-01-01', 'yyyy-MM-dd')", dt.date(2024, 1, 1), "date"),
    ("to_date(DATE '2024-01-01')", dt.date(2024, 1, 1), "date"),
    ("make_date(2024, 1, 2)", dt.date(2024, 1, 2), "date"),
    ("last_day(DATE '2024-02-01')", dt.date(2024, 2, 29), "date"),
    ("last_day('2024-02-03')", dt.date(2024, 2, 29), "date"),
    ("next_day(DATE '2024-02-01', 'MO')", dt.date(2024, 2, 5), "date"),
    ("trunc(DATE '2024-02-11', 'MM')", dt.date(2024, 2, 1), "date"),
    ("DATE '2024-06-01' - DATE '2024-05-01'", 31 * 86_400_000_000, "interval day"),
    ("INTERVAL '1' DAY + INTERVAL '2' HOUR", (24 + 2) * 3_600_000_000, "interval day to hour"),
    ("INTERVAL 2 WEEKS", 14 * 86_400_000_000, "interval day"),
    ("-INTERVAL '1' DAY", -86_400_000_000, "interval day"),
]


@pytest.mark.parametrize(("text", "value", "type_name"), MEASURED)
def test_measured_examples(text: str, value: Any, type_name: str) -> None:
    result = fold(text, UTC_CONTEXT)
    assert result is not None
    assert (result.value, result.type) == (value, type_name)
    assert type(result.value) is type(value)


@pytest.mark.parametrize(
    "text",
    [
        "1 + NULL",
        "NULL + NULL",
        "NULL / 0",
        "concat('a', NULL)",
        "'a' || NULL",
        "nullif(1, 1)",
        "CASE WHEN false THEN 1 END",
        "date_add(DATE '2024-06-01', NULL)",
        "add_months(DATE '2024-06-01', NULL)",
        "to_date(NULL)",
        "coalesce(NULL, NULL)",
        "NULL = 1",
        "NOT NULL",
        "NULL AND true",
    ],
)
def test_null_in_null_out(text: str) -> None:
    assert fold(text, UTC_CONTEXT) is None


# Spark raises on each (ANSI), or the answer is not computed here exactly: never a value.
REFUSED = [
    "2147483647 + 1",  # ARITHMETIC_OVERFLOW
    "127Y + 1Y",
    "-(-2147483648)",
    "abs(-2147483648)",
    "-9223372036854775808L div -1",
    "99999999999999999999999999999999999999 + 1",  # decimal(38,0) overflow
    "12345678901234567890.123 * 12345678901234567890.123",
    "1 / 0",
    "1.0 / 0",
    "1e0 / 0",
    "7 % 0",
    "pmod(7, 0)",
    "1e0 div 2",  # a type error in Spark
    "'1' + '2'",
    "1 + '2.5'",
    "DATE '2024-06-01' + 1L",  # date_add wants an int
    "date_add(DATE '2024-06-01', 1L)",
    "TIMESTAMP '2024-06-01 10:00:00' + 1",
    "INTERVAL '1' MONTH + INTERVAL '2' DAY",  # mixed interval families
    "INTERVAL 1 MONTH 2 DAYS",
    "INTERVAL '106751992' DAY",
    "DATE '9999-12-31' + 1",  # past Python's years
    "make_date(2024, 2, 30)",
    "to_date('x')",
    "to_date('2024-1-1', 'yyyy-MM-dd')",
    "to_date('01.02.2024', 'dd.MM.yyyy')",  # a format not read here
    "next_day(DATE '2024-02-01', 'xx')",
    "trunc(DATE '2024-03-10', 'Q')",  # sqlglot rewrites 'Q' to QUARTER; Spark answers NULL
    "trunc(DATE '2024-03-10', 'QUARTER')",
    "date_trunc('D', TIMESTAMP '2024-03-10 10:00:00')",
    "upper('ß')",  # Java's SS, and more cases like it
    "lower('İ')",
    "1.5 + 2L",  # 2L and CAST(2 AS BIGINT) parse alike, and type differently here
    "CASE WHEN NULL THEN 0 ELSE 0 END",
    "CAST(DATE '2024-03-10' - NULL AS TIMESTAMP_NTZ)",
    "CAST(1e20 AS STRING)",  # Java's double formatting
    "round(2.5e0)",
    "greatest(CAST('NaN' AS DOUBLE), 1e0)",
    "trim(BOTH 'x' FROM 'xax')",  # sqlglot gives ltrim(a, b) the same shape
    "current_date()",  # no instant in the context
    "rand()",
]


@pytest.mark.parametrize("text", REFUSED)
def test_refused(text: str) -> None:
    with pytest.raises(NotConstantError):
        fold(text, UTC_CONTEXT)


def test_columns_are_not_constant() -> None:
    for text in ["x + 1", "date_add(d, 1)", "concat('a', s)", "coalesce(x, 1)"]:
        with pytest.raises(NotConstantError):
            fold(text, NY_CONTEXT)


# --------------------------------------------------------------------------------------
# Time zones


def test_timestamp_literal_keeps_the_session_zone_marker() -> None:
    result = fold("TIMESTAMP '2024-06-01 10:00:00'")
    assert result == TypedLiteral(dt.datetime(2024, 6, 1, 10, tzinfo=SESSION_ZONE), "timestamp")


@pytest.mark.parametrize(
    "text",
    [
        "TIMESTAMP '2024-06-01 10:00:00' + INTERVAL '1' DAY",
        "TIMESTAMP '2024-06-01 10:00:00' + INTERVAL '1' HOUR",  # DST: the zone matters
        "DATE '2024-06-01' + INTERVAL 2 HOURS",
        "CAST(TIMESTAMP '2024-06-01 10:00:00+02:00' AS DATE)",
        "to_date(TIMESTAMP '2024-06-01 23:00:00')",
        "CAST(TIMESTAMP '2024-06-01 10:00:00' AS STRING)",
        "date_trunc('MONTH', TIMESTAMP '2024-06-11 10:00:00')",
    ],
)
def test_what_depends_on_the_zone_needs_it(text: str) -> None:
    with pytest.raises(NotConstantError):
        fold(text)
    assert fold(text, NY_CONTEXT) is not None


def test_hours_on_an_explicit_offset_need_no_zone() -> None:
    result = fold("TIMESTAMP '2024-06-01 10:00:00+02:00' + INTERVAL '90' MINUTE")
    assert result is not None
    assert result.value == dt.datetime(2024, 6, 1, 9, 30, tzinfo=dt.UTC)


# Measured in a session in America/New_York (DST from 2024-03-10 02:00, to 2024-11-03 02:00).
NEW_YORK_MEASURED = [
    # Whole days are added on the wall clock, even when written as hours.
    ("TIMESTAMP '2024-03-09 12:00:00' + INTERVAL 24 HOURS", dt.datetime(2024, 3, 10, 12)),
    ("TIMESTAMP '2024-03-09 12:00:00' + INTERVAL '1' DAY", dt.datetime(2024, 3, 10, 12)),
    ("TIMESTAMP '2024-03-09 12:00:00' + INTERVAL '1' MONTH", dt.datetime(2024, 4, 9, 12)),
    ("TIMESTAMP '2024-03-09 12:00:00' - INTERVAL '1' DAY", dt.datetime(2024, 3, 8, 12)),
    ("DATE '2024-03-10' + INTERVAL '3' HOUR", dt.datetime(2024, 3, 10, 4)),
    ("DATE '2024-03-09' + INTERVAL 24 HOURS", dt.datetime(2024, 3, 10)),
    # A time in the gap moves forward by the gap.
    ("TIMESTAMP '2024-03-10 02:30:00' + INTERVAL '1' DAY", dt.datetime(2024, 3, 11, 3, 30)),
    ("TIMESTAMP '2024-03-09 02:30:00' + INTERVAL '1' DAY", dt.datetime(2024, 3, 10, 3, 30)),
    ("date_trunc('DD', TIMESTAMP '2024-03-10 12:00:00')", dt.datetime(2024, 3, 10)),
]


@pytest.mark.parametrize(("text", "wall"), NEW_YORK_MEASURED)
def test_new_york_wall_clock(text: str, wall: dt.datetime) -> None:
    result = fold(text, NY_CONTEXT)
    assert result is not None
    assert result.type == "timestamp"
    assert result.value.astimezone(NEW_YORK).replace(tzinfo=None) == wall


# Instants (unix microseconds) measured in America/New_York around the overlap.
@pytest.mark.parametrize(
    ("text", "micros"),
    [
        ("TIMESTAMP '2024-11-03 01:30:00'", 1730611800000000),  # the earlier offset
        ("TIMESTAMP '2024-11-02 01:30:00' + INTERVAL '1' DAY", 1730611800000000),
        ("TIMESTAMP '2024-11-03 00:30:00' + INTERVAL '1' HOUR", 1730611800000000),
        ("TIMESTAMP '2024-11-03 00:30:00' + INTERVAL '2' HOUR", 1730615400000000),
        ("TIMESTAMP '2024-11-03 01:30:00-05:00' + INTERVAL '0' DAY", 1730615400000000),
    ],
)
def test_new_york_overlap(text: str, micros: int) -> None:
    result = fold(f"({text}) + INTERVAL '0' SECOND", NY_CONTEXT)
    assert result is not None
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    assert (result.value - epoch) // dt.timedelta(microseconds=1) == micros


def test_the_clock_reads_the_context() -> None:
    # 03:00 UTC on June 1st is still May 31st in New York.
    assert fold("current_date()", NY_CONTEXT) == TypedLiteral(dt.date(2024, 5, 31), "date")
    now = fold("now()", NY_CONTEXT)
    assert now is not None
    assert now.type == "timestamp"
    assert now.value == dt.datetime(2024, 6, 1, 3, tzinfo=dt.UTC)
    assert fold("current_timestamp()", NY_CONTEXT) == now
    assert fold("current_timezone()", NY_CONTEXT) == TypedLiteral("America/New_York", "string")
    week_ago = fold("current_date() - INTERVAL '7' DAY", NY_CONTEXT)
    assert week_ago == TypedLiteral(dt.date(2024, 5, 24), "date")
    for text in ["current_date()", "current_timestamp()", "current_timezone()"]:
        with pytest.raises(NotConstantError):
            fold(text, FoldContext(zone=NEW_YORK))


# --------------------------------------------------------------------------------------
# Filters


@pytest.mark.parametrize(
    ("folded", "plain"),
    [
        ("price < 0.06 + 0.01", "price < CAST(0.07 AS DECIMAL(3,2))"),  # Spark: decimal(3,2)
        ("d >= date '2024-06-01' - interval '7' day", "d >= date '2024-05-25'"),
        ("d >= add_months(date '2024-01-31', 1)", "d >= date '2024-02-29'"),
        ("s = concat('k', '001')", "s = 'k001'"),
    ],
)
def test_filters_with_expressions_plan_as_their_values(folded: str, plain: str) -> None:
    assert parse_predicate(folded, context=UTC_CONTEXT) == parse_predicate(plain)


def test_a_computed_integer_meets_a_decimal_as_its_type() -> None:
    # Measured: a decimal(38,30) c = 2.000000000000000000000000000001 makes `c = 1 + 1` TRUE
    # (compared in decimal(38,28), rounding c) but `c = 2` and `c = 2L` FALSE (decimal(38,30)).
    two = fold("1 + 1")
    assert two == ComputedLiteral(2, "int")
    assert comparison_type("decimal(38,30)", [two]) == "decimal(38,28)"
    assert comparison_type("decimal(38,30)", [fold("2")]) == "decimal(38,30)"
    # 2L and CAST(2 AS BIGINT) parse alike, and Spark compares them differently here.
    with pytest.raises(InexactError):
        comparison_type("decimal(38,30)", [fold("2L")])
    # Where neither typing rounds, the two compare alike.
    assert comparison_type("decimal(10,2)", [fold("2L")]) == "decimal(10,2)"
    assert comparison_type("decimal(10,2)", [fold("CAST(2 AS INT)")]) == "decimal(12,2)"


# --------------------------------------------------------------------------------------
# Properties against exact arithmetic


def _decimal_literal(value: D) -> str:
    return format(value, "f")


small_decimals = st.decimals(
    min_value=-(10**6), max_value=10**6, places=3, allow_nan=False, allow_infinity=False
)


@given(a=small_decimals, b=small_decimals, op=st.sampled_from(["+", "-", "*"]))
def test_decimal_arithmetic_is_exact(a: D, b: D, op: str) -> None:
    text = f"{_decimal_literal(a)} {op} ({_decimal_literal(b)})"
    result = fold(text)
    assert result is not None
    exact = {"+": a + b, "-": a - b, "*": a * b}[op]
    assert result.value == exact
    scale = int(result.type.split(",")[1].rstrip(")"))
    assert result.value.as_tuple().exponent == -scale


@given(
    a=st.integers(-(2**31), 2**31 - 1),
    b=st.integers(-(2**31), 2**31 - 1),
    op=st.sampled_from(["+", "-", "*"]),
)
def test_int_arithmetic_is_exact_or_refused(a: int, b: int, op: str) -> None:
    exact = {"+": a + b, "-": a - b, "*": a * b}[op]
    text = f"CAST({a} AS INT) {op} CAST({b} AS INT)"
    if -(2**31) <= exact < 2**31:
        assert fold(text) == ComputedLiteral(exact, "int")
    else:
        with pytest.raises(NotConstantError):
            fold(text)


@given(a=st.integers(-(10**9), 10**9), b=st.integers(-(10**9), 10**9))
def test_int_division_is_a_double(a: int, b: int) -> None:
    text = f"CAST({a} AS INT) / CAST({b} AS INT)"
    if b == 0:
        with pytest.raises(NotConstantError):
            fold(text)
    else:
        assert fold(text) == TypedLiteral(a / b, "double")


@given(
    day=st.dates(dt.date(1900, 1, 1), dt.date(2100, 12, 31)),
    months=st.integers(-1200, 1200),
)
def test_add_months_keeps_the_day_or_takes_the_last(day: dt.date, months: int) -> None:
    result = fold(f"add_months(DATE '{day.isoformat()}', {months})")
    assert result is not None
    moved = result.value
    assert (moved.year - day.year) * 12 + moved.month - day.month == months
    last = (moved.replace(day=28) + dt.timedelta(days=4)).replace(day=1) - dt.timedelta(days=1)
    assert moved.day == min(day.day, last.day)
    same = fold(f"DATE '{day.isoformat()}' + INTERVAL '{months}' MONTH")
    assert same == result
