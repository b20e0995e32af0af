"""The layout transform: key -> one partition per file -> sort within each file.

Rank keys send each row to its file with ``repartitionById``: for Z-order
its cell (see :mod:`zorder.curves.cells`), so every file is one box of the
mixed-radix curve; for Hilbert a range of the key cut at sampled quantiles.
Direct keys (binary) go to equal-mass ranges of the key cut on the sample.
The file and the key are computed together in one pass over the rows; one
column or the linear baseline is a plain range sort.

Every file is written by a task of its own, so Spark names each file after
its task (``part-<task>-<job uuid>...``): the names of a run never repeat, and
the rows carry no column of zorder's into the write, so none can shadow a
column of the user's.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from zorder.columns import sql_identifier
from zorder.curves.cuts import CutTree
from zorder.curves.kinds import (
    ClusteringSpec,
    Curve,
    KeyMethod,
    as_curve,
    as_key_method,
)
from zorder.curves.plan import FilePlan, fit_file_plan
from zorder.errors import InvalidArgumentError
from zorder.spark.keys import (
    DEFAULT_SAMPLE_SEED,
    ClusteringColumn,
    bits_per_column,
    direct_file_key,
    direct_ranges,
    plan_key,
    resolve_clustering_columns,
    sample_arrays,
    sample_columns,
    sample_size_for,
)

__all__ = ["ClusteringPlan", "cluster", "in_files", "plan_clustering"]


@dataclass(frozen=True)
class ClusteringPlan:
    """What clustering a DataFrame means, checked before any job runs."""

    columns: tuple[ClusteringColumn, ...]
    curve: Curve
    method: KeyMethod
    weights: tuple[float, ...] | None = None
    cuts: CutTree | None = None

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def spec(self) -> ClusteringSpec:
        """The plan as a table records it: column names, curve, key method, weights, cuts."""
        return ClusteringSpec(tuple(self.names), self.curve, self.method, self.weights, self.cuts)

    @property
    def sorts_plainly(self) -> bool:
        """One column without workload cuts, or the linear baseline: a plain range sort."""
        return self.curve == "linear" or (len(self.columns) == 1 and self.cuts is None)

    def fit(self, sample: pa.Table, *, count: int) -> FilePlan:
        """The file plan (rank keys) of ``count`` files over ``sample``, whose columns are the
        clustering columns in order."""
        return fit_file_plan(
            sample_arrays(sample)[: len(self.columns)],
            curve="hilbert" if self.curve == "hilbert" else "zorder",
            bits=bits_per_column(len(self.columns)),
            count=count,
            weights=self.weights,
            cuts=self.cuts,
            names=self.names,
        )


def plan_clustering(
    df: DataFrame,
    by: Sequence[str] | ClusteringSpec,
    *,
    curve: Curve = "zorder",
    method: KeyMethod = "rank",
) -> ClusteringPlan:
    """Validate the clustering request against ``df`` (raises InvalidArgumentError).

    ``by`` is the columns, or a whole spec (its curve, method, weights and cuts).
    """
    if isinstance(by, ClusteringSpec):
        plan = ClusteringPlan(
            tuple(resolve_clustering_columns(df, by.columns)),
            by.curve,
            by.method,
            by.weights,
            by.cuts,
        )
    else:
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
        order = [F.col(sql_identifier(name)).asc_nulls_first() for name in plan.names]
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
        files = plan.fit(sample, count=num_files)
        keyed = df.withColumn(key_name, plan_key(plan.columns, files))
        file_count, along = files.count, key
        file_number = F.shiftright(key, files.packing.cell_shift).cast("int")
    return in_files(keyed, file_number, [along], count=file_count).drop(key_name)


def in_files(
    keyed: DataFrame,
    number: Column,
    order: Sequence[Column],
    *,
    count: int,
    partition_by: Sequence[str] = (),
) -> DataFrame:
    """``keyed`` laid out as ``count`` files: each row goes to the task of its file
    ``number``, and each file is sorted by ``order``.

    Spark names each file after its task (:func:`zorder.spark.writes.file_number`).
    A partitioned table's rows are sorted by the partition columns first
    (constant in a file), or Spark's writer sorts them again and may lose
    ``order``.
    """
    leading = [F.col(sql_identifier(c)) for c in partition_by]
    return keyed.repartitionById(count, number).sortWithinPartitions(*leading, *order)
