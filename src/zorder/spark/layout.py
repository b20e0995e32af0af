"""The layout transform: key -> one partition per file -> sort within each file.

Rank keys send each row to its file with ``repartitionById``: for Z-order
its cell (see :mod:`zorder.curves.cells`), so every file is one box of the
mixed-radix curve; for Hilbert a range of the key cut at sampled quantiles.
Direct keys (binary) go to equal-mass ranges of the key cut on the sample.
The file and the key are computed together in one pass over the rows; one
column or the linear baseline is a plain range sort.

Small files of an unpartitioned table are written by a few tasks: each takes
a contiguous run of file numbers, sorted by file then key, and the writer's
``partitionBy`` on the file column (:data:`FILE_COLUMN`) starts a new file
at each number. One task a file spent most of a small job scheduling tasks
(benchmarks/phases.py); larger files keep a task each.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from zorder.curves.cells import FileCells, KeyRanges
from zorder.curves.kinds import ClusteringSpec, Curve, KeyMethod, as_curve, as_key_method
from zorder.errors import InvalidArgumentError
from zorder.spark.keys import (
    DEFAULT_SAMPLE_SEED,
    ClusteringColumn,
    bits_per_column,
    cell_key,
    cell_key_packing,
    direct_file_key,
    direct_ranges,
    file_cells,
    fit_rank_buckets,
    key_ranges,
    resolve_clustering_columns,
    sample_columns,
    sample_size_for,
)

__all__ = ["FILE_COLUMN", "ClusteringPlan", "cluster", "in_files", "plan_clustering", "write_tasks"]

# Each row's file number, a hidden partition column of the write: the files of a run go
# to <run>/zorder_file=<n>/ (Delta paths may name any directory). No leading underscore:
# Delta Spark's VACUUM skips directories whose names start with one.
FILE_COLUMN = "zorder_file"
# Stored bytes one write task takes at most, and the mean file size from which each
# file gets a task of its own. Writing by a hidden partition column costs each row a
# projection and a comparison; fewer tasks save each file a task's scheduling. Into 100
# files on 2 cores (benchmarks/phases.py): at 100,000 and 1,000,000 rows (28 KB and
# 280 KB a file) 8 tasks took 0.6-1.1 s less than 100; at 10,000,000 rows (2.8 MB a
# file) 35 to 70 tasks took 1-5 s more.
_TASK_BYTES = 4 << 20
_SMALL_FILE_BYTES = 1 << 20


@dataclass(frozen=True)
class ClusteringPlan:
    """What clustering a DataFrame means, checked before any job runs."""

    columns: tuple[ClusteringColumn, ...]
    curve: Curve
    method: KeyMethod

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def spec(self) -> ClusteringSpec:
        """The plan as a table records it: column names, curve, key method."""
        return ClusteringSpec(tuple(self.names), self.curve, self.method)

    @property
    def sorts_plainly(self) -> bool:
        """One column, or the linear baseline: a plain lexicographic range sort."""
        return self.curve == "linear" or len(self.columns) == 1


def plan_clustering(
    df: DataFrame, by: Sequence[str], *, curve: Curve = "zorder", method: KeyMethod = "rank"
) -> ClusteringPlan:
    """Validate the clustering request against ``df`` (raises InvalidArgumentError)."""
    plan = ClusteringPlan(
        tuple(resolve_clustering_columns(df, by)), as_curve(curve), as_key_method(method)
    )
    if not plan.sorts_plainly and plan.method == "rank":
        bits_per_column(len(plan.columns))  # raises on too many columns, warns on many
    return plan


def cluster(
    df: DataFrame,
    plan: ClusteringPlan,
    *,
    num_files: int,
    sample_size: int | None = None,
    seed: int = DEFAULT_SAMPLE_SEED,
    rows: int | None = None,
    input_bytes: int | None = None,
) -> DataFrame:
    """``df`` laid out in up to ``num_files`` partitions, each sorted along the curve.

    Writing the result gives one file per non-empty partition. The key column
    is dropped again, so the result has ``df``'s schema. ``sample_size`` rows
    are sampled to cut the files (default :func:`sample_size_for` the file
    count); ``rows``, the exact row count of ``df`` when known, saves counting
    it for the sample.
    """
    if num_files < 1:
        raise InvalidArgumentError(f"num_files must be >= 1, got {num_files}")
    if sample_size is not None and sample_size < 1:
        raise InvalidArgumentError(
            f"sample_size must be >= 1 (or None for the default), got {sample_size}"
        )
    if plan.sorts_plainly:
        order = [F.col(f"`{name}`").asc_nulls_first() for name in plan.names]
        return df.repartitionByRange(num_files, *order).sortWithinPartitions(*order)
    key_name = f"__zorder_key_{uuid.uuid4().hex}"
    key = F.col(key_name)
    size = sample_size_for(num_files) if sample_size is None else sample_size
    sample = sample_columns(df, plan.columns, sample_size=size, seed=seed, rows=rows)
    if plan.method == "direct":
        ranges = direct_ranges(sample, plan.columns, curve=plan.curve, count=num_files)
        keyed = df.withColumn(key_name, direct_file_key(plan.columns, ranges, curve=plan.curve))
        file_count, file_number, along = ranges.count, key.getField("file"), key.getField("key")
    else:
        bits = bits_per_column(len(plan.columns))
        ranks = fit_rank_buckets(sample, plan.columns, bits=bits)
        files: FileCells | KeyRanges
        if plan.curve == "zorder":
            files = file_cells(ranks, count=num_files)
        else:
            files = key_ranges(ranks, curve=plan.curve, bits=bits, count=num_files)
        packing = cell_key_packing(len(plan.columns), bits, files.count)
        keyed = df.withColumn(
            key_name, cell_key(plan.columns, ranks.buckets, files, curve=plan.curve, bits=bits)
        )
        file_count, along = files.count, key
        file_number = F.shiftright(key, packing.cell_shift).cast("int")
    laid_out = in_files(keyed, file_number, [along], count=file_count, input_bytes=input_bytes)
    return laid_out.drop(key_name)


def write_tasks(spark: SparkSession, files: int, input_bytes: int | None) -> int:
    """How many tasks write ``files`` files of ``input_bytes`` in all.

    Small files (under ``_SMALL_FILE_BYTES`` on average) share the session's
    shuffle width of tasks (``spark.sql.shuffle.partitions``), more where a
    task would take over ``_TASK_BYTES``. Larger files, an unknown size, or a
    width that is not a number ("auto") get one task a file.
    """
    width = str(spark.conf.get("spark.sql.shuffle.partitions", None) or "")
    if input_bytes is None or not width.isdigit() or int(width) < 1:
        return files
    if input_bytes >= files * _SMALL_FILE_BYTES:
        return files
    return max(1, min(files, max(int(width), -(-input_bytes // _TASK_BYTES))))


def in_files(
    keyed: DataFrame,
    number: Column,
    order: Sequence[Column],
    *,
    count: int,
    input_bytes: int | None,
    partition_by: Sequence[str] = (),
) -> DataFrame:
    """``keyed`` laid out as ``count`` files: each row goes to its file ``number``, and each
    file is sorted by ``order``.

    Where :func:`write_tasks` gives fewer tasks than files (small files of an
    unpartitioned table; ``input_bytes``: their stored size, if known), the
    rows carry the number in :data:`FILE_COLUMN`. Else each file is a task,
    and Spark names the file after it (:func:`zorder.spark.writes.file_number`).
    A partitioned table keeps one task a file: Polars reads its partition
    values from the path and refuses a directory that names any other column.
    Its rows are sorted by the partition columns first (constant in a file),
    or Spark's writer sorts them again and may lose ``order``.
    """
    tasks = count if partition_by else write_tasks(keyed.sparkSession, count, input_bytes)
    # One task a file, named after it; also when the table has a column of that name.
    if tasks >= count or FILE_COLUMN in {c.lower() for c in keyed.columns}:
        leading = [F.col(f"`{c}`") for c in partition_by]
        return keyed.repartitionById(count, number).sortWithinPartitions(*leading, *order)
    numbered = keyed.withColumn(FILE_COLUMN, number)
    file = F.col(FILE_COLUMN)
    task = F.floor(file.cast("long") * tasks / count).cast("int")  # contiguous runs a task
    return numbered.repartitionById(tasks, task).sortWithinPartitions(file, *order)
