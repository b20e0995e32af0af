"""Predicate trees for file skipping: unbound (names as written) and bound (to a schema).

Construction folds what it can (``AND TRUE``, ``OR FALSE``, ``NOT NOT``) and
:func:`rewrite_not` pushes every NOT down to the leaves, so the evaluator
never sees one except around :class:`Unknown`. :class:`Unknown` stands for
anything that statistics cannot decide (UDFs, arithmetic on columns, other
functions): it always "might match", negated or not.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from zorder.errors import ColumnNotFoundError

__all__ = [
    "SESSION_ZONE",
    "AlwaysFalse",
    "AlwaysTrue",
    "And",
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

CompareOp = Literal["=", "<=>", "!=", "<", "<=", ">", ">="]
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


@dataclass(frozen=True)
class AlwaysTrue:
    pass


@dataclass(frozen=True)
class AlwaysFalse:
    pass


@dataclass(frozen=True)
class Unknown:
    """Statistics cannot decide this: might match, and so might its negation."""

    reason: str = ""


@dataclass(frozen=True)
class Comparison:
    op: CompareOp
    column: str
    value: Any  # after binding: in the column's domain; never None
    cast: str | None = None  # unbound only: CAST(column AS cast) in the text


@dataclass(frozen=True)
class InList:
    column: str
    values: tuple[Any, ...]  # non-null values
    negated: bool = False
    has_null: bool = False  # NULL among the listed values
    cast: str | None = None  # unbound only, as in Comparison


@dataclass(frozen=True)
class IsNull:
    column: str
    negated: bool = False


@dataclass(frozen=True)
class IsNaN:
    column: str
    negated: bool = False


@dataclass(frozen=True)
class StartsWith:
    column: str
    prefix: str
    negated: bool = False


@dataclass(frozen=True)
class And:
    left: Predicate
    right: Predicate


@dataclass(frozen=True)
class Or:
    left: Predicate
    right: Predicate


@dataclass(frozen=True)
class Not:
    child: Predicate


Predicate = (
    AlwaysTrue
    | AlwaysFalse
    | Unknown
    | Comparison
    | InList
    | IsNull
    | IsNaN
    | StartsWith
    | And
    | Or
    | Not
)


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


def rewrite_not(predicate: Predicate) -> Predicate:
    """Push NOT to the leaves (De Morgan; inverse comparisons), keeping SQL's semantics.

    A row is kept when the predicate is TRUE; NULL is not TRUE either way, so
    NOT (x < 5) is x >= 5, and a NULL x satisfies neither.
    """
    if isinstance(predicate, And):
        return and_(rewrite_not(predicate.left), rewrite_not(predicate.right))
    if isinstance(predicate, Or):
        return or_(rewrite_not(predicate.left), rewrite_not(predicate.right))
    if not isinstance(predicate, Not):
        return predicate
    child = predicate.child
    match child:
        case Not():
            return rewrite_not(child.child)
        case And():
            return or_(rewrite_not(Not(child.left)), rewrite_not(Not(child.right)))
        case Or():
            return and_(rewrite_not(Not(child.left)), rewrite_not(Not(child.right)))
        case AlwaysTrue():
            return AlwaysFalse()
        case AlwaysFalse():
            return AlwaysTrue()
        case Unknown():
            return child
        case Comparison(op="<=>"):
            # NOT (x <=> v) is TRUE for NULL x too: statistics cannot cheaply say no.
            return Unknown("NOT <=>")
        case Comparison():
            return Comparison(_NEGATED[child.op], child.column, child.value, child.cast)
        case InList():
            return InList(child.column, child.values, not child.negated, child.has_null, child.cast)
        case IsNull():
            return IsNull(child.column, not child.negated)
        case IsNaN():
            return IsNaN(child.column, not child.negated)
        case StartsWith():
            return StartsWith(child.column, child.prefix, not child.negated)
    return Unknown("unexpected NOT")  # pragma: no cover


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
    """The table's spelling of ``name``, matched case-insensitively as Spark does."""
    if name in columns:
        return name
    for actual in columns:
        if actual.lower() == name.lower():
            return actual
    raise ColumnNotFoundError(
        f"unknown column {name!r} in filter; table columns: {', '.join(columns)}"
    )


def bind(predicate: Predicate, columns: Mapping[str, str], *, time_zone: str = "UTC") -> Predicate:
    """Resolve names (case-insensitively, as Spark does) and coerce literals.

    ``columns`` maps each column name to its Spark type name. An unknown
    column raises ValueError listing the table's columns; a literal whose
    meaning against the column is unclear makes that leaf :class:`Unknown`.
    ``time_zone`` is the Spark session's (``spark.sql.session.timeZone``).
    """

    def resolve(name: str) -> str:
        return resolve_column(name, columns)

    def visit(node: Predicate) -> Predicate:
        match node:
            case And():
                return and_(visit(node.left), visit(node.right))
            case Or():
                return or_(visit(node.left), visit(node.right))
            case Not():
                return not_(visit(node.child))
            case Comparison():
                name = resolve(node.column)
                if node.cast and not exact_widening(columns[name], node.cast):
                    return Unknown(f"CAST({name} AS {node.cast}) may change values")
                value = coerce_literal(node.value, columns[name], time_zone=time_zone)
                if value is None:
                    return Unknown(f"literal {node.value!r} against {columns[name]} column {name}")
                return Comparison(node.op, name, value)
            case InList():
                name = resolve(node.column)
                if node.cast and not exact_widening(columns[name], node.cast):
                    return Unknown(f"CAST({name} AS {node.cast}) may change values")
                values = tuple(
                    coerce_literal(v, columns[name], time_zone=time_zone) for v in node.values
                )
                if any(v is None for v in values):
                    return Unknown(f"IN list against {columns[name]} column {name}")
                return InList(name, values, node.negated, node.has_null)
            case IsNull():
                return IsNull(resolve(node.column), node.negated)
            case IsNaN():
                name = resolve(node.column)
                if columns[name] not in FLOAT_TYPES:
                    return AlwaysTrue() if node.negated else AlwaysFalse()
                return IsNaN(name, node.negated)
            case StartsWith():
                name = resolve(node.column)
                if columns[name] != "string":
                    return Unknown(f"prefix match on {columns[name]} column {name}")
                return StartsWith(name, node.prefix, node.negated)
        return node

    return visit(predicate)
