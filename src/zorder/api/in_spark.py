"""The Spark engine's part of ``write`` and ``optimize``: a job's rows laid out, written and
committed by Spark.

:mod:`zorder.api.cluster` chooses the engine and hands a job here when Spark runs it
(the in-process engine is :mod:`zorder.api.inprocess`): the rows are laid out
partition by partition where the table has partitions (:mod:`zorder.spark.partitions`),
else as one run of files (:mod:`zorder.spark.layout`), written by Spark into the run's
own directory, and committed through :func:`zorder.api.runs.commit_run`. Only this
module of the write path imports pyspark when it loads, so an in-process run loads none.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import numpy as np
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from zorder.api.context import session_time_zone
from zorder.api.jobs import ClusterJob, file_count
from zorder.api.progress import phase, progress_of
from zorder.api.runs import ClusterMetrics, RunOutput, commit_run, unchanged_metrics
from zorder.api.samples import files_sample, partitions_sample
from zorder.curves.partitions import files_per_partition
from zorder.errors import StorageMismatchError
from zorder.spark.layout import cluster
from zorder.spark.partitions import (
    Partition,
    PartitionedLayout,
    cluster_partitions,
    count_partitions,
    partition_key,
    partition_sample_sizes,
)
from zorder.spark.scan import read_files, read_partitions
from zorder.spark.storage import spark_path
from zorder.spark.writes import (
    estimated_bytes,
    logged_partitions,
    rows_per_row_group,
    write_run,
)
from zorder.table import DataFile, TableSnapshot, guarded_run, remove_writer_markers
from zorder.table.clustering import Run
from zorder.table.schema import delta_schema
from zorder.table.snapshot import by_partition

__all__ = ["clustered_write", "filled", "rewrite"]


def filled(job: ClusterJob, df: DataFrame) -> DataFrame:
    """``df`` with the table's nullable columns it lacks as NULL (schema_mode="merge")."""
    if job.evolution is None or not job.evolution.filled:
        return df
    return df.select(
        "*", *(F.lit(None).cast(f.dataType).alias(f.name) for f in job.evolution.filled)
    )


def clustered_write(
    job: ClusterJob, df: DataFrame, started: float, progress: bool
) -> ClusterMetrics:
    """The write's rows laid out by Spark (per partition, when the table has them) and
    committed."""
    with progress_of(progress, f"Clustering into {job.uri}...", df.sparkSession):
        phase("counting")
        num_files = job.num_files
        estimated = estimated_bytes(df) if num_files is None else 0
        layout = _partitioned_layout(job, df, bytes_total=estimated) if job.partition_by else None
        if layout is not None:
            files = layout.first_file[-1]
        else:  # unpartitioned, or no rows (one empty file makes the table)
            files = num_files if num_files is not None else file_count(None, job.target, estimated)
        return _write_and_commit(job, df, files=files, started=started, partitioned=layout)


def rewrite(
    job: ClusterJob,
    spark: SparkSession,
    snapshot: TableSnapshot,
    read: Sequence[DataFile],
    started: float,
) -> ClusterMetrics:
    """Optimize's run in Spark: the rows of ``read`` (files of ``snapshot``) clustered and
    committed."""
    wanted = {f.path for f in read}
    keep = np.array([f.path in wanted for f in snapshot.files], dtype=bool)
    bytes_read = sum(f.size for f in read)
    if not job.partition_by:
        counts = [f.num_records for f in read]
        return _write_and_commit(
            job,
            read_files(snapshot, spark, keep),
            files=file_count(job.num_files, job.sized_by, bytes_read),
            started=started,
            removed=read,
            rows=None if None in counts else sum(c or 0 for c in counts),
            sampled_from=read,
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
    )
    if layout is None and not any(f.has_vector for f in read):
        return unchanged_metrics(job, started, None)  # no rows: nothing to do
    if layout is None:  # every row deleted: the files go, and nothing takes their place
        empty = read_files(snapshot, spark, keep)
        return _write_and_commit(job, empty, files=1, started=started, removed=read, rows=0)
    return _write_and_commit(
        job,
        layout.laid_out.rows,  # the rows without their partition index
        files=layout.first_file[-1],
        started=started,
        partitioned=layout,
        removed=read,
    )


def _partitioned_layout(
    job: ClusterJob,
    df: DataFrame,
    *,
    bytes_total: int,
    key: str | None = None,
    partitions: Sequence[Partition] | None = None,
    groups: Sequence[Sequence[DataFile]] = (),
) -> PartitionedLayout | None:
    """``df`` laid out partition by partition, or None when it has no rows at all.

    ``key`` names a column of ``df`` that already holds each row's partition
    key, and ``partitions`` the partitions with their row counts when known
    (else one job counts them). ``groups``: the files ``df`` reads when an
    optimize rewrites them, the partition whose key is i reading ``groups[i]``
    (their sample may then be drawn in process).
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
    sample = partitions_sample(job, partitions, groups, sizes, key=key) if groups else None
    return cluster_partitions(
        df,
        key,
        job.plan,
        partitions,
        per_partition,
        partition_by=job.partition_by,
        sample=sample,
    )


def _write_and_commit(
    job: ClusterJob,
    df: DataFrame,
    *,
    files: int,
    started: float,
    partitioned: PartitionedLayout | None = None,
    removed: Sequence[DataFile] = (),
    rows: int | None = None,
    sampled_from: Sequence[DataFile] = (),
) -> ClusterMetrics:
    """Lay out, write, commit; then record what the table should remember.

    ``rows`` is the exact row count of ``df`` when the log knows it (saves
    the sample its count job); ``sampled_from``, the files ``df`` reads when
    an optimize rewrites them (their sample may be drawn in process).
    """
    snapshot, uri = job.snapshot, job.uri
    run = Run.new(job.plan.spec)
    if partitioned is not None:
        laid_out = partitioned.laid_out
        per_file: int | None = partitioned.rows_per_file
    else:
        phase("sampling")
        size = job.sample_rows(files)
        drawn = files_sample(job, sampled_from, size)  # in process, for a small optimize
        if rows is None and job.plan.bloom_filters:  # sizes the filters; the sample counts no more
            rows = df.count()
        laid_out = cluster(df, job.plan, num_files=files, sample_size=size, rows=rows, sample=drawn)
        per_file = -(-rows // files) if rows is not None else None
    with guarded_run(job.storage, run.directory) as attempt:
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
        output = RunOutput(
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
        return commit_run(job, output, attempt, removed=removed, started=started)
