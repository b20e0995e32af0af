"""``write`` and ``optimize``: cluster rows along a curve into a Delta table.

Both follow one path: check everything, lay the rows out with Spark (key,
one partition per file, sort within files), write Parquet into a directory of the
run's own under the table root, read the footers for statistics, and commit
all files in one Delta transaction. A failure leaves the table as it was and
removes the run's directory, unless the log shows (or cannot show otherwise)
that the commit was made: then the files stay, referenced by it (see
:func:`zorder.table.guarded_run`).
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pyspark.sql import DataFrame, SparkSession

from zorder.api.jobs import (
    ClusterJob,
    ClusterOptions,
    Remember,
    file_count,
    optimize_job,
    target_size,
    write_job,
)
from zorder.api.modes import WriteMode
from zorder.api.progress import phase, phase_seconds, progress_of, timed_phases
from zorder.api.samples import files_sample, partitions_sample
from zorder.api.scanning import session_time_zone
from zorder.curves.kinds import ClusteringSpec, Curve, KeyMethod
from zorder.errors import InvalidArgumentError, ZorderError
from zorder.spark.keys import sample_size_for
from zorder.spark.layout import cluster
from zorder.spark.partitions import (
    Partition,
    PartitionedLayout,
    cluster_partitions,
    count_partitions,
    files_per_partition,
    partition_key,
    partition_sample_sizes,
)
from zorder.spark.scan import read_files, read_partitions
from zorder.spark.storage import spark_path
from zorder.spark.writes import (
    chosen_partitions,
    delta_schema,
    estimated_bytes,
    file_number,
    logged_partitions,
    rows_per_row_group,
    write_run,
)
from zorder.stats import ColumnDepth
from zorder.table import (
    CommitRequest,
    DataFile,
    Storage,
    TableSnapshot,
    WrittenFile,
    commit_files,
    delta_partition_value,
    describe_written_files,
    guarded_run,
    record_properties,
    remove_writer_markers,
    rewrite_scope,
)
from zorder.table.clustering import CommitClustering, Operation, Run
from zorder.table.depths import rewritten_depths, snapshot_depths
from zorder.table.tiering import check_fanout, files_to_optimize, runs_of_spec
from zorder.table.transactions import AlreadyRecordedError, AppTransaction

__all__ = ["ClusterMetrics", "WriteMode", "nothing_to_optimize", "optimize_table", "write_table"]


@dataclass(frozen=True)
class ClusterMetrics:
    """What a ``write`` or ``optimize`` did."""

    table_uri: str
    operation: Operation
    # The table's version after the command (its properties' commit, when it made one);
    # None when it committed nothing. data_version is the commit that added the files.
    version: int | None
    run_id: str
    by: tuple[str, ...]
    curve: Curve
    method: KeyMethod
    num_files_target: int
    files_added: int
    files_removed: int
    rows: int
    bytes_added: int
    bytes_removed: int
    seconds: float
    # Wall seconds of each phase, in order: checking, counting, sampling, clustering and
    # writing (the key, shuffle, sort and Parquet write: one Spark job), statistics, commit,
    # properties, depth (an optimize's).
    phase_seconds: tuple[tuple[str, float], ...] = ()
    data_version: int | None = None
    # True: the table already recorded the write's txn_version (or a newer one) for its
    # txn_app_id, so the write was made before and this one wrote and committed nothing.
    skipped: bool = False
    # What the layout left that keeps filters from skipping, with the option that fixes it.
    notes: tuple[str, ...] = ()
    # An optimize's (a write leaves them empty): each clustering column's depth over the
    # whole table, from statistics alone: in the version it read, and in that version with
    # the files it removed replaced by those it wrote (a commit made meanwhile by another
    # writer is not in it). Equal when it rewrote nothing. See zorder.stats.depth.
    depth_before: tuple[ColumnDepth, ...] = ()
    depth_after: tuple[ColumnDepth, ...] = ()
    # The columns whose files carry Parquet bloom filters (zorder.curves.kinds.BloomColumn).
    bloom_filters: tuple[str, ...] = ()


def _unchanged(job: ClusterJob, started: float, recorded: int | None) -> ClusterMetrics:
    """No file to rewrite: no run, and the version only a properties commit made, if any."""
    return _metrics(job, recorded, "", [], (), job.num_files or 0, started)


def _clustered_already(snapshot: TableSnapshot, spec: ClusteringSpec, fanout: int) -> str:
    """Why an incremental optimize by ``spec`` rewrites no file of ``snapshot``."""
    runs = {run for run in runs_of_spec(snapshot, spec).values() if run is not None}
    return (
        f"nothing to optimize: the {len(snapshot.files):,} file(s) of {snapshot.uri} are in "
        f"{len(runs):,} run(s) clustered by {spec.describe()}, and no size tier holds {fanout} "
        "runs to merge (full=True, CLI --full, reclusters every file)"
    )


def nothing_to_optimize(
    snapshot: TableSnapshot, *, target_file_size: int | str | None, fanout: int
) -> ClusterMetrics | None:
    """The result of an incremental optimize by the table's recorded spec, of every
    partition, when it would rewrite no file and record nothing, decided from the log alone
    (the CLI answers so before Spark starts); None when it would do something."""
    spec = snapshot.recorded_spec
    if spec is None or (target_file_size is None and snapshot.recorded_target_file_size is None):
        return None  # it would record a spec or a size: the optimize itself does that
    target = target_size(target_file_size, snapshot)
    everything = set(snapshot.files_by_partition())
    if files_to_optimize(
        snapshot, spec, everything, full=False, target_file_size=target, fanout=check_fanout(fanout)
    ):
        return None
    wanted = Remember(None, target, asked=target_file_size is not None)
    if wanted.properties(snapshot, []).items() - snapshot.configuration.items():
        return None
    return ClusterMetrics(
        table_uri=snapshot.uri,
        operation="optimize",
        version=None,
        run_id="",
        by=spec.columns,
        curve=spec.curve,
        method=spec.method,
        num_files_target=0,
        files_added=0,
        files_removed=0,
        rows=0,
        bytes_added=0,
        bytes_removed=0,
        seconds=0.0,
        notes=(_clustered_already(snapshot, spec, fanout),),
        depth_before=(depth := snapshot_depths(snapshot, spec.columns)),
        depth_after=depth,
        bloom_filters=tuple(b.column for b in spec.bloom_filters),
    )


def _skipped(job: ClusterJob, started: float) -> ClusterMetrics:
    """A write whose transaction the table records: nothing written, nothing committed."""
    return dataclasses.replace(_unchanged(job, started, None), skipped=True)


def _metrics(
    job: ClusterJob,
    version: int | None,
    run_id: str,
    written: Sequence[WrittenFile],
    removed: Sequence[DataFile],
    num_files: int,
    started: float,
) -> ClusterMetrics:
    plan = job.plan
    before: tuple[ColumnDepth, ...] = ()
    after: tuple[ColumnDepth, ...] = ()
    if job.operation == "optimize" and job.snapshot is not None:
        phase("depth")
        before = snapshot_depths(job.snapshot, plan.names)
        changed = written or removed
        after = rewritten_depths(job.snapshot, plan.names, removed, written) if changed else before
    return ClusterMetrics(
        table_uri=job.uri,
        operation=job.operation,
        version=version,
        run_id=run_id,
        by=tuple(plan.names),
        curve=plan.curve,
        method=plan.method,
        num_files_target=num_files,
        files_added=len(written),
        files_removed=len(removed),
        rows=sum(f.stats.num_records for f in written),
        bytes_added=sum(f.size for f in written),
        bytes_removed=sum(f.size for f in removed),
        seconds=time.perf_counter() - started,
        phase_seconds=phase_seconds(),
        depth_before=before,
        depth_after=after,
        bloom_filters=tuple(b.column for b in plan.bloom_filters),
    )


def write_table(
    df: DataFrame,
    storage: Storage,
    snapshot: TableSnapshot | None,
    asked: ClusterOptions,
    *,
    mode: WriteMode,
    partition_by: Sequence[str] | None,
    transaction: AppTransaction | None,
    progress: bool,
) -> ClusterMetrics:
    """:meth:`zorder.Table.write`: ``df`` clustered into the table at ``storage``, whose
    newest version is ``snapshot`` (None: there is no table yet).

    With ``transaction``, a write the table records already is skipped before
    Spark runs, and one a concurrent writer commits first is skipped at the
    commit (its files deleted): see :mod:`zorder.table.transactions`.
    """
    started = time.perf_counter()
    with timed_phases():
        job = write_job(
            df,
            storage,
            snapshot,
            asked,
            mode=mode,
            partition_by=partition_by,
            transaction=transaction,
        )
        if transaction is not None and snapshot is not None and transaction.done_in(snapshot.table):
            return _skipped(job, started)
        try:
            return _clustered_write(job, df, started, progress)
        except AlreadyRecordedError:
            return _skipped(job, started)


def _clustered_write(
    job: ClusterJob, df: DataFrame, started: float, progress: bool
) -> ClusterMetrics:
    """The write's rows laid out (per partition, when the table has them) and committed."""
    with progress_of(progress, f"Clustering into {job.uri}...", df.sparkSession):
        phase("counting")
        num_files = job.num_files
        estimated = estimated_bytes(df) if num_files is None else 0
        layout = _partitioned_layout(job, df, bytes_total=estimated) if job.partition_by else None
        if layout is not None:
            files = layout.first_file[-1]
        else:  # unpartitioned, or no rows (one empty file makes the table)
            files = num_files if num_files is not None else file_count(None, job.target, estimated)
        metrics = _write_and_commit(job, df, files=files, started=started, partitioned=layout)
    if job.commit_mode != "overwrite" or job.snapshot is None:
        return metrics
    # deltalake's overwrite removes every file of the version it read, and only those (a
    # blind append committed since stays, as under Delta's WriteSerializable isolation).
    replaced = job.snapshot.files
    return dataclasses.replace(
        metrics, files_removed=len(replaced), bytes_removed=sum(f.size for f in replaced)
    )


def optimize_table(
    spark: SparkSession,
    storage: Storage,
    snapshot: TableSnapshot,
    asked: ClusterOptions,
    *,
    where: str | None,
    full: bool,
    fanout: int,
    progress: bool,
) -> ClusterMetrics:
    """:meth:`zorder.Table.optimize`: the table at ``storage``, as of ``snapshot`` (its
    newest version when planned), optimized with ``spark``."""
    started = time.perf_counter()
    with timed_phases():
        job = optimize_job(spark, storage, snapshot, asked, where=where, fanout=fanout)
        with progress_of(progress, f"Optimizing {job.uri}...", spark):
            phase("planning")
            partitions = list(snapshot.files_by_partition())
            chosen = (
                set(partitions)
                if where is None
                else chosen_partitions(spark, snapshot, partitions, where)
            )
            picked = files_to_optimize(
                snapshot,
                job.plan.spec,
                chosen,
                full=full,
                target_file_size=job.target,
                fanout=fanout,
            )
            read = rewrite_scope(snapshot, picked)
            if not read:
                wanted = job.remember.properties(snapshot, [])
                recorded = record_properties(job.storage, wanted, known=snapshot.configuration)
                unchanged = _unchanged(job, started, recorded)
                why = _clustered_already(snapshot, job.plan.spec, fanout)
                return dataclasses.replace(unchanged, notes=(why,))
            return _rewrite(job, spark, snapshot, read, started)


def _rewrite(
    job: ClusterJob,
    spark: SparkSession,
    snapshot: TableSnapshot,
    read: Sequence[DataFile],
    started: float,
) -> ClusterMetrics:
    """Optimize's run: the rows of ``read`` (files of ``snapshot``) clustered and committed."""
    wanted = {f.path for f in read}
    keep = np.array([f.path in wanted for f in snapshot.files], dtype=bool)
    bytes_read = sum(f.size for f in read)
    if not job.partition_by:
        counts = [f.num_records for f in read]
        return _write_and_commit(
            job,
            read_files(snapshot, spark, keep),
            files=file_count(job.num_files, None if job.num_files else job.target, bytes_read),
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
            rows_per_file=rows_per_row_group(per_file, None if job.num_files else job.target),
        )
        if not remove_writer_markers(job.storage, run.directory):
            raise ZorderError(
                f"Spark wrote {location}, but zorder finds no file in {uri}/{run.directory}: "
                "Spark (the session's fs.* settings) and zorder (storage_options, else the "
                "environment) reach different stores. Nothing was committed"
            )
        phase("statistics")
        configuration = snapshot.stored_configuration if snapshot else {}
        written = describe_written_files(job.storage, run.directory, stored, configuration)
        _check_rows_kept(job, written, rows, partitioned)
        _check_columns_hold_values(job, written)
        if partitioned is not None:
            # An optimize's values come from the log; a write's rows are the session's.
            zone = None if job.operation == "optimize" else session_time_zone(df.sparkSession)
            written = [_in_partition(f, job, partitioned, zone) for f in written]
        phase("commit")
        request = CommitRequest(
            storage=job.storage,
            schema=delta_schema(df.schema),
            files=written,
            mode=job.commit_mode,
            snapshot=snapshot,
            removed=removed,
            clustering=CommitClustering(job.operation, run, job.plan.spec, len(written)),
            partition_by=job.partition_by,
            transaction=job.transaction,
        )
        version = commit_files(request, attempt)
        # After the data commit, in a commit of its own (Delta refuses unknown properties
        # at creation): a crash in between leaves the rows committed and the properties
        # as they were; see api/jobs._resolved_spec for how the spec is then found again.
        # Still guarded: an error here says the run's files are committed and kept.
        phase("properties")
        properties = job.remember.properties(snapshot, written)
        known = snapshot.configuration if snapshot is not None else None
        recorded = record_properties(job.storage, properties, known=known)
    # The table's version after the command: the properties' commit, when one was made.
    final = recorded if recorded is not None else version
    metrics = _metrics(job, final, run.id, written, removed, files, started)
    notes = _single_file_notes(job, written, removed, partitioned)
    return dataclasses.replace(metrics, data_version=version, notes=notes)


def _single_file_notes(
    job: ClusterJob,
    written: Sequence[WrittenFile],
    removed: Sequence[DataFile],
    partitioned: PartitionedLayout | None,
) -> tuple[str, ...]:
    """Where this run left a partition (or the table) in one file, which no filter can skip
    inside, and the sizes that would give more. An append's run sits beside the files there
    already, so only what a create, overwrite or optimize lays out is judged."""
    if job.commit_mode == "append" or not written:
        return ()
    gone = {f.path for f in removed}
    snapshot = job.snapshot if job.commit_mode == "rewrite" else None
    kept = [f for f in snapshot.files if f.path not in gone] if snapshot is not None else []
    if partitioned is None:
        if len(written) > 1 or kept:
            return ()
        where, total = "the table holds one file", 1
    else:
        counts = Counter(partitioned.partition_of_file(file_number(f.path)).values for f in written)
        untouched = {f.partition for f in kept}
        single = [p for p, n in counts.items() if n == 1 and p not in untouched]
        if not single:
            return ()
        where, total = f"{len(single)} of {len(counts)} partitions hold one file", len(counts)
    wanted = 8 * total  # eight files a partition: a filter on one column skips most of them
    size = max(1, sum(f.size for f in written) // wanted)
    return (
        f"{where} after this {job.operation}: no filter on {', '.join(job.plan.names)} can "
        f"skip inside {'it' if total == 1 else 'them'}. For smaller files give "
        f"num_files={wanted} (CLI: --num-files {wanted}) or target_file_size={size} "
        f"(--target-file-size {size})",
    )


def _check_rows_kept(
    job: ClusterJob,
    written: Sequence[WrittenFile],
    rows: int | None,
    partitioned: PartitionedLayout | None,
) -> None:
    """Refuse to commit an optimize whose files hold other than the rows it read.

    The rows an optimize reads are known from the log (or counted): a
    rewrite that lost or doubled any, for whatever reason, must not replace
    the files it read.
    """
    if job.operation != "optimize":
        return  # a write's input may be any DataFrame, read again by each job
    expected = rows
    if expected is None and partitioned is not None:
        expected = sum(p.rows for p in partitioned.partitions)
    found = sum(f.stats.num_records for f in written)
    if expected is not None and found != expected:
        raise ZorderError(
            f"optimize of {job.uri} read {expected:,} rows but its files hold {found:,}; "
            "nothing was committed"
        )


def _check_columns_hold_values(job: ClusterJob, written: Sequence[WrittenFile]) -> None:
    """Refuse to record a spec with a clustering column that is NULL in every row written:
    every file would then span all of it, and no filter on it could skip one.

    Only where a spec is chosen (the write or optimize records it); an append that follows
    the recorded spec may well bring a batch whose column is all NULL. Known from the
    written files' statistics, so exactly and before the commit (the files are deleted).
    """
    rows = sum(f.stats.num_records for f in written)
    if job.remember.spec is None or rows == 0:
        return
    snapshot = job.snapshot
    for column in job.plan.names:
        try:
            key = snapshot.schema.stored_name(column) if snapshot is not None else column
        except KeyError:  # not a top-level column: its statistics are not looked up
            continue
        counts = [f.stats.null_count.get(key) for f in written]
        if all(isinstance(n, int) for n in counts) and sum(n or 0 for n in counts) == rows:
            raise InvalidArgumentError(
                f"clustering column {column!r} is NULL in all {rows:,} rows of {job.uri}'s "
                f"{job.operation}: files cannot be told apart by it, so no filter on it could "
                f"skip one. Nothing was committed; cluster by columns that hold values "
                f"(by={[c for c in job.plan.names if c != column]!r}, or others)"
            )


def _in_partition(
    written: WrittenFile, job: ClusterJob, layout: PartitionedLayout, time_zone: str | None
) -> WrittenFile:
    """``written`` with the partition values of the file number Spark named it after.

    Into an existing table they go as its log writes them already; the values
    are instants in a session of ``time_zone``, or (None) the log's own.
    """
    partition = layout.partition_of_file(file_number(written.path))
    pairs = zip(job.partition_by, partition.values, strict=True)
    snapshot = job.snapshot
    if snapshot is None:
        values = {c: delta_partition_value(v) for c, v in pairs}
    else:  # keyed by the names the log gives partition values
        values = {
            snapshot.schema.stored_name(c): snapshot.partition_text(c, v, time_zone=time_zone)
            for c, v in pairs
        }
    return dataclasses.replace(written, partition_values=values)
