"""Constant subexpressions of a filter, evaluated once at planning as Spark evaluates them.

Spark folds every subexpression without a column reference before it plans
a scan (``ConstantFolding``); a filter means the same whether its constants
are spelled as expressions (``date '2024-06-01' - interval '7' day``) or
computed by hand. :func:`constant` gives the :class:`TypedLiteral` such a
subexpression stands for, with the type Spark gives it, or raises
:class:`NotConstantError`: for anything that reads a column, and for what
this module does not compute exactly as Spark does (the subexpression is
then left as written, and the file kept or the filter refused: never a
guess). Everything here follows Spark 4.1 with ANSI mode on (its default):
an expression Spark answers with an error (an overflow, a division by zero,
a malformed date) is not constant here either.

This module walks the tree and types the literals; every function, operator
and cast is folded by its fold rule in the one table of
:mod:`zorder.skipping.functions`, the same table whose SQL rules the
translator (:mod:`zorder.skipping.translate`) writes a call over columns
with. Numbers are computed in :mod:`zorder.skipping.numbers`, dates,
timestamps and intervals in :mod:`zorder.skipping.datetimes`.

The functions of the clock (``current_date()``, ``current_timestamp()``,
``now()``) are read once per query, in the session's zone, as Spark reads
them; they need a :class:`FoldContext` that names both.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable
from typing import Any

from sqlglot import exp

from zorder.skipping.arithmetic import number_operand
from zorder.skipping.casts import spark_type_name
from zorder.skipping.coercion import INTEGER_TYPES, ComputedLiteral, InexactError
from zorder.skipping.functions import lookup
from zorder.skipping.nodes import TypedLiteral
from zorder.skipping.numbers import Operand
from zorder.skipping.rules import NULL, FoldContext, NotConstantError

__all__ = ["FoldContext", "NotConstantError", "constant", "spark_type_name"]


def constant(node: exp.Expression, context: FoldContext | None = None) -> TypedLiteral | None:
    """The literal a constant subexpression stands for; ``None`` for SQL's NULL.

    Raises :class:`NotConstantError` for anything else.
    """
    try:
        result = _Folder(context or FoldContext()).fold(node, root=True)
    except InexactError as reason:
        raise NotConstantError(str(reason)) from None
    except (OverflowError, ValueError, ArithmeticError) as reason:  # never a guess
        raise NotConstantError(f"{node.sql(dialect='spark')}: {reason}") from None
    if result.value is None:
        return None
    assert result.type is not None
    value = result.value
    if isinstance(value, decimal.Decimal) and value == 0:
        value = abs(value)  # Java's BigDecimal has no negative zero
    if isinstance(value, dt.datetime) and value.tzinfo is not None and value.date() in _EDGE_DAYS:
        # Its instant may lie past Python's years, where Spark's still reach (a TIMESTAMP_NTZ
        # names no instant).
        raise NotConstantError(f"the timestamp {value} at the edge of the years 1 to 9999")
    if (result.type in INTEGER_TYPES or result.type.startswith("decimal(")) and not result.literal:
        # Spark's analyzer types an integer expression, unlike a literal, by its type alone,
        # and folds an integral column's order against a decimal literal, not an expression,
        # beyond BIGINT's range (zorder.skipping.logic._beyond_long).
        return ComputedLiteral(value, result.type, maybe_literal=result.literal is None)
    return TypedLiteral(value, result.type)


_EDGE_DAYS = (dt.date(1, 1, 1), dt.date(9999, 12, 31))


class _Folder:
    """The walk of a constant subexpression, in the context's zone: the literals here, every
    function, operator and cast by its fold rule in :mod:`zorder.skipping.functions`."""

    def __init__(self, context: FoldContext) -> None:
        self.context = context
        self.zone = context.zone

    def fold(self, node: exp.Expression, *, root: bool = False) -> Operand:
        leaf = _LEAVES.get(type(node))
        if leaf is not None:
            result = leaf(self, node)
        else:
            function = lookup(node)
            if function is None or function.fold is None:
                raise NotConstantError(node.sql(dialect="spark"))
            result = function.fold(self, node)
        if result.type is None and not root:
            # A NULL whose type Spark picks from context: what uses it may be an error there.
            raise InexactError(f"{node.sql(dialect='spark')} is a NULL of a type not known here")
        return result

    def args(self, node: exp.Expression, *names: str) -> list[Operand | None]:
        return [None if node.args.get(n) is None else self.fold(node.args[n]) for n in names]

    # -- leaves --------------------------------------------------------------------------

    def paren(self, node: exp.Paren) -> Operand:
        return self.fold(node.this)

    def null(self, node: exp.Null) -> Operand:
        return NULL

    def boolean(self, node: exp.Boolean) -> Operand:
        return Operand(bool(node.this), "boolean")

    def literal(self, node: exp.Literal) -> Operand:
        if node.is_string:
            return Operand(str(node.this), "string")
        return number_operand(str(node.this))


_LEAVES: dict[type[exp.Expression], Callable[[_Folder, Any], Operand]] = {
    exp.Paren: _Folder.paren,
    exp.Null: _Folder.null,
    exp.Boolean: _Folder.boolean,
    exp.Literal: _Folder.literal,
}
