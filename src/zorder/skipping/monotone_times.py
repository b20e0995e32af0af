"""Comparisons of ``date_trunc`` below a day and of ``unix_timestamp``, read on the column.

``date_trunc('HOUR', ts)`` is a step function of the instant: Spark truncates the
wall clock of the session's zone (Java's ``ZonedDateTime.truncatedTo``: the
offset kept where the truncated time is ambiguous, moved forward by the gap where
it does not exist); ``SECOND``, ``MILLISECOND`` and ``MICROSECOND`` truncate the
instant itself. Each step starts at the value it takes, so ``date_trunc(u, ts) op
V`` is ``ts`` against the first instant whose truncation is at least ``V`` and the
first whose truncation is above it (:func:`~zorder.skipping.monotone_steps.steps`),
found exactly, to the microsecond, by bisection on the truncation itself: no
assumption on the zone's transitions beyond the truncation being monotone.

The boundaries are instants, so they are compared as ``CAST(ts AS TIMESTAMP)``
(what ``date_trunc`` reads): a timestamp column compares them as they are, a date
column only in a UTC session, a timestamp_ntz or string column not at all
(:class:`~zorder.skipping.nodes.Unknown`, every file kept).

``unix_timestamp(ts)`` (no format, or any format: a timestamp's format is
ignored) is the instant's whole seconds, floored: ``unix_timestamp(ts) op n`` is
``ts`` against ``n`` seconds past the epoch.

Spark accepts the units MICROSECOND, MILLISECOND, SECOND, MINUTE, HOUR, DAY/DD,
WEEK, MON/MONTH/MM, QUARTER, YEAR/YYYY/YY (any case) and answers NULL for any
other; sqlglot reads some others as these ('H' as HOUR, 'D' as DAY), so the unit
is read from the filter's own text (:func:`record_unit_spellings`).
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable

from sqlglot import exp
from sqlglot.tokenizer_core import Token, TokenType

from zorder.skipping.coercion import INTEGER_TYPES, InexactError, decimal_shape
from zorder.skipping.datetimes import to_timestamp, truncate_instant
from zorder.skipping.monotone_steps import (
    Constant,
    NotHandledError,
    column_name,
    implied,
    steps,
)
from zorder.skipping.nodes import CompareOp, Predicate, TypedLiteral
from zorder.skipping.numbers import Operand

__all__ = [
    "DATE_TRUNC_LEVELS",
    "TRUNC_LEVELS",
    "record_unit_spellings",
    "rewrite_time_trunc",
    "rewrite_unix_timestamp",
    "unit_spelling",
]

DATE_TRUNC_LEVELS = {
    "MICROSECOND": "microsecond",
    "MILLISECOND": "millisecond",
    "SECOND": "second",
    "MINUTE": "minute",
    "HOUR": "hour",
    **dict.fromkeys(["DAY", "DD"], "day"),
    "WEEK": "week",
    **dict.fromkeys(["MON", "MONTH", "MM"], "month"),
    "QUARTER": "quarter",
    **dict.fromkeys(["YEAR", "YYYY", "YY"], "year"),
}
"""Spark's units of ``date_trunc`` (``DateTimeUtils.parseTruncLevel``), by spelling."""

TRUNC_LEVELS = {
    k: v for k, v in DATE_TRUNC_LEVELS.items() if v in ("week", "month", "quarter", "year")
}
"""Those ``trunc(date, fmt)`` accepts (a level below a week is NULL there)."""

SUB_DAY = {"microsecond": 1, "millisecond": 1000, "second": 1_000_000}
_UNIT_MICROS = {**SUB_DAY, "minute": 60_000_000, "hour": 3_600_000_000}
_SPELLING = "zorder.unit_spelling"
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_CALLS = {"date_trunc": "first", "trunc": "last"}


def record_unit_spellings(tree: exp.Expression, tokens: list[Token]) -> None:
    """Mark each ``date_trunc('unit', c)`` and ``trunc(c, 'fmt')`` of ``tree`` with the unit as
    written in ``tokens`` (sqlglot's tree holds its own reading of it)."""
    written: dict[int, str] = {}
    for index, token in enumerate(tokens):
        where = _CALLS.get(token.text.lower())
        if where is None or index + 1 >= len(tokens):
            continue
        if tokens[index + 1].token_type != TokenType.L_PAREN:
            continue
        spelling = _argument_text(tokens, index + 2, first=where == "first")
        if spelling is not None:
            written[token.start] = spelling
    for node in tree.find_all(exp.TimestampTrunc, exp.DateTrunc):
        start = node.meta.get("start")
        if start in written:
            node.meta[_SPELLING] = written[start]


def _argument_text(tokens: list[Token], at: int, *, first: bool) -> str | None:
    """The string literal that is the call's first (or last) argument, as written."""
    if first:
        if at + 1 < len(tokens) and tokens[at].token_type == TokenType.STRING:
            return tokens[at].text if tokens[at + 1].token_type == TokenType.COMMA else None
        return None
    depth = 0
    while at < len(tokens):
        kind = tokens[at].token_type
        if kind == TokenType.L_PAREN:
            depth += 1
        elif kind == TokenType.R_PAREN:
            if depth == 0:
                return None
            depth -= 1
        elif kind == TokenType.COMMA and depth == 0:
            last = at + 1
            if (
                last + 1 < len(tokens)
                and tokens[last].token_type == TokenType.STRING
                and tokens[last + 1].token_type == TokenType.R_PAREN
            ):
                return tokens[last].text
        at += 1
    return None


def unit_spelling(node: exp.Expression) -> str | None:
    """The unit of ``date_trunc``/``trunc`` as written, upper case; None where the text
    did not say (a tree built without :func:`record_unit_spellings`, a unit that is
    not a string literal)."""
    spelling = node.meta.get(_SPELLING)
    return spelling.upper() if isinstance(spelling, str) else None


def _micros(instant: dt.datetime) -> int:
    return (instant - _EPOCH) // dt.timedelta(microseconds=1)


def _instant(micros: int) -> dt.datetime:
    try:
        return _EPOCH + dt.timedelta(microseconds=micros)
    except OverflowError:
        raise NotHandledError from None


def _first_at_least(
    f: Callable[[int], int], bound: int, start: int, span: int, *, strict: bool
) -> int:
    """The least ``t`` >= ``start`` with ``f(t) >= bound`` (``> bound`` if strict), ``f``
    monotone and at most ``t``; found within ``span`` or NotHandledError."""

    def holds(t: int) -> bool:
        value = f(t)
        return value > bound if strict else value >= bound

    low, high = start, start + span
    if not holds(high):
        raise NotHandledError
    if holds(low):
        return low
    while high - low > 1:  # holds(high), not holds(low)
        middle = (low + high) // 2
        if holds(middle):
            high = middle
        else:
            low = middle
    return high


def _truncated(level: str, zone: dt.tzinfo) -> Callable[[int], int]:
    def f(t: int) -> int:
        try:
            return _micros(truncate_instant(_instant(t), level, zone))
        except (InexactError, OverflowError, ValueError):
            raise NotHandledError from None

    return f


def _as_instant(value: TypedLiteral, zone: dt.tzinfo) -> int:
    """The TIMESTAMP Spark compares ``date_trunc``'s result with (a date, a string or a
    timestamp_ntz literal cast to one in the session's zone), in microseconds."""
    if value.type not in ("timestamp", "timestamp_ntz", "date", "string"):
        raise NotHandledError
    try:
        instant = to_timestamp(Operand(value.value, value.type), zone)
    except InexactError:
        raise NotHandledError from None
    if instant is None:
        raise NotHandledError
    return _micros(instant)


def _instant_literal(micros: int) -> TypedLiteral:
    return TypedLiteral(_instant(micros), "timestamp")


def rewrite_time_trunc(
    op: CompareOp,
    column: str,
    value: TypedLiteral,
    level: str,
    zone: dt.tzinfo | None,
    *,
    exact: bool,
) -> Predicate:
    """``date_trunc(level, column) op value`` for a level below a day, as instants of the
    column cast to a timestamp; ``exact`` False where the unit's spelling is not known
    (Spark may answer NULL): then only implied."""
    if zone is None:
        raise NotHandledError  # the wall clock of an unknown zone
    target = _as_instant(value, zone)
    f = _truncated(level, zone)
    span = 3 * _UNIT_MICROS[level]  # a step is at most a unit plus a transition's shift
    low = _first_at_least(f, target, target, span, strict=False)
    high = _first_at_least(f, target, target, span, strict=True)
    predicate = steps(op, column, low, high, literal=_instant_literal, cast="timestamp")
    return predicate if exact else implied(predicate, "a date_trunc unit as sqlglot reads it")


def _seconds(value: TypedLiteral) -> decimal.Decimal:
    if (value.type in INTEGER_TYPES and isinstance(value.value, int)) or (
        decimal_shape(value.type) is not None and isinstance(value.value, decimal.Decimal)
    ):
        return decimal.Decimal(value.value)
    raise NotHandledError


def _whole(number: decimal.Decimal, rounding: str) -> int:
    return int(number.to_integral_value(rounding=rounding))


def rewrite_unix_timestamp(
    op: CompareOp, side: exp.Expression, value: TypedLiteral, constant: Constant
) -> Predicate | None:
    """``unix_timestamp(c) op n``: the whole seconds of ``CAST(c AS TIMESTAMP)``, floored,
    so the steps start at ``ceil(n)`` and ``floor(n) + 1`` seconds past the epoch."""
    if not isinstance(side, exp.StrToUnix):
        return None
    column = column_name(side.this)
    if column is None or set(side.args) - {"this", "format"}:
        return None
    if side.args.get("format") is not None and not isinstance(side.args["format"], exp.Literal):
        raise NotHandledError
    number = _seconds(value)
    low = _whole(number, decimal.ROUND_CEILING) * 1_000_000
    high = (_whole(number, decimal.ROUND_FLOOR) + 1) * 1_000_000
    _instant(low)
    _instant(high)
    # A timestamp or a date column (the format is for strings, which are not rewritten:
    # the cast to a timestamp is not their parse).
    return steps(op, column, low, high, literal=_instant_literal, cast="timestamp")
