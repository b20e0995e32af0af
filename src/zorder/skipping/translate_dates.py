"""Spark's date and time functions and date arithmetic as DuckDB SQL in the session zone.

A timestamp's year, hour or date are read in the session's zone, Sunday is day 1,
``add_months`` clamps to the month's end, and a date or timestamp plus an interval
computes as Spark does (a zoned timestamp only in a UTC session, where a day is always
24 hours). Handlers of :mod:`zorder.skipping.translator`.
"""

from __future__ import annotations

import datetime as dt

from sqlglot import exp

from zorder.skipping.coercion import INTEGER_TYPES
from zorder.skipping.translate_types import DAYS, MICROS, MONTHS, RefusedError, Translating, Value


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


def to_date(t: Translating, node: exp.TsOrDsToDate) -> Value:
    if node.args.get("format") is not None:
        raise RefusedError(f"{node.sql(dialect='spark')} (a date format)")
    if node.args.get("safe"):
        inner = t.value(node.this)
        if inner.type == "string":
            raise RefusedError(f"{node.sql(dialect='spark')} (a string read as a date)")
        return _date(t, node.this)
    return _date(t, node.this)


def date_part(t: Translating, node: exp.Expression) -> Value:
    date = _date(t, node.this)
    part = DATE_PARTS[type(node)]
    sql = f"CAST({part}({date.sql}) AS INTEGER)"
    if isinstance(node, exp.DayOfWeek):  # Spark: Sunday is 1; DuckDB's dayofweek: 0
        sql = f"CAST(dayofweek({date.sql}) + 1 AS INTEGER)"
    return Value(sql, "int", raises=date.raises)


def time_part(t: Translating, node: exp.Expression) -> Value:
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


def date_diff(t: Translating, node: exp.DateDiff) -> Value:
    if node.args.get("unit") is not None:
        raise RefusedError(f"{node.sql(dialect='spark')} (a unit)")
    end, start = _date(t, node.this), _date(t, node.expression)
    sql = f"CAST(date_diff('day', {start.sql}, {end.sql}) AS INTEGER)"
    return Value(sql, "int", raises=end.raises or start.raises)


def date_add(t: Translating, node: exp.TsOrDsAdd) -> Value:
    unit = node.args.get("unit")
    if unit is not None and str(unit.this).upper() != "DAY":
        raise RefusedError(node.sql(dialect="spark"))
    date = _date(t, node.this)
    days = t.integer(node.expression, "date_add's days")
    sql = f"({date.sql} + CAST({days.sql} AS INTEGER))"
    return Value(sql, "date", raises=True)


def add_months(t: Translating, node: exp.AddMonths) -> Value:
    date = _date(t, node.this)
    months = t.integer(node.expression, "add_months' months")
    return Value(_plus_months(date.sql, months.sql), "date", raises=True)


def _plus_months(date_sql: str, months_sql: str) -> str:
    # java.time's plusMonths: the day of month clamped to the new month's end (DuckDB's too)
    return f"CAST({date_sql} + to_months(CAST({months_sql} AS INTEGER)) AS DATE)"


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
