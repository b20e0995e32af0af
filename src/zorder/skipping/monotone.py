"""Comparisons of an order-preserving function of one column, read on the column itself.

``year(d) = 2024`` is ``d >= DATE'2024-01-01' AND d < DATE'2025-01-01'``:
statistics of ``d`` decide the second, while the first, a function of the
column, would keep every file. This module rewrites such comparisons at parse
time (the column's type is not known yet) into the nodes of
:mod:`zorder.skipping.nodes`; binding then applies Spark's coercion to the
literals as for any comparison.

Every rewrite is either **equivalent** (the same TRUE, FALSE or NULL on every
row, so it may stand under NOT and the row evaluator may use it) or
**implied** (TRUE wherever the original is TRUE, and nothing more is
claimed). An implied rewrite is returned as ``And(rewrite, Unknown(...))``:
file skipping reads the rewrite, a NOT above it turns the whole into
:class:`Unknown`, and the row evaluator refuses it. A caller may therefore use
whatever :func:`monotone_comparison` returns wherever the comparison stood.

What each form means was measured on Spark 4.1 (ANSI on):

- ``CAST(c AS DATE)``, ``date(c)``, ``to_date(c)`` (no format): the day of
  ``c``, in the session's zone for a timestamp, on the wall clock for a
  timestamp_ntz. A DATE literal against a timestamp column is that day's first
  instant in the session's zone (``atStartOfDay``: 01:00 on a day whose
  midnight a DST change skips, as in America/Sao_Paulo), the very instant
  that starts the day ``CAST(ts AS DATE)`` returns: so every day, month,
  quarter and year boundary here is a DATE literal, right for date,
  timestamp and timestamp_ntz columns alike (and Unknown against a string
  column, which Spark would cast: sound).
- ``date_trunc(unit, c)`` returns a TIMESTAMP for every input (a date or a
  timestamp_ntz is read in the session's zone first); units YEAR/YYYY/YY,
  QUARTER, MONTH/MM/MON, WEEK (Monday), DAY/DD are day boundaries (the
  others, HOUR and below, are not rewritten); an unknown unit gives NULL.
  ``trunc(c, fmt)`` returns a DATE; it knows YEAR/YYYY/YY, QUARTER,
  MONTH/MM/MON, WEEK, and gives NULL for any other fmt (``'DD'`` included).
- ``year(c)``; ``month(c)`` and ``quarter(c)`` only inside an AND chain that
  also holds ``year(c) = Y`` (alone they are not monotone).
- ``date_add(c, n)``/``date_sub(c, n)``: the day of ``c`` moved by ``n``
  (a timestamp is cast to its day first). ``c + INTERVAL 'n' DAY``: a date
  for a date column, but a timestamp moved on the session's clock for a
  timestamp column: only the date column is rewritten (the rewrite binds to
  :class:`Unknown` on any other type, through a ``CAST(c AS DATE)`` that only a
  date column passes).
- ``c + k``, ``c - k``, ``k + c``, ``k - c`` with numbers written exactly:
  Spark's sum is exact on an integer column or a decimal of scale at most 6
  and at most 31 integral digits (``decimal(38,10) + 1`` is a
  ``decimal(38,9)``, rounded: left alone, through a ``CAST(c AS
  DECIMAL(37,6))`` that only the exact cases pass), but it raises on overflow
  where the rewrite answers: implied.
- ``substring(c, 1, k)``, ``substr``, ``left(c, k)`` (position 0 is position
  1): the first ``k`` characters (code points). Strings order by code point
  (UTF-8 bytes); a byte prefix of a UTF-8 string ends on a character boundary,
  so the :class:`StartsWith` node's bytes agree with Spark's characters.

A date column read through ``date_trunc`` (or a timestamp_ntz) goes through
the session's zone in Spark; in a zone that skipped a whole calendar day
(Pacific/Apia's 2011-12-30) the day that does not exist there reads as the
next one in Spark and as itself here. That is the one known difference.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable, Sequence

from sqlglot import exp

from zorder.skipping.coercion import (
    INTEGER_TYPES,
    InexactError,
    cast_literal,
    decimal_shape,
    literal_type,
    timestamp_text,
)
from zorder.skipping.nodes import (
    And,
    CompareOp,
    Comparison,
    IsNull,
    Not,
    Or,
    Predicate,
    StartsWith,
    TypedLiteral,
    Unknown,
)
from zorder.skipping.predicates import flip
from zorder.skipping.zones import SESSION_ZONE

__all__ = ["COMPARISONS", "Constant", "monotone_comparison", "monotone_conjuncts"]

Constant = Callable[[exp.Expression], TypedLiteral | None]
"""The literal a constant subexpression stands for (None for NULL); raises
:class:`~zorder.skipping.constants.NotConstantError` for anything else."""

COMPARISONS: dict[type[exp.Expression], CompareOp] = {
    exp.EQ: "=",
    exp.NullSafeEQ: "<=>",
    exp.NEQ: "!=",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
}
_DECIMAL_GUARD = "decimal(37,6)"
# What Spark's date_add and substring take as a count without a cast that may fail.
_SMALL_INTEGERS = frozenset({"tinyint", "smallint", "int"})
_EXACT = decimal.Context(prec=200, Emax=10_000, Emin=-10_000)


def monotone_comparison(
    op: CompareOp, side: exp.Expression, value: TypedLiteral, constant: Constant
) -> Predicate | None:
    """``side op value`` as a predicate on the one column ``side`` reads, or None.

    ``side`` is the non-constant side as sqlglot parsed it (the caller flips
    ``op`` when the constant is on the left); ``value`` is the other side's
    constant (a NULL is the caller's: ``f(c) <=> NULL`` is not always
    ``c IS NULL``); ``constant`` evaluates the function's own constant
    arguments. None when ``side`` is not a form this module knows, or its
    arguments or ``value`` are not ones it rewrites exactly.
    """
    side = _unparen(side)
    try:
        for rewrite in _REWRITES:
            predicate = rewrite(op, side, value, constant)
            if predicate is not None:
                return predicate
    except _NotHandledError:
        return None
    return None


def monotone_conjuncts(
    terms: Sequence[exp.Expression], constant: Constant
) -> tuple[list[Predicate], list[exp.Expression]]:
    """The terms of one AND chain that read ``month(c)`` or ``quarter(c)`` under a
    ``year(c) = Y`` (or ``<=>``) of the same chain, as predicates on ``c``; and the
    other terms, untouched, in their order.

    Each returned predicate agrees with its term wherever the year term is not
    FALSE, so the chain (which keeps the year term among the others) is
    equivalent, NULLs and NOT included.
    """
    years: dict[str, int] = {}
    for term in terms:
        found = _year_term(term, constant)
        if found is not None:
            years.setdefault(*found)
    recognised: list[Predicate] = []
    remaining: list[exp.Expression] = []
    for term in terms:
        predicate = _within_year(term, years, constant) if years else None
        if predicate is None:
            remaining.append(term)
        else:
            recognised.append(predicate)
    return recognised, remaining


class _NotHandledError(Exception):
    """The form is recognised but not rewritten (a constant that is not one, a bad unit)."""


def _unparen(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _column(node: exp.Expression) -> str | None:
    node = _unparen(node)
    if isinstance(node, exp.Column) and not node.table:
        return str(node.name)
    return None


def _constant(node: exp.Expression, constant: Constant) -> TypedLiteral:
    """A non-NULL constant, or :class:`_NotHandledError`."""
    try:
        value = constant(node)
    except Exception as error:  # NotConstantError: a column or what is not folded
        raise _NotHandledError from error
    if value is None:
        raise _NotHandledError
    return value


def _integer(node: exp.Expression, constant: Constant, types: frozenset[str]) -> int:
    # sqlglot spells date_sub(c, n) as date_add(c, n * -1)
    node = _unparen(node)
    if isinstance(node, exp.Mul) and _is_minus_one(node.expression):
        return -_integer(node.this, constant, types)
    value = _constant(node, constant)
    if value.type not in types or not isinstance(value.value, int):
        raise _NotHandledError
    return value.value


def _is_minus_one(node: exp.Expression) -> bool:
    node = _unparen(node)
    return (
        isinstance(node, exp.Neg)
        and isinstance(node.this, exp.Literal)
        and not node.this.is_string
        and str(node.this.this) == "1"
    )


# --------------------------------------------------------------------------------------
# Predicates on the raw column


def _date(value: dt.date) -> TypedLiteral:
    return TypedLiteral(value, "date")


def _steps(op: CompareOp, column: str, low: dt.date, high: dt.date) -> Predicate:
    """``f(c) op v`` for a step function ``f``: ``low`` starts the first step whose value
    is at least ``v``, ``high`` the first step whose value is above ``v`` (the two are
    equal when no step has the value ``v``). Equivalent, NULLs included."""

    def at(comparison: CompareOp, day: dt.date) -> Comparison:
        return Comparison(comparison, column, _date(day))

    inside = And(at(">=", low), at("<", high))
    match op:
        case ">=":
            return at(">=", low)
        case "<":
            return at("<", low)
        case ">":
            return at(">=", high)
        case "<=":
            return at("<", high)
        case "=":
            return inside
        case "!=":
            return Or(at("<", low), at(">=", high))
    return And(IsNull(column, negated=True), inside)  # <=>: FALSE, not NULL, for NULL


def _implied(predicate: Predicate, reason: str) -> Predicate:
    return And(predicate, Unknown(reason))


# --------------------------------------------------------------------------------------
# Calendar units on dates


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


def _unit_steps(op: CompareOp, column: str, value: dt.date, unit: str) -> Predicate:
    start = _floor(value, unit)
    try:
        after = _next(start, unit)
    except (OverflowError, ValueError):
        raise _NotHandledError from None
    return _steps(op, column, value if start == value else after, after)


_DATE_TRUNC_UNITS = {
    **dict.fromkeys(["YEAR", "YYYY", "YY"], "year"),
    "QUARTER": "quarter",
    **dict.fromkeys(["MONTH", "MM", "MON"], "month"),
    "WEEK": "week",
    **dict.fromkeys(["DAY", "DD"], "day"),
}
_TRUNC_UNITS = {k: v for k, v in _DATE_TRUNC_UNITS.items() if v != "day"}


def _as_date(value: TypedLiteral) -> dt.date:
    """A constant compared with a DATE: a date, or a string Spark casts to one."""
    if value.type == "date" and isinstance(value.value, dt.date):
        return value.value
    if value.type == "string" and isinstance(value.value, str):
        try:
            day = cast_literal(value.value, "string", "date")
        except InexactError:
            raise _NotHandledError from None
        if isinstance(day, dt.date):
            return day
    raise _NotHandledError


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
            raise _NotHandledError from None
        if not isinstance(moment, dt.datetime) or moment.tzinfo is not None:
            raise _NotHandledError
    elif value.type != "timestamp" or not (
        isinstance(moment, dt.datetime) and moment.tzinfo is SESSION_ZONE
    ):
        raise _NotHandledError
    assert isinstance(moment, dt.datetime)
    if moment.time() != dt.time(0):
        raise _NotHandledError
    return moment.date()


def _shift(day: dt.date, days: int) -> dt.date:
    try:
        return day + dt.timedelta(days=days)
    except OverflowError:
        raise _NotHandledError from None


def _day_of(node: exp.Expression) -> str | None:
    """The column of ``CAST(c AS DATE)``, ``date(c)``, ``to_date(c)``."""
    node = _unparen(node)
    if isinstance(node, exp.Cast) and node.to.this == exp.DataType.Type.DATE:
        return _column(node.this)
    if isinstance(node, exp.TsOrDsToDate) and node.args.get("format") is None:
        return _column(node.this)
    return None


def _rewrite_day(
    op: CompareOp, side: exp.Expression, value: TypedLiteral, constant: Constant
) -> Predicate | None:
    column = _day_of(side)
    if column is None:
        return None
    return _unit_steps(op, column, _as_date(value), "day")


def _rewrite_date_trunc(
    op: CompareOp, side: exp.Expression, value: TypedLiteral, constant: Constant
) -> Predicate | None:
    if isinstance(side, exp.TimestampTrunc):  # date_trunc(unit, c): a TIMESTAMP
        units, day = _DATE_TRUNC_UNITS, _as_midnight
    elif isinstance(side, exp.DateTrunc):  # trunc(c, fmt): a DATE
        units, day = _TRUNC_UNITS, _as_date
    else:
        return None
    column = _column(side.this)
    unit_node = side.args.get("unit")
    if column is None or unit_node is None:
        return None
    if not isinstance(unit_node, exp.Var | exp.Literal):
        raise _NotHandledError
    unit_text = str(unit_node.this)
    unit = units.get(unit_text.upper())
    if unit is None or set(side.args) - {"this", "unit"}:
        raise _NotHandledError  # an unknown unit is NULL in Spark; a zone argument, other
    return _unit_steps(op, column, day(value), unit)


def _year_value(value: TypedLiteral) -> decimal.Decimal:
    if (value.type in INTEGER_TYPES and isinstance(value.value, int)) or (
        decimal_shape(value.type) is not None and isinstance(value.value, decimal.Decimal)
    ):
        return decimal.Decimal(value.value)
    raise _NotHandledError


def _ceil(number: decimal.Decimal) -> int:
    return int(number.to_integral_value(rounding=decimal.ROUND_CEILING))


def _floor_int(number: decimal.Decimal) -> int:
    return int(number.to_integral_value(rounding=decimal.ROUND_FLOOR))


def _january(year: int) -> dt.date:
    if not 1 <= year <= 9999:
        raise _NotHandledError  # beyond what Python's dates (and the evaluators) hold
    return dt.date(year, 1, 1)


def _field_column(side: exp.Expression, kind: type[exp.Expression]) -> str | None:
    """The column of ``year(c)`` (or ``month``, ``quarter``): sqlglot reads
    ``year(c)`` as ``year(to_date(c))``."""
    side = _unparen(side)
    if not isinstance(side, kind):
        return None
    inner = _unparen(side.this)
    if isinstance(inner, exp.TsOrDsToDate) and inner.args.get("format") is None:
        inner = inner.this
    return _column(inner)


def _rewrite_year(
    op: CompareOp, side: exp.Expression, value: TypedLiteral, constant: Constant
) -> Predicate | None:
    column = _field_column(side, exp.Year)
    if column is None:
        return None
    number = _year_value(value)
    low, high = _january(_ceil(number)), _january(_floor_int(number) + 1)
    return _steps(op, column, low, high)


def _rewrite_date_add(
    op: CompareOp, side: exp.Expression, value: TypedLiteral, constant: Constant
) -> Predicate | None:
    """date_add(c, n) op D is CAST(c AS DATE) op D - n; c +/- INTERVAL 'n' DAY on a
    date column is c op D -/+ n (a timestamp column's is not rewritten)."""
    if isinstance(side, exp.TsOrDsAdd):
        unit = side.args.get("unit")
        column = _column(side.this)
        if column is None or not isinstance(unit, exp.Var) or str(unit.this).upper() != "DAY":
            return None
        if set(side.args) - {"this", "expression", "unit"}:
            return None
        days = _integer(side.expression, constant, _SMALL_INTEGERS)
        return _unit_steps(op, column, _shift(_as_date(value), -days), "day")
    if isinstance(side, exp.Add | exp.Sub):
        column = _column(side.this)
        interval = _unparen(side.expression)
        if column is None or not isinstance(interval, exp.Interval):
            return None
        days = _interval_days(interval) * (1 if isinstance(side, exp.Add) else -1)
        shifted = _shift(_as_date(value), -days)
        return Comparison(op, column, _date(shifted), cast="date")
    return None


def _interval_days(interval: exp.Interval) -> int:
    unit = interval.args.get("unit")
    if not isinstance(unit, exp.Var) or str(unit.this).upper() not in ("DAY", "DAYS"):
        raise _NotHandledError
    amount = interval.this
    if not isinstance(amount, exp.Literal):
        raise _NotHandledError
    text = str(amount.this).strip()
    if not text.lstrip("+-").isdigit():
        raise _NotHandledError
    return int(text)


def _exact_number(value: TypedLiteral) -> decimal.Decimal:
    """An integer or a decimal of scale at most 6 and at most 30 integral digits (Spark
    then adds and compares without rounding, :data:`_DECIMAL_GUARD` columns)."""
    if value.type in INTEGER_TYPES and isinstance(value.value, int):
        number = decimal.Decimal(value.value)
    elif decimal_shape(value.type) is not None and isinstance(value.value, decimal.Decimal):
        number = value.value
    else:
        raise _NotHandledError  # doubles round: left Unknown
    shape = decimal_shape(value.type)
    if (shape is not None and shape[1] > 6) or abs(number) >= decimal.Decimal(10) ** 30:
        raise _NotHandledError
    return number


def _rewrite_arithmetic(
    op: CompareOp, side: exp.Expression, value: TypedLiteral, constant: Constant
) -> Predicate | None:
    if not isinstance(side, exp.Add | exp.Sub):
        return None
    left, right = _column(side.this), _column(side.expression)
    if (left is None) == (right is None):
        return None
    if isinstance(_unparen(side.expression if left else side.this), exp.Interval):
        return None
    k = _exact_number(_constant(side.expression if left else side.this, constant))
    v = _exact_number(value)
    if isinstance(side, exp.Add):  # c + k, k + c
        bound, column = _EXACT.subtract(v, k), left or right
    elif left is not None:  # c - k
        bound, column = _EXACT.add(v, k), left
    else:  # k - c op v is c flip(op) k - v
        bound, column, op = _EXACT.subtract(k, v), right, flip(op)
    assert column is not None
    number: int | decimal.Decimal = int(bound) if bound == bound.to_integral_value() else bound
    literal = TypedLiteral(number, literal_type(number))
    comparison = Comparison(op, column, literal, cast=_DECIMAL_GUARD)
    return _implied(comparison, "arithmetic that Spark may refuse as an overflow")


# --------------------------------------------------------------------------------------
# Prefixes of strings


def _prefix_length(side: exp.Expression, constant: Constant) -> tuple[str, int] | None:
    if isinstance(side, exp.Substring):
        column = _column(side.this)
        start, length = side.args.get("start"), side.args.get("length")
        if column is None or start is None or length is None:
            return None
        if _integer(start, constant, _SMALL_INTEGERS) not in (0, 1):
            raise _NotHandledError
        return column, _integer(length, constant, _SMALL_INTEGERS)
    if isinstance(side, exp.Left):
        column = _column(side.this)
        if column is None:
            return None
        return column, _integer(side.expression, constant, _SMALL_INTEGERS)
    return None


def _rewrite_prefix(
    op: CompareOp, side: exp.Expression, value: TypedLiteral, constant: Constant
) -> Predicate | None:
    found = _prefix_length(side, constant)
    if found is None:
        return None
    column, k = found
    if k < 1 or value.type != "string" or not isinstance(value.value, str):
        raise _NotHandledError
    return _prefix_steps(op, column, value.value, k)


def _prefix_steps(op: CompareOp, column: str, text: str, k: int) -> Predicate:
    """``left(c, k) op text``, for a string column (a CAST(c AS STRING) in each comparison
    keeps any other type Unknown, as StartsWith is)."""

    def cmp(comparison: CompareOp, literal: str) -> Comparison:
        return Comparison(comparison, column, TypedLiteral(literal, "string"), cast="string")

    if len(text) < k:  # a shorter string is a prefix of c only when it is c: ordered alike
        return cmp(op, text)
    cut = text[:k]
    # left(c, k) <= cut: c <= cut or c starts with cut (else c differs first past cut)
    at_most = Or(cmp("<=", cut), StartsWith(column, cut))
    if len(text) == k:
        equal: Predicate = StartsWith(column, text)
        ordered: dict[str, Predicate] = {"<": cmp("<", text), ">=": cmp(">=", text), "<=": at_most}
    else:  # no k-character prefix is text: left(c, k) < text exactly when <= cut
        equal = And(cmp("=", text), cmp("!=", text))  # FALSE, or NULL for a NULL c
        ordered = {"<": at_most, "<=": at_most, ">=": Not(at_most)}
    if op in ordered:
        return ordered[op]
    match op:
        case ">":
            return Not(at_most)
        case "=":
            return equal
        case "!=":
            return Not(equal)
    return And(IsNull(column, negated=True), equal)  # <=>


# --------------------------------------------------------------------------------------
# month and quarter under a year


def _comparison_parts(term: exp.Expression) -> tuple[CompareOp, exp.Expression, exp.Expression]:
    term = _unparen(term)
    op = COMPARISONS.get(type(term))
    if op is None:
        raise _NotHandledError
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
                return this_op, column, _year_value(_constant(other, constant))
    except _NotHandledError:
        return None
    return None


def _year_term(term: exp.Expression, constant: Constant) -> tuple[str, int] | None:
    found = _field_comparison(term, exp.Year, constant)
    if found is None or found[0] not in ("=", "<=>"):
        return None
    _, column, value = found
    if value != value.to_integral_value() or not 1 <= value <= 9999:
        return None
    return column, int(value)


def _within_year(
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

        return _steps(op, column, start(_ceil(value)), start(_floor_int(value) + 1))
    return None


_REWRITES: list[Callable[[CompareOp, exp.Expression, TypedLiteral, Constant], Predicate | None]] = [
    _rewrite_day,
    _rewrite_date_trunc,
    _rewrite_year,
    _rewrite_date_add,
    _rewrite_arithmetic,
    _rewrite_prefix,
]
