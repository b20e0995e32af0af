"""A part of a date or timestamp (``hour(ts)``, ``dayofweek(ts)``...) bounded on one file.

``hour(ts) = 10`` is not a function of ``ts`` that keeps its order, so it cannot
be rewritten as a range of ``ts`` (:mod:`zorder.skipping.monotone`). But over a
file whose ``ts`` lies within one day of the session's wall clock, ``hour`` is
monotone: its values lie between the hours of the file's minimum and maximum,
and the file can be skipped when 10 is not among them. :class:`PartComparison`
nodes carry such comparisons; :func:`part_range` is the bound, per file.

The part is read as Spark reads it (measured on Spark 4.1): on the wall clock
of the session's zone for a timestamp, of the value itself for a
timestamp_ntz; Sunday is 1 for ``dayofweek``, Monday 0 for ``weekday``;
``second`` is the whole seconds (``extract(SECOND ...)`` has a fraction and is
not read here). A file's range is decided only where it is sure:

- ``hour``, ``minute``, ``second``: the file spans less than a day and its zone
  offset is the same at both ends and at every quarter hour between them (tz
  database transitions are hours apart), so the wall clock runs without a jump;
  and the enclosing unit (the day for ``hour``, the hour for ``minute``, the
  minute for ``second``) is the same at both ends;
- the parts of the date (``day``, ``dayofweek``, ``weekday``, ``dayofyear``,
  ``month``, ``quarter``): the local dates at both ends, each moved out by a day
  (a clock set back across midnight, as Chile's at 24:00, makes the date go back),
  lie in one enclosing unit (the month for ``day``, the week for ``dayofweek`` and
  ``weekday``, the year for the others); for a span under a day with one offset, the
  dates themselves.

Anywhere else the file is kept. With no zone (an unknown one) a timestamp's
parts decide nothing.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

from sqlglot import exp

from zorder.skipping.coercion import INTEGER_TYPES, decimal_shape
from zorder.skipping.monotone_steps import column_name, unparen
from zorder.skipping.nodes import CompareOp, PartComparison, TypedLiteral

__all__ = ["TIME_PARTS", "part_comparison", "part_holds", "part_range", "part_value"]

TIME_PARTS = frozenset({"hour", "minute", "second"})
_DATE_PARTS = frozenset({"day", "dayofweek", "weekday", "dayofyear", "month", "quarter"})
_NODES: dict[type[exp.Expression], str] = {
    exp.Hour: "hour",
    exp.Minute: "minute",
    exp.Second: "second",
    exp.Day: "day",
    exp.DayOfMonth: "day",
    exp.DayOfWeek: "dayofweek",
    exp.DayOfYear: "dayofyear",
    exp.Month: "month",
    exp.Quarter: "quarter",
}
# Spark's fields of extract(field FROM c) and date_part('field', c) that are these parts
# (DatePart.parseExtractField); SECOND there has a fraction, and is left out.
_FIELDS = {
    **dict.fromkeys(["QUARTER", "QTR"], "quarter"),
    **dict.fromkeys(["MONTH", "MON", "MONS", "MONTHS"], "month"),
    **dict.fromkeys(["DAY", "D", "DAYS"], "day"),
    **dict.fromkeys(["DAYOFWEEK", "DOW"], "dayofweek"),
    "DOY": "dayofyear",
    **dict.fromkeys(["HOUR", "H", "HOURS", "HR", "HRS"], "hour"),
    **dict.fromkeys(["MINUTE", "M", "MIN", "MINS", "MINUTES"], "minute"),
}
_ENCLOSING = {"hour": 1, "minute": 2, "second": 3}  # fields of (date, hour, minute) shared
_MICROS_PER_DAY = 86_400_000_000
_QUARTER_HOUR = 900_000_000
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_EPOCH_DAY = dt.date(1970, 1, 1)


def _part_of(side: exp.Expression) -> tuple[str, exp.Expression] | None:
    side = unparen(side)
    part = _NODES.get(type(side))
    if part is not None:
        inner = unparen(side.this)
        if isinstance(inner, exp.TsOrDsToDate) and not set(inner.args) - {"this", "safe"}:
            inner = inner.this  # sqlglot reads day(c) as day(to_date(c))
        return part, inner
    if isinstance(side, exp.Extract) and isinstance(side.this, exp.Var):
        field = _FIELDS.get(str(side.this.this).upper())
        return None if field is None else (field, side.expression)
    if not isinstance(side, exp.Anonymous):
        return None
    name, arguments = str(side.this).lower(), side.expressions
    if name == "weekday" and len(arguments) == 1:
        return "weekday", arguments[0]
    if name in ("date_part", "datepart") and len(arguments) == 2:
        field, source = arguments
        if isinstance(field, exp.Literal) and field.is_string:
            part = _FIELDS.get(str(field.this).strip().upper())
            return None if part is None else (part, source)
    return None


def part_comparison(
    op: CompareOp, side: exp.Expression, value: TypedLiteral
) -> PartComparison | None:
    """``part(c) op value`` as a node, for a part this module bounds and a number; else None."""
    found = _part_of(side)
    if found is None:
        return None
    part, source = found
    column = column_name(source)
    if column is None:
        return None
    return PartComparison(part, op, column, value)


def part_value(literal: Any) -> int | decimal.Decimal | None:
    """The number a part (an int) is compared with exactly: an integer or a decimal; None
    for others (a double, a string: Spark's coercion, not followed here)."""
    if isinstance(literal, TypedLiteral):
        if literal.type in INTEGER_TYPES and isinstance(literal.value, int):
            return literal.value
        if decimal_shape(literal.type) is not None and isinstance(literal.value, decimal.Decimal):
            return literal.value
    return None


def _of_date(day: dt.date, part: str) -> int:
    if part == "day":
        return day.day
    if part == "dayofweek":
        return (day.weekday() + 1) % 7 + 1  # Sunday 1 ... Saturday 7
    if part == "weekday":
        return day.weekday()  # Monday 0 ... Sunday 6
    if part == "dayofyear":
        return day.timetuple().tm_yday
    if part == "month":
        return day.month
    return (day.month - 1) // 3 + 1


def _same_unit(first: dt.date, last: dt.date, part: str) -> bool:
    if part == "day":
        return (first.year, first.month) == (last.year, last.month)
    if part == "dayofweek":  # weeks from Sunday
        return first - dt.timedelta(days=(first.weekday() + 1) % 7) == last - dt.timedelta(
            days=(last.weekday() + 1) % 7
        )
    if part == "weekday":
        return first - dt.timedelta(days=first.weekday()) == last - dt.timedelta(
            days=last.weekday()
        )
    return first.year == last.year


def _steady(low: int, high: int, zone: dt.tzinfo) -> tuple[dt.datetime, dt.datetime] | None:
    """The wall clocks of ``low`` and ``high`` (microseconds) where one offset holds at
    both and every quarter hour between them (and they are under a day apart)."""
    if high - low >= _MICROS_PER_DAY:
        return None
    try:
        first = (_EPOCH + dt.timedelta(microseconds=low)).astimezone(zone)
        last = (_EPOCH + dt.timedelta(microseconds=high)).astimezone(zone)
    except (OverflowError, ValueError):
        return None
    offset = first.utcoffset()
    if last.utcoffset() != offset:
        return None
    at = low - low % _QUARTER_HOUR + _QUARTER_HOUR
    while at < high:
        if (_EPOCH + dt.timedelta(microseconds=at)).astimezone(zone).utcoffset() != offset:
            return None
        at += _QUARTER_HOUR
    return first.replace(tzinfo=None), last.replace(tzinfo=None)


def _walls(
    low: int, high: int, kind: str, zone: dt.tzinfo | None
) -> tuple[dt.datetime, dt.datetime] | None:
    if kind == "timestamp_ntz":
        try:
            naive = dt.datetime(1970, 1, 1)
            return naive + dt.timedelta(microseconds=low), naive + dt.timedelta(microseconds=high)
        except OverflowError:
            return None
    if zone is None:
        return None
    return _steady(low, high, zone)


def part_range(
    part: str, low: int, high: int, kind: str, zone: dt.tzinfo | None
) -> tuple[int, int] | None:
    """The least and greatest ``part`` of any value in [``low``, ``high``] (microseconds
    of a ``kind`` column: timestamp, timestamp_ntz or date), or None where not sure."""
    if low > high:
        return None
    if kind == "date":
        first = _EPOCH_DAY + dt.timedelta(days=low // _MICROS_PER_DAY)
        last = _EPOCH_DAY + dt.timedelta(days=high // _MICROS_PER_DAY)
        return _date_range(part, first, last)
    walls = _walls(low, high, kind, zone)
    if part in TIME_PARTS:
        if walls is None or (walls[1] - walls[0]) >= dt.timedelta(days=1):
            return None
        first, last = walls
        shared = _ENCLOSING[part]
        keys = [(w.date(), w.hour, w.minute)[:shared] for w in walls]
        if keys[0] != keys[1]:
            return None
        values = [getattr(w, part) for w in (first, last)]
        return values[0], values[1]
    if walls is not None:  # one offset throughout: the dates as they are
        return _date_range(part, walls[0].date(), walls[1].date())
    if kind != "timestamp" or zone is None or high - low > 400 * _MICROS_PER_DAY:
        return None
    try:
        first = (_EPOCH + dt.timedelta(microseconds=low)).astimezone(zone).date()
        last = (_EPOCH + dt.timedelta(microseconds=high)).astimezone(zone).date()
        return _date_range(part, first - dt.timedelta(days=1), last + dt.timedelta(days=1))
    except (OverflowError, ValueError):
        return None


def _date_range(part: str, first: dt.date, last: dt.date) -> tuple[int, int] | None:
    if part not in _DATE_PARTS or not _same_unit(first, last, part):
        return None
    return _of_date(first, part), _of_date(last, part)


def part_holds(op: CompareOp, low: int, high: int, value: int | decimal.Decimal) -> bool:
    """Whether some integer in [``low``, ``high``] may satisfy ``p op value``."""
    if op in ("=", "<=>"):
        return low <= value <= high and (value == int(value))
    if op == "!=":
        return not (low == high == value)
    if op == "<":
        return low < value
    if op == "<=":
        return low <= value
    if op == ">":
        return high > value
    return high >= value
