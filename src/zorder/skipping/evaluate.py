"""Evaluate a bound predicate against the statistics of every file at once.

Planning a query over a log of 100,000 files must cost a small fraction of
loading that log, so every rule is written once, over NumPy and Arrow arrays
of the add-actions table deltalake returns (``get_add_actions(flatten=False)``).
A slow per-file oracle in the tests checks it file by file.

The answer is conservative: a file is ruled out only when no row in it can
satisfy the predicate; anything unknown means "might match". Statistics
written by other Delta writers are not all alike, so bounds are read
defensively:

- a string maximum of 32 or more characters may be a truncated prefix
  (:data:`zorder.stats.STRING_PREFIX_LENGTH`, the cut zorder itself writes);
- timestamp bounds are kept at millisecond precision and some writers cut
  the maximum down, so the maximum is widened by a millisecond;
- NaN sorts above every number in Spark and some writers leave it out of
  their double bounds, so a double column's upper bound is trusted only for
  the files the caller vouches for (``nan_free_bounds``: zorder's own runs).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from zorder.skipping.coercion import decimal_shape
from zorder.skipping.parts import part_holds, part_range
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
    StartsWith,
    Unknown,
    rewrite_not,
)
from zorder.skipping.visitor import PredicateVisitor, visit
from zorder.stats import STRING_PREFIX_LENGTH, action_stats_field

__all__ = ["Mask", "might_match_mask"]

Mask = npt.NDArray[np.bool_]
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_EPOCH_NAIVE = dt.datetime(1970, 1, 1)
_MICROS_PER_DAY = 86_400_000_000
_INT64_MAX = (1 << 63) - 1
_ONE_MILLI = 1000
_WIDE = decimal.Context(prec=200)  # never Python's default 28 digits


class _UndecidableError(Exception):
    """Statistics cannot decide this literal against this column: the rows must."""


class _Stats:
    """The add-actions table, with per-column arrays made on demand."""

    def __init__(self, actions: pa.Table, nan_free: Callable[[], Mask] | None) -> None:
        self.actions = actions
        self.n = actions.num_rows
        if "num_records" in actions.column_names:
            rows = actions.column("num_records")
            self.rows_valid = _bools(rows.is_valid())
            self.rows = np.asarray(pc.fill_null(rows, 0).to_numpy(), dtype=np.int64)
        else:
            self.rows_valid = np.zeros(self.n, dtype=bool)
            self.rows = np.zeros(self.n, dtype=np.int64)
        self._nan_free_source = nan_free
        self._nan_free: Mask | None = None

    def field(self, kind: str, name: str) -> pa.Array | None:
        """One column's ``min``/``max``/``null_count`` across all files (nulls where unknown)."""
        return action_stats_field(self.actions, kind, name)

    @property
    def nan_free(self) -> Mask:
        """Files whose double bounds are left out whenever they hold NaN."""
        if self._nan_free is None:
            source = self._nan_free_source
            self._nan_free = (
                np.asarray(source(), dtype=bool) if source else np.zeros(self.n, dtype=bool)
            )
        return self._nan_free


def _bools(array: Any) -> Mask:
    return np.asarray(array.to_numpy(zero_copy_only=False), dtype=bool)


def _valid(array: pa.Array | None, n: int) -> Mask:
    if array is None:
        return np.zeros(n, dtype=bool)
    return _bools(array.is_valid())


def _kind(type_name: str) -> str:
    if type_name in INTEGER_TYPES:
        return "int"
    if type_name in FLOAT_TYPES:
        return "float"
    if type_name.startswith("decimal"):
        return "decimal"
    if type_name in ("date", "timestamp", "timestamp_ntz", "string", "boolean"):
        return type_name
    return "none"  # binary, nested, anything else: null counts only


class _Bounds:
    """One column's statistics across all files, as comparable arrays with validity masks.

    ``low`` and ``high`` live in one domain per kind: int64 for integers and
    booleans, float64 for doubles, microseconds for dates and timestamps,
    Arrow strings (compared byte by byte, in C++) for strings, and Python
    ``Decimal`` objects for decimals, compared exactly.
    """

    def __init__(self, stats: _Stats, name: str, type_name: str) -> None:
        n = stats.n
        nulls = stats.field("null_count", name)
        if nulls is not None and not pa.types.is_integer(nulls.type):
            nulls = None  # a nested column's counts are per field: unknown here
        self.nulls_valid = _valid(nulls, n)
        counts = (
            np.asarray(pc.fill_null(nulls, 0).to_numpy(), dtype=np.int64)
            if nulls is not None
            else np.zeros(n, dtype=np.int64)
        )
        self.all_null = self.nulls_valid & stats.rows_valid & (counts >= stats.rows)
        self.has_null = ~self.nulls_valid | (counts > 0)
        self.kind = _kind(type_name)
        self.high_is_prefix = np.zeros(n, dtype=bool)
        self.may_hold_nan = np.zeros(n, dtype=bool)
        low_raw = stats.field("min", name) if self.kind != "none" else None
        high_raw = stats.field("max", name) if self.kind != "none" else None
        self.low_valid = _valid(low_raw, n)
        self.high_valid = _valid(high_raw, n)
        self.low: Any = self._values(low_raw, n)
        self.high: Any = self._values(high_raw, n)
        if self.kind == "float":
            self.low_valid &= ~np.isnan(self.low)
            self.high_valid &= ~np.isnan(self.high)
            self.may_hold_nan = ~(stats.nan_free & self.low_valid & self.high_valid)
        elif self.kind in ("timestamp", "timestamp_ntz"):
            # Some writers cut the maximum down to the millisecond: widen it.
            self.high = np.where(
                self.high <= _INT64_MAX - _ONE_MILLI, self.high + _ONE_MILLI, _INT64_MAX
            )
        elif self.kind == "string":
            # A cut maximum (with or without a writer's tie-breaker character):
            # the true maximum may be any string that starts with its first 32.
            long = _bools(pc.greater_equal(pc.utf8_length(self.high), STRING_PREFIX_LENGTH))
            self.high_is_prefix = self.high_valid & long
            if self.high_is_prefix.any():
                self.high = pc.if_else(
                    pa.array(self.high_is_prefix),
                    pc.utf8_slice_codeunits(self.high, 0, STRING_PREFIX_LENGTH),
                    self.high,
                )

    def _values(self, array: pa.Array | None, n: int) -> Any:
        """The bounds in this kind's domain (anything where a bound is invalid)."""
        kind = self.kind
        if kind == "string":
            if array is None:
                return pa.array([""] * n, pa.string())
            return pc.fill_null(array.cast(pa.string()), "")
        if kind == "float":
            if array is None:
                return np.full(n, math.nan)
            return np.asarray(pc.fill_null(array.cast(pa.float64()), math.nan).to_numpy())
        if kind == "decimal":
            if array is None:
                return np.zeros(n, dtype=object)
            values = [decimal.Decimal(0) if v is None else v for v in array.to_pylist()]
            return np.array(values, dtype=object)
        if array is None or kind == "none":
            return np.zeros(n, dtype=np.int64)
        if kind == "date":
            days = array.cast(pa.date32()).view(pa.int32())
            return np.asarray(pc.fill_null(days, 0).to_numpy(), dtype=np.int64) * _MICROS_PER_DAY
        if kind in ("timestamp", "timestamp_ntz"):
            scale = {"s": 1_000_000, "ms": 1000, "us": 1, "ns": 0}[array.type.unit]
            raw = np.asarray(pc.fill_null(array.view(pa.int64()), 0).to_numpy(), dtype=np.int64)
            return raw // 1000 if scale == 0 else raw * scale
        if kind == "boolean":
            return np.asarray(pc.fill_null(array, False).to_numpy(zero_copy_only=False), np.int64)
        return np.asarray(pc.fill_null(array, 0).to_numpy(), dtype=np.int64)

    def literal(self, value: Any, domain: str | None = None) -> tuple[Any, Any, Any]:
        """(literal, low, high) in one comparable domain; _UndecidableError if there is none.

        ``domain`` is what binding found Spark converts the column to (a double,
        a decimal of smaller scale), or None. Conversions keep the order, so
        converted bounds bound the converted values; a decimal's double is
        widened by an ulp each way (Spark's may differ from the nearest one).
        Dates compare with timestamps at midnight (bound literals carry UTC, or
        no zone against timestamp_ntz).
        """
        kind = self.kind
        is_number = isinstance(value, int | float | decimal.Decimal) and not isinstance(value, bool)
        if kind == "float":
            if not is_number:
                raise _UndecidableError
            return float(value), self.low, self.high
        if kind in ("int", "decimal"):
            if not is_number:
                raise _UndecidableError
            if domain == "double":
                low, high = self._as_floats(self.low), self._as_floats(self.high)
                return float(value), np.nextafter(low, -np.inf), np.nextafter(high, np.inf)
            shape = decimal_shape(domain or "")
            if shape is not None:
                step = decimal.Decimal(1).scaleb(-shape[1])
                return value, _rounded(self.low, step), _rounded(self.high, step)
            if isinstance(value, float):
                raise _UndecidableError  # binding gives a double domain for these
            if kind == "int" and isinstance(value, int) and abs(value) <= _INT64_MAX:
                return value, self.low, self.high
            # Decimals, and integers beyond 64 bits: Python compares them exactly.
            return value, self.low.astype(object), self.high.astype(object)
        if kind == "boolean":
            if not isinstance(value, bool):
                raise _UndecidableError
            return int(value), self.low, self.high
        if kind in ("date", "timestamp", "timestamp_ntz"):
            return self._micros(value), self.low, self.high
        if kind == "string" and isinstance(value, str):
            return value, self.low, self.high
        raise _UndecidableError

    @staticmethod
    def _as_floats(values: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
        return np.array([float(v) for v in values], dtype=np.float64)

    def _micros(self, value: Any) -> int:
        """A date or timestamp literal in microseconds, as Spark compares it to this column."""
        if isinstance(value, dt.datetime):
            zoned = value.tzinfo is not None
            if (self.kind == "timestamp" and not zoned) or (self.kind == "timestamp_ntz" and zoned):
                raise _UndecidableError
            if zoned:
                return (value - _EPOCH) // dt.timedelta(microseconds=1)
            # A zone-less literal: against a date, midnight is zone-less too.
            return (value - _EPOCH_NAIVE) // dt.timedelta(microseconds=1)
        if isinstance(value, dt.date):
            return (value - _EPOCH.date()).days * _MICROS_PER_DAY
        raise _UndecidableError


def _rounded(values: npt.NDArray[Any], step: decimal.Decimal) -> npt.NDArray[Any]:
    """Decimal bounds rounded half up to ``step``, as Spark's cast to a smaller scale."""
    rounded = [
        decimal.Decimal(v).quantize(step, rounding=decimal.ROUND_HALF_UP, context=_WIDE)
        for v in values
    ]
    return np.array(rounded, dtype=object)


def _compare(values: Any, op: str, v: Any) -> Mask:
    """``values op v`` elementwise, for NumPy arrays and Arrow string arrays alike."""
    if isinstance(values, pa.Array | pa.ChunkedArray):
        arrow = {"<": pc.less, "<=": pc.less_equal, ">": pc.greater, ">=": pc.greater_equal}
        function = arrow.get(op, pc.equal)
        return _bools(function(values, pa.scalar(v, values.type)))
    numpy = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}
    with np.errstate(invalid="ignore"):
        return np.asarray(numpy.get(op, np.equal)(values, v), dtype=bool)


def _cut_maxima_below(bounds: _Bounds, text: str) -> Mask:
    """Files with a cut string maximum whose every possible value is below ``text``."""
    result = np.zeros(len(bounds.high_is_prefix), dtype=bool)
    rows = np.flatnonzero(bounds.high_is_prefix)
    if rows.size:
        cut = bounds.high.take(pa.array(rows)).to_pylist()
        result[rows] = np.array([text[: len(h)] > h for h in cut], dtype=bool)
    return result


def _below_low(bounds: _Bounds, v: Any, low: Any, *, inclusive: bool) -> Mask:
    """Files whose every value is above ``v`` (or at or above it, when not inclusive)."""
    return bounds.low_valid & _compare(low, ">" if inclusive else ">=", v)


def _above_high(
    bounds: _Bounds, v: Any, high: Any, *, inclusive: bool, nan_matters: bool = True
) -> Mask:
    """Files whose every value is below ``v`` (or at or below it, when not inclusive).

    ``nan_matters``: whether a NaN row (above every number, maybe hidden from
    the bounds) could satisfy the condition; it cannot equal a number.
    """
    result = bounds.high_valid & _compare(high, "<" if inclusive else "<=", v)
    if bounds.high_is_prefix.any():
        # A cut maximum: beyond it only when past every string with that prefix.
        result = np.where(bounds.high_is_prefix, _cut_maxima_below(bounds, v), result)
    if nan_matters:
        result &= ~bounds.may_hold_nan
    return result


def _might_equal(bounds: _Bounds, value: Any, domain: str | None) -> Mask:
    if isinstance(value, float) and math.isnan(value):
        return ~bounds.all_null & bounds.may_hold_nan
    try:
        v, low, high = bounds.literal(value, domain)
    except _UndecidableError:
        return ~bounds.all_null
    outside = _below_low(bounds, v, low, inclusive=True) | _above_high(
        bounds, v, high, inclusive=True, nan_matters=False
    )
    return ~bounds.all_null & ~outside


def _comparison(node: Comparison, bounds: _Bounds) -> Mask:
    not_all_null = ~bounds.all_null
    value = node.value
    if isinstance(value, float) and math.isnan(value) and node.op not in ("=", "<=>"):
        return not_all_null  # NaN literals in ranges: left to the rows
    if node.op in ("=", "<=>"):
        return _might_equal(bounds, value, node.domain)
    try:
        v, low, high = bounds.literal(value, node.domain)
    except _UndecidableError:
        return not_all_null
    if node.op == "<":
        return not_all_null & ~_below_low(bounds, v, low, inclusive=False)
    if node.op == "<=":
        return not_all_null & ~_below_low(bounds, v, low, inclusive=True)
    if node.op == ">":
        return not_all_null & ~_above_high(bounds, v, high, inclusive=False)
    if node.op == ">=":
        return not_all_null & ~_above_high(bounds, v, high, inclusive=True)
    # "!=": cannot match only when every value is the literal.
    single = bounds.low_valid & bounds.high_valid
    single &= _compare(low, "==", v) & _compare(high, "==", v)
    single &= ~bounds.may_hold_nan & ~bounds.high_is_prefix
    return not_all_null & ~single


def _prefix(node: StartsWith, bounds: _Bounds) -> Mask:
    not_all_null = ~bounds.all_null
    if node.negated or bounds.kind != "string":
        return not_all_null
    prefix = node.prefix
    # Strings with the prefix lie in [prefix, prefix + anything).
    low_start = pc.utf8_slice_codeunits(bounds.low, 0, len(prefix))
    low_beyond = bounds.low_valid & _compare(low_start, ">", prefix)
    high_below = bounds.high_valid & _compare(bounds.high, "<", prefix)
    if bounds.high_is_prefix.any():
        high_below = np.where(bounds.high_is_prefix, _cut_maxima_below(bounds, prefix), high_below)
    return not_all_null & ~low_beyond & ~high_below


def _part(node: PartComparison, bounds: _Bounds) -> Mask:
    """A part of the column (``hour(ts)``) bounded per file where it is monotone over the
    file's range (:func:`~zorder.skipping.parts.part_range`); kept elsewhere."""
    result = ~bounds.all_null
    if bounds.kind not in ("date", "timestamp", "timestamp_ntz"):
        return result
    # The maximum was widened by a millisecond (a writer's cut): the part of the widened
    # range bounds the true one.
    decided = np.flatnonzero(result & bounds.low_valid & bounds.high_valid)
    for index in decided:
        low, high = int(bounds.low[index]), int(bounds.high[index])
        found = part_range(node.part, low, high, bounds.kind, node.zone)
        if found is not None and not part_holds(node.op, found[0], found[1], node.value):
            result[index] = False
    return result


class _MightMatch(PredicateVisitor[Mask]):
    """Per file, might any row satisfy the node? (Conservative: True when unsure.)"""

    def __init__(self, stats: _Stats, types: Mapping[str, str]) -> None:
        self.stats = stats
        self.types = types
        self._bounds: dict[str, _Bounds] = {}

    def bounds(self, column: str) -> _Bounds:
        """``column``'s statistics, made once per evaluation."""
        if column not in self._bounds:
            self._bounds[column] = _Bounds(self.stats, column, self.types[column])
        return self._bounds[column]

    def _every(self, answer: bool) -> Mask:
        return np.full(self.stats.n, answer, dtype=bool)

    def visit_true(self) -> Mask:
        return self._every(True)

    def visit_false(self) -> Mask:
        return self._every(False)

    def visit_unknown(self, node: Unknown) -> Mask:
        return self._every(True)

    def visit_comparison(self, node: Comparison) -> Mask:
        return _comparison(node, self.bounds(node.column))

    def visit_in_list(self, node: InList) -> Mask:
        bounds = self.bounds(node.column)
        if node.negated:
            # x NOT IN (.., NULL) is never TRUE, nor is NULL NOT IN (..).
            return ~bounds.all_null & self._every(not node.has_null)
        mask = self._every(False)
        for value in node.values:
            mask |= _might_equal(bounds, value, node.domain)
        return mask

    def visit_null_comparison(self, node: NullComparison) -> Mask:
        return self._every(False)  # NULL in every row: no file holds a match, negated or not

    def visit_is_null(self, node: IsNull) -> Mask:
        bounds = self.bounds(node.column)
        return ~bounds.all_null if node.negated else bounds.has_null

    def visit_is_nan(self, node: IsNaN) -> Mask:
        if node.negated:
            return self._every(True)  # isnan(NULL) is false: NOT isnan holds for it
        bounds = self.bounds(node.column)
        return ~bounds.all_null & bounds.may_hold_nan

    def visit_starts_with(self, node: StartsWith) -> Mask:
        return _prefix(node, self.bounds(node.column))

    def visit_part_comparison(self, node: PartComparison) -> Mask:
        return _part(node, self.bounds(node.column))

    def visit_and(self, left: Mask, right: Mask) -> Mask:
        return left & right

    def visit_or(self, left: Mask, right: Mask) -> Mask:
        return left | right

    def visit_not(self, child: Mask) -> Mask:
        return self._every(True)  # rewrite_not leaves no NOT: were one left, be safe


def might_match_mask(
    predicate: Bound,
    actions: pa.Table,
    types: Mapping[str, str],
    *,
    nan_free_bounds: Callable[[], Mask] | None = None,
) -> Mask:
    """Per file (row of ``actions``): might any of its rows satisfy the bound ``predicate``?

    ``types`` maps each column to its Spark type name. ``nan_free_bounds``,
    called only when a double column's upper side matters, says which files'
    double bounds are left out whenever the file holds NaN; without it no
    file is trusted so.
    """
    visitor = _MightMatch(_Stats(actions, nan_free_bounds), types)
    return np.asarray(visit(rewrite_not(predicate.tree), visitor), dtype=bool)
