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

import math
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from zorder.columns import resolve_column, sql_identifier
from zorder.curves.cells import apportion
from zorder.curves.encodings import canonical_type_name
from zorder.curves.plan import FilePlan, cell_key_packing
from zorder.errors import InvalidArgumentError, UnsupportedColumnTypeError
from zorder.spark.compat import collect_arrow
from zorder.spark.file_keys import packed_key
from zorder.spark.keys import (
    DEFAULT_SAMPLE_SEED,
    DEFAULT_SAMPLE_SIZE,
    MAX_SAMPLE_SIZE,
    SAMPLE_ROWS_PER_FILE,
    bits_per_column,
    comparable,
)
from zorder.spark.layout import ClusteringPlan, LaidOut, in_files

__all__ = [
    "PARTITIONABLE_TYPES",
    "Partition",
    "PartitionedLayout",
    "cluster_partitions",
    "count_partitions",
    "partition_key",
    "partition_sample_sizes",
    "resolve_partition_columns",
]

# Delta partition values are strings in the log: types with an exact text form.
PARTITIONABLE_TYPES = (
    "string",
    "tinyint",
    "smallint",
    "int",
    "bigint",
    "boolean",
    "date",
    "timestamp",
    "timestamp_ntz",
    "decimal(p,s)",
)
_OVERSAMPLE = 1.1


def _partitionable(type_name: str) -> bool:
    return type_name in PARTITIONABLE_TYPES or type_name.startswith("decimal(")


def resolve_partition_columns(
    df: DataFrame, partition_by: Sequence[str], plan: ClusteringPlan
) -> tuple[str, ...]:
    """``partition_by`` as ``df`` spells it, checked: known, partitionable, not clustered by."""
    if isinstance(partition_by, str):
        partition_by = [partition_by]
    names = list(df.columns)
    fields = {f.name: f for f in df.schema.fields}
    resolved: list[str] = []
    for wanted in partition_by:
        actual = resolve_column(str(wanted), names, kind="partition column")
        if actual in resolved:
            raise InvalidArgumentError(f"partition column {actual!r} is listed twice")
        type_name = str(fields[actual].dataType.simpleString())
        try:
            partitionable = _partitionable(canonical_type_name(type_name))
        except InvalidArgumentError:
            partitionable = False
        if not partitionable:
            raise UnsupportedColumnTypeError(
                f"partition column {actual!r} has type {type_name}, which Delta cannot "
                f"partition by exactly; accepted types: {', '.join(PARTITIONABLE_TYPES)}"
            )
        if actual in plan.names:
            raise InvalidArgumentError(
                f"column {actual!r} is both a partition column and a clustering column; "
                "it is constant inside a partition, so cluster by other columns"
            )
        resolved.append(actual)
    if len(resolved) == len(names):
        raise InvalidArgumentError("a table needs at least one column that is not a partition")
    return tuple(resolved)


def partition_key(columns: Sequence[str]) -> Column:
    """A partition's key for rows of a DataFrame: its values as Spark writes them (one string)."""
    return F.to_json(F.struct(*[F.col(sql_identifier(c)) for c in columns]))


@dataclass(frozen=True)
class Partition:
    """One partition of the rows to write: its key, its values, its rows."""

    key: str | int  # the value of the rows' partition key column
    values: tuple[Any, ...]  # in the order of the partition columns
    rows: int


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
class PartitionedLayout:
    """The laid-out rows and where each partition's files start.

    Written with ``partitionBy`` on the partition columns, each file goes into
    its partition's hive-style directory (``day=2026-11-01/``), as
    Spark and delta-rs lay partitions out: the log holds the values, and
    readers that take them from the directory names (Polars) agree.
    """

    laid_out: LaidOut
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
    if plan.method != "rank" or (plan.curve == "linear" and len(plan.columns) > 1):
        raise InvalidArgumentError(
            f"clustering inside partitions takes rank keys along 'zorder' or 'hilbert' (or one "
            f"column), got curve={plan.curve!r}, method={plan.method!r}"
        )
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
    fitted, first_file = _fit_partitions(sample, known, plan, sizes, files, seed)
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
    return PartitionedLayout(laid_out, tuple(partitions), tuple(first_file))


def _fit_partitions(
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
