"""Spark's dates, timestamps and intervals: each function defined once, its value and its SQL.

A timestamp's year, hour or date are read in the session's zone, Sunday is day 1,
``add_months`` clamps to the month's end (java.time's ``plusMonths``), and a date or
timestamp plus an interval computes as Spark does. A constant call is computed by
:mod:`zorder.skipping.datetimes` (the ``*_value`` rules: ``date_add``, ``add_months``,
``to_date``, ``last_day``, ``next_day``, ``trunc``, ``date_trunc``, ``make_date``, and the
clock's ``current_date()``, ``current_timestamp()``, ``now()`` and ``current_timezone()``,
read once per query from the :class:`~zorder.skipping.rules.FoldContext` as Spark reads
them); a call over columns is written as DuckDB SQL in the session zone (the ``*_sql``
rules; a zoned timestamp plus an interval only in a UTC session, where a day is always 24
hours). :data:`FUNCTIONS` registers both in the one table of
:mod:`zorder.skipping.functions`.
"""

from __future__ import annotations

import datetime as dt

from sqlglot import exp

from zorder.skipping import datetimes
from zorder.skipping.coercion import INTEGER_TYPES, InexactError
from zorder.skipping.numbers import Operand
from zorder.skipping.rules import (
    Classifying,
    DiffersError,
    Folding,
    Function,
    NotConstantError,
    Translating,
    Typed,
)
from zorder.skipping.sql_values import DAYS, MICROS, MONTHS, RefusedError, Value


def interval_value(f: Folding, node: exp.Interval) -> Operand:
    return _interval(node)


def _interval(node: exp.Interval) -> Operand:
    """``INTERVAL 'text' unit`` as Spark types it (:func:`~zorder.skipping.datetimes.
    interval_literal`): a year-month interval in months, a day-time one in microseconds."""
    value, unit = node.this, node.args.get("unit")
    if not isinstance(value, exp.Literal) or unit is None:
        raise InexactError(f"the interval {node.sql(dialect='spark')}")
    if isinstance(unit, exp.IntervalSpan):
        return datetimes.interval_literal(
            str(value.this), str(unit.this.name), str(unit.expression.name)
        )
    return datetimes.interval_literal(str(value.this), str(unit.name))


def interval_sql(t: Translating, node: exp.Interval) -> Value:
    """The interval the fold rule reads, as the translator computes with it: months, whole
    days (a date plus days stays a date) or microseconds."""
    try:
        interval = _interval(node)
    except InexactError:
        raise RefusedError(f"the interval {node.sql(dialect='spark')}") from None
    amount = int(interval.value)
    if datetimes.is_year_month(interval.type):
        return Value(str(amount), MONTHS, amount, is_literal=True)
    if interval.type == "interval day" and amount % datetimes.MICROS_PER_DAY == 0:
        days = amount // datetimes.MICROS_PER_DAY
        return Value(str(days), DAYS, days, is_literal=True)
    return Value(str(amount), MICROS, amount, is_literal=True)


def datetime_arithmetic(
    t: Translating, node: exp.Expression, left: Value, right: Value, op: str
) -> Value | None:
    shown = node.sql(dialect="spark")
    temporal = ("date", "timestamp", "timestamp_ntz")
    intervals = (DAYS, MONTHS, MICROS)
    if op == "+" and left.type in intervals and right.type in temporal:
        left, right = right, left
    if left.type not in temporal and right.type not in temporal:
        if left.type in intervals or right.type in intervals:
            if left.type == right.type and left.is_literal and right.is_literal:
                amount = left.literal + right.literal if op == "+" else left.literal - right.literal
                return Value(str(amount), left.type, amount, True)
            raise RefusedError(f"{shown}: interval arithmetic")
        return None
    if left.type not in temporal:
        raise RefusedError(f"{shown}: a {left.type} {op} a {right.type}")
    sign = "" if op == "+" else "-"
    if right.type in INTEGER_TYPES and left.type == "date":  # date + n: date_add
        if right.type == "bigint":
            raise RefusedError(f"{shown}: a date plus a bigint")
        return Value(f"({left.sql} {op} CAST({right.sql} AS INTEGER))", "date", raises=True)
    if right.type == "date" and left.type == "date" and op == "-":
        sql = f"date_diff('day', {right.sql}, {left.sql})"
        return Value(sql, DAYS, raises=left.raises or right.raises)
    if right.type not in intervals:
        raise RefusedError(f"{shown}: a {left.type} {op} a {right.type}")
    amount = f"({sign}({right.sql}))"
    if right.type == MONTHS:
        if left.type == "date":
            return Value(_plus_months(left.sql, amount), "date", raises=True)
        if left.type == "timestamp_ntz":
            return Value(f"({left.sql} + to_months({amount}))", left.type, raises=True)
    if right.type == DAYS and left.type == "date":
        return Value(f"({left.sql} + CAST({amount} AS INTEGER))", "date", raises=True)
    if left.type == "timestamp_ntz":
        micros = amount if right.type == MICROS else f"({amount} * 86400000000)"
        sql = f"({left.sql} + to_microseconds(CAST({micros} AS BIGINT)))"
        return Value(sql, left.type, raises=True)
    if t.fixed_offset() == dt.timedelta(0):
        if right.type == MONTHS:
            return Value(f"({left.sql} + to_months({amount}))", "timestamp", raises=True)
        base = left if left.type == "timestamp" else t.cast(left, "timestamp")
        micros = amount if right.type == MICROS else f"({amount} * 86400000000)"
        sql = f"({base.sql} + to_microseconds(CAST({micros} AS BIGINT)))"
        return Value(sql, "timestamp", raises=True)
    raise RefusedError(
        f"{shown}: a timestamp plus an interval outside UTC (Spark adds it to the "
        "local time of the session zone)"
    )


# -- dates -------------------------------------------------------------------------


def _date(t: Translating, node: exp.Expression) -> Value:
    while isinstance(node, exp.TsOrDsToDate) and not node.args.get("format"):
        if node.args.get("safe"):
            break
        node = node.this
    value = t.value(node)
    if value.type == "null":
        return Value("CAST(NULL AS DATE)", "date")
    if value.type not in ("date", "timestamp", "timestamp_ntz", "string"):
        raise RefusedError(f"{node.sql(dialect='spark')}: a {value.type} as a date")
    return t.cast(value, "date")


def to_date_value(f: Folding, node: exp.TsOrDsToDate) -> Operand:
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


def to_date_sql(t: Translating, node: exp.TsOrDsToDate) -> Value:
    if node.args.get("format") is not None:
        raise RefusedError(f"{node.sql(dialect='spark')} (a date format)")
    if node.args.get("safe"):
        inner = t.value(node.this)
        if inner.type == "string":
            raise RefusedError(f"{node.sql(dialect='spark')} (a string read as a date)")
        return _date(t, node.this)
    return _date(t, node.this)


_YYYY_MM_DD = "%Y-%mstrict-%dstrict"


def _STRICT_DATE(text: str) -> bool:  # noqa: N802
    return (
        len(text) == 10
        and text[4] == "-"
        and text[7] == "-"
        and (text[:4] + text[5:7] + text[8:]).isdigit()
    )


def date_part_sql(t: Translating, node: exp.Expression) -> Value:
    date = _date(t, node.this)
    part = DATE_PARTS[type(node)]
    sql = f"CAST({part}({date.sql}) AS INTEGER)"
    if isinstance(node, exp.DayOfWeek):  # Spark: Sunday is 1; DuckDB's dayofweek: 0
        sql = f"CAST(dayofweek({date.sql}) + 1 AS INTEGER)"
    return Value(sql, "int", raises=date.raises)


def time_part_sql(t: Translating, node: exp.Expression) -> Value:
    value = t.value(node.this)
    if value.type == "null":
        return Value("CAST(NULL AS INTEGER)", "int")
    if value.type == "date":
        value = t.cast(value, "timestamp")
    if value.type == "timestamp":
        local = t.local(value.sql)
    elif value.type == "timestamp_ntz":
        local = value.sql
    else:
        raise RefusedError(f"{node.sql(dialect='spark')}: a {value.type} as a timestamp")
    part = TIME_PARTS[type(node)]
    return Value(f"CAST({part}({local}) AS INTEGER)", "int", raises=value.raises)


DATE_PARTS: dict[type[exp.Expression], str] = {
    exp.Year: "year",
    exp.Month: "month",
    exp.Day: "day",
    exp.DayOfMonth: "day",
    exp.Quarter: "quarter",
    exp.DayOfWeek: "dayofweek",
    exp.DayOfYear: "dayofyear",
}
TIME_PARTS: dict[type[exp.Expression], str] = {
    exp.Hour: "hour",
    exp.Minute: "minute",
    exp.Second: "second",
}


def date_diff_sql(t: Translating, node: exp.DateDiff) -> Value:
    if node.args.get("unit") is not None:
        raise RefusedError(f"{node.sql(dialect='spark')} (a unit)")
    end, start = _date(t, node.this), _date(t, node.expression)
    sql = f"CAST(date_diff('day', {start.sql}, {end.sql}) AS INTEGER)"
    return Value(sql, "int", raises=end.raises or start.raises)


def date_add_value(f: Folding, node: exp.TsOrDsAdd) -> Operand:
    unit = node.args.get("unit")
    if unit is not None and str(unit.name).upper() != "DAY":
        raise InexactError(f"date_add by {unit.name}")
    start, days = f.fold(node.this), f.fold(node.expression)
    return datetimes.date_add(start, days, 1, f.zone)


def date_add_sql(t: Translating, node: exp.TsOrDsAdd) -> Value:
    unit = node.args.get("unit")
    if unit is not None and str(unit.this).upper() != "DAY":
        raise RefusedError(node.sql(dialect="spark"))
    date = _date(t, node.this)
    days = t.integer(node.expression, "date_add's days")
    sql = f"({date.sql} + CAST({days.sql} AS INTEGER))"
    return Value(sql, "date", raises=True)


def add_months_value(f: Folding, node: exp.AddMonths) -> Operand:
    return datetimes.add_months(f.fold(node.this), f.fold(node.expression), f.zone)


def add_months_sql(t: Translating, node: exp.AddMonths) -> Value:
    date = _date(t, node.this)
    months = t.integer(node.expression, "add_months' months")
    return Value(_plus_months(date.sql, months.sql), "date", raises=True)


def _plus_months(date_sql: str, months_sql: str) -> str:
    # java.time's plusMonths: the day of month clamped to the new month's end (DuckDB's too)
    return f"CAST({date_sql} + to_months(CAST({months_sql} AS INTEGER)) AS DATE)"


def last_day_value(f: Folding, node: exp.LastDay) -> Operand:
    if node.args.get("unit") is not None:
        raise InexactError("last_day with a unit")
    return datetimes.last_day(f.fold(node.this), f.zone)


def next_day_value(f: Folding, node: exp.NextDay) -> Operand:
    return datetimes.next_day(f.fold(node.this), f.fold(node.expression), f.zone)


def trunc_value(f: Folding, node: exp.DateTrunc) -> Operand:
    unit = node.args.get("unit")
    if not isinstance(unit, exp.Literal | exp.Var):
        raise InexactError("trunc to a unit that is not a literal")
    return datetimes.trunc_date(f.fold(node.this), str(unit.name), f.zone)


def date_trunc_value(f: Folding, node: exp.TimestampTrunc) -> Operand:
    unit = node.args.get("unit")
    if not isinstance(unit, exp.Literal | exp.Var):
        raise InexactError("date_trunc to a unit that is not a literal")
    return datetimes.trunc_timestamp(f.fold(node.this), str(unit.name), f.zone)


def make_date_value(f: Folding, node: exp.Anonymous) -> Operand:
    if len(node.expressions) != 3:
        raise NotConstantError(node.sql(dialect="spark"))
    year, month, day = (f.fold(e) for e in node.expressions)
    return datetimes.make_date(year, month, day)


# -- the clock ---------------------------------------------------------------------


def current_date_value(f: Folding, node: exp.Expression) -> Operand:
    if node.args.get("this") is not None:
        raise InexactError("current_date in a named zone")
    now, zone = _now(f)
    return Operand(now.astimezone(zone).date(), "date")


def current_timestamp_value(f: Folding, node: exp.Expression | None = None) -> Operand:
    now, zone = _now(f)
    return Operand(now.astimezone(zone), "timestamp")


def now_value(f: Folding, node: exp.Anonymous) -> Operand:
    if node.expressions:
        raise NotConstantError(node.sql(dialect="spark"))
    return current_timestamp_value(f, node)


def current_timezone_value(f: Folding, node: exp.Expression) -> Operand:
    if f.context.zone_name is None:
        raise InexactError("current_timezone() needs the session's zone as set")
    return Operand(f.context.zone_name, "string")


def _now(f: Folding) -> tuple[dt.datetime, dt.tzinfo]:
    now, zone = f.context.now, f.zone
    if now is None or zone is None or now.utcoffset() is None:
        raise InexactError("the clock's functions need the query's instant and zone")
    return now, zone


# -- the same with ANSI mode off -----------------------------------------------------


def of_a_datetime_ansi(c: Classifying, node: exp.Expression) -> Typed:
    """to_date of a date or timestamp (of a string: an error with ANSI on, NULL with it
    off) and the date parts cannot raise: the same in both modes."""
    if isinstance(node, exp.TsOrDsToDate) and node.args.get("format"):
        raise DiffersError(node)
    if c.operand(node.this).type not in ("date", "timestamp", "timestamp_ntz"):
        raise DiffersError(node)
    return Typed("date" if isinstance(node, exp.TsOrDsToDate) else "int")


_RESULT_TYPES: dict[type[exp.Expression], str] = {
    exp.TimestampTrunc: "timestamp",
    exp.DateTrunc: "date",
    exp.StrToUnix: "bigint",
}


def of_a_datetime_unit_ansi(c: Classifying, node: exp.Expression) -> Typed:
    """``date_trunc``, ``trunc``, ``unix_timestamp`` and the time parts of a date or a
    timestamp, with a literal unit or format, cannot raise: the same in both modes (of a
    string, Spark's parse differs between them)."""
    for argument in ("unit", "format"):
        given = node.args.get(argument)
        if given is not None and not isinstance(given, exp.Literal | exp.Var):
            raise DiffersError(node)
    if set(node.args) - {"this", "unit", "format"}:
        raise DiffersError(node)
    if c.operand(node.this).type not in ("date", "timestamp", "timestamp_ntz"):
        raise DiffersError(node)
    return Typed(_RESULT_TYPES.get(type(node), "int"))


# Spark's names of the seconds field (``date_part``, ``extract``): a DECIMAL(8, 6), not an int.
_SECOND_FIELDS = frozenset({"SECOND", "S", "SEC", "SECONDS", "SECS"})


def a_part_ansi(c: Classifying, node: exp.Expression) -> Typed:
    """``extract(field FROM c)``, ``date_part('field', c)`` and ``weekday(c)`` of a date or
    timestamp (an int; a field that is not one is an analysis error in both modes)."""
    if isinstance(node, exp.Extract):
        source = node.expression
    elif isinstance(node, exp.Anonymous) and node.expressions:
        source = node.expressions[-1]
        if len(node.expressions) == 2 and not (
            isinstance(node.expressions[0], exp.Literal) and node.expressions[0].is_string
        ):
            raise DiffersError(node)
    else:
        raise DiffersError(node)
    if c.operand(source).type not in ("date", "timestamp", "timestamp_ntz"):
        raise DiffersError(node)
    if isinstance(node, exp.Extract):
        field = str(node.this.this) if isinstance(node.this, exp.Var) else None
    elif len(node.expressions) == 2:  # date_part('field', c)
        field = str(node.expressions[0].this)
    else:  # weekday(c)
        field = "WEEKDAY"
    if field is None or field.strip().upper() in _SECOND_FIELDS:
        raise DiffersError(node)  # a decimal with the fraction (or unknown): not vouched for
    return Typed("int")


FUNCTIONS: dict[type[exp.Expression] | str, Function] = {
    exp.Interval: Function(interval_value, interval_sql),
    exp.TsOrDsToDate: Function(to_date_value, to_date_sql, ansi=of_a_datetime_ansi),
    **{node: Function(sql=date_part_sql, ansi=of_a_datetime_ansi) for node in DATE_PARTS},
    **{node: Function(sql=time_part_sql, ansi=of_a_datetime_unit_ansi) for node in TIME_PARTS},
    exp.DateDiff: Function(sql=date_diff_sql),
    exp.TsOrDsAdd: Function(date_add_value, date_add_sql),
    exp.AddMonths: Function(add_months_value, add_months_sql),
    exp.LastDay: Function(last_day_value),
    exp.NextDay: Function(next_day_value),
    exp.DateTrunc: Function(trunc_value, ansi=of_a_datetime_unit_ansi),
    exp.TimestampTrunc: Function(date_trunc_value, ansi=of_a_datetime_unit_ansi),
    exp.StrToUnix: Function(ansi=of_a_datetime_unit_ansi),
    exp.Extract: Function(ansi=a_part_ansi),
    "date_part": Function(ansi=a_part_ansi),
    "weekday": Function(ansi=a_part_ansi),
    "make_date": Function(make_date_value),
    exp.CurrentDate: Function(current_date_value),
    exp.CurrentTimestamp: Function(current_timestamp_value),
    "now": Function(now_value),
    exp.CurrentTimezone: Function(current_timezone_value),
}
