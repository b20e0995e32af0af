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
import decimal
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from zorder.columns import resolve_column as resolve_name
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
    Or,
    Predicate,
    StartsWith,
    Unknown,
)
from zorder.skipping.visitor import PredicateVisitor, visit

__all__ = [
    "SESSION_ZONE",
    "AlwaysFalse",
    "AlwaysTrue",
    "And",
    "CompareOp",
    "Comparison",
    "InList",
    "IsNaN",
    "IsNull",
    "Not",
    "Or",
    "Predicate",
    "StartsWith",
    "Unknown",
    "and_",
    "bind",
    "is_utc",
    "not_",
    "or_",
    "resolve_column",
    "rewrite_not",
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

    def visit_is_null(self, node: IsNull) -> _Signed:
        return _Signed(node, replace(node, negated=not node.negated))

    def visit_is_nan(self, node: IsNaN) -> _Signed:
        return _Signed(node, replace(node, negated=not node.negated))

    def visit_starts_with(self, node: StartsWith) -> _Signed:
        return _Signed(node, replace(node, negated=not node.negated))

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
# Binding: column names resolved, literals brought into the column's domain

INTEGER_TYPES = frozenset({"tinyint", "smallint", "int", "bigint"})
FLOAT_TYPES = frozenset({"float", "double"})


def _to_number(value: Any) -> Any:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float | decimal.Decimal):
        return value
    if isinstance(value, str):
        try:
            return decimal.Decimal(value.strip())
        except decimal.InvalidOperation:
            return None
    return None


class _SessionZone(dt.tzinfo):
    """The zone of a TIMESTAMP literal written without one: Spark's session time zone.

    Which zone that is becomes known only when the predicate is bound, so a
    parsed literal carries this marker (offset 0) until then.
    """

    def utcoffset(self, when: dt.datetime | None) -> dt.timedelta:
        return dt.timedelta(0)

    def dst(self, when: dt.datetime | None) -> dt.timedelta:
        return dt.timedelta(0)

    def tzname(self, when: dt.datetime | None) -> str:
        return "session time zone"


SESSION_ZONE = _SessionZone()
_UTC_NAMES = {"utc", "z", "gmt", "etc/utc", "etc/gmt", "utc+00:00", "+00:00", "gmt+00:00", "uct"}


def is_utc(time_zone: str) -> bool:
    """Whether Spark's session time zone ``time_zone`` is UTC under some name."""
    return time_zone.strip().lower() in _UTC_NAMES


def _to_date(value: Any, *, utc_session: bool) -> Any:
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    if isinstance(value, str) and len(value.strip()) == 10:
        try:
            return dt.date.fromisoformat(value.strip())
        except ValueError:
            return None
    # Anything else is compared in the timestamp domain, where a date is
    # midnight in the session time zone: known here only for UTC.
    return _to_timestamp(value, aware=True) if utc_session else None


def _to_timestamp(value: Any, *, aware: bool, utc_session: bool = True) -> Any:
    if isinstance(value, dt.datetime):
        parsed = value
    elif isinstance(value, dt.date):
        parsed = dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    else:
        return None
    zoneless = parsed.tzinfo is None or parsed.tzinfo is SESSION_ZONE
    if aware:
        # Spark reads a literal without a zone in the session time zone; only
        # UTC is resolved here (other zones' offsets and DST gaps are left to
        # Spark: the comparison stays Unknown, which never skips wrongly).
        if not zoneless:
            return parsed
        return parsed.replace(tzinfo=dt.UTC) if utc_session else None
    return parsed.replace(tzinfo=None) if parsed.tzinfo is None else None


def coerce_literal(value: Any, type_name: str, *, time_zone: str = "UTC") -> Any:
    """``value`` in the domain of a ``type_name`` column; None when Spark's meaning is unclear.

    ``time_zone`` is Spark's session time zone, in which Spark reads
    timestamps written without a zone and casts dates to timestamps.
    """
    utc_session = is_utc(time_zone)
    if type_name in FLOAT_TYPES:
        # Spark compares a double column with any numeric literal as doubles.
        number = _to_number(value)
        return None if number is None else float(number)
    if type_name in INTEGER_TYPES or type_name.startswith("decimal"):
        number = _to_number(value)
        if isinstance(number, float) and math.isnan(number):
            return None
        return number
    if type_name == "string":
        return value if isinstance(value, str) else None
    if type_name == "date":
        return _to_date(value, utc_session=utc_session)
    if type_name == "timestamp":
        return _to_timestamp(value, aware=True, utc_session=utc_session)
    if type_name == "timestamp_ntz":
        return _to_timestamp(value, aware=False)
    if type_name == "boolean":
        return value if isinstance(value, bool) else None
    return None


_INTEGER_DIGITS = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 19}
_INTEGER_ORDER = ["tinyint", "smallint", "int", "bigint"]


def _decimal_shape(type_name: str) -> tuple[int, int] | None:
    if not type_name.startswith("decimal("):
        return None
    precision, scale = type_name[len("decimal(") : -1].split(",")
    return int(precision), int(scale)


def exact_widening(source: str, target: str) -> bool:
    """Does CAST(source AS target) keep every value and its order exactly?

    Only then can a comparison on the cast column be read on the column's
    own statistics. (int to double, for one, rounds large values.)
    """
    if source == target:
        return True
    if source in _INTEGER_ORDER and target in _INTEGER_ORDER:
        return _INTEGER_ORDER.index(source) <= _INTEGER_ORDER.index(target)
    if (source, target) in {("float", "double"), ("date", "timestamp"), ("date", "timestamp_ntz")}:
        return True
    target_shape = _decimal_shape(target)
    if target_shape is None:
        return False
    precision, scale = target_shape
    if source in _INTEGER_DIGITS:
        return precision - scale >= _INTEGER_DIGITS[source]
    source_shape = _decimal_shape(source)
    if source_shape is None:
        return False
    return scale >= source_shape[1] and precision - scale >= source_shape[0] - source_shape[1]


def resolve_column(name: str, columns: Mapping[str, str]) -> str:
    """The table's spelling of ``name`` in a filter, by :func:`zorder.columns.resolve_column`."""
    return resolve_name(name, columns, context="in filter")


class _Binder(PredicateVisitor[Predicate]):
    """:func:`bind`'s rules, node by node."""

    def __init__(self, columns: Mapping[str, str], time_zone: str) -> None:
        self.columns = columns
        self.time_zone = time_zone

    def _coerced(self, value: Any, name: str) -> Any:
        return coerce_literal(value, self.columns[name], time_zone=self.time_zone)

    def _changing_cast(self, name: str, cast: str | None) -> Unknown | None:
        if cast and not exact_widening(self.columns[name], cast):
            return Unknown(f"CAST({name} AS {cast}) may change values")
        return None

    def visit_true(self) -> Predicate:
        return AlwaysTrue()

    def visit_false(self) -> Predicate:
        return AlwaysFalse()

    def visit_unknown(self, node: Unknown) -> Predicate:
        return node

    def visit_comparison(self, node: Comparison) -> Predicate:
        name = resolve_column(node.column, self.columns)
        if unknown := self._changing_cast(name, node.cast):
            return unknown
        value = self._coerced(node.value, name)
        if value is None:
            return Unknown(f"literal {node.value!r} against {self.columns[name]} column {name}")
        return Comparison(node.op, name, value)

    def visit_in_list(self, node: InList) -> Predicate:
        name = resolve_column(node.column, self.columns)
        if unknown := self._changing_cast(name, node.cast):
            return unknown
        values = tuple(self._coerced(v, name) for v in node.values)
        if any(v is None for v in values):
            return Unknown(f"IN list against {self.columns[name]} column {name}")
        return InList(name, values, node.negated, node.has_null)

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
            return Unknown(f"prefix match on {self.columns[name]} column {name}")
        return StartsWith(name, node.prefix, node.negated)

    def visit_and(self, left: Predicate, right: Predicate) -> Predicate:
        return and_(left, right)

    def visit_or(self, left: Predicate, right: Predicate) -> Predicate:
        return or_(left, right)

    def visit_not(self, child: Predicate) -> Predicate:
        return not_(child)


def bind(predicate: Predicate, columns: Mapping[str, str], *, time_zone: str = "UTC") -> Predicate:
    """Resolve names (as :func:`zorder.columns.resolve_column` does) and coerce literals.

    ``columns`` maps each column name to its Spark type name. An unknown
    column raises ColumnNotFoundError listing the table's columns; a literal
    whose meaning against the column is unclear makes that leaf
    :class:`Unknown`. ``time_zone`` is the Spark session's
    (``spark.sql.session.timeZone``).
    """
    return visit(predicate, _Binder(columns, time_zone))
