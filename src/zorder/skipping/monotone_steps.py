"""What every monotone rewrite shares: its arguments read, and its answer as steps on the column.

A rewrite of :mod:`zorder.skipping.monotone` recognises a function of one column
(``year(c)``, ``date_trunc(MONTH, c)``, ``left(c, 3)``), reads its constant arguments
exactly or gives up (:class:`NotHandledError`), and answers with comparisons of the
column itself: for a step function, the first step at or above the value and the
first above it (:func:`steps`), equivalent NULLs included; or a predicate only
implied by the original (:func:`implied`). The date, arithmetic and prefix rewrites
(``monotone_*`` modules) build on these.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import TypeVar

from sqlglot import exp

from zorder.skipping.nodes import (
    And,
    CompareOp,
    Comparison,
    IsNull,
    Or,
    Predicate,
    TypedLiteral,
    Unknown,
)

T = TypeVar("T")

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


# What Spark's date_add and substring take as a count without a cast that may fail.
SMALL_INTEGERS = frozenset({"tinyint", "smallint", "int"})


class NotHandledError(Exception):
    """The form is recognised but not rewritten (a constant that is not one, a bad unit)."""


def unparen(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def column_name(node: exp.Expression) -> str | None:
    node = unparen(node)
    if isinstance(node, exp.Column) and not node.table:
        return str(node.name)
    return None


def literal_of(node: exp.Expression, constant: Constant) -> TypedLiteral:
    """A non-NULL constant, or :class:`NotHandledError`."""
    try:
        value = constant(node)
    except Exception as error:  # NotConstantError: a column or what is not folded
        raise NotHandledError from error
    if value is None:
        raise NotHandledError
    return value


def integer_arg(node: exp.Expression, constant: Constant, types: frozenset[str]) -> int:
    # sqlglot spells date_sub(c, n) as date_add(c, n * -1)
    node = unparen(node)
    if isinstance(node, exp.Mul) and _is_minus_one(node.expression):
        return -integer_arg(node.this, constant, types)
    value = literal_of(node, constant)
    if value.type not in types or not isinstance(value.value, int):
        raise NotHandledError
    return value.value


def _is_minus_one(node: exp.Expression) -> bool:
    node = unparen(node)
    return (
        isinstance(node, exp.Neg)
        and isinstance(node.this, exp.Literal)
        and not node.this.is_string
        and str(node.this.this) == "1"
    )


def day_literal(value: dt.date) -> TypedLiteral:
    return TypedLiteral(value, "date")


def steps(
    op: CompareOp,
    column: str,
    low: T,
    high: T,
    *,
    literal: Callable[[T], TypedLiteral] = day_literal,  # type: ignore[assignment]
    cast: str | None = None,
) -> Predicate:
    """``f(c) op v`` for a step function ``f``: ``low`` starts the first step whose value
    is at least ``v``, ``high`` the first step whose value is above ``v`` (the two are
    equal when no step has the value ``v``). Equivalent, NULLs included. The bounds are
    days unless ``literal`` makes them otherwise (instants); ``cast`` is the type the
    column is compared as (``CAST(c AS cast)``)."""

    def at(comparison: CompareOp, bound: T) -> Comparison:
        return Comparison(comparison, column, literal(bound), cast=cast)

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


def implied(predicate: Predicate, reason: str) -> Predicate:
    return And(predicate, Unknown(reason))
