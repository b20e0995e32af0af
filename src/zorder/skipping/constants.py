"""Constant subexpressions of a filter, evaluated once at planning as Spark evaluates them.

Spark folds every subexpression without a column reference before it plans
a scan (``ConstantFolding``); a filter means the same whether its constants
are spelled as expressions (``date '2024-06-01' - interval '7' day``) or
computed by hand. :func:`constant` gives the :class:`TypedLiteral` such a
subexpression stands for, with the type Spark gives it, or raises
:class:`NotConstantError`: for anything that reads a column, and for what
this module does not compute exactly as Spark does (the subexpression is
then left as written, and the file kept or the filter refused: never a
guess).

The functions of the clock (``current_date()``, ``current_timestamp()``,
``now()``) are read once per query, in the session's zone, as Spark reads
them; they need a :class:`FoldContext` that names both.
"""

from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import dataclass

from sqlglot import exp

from zorder.skipping.coercion import InexactError, cast_literal, number_literal, timestamp_text
from zorder.skipping.nodes import TypedLiteral
from zorder.skipping.predicates import SESSION_ZONE

__all__ = ["FoldContext", "NotConstantError", "constant", "spark_type_name"]


class NotConstantError(Exception):
    """The subexpression reads a column, or is not computed here exactly as Spark would."""


@dataclass(frozen=True)
class FoldContext:
    """What a constant may depend on besides its text: the session's zone and the query's
    instant (``now`` is zoned, UTC or not). ``None`` leaves what needs them unfolded."""

    zone: dt.tzinfo | None = None
    now: dt.datetime | None = None


def constant(node: exp.Expression, context: FoldContext | None = None) -> TypedLiteral | None:
    """The literal a constant subexpression stands for; ``None`` for SQL's NULL.

    Raises :class:`NotConstantError` for anything else.
    """
    return _Folder(context or FoldContext()).fold(node)


class _Folder:
    def __init__(self, context: FoldContext) -> None:
        self.context = context

    def fold(self, node: exp.Expression) -> TypedLiteral | None:
        if isinstance(node, exp.Paren):
            return self.fold(node.this)
        if isinstance(node, exp.Null):
            return None
        if isinstance(node, exp.Boolean):
            return TypedLiteral(bool(node.this), "boolean")
        if isinstance(node, exp.Literal):
            if node.is_string:
                return TypedLiteral(str(node.this), "string")
            try:
                value, type_name = number_literal(str(node.this))
            except ValueError:  # the parser refuses such text before it gets here
                raise NotConstantError(str(node.this)) from None
            return TypedLiteral(value, type_name)
        if isinstance(node, exp.Neg):
            return self._negate(self.fold(node.this))
        if isinstance(node, exp.Cast):  # CAST, TRY_CAST (safe), DATE'..', suffixes 5L, 1.5F
            inner = self.fold(node.this)
            if inner is None:
                return None
            target = spark_type_name(node.to)
            if target is None:
                raise NotConstantError(node.sql(dialect="spark"))
            return TypedLiteral(_cast(inner, target), target)
        raise NotConstantError(node.sql(dialect="spark"))

    @staticmethod
    def _negate(inner: TypedLiteral | None) -> TypedLiteral | None:
        if inner is None:
            return None
        if isinstance(inner.value, decimal.Decimal):
            return TypedLiteral(inner.value.copy_negate(), inner.type)  # exact: no 28 digits
        if isinstance(inner.value, int | float) and not isinstance(inner.value, bool):
            return TypedLiteral(-inner.value, inner.type)
        raise NotConstantError(f"-{inner.value!r}")


def spark_type_name(data_type: exp.DataType) -> str | None:
    """Spark's name of a type as sqlglot parsed it (``decimal(10,0)`` for a bare DECIMAL);
    None for types binding does not compare (VARCHAR(n), nested types, intervals)."""
    if data_type.this == exp.DataType.Type.DECIMAL:
        params = [int(str(p.this.this)) for p in data_type.expressions]
        precision, scale = (*params, 10, 0)[:2] if len(params) != 1 else (params[0], 0)
        return f"decimal({precision},{scale})"
    return _TYPE_NAMES.get(data_type.this)


_TYPE_NAMES = {
    exp.DataType.Type.TINYINT: "tinyint",
    exp.DataType.Type.SMALLINT: "smallint",
    exp.DataType.Type.INT: "int",
    exp.DataType.Type.BIGINT: "bigint",
    exp.DataType.Type.FLOAT: "float",
    exp.DataType.Type.DOUBLE: "double",
    exp.DataType.Type.TEXT: "string",
    exp.DataType.Type.BOOLEAN: "boolean",
    exp.DataType.Type.DATE: "date",
    exp.DataType.Type.TIMESTAMP: "timestamp",
    exp.DataType.Type.TIMESTAMPLTZ: "timestamp",
    exp.DataType.Type.TIMESTAMPTZ: "timestamp",
    exp.DataType.Type.TIMESTAMPNTZ: "timestamp_ntz",
}


def _cast(inner: TypedLiteral, target: str) -> object:
    if target in ("timestamp", "timestamp_ntz"):
        return _temporal_cast(inner.value, target)
    try:
        return cast_literal(inner.value, inner.type, target)
    except InexactError as reason:
        raise NotConstantError(str(reason)) from None


def _temporal_cast(value: object, target: str) -> dt.datetime:
    """A TIMESTAMP'..' or TIMESTAMP_NTZ'..' literal, or a cast of a string or date to one;
    a zone-less TIMESTAMP carries :data:`SESSION_ZONE` until binding."""
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        value = value.isoformat()
    if not isinstance(value, str):
        raise NotConstantError(f"CAST({value!r} AS {target})")
    try:
        parsed = timestamp_text(value)
    except InexactError as reason:  # other spellings Spark accepts are left to Spark
        raise NotConstantError(str(reason)) from None
    if target == "timestamp_ntz":
        if parsed.tzinfo is not None:
            raise NotConstantError(f"TIMESTAMP_NTZ of the zoned {value!r}")
        return parsed
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=SESSION_ZONE)
