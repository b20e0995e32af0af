"""Constant date and time functions folded as Spark computes them, the clock's included.

``date_add``, ``add_months``, ``to_date``, ``last_day``, ``next_day``, ``trunc`` and
``date_trunc`` compute in :mod:`zorder.skipping.datetimes`; ``current_date()``,
``current_timestamp()`` and ``current_timezone()`` read the query's instant and the
session's zone from the :class:`~zorder.skipping.folding.FoldContext`, once per query
as Spark does. Handlers of the folder of :mod:`zorder.skipping.constants`.
"""

from __future__ import annotations

import datetime as dt

from sqlglot import exp

from zorder.skipping import datetimes
from zorder.skipping.coercion import InexactError
from zorder.skipping.folding import Folding
from zorder.skipping.numbers import Operand


def date_add(f: Folding, node: exp.TsOrDsAdd) -> Operand:
    unit = node.args.get("unit")
    if unit is not None and str(unit.name).upper() != "DAY":
        raise InexactError(f"date_add by {unit.name}")
    start, days = f.fold(node.this), f.fold(node.expression)
    return datetimes.date_add(start, days, 1, f.zone)


def add_months(f: Folding, node: exp.AddMonths) -> Operand:
    return datetimes.add_months(f.fold(node.this), f.fold(node.expression), f.zone)


def to_date(f: Folding, node: exp.TsOrDsToDate) -> Operand:
    inner = f.fold(node.this)
    pattern = node.args.get("format")
    if pattern is not None:
        # sqlglot's spelling of 'yyyy-MM-dd': the one format read here (strictly).
        if not (isinstance(pattern, exp.Literal) and pattern.this == _YYYY_MM_DD):
            raise InexactError(f"to_date with the format {pattern.sql(dialect='spark')}")
        if inner.type not in ("string", "void"):
            raise InexactError(f"to_date of a {inner.type} with a format")
        if inner.value is not None and not _STRICT_DATE(str(inner.value)):
            raise InexactError(f"to_date({inner.value!r}, 'yyyy-MM-dd')")
    if inner.type == "void":
        return Operand(None, "date")
    return Operand(datetimes.to_date(inner, f.zone), "date")


def last_day(f: Folding, node: exp.LastDay) -> Operand:
    if node.args.get("unit") is not None:
        raise InexactError("last_day with a unit")
    return datetimes.last_day(f.fold(node.this), f.zone)


def next_day(f: Folding, node: exp.NextDay) -> Operand:
    return datetimes.next_day(f.fold(node.this), f.fold(node.expression), f.zone)


def trunc(f: Folding, node: exp.DateTrunc) -> Operand:
    unit = node.args.get("unit")
    if not isinstance(unit, exp.Literal | exp.Var):
        raise InexactError("trunc to a unit that is not a literal")
    return datetimes.trunc_date(f.fold(node.this), str(unit.name), f.zone)


def date_trunc(f: Folding, node: exp.TimestampTrunc) -> Operand:
    unit = node.args.get("unit")
    if not isinstance(unit, exp.Literal | exp.Var):
        raise InexactError("date_trunc to a unit that is not a literal")
    return datetimes.trunc_timestamp(f.fold(node.this), str(unit.name), f.zone)


def make_date(year: Operand, month: Operand, day: Operand) -> Operand:
    return datetimes.make_date(year, month, day)


def current_date(f: Folding, node: exp.Expression) -> Operand:
    if node.args.get("this") is not None:
        raise InexactError("current_date in a named zone")
    now, zone = _now(f)
    return Operand(now.astimezone(zone).date(), "date")


def current_timestamp(f: Folding, node: exp.Expression | None = None) -> Operand:
    now, zone = _now(f)
    return Operand(now.astimezone(zone), "timestamp")


def current_timezone(f: Folding, node: exp.Expression) -> Operand:
    if f.context.zone_name is None:
        raise InexactError("current_timezone() needs the session's zone as set")
    return Operand(f.context.zone_name, "string")


def _now(f: Folding) -> tuple[dt.datetime, dt.tzinfo]:
    now, zone = f.context.now, f.zone
    if now is None or zone is None or now.utcoffset() is None:
        raise InexactError("the clock's functions need the query's instant and zone")
    return now, zone


_YYYY_MM_DD = "%Y-%mstrict-%dstrict"


def _STRICT_DATE(text: str) -> bool:  # noqa: N802
    return (
        len(text) == 10
        and text[4] == "-"
        and text[7] == "-"
        and (text[:4] + text[5:7] + text[8:]).isdigit()
    )
