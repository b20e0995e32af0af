"""The part of a ``write`` or ``optimize`` both engines share: the plan they execute, and
the files a run wrote checked, committed with their statistics, the table's properties
recorded, and the result.

A :class:`RunPlan` is what the runner (:mod:`zorder.api.cluster`) hands an engine. An
engine (:class:`RunEngine`: Spark's :class:`~zorder.spark.engine.SparkRun`, this
process's :class:`~zorder.arrow.engine.ArrowRun`) writes the plan's files into a run's
directory and says what it wrote, a :class:`RunOutput`; :func:`execute_and_commit`
opens that directory inside :func:`zorder.table.guarded_run`, has the engine write it,
and commits through :func:`commit_run`, whichever engine wrote it.
"""

from __future__ import annotations

import dataclasses
import shlex
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import pyarrow as pa
from deltalake import Schema as DeltaSchema

from zorder.curves.kinds import Curve, KeyMethod
from zorder.curves.partitions import Partition, PartitionFiles
from zorder.errors import InternalError, InvalidArgumentError
from zorder.plan.engines import EngineChoice, InProcessWork
from zorder.plan.jobs import ClusterJob
from zorder.plan.modes import EngineUsed
from zorder.plan.progress import phase, phase_seconds
from zorder.stats import ColumnDepth
from zorder.table import (
    CommitAttempt,
    CommitRequest,
    DataFile,
    WrittenFile,
    commit_files,
    delta_partition_value,
    describe_written_files,
    guarded_run,
    record_properties,
)
from zorder.table.clustering import CommitClustering, Operation, Run, file_number
from zorder.table.depths import rewritten_depths, snapshot_depths

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = [
    "ClusterMetrics",
    "InProcessInput",
    "RunEngine",
    "RunOutput",
    "RunPlan",
    "commit_run",
    "execute_and_commit",
    "partition_texts",
    "run_metrics",
    "unchanged_metrics",
]


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
    # Who wrote the files: "spark", or "arrow" (this process, no JVM); None when no engine
    # ran (nothing to do, or decided from the log alone). And why it was chosen.
    engine: EngineUsed | None = None
    engine_reason: str = ""


def unchanged_metrics(job: ClusterJob, started: float, recorded: int | None) -> ClusterMetrics:
    """No file to rewrite: no run, and the version only a properties commit made, if any."""
    return run_metrics(job, recorded, "", [], (), job.num_files or 0, started)


def run_metrics(
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


@dataclass(frozen=True, kw_only=True)
class RunOutput:
    """What an engine wrote into ``run``'s directory, for the commit."""

    run: Run
    columns: Sequence[str]  # the columns the files hold, in the table's order
    schema: DeltaSchema  # the table's schema (what a new table is created with)
    files: int  # the files planned
    engine: EngineChoice
    rows: int | None = None  # the rows the files must hold (an optimize's), when known
    partitioned: PartitionFiles | None = None  # the partition of each file number
    # The zone a write's partition values (instants) are in; None: the log's (an optimize's).
    time_zone: str | None = None


@dataclass(frozen=True)
class InProcessInput:
    """An input as the in-process engine would read it: its schema as Spark reads it (in
    Spark's JSON form, which Delta's log holds), its size, and the read; or why it is left
    to Spark (``declined``)."""

    schema: str | None
    work: InProcessWork | None
    declined: str | None = None
    read: Callable[[], pa.Table] = field(default=lambda: pa.table({}), repr=False)


@dataclass(frozen=True, kw_only=True)
class RunPlan:
    """One write or optimize, planned, as either engine executes it: the job (its table, its
    clustering plan, file and row-group sizes, bloom filters, partitions, and the engine
    chosen for it) and, for an optimize, the files it rewrites (files of
    ``job.snapshot``, whole partitions where deleted rows require it); for a write, its
    rows (``rows``): a DataFrame, or the input the in-process engine reads
    (:class:`InProcessInput`). ``started``: when the command began (its
    result's seconds)."""

    job: ClusterJob
    read: tuple[DataFile, ...] = ()
    rows: InProcessInput | DataFrame | None = None  # a write's rows
    started: float


class RunEngine(Protocol):
    """An engine: writes a plan's files into ``run``'s directory and says what it wrote."""

    def execute(self, plan: RunPlan, run: Run) -> RunOutput | None:
        """``plan``'s rows laid out and written under ``run.directory``; None where there
        is nothing to commit (an optimize whose files hold no row and no deleted row).
        Raises before anything is committed; the runner removes the directory then."""
        ...


def execute_and_commit(plan: RunPlan, engine: RunEngine) -> ClusterMetrics:
    """``plan`` executed by ``engine`` in a run directory of its own and committed: the one
    path from a plan to a commit (:func:`commit_run`). A failure before the commit is in the
    log removes the directory (:func:`zorder.table.guarded_run`)."""
    job = plan.job
    run = Run.new(job.plan.spec)
    with guarded_run(job.storage, run.directory) as attempt:
        output = engine.execute(plan, run)
        if output is None:
            return unchanged_metrics(job, plan.started, None)
        return commit_run(job, output, attempt, removed=plan.read, started=plan.started)


def commit_run(
    job: ClusterJob,
    output: RunOutput,
    attempt: CommitAttempt,
    *,
    removed: Sequence[DataFile],
    started: float,
) -> ClusterMetrics:
    """The files ``output`` describes, checked and committed (inside the run's
    :func:`~zorder.table.guarded_run`, whose ``attempt`` it is), then the properties the
    job records; the result."""
    snapshot, run = job.snapshot, output.run
    phase("statistics")
    configuration = snapshot.stored_configuration if snapshot else {}
    written = describe_written_files(job.storage, run.directory, output.columns, configuration)
    _check_rows_kept(job, written, output.rows, output.partitioned)
    _check_columns_hold_values(job, written)
    if output.partitioned is not None:
        zone = output.time_zone
        written = [_in_partition(f, job, output.partitioned, zone) for f in written]
    phase("commit")
    request = CommitRequest(
        storage=job.storage,
        schema=output.schema,
        files=written,
        mode=job.commit_mode,
        snapshot=snapshot,
        removed=removed,
        clustering=CommitClustering(
            job.operation, run, job.plan.spec, len(written), where=job.where
        ),
        partition_by=job.partition_by,
        transaction=job.transaction,
    )
    version = commit_files(request, attempt)
    # After the data commit, in a commit of its own (Delta refuses unknown properties
    # at creation): a crash in between leaves the rows committed and the properties
    # as they were; see plan/jobs._resolved_spec for how the spec is then found again.
    # Still guarded: an error here says the run's files are committed and kept.
    phase("properties")
    properties = job.remember.properties(snapshot, written)
    known = snapshot.configuration if snapshot is not None else None
    recorded = record_properties(job.storage, properties, known=known)
    # The table's version after the command: the properties' commit, when one was made.
    final = recorded if recorded is not None else version
    metrics = run_metrics(job, final, run.id, written, removed, output.files, started)
    notes = _single_file_notes(job, written, removed, output.partitioned)
    notes += _unbounded_notes(job, written)
    return dataclasses.replace(
        metrics,
        data_version=version,
        notes=notes,
        engine=output.engine.engine,
        engine_reason=output.engine.reason,
    )


def _single_file_notes(
    job: ClusterJob,
    written: Sequence[WrittenFile],
    removed: Sequence[DataFile],
    partitioned: PartitionFiles | None,
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
    # A full optimize: an incremental one leaves a run of the spec as it is. A size, not a
    # count, so that every partition gets files of it; recorded only when asked.
    return (
        f"{where} after this {job.operation}: no filter on {', '.join(job.plan.names)} can "
        f"skip inside {'it' if total == 1 else 'them'}. For smaller files run "
        f"optimize(full=True, target_file_size={size}) (CLI: zorder optimize "
        f"{shlex.quote(job.uri)} --full --target-file-size {size}); add "
        f"set_target_size=True (--set-target-size) for later runs to keep that size",
    )


def _unbounded_notes(job: ClusterJob, written: Sequence[WrittenFile]) -> tuple[str, ...]:
    """Clustering columns that got no min/max statistics in any file written: no reader can
    skip on them, however the files are laid out. Delta gives statistics to a table's first
    32 columns (``delta.dataSkippingNumIndexedCols``) unless ``delta.dataSkippingStatsColumns``
    names others, and zorder's writers follow that rule, as Delta Spark's readers do."""
    if job.commit_mode == "append" or not written:
        return ()
    snapshot = job.snapshot
    notes = []
    for column in job.plan.names:
        try:
            key = snapshot.schema.stored_name(column) if snapshot is not None else column
        except KeyError:  # not a top-level column
            continue
        if any(key in f.stats.min_values or key in f.stats.max_values for f in written):
            continue
        notes.append(
            f"clustering column {column!r} has no min/max statistics in the files this "
            f"{job.operation} wrote, so no reader can skip files on it: Delta gives statistics "
            "to a table's first 32 columns (delta.dataSkippingNumIndexedCols) unless "
            "delta.dataSkippingStatsColumns names others, and binary columns none. Name it "
            f"there (ALTER TABLE delta.`{job.uri}` SET TBLPROPERTIES "
            f"('delta.dataSkippingStatsColumns' = '...,{column}')) and run "
            "optimize(full=True), or cluster by a column that gets statistics"
        )
    return tuple(notes)


def _check_rows_kept(
    job: ClusterJob,
    written: Sequence[WrittenFile],
    rows: int | None,
    partitioned: PartitionFiles | None,
) -> None:
    """Refuse to commit an optimize whose files hold other than the rows it read.

    The rows an optimize reads are known from the log (or counted): a
    rewrite that lost or doubled any, for whatever reason, must not replace
    the files it read.
    """
    if job.operation != "optimize" and rows is None:
        return  # a DataFrame written by Spark may give other rows each time it is read
    expected = rows
    if expected is None and partitioned is not None:
        expected = sum(p.rows for p in partitioned.partitions)
    found = sum(f.stats.num_records for f in written)
    if expected is not None and found != expected:
        raise InternalError(
            f"{job.operation} of {job.uri} read {expected:,} rows but its files hold "
            f"{found:,}; nothing was committed"
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


def partition_texts(
    job: ClusterJob, partition: Partition, time_zone: str | None
) -> dict[str, str | None]:
    """``partition``'s values as the log's text, keyed by the names the log gives partition
    values. Into an existing table they go as its log writes them already; the values are
    instants in a session of ``time_zone``, or (None) the log's own."""
    pairs = zip(job.partition_by, partition.values, strict=True)
    snapshot = job.snapshot
    if snapshot is None:
        return {c: delta_partition_value(v) for c, v in pairs}
    return {
        snapshot.schema.stored_name(c): snapshot.partition_text(c, v, time_zone=time_zone)
        for c, v in pairs
    }


def _in_partition(
    written: WrittenFile, job: ClusterJob, layout: PartitionFiles, time_zone: str | None
) -> WrittenFile:
    """``written`` with the partition values of the file number it is named after."""
    partition = layout.partition_of_file(file_number(written.path))
    values = partition_texts(job, partition, time_zone)
    return dataclasses.replace(written, partition_values=values)
