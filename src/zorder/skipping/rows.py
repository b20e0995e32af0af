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
- a column and its literals are compared in the type Spark's coercion gives
  them (:mod:`zorder.skipping.coercion`, shared with file skipping): a bigint
  against ``1e0`` as doubles, against ``1.5`` exactly as decimals;
- strings compare by their UTF-8 bytes (as both Spark and Arrow do);
- timestamps without a zone are read in the session time zone.

:func:`exact_predicate` binds the parsed tree for this and refuses, with
:class:`~zorder.errors.UnsupportedFilterError`, everything whose Spark
meaning it does not reproduce exactly (functions, arithmetic, casts that
change values or that ANSI Spark may reject, a decimal column converted to a double, ...).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Mapping
from typing import Any, TypeAlias

import pyarrow as pa
import pyarrow.compute as pc

from zorder.skipping.predicates import (
    FLOAT_TYPES,
    INTEGER_TYPES,
    Bound,
    Comparison,
    InList,
    IsNaN,
    IsNull,
    NullComparison,
    PartComparison,
    Predicate,
    StartsWith,
    Unknown,
    bind_exact,
    unsupported,
)
from zorder.skipping.pushdown import prefilter_sql, quoted_name, referenced
from zorder.skipping.visitor import PredicateCollector, PredicateVisitor, visit

__all__ = [
    "exact_predicate",
    "prefilter_sql",
    "quoted_name",
    "referenced",
    "row_mask",
    "unsupported",
]


def exact_predicate(
    predicate: Predicate, columns: Mapping[str, str], *, time_zone: str = "UTC"
) -> Bound:
    """``predicate`` (as parsed) bound for :func:`row_mask`, or UnsupportedFilterError.

    ``columns`` maps each column to its Spark type name; ``time_zone`` is the
    session's, in which timestamps written without a zone are read. The
    literals are coerced as for file skipping (:mod:`zorder.skipping.coercion`);
    what that cannot do exactly is refused here instead of kept.
    """
    bound = bind_exact(predicate, columns, time_zone=time_zone)
    visit(bound.tree, _RefuseInexactDomains(columns))
    return bound


class _RefuseInexactDomains(PredicateCollector[None]):
    """Refuses the conversions of a column that Arrow does not compute as Spark does:
    a decimal's double (Spark divides an unscaled long; Arrow rounds otherwise) and a
    decimal rounded to a smaller scale; and a comparison Spark refuses to make at all."""

    def __init__(self, columns: Mapping[str, str]) -> None:
        self.columns = columns

    def empty(self) -> None:
        return None

    def combine(self, left: None, right: None) -> None:
        return None

    def _check(self, column: str, domain: str | None) -> None:
        if domain is not None and self.columns[column].startswith("decimal"):
            shown = f"the {self.columns[column]} column {column} compared as {domain.upper()}"
            raise unsupported(f"{shown} (Spark converts the column first)")

    def visit_comparison(self, node: Comparison) -> None:
        self._check(node.column, node.domain)

    def visit_in_list(self, node: InList) -> None:
        self._check(node.column, node.domain)

    def visit_unknown(self, node: Unknown) -> None:
        raise unsupported(node.reason or "this filter")

    def visit_null_comparison(self, node: NullComparison) -> None:
        # NULL for every row, on a type Spark compares; maps and variants it refuses to.
        kind = self.columns[node.column]
        if kind.startswith(("map", "variant")):
            raise unsupported(
                f"{node.column} {node.op} NULL on a {kind} column (Spark compares no such values)"
            )


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
    digits = len(number.as_tuple().digits) + (exponent if isinstance(exponent, int) else 0)
    integer_digits = max(values.type.precision - values.type.scale, digits, 1)  # left of the point
    if integer_digits + scale > 76:
        raise unsupported(f"the decimal {value} (more than 76 digits at the column's scale)")
    wide = pa.decimal256(integer_digits + scale, scale)
    return _arrow_compare(values.cast(wide), op, pa.scalar(number, wide))


def _compare(values: Bools, type_name: str, op: str, value: Any, domain: str | None) -> Bools:
    if type_name in FLOAT_TYPES or domain == "double":
        return _float_compare(values.cast(pa.float64(), safe=False), op, float(value))
    if type_name in INTEGER_TYPES:
        return _integer_compare(values, op, value)
    if type_name.startswith("decimal"):
        return _decimal_compare(values, op, value)
    if type_name == "date" and isinstance(value, dt.datetime) and value.tzinfo is None:
        naive = pa.timestamp("us")  # a date against a TIMESTAMP_NTZ: midnight, no zone
        return _arrow_compare(values.cast(naive), op, pa.scalar(value, naive))
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
    found = _constant(values, False)
    for value in node.values:
        found = pc.or_kleene(found, _compare(values, type_name, "=", value, node.domain))
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

    def visit_null_comparison(self, node: NullComparison) -> Bools:
        return pa.nulls(self.table.num_rows, pa.bool_())  # and so is NOT of it

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
        return _compare(values, self.columns[node.column], node.op, node.value, node.domain)

    def visit_in_list(self, node: InList) -> Bools:
        return _in_list(self.table.column(node.column), self.columns[node.column], node)

    def visit_part_comparison(self, node: PartComparison) -> Bools:
        raise unsupported(f"{node.part}({node.column})")  # bind_exact refuses it first

    def visit_and(self, left: Bools, right: Bools) -> Bools:
        return pc.and_kleene(left, right)

    def visit_or(self, left: Bools, right: Bools) -> Bools:
        return pc.or_kleene(left, right)

    def visit_not(self, child: Bools) -> Bools:
        return pc.invert(child)


def row_mask(predicate: Bound, table: pa.Table, columns: Mapping[str, str]) -> Bools:
    """Each row's value of ``predicate`` (bound by :func:`exact_predicate`): TRUE, FALSE or NULL.

    ``table`` holds the columns the predicate reads; ``columns`` maps names
    to Spark type names. Keep the rows where it is TRUE.
    """
    return visit(predicate.tree, _RowMask(table, columns))
