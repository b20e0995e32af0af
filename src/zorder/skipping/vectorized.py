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
        self.rows = pc.fill_null(rows, 0).to_numpy().astype(np.int64)
        paths = actions.column("path")
        self.nan_free = np.asarray(
            pc.starts_with(paths, "zorder-").to_numpy(zero_copy_only=False), dtype=bool
        )
        self._summaries: list[FileSummary] | None = None

    def field(self, kind: str, name: str) -> pa.Array | None:
        if kind not in self.actions.column_names:
            return None
        column = self.actions.column(kind).combine_chunks()
        if not pa.types.is_struct(column.type) or column.type.get_field_index(name) < 0:
            return None
        values = column.field(name)
        if column.null_count:  # a missing stats struct hides its fields too
            values = pc.if_else(column.is_valid(), values, pa.nulls(len(values), values.type))
        return values

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
            pc.fill_null(nulls, 0).to_numpy().astype(np.int64)
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
            self.low = self._ints(self.low_raw)
            self.high = self._ints(self.high_raw)
            return "int"
        if t in FLOAT_TYPES:
            self.low = self._floats(self.low_raw)
            self.high = self._floats(self.high_raw)
            self.low_valid &= ~np.isnan(self.low)
            self.high_valid &= ~np.isnan(self.high)
            self.may_hold_nan = ~(stats.nan_free & self.low_valid & self.high_valid)
            return "float"
        if t == "date":
            self.low = self._ints(self.low_raw, pa.int32()) * _MICROS_PER_DAY
            self.high = self._ints(self.high_raw, pa.int32()) * _MICROS_PER_DAY
            return "date"
        if t in ("timestamp", "timestamp_ntz"):
            self.low = self._micros(self.low_raw)
            high = self._micros(self.high_raw)
            # Some writers cut the maximum down to the millisecond: widen it.
            self.high = np.where(high <= _INT64_MAX - 1000, high + 1000, _INT64_MAX)
            return t
        if t == "string":
            self.low = self._strings(self.low_raw)
            high = self._strings(self.high_raw)
            lengths = np.array([len(h) for h in high], dtype=np.int64)
            self.high_is_prefix = self.high_valid & (lengths >= STRING_PREFIX_LENGTH)
            self.high = np.array(
                [
                    h[:STRING_PREFIX_LENGTH] if cut else h
                    for h, cut in zip(high, self.high_is_prefix, strict=True)
                ],
                dtype=object,
            )
            return "string"
        raise _FallbackError

    @staticmethod
    def _ints(array: pa.Array | None, as_type: pa.DataType | None = None) -> npt.NDArray[Any]:
        if array is None:
            return np.zeros(0, dtype=np.int64)
        if as_type is not None:
            array = array.view(as_type)
        return pc.fill_null(array, 0).to_numpy().astype(np.int64)

    @staticmethod
    def _floats(array: pa.Array | None) -> npt.NDArray[Any]:
        if array is None:
            return np.zeros(0, dtype=np.float64)
        return pc.fill_null(array.cast(pa.float64()), math.nan).to_numpy()

    @staticmethod
    def _micros(array: pa.Array | None) -> npt.NDArray[Any]:
        if array is None:
            return np.zeros(0, dtype=np.int64)
        scale = {"s": 1_000_000, "ms": 1000, "us": 1, "ns": 0}[array.type.unit]
        values = pc.fill_null(array.view(pa.int64()), 0).to_numpy().astype(np.int64)
        if scale == 0:
            return values // 1000
        return values * scale

    @staticmethod
    def _strings(array: pa.Array | None) -> npt.NDArray[Any]:
        if array is None:
            return np.zeros(0, dtype=object)
        return np.array(pc.fill_null(array, "").to_pylist(), dtype=object)


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


def _below_low(bounds: _Bounds, v: Any, low: npt.NDArray[Any], inclusive: bool) -> Mask:
    with np.errstate(invalid="ignore"):
        test = (v < low) if inclusive else (v <= low)
    return bounds.low_valid & np.asarray(test, dtype=bool)


def _above_high(
    bounds: _Bounds, v: Any, high: npt.NDArray[Any], inclusive: bool, nan_matters: bool = True
) -> Mask:
    with np.errstate(invalid="ignore"):
        plain = np.asarray((v > high) if inclusive else (v >= high), dtype=bool)
    result = bounds.high_valid & plain
    if bounds.kind == "string" and bounds.high_is_prefix.any():
        prefix_rows = bounds.high_is_prefix
        beyond = np.array([v[: len(h)] > h for h in high[prefix_rows]], dtype=bool)
        result[prefix_rows] = beyond
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
    with np.errstate(invalid="ignore"):
        single = bounds.low_valid & bounds.high_valid & (low == v) & (high == v)
    single = np.asarray(single, dtype=bool) & ~bounds.may_hold_nan & ~bounds.high_is_prefix
    return not_all_null & ~single


def _prefix(node: StartsWith, bounds: _Bounds) -> Mask:
    if bounds.kind != "string":
        raise _FallbackError
    not_all_null = ~bounds.all_null
    if node.negated:
        return not_all_null
    prefix = node.prefix
    n = len(bounds.low)
    low_beyond = (
        np.array([lo[: len(prefix)] > prefix for lo in bounds.low], dtype=bool)
        if n
        else np.zeros(0, bool)
    )
    low_beyond &= bounds.low_valid
    high_below = (
        np.array(
            [
                (prefix[: len(h)] > h) if cut else (h < prefix)
                for h, cut in zip(bounds.high, bounds.high_is_prefix, strict=True)
            ],
            dtype=bool,
        )
        if n
        else np.zeros(0, bool)
    )
    high_below &= bounds.high_valid
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
