"""The layout transform: key -> one partition per file -> sort within each file.

Rank keys send each row to its file with ``repartitionById``: for Z-order
its cell (see :mod:`zorder.curves.cells`), so every file is one box of the
mixed-radix curve; for Hilbert a range of the key cut at sampled quantiles.
Direct keys (binary) go to equal-mass ranges of the key cut on the sample.
The file and the key are computed together in one pass over the rows; one
column or the linear baseline is a plain range sort.

A task writes a contiguous run of files, each file's rows sorted, where
zorder's commit protocol is available (:mod:`zorder.spark.committer`): the
rows then carry their file's number in a column of a fresh name, written as
the last partition column and taken out of the path again by the protocol.
Elsewhere every file is written by a task of its own. Either way Spark names
each file after its number (``part-<file>-<job uuid>...``): the names of a
run never repeat.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from zorder.columns import sql_identifier
from zorder.curves.clustering import ClusteringPlan
from zorder.curves.kinds import (
    BloomColumn,
    ClusteringSpec,
    Curve,
    KeyMethod,
)
from zorder.curves.schema import plan_clustering as planned
from zorder.curves.schema import resolve_bloom_columns as blooms_of
from zorder.errors import InvalidArgumentError
from zorder.spark.committer import run_tasks
from zorder.spark.compat import repartition_by_id
from zorder.spark.file_keys import packed_key
from zorder.spark.keys import (
    DEFAULT_SAMPLE_SEED,
    direct_file_key,
    direct_ranges,
    sample_columns,
    sample_size_for,
    schema_columns,
)

__all__ = [
    "ClusteringPlan",
    "LaidOut",
    "cluster",
    "in_files",
    "plan_clustering",
    "resolve_bloom_columns",
]


@dataclass(frozen=True)
class LaidOut:
    """Rows laid out as a run's files, ready to write.

    Each Spark partition of ``frame`` is one file, or, when ``file_column``
    names a column of ``frame``, a contiguous run of files, each row holding
    its file's number there (:mod:`zorder.spark.committer` writes it).
    """

    frame: DataFrame
    file_column: str | None = None

    @property
    def rows(self) -> DataFrame:
        """The laid-out rows with only the columns they came with."""
        return self.frame if self.file_column is None else self.frame.drop(self.file_column)


def plan_clustering(
    df: DataFrame | StructType,
    by: Sequence[str] | ClusteringSpec,
    *,
    curve: Curve = "zorder",
    method: KeyMethod = "rank",
) -> ClusteringPlan:
    """The clustering request checked against ``df``'s schema (or a schema: no session is
    needed): :func:`zorder.curves.schema.plan_clustering`."""
    return planned(schema_columns(df), by, curve=curve, method=method)


def resolve_bloom_columns(
    df: DataFrame | StructType, blooms: Sequence[BloomColumn]
) -> tuple[BloomColumn, ...]:
    """``blooms`` checked against ``df``'s schema: see
    :func:`zorder.curves.schema.resolve_bloom_columns`."""
    return blooms_of(schema_columns(df), blooms)


def cluster(
    df: DataFrame,
    plan: ClusteringPlan,
    *,
    num_files: int,
    sample_size: int | None = None,
    seed: int = DEFAULT_SAMPLE_SEED,
    rows: int | None = None,
    sample: pa.Table | None = None,
) -> LaidOut:
    """``df`` laid out as up to ``num_files`` files, each sorted along the curve.

    The key column is dropped again, so the rows have ``df``'s columns. ``sample_size`` rows
    are sampled to cut the files (default :func:`sample_size_for` the file
    count); ``rows``, the exact row count of ``df`` when known, saves counting
    it for the sample. ``sample``, the clustering columns' sample when drawn
    already (as :func:`~zorder.spark.keys.sample_columns` gives it), saves the
    sampling job.
    """
    if num_files < 1:
        raise InvalidArgumentError(f"num_files must be >= 1, got {num_files}")
    if sample_size is not None and sample_size < 1:
        raise InvalidArgumentError(
            f"sample_size must be >= 1 (or None for the default), got {sample_size}"
        )
    if plan.sorts_plainly:
        order = [F.col(sql_identifier(name)).asc_nulls_first() for name in plan.names]
        return LaidOut(df.repartitionByRange(num_files, *order).sortWithinPartitions(*order))
    key_name = f"__zorder_key_{uuid.uuid4().hex}"
    key = F.col(key_name)
    if sample is None:
        size = sample_size_for(num_files) if sample_size is None else sample_size
        sample = sample_columns(df, plan.columns, sample_size=size, seed=seed, rows=rows)
    if plan.method == "direct":
        ranges = direct_ranges(sample, plan.columns, curve=plan.curve, count=num_files)
        keyed = df.withColumn(key_name, direct_file_key(plan.columns, ranges, curve=plan.curve))
        file_count, file_number, along = ranges.count, key.getField("file"), key.getField("key")
    else:
        files = plan.fit(sample, count=num_files)
        packed = packed_key(df.sparkSession, plan.columns, [files], packing=files.packing)
        keyed = df.withColumn(key_name, packed)
        file_count, along = files.count, key
        file_number = F.shiftright(key, files.packing.cell_shift).cast("int")
    return in_files(keyed, file_number, [along], count=file_count, drop=[key_name])


def in_files(
    keyed: DataFrame,
    number: Column,
    order: Sequence[Column],
    *,
    count: int,
    partition_by: Sequence[str] = (),
    drop: Sequence[str] = (),
) -> LaidOut:
    """``keyed`` laid out as ``count`` files: each row goes to its file ``number``,
    each file sorted by ``order``; the columns ``drop`` are dropped after sorting.

    ``order`` must order the files too (its first column holds the file above
    the key, as the packed keys do). A task holds a contiguous run of files
    where :func:`~zorder.spark.committer.run_tasks` allows, else a file each.

    With a run of files a task, the rows are sorted by ``order`` alone, whose
    long prefix decides nearly every comparison, and each row's file number is
    computed after the shuffle; Spark's writer then groups them by the columns
    it writes into directories (partitions, then file) with a sort of its own
    that finds them grouped already and keeps their order (its in-memory sorts
    are stable; if that sort spills, rows of one file may come out of key
    order, in the same file). Sorting by the file first instead leaves most
    comparisons to Spark's full-row comparator (about 15% of the write). A task
    a file sorts by the partition columns first (constant in a file), so the
    writer sorts nothing again.
    """
    tasks = run_tasks(keyed.sparkSession, count)
    if tasks is None:
        leading = [F.col(sql_identifier(c)) for c in partition_by]
        laid_out = repartition_by_id(keyed, count, number).sortWithinPartitions(*leading, *order)
        return LaidOut(laid_out.drop(*drop))
    # floor(file * tasks / count): a contiguous, balanced run of files a task
    task = (number.cast("long") * F.lit(tasks) / F.lit(count)).cast("int")
    file_column = f"__zorder_file_{uuid.uuid4().hex}"
    laid_out = (
        repartition_by_id(keyed, tasks, task)
        .sortWithinPartitions(*order)
        .withColumn(file_column, number)
        .drop(*drop)
    )
    return LaidOut(laid_out, file_column)
