"""The Spark engine of ``write`` and ``optimize``: a plan's rows laid out and written by
Spark (:class:`SparkRun`, a :class:`~zorder.plan.runs.RunEngine`).

:mod:`zorder.api.cluster` chooses the engine and hands a plan here when Spark runs it
(the in-process engine is :mod:`zorder.arrow.engine`): the rows are laid out
partition by partition where the table has partitions (:mod:`zorder.spark.partitions`),
else as one run of files (:mod:`zorder.spark.layout`), and written by Spark into the
run's own directory; :func:`zorder.plan.runs.execute_and_commit` commits them. A small
optimize's sample may be drawn in process, by the function the runner gives
(:func:`zorder.arrow.sample.sampled_here`), in the shape Spark's own sample has. Only
this module of the write path imports pyspark when it loads, so an in-process run
loads none.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from zorder.curves.partitions import files_per_partition
from zorder.errors import StorageMismatchError
from zorder.plan.jobs import ClusterJob, file_count
from zorder.plan.progress import phase
from zorder.plan.runs import RunOutput, RunPlan
from zorder.spark.layout import cluster
from zorder.spark.partitions import (
    Partition,
    PartitionedLayout,
    cluster_partitions,
    count_partitions,
    partition_key,
    partition_sample_sizes,
)
from zorder.spark.scan import read_files, read_partitions, spark_schema
from zorder.spark.settings import session_time_zone
from zorder.spark.storage import spark_path
from zorder.spark.writes import (
    estimated_bytes,
    logged_partitions,
    rows_per_row_group,
    write_run,
)
from zorder.table import DataFile, by_partition, remove_writer_markers
from zorder.table.clustering import Run
from zorder.table.delta.schema import delta_schema

__all__ = ["InProcessSampler", "SparkRun", "filled"]

# Samples of ``sizes[i]`` rows of the files ``groups[i]`` drawn in process, or None where
# Spark samples them: (groups, sizes) -> samples.
InProcessSampler = Callable[[Sequence[Sequence[DataFile]], Sequence[int]], list[pa.Table] | None]


def filled(job: ClusterJob, df: DataFrame) -> DataFrame:
    """``df`` with the table's nullable columns it lacks as NULL (schema_mode="merge")."""
    if job.evolution is None or not job.evolution.filled or job.snapshot is None:
        return df
    table = spark_schema(job.snapshot)
    return df.select(
        "*", *(F.lit(None).cast(table[name].dataType).alias(name) for name in job.evolution.filled)
    )


@dataclass(frozen=True)
class SparkRun:
    """The Spark engine: a plan executed in ``session``. A write's rows are ``frame`` (the
    table's columns it lacks filled, :func:`filled`); an optimize reads the plan's files,
    its sample drawn by ``sampler`` where that draws one (else by Spark)."""

    session: SparkSession
    frame: DataFrame | None = None
    sampler: InProcessSampler | None = None

    def execute(self, plan: RunPlan, run: Run) -> RunOutput | None:
        if plan.job.operation == "optimize":
            return _rewritten(plan.job, self.session, plan.read, run, self.sampler)
        assert self.frame is not None, "a write's rows are given"
        return _clustered(plan.job, self.frame, run)


def _clustered(job: ClusterJob, df: DataFrame, run: Run) -> RunOutput:
    """A write's rows laid out by Spark (per partition, when the table has them) and
    written."""
    phase("counting")
    num_files = job.num_files
    estimated = estimated_bytes(df) if num_files is None else 0
    layout = _partitioned_layout(job, df, bytes_total=estimated) if job.partition_by else None
    if layout is not None:
        files = layout.first_file[-1]
    else:  # unpartitioned, or no rows (one empty file makes the table)
        files = num_files if num_files is not None else file_count(None, job.target, estimated)
    return _written(job, df, run, files=files, partitioned=layout)


def _rewritten(
    job: ClusterJob,
    spark: SparkSession,
    read: Sequence[DataFile],
    run: Run,
    sampler: InProcessSampler | None,
) -> RunOutput | None:
    """Optimize's rows, those of ``read`` (files of the job's snapshot), clustered and
    written; None where they hold no row and no deleted row (nothing to do)."""
    snapshot = job.snapshot
    assert snapshot is not None, "an optimize has a table"
    wanted = {f.path for f in read}
    keep = np.array([f.path in wanted for f in snapshot.files], dtype=bool)
    bytes_read = sum(f.size for f in read)
    if not job.partition_by:
        counts = [f.num_records for f in read]
        return _written(
            job,
            read_files(snapshot, spark, keep),
            run,
            files=file_count(job.num_files, job.sized_by, bytes_read),
            rows=None if None in counts else sum(c or 0 for c in counts),
            drawn=_files_sample(job, sampler, read),
        )
    groups = by_partition(read)
    key = f"__zorder_partition_{uuid.uuid4().hex}"
    todo = list(groups)
    df = read_partitions(snapshot, spark, keep, todo, index_column=key)
    layout = _partitioned_layout(
        job,
        df,
        bytes_total=bytes_read,
        key=key,
        partitions=logged_partitions(todo, groups),
        groups=[groups[values] for values in todo],
        sampler=sampler,
    )
    if layout is None and not any(f.has_vector for f in read):
        return None  # no rows: nothing to do
    if layout is None:  # every row deleted: the files go, and nothing takes their place
        return _written(job, read_files(snapshot, spark, keep), run, files=1, rows=0)
    return _written(
        job,
        layout.laid_out.rows,  # the rows without their partition index
        run,
        files=layout.first_file[-1],
        partitioned=layout,
    )


def _partitioned_layout(
    job: ClusterJob,
    df: DataFrame,
    *,
    bytes_total: int,
    key: str | None = None,
    partitions: Sequence[Partition] | None = None,
    groups: Sequence[Sequence[DataFile]] = (),
    sampler: InProcessSampler | None = None,
) -> PartitionedLayout | None:
    """``df`` laid out partition by partition, or None when it has no rows at all.

    ``key`` names a column of ``df`` that already holds each row's partition
    key, and ``partitions`` the partitions with their row counts when known
    (else one job counts them). ``groups``: the files ``df`` reads when an
    optimize rewrites them, the partition whose key is i reading ``groups[i]``
    (their sample may then be drawn in process, by ``sampler``).
    """
    if key is None:
        key = f"__zorder_partition_{uuid.uuid4().hex}"
        df = df.withColumn(key, partition_key(job.partition_by))
    if partitions is None:
        phase("counting")
        partitions = count_partitions(df, key, job.partition_by)
    if not partitions:
        return None
    per_partition = files_per_partition(
        partitions, num_files=job.num_files, bytes_total=bytes_total, target=job.target
    )
    phase("sampling")
    sizes = partition_sample_sizes(per_partition, partitions)
    drawn = sampler([groups[int(p.key)] for p in partitions], sizes) if sampler and groups else None
    sample = None if drawn is None else _keyed(partitions, drawn, key)
    return cluster_partitions(
        df,
        key,
        job.plan,
        partitions,
        per_partition,
        partition_by=job.partition_by,
        sample=sample,
    )


def _written(
    job: ClusterJob,
    df: DataFrame,
    run: Run,
    *,
    files: int,
    partitioned: PartitionedLayout | None = None,
    rows: int | None = None,
    drawn: Callable[[int], pa.Table | None] | None = None,
) -> RunOutput:
    """Lay out and write ``df`` into ``run``'s directory; what was written.

    ``rows`` is the exact row count of ``df`` when the log knows it (saves
    the sample its count job); ``drawn``, a sample of a size drawn in
    process (None: Spark samples ``df``).
    """
    snapshot, uri = job.snapshot, job.uri
    if partitioned is not None:
        laid_out = partitioned.laid_out
        per_file: int | None = partitioned.rows_per_file
    else:
        phase("sampling")
        size = job.sample_rows(files)
        here = drawn(size) if drawn is not None else None  # in process, for a small optimize
        if rows is None and job.plan.bloom_filters:  # sizes the filters; the sample counts no more
            rows = df.count()
        laid_out = cluster(df, job.plan, num_files=files, sample_size=size, rows=rows, sample=here)
        per_file = -(-rows // files) if rows is not None else None
    phase("clustering and writing")
    location = spark_path(df.sparkSession, f"{uri}/{run.directory}")
    stored = write_run(
        laid_out,
        location,
        snapshot=snapshot,
        partition_by=job.partition_by,
        blooms=job.plan.bloom_filters,
        rows_per_file=rows_per_row_group(per_file, job.sized_by),
    )
    if not remove_writer_markers(job.storage, run.directory):
        raise StorageMismatchError(
            f"Spark wrote {location}, but zorder finds no file in {uri}/{run.directory}: "
            "Spark (the session's fs.* settings) and zorder (storage_options, else the "
            "environment) reach different stores. Nothing was committed"
        )
    return RunOutput(
        run=run,
        columns=stored,
        schema=delta_schema(df.schema.json()),
        files=files,
        engine=job.chosen_engine,
        # The rows an optimize read (a write's DataFrame may give others each time).
        rows=rows if job.operation == "optimize" else None,
        partitioned=partitioned,
        # An optimize's values come from the log; a write's rows are the session's.
        time_zone=None if job.operation == "optimize" else session_time_zone(df.sparkSession),
    )


def _keyed(partitions: Sequence[Partition], drawn: Sequence[pa.Table], key: str) -> pa.Table:
    """Samples drawn per partition as one, with the partition's key in column ``key``
    first, as :func:`~zorder.spark.partitions.cluster_partitions` takes them."""
    return pa.concat_tables(
        part.add_column(0, key, pa.repeat(pa.scalar(p.key, pa.int64()), part.num_rows))
        for p, part in zip(partitions, drawn, strict=True)
    )


def _files_sample(
    job: ClusterJob, sampler: InProcessSampler | None, files: Sequence[DataFile]
) -> Callable[[int], pa.Table | None] | None:
    """How a sample of ``files`` (an unpartitioned optimize's) of a size is drawn in
    process, as :func:`~zorder.spark.layout.cluster` takes it; None where Spark samples
    them, or where nothing is sampled (no files, or a plain sort)."""
    if sampler is None or not files or job.plan.sorts_plainly:
        return None

    def draw(size: int) -> pa.Table | None:
        if size < 1:  # refused by cluster, with its message
            return None
        sample = sampler([files], [size])
        return None if sample is None else sample[0]

    return draw
