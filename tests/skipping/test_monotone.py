"""Rewrites of order-preserving functions of one column, against a slow reference.

For random values of a column, random forms, operators and constants: where
the reference (plain Python, Spark's meaning as measured, SQL's NULLs) says
``f(x) op v`` is TRUE, the rewritten predicate bound to the column's type must
keep the row (the row evaluator) and its one-row file (the statistics); where
the rewrite claims equivalence (the row evaluator accepts it), it must agree
with the reference on TRUE, FALSE and NULL, and so must its negation.
"""

from __future__ import annotations

import datetime as dt
import decimal
import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pytest
import sqlglot
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot import exp
from sqlglot.dialects.spark import Spark

from zorder.errors import UnsupportedFilterError
from zorder.skipping.constants import constant
from zorder.skipping.evaluate import might_match_mask
from zorder.skipping.monotone import monotone_comparison, monotone_conjuncts
from zorder.skipping.monotone_times import record_unit_spellings
from zorder.skipping.nodes import (
    AlwaysFalse,
    And,
    CompareOp,
    Not,
    NullComparison,
    Predicate,
    TypedLiteral,
    Unknown,
)
from zorder.skipping.predicates import Bound, bind
from zorder.skipping.rows import exact_predicate, row_mask

TYPES = {
    "d": "date",
    "t": "timestamp",
    "tn": "timestamp_ntz",
    "i": "bigint",
    "m": "decimal(6,2)",
    "w": "decimal(38,10)",
    "x": "double",
    "s": "string",
}
ARROW = {
    "d": pa.date32(),
    "t": pa.timestamp("us", tz="UTC"),
    "tn": pa.timestamp("us"),
    "i": pa.int64(),
    "m": pa.decimal128(6, 2),
    "w": pa.decimal128(38, 10),
    "x": pa.float64(),
    "s": pa.string(),
}
ZONES = ["UTC", "America/Sao_Paulo"]  # Sao Paulo moved its clocks at midnight until 2019
OPS: list[CompareOp] = ["=", "<=>", "!=", "<", "<=", ">", ">="]
YEAR_OPS: list[CompareOp] = ["=", "<=>"]

# -------------------------------------------------------------------------- reference


def compare(a: Any, op: str, b: Any) -> bool | None:
    if op == "<=>":
        return a is not None and a == b
    if a is None:
        return None
    outcomes: dict[str, bool] = {
        "=": a == b,
        "!=": a != b,
        "<": a < b,
        "<=": a <= b,
        ">": a > b,
        ">=": a >= b,
    }
    return outcomes[op]


def local_day(value: dt.date, column: str, zone: str) -> dt.date:
    """The day Spark's CAST(value AS DATE) gives."""
    if column == "t":
        assert isinstance(value, dt.datetime)
        return value.astimezone(zoneinfo.ZoneInfo(zone)).date()
    if column == "tn":
        assert isinstance(value, dt.datetime)
        return value.date()
    return value


def start_of(day: dt.date, zone: str) -> dt.datetime:
    """A DATE cast to TIMESTAMP: its first instant in the zone (a skipped midnight
    is 01:00, which Python's fold=0 gives as Java's atStartOfDay does)."""
    return dt.datetime(day.year, day.month, day.day, tzinfo=zoneinfo.ZoneInfo(zone)).astimezone(
        dt.UTC
    )


def session_instant(value: dt.date, column: str, zone: str) -> dt.datetime:
    """The TIMESTAMP Spark makes of a date or timestamp_ntz before date_trunc."""
    if column == "t":
        assert isinstance(value, dt.datetime)
        return value
    if column == "tn":
        assert isinstance(value, dt.datetime)
        return value.replace(tzinfo=zoneinfo.ZoneInfo(zone)).astimezone(dt.UTC)
    return start_of(value, zone)


def floor_unit(day: dt.date, unit: str) -> dt.date:
    if unit == "year":
        return dt.date(day.year, 1, 1)
    if unit == "quarter":
        return dt.date(day.year, [1, 1, 1, 4, 4, 4, 7, 7, 7, 10, 10, 10][day.month - 1], 1)
    if unit == "month":
        return day.replace(day=1)
    if unit == "week":
        while day.weekday() != 0:  # Monday
            day -= dt.timedelta(days=1)
        return day
    return day


@dataclass(frozen=True)
class Form:
    """A function of one column: its SQL, and its value the slow way (x not None)."""

    sql: str
    column: str
    apply: Callable[[Any, str], Any]  # (x, zone) -> f(x), compared with the reference value
    reference_value: Callable[[Any, str], Any]  # (constant, zone) -> comparable with f(x)


def _day(d: dt.date, zone: str) -> Any:
    return d


DAY_COLUMNS = ["d", "t", "tn"]
TRUNC_UNITS = {"YEAR": "year", "yy": "year", "QUARTER": "quarter", "MONTH": "month", "mm": "month"}
TRUNC_UNITS |= {"WEEK": "week", "mon": "month"}
DATE_TRUNC_UNITS = {**TRUNC_UNITS, "DAY": "day", "dd": "day"}


def _date_trunc(column: str, unit: str) -> Callable[[Any, str], Any]:
    def apply(x: Any, z: str) -> dt.datetime:
        local = session_instant(x, column, z).astimezone(zoneinfo.ZoneInfo(z)).date()
        return start_of(floor_unit(local, unit), z)

    return apply


def _cast_to_date(column: str) -> Callable[[Any, str], Any]:
    def apply(x: Any, z: str) -> dt.date:
        return local_day(x, column, z)

    return apply


def _trunc(column: str, unit: str) -> Callable[[Any, str], Any]:
    def apply(x: Any, z: str) -> dt.date:
        return floor_unit(local_day(x, column, z), unit)

    return apply


def _day_plus(column: str, days: int) -> Callable[[Any, str], Any]:
    """``local_day(x) + days``; ``x + days`` on a DATE column's own values."""

    def apply(x: Any, z: str) -> dt.date:
        return local_day(x, column, z) + dt.timedelta(days=days)

    return apply


def forms_for(column: str) -> list[Form]:
    forms: list[Form] = []
    for spelling in (f"CAST({column} AS DATE)", f"to_date({column})", f"date({column})"):
        forms.append(Form(spelling, column, _cast_to_date(column), _day))
    for text, unit in DATE_TRUNC_UNITS.items():
        forms.append(
            Form(f"date_trunc('{text}', {column})", column, _date_trunc(column, unit), start_of)
        )
    for text, unit in TRUNC_UNITS.items():
        forms.append(Form(f"trunc({column}, '{text}')", column, _trunc(column, unit), _day))
    for n in (-3, 0, 1, 40):
        forms.append(Form(f"date_add({column}, {n})", column, _day_plus(column, n), _day))
        forms.append(Form(f"date_sub({column}, {n})", column, _day_plus(column, -n), _day))
    if column == "d":
        for n in (1, -2, 30):
            forms.append(Form(f"{column} + INTERVAL '{n}' DAY", column, _day_plus(column, n), _day))
            forms.append(Form(f"{column} - INTERVAL {n} DAYS", column, _day_plus(column, -n), _day))
    return forms


DATES = st.one_of(
    st.dates(dt.date(2017, 9, 1), dt.date(2020, 3, 1)),
    st.sampled_from([dt.date(2018, 11, 4), dt.date(2018, 11, 3), dt.date(2019, 2, 16)]),
    st.builds(lambda y, m: dt.date(y, m, 1), st.integers(2017, 2020), st.integers(1, 12)),
)
TIMES = st.one_of(
    st.times(),
    st.sampled_from([dt.time(0), dt.time(23, 59, 59, 999_999), dt.time(1), dt.time(0, 30)]),
)


@st.composite
def column_values(draw: st.DrawFn, column: str) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return None
    day, time = draw(DATES), draw(TIMES)
    if column == "d":
        return day
    if column == "tn":
        return dt.datetime.combine(day, time)
    # an instant near a local midnight of either zone
    zone = zoneinfo.ZoneInfo(draw(st.sampled_from(ZONES)))
    return dt.datetime.combine(day, time, tzinfo=zone).astimezone(dt.UTC)


def date_constant(value: dt.date, spelling: int) -> TypedLiteral:
    if spelling == 1:
        return TypedLiteral(value.isoformat(), "string")
    return TypedLiteral(value, "date")


def one_row(column: str, value: Any) -> pa.Table:
    return pa.table({column: pa.array([value], ARROW[column])})


def stats_of(column: str, value: Any) -> pa.Table:
    """A one-row file's add action, shaped like deltalake's get_add_actions(flatten=False)."""
    kind = ARROW[column]

    def struct(item: Any, arrow: pa.DataType) -> pa.StructArray:
        return pa.StructArray.from_arrays([pa.array([item], arrow)], names=[column])

    return pa.table(
        {
            "path": ["f0"],
            "size_bytes": pa.array([100], pa.int64()),
            "num_records": pa.array([1], pa.int64()),
            "null_count": struct(1 if value is None else 0, pa.int64()),
            "min": struct(value, kind),
            "max": struct(value, kind),
        }
    )


def check(predicate: Predicate, column: str, x: Any, zone: str, expected: bool | None) -> str:
    """Asserts the rewrite keeps what it must, and is exact where it says so; returns
    'exact' or 'implied'."""
    columns = {column: TYPES[column]}
    for polarity, truth in ((predicate, expected), (Not(predicate), _not(expected))):
        kept = might_match_mask(
            bind(polarity, columns, time_zone=zone), stats_of(column, x), columns
        )
        if truth is True:
            assert kept[0], (polarity, x, zone)
    try:
        bound = exact_predicate(predicate, columns, time_zone=zone)
    except UnsupportedFilterError:
        return "implied"
    mask = row_mask(bound, one_row(column, x), columns).to_pylist()[0]
    negated = row_mask(Bound(Not(bound.tree), columns), one_row(column, x), columns).to_pylist()[0]
    assert mask == expected, (predicate, x, zone, mask, expected)
    assert negated == _not(expected), (predicate, x, zone)
    return "exact"


def _not(value: bool | None) -> bool | None:
    return None if value is None else not value


def rewrite(
    sql: str, op: CompareOp, value: TypedLiteral, zone: dt.tzinfo | None = None
) -> Predicate | None:
    side = sqlglot.parse_one(sql, dialect="spark")
    assert isinstance(side, exp.Expression)
    record_unit_spellings(side, Spark().tokenize(sql))  # as the filter's parse does
    return monotone_comparison(op, side, value, constant, zone=zone)


# ------------------------------------------------------------------------------- tests

DAY_FORMS = [form for column in DAY_COLUMNS for form in forms_for(column)]


@settings(deadline=None)
@given(
    form=st.sampled_from(DAY_FORMS),
    op=st.sampled_from(OPS),
    zone=st.sampled_from(ZONES),
    data=st.data(),
)
def test_day_functions_match_the_reference(
    form: Form, op: CompareOp, zone: str, data: st.DataObject
) -> None:
    x = data.draw(column_values(form.column))
    v = data.draw(DATES)
    literal = date_constant(v, data.draw(st.integers(0, 3)))
    predicate = rewrite(form.sql, op, literal)
    assert predicate is not None, form.sql
    expected = (
        None
        if x is None and op != "<=>"
        else compare(None if x is None else form.apply(x, zone), op, form.reference_value(v, zone))
    )
    outcome = check(predicate, form.column, x, zone, expected)
    assert outcome == "exact", form.sql  # every day form is an equivalence


@settings(deadline=None)
@given(
    column=st.sampled_from(DAY_COLUMNS),
    op=st.sampled_from(OPS),
    zone=st.sampled_from(ZONES),
    data=st.data(),
)
def test_year_and_month_or_quarter_under_a_year(
    column: str, op: CompareOp, zone: str, data: st.DataObject
) -> None:
    x = data.draw(column_values(column))
    day = None if x is None else local_day(x, column, zone)
    year = data.draw(st.integers(2016, 2021))
    number = data.draw(
        st.one_of(st.integers(-1, 14), st.decimals("-1", "14", places=1).map(decimal.Decimal))
    )
    year_literal = TypedLiteral(year, "int")
    alone = rewrite(f"year({column})", op, TypedLiteral(year, "int"))
    assert alone is not None
    expected = compare(None if day is None else day.year, op, year)
    assert check(alone, column, x, zone, expected) == "exact"
    # year(c) = Y AND field(c) op v, in either order and spelling
    field, of = data.draw(st.sampled_from([("month", lambda d: d.month), ("quarter", _quarter)]))
    year_op = data.draw(st.sampled_from(YEAR_OPS))
    terms = [f"year({column}) {year_op} {year}", f"{field}({column}) {op} {number}"]
    if data.draw(st.booleans()):
        terms.reverse()
    parsed = sqlglot.parse_one(" AND ".join(terms), dialect="spark")
    assert isinstance(parsed, sqlglot.exp.And)
    recognised, remaining = monotone_conjuncts([parsed.this, parsed.expression], constant)
    assert len(recognised) == 1
    assert len(remaining) == 1
    year_term = rewrite(f"year({column})", year_op, year_literal)
    assert year_term is not None
    chain = And(year_term, recognised[0])
    in_year = compare(None if day is None else day.year, year_op, year)
    in_field = (
        compare(None if day is None else of(day), op, number)
        if op != "<=>"
        else (day is not None and of(day) == number)
    )
    expected = _and(in_year, in_field)
    assert check(chain, column, x, zone, expected) == "exact"


def _quarter(day: dt.date) -> int:
    return (day.month - 1) // 3 + 1


def _and(a: bool | None, b: bool | None) -> bool | None:
    if a is False or b is False:
        return False
    return None if a is None or b is None else True


NUMBERS = st.one_of(
    st.integers(-1000, 1000),
    st.decimals("-1000", "1000", places=2).map(decimal.Decimal),
    st.decimals("-10", "10", places=6).map(decimal.Decimal),
)


def number_literal(value: int | decimal.Decimal) -> TypedLiteral:
    if isinstance(value, int):
        return TypedLiteral(value, "int")
    digits = value.as_tuple()
    scale = -int(digits.exponent)
    return TypedLiteral(value, f"decimal({max(len(digits.digits), scale, 1)},{scale})")


def sql_number(value: int | decimal.Decimal) -> str:
    return f"({value})"


@settings(deadline=None)
@given(
    column=st.sampled_from(["i", "m"]),
    shape=st.sampled_from(["{c} + {k}", "{k} + {c}", "{c} - {k}", "{k} - {c}"]),
    op=st.sampled_from(OPS),
    data=st.data(),
)
def test_arithmetic_on_exact_numbers(
    column: str, shape: str, op: CompareOp, data: st.DataObject
) -> None:
    if data.draw(st.integers(0, 9)) == 0:
        x: Any = None
    elif column == "i":
        x = data.draw(st.integers(-2000, 2000))
    else:
        x = data.draw(st.decimals("-9999.99", "9999.99", places=2))
    k, v = data.draw(NUMBERS), data.draw(NUMBERS)
    sql = shape.format(c=column, k=sql_number(k))
    predicate = rewrite(sql, op, number_literal(v))
    assert predicate is not None, sql
    assert isinstance(predicate, And)
    assert isinstance(predicate.right, Unknown)
    if x is None:
        value = None
    elif shape == "{k} - {c}":
        value = decimal.Decimal(k) - decimal.Decimal(x)
    elif "-" in shape:
        value = decimal.Decimal(x) - decimal.Decimal(k)
    else:
        value = decimal.Decimal(x) + decimal.Decimal(k)
    expected = compare(value, op, decimal.Decimal(v))
    assert check(predicate, column, x, "UTC", expected) == "implied"
    # The comparison inside is exact (Spark's only other answer is an overflow error).
    assert check(predicate.left, column, x, "UTC", expected) == "exact"


SAMPLES = {
    "x": 4.0,
    "w": decimal.Decimal("4.0000000001"),
    "t": dt.datetime(2023, 12, 31, 23, tzinfo=dt.UTC),
    "tn": dt.datetime(2023, 12, 31, 23),
    "s": "2024-01-01",
    "i": 12,
}


@pytest.mark.parametrize(
    ("column", "sql"),
    [
        ("x", "x + 1"),  # a double's sum rounds
        ("w", "w + 1"),  # decimal(38,10) + 1 is a rounded decimal(38,9)
        ("t", "t + INTERVAL '1' DAY"),  # the session's clock, DST included
        ("tn", "tn + INTERVAL '1' DAY"),
        ("s", "CAST(s AS DATE)"),  # Spark would parse the strings
        ("i", "substring(i, 1, 2)"),  # Spark would print the numbers
    ],
)
def test_forms_only_some_types_take_keep_every_file(column: str, sql: str) -> None:
    value: TypedLiteral = {
        "x": TypedLiteral(5, "int"),
        "w": TypedLiteral(5, "int"),
        "s": TypedLiteral(dt.date(2024, 1, 1), "date"),
        "i": TypedLiteral("12", "string"),
    }.get(column, TypedLiteral(dt.date(2024, 1, 1), "date"))
    for op in OPS:
        predicate = rewrite(sql, op, value)
        assert predicate is not None
        columns = {column: TYPES[column]}
        for zone in ZONES:
            for polarity in (predicate, Not(predicate)):
                bound = bind(polarity, columns, time_zone=zone)
                kept = might_match_mask(bound, stats_of(column, SAMPLES[column]), columns)
                assert isinstance(bound, Unknown) or kept.all(), (sql, op, bound)


@pytest.mark.parametrize(
    "sql",
    [
        "date_trunc('hour', t)",  # below a day: only with the session's zone
        "to_date(s, 'yyyy')",
        "substring(s, 2, 3)",
        "substring(s, 1, 0)",
        "month(d)",  # not monotone alone
        "x + 1e0",
        "add_months(d, 1)",
        "d + INTERVAL '1' MONTH",
        "year(d) + 1",
    ],
)
def test_other_forms_are_left_alone(sql: str) -> None:
    for value in (TypedLiteral(dt.date(2024, 1, 1), "date"), TypedLiteral(3, "int")):
        assert rewrite(sql, "=", value) is None


@pytest.mark.parametrize("sql", ["trunc(d, 'dd')", "date_trunc('bogus', t)", "date_trunc('D', t)"])
def test_units_spark_does_not_know_are_null_on_every_row(sql: str) -> None:
    # Spark answers NULL for a unit it does not know (sqlglot reads 'D' as DAY)
    column = "d" if sql.startswith("trunc") else "t"
    for op in OPS:
        expected = AlwaysFalse() if op == "<=>" else NullComparison(op, column)
        assert rewrite(sql, op, TypedLiteral(dt.date(2024, 1, 1), "date")) == expected


STRINGS = st.text(alphabet="ab\u00e9\u4e2d\U0001f600", max_size=6)


@settings(deadline=None)
@given(
    spelling=st.sampled_from(["substring(s, 1, {k})", "substr(s, 0, {k})", "left(s, {k})"]),
    k=st.integers(1, 4),
    op=st.sampled_from(OPS),
    x=st.one_of(st.none(), STRINGS),
    p=STRINGS,
)
def test_prefixes_match_the_reference(
    spelling: str, k: int, op: CompareOp, x: str | None, p: str
) -> None:
    predicate = rewrite(spelling.format(k=k), op, TypedLiteral(p, "string"))
    assert predicate is not None
    expected = compare(None if x is None else x[:k], op, p)  # code points, in code point order
    assert check(predicate, "s", x, "UTC", expected) == "exact"


def test_examples_skip() -> None:
    """The rewrites do skip: a file of March 2024 is out of year 2023 and in 2024."""
    columns = {"t": "timestamp"}
    march = dt.datetime(2024, 3, 5, 12, tzinfo=dt.UTC)
    examples: list[tuple[str, CompareOp, TypedLiteral, bool]] = [
        ("year(t)", "=", TypedLiteral(2023, "int"), False),
        ("year(t)", "=", TypedLiteral(2024, "int"), True),
        ("CAST(t AS DATE)", "=", TypedLiteral(dt.date(2024, 3, 6), "date"), False),
        ("date_trunc('MONTH', t)", "<", TypedLiteral(dt.date(2024, 3, 1), "date"), False),
    ]
    for sql, op, value, keeps in examples:
        predicate = rewrite(sql, op, value)
        assert predicate is not None
        mask = might_match_mask(bind(predicate, columns), stats_of("t", march), columns)
        assert bool(mask[0]) is keeps, sql
