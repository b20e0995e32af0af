"""Clustering depth: how far the files' [min, max] ranges of one column overlap.

Snowflake's measure of how well a table is clustered
(``SYSTEM$CLUSTERING_INFORMATION``, ``SYSTEM$CLUSTERING_DEPTH``), computed here
from Delta's per-file statistics alone: no data is read. For one column, the
files whose statistics bound it are closed ranges ``[min, max]``, and

- two files *overlap* when their ranges share a value (``[1, 5]`` and
  ``[5, 9]`` do: a lookup of 5 reads both);
- a file's *overlaps* are the other files it overlaps;
- the *depth at a value* is the number of files whose range holds it: the
  files an equality lookup of that value reads;
- a file's *depth* is the greatest depth at a value of its range: the most
  files that share one value with it, itself included (1 when it overlaps
  nothing; every file's count when all ranges share a value);
- a file is *constant* when its min equals its max: it holds one value, and
  no reclustering narrows it.

``average_overlaps`` and ``average_depth`` average those over the files;
``depth_histogram`` counts files by depth in Snowflake's buckets (one per
depth up to 16, then 32, 64, ...: depths 17 to 32 count under 32). Files of
different partitions never overlap: each partition is measured on its own
and the figures add up across partitions (averages weighted by files,
histograms summed).

Only files whose statistics bound the column are measured. A file whose
every row is NULL there (or that has no rows) holds no value of it, so no
lookup of a value reads it: it is counted as ``null_files``. A file without
both bounds (no statistics, the column not indexed, a string bound cut
away, a NaN bound, bounds the wrong way round, a nested column's) is counted
as ``unknown_files``: its range is unknown, and nothing is assumed of it.

Values compare as their Arrow type orders them (numbers by value, decimals
exactly, strings in UTF-8 byte order as in Spark and Delta, dates and
timestamps by instant): Arrow ranks them once, and the sweep runs over the
ranks, O(n log n) in the number of files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "ColumnDepth",
    "column_depth",
    "depth_bucket",
    "file_depths",
    "ranked_depth",
]

_EXACT_BUCKETS = 16  # depths up to 16 have buckets of their own; then powers of two

Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class ColumnDepth:
    """How the files' ranges of one column overlap (see :mod:`zorder.stats.depth`)."""

    column: str
    files: int  # files measured: their statistics bound the column
    average_overlaps: float  # other files whose range meets a file's, averaged (0.0: none)
    average_depth: float  # the most files sharing a value with a file, averaged (1.0: none)
    # Files by depth: bucket -> count, ascending, empty buckets left out. A bucket up to 16
    # is that depth; 32, 64, ... count depths above the bucket before it.
    depth_histogram: Mapping[int, int] = field(default_factory=dict)
    constant_files: int = 0  # measured files whose min equals their max
    null_files: int = 0  # files holding no value of the column (every row NULL, or none)
    unknown_files: int = 0  # files whose statistics do not bound the column


def depth_bucket(depth: int) -> int:
    """The histogram bucket of ``depth``: itself up to 16, else the next power of two."""
    if depth <= _EXACT_BUCKETS:
        return depth
    return 1 << (depth - 1).bit_length()


def file_depths(lows: Ints, highs: Ints) -> tuple[Ints, Ints]:
    """Each file's overlaps and depth, for closed ranges ``[lows[i], highs[i]]``.

    Sorting the endpoints is all it takes. Another file misses ``[lo, hi]``
    exactly when it starts after ``hi`` or ends before ``lo`` (never both),
    so overlaps are counted by binary search. The depth at a value can only
    rise at a range's start, so a file's depth is the largest depth at the
    starts within its range: a range-maximum query over the distinct starts
    (a sparse table, ``log n`` levels).
    """
    count = len(lows)
    if count == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    starts_sorted = np.sort(lows)
    ends_sorted = np.sort(highs)
    after = count - np.searchsorted(starts_sorted, highs, side="right")
    before = np.searchsorted(ends_sorted, lows, side="left")
    overlaps = (count - after - before - 1).astype(np.int64)
    starts = starts_sorted[np.concatenate(([True], starts_sorted[1:] != starts_sorted[:-1]))]
    covering = np.searchsorted(starts_sorted, starts, side="right") - np.searchsorted(
        ends_sorted, starts, side="left"
    )
    first = np.searchsorted(starts, lows, side="left")
    last = np.searchsorted(starts, highs, side="right") - 1
    return overlaps, _range_max(covering.astype(np.int64), first, last)


def _range_max(values: Ints, first: npt.NDArray[np.intp], last: npt.NDArray[np.intp]) -> Ints:
    """``max(values[first[i] : last[i] + 1])`` for every i (each range non-empty)."""
    levels = [values]  # levels[k][j] = max(values[j : j + 2**k])
    while 2 ** len(levels) <= len(values):
        below, width = levels[-1], 2 ** (len(levels) - 1)
        levels.append(np.maximum(below[:-width], below[width:]))
    span = last - first + 1
    level = np.frexp(span.astype(np.float64))[1] - 1  # floor(log2(span)), exact for ints
    result = np.empty(len(first), np.int64)
    for k in np.unique(level):
        chosen = level == k
        table = levels[int(k)]
        result[chosen] = np.maximum(table[first[chosen]], table[last[chosen] - (1 << int(k)) + 1])
    return result


def ranked_depth(
    column: str,
    lows: Ints,
    highs: Ints,
    groups: Ints,
    *,
    null_files: int = 0,
    unknown_files: int = 0,
) -> ColumnDepth:
    """The depth of files given by ranks (``lows[i] <= highs[i]``, non-negative), file i
    in partition ``groups[i]``: files of different groups never overlap.

    Each group is moved to a stretch of its own (``group * span + rank``), so
    one sweep measures every partition at once.
    """
    count = len(lows)
    if count == 0:
        return ColumnDepth(column, 0, 0.0, 0.0, {}, 0, null_files, unknown_files)
    span = int(highs.max()) + 1
    offset = groups.astype(np.int64) * span
    overlaps, depths = file_depths(lows + offset, highs + offset)
    buckets: dict[int, int] = {}
    for depth in np.flatnonzero(by_depth := np.bincount(depths)):
        bucket = depth_bucket(int(depth))
        buckets[bucket] = buckets.get(bucket, 0) + int(by_depth[depth])
    return ColumnDepth(
        column=column,
        files=count,
        average_overlaps=float(overlaps.mean()),
        average_depth=float(depths.mean()),
        depth_histogram=dict(sorted(buckets.items())),
        constant_files=int(np.count_nonzero(lows == highs)),
        null_files=null_files,
        unknown_files=unknown_files,
    )


def column_depth(
    column: str,
    lows: pa.Array,
    highs: pa.Array,
    groups: Sequence[int] | Ints,
    *,
    valueless: Sequence[bool] | npt.NDArray[np.bool_] | None = None,
) -> ColumnDepth:
    """The depth of one column from each file's bounds, as Delta statistics give them.

    ``lows`` and ``highs``: per file, its min and max of the column (null
    where unknown), of one Arrow type. ``groups``: per file, the index of its
    partition. ``valueless``: per file, whether it holds no value of the
    column (every row NULL); such a file has no bounds and is not unknown.
    """
    if not _ordered(lows.type) or not _ordered(highs.type):  # a struct's bounds, say
        return ColumnDepth(column, 0, 0.0, 0.0, {}, 0, 0, len(lows))
    if lows.type != highs.type:
        highs = highs.cast(lows.type)
    known = pc.and_(pc.is_valid(lows), pc.is_valid(highs))
    if pa.types.is_floating(lows.type):
        known = pc.and_(known, pc.invert(pc.or_(pc.is_nan(lows), pc.is_nan(highs))))
    bounded = np.asarray(known.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)
    empty = (
        np.zeros(len(bounded), dtype=bool)
        if valueless is None
        else np.asarray(valueless, dtype=bool) & ~bounded
    )
    mask = pa.array(bounded)
    low_ranks, high_ranks = _ranks(lows.filter(mask), highs.filter(mask))
    ordered = low_ranks <= high_ranks  # bounds the wrong way round bound nothing
    group_ids = np.asarray(groups, dtype=np.int64)[bounded]
    return ranked_depth(
        column,
        low_ranks[ordered],
        high_ranks[ordered],
        group_ids[ordered],
        null_files=int(np.count_nonzero(empty)),
        unknown_files=len(bounded) - int(np.count_nonzero(empty)) - int(ordered.sum()),
    )


def _ordered(kind: pa.DataType) -> bool:
    """Whether bounds of type ``kind`` are single values in one order (not nested ones)."""
    return not pa.types.is_nested(kind) and not pa.types.is_dictionary(kind)


def _ranks(lows: pa.Array, highs: pa.Array) -> tuple[Ints, Ints]:
    """Dense ranks of the bounds (equal values, equal ranks), in their type's order."""
    if len(lows) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    both = pa.concat_arrays([lows, highs])
    ranks = pc.rank(both, sort_keys="ascending", tiebreaker="dense").to_numpy()
    ranks = ranks.astype(np.int64) - 1
    return ranks[: len(lows)], ranks[len(lows) :]
