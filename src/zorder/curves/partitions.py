"""Partitions of a run's rows and their files: how many files each partition gets, the rows
sampled from each, and each one's file plan fitted on its sample, numbered after the files
of the partitions before it. Pure, for both engines (:mod:`zorder.spark.partitions`,
:mod:`zorder.arrow.engine`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from zorder.curves.cells import apportion
from zorder.curves.clustering import (
    DEFAULT_SAMPLE_SIZE,
    MAX_SAMPLE_SIZE,
    SAMPLE_ROWS_PER_FILE,
    ClusteringPlan,
)
from zorder.curves.plan import FilePlan
from zorder.errors import InvalidArgumentError

__all__ = [
    "Partition",
    "PartitionFiles",
    "check_partitioned_plan",
    "files_per_partition",
    "fit_partitions",
    "logged_partitions",
    "partition_sample_sizes",
]


@dataclass(frozen=True)
class Partition:
    """One partition of the rows to write: its key, its values, its rows."""

    key: str | int  # the value of the rows' partition key column
    values: tuple[Any, ...]  # in the order of the partition columns
    rows: int


def check_partitioned_plan(plan: ClusteringPlan) -> None:
    """Refuse a plan clustering inside partitions cannot follow."""
    if plan.method != "rank" or (plan.curve == "linear" and len(plan.columns) > 1):
        raise InvalidArgumentError(
            f"clustering inside partitions takes rank keys along 'zorder' or 'hilbert' (or one "
            f"column), got curve={plan.curve!r}, method={plan.method!r}"
        )


def files_per_partition(
    partitions: Sequence[Partition], *, num_files: int | None, bytes_total: int, target: int
) -> list[int]:
    """Files of each partition: ``num_files`` shared by rows (one at least), or by target size."""
    rows = np.array([p.rows for p in partitions], dtype=np.float64)
    if num_files is not None:
        return apportion(rows, max(num_files, len(partitions)))
    share = rows / max(1.0, rows.sum())
    return [max(1, math.ceil(bytes_total * s / target)) for s in share]


@dataclass(frozen=True)
class PartitionFiles:
    """The partitions of a run's rows and the number of each one's first file: file ``n``
    holds rows of the partition ``i`` with ``first_file[i] <= n < first_file[i + 1]``."""

    partitions: tuple[Partition, ...]
    first_file: tuple[int, ...]  # file number of each partition's first file; then the total

    @property
    def rows_per_file(self) -> int:
        """The rows of the largest partition's files, each: what sizes per-file structures."""
        counts = np.diff(np.array(self.first_file))
        return max(
            (-(-p.rows // int(n)) for p, n in zip(self.partitions, counts, strict=True) if n),
            default=0,
        )

    def partition_of_file(self, number: int) -> Partition:
        index = int(np.searchsorted(np.array(self.first_file), number, side="right")) - 1
        return self.partitions[index]


def partition_sample_sizes(files: Sequence[int], partitions: Sequence[Partition]) -> list[int]:
    """The rows sampled from each partition to cut its ``files[i]`` files."""
    wanted = [
        min(p.rows, max(SAMPLE_ROWS_PER_FILE * f, DEFAULT_SAMPLE_SIZE if f > 1 else 1_000))
        for p, f in zip(partitions, files, strict=True)
    ]
    total = sum(wanted)
    if total <= MAX_SAMPLE_SIZE:
        return wanted
    scale = MAX_SAMPLE_SIZE / total  # the driver holds the sample: keep it bounded
    return [
        max(min(p.rows, 100 * f), int(w * scale))
        for p, w, f in zip(partitions, wanted, files, strict=True)
    ]


def fit_partitions(
    sample: pa.Table,
    known: pa.Array,
    plan: ClusteringPlan,
    sizes: Sequence[int],
    files: Sequence[int],
    seed: int,
) -> tuple[list[FilePlan], list[int]]:
    """Each partition's file plan, fitted to its rows of ``sample`` (whose first column is the
    partition key), and the number of each partition's first file."""
    # Sampled rows' partitions, found once for all partitions.
    sampled_in = pc.fill_null(pc.index_in(sample.column(0), value_set=known), -1)
    grouped = np.argsort(sampled_in.to_numpy(), kind="stable")
    bounds = np.searchsorted(sampled_in.to_numpy()[grouped], np.arange(len(sizes) + 1))
    rng = np.random.default_rng(seed)
    fitted: list[FilePlan] = []
    first_file = [0]
    for index, (size, count) in enumerate(zip(sizes, files, strict=True)):
        rows = np.sort(grouped[bounds[index] : bounds[index + 1]])
        if len(rows) > size:
            rows = np.sort(rng.choice(rows, size, replace=False))
        own = sample.select(range(1, sample.num_columns)).take(pa.array(rows, pa.int64()))
        fitted.append(plan.fit(own, count=count))
        first_file.append(first_file[-1] + fitted[-1].count)
    return fitted, first_file


def logged_partitions(
    chosen: Sequence[tuple[Any, ...]], groups: Mapping[tuple[Any, ...], Sequence[Any]]
) -> list[Partition] | None:
    """``chosen`` keyed by index, rows counted by the log; None if a file's count is missing."""
    partitions = []
    for index, values in enumerate(chosen):
        counts = [f.num_records for f in groups[values]]
        if any(count is None for count in counts):
            return None
        rows = sum(count for count in counts if count is not None)
        if rows:  # a partition of empty files has nothing to cluster (its files go)
            partitions.append(Partition(index, values, rows))
    return partitions
