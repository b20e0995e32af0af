"""Monotone rewrites of date functions: a day, a truncation, a year, a date plus days.

``CAST(c AS DATE)``, ``to_date(c)``, ``date_trunc(unit, c)``, ``trunc(c, fmt)``,
``year(c)``, ``date_add(c, n)`` and ``c + INTERVAL n DAY`` compared with a constant are
read as ranges of days on ``c`` (what each means in Spark is measured and listed in
:mod:`zorder.skipping.monotone`); ``month(c)`` and ``quarter(c)`` likewise, but only
under a ``year(c) = Y`` of the same AND chain, as alone they are not monotone.
"""

from __future__ import annotations

import datetime as dt
import decimal

from sqlglot import exp

from zorder.skipping.coercion import (
    INTEGER_TYPES,
    InexactError,
    cast_literal,
    decimal_shape,
    timestamp_text,
)
from zorder.skipping.datetimes import local_date, start_of_day, to_timestamp
from zorder.skipping.monotone_steps import (
    COMPARISONS,
    SMALL_INTEGERS,
    Constant,
    NotHandledError,
    column_name,
    day_literal,
    implied,
    integer_arg,
    literal_of,
    steps,
    unparen,
)
from zorder.skipping.monotone_times import (
    DATE_TRUNC_LEVELS,
    SUB_DAY,
    TRUNC_LEVELS,
    rewrite_time_trunc,
    unit_spelling,
)
from zorder.skipping.nodes import (
    AlwaysFalse,
    CompareOp,
    Comparison,
    NullComparison,
    Predicate,
    TypedLiteral,
)
from zorder.skipping.numbers import Operand
from zorder.skipping.predicates import flip
from zorder.skipping.zones import SESSION_ZONE


def _add_months(day: dt.date, months: int) -> dt.date:
    index = day.year * 12 + day.month - 1 + months
    return dt.date(index // 12, index % 12 + 1, 1)


def _floor(day: dt.date, unit: str) -> dt.date:
    if unit == "year":
        return dt.date(day.year, 1, 1)
    if unit == "quarter":
        return dt.date(day.year, (day.month - 1) // 3 * 3 + 1, 1)
    if unit == "month":
        return dt.date(day.year, day.month, 1)
    if unit == "week":
        return day - dt.timedelta(days=day.weekday())  # Monday, as Spark
    return day


def _next(start: dt.date, unit: str) -> dt.date:
    """The start of the unit after the one ``start`` starts; OverflowError past 9999."""
    if unit in ("year", "quarter", "month"):
        return _add_months(start, {"year": 12, "quarter": 3, "month": 1}[unit])
    return start + dt.timedelta(days=7 if unit == "week" else 1)


def _unit_steps(
    op: CompareOp, column: str, value: dt.date, unit: str, *, on_boundary: bool = True
) -> Predicate:
    """``f(c) op v`` for ``f`` the start of ``c``'s unit: ``v`` in day ``value``, at its
    start (``on_boundary``) or after it."""
    start = _floor(value, unit)
    try:
        after = _next(start, unit)
    except (OverflowError, ValueError):
        raise NotHandledError from None
    return steps(op, column, value if start == value and on_boundary else after, after)


def _as_date(value: TypedLiteral) -> dt.date:
    """A constant compared with a DATE: a date, or a string Spark casts to one."""
    if value.type == "date" and isinstance(value.value, dt.date):
        return value.value
    if value.type == "string" and isinstance(value.value, str):
        try:
            day = cast_literal(value.value, "string", "date")
        except InexactError:
            raise NotHandledError from None
        if isinstance(day, dt.date):
            return day
    raise NotHandledError


def _as_midnight(value: TypedLiteral) -> dt.date:
    """A constant compared with a TIMESTAMP, when it is a day's start in the session's
    zone: a DATE, a zone-less TIMESTAMP or string at 00:00:00 (what a DATE becomes)."""
    if value.type == "date" and isinstance(value.value, dt.date):
        return value.value
    moment: object = value.value
    if value.type == "string" and isinstance(moment, str):
        try:
            moment = timestamp_text(moment)
        except InexactError:
            raise NotHandledError from None
        if not isinstance(moment, dt.datetime) or moment.tzinfo is not None:
            raise NotHandledError
    elif value.type != "timestamp" or not (
        isinstance(moment, dt.datetime) and moment.tzinfo is SESSION_ZONE
    ):
        raise NotHandledError
    assert isinstance(moment, dt.datetime)
    if moment.time() != dt.time(0):
        raise NotHandledError
    return moment.date()


def _shift(day: dt.date, days: int) -> dt.date:
    try:
        return day + dt.timedelta(days=days)
    except OverflowError:
        raise NotHandledError from None


def _day_of(node: exp.Expression) -> str | None:
    """The column of ``CAST(c AS DATE)``, ``date(c)``, ``to_date(c)``."""
    node = unparen(node)
    if isinstance(node, exp.Cast) and node.to.this == exp.DataType.Type.DATE:
        return column_name(node.this)
    if isinstance(node, exp.TsOrDsToDate) and node.args.get("format") is None:
        return column_name(node.this)
    return None


def rewrite_day(
    op: CompareOp, side: exp.Expression, value: TypedLiteral, constant: Constant
) -> Predicate | None:
    column = _day_of(side)
    if column is None:
        return None
    return _unit_steps(op, column, _as_date(value), "day")


def _midnight_of(value: TypedLiteral, zone: dt.tzinfo | None) -> tuple[dt.date, bool]:
    """A constant compared with a TIMESTAMP as (the day it falls on in the session's zone,
    whether it is that day's first instant); NotHandledError where that is not sure."""
    try:
        return _as_midnight(value), True
    except NotHandledError:
        if zone is None:
            raise
    try:
        instant = to_timestamp(Operand(value.value, value.type), zone)
        if instant is None:
            raise NotHandledError
        day = local_date(instant, zone)
        first, after = start_of_day(day, zone), start_of_day(_shift(day, 1), zone)
    except (InexactError, OverflowError, ValueError):
        raise NotHandledError from None
    if not first <= instant < after:
        raise NotHandledError  # a zone whose clock went back past midnight
    return day, instant == first


def rewrite_date_trunc(
    op: CompareOp,
    side: exp.Expression,
    value: TypedLiteral,
    constant: Constant,
    zone: dt.tzinfo | None = None,
) -> Predicate | None:
    if isinstance(side, exp.TimestampTrunc):  # date_trunc(unit, c): a TIMESTAMP
        levels = DATE_TRUNC_LEVELS
    elif isinstance(side, exp.DateTrunc):  # trunc(c, fmt): a DATE
        levels = TRUNC_LEVELS
    else:
        return None
    column = column_name(side.this)
    unit_node = side.args.get("unit")
    if column is None or unit_node is None:
        return None
    if not isinstance(unit_node, exp.Var | exp.Literal) or set(side.args) - {"this", "unit"}:
        raise NotHandledError  # a unit that is not a literal; a zone argument
    written = unit_spelling(side)
    level = levels.get(written if written is not None else str(unit_node.this).upper())
    if level is None:
        if written is None:
            raise NotHandledError
        # An unknown unit: NULL in Spark on every row (and NULL <=> v is FALSE).
        return AlwaysFalse() if op == "<=>" else NullComparison(op, column)
    if level in ("hour", "minute", *SUB_DAY):
        return rewrite_time_trunc(op, column, value, level, zone, exact=written is not None)
    if isinstance(side, exp.DateTrunc):
        day, on_boundary = _as_date(value), True
    else:
        day, on_boundary = _midnight_of(value, zone)
    predicate = _unit_steps(op, column, day, level, on_boundary=on_boundary)
    return predicate if written is not None else implied(predicate, "a unit as sqlglot reads it")


def _year_value(value: TypedLiteral) -> decimal.Decimal:
    if (value.type in INTEGER_TYPES and isinstance(value.value, int)) or (
        decimal_shape(value.type) is not None and isinstance(value.value, decimal.Decimal)
    ):
        return decimal.Decimal(value.value)
    raise NotHandledError


def _ceil(number: decimal.Decimal) -> int:
    return int(number.to_integral_value(rounding=decimal.ROUND_CEILING))


def _floor_int(number: decimal.Decimal) -> int:
    return int(number.to_integral_value(rounding=decimal.ROUND_FLOOR))


def _january(year: int) -> dt.date:
    if not 1 <= year <= 9999:
        raise NotHandledError  # beyond what Python's dates (and the evaluators) hold
    return dt.date(year, 1, 1)


def _field_column(side: exp.Expression, kind: type[exp.Expression]) -> str | None:
    """The column of ``year(c)`` (or ``month``, ``quarter``): sqlglot reads
    ``year(c)`` as ``year(to_date(c))``."""
    side = unparen(side)
    if not isinstance(side, kind):
        return None
    inner = unparen(side.this)
    if isinstance(inner, exp.TsOrDsToDate) and inner.args.get("format") is None:
        inner = inner.this
    return column_name(inner)


def rewrite_year(
    op: CompareOp, side: exp.Expression, value: TypedLiteral, constant: Constant
) -> Predicate | None:
    column = _field_column(side, exp.Year)
    if column is None:
        return None
    number = _year_value(value)
    low, high = _january(_ceil(number)), _january(_floor_int(number) + 1)
    return steps(op, column, low, high)


def rewrite_date_add(
    op: CompareOp, side: exp.Expression, value: TypedLiteral, constant: Constant
) -> Predicate | None:
    """date_add(c, n) op D is CAST(c AS DATE) op D - n; c +/- INTERVAL 'n' DAY on a
    date column is c op D -/+ n (a timestamp column's is not rewritten)."""
    if isinstance(side, exp.TsOrDsAdd):
        unit = side.args.get("unit")
        column = column_name(side.this)
        if column is None or not isinstance(unit, exp.Var) or str(unit.this).upper() != "DAY":
            return None
        if set(side.args) - {"this", "expression", "unit"}:
            return None
        days = integer_arg(side.expression, constant, SMALL_INTEGERS)
        return _unit_steps(op, column, _shift(_as_date(value), -days), "day")
    if isinstance(side, exp.Add | exp.Sub):
        column = column_name(side.this)
        interval = unparen(side.expression)
        if column is None or not isinstance(interval, exp.Interval):
            return None
        days = _interval_days(interval) * (1 if isinstance(side, exp.Add) else -1)
        shifted = _shift(_as_date(value), -days)
        return Comparison(op, column, day_literal(shifted), cast="date")
    return None


def _interval_days(interval: exp.Interval) -> int:
    unit = interval.args.get("unit")
    if not isinstance(unit, exp.Var) or str(unit.this).upper() not in ("DAY", "DAYS"):
        raise NotHandledError
    amount = interval.this
    if not isinstance(amount, exp.Literal):
        raise NotHandledError
    text = str(amount.this).strip()
    if not text.lstrip("+-").isdigit():
        raise NotHandledError
    return int(text)


def _comparison_parts(term: exp.Expression) -> tuple[CompareOp, exp.Expression, exp.Expression]:
    term = unparen(term)
    op = COMPARISONS.get(type(term))
    if op is None:
        raise NotHandledError
    assert isinstance(term, exp.Binary)
    return op, term.this, term.expression


def _field_comparison(
    term: exp.Expression, kind: type[exp.Expression], constant: Constant
) -> tuple[CompareOp, str, decimal.Decimal] | None:
    """(op, column, value) of ``field(c) op v`` or ``v op field(c)``, or None."""
    try:
        op, left, right = _comparison_parts(term)
        for this, other, this_op in ((left, right, op), (right, left, flip(op))):
            column = _field_column(this, kind)
            if column is not None:
                return this_op, column, _year_value(literal_of(other, constant))
    except NotHandledError:
        return None
    return None


def year_term(term: exp.Expression, constant: Constant) -> tuple[str, int] | None:
    found = _field_comparison(term, exp.Year, constant)
    if found is None or found[0] not in ("=", "<=>"):
        return None
    _, column, value = found
    if value != value.to_integral_value() or not 1 <= value <= 9999:
        return None
    return column, int(value)


def within_year(
    term: exp.Expression, years: dict[str, int], constant: Constant
) -> Predicate | None:
    for kind, count, months in ((exp.Month, 12, 1), (exp.Quarter, 4, 3)):
        found = _field_comparison(term, kind, constant)
        if found is None or found[1] not in years:
            continue
        op, column, value = found
        year = years[column]
        if year == 9999:
            return None

        def start(
            index: int, year: int = year, count: int = count, months: int = months
        ) -> dt.date:
            index = min(max(index, 1), count + 1)  # before the year's first, after its last
            return _add_months(dt.date(year, 1, 1), (index - 1) * months)

        return steps(op, column, start(_ceil(value)), start(_floor_int(value) + 1))
    return None
