"""Which rows satisfy a filter, with Spark's meaning, evaluated on Arrow data in-process.

The file-skipping evaluator may be conservative; this one may not: the rows
it keeps must be exactly those Spark keeps for the same SQL. It reuses the
predicate tree (so it understands the same grammar) and evaluates every
leaf with pyarrow compute under SQL's three-valued logic (Kleene AND/OR/NOT;
a row is kept only when the whole filter is TRUE), adding Spark's own rules
where Arrow's differ:

- NaN equals NaN and sorts above every other number (IEEE says neither);
- ``isnan(NULL)`` is FALSE, not NULL; ``x <=> v`` is FALSE for a NULL ``x``;
- ``x IN (..., NULL)`` is NULL, never FALSE, when nothing matches;
- a column compared with a DOUBLE literal is compared as a double; with a
  decimal literal, exactly (``int_col < 1.5`` is ``int_col <= 1``);
- strings compare by their UTF-8 bytes (as both Spark and Arrow do);
- timestamps without a zone are read in the session time zone.

:func:`exact_predicate` binds the parsed tree for this and refuses, with
:class:`~zorder.errors.UnsupportedFilterError`, everything whose Spark
meaning it does not reproduce exactly (functions, arithmetic, casts that
change values, comparisons with NULL under NOT, string literals that Spark's
ANSI casts might reject, DOUBLE literals against decimals, ...).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
import zoneinfo
from collections.abc import Mapping
from typing import Any, TypeAlias

import pyarrow as pa
import pyarrow.compute as pc

from zorder.errors import InvalidArgumentError, UnsupportedFilterError
from zorder.skipping.predicates import (
    FLOAT_TYPES,
    INTEGER_TYPES,
    SESSION_ZONE,
    AlwaysFalse,
    AlwaysTrue,
    And,
    Comparison,
    InList,
    IsNaN,
    IsNull,
    Not,
    Or,
    Predicate,
    StartsWith,
    Unknown,
    bind,
    is_utc,
    resolve_column,
)
from zorder.skipping.pushdown import prefilter_sql, quoted_name, referenced
from zorder.skipping.visitor import PredicateVisitor, visit

__all__ = [
    "exact_predicate",
    "prefilter_sql",
    "quoted_name",
    "referenced",
    "row_mask",
    "session_zone",
    "unsupported",
]

_INTEGER = re.compile(r"\s*[+-]?\d+\s*")
_NUMBER = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*|\s*[+-]?(NaN|Infinity)\s*")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIMESTAMP = re.compile(
    r"\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?)?(?P<zone>Z|[+-]\d{2}:\d{2})?"
)
_OFFSET = re.compile(r"(?:UTC|GMT)?([+-])(\d{1,2}):?(\d{2})?")


def unsupported(what: str) -> UnsupportedFilterError:
    """The error for a filter construct ``what`` that only Spark answers exactly."""
    return UnsupportedFilterError(
        f"cannot evaluate {what} outside Spark with Spark's meaning; "
        "read it with zorder.read(spark, path, where) (CLI: zorder query --spark)"
    )


def session_zone(time_zone: str) -> dt.tzinfo:
    """Spark's session time zone ``time_zone`` (a region or an offset) as a tzinfo."""
    if is_utc(time_zone):
        return dt.UTC
    offset = _OFFSET.fullmatch(time_zone.strip())
    if offset:
        sign, hours, minutes = offset.groups()
        delta = dt.timedelta(hours=int(hours), minutes=int(minutes or 0))
        return dt.timezone(-delta if sign == "-" else delta)
    try:
        return zoneinfo.ZoneInfo(time_zone.strip())
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise InvalidArgumentError(
            f"unknown time zone {time_zone!r}; accepted: a region (Europe/Paris), UTC, "
            "or an offset (+05:30)"
        ) from None


def _parsed_timestamp(text: str) -> dt.datetime:
    """A timestamp string in the forms Spark and Python read alike, else a refusal."""
    if not _TIMESTAMP.fullmatch(text.strip()):
        raise unsupported(f"the timestamp string {text!r} (write yyyy-mm-dd hh:mm:ss[.ffffff])")
    parsed = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=SESSION_ZONE)


def _spark_literal(value: Any, type_name: str, zone: dt.tzinfo, column: str) -> Any:
    """``value`` as Spark reads it against a ``type_name`` column, or a refusal.

    Only the cases where Spark's coercion is known exactly pass; the result
    then goes through :func:`~zorder.skipping.predicates.bind` in UTC (zone-less
    timestamps have their zone by then).
    """
    against = f"{type_name} column {column}"
    if isinstance(value, str):
        if type_name == "string":
            return value
        if type_name in INTEGER_TYPES and _INTEGER.fullmatch(value):
            return int(value)
        if type_name in FLOAT_TYPES and _NUMBER.fullmatch(value):
            return float(value)
        if type_name == "date" and _DATE.fullmatch(value.strip()):
            return dt.date.fromisoformat(value.strip())
        if type_name in ("timestamp", "timestamp_ntz"):
            value = _parsed_timestamp(value)
            if type_name == "timestamp_ntz" and value.tzinfo is SESSION_ZONE:
                return value.replace(tzinfo=None)
        else:
            raise unsupported(f"the string {value!r} against {against}")
    if isinstance(value, decimal.Decimal) and "E" in str(value):
        value = float(value)  # 1e3 is a DOUBLE literal in Spark SQL
    if isinstance(value, float) and type_name.startswith("decimal"):
        raise unsupported(f"the DOUBLE {value!r} against {against} (write it as a decimal: 1.5)")
    if isinstance(value, dt.datetime):
        if value.tzinfo is SESSION_ZONE:
            if type_name == "timestamp_ntz":
                raise unsupported(f"a TIMESTAMP literal against {against}")
            value = value.replace(tzinfo=zone)
        if type_name == "date" and zone is not dt.UTC:
            raise unsupported(f"a timestamp against {against} outside a UTC session")
    elif isinstance(value, dt.date) and type_name == "timestamp":
        value = dt.datetime(value.year, value.month, value.day, tzinfo=zone)
    return value


def _leaf(node: Predicate, columns: Mapping[str, str], zone: dt.tzinfo) -> Predicate:
    if isinstance(node, Comparison | InList):
        name = resolve_column(node.column, columns)
        type_name = columns[name]
        if isinstance(node, Comparison):
            node = Comparison(
                node.op, name, _spark_literal(node.value, type_name, zone, name), node.cast
            )
        else:
            values = tuple(_spark_literal(v, type_name, zone, name) for v in node.values)
            node = InList(name, values, node.negated, node.has_null, node.cast)
    bound = bind(node, columns, time_zone="UTC")
    if isinstance(bound, Unknown):
        raise unsupported(bound.reason or "this filter")
    return bound


class _Exact(PredicateVisitor[Predicate]):
    """:func:`exact_predicate`'s rules: every leaf bound for :func:`row_mask`, or a refusal."""

    def __init__(self, columns: Mapping[str, str], zone: dt.tzinfo) -> None:
        self.columns = columns
        self.zone = zone

    def visit_true(self) -> Predicate:
        return AlwaysTrue()

    def visit_false(self) -> Predicate:
        return AlwaysFalse()

    def visit_unknown(self, node: Unknown) -> Predicate:
        raise unsupported(node.reason or "this filter")

    def visit_comparison(self, node: Comparison) -> Predicate:
        return _leaf(node, self.columns, self.zone)

    def visit_in_list(self, node: InList) -> Predicate:
        return _leaf(node, self.columns, self.zone)

    def visit_is_null(self, node: IsNull) -> Predicate:
        return _leaf(node, self.columns, self.zone)

    def visit_is_nan(self, node: IsNaN) -> Predicate:
        return _leaf(node, self.columns, self.zone)

    def visit_starts_with(self, node: StartsWith) -> Predicate:
        return _leaf(node, self.columns, self.zone)

    # No folding: a row evaluator must see (and refuse) every leaf of the text.
    def visit_and(self, left: Predicate, right: Predicate) -> Predicate:
        return And(left, right)

    def visit_or(self, left: Predicate, right: Predicate) -> Predicate:
        return Or(left, right)

    def visit_not(self, child: Predicate) -> Predicate:
        return Not(child)


def exact_predicate(
    predicate: Predicate, columns: Mapping[str, str], *, time_zone: str = "UTC"
) -> Predicate:
    """``predicate`` (as parsed) bound for :func:`row_mask`, or UnsupportedFilterError.

    ``columns`` maps each column to its Spark type name; ``time_zone`` is the
    session's, in which timestamps written without a zone are read.
    """
    return visit(predicate, _Exact(columns, session_zone(time_zone)))


# A boolean pa.Array or pa.ChunkedArray; pyarrow ships no type information, so Any.
Bools: TypeAlias = Any


def _constant(values: Bools, answer: bool) -> Bools:
    """``answer`` where ``values`` is valid, NULL where it is NULL (a comparison's shape)."""
    return pc.if_else(pc.is_valid(values), answer, pa.scalar(None, pa.bool_()))


def _all(length: int, answer: bool) -> pa.Array:
    return pa.repeat(pa.scalar(answer), length)


def _float_compare(values: Bools, op: str, value: float) -> Bools:
    """Spark's double comparison: NaN equal to NaN and above everything."""
    nan = pc.is_nan(values)
    if math.isnan(value):
        answers = {
            "=": nan,
            "<=>": pc.fill_null(nan, False),
            "!=": pc.invert(nan),
            "<": pc.invert(nan),
            "<=": _constant(values, True),
            ">": _constant(values, False),
            ">=": nan,
        }
        return answers[op]
    if op in (">", ">="):
        return pc.or_kleene(_arrow_compare(values, op, value), nan)
    return _arrow_compare(values, op, value)


def _arrow_compare(values: Bools, op: str, value: Any) -> Bools:
    functions = {
        "=": pc.equal,
        "!=": pc.not_equal,
        "<": pc.less,
        "<=": pc.less_equal,
        ">": pc.greater,
        ">=": pc.greater_equal,
    }
    if op == "<=>":
        return pc.fill_null(pc.equal(values, value), False)
    return functions[op](values, value)


_INT64 = (-(2**63), 2**63 - 1)


def _integer_compare(values: Bools, op: str, value: int | decimal.Decimal) -> Bools:
    """An exact comparison of integers with an integer or a decimal."""
    values = values.cast(pa.int64())
    number = decimal.Decimal(value)
    if number != number.to_integral_value():
        if op in ("=", "<=>", "!="):
            answer = _constant(values, op == "!=")
            return pc.fill_null(answer, False) if op == "<=>" else answer
        # x < 1.5 is x <= 1; x > 1.5 is x >= 2
        if op in ("<", "<="):
            op, value = "<=", int(number.to_integral_value(rounding=decimal.ROUND_FLOOR))
        else:
            op, value = ">=", int(number.to_integral_value(rounding=decimal.ROUND_CEILING))
    value = int(number.to_integral_value()) if not isinstance(value, int) else value
    if value < _INT64[0] or value > _INT64[1]:
        above = value > _INT64[1]  # the value is above every int64 (else below every one)
        truth = {
            "=": False,
            "<=>": False,
            "!=": True,
            "<": above,
            "<=": above,
            ">": not above,
            ">=": not above,
        }
        answer = _constant(values, truth[op])
        return pc.fill_null(answer, False) if op == "<=>" else answer
    return _arrow_compare(values, op, pa.scalar(value, pa.int64()))


def _decimal_compare(values: Bools, op: str, value: int | decimal.Decimal) -> Bools:
    """An exact comparison of decimals, at a scale that holds both sides."""
    number = decimal.Decimal(value)
    exponent = number.as_tuple().exponent
    scale = max(values.type.scale, -exponent if isinstance(exponent, int) else 0, 0)
    digits = len(number.as_tuple().digits) - (exponent if isinstance(exponent, int) else 0)
    integer_digits = max(values.type.precision - values.type.scale, digits, 1)
    if integer_digits + scale > 76:
        raise unsupported(f"the decimal {value} (more than 76 digits at the column's scale)")
    wide = pa.decimal256(integer_digits + scale, scale)
    return _arrow_compare(values.cast(wide), op, pa.scalar(number, wide))


def _compare(values: Bools, type_name: str, op: str, value: Any) -> Bools:
    if type_name in FLOAT_TYPES or isinstance(value, float):
        return _float_compare(values.cast(pa.float64(), safe=False), op, float(value))
    if type_name in INTEGER_TYPES:
        return _integer_compare(values, op, value)
    if type_name.startswith("decimal"):
        return _decimal_compare(values, op, value)
    if type_name == "timestamp" or (type_name == "date" and isinstance(value, dt.datetime)):
        utc = pa.timestamp("us", tz="UTC")
        return _arrow_compare(
            values.cast(utc, safe=False), op, pa.scalar(value.astimezone(dt.UTC), utc)
        )
    if type_name == "timestamp_ntz":
        naive = pa.timestamp("us")
        return _arrow_compare(values.cast(naive, safe=False), op, pa.scalar(value, naive))
    if type_name == "date":
        return _arrow_compare(values.cast(pa.date32()), op, pa.scalar(value, pa.date32()))
    return _arrow_compare(values, op, value)  # strings (by bytes) and booleans


def _in_list(values: Bools, type_name: str, node: InList) -> Bools:
    listed = node.values
    if type_name in INTEGER_TYPES and any(isinstance(v, float) for v in listed):
        listed = tuple(float(v) for v in listed)  # Spark compares them all as doubles
    found = _constant(values, False)
    for value in listed:
        found = pc.or_kleene(found, _compare(values, type_name, "=", value))
    if node.has_null:  # no match is NULL, not FALSE
        found = pc.or_kleene(found, pa.nulls(len(values), pa.bool_()))
    return pc.invert(found) if node.negated else found


class _RowMask(PredicateVisitor[Bools]):
    """Each row's value of every node, under SQL's three-valued logic."""

    def __init__(self, table: pa.Table, columns: Mapping[str, str]) -> None:
        self.table = table
        self.columns = columns

    def visit_true(self) -> Bools:
        return _all(self.table.num_rows, True)

    def visit_false(self) -> Bools:
        return _all(self.table.num_rows, False)

    def visit_unknown(self, node: Unknown) -> Bools:
        raise unsupported(f"the predicate {node!r}")  # exact_predicate refuses it first

    def visit_is_null(self, node: IsNull) -> Bools:
        values = self.table.column(node.column)
        return pc.is_valid(values) if node.negated else pc.is_null(values)

    def visit_is_nan(self, node: IsNaN) -> Bools:
        values = self.table.column(node.column).cast(pa.float64())
        nan = pc.fill_null(pc.is_nan(values), False)
        return pc.invert(nan) if node.negated else nan

    def visit_starts_with(self, node: StartsWith) -> Bools:
        found = pc.starts_with(self.table.column(node.column), node.prefix)
        return pc.invert(found) if node.negated else found

    def visit_comparison(self, node: Comparison) -> Bools:
        values = self.table.column(node.column)
        return _compare(values, self.columns[node.column], node.op, node.value)

    def visit_in_list(self, node: InList) -> Bools:
        return _in_list(self.table.column(node.column), self.columns[node.column], node)

    def visit_and(self, left: Bools, right: Bools) -> Bools:
        return pc.and_kleene(left, right)

    def visit_or(self, left: Bools, right: Bools) -> Bools:
        return pc.or_kleene(left, right)

    def visit_not(self, child: Bools) -> Bools:
        return pc.invert(child)


def row_mask(predicate: Predicate, table: pa.Table, columns: Mapping[str, str]) -> Bools:
    """Each row's value of ``predicate`` (bound by :func:`exact_predicate`): TRUE, FALSE or NULL.

    ``table`` holds the columns the predicate reads; ``columns`` maps names
    to Spark type names. Keep the rows where it is TRUE.
    """
    return visit(predicate, _RowMask(table, columns))
