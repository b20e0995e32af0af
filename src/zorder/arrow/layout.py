"""Rows laid out as a run's files in this process: the in-process twin of
:func:`zorder.spark.layout.cluster` and :func:`zorder.spark.partitions.cluster_partitions`.

The same fitted :class:`~zorder.curves.plan.FilePlan` places each row (the
NumPy code Spark's key runs are tested equal to, row for row), so the same
sample gives the same files: each row's file is its cell (numbered after the
files of the partitions before it), and a file's rows are sorted by their key
along the curve (then by the value, for one column), as Spark sorts them.

A plain sort (one column, or the linear baseline) orders every row by the
columns, NULLs first, and cuts the order into files of equal rows, a run of
equal values never split: Spark's range partitioner cuts at bounds it samples
itself, so its files hold about, not exactly, as many rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from zorder.curves.clustering import ClusteringPlan
from zorder.curves.plan import FilePlan
from zorder.curves.ranks import ranked_prefix

__all__ = ["FileRows", "curve_files", "sorted_files"]


@dataclass(frozen=True)
class FileRows:
    """Which rows of a table go to which file, in the order they are written.

    File ``numbers[i]`` holds the rows ``order[bounds[i]:bounds[i + 1]]``;
    numbers ascend, and a file without rows is not listed.
    """

    order: npt.NDArray[np.int64]
    numbers: npt.NDArray[np.int64]
    bounds: npt.NDArray[np.int64]

    def rows_of(self, index: int) -> npt.NDArray[np.int64]:
        return self.order[self.bounds[index] : self.bounds[index + 1]]

    @classmethod
    def of(cls, order: npt.NDArray[np.int64], file_of_row: npt.NDArray[np.int64]) -> FileRows:
        """``order`` (rows in write order, their files ascending) cut where the file changes."""
        files = file_of_row[order]
        starts = np.flatnonzero(np.diff(files)) + 1 if len(files) else np.array([], np.int64)
        bounds = np.concatenate([[0], starts, [len(order)]]).astype(np.int64)
        numbers = files[bounds[:-1]] if len(order) else np.array([], np.int64)
        return cls(order.astype(np.int64), numbers.astype(np.int64), bounds)


def key_arrays(rows: pa.Table, plan: ClusteringPlan) -> list[pa.Array]:
    """The clustering columns of ``rows`` as rank buckets see them (strings cut)."""
    return [ranked_prefix(rows.column(name).combine_chunks()) for name in plan.names]


def curve_files(
    rows: pa.Table, plan: ClusteringPlan, files: FilePlan, *, first_file: int = 0
) -> FileRows:
    """``rows`` cut by the fitted ``files``: each row to its cell, numbered from
    ``first_file``, sorted inside it by its key along the curve (then by the value of a
    single column, NULLs first)."""
    if rows.num_rows == 0:
        return FileRows.of(np.array([], np.int64), np.array([], np.int64))
    cell, key = files.place(key_arrays(rows, plan))
    number = cell.astype(np.int64) + first_file
    sort_keys: list[np.ndarray] = [key, number]  # np.lexsort: the last key is the first
    if len(plan.columns) == 1:
        sort_keys.insert(0, _value_ranks(rows.column(plan.names[0])))
    order = np.lexsort(sort_keys)
    return FileRows.of(order, number)


def sorted_files(rows: pa.Table, plan: ClusteringPlan, *, count: int) -> FileRows:
    """``rows`` sorted by the clustering columns (NULLs first) and cut into ``count`` files
    of about equal rows, a run of equal values kept in one file."""
    n = rows.num_rows
    if n == 0:
        return FileRows.of(np.array([], np.int64), np.array([], np.int64))
    order = pc.sort_indices(
        rows.select(plan.names), sort_keys=[(name, "ascending", "at_start") for name in plan.names]
    ).to_numpy()
    ordered = rows.select(plan.names).take(pa.array(order))
    group = _run_ids(ordered)  # equal values (NULLs equal) share an id, ascending
    wanted = (np.arange(count, dtype=np.int64) * n) // count  # each file's first row, if cut evenly
    # A cut inside a run of equal values moves to the run's start.
    starts = np.unique(np.searchsorted(group, group[wanted], side="left"))
    file_of_position = np.searchsorted(starts, np.arange(n), side="right") - 1
    file_of_row = np.empty(n, dtype=np.int64)
    file_of_row[order] = file_of_position
    return FileRows.of(order.astype(np.int64), file_of_row)


def _run_ids(ordered: pa.Table) -> npt.NDArray[np.int64]:
    """For rows sorted by every column of ``ordered``: the number of the run of equal rows
    each belongs to (NULL equal to NULL)."""
    n = ordered.num_rows
    changed = np.zeros(n, dtype=bool)
    for column in ordered.columns:
        values = column.combine_chunks()
        if n > 1:
            previous, current = values.slice(0, n - 1), values.slice(1)
            differs = pc.fill_null(pc.not_equal(previous, current), False).to_numpy(
                zero_copy_only=False
            )
            nulls = (pc.is_null(previous).to_numpy(zero_copy_only=False)) != (
                pc.is_null(current).to_numpy(zero_copy_only=False)
            )
            changed[1:] |= differs | nulls
    return np.cumsum(changed).astype(np.int64)


def _value_ranks(values: pa.ChunkedArray) -> npt.NDArray[np.int64]:
    """Each value's position in the order NULLs first, then ascending (ties share nothing:
    only the order of distinct positions matters to a sort key)."""
    order = pc.sort_indices(
        pa.table({"v": values}), sort_keys=[("v", "ascending", "at_start")]
    ).to_numpy()
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = np.arange(len(order), dtype=np.int64)
    return ranks
