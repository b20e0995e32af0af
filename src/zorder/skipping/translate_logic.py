"""Spark's boolean logic and comparisons as DuckDB SQL: AND, OR, NOT, IS, =, <, IN, BETWEEN.

Spark decides a good deal of a filter's logic before it reads a row: its optimizer
simplifies constant operands of AND and OR, propagates NULL through comparisons and
unwraps casts compared with literals their type cannot hold; and it evaluates the right
side of AND and OR only where the left does not decide. This module writes these rules
out for :mod:`zorder.skipping.translator`, with each comparison's operands brought to
the type Spark compares them in, so the SQL raises, and answers, only where Spark does.
"""

from __future__ import annotations

import decimal
import math

from sqlglot import exp

from zorder.skipping.coercion import INTEGER_TYPES
from zorder.skipping.translate_types import (
    DAYS,
    FALSE,
    MICROS,
    MONTHS,
    NULL,
    TRUE,
    UNKNOWN,
    RefusedError,
    Translating,
    Value,
    common_type,
    is_null,
    is_numeric,
    truth_of,
)


def and_(t: Translating, node: exp.And) -> Value:
    return junction(t, node, predicate=False)


def or_(t: Translating, node: exp.Or) -> Value:
    return junction(t, node, predicate=False)


def junction(t: Translating, node: exp.And | exp.Or, predicate: bool) -> Value:
    is_and = isinstance(node, exp.And)
    left = t.condition(node.this, predicate)
    right = t.condition(node.expression, predicate)
    # Spark's BooleanSimplification, before any row: x AND FALSE is FALSE, x OR TRUE is
    # TRUE, whatever x would do (raise included); TRUE AND x is x.
    absorbing, neutral = (False, True) if is_and else (True, False)
    truths = (truth_of(left), truth_of(right))
    if absorbing in truths:
        return FALSE if is_and else TRUE
    if truths[0] is neutral:
        return right
    if truths[1] is neutral:
        return left
    if truths == (None, None):
        return NULL
    raises = left.raises or right.raises
    word = "AND" if is_and else "OR"
    if right.raises:  # Spark skips the right side where the left decides
        decided = "FALSE" if is_and else "TRUE"
        sql = (
            f"CASE WHEN ({left.sql}) IS {decided} THEN {decided} "
            f"ELSE ({left.sql}) {word} ({right.sql}) END"
        )
    else:
        sql = f"(({left.sql}) {word} ({right.sql}))"
    return Value(sql, "boolean", raises=raises)


def not_(t: Translating, node: exp.Not) -> Value:
    inner = t.boolean(node.this)
    truth = truth_of(inner)
    if truth is not UNKNOWN:
        return NULL if truth is None else (FALSE if truth else TRUE)
    return Value(f"(NOT ({inner.sql}))", "boolean", raises=inner.raises)


def is_(t: Translating, node: exp.Is) -> Value:
    inner = t.value(node.this)
    target = node.expression
    if isinstance(target, exp.Null):
        return Value(f"(({inner.sql}) IS NULL)", "boolean", raises=inner.raises)
    if isinstance(target, exp.Boolean):
        inner = t.boolean(node.this)
        word = "TRUE" if target.this else "FALSE"
        return Value(f"(({inner.sql}) IS {word})", "boolean", raises=inner.raises)
    raise RefusedError(node.sql(dialect="spark"))


# -- comparisons -----------------------------------------------------------------------


def _pair(t: Translating, left: Value, right: Value, shown: str) -> tuple[Value, Value, str]:
    common = common_type(left, right, digits=True)
    if common is None:
        raise RefusedError(f"{shown}: Spark does not compare a {left.type} with a {right.type}")
    if common == "null":
        common = "boolean"
    return t.cast(left, common), t.cast(right, common), common


def compare(t: Translating, node: exp.Expression) -> Value:
    op = COMPARISONS[type(node)]
    left, right = t.value(node.this), t.value(node.expression)
    return compare_values(t, op, left, right, node.sql(dialect="spark"))


def compare_values(t: Translating, op: str, left: Value, right: Value, shown: str) -> Value:
    if "DISTINCT" not in op and (is_null(left) or is_null(right)):
        return NULL  # NullPropagation: the other side is never evaluated
    decided = unwrapped(op, left, right)
    if decided is not None:
        return decided
    if left.type in (DAYS, MONTHS, MICROS) or right.type in (DAYS, MONTHS, MICROS):
        if left.type != right.type:
            raise RefusedError(f"{shown}: an interval compared with a {right.type}")
        a, b = left, right
    else:
        a, b, _ = _pair(t, left, right, shown)
    sql = f"(({a.sql}) {op} ({b.sql}))"
    return Value(sql, "boolean", raises=a.raises or b.raises)


def distinct(t: Translating, node: exp.NullSafeNEQ) -> Value:
    left, right = t.value(node.this), t.value(node.expression)
    return compare_values(t, "IS DISTINCT FROM", left, right, node.sql(dialect="spark"))


def between(t: Translating, node: exp.Between) -> Value:
    if node.args.get("symmetric"):
        raise RefusedError("BETWEEN SYMMETRIC")
    shown = node.sql(dialect="spark")
    target = t.value(node.this)
    low = compare_values(t, ">=", target, t.value(node.args["low"]), shown)
    high = compare_values(t, "<=", target, t.value(node.args["high"]), shown)
    if high.raises:
        sql = f"CASE WHEN ({low.sql}) IS FALSE THEN FALSE ELSE ({low.sql}) AND ({high.sql}) END"
    else:
        sql = f"(({low.sql}) AND ({high.sql}))"
    return Value(sql, "boolean", raises=low.raises or high.raises)


def in_(t: Translating, node: exp.In) -> Value:
    shown = node.sql(dialect="spark")
    if node.args.get("query") is not None or node.args.get("unnest") is not None:
        raise RefusedError(f"a subquery ({shown})")
    target = t.value(node.this)
    items = [t.value(item) for item in node.expressions]
    common = target.type
    for item in items:
        widened = common_type(Value("", common), item, digits=False)
        if widened is None:
            raise RefusedError(f"{shown}: Spark does not compare a {common} with a {item.type}")
        common = widened
    if common == "null":
        return Value("CAST(NULL AS BOOLEAN)", "boolean")
    cast = [t.cast(v, common) for v in [target, *items]]
    sql = f"(({cast[0].sql}) IN ({', '.join(v.sql for v in cast[1:])}))"
    return Value(sql, "boolean", raises=any(v.raises for v in cast))


_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "<>": "<>"}


def unwrapped(op: str, left: Value, right: Value) -> Value | None:
    """Spark's UnwrapCastInBinaryComparison, where it decides the comparison before a row:
    an integral expression against a literal its type cannot hold (``CAST(m AS BIGINT) =
    1.5``, ``i > 1e10``) is FALSE (or TRUE) wherever the expression is not NULL, and FALSE
    unevaluated in predicate position; None where the rule does not decide it."""
    for target, literal, flipped in ((left, right, False), (right, left, True)):
        if target.is_literal or not literal.is_literal or target.type not in INTEGER_TYPES:
            continue
        if not is_numeric(literal.type) or op not in _FLIPPED:
            continue
        value = literal.literal
        if isinstance(value, float) and math.isnan(value):
            return None
        if literal.type in ("float", "double") and target.type == "bigint":
            # Compared as DOUBLE, which does not hold every BIGINT: not an up-cast, so the
            # rule does not apply and Spark casts each row (measured: CAST(f AS BIGINT) =
            # 1e30 raises on an infinite f).
            return None
        low, high = -(1 << (_BITS[target.type] - 1)), (1 << (_BITS[target.type] - 1)) - 1
        above = value > high
        below = value < low
        if isinstance(value, float):
            fractional = not (above or below) and not value.is_integer()
        else:
            number = decimal.Decimal(value)
            fractional = number != number.to_integral_value()
        direction = _FLIPPED[op] if flipped else op
        if above or below:
            truth = {
                "=": False,
                "<>": True,
                "<": above,
                "<=": above,
                ">": below,
                ">=": below,
            }[direction]
        elif fractional and direction in ("=", "<>"):
            truth = direction == "<>"
        else:
            return None
        word = "TRUE" if truth else "FALSE"
        sql = f"(CASE WHEN ({target.sql}) IS NULL THEN NULL ELSE {word} END)"
        return Value(sql, "boolean", raises=target.raises, false_in_predicate=not truth)
    return None


_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}


COMPARISONS: dict[type[exp.Expression], str] = {
    exp.EQ: "=",
    exp.NullSafeEQ: "IS NOT DISTINCT FROM",
    exp.NEQ: "<>",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
}
