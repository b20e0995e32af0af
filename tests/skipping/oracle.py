"""The test oracle: a bound predicate evaluated against one file's statistics, slowly.

:func:`zorder.skipping.evaluate.might_match_mask` evaluates every file at
once with NumPy; this walks one file's statistics with plain Python
comparisons, rule by rule, and the property tests hold the two equal. The
answer is conservative: ``ROWS_CANNOT_MATCH`` only when no row of the
file can satisfy the predicate; anything unknown means ``ROWS_MIGHT_MATCH``.
Statistics written by other Delta writers are not all alike, so bounds are
read defensively:

- a string bound of 32 or more characters may be a truncated prefix;
- timestamp bounds are kept at millisecond precision and some writers cut
  the maximum down, so the maximum is widened by a millisecond;
- some writers leave NaN out of double bounds (NaN sorts above every number
  in Spark); only files vouched for (``nan_free_bounds``: zorder's own runs,
  which leave the bounds out when a file holds NaN) are trusted on the upper
  side of double columns.
"""

from __future__ import annotations

import datetime as dt
import decimal
import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from zorder.skipping.predicates import (
    FLOAT_TYPES,
    AlwaysFalse,
    AlwaysTrue,
    And,
    Comparison,
    InList,
    IsNaN,
    IsNull,
    Not,
    NullComparison,
    Or,
    Predicate,
    StartsWith,
    Unknown,
    rewrite_not,
)
from zorder.stats import STRING_PREFIX_LENGTH

__all__ = ["FileSummary", "Outcome", "evaluate"]


class Outcome(enum.Enum):
    ROWS_MIGHT_MATCH = "rows might match"
    ROWS_CANNOT_MATCH = "rows cannot match"


@dataclass(frozen=True)
class FileSummary:
    """What a file's add action tells: row count and per-column bounds and null counts."""

    path: str
    num_records: int | None
    min_values: Mapping[str, Any] = field(default_factory=dict)
    max_values: Mapping[str, Any] = field(default_factory=dict)
    null_count: Mapping[str, int | None] = field(default_factory=dict)
    nan_free_bounds: bool = False  # vouched for: double bounds are left out of NaN files


@dataclass(frozen=True)
class _Column:
    """One column's statistics in one file, read defensively."""

    low: Any  # None: unknown
    high: Any  # None: unknown (or unbounded)
    high_is_prefix: bool  # string maximum that may have been truncated
    nulls: int | None
    rows: int | None
    may_hold_nan: bool

    @property
    def all_null(self) -> bool:
        return self.nulls is not None and self.rows is not None and self.nulls >= self.rows

    @property
    def has_null(self) -> bool:
        return self.nulls is None or self.nulls > 0


def _column(summary: FileSummary, name: str, type_name: str) -> _Column:
    low = summary.min_values.get(name)
    high = summary.max_values.get(name)
    high_is_prefix = False
    if isinstance(low, float) and math.isnan(low):
        low = None
    if isinstance(high, float) and math.isnan(high):
        high = None
    if isinstance(high, str) and len(high) >= STRING_PREFIX_LENGTH:
        # A cut maximum (with or without a writer's tie-breaker character):
        # the true maximum may be any string that starts with its first 32.
        high = high[:STRING_PREFIX_LENGTH]
        high_is_prefix = True
    if isinstance(high, dt.datetime):
        try:
            high = high + dt.timedelta(milliseconds=1)
        except OverflowError:
            high = None
    may_hold_nan = type_name in FLOAT_TYPES and not (
        summary.nan_free_bounds and low is not None and high is not None
    )
    nulls = summary.null_count.get(name)
    return _Column(
        low=low,
        high=high,
        high_is_prefix=high_is_prefix,
        nulls=nulls if isinstance(nulls, int) else None,  # nested: counts per field
        rows=summary.num_records,
        may_hold_nan=may_hold_nan,
    )


def _midnight(day: dt.date, *, like: dt.datetime) -> dt.datetime:
    """A date as the timestamp Spark casts it to, zoned (UTC) when ``like`` is."""
    midnight = dt.datetime(day.year, day.month, day.day)
    return midnight.replace(tzinfo=dt.UTC) if like.tzinfo else midnight


def _comparable(bound: Any, value: Any) -> tuple[Any, Any] | None:
    """The pair in one domain (dates meet timestamps at UTC midnight), or None."""
    if bound is None:
        return None
    if isinstance(bound, float) != isinstance(value, float):
        # Spark compares a double with any other number as doubles (a decimal
        # 0.1 equals the double 0.1), never exactly.
        if isinstance(bound, int | decimal.Decimal) and not isinstance(bound, bool):
            return float(bound), float(value)
        if isinstance(value, int | decimal.Decimal) and not isinstance(value, bool):
            return bound, float(value)
    if isinstance(value, dt.datetime) and not isinstance(bound, dt.datetime):
        if not isinstance(bound, dt.date):
            return None
        bound = _midnight(bound, like=value)
    elif isinstance(bound, dt.datetime) and not isinstance(value, dt.datetime):
        if not isinstance(value, dt.date):
            return None
        value = _midnight(value, like=bound)
    if (
        isinstance(bound, dt.datetime)
        and isinstance(value, dt.datetime)
        and (bound.tzinfo is None) != (value.tzinfo is None)
    ):
        return None
    return bound, value


def _below_low(column: _Column, value: Any, *, inclusive: bool) -> bool:
    """Is every value of the file above ``value`` (>= when not inclusive)?"""
    pair = _comparable(column.low, value)
    if pair is None:
        return False
    low, v = pair
    try:
        return bool(v < low) if inclusive else bool(v <= low)
    except TypeError:
        return False


def _above_high(column: _Column, value: Any, *, inclusive: bool, nan_matters: bool = True) -> bool:
    """Is every value of the file below ``value`` (<= when not inclusive)?

    ``nan_matters``: whether a NaN row (above every number, maybe hidden from
    the bounds) could satisfy the condition; it cannot equal a number.
    """
    if column.may_hold_nan and nan_matters:
        return False
    pair = _comparable(column.high, value)
    if pair is None:
        return False
    high, v = pair
    try:
        if column.high_is_prefix and isinstance(v, str):
            # Every string with this prefix is a possible value.
            return bool(v[: len(high)] > high)
        return bool(v > high) if inclusive else bool(v >= high)
    except TypeError:
        return False


def _might_equal(column: _Column, value: Any) -> bool:
    if column.all_null:
        return False
    if isinstance(value, float) and math.isnan(value):
        return column.may_hold_nan
    return not (
        _below_low(column, value, inclusive=True)
        or _above_high(column, value, inclusive=True, nan_matters=False)
    )


def _comparison(node: Comparison, column: _Column) -> bool:
    if column.all_null:
        return False
    value = node.value
    if isinstance(value, float) and math.isnan(value) and node.op not in ("=", "<=>"):
        return True  # NaN literals in ranges: leave them to the rows
    match node.op:
        case "=" | "<=>":
            return _might_equal(column, value)
        case "!=":
            pair_low, pair_high = _comparable(column.low, value), _comparable(column.high, value)
            if pair_low is None or pair_high is None or column.may_hold_nan:
                return True
            if column.high_is_prefix:
                return True
            try:
                return not (pair_low[0] == value == pair_high[0])
            except TypeError:
                return True
        case "<":
            return not _below_low(column, value, inclusive=False)
        case "<=":
            return not _below_low(column, value, inclusive=True)
        case ">":
            return not _above_high(column, value, inclusive=False)
        case ">=":
            return not _above_high(column, value, inclusive=True)
    return True


def _prefix(node: StartsWith, column: _Column) -> bool:
    if column.all_null:
        return False
    if node.negated:
        return True
    prefix = node.prefix
    # Strings with the prefix lie in [prefix, prefix + anything).
    if column.low is not None and isinstance(column.low, str):
        low = column.low
        if low[: len(prefix)] > prefix:
            return False
    if column.high is not None and isinstance(column.high, str):
        high = column.high
        if column.high_is_prefix:
            if prefix[: len(high)] > high:
                return False
        elif high < prefix:
            return False
    return True


def _leaf(node: Predicate, summary: FileSummary, types: Mapping[str, str]) -> bool:
    match node:
        case AlwaysTrue() | Unknown():
            return True
        case AlwaysFalse():
            return False
        case Comparison():
            return _comparison(node, _column(summary, node.column, types[node.column]))
        case InList():
            column = _column(summary, node.column, types[node.column])
            if node.negated:
                # x NOT IN (.., NULL) is never TRUE, nor is NULL NOT IN (..).
                return not (column.all_null or node.has_null)
            return any(_might_equal(column, v) for v in node.values)
        case IsNull():
            column = _column(summary, node.column, types[node.column])
            if node.negated:
                return not column.all_null
            return column.has_null
        case IsNaN():
            column = _column(summary, node.column, types[node.column])
            if node.negated:
                return True  # isnan(NULL) is false, so NOT isnan holds for nulls too
            return not column.all_null and column.may_hold_nan
        case StartsWith():
            return _prefix(node, _column(summary, node.column, types[node.column]))
        case NullComparison():
            return False  # x = NULL is NULL for every row, and so is its NOT
    return True


def _might_match(node: Predicate, summary: FileSummary, types: Mapping[str, str]) -> bool:
    if isinstance(node, And):
        return _might_match(node.left, summary, types) and _might_match(node.right, summary, types)
    if isinstance(node, Or):
        return _might_match(node.left, summary, types) or _might_match(node.right, summary, types)
    if isinstance(node, Not):
        return True  # rewrite_not leaves NOT only around what cannot be decided
    return _leaf(node, summary, types)


def evaluate(predicate: Predicate, summary: FileSummary, types: Mapping[str, str]) -> Outcome:
    """Can any row of the file satisfy the bound ``predicate``? ``types``: column -> Spark type."""
    tree = rewrite_not(predicate)
    if _might_match(tree, summary, types):
        return Outcome.ROWS_MIGHT_MATCH
    return Outcome.ROWS_CANNOT_MATCH
