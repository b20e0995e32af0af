"""The evaluator of :mod:`zorder.skipping.evaluate`, over all files at once.

Planning a query over a log of 100,000 files must cost a small fraction of
loading that log, so the common leaves (comparisons, IN lists, null tests,
NaN tests and prefixes on integer, double, date, timestamp and string
columns) are evaluated with NumPy over the Arrow statistics table that
deltalake returns. Any other leaf falls back to the per-file evaluator,
which stays the reference: the two are checked equal by property tests.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from zorder.skipping.evaluate import STRING_PREFIX_LENGTH, FileSummary, Outcome, evaluate
from zorder.skipping.predicates import (
    FLOAT_TYPES,
    INTEGER_TYPES,
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
    rewrite_not,
)

__all__ = ["might_match_mask"]

Mask = npt.NDArray[Any]  # boolean
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MICROS_PER_DAY = 86_400_000_000
_INT64_MAX = (1 << 63) - 1


class _FallbackError(Exception):
    """This leaf is left to the per-file evaluator."""


class _Stats:
    """The add-actions table, with per-column arrays made on demand."""

    def __init__(self, actions: pa.Table) -> None:
        self.actions = actions
        self.n = actions.num_rows
        rows = actions.column("num_records")
        self.rows_valid = np.asarray(rows.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        self.rows = np.asarray(pc.fill_null(rows, 0).to_numpy(), dtype=np.int64)
        self._nan_free: Mask | None = None
        self._summaries: list[FileSummary] | None = None

    def field(self, kind: str, name: str) -> pa.Array | None:
        """One column's ``min``/``max``/``null_count`` across all files (nulls where unknown)."""
        if kind not in self.actions.column_names:
            return None
        column = self.actions.column(kind)
        if not pa.types.is_struct(column.type) or column.type.get_field_index(name) < 0:
            return None
        pieces = []
        for chunk in column.chunks:  # only this field is copied, not the whole struct
            values = chunk.field(name)
            if chunk.null_count:  # a missing stats struct hides its fields too
                values = pc.if_else(chunk.is_valid(), values, pa.nulls(len(values), values.type))
            pieces.append(values)
        if not pieces:
            return pa.array([], column.type.field(name).type)
        return pa.concat_arrays(pieces) if len(pieces) > 1 else pieces[0]

    @property
    def nan_free(self) -> Mask:
        """Files written by zorder, whose double bounds are left out when they hold NaN."""
        if self._nan_free is None:
            self._nan_free = _bools(pc.starts_with(self.actions.column("path"), "zorder-"))
        return self._nan_free

    def summaries(self) -> list[FileSummary]:
        if self._summaries is None:
            self._summaries = [
                FileSummary(
                    path=row["path"],
                    num_records=row.get("num_records"),
                    min_values=row.get("min") or {},
                    max_values=row.get("max") or {},
                    null_count=row.get("null_count") or {},
                    nan_free_bounds=str(row["path"]).startswith("zorder-"),
                )
                for row in self.actions.to_pylist()
            ]
        return self._summaries


def _valid(array: pa.Array | None, n: int) -> Mask:
    if array is None:
        return np.zeros(n, dtype=bool)
    return np.asarray(array.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


class _Bounds:
    """One column's bounds as comparable NumPy arrays, with validity masks."""

    def __init__(self, stats: _Stats, name: str, type_name: str) -> None:
        n = stats.n
        nulls = stats.field("null_count", name)
        self.nulls_valid = _valid(nulls, n)
        self.nulls = (
            np.asarray(pc.fill_null(nulls, 0).to_numpy(), dtype=np.int64)
            if nulls is not None
            else np.zeros(n, dtype=np.int64)
        )
        self.all_null = self.nulls_valid & stats.rows_valid & (self.nulls >= stats.rows)
        self.has_null = ~self.nulls_valid | (self.nulls > 0)
        self.type_name = type_name
        self.low_raw = stats.field("min", name)
        self.high_raw = stats.field("max", name)
        self.low_valid = _valid(self.low_raw, n)
        self.high_valid = _valid(self.high_raw, n)
        self.high_is_prefix = np.zeros(n, dtype=bool)
        self.may_hold_nan = np.zeros(n, dtype=bool)
        self.low: npt.NDArray[Any]
        self.high: npt.NDArray[Any]
        self.kind = self._load(stats)

    def _load(self, stats: _Stats) -> str:
        t = self.type_name
        if t in INTEGER_TYPES:
            self.low = self._ints(self.low_raw, stats.n)
            self.high = self._ints(self.high_raw, stats.n)
            return "int"
        if t in FLOAT_TYPES:
            self.low = self._floats(self.low_raw, stats.n)
            self.high = self._floats(self.high_raw, stats.n)
            self.low_valid &= ~np.isnan(self.low)
            self.high_valid &= ~np.isnan(self.high)
            self.may_hold_nan = ~(stats.nan_free & self.low_valid & self.high_valid)
            return "float"
        if t == "date":
            self.low = self._ints(self.low_raw, stats.n, pa.int32()) * _MICROS_PER_DAY
            self.high = self._ints(self.high_raw, stats.n, pa.int32()) * _MICROS_PER_DAY
            return "date"
        if t in ("timestamp", "timestamp_ntz"):
            self.low = self._micros(self.low_raw, stats.n)
            high = self._micros(self.high_raw, stats.n)
            # Some writers cut the maximum down to the millisecond: widen it.
            self.high = np.where(high <= _INT64_MAX - 1000, high + 1000, _INT64_MAX)
            return t
        if t == "string":
            # Strings stay Arrow arrays: Arrow compares them byte by byte, in C++.
            self.low = self._strings(self.low_raw, stats.n)
            high = self._strings(self.high_raw, stats.n)
            long = _bools(pc.greater_equal(pc.utf8_length(high), STRING_PREFIX_LENGTH))
            self.high_is_prefix = self.high_valid & long
            self.high = high
            if self.high_is_prefix.any():
                self.high = pc.if_else(
                    pa.array(self.high_is_prefix),
                    pc.utf8_slice_codeunits(high, 0, STRING_PREFIX_LENGTH),
                    high,
                )
            return "string"
        raise _FallbackError

    @staticmethod
    def _ints(
        array: pa.Array | None, n: int, as_type: pa.DataType | None = None
    ) -> npt.NDArray[Any]:
        if array is None:  # no statistics for the column: every bound is invalid
            return np.zeros(n, dtype=np.int64)
        if as_type is not None:
            array = array.view(as_type)
        return np.asarray(pc.fill_null(array, 0).to_numpy(), dtype=np.int64)

    @staticmethod
    def _floats(array: pa.Array | None, n: int) -> npt.NDArray[Any]:
        if array is None:
            return np.full(n, math.nan)
        return pc.fill_null(array.cast(pa.float64()), math.nan).to_numpy()

    @staticmethod
    def _micros(array: pa.Array | None, n: int) -> npt.NDArray[Any]:
        if array is None:
            return np.zeros(n, dtype=np.int64)
        scale = {"s": 1_000_000, "ms": 1000, "us": 1, "ns": 0}[array.type.unit]
        values = np.asarray(pc.fill_null(array.view(pa.int64()), 0).to_numpy(), dtype=np.int64)
        if scale == 0:
            return values // 1000
        return values * scale

    @staticmethod
    def _strings(array: pa.Array | None, n: int) -> Any:
        if array is None:
            return pa.array([""] * n, pa.string())
        return pc.fill_null(array.cast(pa.string()), "")


def _bools(array: Any) -> Mask:
    return np.asarray(array.to_numpy(zero_copy_only=False), dtype=bool)


_ARROW_OPS = {
    "<": pc.less,
    "<=": pc.less_equal,
    ">": pc.greater,
    ">=": pc.greater_equal,
    "==": pc.equal,
}
_NUMPY_OPS = {
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
    "==": np.equal,
}


def _compare(values: Any, op: str, v: Any) -> Mask:
    """``values op v`` elementwise, for NumPy arrays and Arrow string arrays alike."""
    if isinstance(values, pa.Array | pa.ChunkedArray):
        return _bools(_ARROW_OPS[op](values, pa.scalar(v, values.type)))
    with np.errstate(invalid="ignore"):
        return np.asarray(_NUMPY_OPS[op](values, v), dtype=bool)


def _literal(bounds: _Bounds, value: Any) -> tuple[Any, npt.NDArray[Any], npt.NDArray[Any]]:
    """(literal, low, high) in one comparable domain, or _FallbackError."""
    kind = bounds.kind
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, int | float | decimal.Decimal):
            raise _FallbackError
        return float(value), bounds.low, bounds.high
    if kind == "int":
        if isinstance(value, float):
            return value, bounds.low.astype(np.float64), bounds.high.astype(np.float64)
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) <= _INT64_MAX:
            return value, bounds.low, bounds.high
        raise _FallbackError  # decimals and huge ints: exact comparisons per file
    if kind in ("date", "timestamp", "timestamp_ntz"):
        if isinstance(value, dt.datetime):
            if (value.tzinfo is None) != (kind == "timestamp_ntz") and kind != "date":
                raise _FallbackError
            if kind == "date" and value.tzinfo is None:
                raise _FallbackError
            aware = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
            return (aware - _EPOCH) // dt.timedelta(microseconds=1), bounds.low, bounds.high
        if isinstance(value, dt.date):
            return (value - _EPOCH.date()).days * _MICROS_PER_DAY, bounds.low, bounds.high
        raise _FallbackError
    if kind == "string" and isinstance(value, str):
        return value, bounds.low, bounds.high
    raise _FallbackError


def _below_low(bounds: _Bounds, v: Any, low: Any, inclusive: bool) -> Mask:
    test = _compare(low, ">", v) if inclusive else _compare(low, ">=", v)
    return bounds.low_valid & test


def _above_high(
    bounds: _Bounds, v: Any, high: Any, inclusive: bool, nan_matters: bool = True
) -> Mask:
    plain = _compare(high, "<", v) if inclusive else _compare(high, "<=", v)
    result = bounds.high_valid & plain
    if bounds.kind == "string" and bounds.high_is_prefix.any():
        # A cut maximum: beyond it only when past every string with that prefix.
        rows = np.flatnonzero(bounds.high_is_prefix)
        cut = high.take(pa.array(rows)).to_pylist()
        result[rows] = np.array([v[: len(h)] > h for h in cut], dtype=bool)
    if nan_matters:
        result &= ~bounds.may_hold_nan
    return result


def _might_equal(bounds: _Bounds, value: Any) -> Mask:
    if isinstance(value, float) and math.isnan(value):
        return ~bounds.all_null & bounds.may_hold_nan
    v, low, high = _literal(bounds, value)
    out = ~(
        _below_low(bounds, v, low, True) | _above_high(bounds, v, high, True, nan_matters=False)
    )
    return out & ~bounds.all_null


def _comparison(node: Comparison, bounds: _Bounds) -> Mask:
    value = node.value
    if isinstance(value, float) and math.isnan(value):
        return np.asarray(~bounds.all_null, dtype=bool)  # NaN literals: left to the rows
    if node.op in ("=", "<=>"):
        return _might_equal(bounds, value)
    v, low, high = _literal(bounds, value)
    not_all_null = ~bounds.all_null
    if node.op == "<":
        return not_all_null & ~_below_low(bounds, v, low, False)
    if node.op == "<=":
        return not_all_null & ~_below_low(bounds, v, low, True)
    if node.op == ">":
        return not_all_null & ~_above_high(bounds, v, high, False)
    if node.op == ">=":
        return not_all_null & ~_above_high(bounds, v, high, True)
    # "!=": cannot match only when every value is the literal.
    single = bounds.low_valid & bounds.high_valid
    single &= _compare(low, "==", v) & _compare(high, "==", v)
    single &= ~bounds.may_hold_nan & ~bounds.high_is_prefix
    return not_all_null & ~single


def _prefix(node: StartsWith, bounds: _Bounds) -> Mask:
    if bounds.kind != "string":
        raise _FallbackError
    not_all_null = ~bounds.all_null
    if node.negated:
        return not_all_null
    prefix = node.prefix
    # Strings with the prefix lie in [prefix, prefix + anything).
    low_start = pc.utf8_slice_codeunits(bounds.low, 0, len(prefix))
    low_beyond = bounds.low_valid & _compare(low_start, ">", prefix)
    high_below = bounds.high_valid & _compare(bounds.high, "<", prefix)
    if bounds.high_is_prefix.any():
        rows = np.flatnonzero(bounds.high_is_prefix)
        cut = bounds.high.take(pa.array(rows)).to_pylist()
        high_below[rows] = np.array([prefix[: len(h)] > h for h in cut], dtype=bool)
    return np.asarray(not_all_null & ~low_beyond & ~high_below, dtype=bool)


def _leaf(
    node: Predicate, stats: _Stats, types: Mapping[str, str], cache: dict[str, _Bounds]
) -> Mask:
    n = stats.n
    match node:
        case AlwaysTrue() | Unknown():
            return np.ones(n, dtype=bool)
        case AlwaysFalse():
            return np.zeros(n, dtype=bool)
    column = getattr(node, "column", None)
    if column is None:
        raise _FallbackError
    if column not in cache:
        cache[column] = _Bounds(stats, column, types[column])
    bounds = cache[column]
    match node:
        case Comparison():
            return _comparison(node, bounds)
        case InList():
            if node.negated:
                return np.asarray(~bounds.all_null & np.full(n, not node.has_null), dtype=bool)
            mask = np.zeros(n, dtype=bool)
            for value in node.values:
                mask |= _might_equal(bounds, value)
            return mask
        case IsNull():
            return np.asarray(~bounds.all_null if node.negated else bounds.has_null, dtype=bool)
        case IsNaN():
            if node.negated:
                return np.ones(n, dtype=bool)
            return np.asarray(~bounds.all_null & bounds.may_hold_nan, dtype=bool)
        case StartsWith():
            return _prefix(node, bounds)
    raise _FallbackError


def might_match_mask(predicate: Predicate, actions: pa.Table, types: Mapping[str, str]) -> Mask:
    """Per file (row of deltalake's ``get_add_actions(flatten=False)``): might it match?"""
    stats = _Stats(actions)
    cache: dict[str, _Bounds] = {}
    tree = rewrite_not(predicate)

    def visit(node: Predicate) -> Mask:
        if isinstance(node, And):
            return visit(node.left) & visit(node.right)
        if isinstance(node, Or):
            return visit(node.left) | visit(node.right)
        if isinstance(node, Not):
            return np.ones(stats.n, dtype=bool)
        try:
            return _leaf(node, stats, types, cache)
        except _FallbackError:

            def outcomes(s: FileSummary) -> bool:
                return evaluate(node, s, types) is Outcome.ROWS_MIGHT_MATCH

            return np.array([outcomes(s) for s in stats.summaries()], dtype=bool)

    return visit(tree)
