"""Predicate trees for file skipping: unbound (names as written) and bound (to a schema).

Construction folds what it can (``AND TRUE``, ``OR FALSE``, ``NOT NOT``) and
:func:`rewrite_not` pushes every NOT down to the leaves, so the evaluator
never sees one (NOT of :class:`Unknown` is :class:`Unknown`).
:class:`Unknown` stands for anything that statistics cannot decide (UDFs,
arithmetic on columns, other functions): it always "might match", negated or
not. The nodes are defined in :mod:`zorder.skipping.nodes`; every walk over
them is a :class:`~zorder.skipping.visitor.PredicateVisitor`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from zorder.columns import resolve_column as resolve_name
from zorder.errors import FilterEvaluationError, InvalidArgumentError, UnsupportedFilterError
from zorder.skipping.coercion import (
    FLOAT_TYPES,
    INTEGER_ORDER,
    INTEGER_TYPES,
    ComputedLiteral,
    InexactError,
    MalformedLiteralError,
    comparison_type,
    convert,
    decimal_shape,
    same_as_text,
    timestamp_text,
)
from zorder.skipping.nodes import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    CompareOp,
    Comparison,
    InList,
    IsNaN,
    IsNull,
    Not,
    NullComparison,
    Or,
    PartComparison,
    Predicate,
    StartsWith,
    TypedLiteral,
    Unknown,
)
from zorder.skipping.parts import TIME_PARTS, part_value
from zorder.skipping.visitor import PredicateVisitor, visit
from zorder.skipping.zones import SESSION_ZONE, session_zone

__all__ = [
    "FLOAT_TYPES",
    "INTEGER_TYPES",
    "AlwaysFalse",
    "AlwaysTrue",
    "And",
    "Bound",
    "CompareOp",
    "Comparison",
    "InList",
    "IsNaN",
    "IsNull",
    "Not",
    "NullComparison",
    "Or",
    "PartComparison",
    "Predicate",
    "StartsWith",
    "TypedLiteral",
    "Unknown",
    "and_",
    "bind",
    "bind_exact",
    "exact_widening",
    "not_",
    "or_",
    "resolve_column",
    "rewrite_not",
    "unsupported",
]

_FLIPPED: dict[str, CompareOp] = {
    "=": "=",
    "<=>": "<=>",
    "!=": "!=",
    "<": ">",
    "<=": ">=",
    ">": "<",
    ">=": "<=",
}
_NEGATED: dict[str, CompareOp] = {"=": "!=", "!=": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def and_(left: Predicate, right: Predicate) -> Predicate:
    if isinstance(left, AlwaysFalse) or isinstance(right, AlwaysFalse):
        return AlwaysFalse()
    if isinstance(left, AlwaysTrue):
        return right
    if isinstance(right, AlwaysTrue):
        return left
    return And(left, right)


def or_(left: Predicate, right: Predicate) -> Predicate:
    if isinstance(left, AlwaysTrue) or isinstance(right, AlwaysTrue):
        return AlwaysTrue()
    if isinstance(left, AlwaysFalse):
        return right
    if isinstance(right, AlwaysFalse):
        return left
    return Or(left, right)


def not_(child: Predicate) -> Predicate:
    if isinstance(child, NullComparison):
        return child  # NOT NULL is NULL
    if isinstance(child, Not):
        return child.child
    return Not(child)


@dataclass(frozen=True)
class _Signed:
    """A subtree with its NOTs pushed to the leaves, as it stands and negated."""

    plain: Predicate
    negated: Predicate


class _NotPusher(PredicateVisitor[_Signed]):
    """Folds every subtree to both of its polarities; a NOT above it just picks the other.

    Pushing a NOT down needs what is under it, which a fold does not see;
    carrying both polarities up gives it that. (Negating the child's rewritten
    form instead would differ: NOT NOT (x <=> v) is x <=> v, while the
    negation of Unknown, which NOT (x <=> v) rewrites to, is Unknown.)
    """

    def visit_true(self) -> _Signed:
        return _Signed(AlwaysTrue(), AlwaysFalse())

    def visit_false(self) -> _Signed:
        return _Signed(AlwaysFalse(), AlwaysTrue())

    def visit_unknown(self, node: Unknown) -> _Signed:
        return _Signed(node, node)

    def visit_comparison(self, node: Comparison) -> _Signed:
        if node.op == "<=>":
            # NOT (x <=> v) is TRUE for NULL x too: statistics cannot cheaply say no.
            return _Signed(node, Unknown("NOT <=>"))
        return _Signed(node, replace(node, op=_NEGATED[node.op]))

    def visit_in_list(self, node: InList) -> _Signed:
        return _Signed(node, replace(node, negated=not node.negated))

    def visit_null_comparison(self, node: NullComparison) -> _Signed:
        return _Signed(node, node)  # NOT NULL is NULL

    def visit_is_null(self, node: IsNull) -> _Signed:
        return _Signed(node, replace(node, negated=not node.negated))

    def visit_is_nan(self, node: IsNaN) -> _Signed:
        return _Signed(node, replace(node, negated=not node.negated))

    def visit_starts_with(self, node: StartsWith) -> _Signed:
        return _Signed(node, replace(node, negated=not node.negated))

    def visit_part_comparison(self, node: PartComparison) -> _Signed:
        if node.op == "<=>":
            return _Signed(node, Unknown("NOT <=>"))
        return _Signed(node, replace(node, op=_NEGATED[node.op]))

    def visit_and(self, left: _Signed, right: _Signed) -> _Signed:
        return _Signed(and_(left.plain, right.plain), or_(left.negated, right.negated))

    def visit_or(self, left: _Signed, right: _Signed) -> _Signed:
        return _Signed(or_(left.plain, right.plain), and_(left.negated, right.negated))

    def visit_not(self, child: _Signed) -> _Signed:
        return _Signed(child.negated, child.plain)


def rewrite_not(predicate: Predicate) -> Predicate:
    """Push NOT to the leaves (De Morgan; inverse comparisons), keeping SQL's semantics.

    A row is kept when the predicate is TRUE; NULL is not TRUE either way, so
    NOT (x < 5) is x >= 5, and a NULL x satisfies neither.
    """
    return visit(predicate, _NotPusher()).plain


def flip(op: CompareOp) -> CompareOp:
    """The operator with its sides swapped: ``5 < x`` is ``x > 5``."""
    return _FLIPPED[op]


# --------------------------------------------------------------------------
# Binding: column names resolved, literals brought into the type Spark compares in


def unsupported(what: str) -> UnsupportedFilterError:
    """The error for a filter construct ``what`` that only Spark answers exactly."""
    return UnsupportedFilterError(
        f"cannot evaluate {what} outside Spark with Spark's meaning; "
        "read it with zorder.read(spark, path, where) (CLI: zorder query --spark)"
    )


_INTEGER_DIGITS = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 19}


def exact_widening(source: str, target: str) -> bool:
    """Does CAST(source AS target) keep every value and its order exactly?

    Only then can a comparison on the cast column be read on the column's
    own statistics. (int to double, for one, rounds large values.)
    """
    if source == target:
        return True
    if source in INTEGER_TYPES and target in INTEGER_TYPES:
        return INTEGER_ORDER.index(source) <= INTEGER_ORDER.index(target)
    if (source, target) in {("float", "double"), ("date", "timestamp"), ("date", "timestamp_ntz")}:
        return True
    target_shape = decimal_shape(target)
    if target_shape is None:
        return False
    precision, scale = target_shape
    if source in _INTEGER_DIGITS:
        return precision - scale >= _INTEGER_DIGITS[source]
    source_shape = decimal_shape(source)
    if source_shape is None:
        return False
    return scale >= source_shape[1] and precision - scale >= source_shape[0] - source_shape[1]


def resolve_column(name: str, columns: Mapping[str, str]) -> str:
    """The table's spelling of ``name`` in a filter, by :func:`zorder.columns.resolve_column`."""
    return resolve_name(name, columns, context="in filter")


def _scale(type_name: str) -> int:
    shape = decimal_shape(type_name)
    return shape[1] if shape is not None else 0


def _domain(column_type: str, common: str) -> str | None:
    """What the column's values become before Spark compares them in ``common``: None for
    themselves (or a conversion that keeps their order and equalities, such as a float's
    double), else ``common`` (a double, a decimal of smaller scale); InexactError for a cast
    this module does not follow (a string column cast to a number, a timestamp_ntz
    through the session zone)."""
    if common == column_type:
        return None
    numeric = column_type in INTEGER_TYPES or column_type.startswith("decimal")
    if common == "double":
        if column_type == "float":
            return None
        if numeric:
            return common
    elif common in INTEGER_TYPES and column_type in INTEGER_TYPES:
        return None
    elif decimal_shape(common) is not None and numeric:
        return common if _scale(column_type) > _scale(common) else None
    elif (column_type, common) in {("date", "timestamp"), ("date", "timestamp_ntz")}:
        return None  # a date is midnight: the evaluators compare it as such
    raise InexactError(f"Spark casts the {column_type} column to {common} to compare")


class _Binder(PredicateVisitor[Predicate]):
    """:func:`bind`'s rules, node by node; ``strict`` refuses where lenient binding
    answers :class:`Unknown` (the row evaluator may not keep a row it is unsure of)."""

    def __init__(self, columns: Mapping[str, str], zone: dt.tzinfo | None, strict: bool) -> None:
        self.columns = columns
        self.zone = zone
        self.strict = strict

    def _unknown(self, reason: str) -> Predicate:
        if self.strict:
            raise unsupported(reason)
        return Unknown(reason)

    def _compared_as(self, name: str, cast: str | None) -> str:
        """The column's type as the comparison sees it, through a CAST in the text: one
        that keeps every value (a wider type), or a numeric column's double."""
        column_type = self.columns[name]
        if cast is None or exact_widening(column_type, cast):
            return cast or column_type
        if cast == "double" and (column_type in INTEGER_TYPES or column_type.startswith("decimal")):
            return cast
        raise InexactError(f"CAST({name} AS {cast}) may change values")

    def _bound_values(
        self, name: str, cast: str | None, literals: tuple[Any, ...], *, in_list: bool
    ) -> tuple[tuple[Any, ...], str | None]:
        """The literals in the type Spark compares in, and the column's domain there."""
        column_type = self.columns[name]
        common = comparison_type(self._compared_as(name, cast), literals, in_list=in_list)
        domain = _domain(column_type, common)  # a widening CAST keeps the values as they are
        return tuple(self._value(v, column_type, common) for v in literals), domain

    @staticmethod
    def _check_list_strings(column_type: str, literals: tuple[Any, ...]) -> None:
        if column_type == "string":
            return
        for literal in literals:
            text = literal.value if isinstance(literal, TypedLiteral) else literal
            if isinstance(text, str) and not same_as_text(text, column_type):
                raise InexactError(
                    f"the string {text!r} in an IN list against a {column_type} column "
                    "(with ANSI off, Spark compares the list as strings)"
                )

    def _value(self, literal: Any, column_type: str, common: str) -> Any:
        if common in ("timestamp", "timestamp_ntz"):
            return self._instant(literal, column_type, common)
        return convert(literal, common)

    def _instant(self, literal: Any, column_type: str, common: str) -> dt.datetime:
        """A timestamp literal (or a date or a string Spark casts to one) as the instant
        Spark compares: zoned in the session's zone for ``timestamp``, naive for
        ``timestamp_ntz``."""
        raw = literal.value if isinstance(literal, TypedLiteral) else literal
        if isinstance(raw, str):
            raw = timestamp_text(raw)
            if common == "timestamp_ntz":  # a zone the string names is dropped (Spark 4.1)
                raw = raw.replace(tzinfo=None)
        elif isinstance(raw, dt.date) and not isinstance(raw, dt.datetime):
            raw = dt.datetime(raw.year, raw.month, raw.day)
        if not isinstance(raw, dt.datetime):
            raise InexactError(f"the literal {raw!r} as a timestamp")
        if common == "timestamp_ntz":
            if raw.tzinfo is not None:
                raise InexactError(f"the zoned timestamp {raw} against a timestamp_ntz")
            return raw
        if raw.tzinfo is None or raw.tzinfo is SESSION_ZONE:
            if self.zone is None:
                raise InexactError(
                    f"the timestamp {raw.replace(tzinfo=None)} in the session's zone"
                )
            raw = raw.replace(tzinfo=self.zone)
        if column_type == "date" and self.zone is not dt.UTC:
            # A date is midnight in the session's zone; the evaluators read it as UTC's.
            raise InexactError(f"a timestamp against a date column outside a UTC session ({raw})")
        return raw

    def _bind(self, node: Comparison | InList) -> Predicate:
        name = resolve_column(node.column, self.columns)
        literals = (node.value,) if isinstance(node, Comparison) else node.values
        compared = node.cast or self.columns[name]
        if isinstance(node, Comparison) and _beyond_long(node, compared):
            # Spark makes it a constant, NULL rows included, where the decimal is written as
            # a literal (DecimalPrecision), and keeps NULL where it computes it (see
            # zorder.skipping.logic._beyond_long).
            if isinstance(node.value, ComputedLiteral):
                return self._unknown(f"{name} compared with a decimal beyond BIGINT's range")
            above = node.value.value > 0
            holds = node.op in ("<", "<=") if above else node.op in (">", ">=")
            return AlwaysTrue() if holds else AlwaysFalse()
        try:
            if isinstance(node, InList):
                self._check_list_strings(self.columns[name], literals)
            values, domain = self._bound_values(
                name, node.cast, literals, in_list=isinstance(node, InList)
            )
        except MalformedLiteralError as malformed:
            if self.strict:  # rows are read with ANSI's meaning: Spark raises as this does
                raise FilterEvaluationError(malformed.spark_error) from None
            return self._unknown(f"{malformed} (column {name} is {self.columns[name]})")
        except InexactError as reason:
            return self._unknown(f"{reason} (column {name} is {self.columns[name]})")
        if isinstance(node, Comparison):
            return Comparison(node.op, name, values[0], domain=domain)
        return InList(name, values, node.negated, node.has_null, domain=domain)

    def visit_true(self) -> Predicate:
        return AlwaysTrue()

    def visit_false(self) -> Predicate:
        return AlwaysFalse()

    def visit_unknown(self, node: Unknown) -> Predicate:
        return self._unknown(node.reason or "this filter")

    def visit_comparison(self, node: Comparison) -> Predicate:
        return self._bind(node)

    def visit_in_list(self, node: InList) -> Predicate:
        return self._bind(node)

    def visit_null_comparison(self, node: NullComparison) -> Predicate:
        return NullComparison(node.op, resolve_column(node.column, self.columns))

    def visit_is_null(self, node: IsNull) -> Predicate:
        return IsNull(resolve_column(node.column, self.columns), node.negated)

    def visit_is_nan(self, node: IsNaN) -> Predicate:
        name = resolve_column(node.column, self.columns)
        if self.columns[name] not in FLOAT_TYPES:
            return AlwaysTrue() if node.negated else AlwaysFalse()
        return IsNaN(name, node.negated)

    def visit_starts_with(self, node: StartsWith) -> Predicate:
        name = resolve_column(node.column, self.columns)
        if self.columns[name] != "string":
            return self._unknown(f"prefix match on {self.columns[name]} column {name}")
        return StartsWith(name, node.prefix, node.negated)

    def visit_part_comparison(self, node: PartComparison) -> Predicate:
        name = resolve_column(node.column, self.columns)
        shown = f"{node.part}({name})"
        if self.strict:
            raise unsupported(f"{shown} (a part of a date or timestamp column)")
        column_type = self.columns[name]
        value = part_value(node.value)
        if value is None:
            return Unknown(f"{shown} compared with a {getattr(node.value, 'type', '?')}")
        if column_type not in ("timestamp", "timestamp_ntz", "date") or (
            column_type == "date" and node.part in TIME_PARTS
        ):
            return Unknown(f"{shown} of a {column_type} column")
        if column_type == "timestamp" and self.zone is None:
            return Unknown(f"{shown} in an unknown session zone")
        return PartComparison(node.part, node.op, name, value, self.zone)

    # Strict binding keeps every node: the row evaluator must see (and refuse) each leaf.
    def visit_and(self, left: Predicate, right: Predicate) -> Predicate:
        return And(left, right) if self.strict else and_(left, right)

    def visit_or(self, left: Predicate, right: Predicate) -> Predicate:
        return Or(left, right) if self.strict else or_(left, right)

    def visit_not(self, child: Predicate) -> Predicate:
        return Not(child) if self.strict else not_(child)


def _beyond_long(node: Comparison, compared_as: str) -> bool:
    """An integral column ordered against a decimal literal beyond BIGINT's range."""
    value = node.value
    if compared_as not in INTEGER_TYPES or node.op not in ("<", "<=", ">", ">="):
        return False
    if not isinstance(value, TypedLiteral) or not value.type.startswith("decimal("):
        return False
    return not -(2**63) <= value.value <= 2**63 - 1


@dataclass(frozen=True)
class Bound:
    """A predicate tree bound to a table by :func:`bind` or :func:`bind_exact`: names
    resolved, literals in the types Spark compares in.

    A type of its own so that mypy refuses an unbound tree (names as written,
    :class:`TypedLiteral` values) where statistics or rows are evaluated; only binding
    makes one. ``columns`` are the column types it was bound against.
    """

    tree: Predicate
    columns: Mapping[str, str]


def bind(predicate: Predicate, columns: Mapping[str, str], *, time_zone: str = "UTC") -> Bound:
    """Resolve names (as :func:`zorder.columns.resolve_column` does) and coerce literals.

    ``columns`` maps each column name to its Spark type name. An unknown
    column raises ColumnNotFoundError listing the table's columns; a literal
    whose meaning against the column is unclear makes that leaf
    :class:`Unknown`. ``time_zone`` is the Spark session's
    (``spark.sql.session.timeZone``).
    """
    try:
        zone: dt.tzinfo | None = session_zone(time_zone)
    except InvalidArgumentError:
        zone = None  # zone-less timestamps then decide nothing
    return Bound(visit(predicate, _Binder(columns, zone, strict=False)), columns)


def bind_exact(
    predicate: Predicate, columns: Mapping[str, str], *, time_zone: str = "UTC"
) -> Bound:
    """:func:`bind` for the row evaluator: every leaf kept, and an
    :class:`~zorder.errors.UnsupportedFilterError` where :func:`bind` would answer
    :class:`Unknown`."""
    return Bound(visit(predicate, _Binder(columns, session_zone(time_zone), strict=True)), columns)
