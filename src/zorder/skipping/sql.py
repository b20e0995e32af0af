"""SQL boolean text -> unbound predicate tree, parsed with sqlglot (Spark dialect)."""

from __future__ import annotations

import datetime as dt
import decimal
import re
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from zorder.errors import FilterParseError, InvalidArgumentError, InvalidArgumentTypeError
from zorder.skipping.coercion import InexactError, cast_literal, number_literal, timestamp_text
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
    TypedLiteral,
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
    for identifier in tree.find_all(exp.Identifier):
        name = str(identifier.this)
        if not identifier.quoted and not _PLAIN_IDENTIFIER.fullmatch(name):
            # Spark's lexer takes only ASCII letters, digits and _ in an unquoted name.
            raise FilterParseError(
                f"cannot parse filter {text!r}: the name {name} must be quoted as `{name}` "
                "(Spark reads only ASCII letters, digits and _ in unquoted names)",
                text=text,
            )
    for number in tree.find_all(exp.Literal):
        if not number.is_string:
            try:
                number_literal(str(number.this))
            except ValueError as error:
                message = f"cannot parse filter {text!r}: {error}"
                raise FilterParseError(message, text=text) from None
    return tree


_PLAIN_IDENTIFIER = re.compile(r"[A-Za-z0-9_]+")


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
            return inner, spark_type_name(node.to) or node.to.sql(dialect="spark").lower()
    return None


def _literal(node: exp.Expression) -> Any:
    """The :class:`TypedLiteral` an expression of literals stands for (``_NULL`` for NULL).

    Raises _NotALiteralError for anything else, and for what this module
    cannot evaluate exactly as Spark does (a cast ANSI Spark may refuse).
    """
    if isinstance(node, exp.Paren):
        return _literal(node.this)
    if isinstance(node, exp.Null):
        return _NULL
    if isinstance(node, exp.Boolean):
        return TypedLiteral(bool(node.this), "boolean")
    if isinstance(node, exp.Literal):
        if node.is_string:
            return TypedLiteral(str(node.this), "string")
        try:
            value, type_name = number_literal(str(node.this))
        except ValueError:  # _parse has refused the text already
            raise _NotALiteralError from None
        return TypedLiteral(value, type_name)
    if isinstance(node, exp.Neg):
        inner = _literal(node.this)
        if inner is _NULL or isinstance(inner.value, bool):
            raise _NotALiteralError
        if isinstance(inner.value, decimal.Decimal):
            return TypedLiteral(inner.value.copy_negate(), inner.type)  # exact: no 28-digit context
        if isinstance(inner.value, int | float):
            return TypedLiteral(-inner.value, inner.type)
        raise _NotALiteralError
    if isinstance(node, exp.Cast):  # CAST, TRY_CAST (safe), DATE'..', and suffixes: 5L, 1.5F
        inner = _literal(node.this)
        if inner is _NULL:
            return _NULL
        target = spark_type_name(node.to)
        if target is None:
            raise _NotALiteralError
        return TypedLiteral(_cast(inner, target), target)
    raise _NotALiteralError


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


def _cast(inner: TypedLiteral, target: str) -> Any:
    if target in ("timestamp", "timestamp_ntz"):
        return _temporal_cast(inner.value, target)
    try:
        return cast_literal(inner.value, inner.type, target)
    except InexactError:
        raise _NotALiteralError from None


def _temporal_cast(value: Any, target: str) -> dt.datetime:
    """A TIMESTAMP'..' or TIMESTAMP_NTZ'..' literal, or a cast of a string or date to one;
    a zone-less TIMESTAMP carries :data:`SESSION_ZONE` until binding."""
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        value = value.isoformat()
    if not isinstance(value, str):
        raise _NotALiteralError
    try:
        parsed = timestamp_text(value)
    except InexactError:
        raise _NotALiteralError from None  # other spellings Spark accepts are left to Spark
    if target == "timestamp_ntz":
        if parsed.tzinfo is not None:
            raise _NotALiteralError
        return parsed
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=SESSION_ZONE)


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
        if cast is not None:  # Spark may refuse the cast itself: binding must see it
            return Unknown("a cast column compared with NULL")
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
    if pattern is _NULL or not isinstance(pattern.value, str):
        return Unknown("LIKE with a non-string pattern")
    text = pattern.value
    body = text[:-1] if text.endswith("%") else text
    if any(c in body for c in "%_\\"):
        return Unknown("LIKE pattern with inner wildcards")
    if text.endswith("%"):
        return StartsWith(column, body)
    # LIKE compares strings: a column of another type is cast to one, which binding refuses.
    return Comparison("=", column, TypedLiteral(body, "string"), cast="string")


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
    if node.args.get("negate"):  # x NOT LIKE p, x NOT ILIKE p: sqlglot flags the node
        positive = node.copy()
        positive.set("negate", None)
        return negation(_convert(positive, fold=fold))
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
    if isinstance(node, exp.NullSafeNEQ):  # x IS DISTINCT FROM v
        return negation(_comparison("<=>", node.this, node.expression))
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
        if column is None or prefix is _NULL or not isinstance(prefix.value, str):
            return Unknown("startswith on an expression")
        return StartsWith(column, prefix.value)
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
