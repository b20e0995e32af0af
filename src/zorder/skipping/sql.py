"""SQL boolean text -> unbound predicate tree, parsed with sqlglot (Spark dialect)."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from zorder.errors import FilterParseError, InvalidArgumentError, InvalidArgumentTypeError
from zorder.skipping.predicates import (
    SESSION_ZONE,
    AlwaysFalse,
    AlwaysTrue,
    And,
    CompareOp,
    Comparison,
    InList,
    IsNaN,
    IsNull,
    Not,
    Or,
    Predicate,
    StartsWith,
    Unknown,
    and_,
    flip,
    not_,
    or_,
)

__all__ = [
    "negated_null_comparison",
    "parse_predicate",
    "parse_unfolded",
    "referenced_columns",
    "sql_literal",
]

_COMPARISONS: dict[type[exp.Expression], CompareOp] = {
    exp.EQ: "=",
    exp.NullSafeEQ: "<=>",
    exp.NEQ: "!=",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
}


class _NotALiteralError(Exception):
    pass


_NULL = object()


def parse_predicate(text: str) -> Predicate:
    """Parse a Spark SQL boolean expression into an unbound predicate tree.

    Raises :class:`~zorder.errors.FilterParseError`, with the line and column,
    for text that does not parse.
    Anything that parses but that statistics cannot decide becomes
    :class:`Unknown` (never an error, never a wrong skip).
    """
    return _convert(_parse(text), fold=True)


def parse_unfolded(text: str) -> Predicate:
    """:func:`parse_predicate` without folding: every leaf of the text stays in the tree.

    Folding drops what cannot change which files may match (``x AND FALSE``
    is FALSE whatever ``x`` is); a row evaluator that must refuse what it
    cannot answer exactly has to see every leaf.
    """
    return _convert(_parse(text), fold=False)


def referenced_columns(text: str) -> set[str]:
    """The names of every column the SQL boolean expression ``text`` refers to."""
    return {str(column.name) for column in _parse(text).find_all(exp.Column)}


def negated_null_comparison(text: str) -> str | None:
    """The first comparison with a NULL literal under a NOT in ``text``, as SQL, or None.

    The parsed tree folds ``x = NULL`` to FALSE, which is all skipping needs
    (NULL and FALSE both keep no row), but under NOT the two differ:
    ``NOT (x = NULL)`` keeps no row, ``NOT FALSE`` keeps every one.
    """
    for node in _parse(text).walk():
        operands: list[exp.Expression] = []
        if type(node) in _COMPARISONS and not isinstance(node, exp.NullSafeEQ):
            operands = [node.this, node.expression]
        elif isinstance(node, exp.Between):
            operands = [node.args["low"], node.args["high"]]
        if any(_is_null(o) for o in operands) and node.find_ancestor(exp.Not) is not None:
            return str(node.sql(dialect="spark"))
    return None


def _is_null(node: exp.Expression) -> bool:
    try:
        return _literal(node) is _NULL
    except _NotALiteralError:
        return False


def _parse(text: str) -> exp.Expression:
    if not isinstance(text, str) or not text.strip():
        raise InvalidArgumentError(f"filter must be non-empty SQL text, got {text!r}")
    try:
        tree = sqlglot.parse_one(text, dialect="spark")
    except ParseError as error:
        detail = error.errors[0] if error.errors else {}
        line, column = detail.get("line"), detail.get("col")
        where = f" at line {line}, column {column}" if detail else ""
        description = detail.get("description", str(error)) if detail else str(error)
        raise FilterParseError(
            f"cannot parse filter {text!r}{where}: {description}",
            text=text,
            line=line,
            column=column,
        ) from None
    if not isinstance(tree, exp.Expression):
        raise FilterParseError(f"filter {text!r} is not an expression", text=text)
    return tree


def _column_name(node: exp.Expression) -> str | None:
    if isinstance(node, exp.Column) and not node.table:
        return str(node.name)
    if isinstance(node, exp.Paren):
        return _column_name(node.this)
    return None


def _cast_column(node: exp.Expression) -> tuple[str, str | None] | None:
    """(column, cast type or None) for ``col`` or ``CAST(col AS type)``."""
    name = _column_name(node)
    if name is not None:
        return name, None
    if isinstance(node, exp.Paren):
        return _cast_column(node.this)
    if isinstance(node, exp.Cast):  # Spark SQL CAST parses as TryCast: both fine here
        inner = _column_name(node.this)
        if inner is not None:
            return inner, node.to.sql(dialect="spark").lower().replace(" ", "")
    return None


def _literal(node: exp.Expression) -> Any:
    """Python value of a literal expression (``_NULL`` for NULL); raises _NotALiteralError."""
    if isinstance(node, exp.Paren):
        return _literal(node.this)
    if isinstance(node, exp.Null):
        return _NULL
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Literal):
        if node.is_string:
            return str(node.this)
        text = str(node.this)
        try:
            return int(text)
        except ValueError:
            return decimal.Decimal(text)
    if isinstance(node, exp.Neg):
        value = _literal(node.this)
        if isinstance(value, int | float | decimal.Decimal) and not isinstance(value, bool):
            return -value
        raise _NotALiteralError
    if isinstance(node, exp.Cast):  # also TryCast, and typed literals DATE'..'
        value = _literal(node.this)
        return _cast(value, node.to)
    raise _NotALiteralError


def _cast(value: Any, to: exp.DataType) -> Any:
    if value is _NULL:
        return _NULL
    kind = to.this
    types = exp.DataType.Type
    try:
        if kind == types.DATE:
            return dt.date.fromisoformat(str(value).strip()[:10])
        if kind in (types.TIMESTAMP, types.TIMESTAMPLTZ, types.TIMESTAMPTZ):
            parsed = dt.datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=SESSION_ZONE)
        if kind == types.TIMESTAMPNTZ:
            return dt.datetime.fromisoformat(str(value).strip())
        if kind in (types.DOUBLE, types.FLOAT):
            return float(value)
        if kind == types.DECIMAL:
            return decimal.Decimal(str(value))
        if kind in (types.INT, types.BIGINT, types.SMALLINT, types.TINYINT):
            return int(decimal.Decimal(str(value)).to_integral_value(rounding=decimal.ROUND_DOWN))
        if kind in (types.VARCHAR, types.TEXT, types.CHAR):
            return str(value)
    except (ValueError, decimal.InvalidOperation):
        raise _NotALiteralError from None
    raise _NotALiteralError


def _comparison(op: CompareOp, left: exp.Expression, right: exp.Expression) -> Predicate:
    target, other = _cast_column(left), right
    if target is None:
        target, other, op = _cast_column(right), left, flip(op)
    if target is None:
        return Unknown("comparison without a plain column on one side")
    column, cast = target
    try:
        value = _literal(other)
    except _NotALiteralError:
        return Unknown("comparison with something other than a literal")
    if value is _NULL:
        if op == "<=>":
            return IsNull(column)
        return AlwaysFalse()  # x = NULL is NULL: never TRUE
    return Comparison(op, column, value, cast)


def _like(node: exp.Like) -> Predicate:
    column = _column_name(node.this)
    if column is None or node.args.get("escape") is not None:
        return Unknown("LIKE on an expression or with ESCAPE")
    try:
        pattern = _literal(node.expression)
    except _NotALiteralError:
        return Unknown("LIKE with a non-literal pattern")
    if not isinstance(pattern, str):
        return Unknown("LIKE with a non-string pattern")
    body = pattern[:-1] if pattern.endswith("%") else pattern
    if any(c in body for c in "%_\\"):
        return Unknown("LIKE pattern with inner wildcards")
    if pattern.endswith("%"):
        return StartsWith(column, body)
    return Comparison("=", column, body)


def _convert(node: exp.Expression, *, fold: bool) -> Predicate:
    converted = _convert_node(node, fold=fold)
    if isinstance(converted, Unknown) and not isinstance(
        node, exp.Paren | exp.Not | exp.And | exp.Or
    ):
        # Name the construct: the reason alone does not say which part of a long filter.
        return Unknown(f"{converted.reason} ({node.sql(dialect='spark')})")
    return converted


def _convert_node(node: exp.Expression, *, fold: bool) -> Predicate:
    both, either, negation = (and_, or_, not_) if fold else (And, Or, Not)
    if isinstance(node, exp.Paren):
        return _convert(node.this, fold=fold)
    if isinstance(node, exp.And):
        return both(_convert(node.this, fold=fold), _convert(node.expression, fold=fold))
    if isinstance(node, exp.Or):
        return either(_convert(node.this, fold=fold), _convert(node.expression, fold=fold))
    if isinstance(node, exp.Not):
        return negation(_convert(node.this, fold=fold))
    if isinstance(node, exp.Boolean):
        return AlwaysTrue() if node.this else AlwaysFalse()
    op = _COMPARISONS.get(type(node))
    if op is not None:
        return _comparison(op, node.this, node.expression)
    if isinstance(node, exp.Between):
        return both(
            _comparison(">=", node.this, node.args["low"]),
            _comparison("<=", node.this, node.args["high"]),
        )
    if isinstance(node, exp.In):
        target = _cast_column(node.this)
        if target is None or node.args.get("query") is not None:
            return Unknown("IN on an expression or a subquery")
        listed, cast = target
        try:
            values = [_literal(v) for v in node.expressions]
        except _NotALiteralError:
            return Unknown("IN list with non-literals")
        present = tuple(v for v in values if v is not _NULL)
        return InList(listed, present, has_null=len(present) < len(values), cast=cast)
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        column = _column_name(node.this)
        return IsNull(column) if column is not None else Unknown("IS NULL on an expression")
    if isinstance(node, exp.Like):
        return _like(node)
    if isinstance(node, exp.StartsWith):
        column = _column_name(node.this)
        try:
            prefix = _literal(node.expression)
        except _NotALiteralError:
            return Unknown("startswith with a non-literal prefix")
        if column is None or not isinstance(prefix, str):
            return Unknown("startswith on an expression")
        return StartsWith(column, prefix)
    if isinstance(node, exp.IsNan):
        column = _column_name(node.this)
        return IsNaN(column) if column is not None else Unknown("isnan on an expression")
    return Unknown(f"{type(node).__name__} is not understood by statistics")


def sql_literal(value: Any) -> str:
    """Spark SQL text for a Python value, such that parsing it gives the value back."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            word = "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
            return f"CAST('{word}' AS DOUBLE)"
        return f"{value!r}D"
    if isinstance(value, decimal.Decimal):
        return f"{value}BD"
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:  # with its offset: Spark then ignores the session zone
            utc = value.astimezone(dt.UTC).replace(tzinfo=None)
            return f"TIMESTAMP'{utc.isoformat(sep=' ', timespec='microseconds')}+00:00'"
        return f"TIMESTAMP_NTZ'{value.isoformat(sep=' ', timespec='microseconds')}'"
    if isinstance(value, dt.date):
        return f"DATE'{value.isoformat()}'"
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, bytes):
        return f"X'{value.hex()}'"
    raise InvalidArgumentTypeError(f"no SQL literal for {type(value).__name__} {value!r}")
