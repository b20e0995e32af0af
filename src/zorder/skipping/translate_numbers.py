"""Spark's arithmetic as DuckDB SQL in Spark's result types: + - * / div % and abs.

Spark computes ``int * int`` as an int that raises on overflow, divides doubles with
``/`` and bigints with ``div``, raises on a zero divisor, keeps Java's sign for ``%``
and gives decimal sums and products its own precision and scale. This module picks
each operation's result type as Spark does and casts the operands to it, refusing
what DuckDB would round otherwise (decimal division, results above 38 digits). A sum
or difference with a date, timestamp or interval goes to
:mod:`zorder.skipping.translate_dates`. Handlers of :mod:`zorder.skipping.translator`.
"""

from __future__ import annotations

from sqlglot import exp

from zorder.skipping.coercion import FLOAT_TYPES, INTEGER_TYPES
from zorder.skipping.translate_dates import datetime_arithmetic
from zorder.skipping.translate_types import (
    DAYS,
    MAX_PRECISION,
    MICROS,
    MONTHS,
    NULL,
    RefusedError,
    Translating,
    Value,
    as_decimal,
    bounded,
    common_type,
    duck_type,
    error_sql,
    is_null,
    is_numeric,
)


def _numeric_pair(t: Translating, node: exp.Binary, verb: str) -> tuple[Value, Value, str]:
    left, right = t.value(node.this), t.value(node.expression)
    shown = node.sql(dialect="spark")
    for one, other in ((left, right), (right, left)):
        if one.type == "string" and other.type not in INTEGER_TYPES:
            # Spark brings a string to the other side's integral type as a bigint; with
            # anything else its rule is not reproduced here.
            raise RefusedError(f"{shown}: a string {verb} a {other.type}")
    if is_null(left) or is_null(right):  # NullPropagation: NULL, nothing evaluated
        return left, right, "null"
    if left.type == "string" or right.type == "string":
        return t.cast(left, "bigint"), t.cast(right, "bigint"), "bigint"
    if left.type == "null" and right.type == "null":
        return left, right, "null"
    for one in (left, right):
        if one.type != "null" and not is_numeric(one.type):
            raise RefusedError(f"{shown}: arithmetic on a {one.type}")
    common = common_type(left, right, digits=True)
    assert common is not None
    return left, right, common


def add_sub(t: Translating, node: exp.Add | exp.Sub) -> Value:
    left, right = t.value(node.this), t.value(node.expression)
    op = "+" if isinstance(node, exp.Add) else "-"
    temporal = datetime_arithmetic(t, node, left, right, op)
    if temporal is not None:
        return temporal
    a, b, common = _numeric_pair(t, node, "added to")
    if common == "null":
        return NULL
    if common.startswith("decimal"):
        (p1, s1), (p2, s2) = as_decimal(a), as_decimal(b)
        scale = max(s1, s2)
        precision = max(p1 - s1, p2 - s2) + scale + 1
        result = bounded(precision, scale)
        if precision > MAX_PRECISION:
            raise RefusedError(f"{node.sql(dialect='spark')}: a decimal sum above 38 digits")
        x, y = t.cast(a, result), t.cast(b, result)
        sql = f"CAST(({x.sql}) {op} ({y.sql}) AS {duck_type(result)})"
        return Value(sql, result, raises=True)
    x, y = t.cast(a, common), t.cast(b, common)
    may_raise = common not in FLOAT_TYPES or x.raises or y.raises
    return Value(f"(({x.sql}) {op} ({y.sql}))", common, raises=may_raise)


def mul(t: Translating, node: exp.Mul) -> Value:
    a, b, common = _numeric_pair(t, node, "multiplied by")
    if common == "null":
        return NULL
    if common.startswith("decimal"):
        (p1, s1), (p2, s2) = as_decimal(a), as_decimal(b)
        if p1 + p2 + 1 > MAX_PRECISION:
            raise RefusedError(
                f"{node.sql(dialect='spark')}: a decimal product above 38 digits (Spark rounds it)"
            )
        result = f"decimal({p1 + p2 + 1},{s1 + s2})"
        x = t.cast(a, f"decimal({p1},{s1})")
        y = t.cast(b, f"decimal({p2},{s2})")
        sql = f"CAST(({x.sql}) * ({y.sql}) AS {duck_type(result)})"
        return Value(sql, result, raises=x.raises or y.raises)
    x, y = t.cast(a, common), t.cast(b, common)
    may_raise = common not in FLOAT_TYPES or x.raises or y.raises
    return Value(f"(({x.sql}) * ({y.sql}))", common, raises=may_raise)


def div(t: Translating, node: exp.Div) -> Value:
    a, b, common = _numeric_pair(t, node, "divided by")
    if common == "null":
        return NULL
    if common.startswith("decimal"):
        raise RefusedError(
            f"{node.sql(dialect='spark')}: decimal division (Spark rounds the exact "
            "quotient to its result scale)"
        )
    x, y = t.cast(a, "double"), t.cast(b, "double")
    sql = (
        f"(CASE WHEN ({y.sql}) = 0 THEN {error_sql('[DIVIDE_BY_ZERO] Division by zero')} "
        f"ELSE ({x.sql}) / ({y.sql}) END)"
    )
    return Value(sql, "double", raises=True)


def int_div(t: Translating, node: exp.IntDiv) -> Value:
    a, b, common = _numeric_pair(t, node, "divided by")
    if common == "null":
        return NULL
    if common not in INTEGER_TYPES:
        raise RefusedError(f"{node.sql(dialect='spark')}: div of a {common}")
    x, y = t.cast(a, "bigint"), t.cast(b, "bigint")
    sql = (
        f"(CASE WHEN ({y.sql}) = 0 THEN {error_sql('[DIVIDE_BY_ZERO] Division by zero')} "
        f"ELSE ({x.sql}) // ({y.sql}) END)"
    )
    return Value(sql, "bigint", raises=True)


def mod(t: Translating, node: exp.Mod) -> Value:
    a, b, common = _numeric_pair(t, node, "divided by")
    if common == "null":
        return NULL
    if common.startswith("decimal"):
        raise RefusedError(f"{node.sql(dialect='spark')}: the remainder of decimals")
    x, y = t.cast(a, common), t.cast(b, common)
    zero = error_sql("[REMAINDER_BY_ZERO] Remainder by zero")
    # Java's % keeps the dividend's sign, as DuckDB's; MIN % -1 is 0 in Java.
    minus_one = f"WHEN ({y.sql}) = -1 THEN ({x.sql}) * 0 " if common in INTEGER_TYPES else ""
    sql = f"(CASE WHEN ({y.sql}) = 0 THEN {zero} {minus_one}ELSE ({x.sql}) % ({y.sql}) END)"
    return Value(sql, common, raises=True)


def neg(t: Translating, node: exp.Neg) -> Value:
    inner = t.value(node.this)
    if inner.type == "null":
        return inner
    if inner.type in (DAYS, MONTHS, MICROS) and inner.is_literal:
        return Value(str(-inner.literal), inner.type, -inner.literal, True)
    if not is_numeric(inner.type):
        raise RefusedError(f"{node.sql(dialect='spark')}: minus a {inner.type}")
    return Value(f"(-({inner.sql}))", inner.type, raises=inner.type not in FLOAT_TYPES)


def abs_(t: Translating, node: exp.Abs) -> Value:
    inner = t.value(node.this)
    if inner.type == "null":
        return inner
    if not is_numeric(inner.type):
        raise RefusedError(f"{node.sql(dialect='spark')}: abs of a {inner.type}")
    return Value(f"abs({inner.sql})", inner.type, raises=inner.type not in FLOAT_TYPES)
