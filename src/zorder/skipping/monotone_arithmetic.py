"""Monotone rewrites of a column plus or minus an exact number: ``c + k op v`` is ``c op v - k``.

Spark adds without rounding only on integers and on decimals of small scale, and it
raises on overflow where the rewrite answers; so the rewrite is implied, never
equivalent, and its comparison carries a cast to ``decimal(37,6)`` that only the
exact cases pass (any other column binds to Unknown). Doubles are left alone.
"""

from __future__ import annotations

import decimal

from sqlglot import exp

from zorder.skipping.coercion import INTEGER_TYPES, decimal_shape, literal_type
from zorder.skipping.monotone_steps import (
    Constant,
    NotHandledError,
    column_name,
    implied,
    literal_of,
    unparen,
)
from zorder.skipping.nodes import CompareOp, Comparison, Predicate, TypedLiteral
from zorder.skipping.predicates import flip

_DECIMAL_GUARD = "decimal(37,6)"


_EXACT = decimal.Context(prec=200, Emax=10_000, Emin=-10_000)


def _exact_number(value: TypedLiteral) -> decimal.Decimal:
    """An integer or a decimal of scale at most 6 and at most 30 integral digits (Spark
    then adds and compares without rounding, :data:`_DECIMAL_GUARD` columns)."""
    if value.type in INTEGER_TYPES and isinstance(value.value, int):
        number = decimal.Decimal(value.value)
    elif decimal_shape(value.type) is not None and isinstance(value.value, decimal.Decimal):
        number = value.value
    else:
        raise NotHandledError  # doubles round: left Unknown
    shape = decimal_shape(value.type)
    if (shape is not None and shape[1] > 6) or abs(number) >= decimal.Decimal(10) ** 30:
        raise NotHandledError
    return number


def rewrite_arithmetic(
    op: CompareOp, side: exp.Expression, value: TypedLiteral, constant: Constant
) -> Predicate | None:
    if not isinstance(side, exp.Add | exp.Sub):
        return None
    left, right = column_name(side.this), column_name(side.expression)
    if (left is None) == (right is None):
        return None
    if isinstance(unparen(side.expression if left else side.this), exp.Interval):
        return None
    k = _exact_number(literal_of(side.expression if left else side.this, constant))
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
    return implied(comparison, "arithmetic that Spark may refuse as an overflow")
