"""``write`` and ``optimize``: cluster rows along a curve into a Delta table.

Both follow one path: check everything before any session starts, choose the
engine (:mod:`zorder.api.engines`: this process for small work, handed to
:mod:`zorder.api.inprocess`, else Spark, and Spark again where the in-process
engine finds it cannot go on), lay the rows out (key, one partition per file, sort
within files), write Parquet into a directory of the run's own under the table
root, read the footers for statistics, and commit all files in one Delta
transaction through :func:`zorder.api.runs.commit_run`, whichever engine wrote
them. A failure leaves the table as it was and removes the run's directory,
unless the log shows (or cannot show otherwise) that the commit was made: then
the files stay, referenced by it (see :func:`zorder.table.guarded_run`).
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from zorder.api.engines import EngineChoice, RunWith, check_engine, choose_engine
from zorder.api.inprocess import (
    NeedsSparkError,
    chosen_here,
    declined_in_process,
    optimize_in_process,
    optimize_work,
    write_in_process,
)
from zorder.api.jobs import (
    ClusterJob,
    ClusterOptions,
    file_count,
    optimize_job,
    write_commit_mode,
    write_job,
)
from zorder.api.modes import Engine, WriteMode
from zorder.api.progress import phase, progress_of, timed_phases
from zorder.api.runs import ClusterMetrics, RunOutput, commit_run, run_metrics
from zorder.api.samples import files_sample, partitions_sample
from zorder.api.scanning import session_time_zone
from zorder.api.sources import (
    InProcessInput,
    WriteSource,
    checked_source,
    in_process_input,
    read_source,
)
from zorder.curves.kinds import ClusteringSpec
from zorder.curves.partitions import files_per_partition
from zorder.errors import InvalidArgumentError, StorageMismatchError
from zorder.spark.keys import sample_size_for
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
    chosen_partitions,
    delta_schema,
    estimated_bytes,
    logged_partitions,
    rows_per_row_group,
    write_run,
)
from zorder.table import (
    DataFile,
    Storage,
    TableSnapshot,
    guarded_run,
    record_properties,
    remove_writer_markers,
    rewrite_scope,
)
from zorder.table.clustering import Run
from zorder.table.evolution import add_columns
from zorder.table.partition_filters import check_partition_where
from zorder.table.tiering import check_fanout, files_to_optimize, runs_of_spec
from zorder.table.transactions import AlreadyRecordedError, AppTransaction

__all__ = ["ClusterMetrics", "WriteMode", "optimize_table", "write_table"]


def _unchanged(job: ClusterJob, started: float, recorded: int | None) -> ClusterMetrics:
    """No file to rewrite: no run, and the version only a properties commit made, if any."""
    return run_metrics(job, recorded, "", [], (), job.num_files or 0, started)


def _clustered_already(snapshot: TableSnapshot, spec: ClusteringSpec, fanout: int) -> str:
    """Why an incremental optimize by ``spec`` rewrites no file of ``snapshot``."""
    runs = {run for run in runs_of_spec(snapshot, spec).values() if run is not None}
    return (
        f"nothing to optimize: the {len(snapshot.files):,} file(s) of {snapshot.uri} are in "
        f"{len(runs):,} run(s) clustered by {spec.describe()}, and no size tier holds {fanout} "
        "runs to merge (full=True, CLI --full, reclusters every file)"
    )


def _skipped(job: ClusterJob, started: float) -> ClusterMetrics:
    """A write whose transaction the table records: nothing written, nothing committed."""
    return dataclasses.replace(_unchanged(job, started, None), skipped=True)


def write_table(
    source: DataFrame | WriteSource,
    storage: Storage,
    snapshot: TableSnapshot | None,
    asked: ClusterOptions,
    *,
    mode: WriteMode,
    partition_by: Sequence[str] | None,
    transaction: AppTransaction | None,
    run: RunWith,
) -> ClusterMetrics:
    """:meth:`zorder.Table.write`: ``source`` (a DataFrame, or files at a path) clustered
    into the table at ``storage``, whose newest version is ``snapshot`` (None: there is no
    table yet), by the engine ``run`` asks for (:mod:`zorder.api.engines`): a DataFrame is
    Spark's; files may be read and written in this process.

    With ``transaction``, a write the table records already is skipped before
    anything runs, and one a concurrent writer commits first is skipped at the
    commit (its files deleted): see :mod:`zorder.table.transactions`.

    Under ``asked.schema_mode="merge"``, columns the table lacks are added to it in a commit of
    their own before anything is written (:func:`zorder.table.evolution.add_columns`).
    """
    started = time.perf_counter()
    shown = progress_of(run.progress, f"Clustering into {storage.uri}...", None)
    with timed_phases(), shown:
        write_commit_mode(mode, storage, snapshot)  # refused before any input is read
        if isinstance(source, WriteSource):
            source = checked_source(source, asked.by)
        rows, df, choice = _write_input(source, storage, run)
        schema = df.schema if df is not None else rows.schema if rows is not None else None
        assert schema is not None
        job = write_job(
            schema,
            storage,
            snapshot,
            asked,
            mode=mode,
            partition_by=partition_by,
            transaction=transaction,
        )
        job = dataclasses.replace(job, engine=choice)
        if transaction is not None and snapshot is not None and transaction.done_in(snapshot.table):
            return _skipped(job, started)
        job = _evolved(job)
        if df is not None:
            df = _filled(job, df)
        try:
            if df is None:
                assert rows is not None
                assert isinstance(source, WriteSource)
                try:
                    metrics = write_in_process(job, rows, started=started, time_zone=run.time_zone)
                    return _with_overwritten(job, metrics)
                except NeedsSparkError as error:
                    job = dataclasses.replace(job, engine=_fallen_back(run.engine, error))
                    df = _filled(job, read_source(run.spark("write"), source))
            metrics = _clustered_write(job, df, started, run.progress)
        except AlreadyRecordedError:
            return _skipped(job, started)
    return _with_overwritten(job, metrics)


def _write_input(
    source: DataFrame | WriteSource, storage: Storage, run: RunWith
) -> tuple[InProcessInput | None, DataFrame | None, EngineChoice]:
    """A write's input and its engine: the in-process reading of a path, or the rows Spark
    reads (a DataFrame, or the path read by Spark)."""
    what = f"write to {storage.uri}"
    if not isinstance(source, WriteSource):
        declined = "a DataFrame is written by Spark (give a path to write in process)"
        return None, source, choose_engine(run.engine, what=what, declined=declined, work=None)
    if run.engine == "spark":
        choice = choose_engine("spark", what=what, declined=None, work=None)
        return None, read_source(run.spark("write"), source), choice
    rows = in_process_input(source, time_zone=run.time_zone)
    choice = choose_engine(run.engine, what=what, declined=rows.declined, work=rows.work)
    if choice.engine == "spark":
        return None, read_source(run.spark("write"), source), choice
    return rows, None, choice


def _evolved(job: ClusterJob) -> ClusterJob:
    """``job`` on the table with the columns its rows bring added (schema_mode="merge")."""
    evolution, snapshot = job.evolution, job.snapshot
    if evolution is None or not evolution.added.fields or snapshot is None:
        return job
    phase("adding columns")
    evolved = add_columns(job.storage, snapshot, delta_schema(evolution.added))
    return dataclasses.replace(job, snapshot=evolved)


def _filled(job: ClusterJob, df: DataFrame) -> DataFrame:
    """``df`` with the table's nullable columns it lacks as NULL (schema_mode="merge")."""
    if job.evolution is None or not job.evolution.filled:
        return df
    return df.select(
        "*", *(F.lit(None).cast(f.dataType).alias(f.name) for f in job.evolution.filled)
    )


def _fallen_back(engine: Engine, error: NeedsSparkError) -> EngineChoice:
    """Spark, for work the in-process engine found it cannot do once it had begun (nothing
    was committed); ``engine="arrow"`` raises the reason instead."""
    if engine == "arrow":
        raise InvalidArgumentError(f"engine='arrow' cannot run this: {error}") from None
    return EngineChoice("spark", str(error))


def _with_overwritten(job: ClusterJob, metrics: ClusterMetrics) -> ClusterMetrics:
    """An overwrite's result with the files it replaced."""
    if job.commit_mode != "overwrite" or job.snapshot is None or metrics.skipped:
        return metrics
    # deltalake's overwrite removes every file of the version it read, and only those (a
    # blind append committed since stays, as under Delta's WriteSerializable isolation).
    replaced = job.snapshot.files
    return dataclasses.replace(
        metrics, files_removed=len(replaced), bytes_removed=sum(f.size for f in replaced)
    )


def _clustered_write(
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


def optimize_table(
    storage: Storage,
    snapshot: TableSnapshot,
    asked: ClusterOptions,
    *,
    where: str | None,
    full: bool,
    fanout: int,
    run: RunWith,
) -> ClusterMetrics:
    """:meth:`zorder.Table.optimize`: the table at ``storage``, as of ``snapshot`` (its
    newest version when planned), optimized by the engine ``run`` asks for
    (:mod:`zorder.api.engines`); ``where`` is read in process with ``run``'s zone and
    ANSI meaning where that reads it exactly, else by Spark."""
    started = time.perf_counter()
    with timed_phases(), progress_of(run.progress, f"Optimizing {storage.uri}...", None):
        check_engine(run.engine)
        fanout = check_fanout(fanout)
        # Refused here, before any session starts, whoever evaluates it below.
        parsed = None if where is None else check_partition_where(snapshot, where)
        job = optimize_job(storage, snapshot, asked, where=where, fanout=fanout)
        phase("planning")
        partitions = list(snapshot.files_by_partition())
        spark: SparkSession | None = None
        chosen: set[tuple[Any, ...]] | None = set(partitions)
        if parsed is not None:
            here = run.engine != "spark"
            chosen = chosen_here(snapshot, partitions, parsed, run) if here else None
        if chosen is None:  # only Spark can tell
            assert where is not None
            spark = run.spark("optimize")
            chosen = chosen_partitions(spark, snapshot, partitions, where)
        picked = files_to_optimize(
            snapshot, job.plan.spec, chosen, full=full, target_file_size=job.target, fanout=fanout
        )
        read = rewrite_scope(snapshot, picked)
        if not read:
            wanted = job.remember.properties(snapshot, [])
            recorded = record_properties(job.storage, wanted, known=snapshot.configuration)
            unchanged = _unchanged(job, started, recorded)
            why = _clustered_already(snapshot, job.plan.spec, fanout)
            return dataclasses.replace(unchanged, notes=(why,))
        what, work = f"optimize of {storage.uri}", optimize_work(read)
        choice = choose_engine(run.engine, what=what, declined=declined_in_process(job), work=work)
        job = dataclasses.replace(job, engine=choice)
        if choice.engine == "arrow":
            try:
                return optimize_in_process(job, snapshot, read, started=started)
            except NeedsSparkError as error:
                job = dataclasses.replace(job, engine=_fallen_back(run.engine, error))
        spark = spark or run.spark("optimize")
        with progress_of(run.progress, f"Optimizing {job.uri}...", spark):
            return _rewrite(job, spark, snapshot, read, started)


def _rewrite(
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
    groups: dict[tuple[Any, ...], tuple[DataFile, ...]] = {}
    for data_file in read:
        groups[data_file.partition] = (*groups.get(data_file.partition, ()), data_file)
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
        return _unchanged(job, started, None)  # no rows: nothing to do
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
        size = sample_size_for(files) if job.sample_size is None else job.sample_size
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
            schema=delta_schema(df.schema),
            files=files,
            engine=job.chosen_engine,
            # The rows an optimize read (a write's DataFrame may give others each time).
            rows=rows if job.operation == "optimize" else None,
            partitioned=partitioned,
            # An optimize's values come from the log; a write's rows are the session's.
            time_zone=None if job.operation == "optimize" else session_time_zone(df.sparkSession),
        )
        return commit_run(job, output, attempt, removed=removed, started=started)
