"""Constant expressions folded by zorder, checked against Spark's own answer.

Hypothesis writes constant expressions (numbers of every type, dates,
timestamps, intervals, the string functions, conditionals, NULLs) and Spark
evaluates ``SELECT <expr>``. Whenever :func:`zorder.skipping.constants.constant`
answers, its value and its type must be Spark's; whenever Spark raises,
``constant`` must raise :class:`NotConstantError` (never a value). Each
session zone is tested with a :class:`FoldContext` naming the same zone and
the instant Spark's query read (``current_timestamp()`` in the same query).

``ZORDER_FUZZ_EXAMPLES`` sets how many expressions each zone gets (the long
profile: thousands); ``make test`` runs a quick one.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import os
import zoneinfo
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession
from sqlglot import exp

from zorder.skipping.constants import FoldContext, NotConstantError, constant
from zorder.skipping.nodes import TypedLiteral
from zorder.skipping.zones import SESSION_ZONE

pytestmark = pytest.mark.spark

EXAMPLES = int(os.environ.get("ZORDER_FUZZ_EXAMPLES", "25"))
ZONES = ["UTC", "America/Sao_Paulo", "America/New_York"]
OUTCOMES: Counter[str] = Counter()

# --------------------------------------------------------------------------------------
# Expressions

S = st.SearchStrategy[str]


def _call(name: str, *parts: S) -> S:
    return st.tuples(*parts).map(lambda args: f"{name}({', '.join(args)})")


def _op(left: S, ops: list[str], right: S) -> S:
    return st.tuples(left, st.sampled_from(ops), right).map(lambda t: f"({t[0]} {t[1]} {t[2]})")


def _decimal_text(value: decimal.Decimal) -> str:
    return format(value, "f")


INT_EDGES = ["0", "1", "-1", "7", "2147483647", "-2147483648", "2147483648", "100000"]
NUMBER_LEAVES: S = st.one_of(
    st.sampled_from(INT_EDGES),
    st.integers(-1000, 1000).map(str),
    st.integers(-(2**31), 2**31 - 1).map(str),
    st.integers(-(2**63), 2**63 - 1).map(lambda v: f"{v}L"),
    st.integers(-128, 127).map(lambda v: f"{v}Y"),
    st.integers(-(2**15), 2**15 - 1).map(lambda v: f"{v}S"),
    st.decimals(min_value=-1000, max_value=1000, places=2, allow_nan=False).map(_decimal_text),
    st.decimals(min_value=-1, max_value=1, places=6, allow_nan=False).map(_decimal_text),
    st.sampled_from(
        ["0.06", "0.01", "1.5", "99999999999999999999999999999999999999", "0.1", "12345.678"]
    ),
    st.sampled_from(["1e0", "2.5e0", "1e308", "-0.0e0", "1.5F", "0.1F", "3D", "1e-5"]),
    st.floats(-1e6, 1e6, allow_nan=False).map(lambda f: f"CAST({f!r} AS DOUBLE)"),
    st.sampled_from(
        [
            "NULL",
            "CAST(NULL AS INT)",
            "CAST(NULL AS DECIMAL(5,2))",
            "CAST(NULL AS DOUBLE)",
            "CAST(5 AS BIGINT)",
            "CAST(1.5 AS INT)",
            "CAST('12' AS INT)",
            "CAST('1.25' AS DECIMAL(4,2))",
            "CAST(1 AS DECIMAL(38,10))",
            "CAST(7 AS DECIMAL(38,0))",
            "length('héllo')",
        ]
    ),
)

DATES = st.dates(dt.date(1900, 1, 1), dt.date(2100, 12, 31)).map(lambda d: d.isoformat())
# Days of DST changes in New York and Sao Paulo (2018-11-04 starts at 01:00 there), month
# ends, and the first and last days Python holds.
SPECIAL_DATES = st.sampled_from(
    [
        *("2024-03-10", "2024-11-03", "2018-11-04", "2019-02-16"),
        *("2024-01-31", "2024-02-29", "2023-12-31", "9999-12-31", "0001-01-01"),
    ]
)
DATE_TEXT = st.one_of(DATES, SPECIAL_DATES)
TIME_TEXT = st.one_of(
    st.times().map(lambda t: t.isoformat()),
    st.sampled_from(["02:30:00", "01:30:00", "00:00:00", "23:30:00", "00:30:00", "12:00:00"]),
)
TIMESTAMP_TEXT = st.one_of(
    st.tuples(DATE_TEXT, TIME_TEXT).map(lambda t: f"{t[0]} {t[1]}"),
    st.tuples(DATE_TEXT, TIME_TEXT, st.sampled_from(["Z", "+02:00", "-05:00"])).map(
        lambda t: f"{t[0]} {t[1]}{t[2]}"
    ),
)
UNITS = ["YEAR", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "DAYS", "HOURS", "MONTHS"]
INTERVALS: S = st.one_of(
    st.tuples(st.integers(-400, 400), st.sampled_from(UNITS)).map(
        lambda t: f"INTERVAL '{t[0]}' {t[1]}"
    ),
    st.tuples(st.integers(-30, 30), st.sampled_from(UNITS)).map(
        lambda t: f"INTERVAL {t[0]} {t[1]}"
    ),
    st.tuples(st.integers(0, 20), st.integers(0, 11), st.sampled_from(["", "-"])).map(
        lambda t: f"INTERVAL '{t[2]}{t[0]}-{t[1]}' YEAR TO MONTH"
    ),
    st.sampled_from(
        [
            "INTERVAL 1 MONTH 2 DAYS",
            "INTERVAL 1 YEAR 2 MONTHS",
            "INTERVAL 1 DAY 2 HOURS",
            "INTERVAL '106751991' DAY",
            "INTERVAL 24 HOURS",
            "-INTERVAL '1' DAY",
        ]
    ),
)
STRING_LEAVES: S = st.one_of(
    st.sampled_from(["'abc'", "''", "'  a b  '", "'héllo'", "'ß'", "'2024-01-31'", "'x'"]),
    st.text(alphabet="abcXYZ -_é", max_size=6).map(lambda s: f"'{s}'"),
    st.sampled_from(["CAST(NULL AS STRING)", "NULL", "'2024-1-1'", "'12'", "' 7 '"]),
)


def numbers(depth: int) -> S:
    if depth == 0:
        return NUMBER_LEAVES
    sub = numbers(depth - 1)
    return st.one_of(
        NUMBER_LEAVES,
        _op(sub, ["+", "-", "*", "/", "div", "%"], sub),
        st.tuples(st.sampled_from(["abs", "floor", "ceil", "round", "-"]), sub).map(
            lambda t: f"{t[0]}({t[1]})"
        ),
        _call("pmod", sub, sub),
        _call("round", sub, st.integers(-2, 3).map(str)),
        _call("coalesce", sub, sub),
        _call("nullif", sub, sub),
        _call("greatest", sub, sub),
        _call("least", sub, sub),
        st.tuples(booleans(depth - 1), sub, sub).map(lambda t: f"if({t[0]}, {t[1]}, {t[2]})"),
        st.tuples(booleans(depth - 1), sub, sub).map(
            lambda t: f"CASE WHEN {t[0]} THEN {t[1]} ELSE {t[2]} END"
        ),
        st.tuples(
            sub, st.sampled_from(["INT", "BIGINT", "DECIMAL(10,2)", "DOUBLE", "SMALLINT"])
        ).map(lambda t: f"CAST({t[0]} AS {t[1]})"),
        _call("length", strings(depth - 1)),
    )


def booleans(depth: int) -> S:
    leaves = st.sampled_from(["true", "false", "NULL"])
    if depth <= 0:
        return leaves
    num = numbers(depth - 1)
    return st.one_of(
        leaves,
        _op(num, ["=", "<", ">=", "<>", "<=>"], num),
        _op(dates(depth - 1), ["=", "<"], dates(depth - 1)),
        _op(strings(depth - 1), ["=", ">"], strings(depth - 1)),
        st.tuples(num).map(lambda t: f"{t[0]} IS NULL"),
    )


def dates(depth: int) -> S:
    leaves = st.one_of(
        DATE_TEXT.map(lambda d: f"DATE '{d}'"),
        DATE_TEXT.map(lambda d: f"to_date('{d}')"),
        DATE_TEXT.map(lambda d: f"to_date('{d}', 'yyyy-MM-dd')"),
        st.sampled_from(
            ["current_date()", "to_date('2024-1-1', 'yyyy-MM-dd')", "CAST(NULL AS DATE)"]
        ),
        st.tuples(st.integers(1, 9999), st.integers(0, 13), st.integers(0, 32)).map(
            lambda t: f"make_date({t[0]}, {t[1]}, {t[2]})"
        ),
    )
    if depth == 0:
        return leaves
    sub = dates(depth - 1)
    small = st.one_of(
        st.integers(-1000, 1000).map(str),
        st.sampled_from(["1L", "2S", "3Y", "NULL", "2147483647"]),
    )
    return st.one_of(
        leaves,
        _op(sub, ["+", "-"], INTERVALS),
        _op(sub, ["+", "-"], small),
        _call("date_add", sub, small),
        _call("date_sub", sub, small),
        _call("add_months", sub, st.one_of(small, st.sampled_from(["12", "-1", "1L"]))),
        _call("last_day", st.one_of(sub, DATE_TEXT.map(lambda d: f"'{d}'"))),
        _call("next_day", sub, st.sampled_from(["'MO'", "'sunday'", "'Fri'", "'xx'"])),
        _call("trunc", sub, st.sampled_from(["'MM'", "'YEAR'", "'Q'", "'WEEK'", "'DD'"])),
        timestamps(depth - 1).map(lambda t: f"CAST({t} AS DATE)"),
        timestamps(depth - 1).map(lambda t: f"to_date({t})"),
        _call("coalesce", sub, sub),
        _call("greatest", sub, sub),
    )


def timestamps(depth: int) -> S:
    leaves = st.one_of(
        TIMESTAMP_TEXT.map(lambda t: f"TIMESTAMP '{t}'"),
        st.tuples(DATE_TEXT, TIME_TEXT).map(lambda t: f"TIMESTAMP_NTZ '{t[0]} {t[1]}'"),
        TIMESTAMP_TEXT.map(lambda t: f"to_timestamp('{t}')"),
        st.sampled_from(["current_timestamp()", "now()", "CAST(NULL AS TIMESTAMP)"]),
    )
    if depth == 0:
        return leaves
    sub = timestamps(depth - 1)
    day = dates(depth - 1)
    return st.one_of(
        leaves,
        _op(sub, ["+", "-"], INTERVALS),
        _op(day, ["+", "-"], INTERVALS),
        day.map(lambda d: f"CAST({d} AS TIMESTAMP)"),
        day.map(lambda d: f"CAST({d} AS TIMESTAMP_NTZ)"),
        sub.map(lambda t: f"CAST({t} AS TIMESTAMP_NTZ)"),
        sub.map(lambda t: f"CAST({t} AS TIMESTAMP)"),
        st.tuples(
            st.sampled_from(["YEAR", "MONTH", "MM", "QUARTER", "WEEK", "DAY", "HOUR", "MINUTE"]),
            st.one_of(sub, day),
        ).map(lambda t: f"date_trunc('{t[0]}', {t[1]})"),
    )


def strings(depth: int) -> S:
    if depth <= 0:
        return STRING_LEAVES
    sub = strings(depth - 1)
    anything = st.one_of(sub, numbers(depth - 1), dates(depth - 1), timestamps(depth - 1))
    small = st.integers(-6, 8).map(str)
    return st.one_of(
        STRING_LEAVES,
        _call("concat", sub, anything),
        _op(sub, ["||"], sub),
        st.tuples(st.sampled_from(["upper", "lower", "trim", "ltrim", "rtrim"]), sub).map(
            lambda t: f"{t[0]}({t[1]})"
        ),
        _call("substring", sub, small),
        _call("substring", sub, small, small),
        _call("left", sub, small),
        _call("right", sub, small),
        _call("lpad", sub, small, sub),
        _call("rpad", sub, small),
        _call("replace", sub, sub, sub),
        anything.map(lambda a: f"CAST({a} AS STRING)"),
        _call("coalesce", sub, sub),
    )


def expressions() -> S:
    return st.one_of(
        numbers(2),
        dates(2),
        timestamps(2),
        strings(2),
        booleans(1),
        INTERVALS,
        _op(INTERVALS, ["+", "-"], INTERVALS),
        st.sampled_from(["current_timezone()"]),
    )


# --------------------------------------------------------------------------------------
# The check


@pytest.fixture
def session_zone(spark: SparkSession, request: pytest.FixtureRequest) -> Iterator[str]:
    zone: str = request.param
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        yield zone
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")


def _spark_answer(spark: SparkSession, text: str) -> tuple[str, Any, int] | Exception:
    """(type, comparable value, now in microseconds), or the error Spark raised."""
    try:
        frame = spark.sql(f"SELECT {text} AS v, current_timestamp() AS now")
        type_name = frame.schema["v"].dataType.simpleString()
        if type_name == "timestamp":
            projection = "unix_micros(v)"
        elif type_name.startswith("interval year") or type_name.startswith("interval month"):
            whole = "(v + INTERVAL '0-0' YEAR TO MONTH)"  # EXTRACT(MONTH) needs both fields
            projection = f"extract(YEAR FROM {whole}) * 12 + extract(MONTH FROM {whole})"
        else:
            projection = "v"
        row = frame.selectExpr(f"{projection} AS v", "unix_micros(now) AS now").collect()[0]
    except Exception as error:  # Spark's errors, and Python's for values it cannot hold
        return error
    return type_name, row["v"], row["now"]


def _micros(value: dt.datetime, zone: dt.tzinfo) -> int:
    if value.tzinfo is SESSION_ZONE or value.tzinfo is None:
        value = value.replace(tzinfo=zone, fold=0)
    delta = value.astimezone(dt.UTC) - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    return delta // dt.timedelta(microseconds=1)


def _assert_same(
    text: str, ours: TypedLiteral, type_name: str, value: Any, zone: dt.tzinfo
) -> None:
    assert ours.type == type_name, f"{text}: type {ours.type}, Spark's {type_name}"
    if type_name == "timestamp":
        assert _micros(ours.value, zone) == value, f"{text}: {ours.value}, Spark's {value}"
    elif type_name.startswith("interval") and isinstance(value, dt.timedelta):
        assert ours.value == value // dt.timedelta(microseconds=1), f"{text}: {ours.value}"
    elif isinstance(value, float) and math.isnan(value):
        assert isinstance(ours.value, float), text
        assert math.isnan(ours.value), text
    elif isinstance(value, float):
        assert ours.value == value, f"{text}: {ours.value!r}, Spark's {value!r}"
        assert math.copysign(1, ours.value) == math.copysign(1, value), f"{text}: sign of zero"
    else:
        assert ours.value == value, f"{text}: {ours.value!r}, Spark's {value!r}"
        assert type(ours.value) is type(value) or isinstance(value, decimal.Decimal), text


def _check(spark: SparkSession, zone_name: str, text: str) -> None:
    try:
        node = sqlglot.parse_one(text, dialect="spark")
    except sqlglot.errors.ParseError:
        OUTCOMES["sqlglot cannot parse"] += 1
        return
    assert isinstance(node, exp.Expression)
    answer = _spark_answer(spark, text)
    zone = zoneinfo.ZoneInfo(zone_name)
    now = None if isinstance(answer, Exception) else answer[2]
    instant = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(microseconds=now or 0)
    context = FoldContext(zone=zone, now=instant, zone_name=zone_name)
    try:
        ours = constant(node, context)
    except NotConstantError:
        OUTCOMES["refused, Spark errs" if isinstance(answer, Exception) else "refused"] += 1
        return
    if isinstance(answer, Exception):
        raise AssertionError(f"{text}: folded to {ours}, but Spark raised {answer!r}"[:2000])
    type_name, value, _ = answer
    if value is None:
        assert ours is None, f"{text}: {ours}, Spark's NULL"
        OUTCOMES["NULL alike"] += 1
        return
    assert ours is not None, f"{text}: NULL here, Spark's {value!r} ({type_name})"
    _assert_same(text, ours, type_name, value, zone)
    OUTCOMES["same value and type"] += 1


FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=EXAMPLES <= 100,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.fixture(scope="module", autouse=True)
def _report() -> Iterator[None]:
    yield
    print(f"\nconstant folding against Spark: {dict(OUTCOMES)}")


@pytest.mark.parametrize("session_zone", ZONES, indirect=True)
@FUZZ
@given(text=expressions())
def test_generated_constants_agree_with_spark(
    spark: SparkSession, session_zone: str, text: str
) -> None:
    _check(spark, session_zone, text)


WORKED = [
    "date '2024-06-01' - interval '7' day",
    "date '2024-06-01' + interval 2 hours",
    "date '2024-01-31' + interval '1' month",
    "timestamp '2024-03-09 12:00:00' + interval 24 hours",
    "timestamp '2024-11-02 01:30:00' + interval '1' day",
    "timestamp '2024-03-10 02:30:00' + interval '1' day",
    "timestamp '2024-11-03 00:30:00' + interval '2' hour",
    "date '2018-11-04' + interval '1' hour",
    "add_months('2024-01-31', 1)",
    "0.06 + 0.01",
    "1 + 0.5",
    "1.5 + (1 + 1)",
    "1.0 / 3",
    "CAST(1 AS DECIMAL(38,10)) / 3",
    "pmod(-2147483647, -2147483648)",
    "-2147483648",
    "1.5F + 1.5F",
    "coalesce(NULL, 1, 2L)",
    "if(true, 1, 2.5)",
    "round(1.234, -1)",
    "CAST(timestamp '2024-06-01 10:00:00.5' AS STRING)",
    "date_trunc('DAY', timestamp '2024-11-03 12:00:00')",
    "current_date()",
    "current_timestamp() - interval '1' day",
    "current_timezone()",
    "1Y + 1.5",
    "5S + 1.5",
]


@pytest.mark.parametrize("session_zone", ZONES, indirect=True)
@pytest.mark.parametrize("text", WORKED)
def test_worked_examples_agree_with_spark(
    spark: SparkSession, session_zone: str, text: str
) -> None:
    _check(spark, session_zone, text)
