"""Clustering inside partitions: every partition of a table laid out on its own, in one job.

A partitioned table is clustered partition by partition (as Delta's
``OPTIMIZE ... WHERE``, delta-rs and Iceberg do): each file holds rows of one
partition only, and each partition's files are the cells of its own sample.
Every row carries its partition's key in a column: Spark's ``to_json`` of the
partition values for rows from a DataFrame (:func:`partition_key`), or the
partition's index for rows read from a table partition by partition (the
row counts then come from the log, with no job). A stratified sample
(``sampleBy``) gives each partition enough rows to cut its files; one key
expression then gives every row its partition's file (numbered after the
files of the partitions before it) packed above its key along the curve
(:mod:`zorder.spark.file_keys`: in the JVM where zorder's jar can be used,
else an Arrow UDF). Nothing but counts, samples and cuts reaches the driver,
however many partitions there are.
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
from zorder.curves.partitions import (
    Partition,
    PartitionFiles,
    check_partitioned_plan,
    fit_partitions,
    partition_sample_sizes,
)
from zorder.curves.plan import cell_key_packing
from zorder.curves.schema import resolve_partition_columns as partition_columns_of
from zorder.spark.compat import collect_arrow
from zorder.spark.file_keys import packed_key
from zorder.spark.keys import (
    DEFAULT_SAMPLE_SEED,
    bits_per_column,
    comparable,
    schema_columns,
)
from zorder.spark.layout import ClusteringPlan, LaidOut, in_files

__all__ = [
    "Partition",
    "PartitionedLayout",
    "cluster_partitions",
    "count_partitions",
    "partition_key",
    "partition_sample_sizes",
    "resolve_partition_columns",
]

_OVERSAMPLE = 1.1


def resolve_partition_columns(
    df: DataFrame | StructType, partition_by: Sequence[str], plan: ClusteringPlan
) -> tuple[str, ...]:
    """``partition_by`` checked against ``df``'s schema (or a schema): see
    :func:`zorder.curves.schema.resolve_partition_columns`."""
    return partition_columns_of(schema_columns(df), partition_by, plan)


def partition_key(columns: Sequence[str]) -> Column:
    """A partition's key for rows of a DataFrame: its values as Spark writes them (one string)."""
    return F.to_json(F.struct(*[F.col(sql_identifier(c)) for c in columns]))


def count_partitions(df: DataFrame, key: str, columns: Sequence[str]) -> tuple[Partition, ...]:
    """Every partition of ``df`` (key column ``key``) with its row count (one aggregate job)."""
    rows_name = f"__zorder_rows_{uuid.uuid4().hex}"  # ``count()`` would name it as a column may be
    counted = df.groupBy(
        F.col(sql_identifier(key)), *[F.col(sql_identifier(c)) for c in columns]
    ).agg(F.count(F.lit(1)).alias(rows_name))
    counted = collect_arrow(counted)
    values = [counted.column(c).to_pylist() for c in columns]
    return tuple(
        Partition(name, tuple(v[i] for v in values), int(rows))
        for i, (name, rows) in enumerate(
            zip(counted.column(key).to_pylist(), counted.column(rows_name).to_pylist(), strict=True)
        )
    )


@dataclass(frozen=True)
class PartitionedLayout(PartitionFiles):
    """The laid-out rows and where each partition's files start.

    Written with ``partitionBy`` on the partition columns, each file goes into
    its partition's hive-style directory (``day=2026-11-01/``), as
    Spark and delta-rs lay partitions out: the log holds the values, and
    readers that take them from the directory names (Polars) agree.
    """

    laid_out: LaidOut


def cluster_partitions(
    df: DataFrame,
    key: str,
    plan: ClusteringPlan,
    partitions: Sequence[Partition],
    files: Sequence[int],
    *,
    partition_by: Sequence[str],
    seed: int = DEFAULT_SAMPLE_SEED,
    sample: pa.Table | None = None,
) -> PartitionedLayout:
    """``df`` laid out so that each file holds one partition's rows, clustered along the curve.

    ``key`` names the column of ``df`` that holds each row's partition key
    (dropped from the result); ``files`` gives each partition's file count;
    ``partition_by`` names the partition columns. ``sample``, when drawn
    already (:func:`partition_sample_sizes` rows of each partition; its first
    column the partition key, then :func:`~zorder.spark.keys.comparable` of
    each clustering column), saves the sampling job.
    Rank keys along Z-order or Hilbert; one clustering column is cut and
    sorted by its own ranks.
    """
    check_partitioned_plan(plan)
    bits = bits_per_column(len(plan.columns))
    key_name = f"__zorder_file_key_{uuid.uuid4().hex}"
    sizes = partition_sample_sizes(files, partitions)
    if sample is None:
        sampled = df.select(F.col(sql_identifier(key)), *[comparable(c) for c in plan.columns])
        fractions = {
            p.key: min(1.0, _OVERSAMPLE * size / max(1, p.rows))
            for p, size in zip(partitions, sizes, strict=True)
        }
        sample = collect_arrow(sampled.sampleBy(key, fractions, seed))
    known = pa.array([p.key for p in partitions]).cast(sample.schema.field(key).type)
    fitted, first_file = fit_partitions(sample, known, plan, sizes, files, seed)
    total = first_file[-1]
    packing = cell_key_packing(len(plan.columns), bits, total)
    packed = packed_key(
        df.sparkSession,
        plan.columns,
        fitted,
        packing=packing,
        first_files=first_file,
        partition_key=key,
        partition_keys=known,
    )
    keyed = df.withColumn(key_name, packed)
    number = F.shiftright(F.col(key_name), packing.cell_shift).cast("int")
    order = [F.col(key_name)]
    if len(plan.columns) == 1:  # the key holds only its rank bucket: the value orders the rest
        order.append(F.col(sql_identifier(plan.columns[0].name)).asc_nulls_first())
    laid_out = in_files(
        keyed, number, order, count=total, partition_by=partition_by, drop=[key_name, key]
    )
    return PartitionedLayout(
        partitions=tuple(partitions), first_file=tuple(first_file), laid_out=laid_out
    )
