"""``write`` and ``optimize``: cluster rows along a curve into a Delta table.

Both follow one path: check everything before any session starts, choose the
engine (:mod:`zorder.plan.engines`: this process for small work, handed to
:mod:`zorder.arrow.engine`, else Spark, :mod:`zorder.spark.engine`, and Spark again
where the in-process engine finds it cannot go on; Spark's part is imported only
when Spark runs), lay the rows out (key, one partition per file, sort
within files), write Parquet into a directory of the run's own under the table
root, read the footers for statistics, and commit all files in one Delta
transaction through :func:`zorder.plan.runs.commit_run`, whichever engine wrote
them. A failure leaves the table as it was and removes the run's directory,
unless the log shows (or cannot show otherwise) that the commit was made: then
the files stay, referenced by it (see :func:`zorder.table.guarded_run`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from zorder.api.context import Context
from zorder.api.progress import progress_of, watch_session
from zorder.arrow.engine import (
    ArrowRun,
    NeedsSparkError,
    declined_in_process,
    optimize_work,
)
from zorder.arrow.sample import sampled_here
from zorder.curves.kinds import ClusteringSpec
from zorder.errors import InvalidArgumentError
from zorder.plan.engines import EngineChoice, check_engine, choose_engine
from zorder.plan.jobs import (
    ClusterJob,
    OptimizeRequest,
    WriteRequest,
    optimize_job,
    write_commit_mode,
    write_job,
)
from zorder.plan.modes import Engine, WriteMode
from zorder.plan.progress import phase, timed_phases
from zorder.plan.runs import (
    ClusterMetrics,
    InProcessInput,
    RunPlan,
    execute_and_commit,
    unchanged_metrics,
)
from zorder.skipping.sql import ParsedFilter
from zorder.table import DataFile, Storage, TableSnapshot, record_properties, rewrite_scope
from zorder.table.delta.evolution import add_columns
from zorder.table.delta.schema import delta_schema
from zorder.table.delta.transactions import AlreadyRecordedError
from zorder.table.partition_filters import check_partition_where, partitions_where
from zorder.table.tiering import check_fanout, files_to_optimize, runs_of_spec

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

    from zorder.api.sources import WriteSource
    from zorder.spark.engine import SparkRun

__all__ = [
    "ClusterMetrics",
    "NothingToDo",
    "RunWith",
    "WriteMode",
    "chosen_here",
    "optimize_table",
    "plan_optimize",
    "plan_write",
    "write_table",
]


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
    return dataclasses.replace(unchanged_metrics(job, started, None), skipped=True)


def write_table(
    source: DataFrame | WriteSource, request: WriteRequest, *, run: RunWith
) -> ClusterMetrics:
    """:meth:`zorder.Table.write`: ``source`` (a DataFrame, or files at a path) clustered
    into the table ``request`` names: planned (:func:`plan_write`), then executed by the
    engine chosen and committed.

    With the request's ``transaction``, a write the table records already is skipped before
    anything runs, and one a concurrent writer commits first is skipped at the
    commit (its files deleted): see :mod:`zorder.table.delta.transactions`.

    Under ``asked.schema_mode="merge"``, columns the table lacks are added to it in a commit of
    their own before anything is written (:func:`zorder.table.delta.evolution.add_columns`).
    """
    from zorder.api.sources import WriteSource, read_source

    started = time.perf_counter()
    shown = progress_of(run.progress, f"Clustering into {request.storage.uri}...", None)
    with timed_phases(), shown:
        planned = plan_write(source, request, run=run)
        if isinstance(planned, NothingToDo):
            return _skipped(planned.job, started)
        plan = dataclasses.replace(planned, job=_evolved(planned.job), started=started)

        def in_spark(plan: RunPlan) -> SparkRun:
            from zorder.spark.engine import SparkRun, filled  # pyspark loads when Spark runs

            frame = plan.rows
            if frame is None or isinstance(frame, InProcessInput):
                # the in-process engine gave the path back to Spark
                assert isinstance(source, WriteSource)
                frame = read_source(run.spark("write"), source)
            return SparkRun(frame.sparkSession, filled(plan.job, frame))

        rows = plan.rows if isinstance(plan.rows, InProcessInput) else None
        here = ArrowRun(run.context.time_zone, rows) if rows is not None else None
        try:
            metrics = _executed(plan, run, here, in_spark, f"Clustering into {plan.job.uri}...")
        except AlreadyRecordedError:
            return _skipped(plan.job, started)
    return _with_overwritten(plan.job, metrics)


def plan_write(
    source: DataFrame | WriteSource, request: WriteRequest, *, run: RunWith
) -> RunPlan | NothingToDo:
    """A write of ``source`` planned: the job (checked against the rows' schema and the
    table's), the engine that will write it and its rows (a DataFrame, or the input read in
    this process); or, when the table records ``transaction`` already, why nothing is
    written. The mode and a path input are refused before any input is read or session
    started; a path the in-process engine declines (or ``engine="spark"``) is read by Spark
    here, lazily (its schema only). Nothing is written or committed: columns that
    ``schema_mode="merge"`` adds are added when the plan runs."""
    from zorder.api.sources import WriteSource, checked_source

    storage, snapshot, transaction = request.storage, request.snapshot, request.transaction
    write_commit_mode(request.mode, storage, snapshot)  # refused before any input is read
    if isinstance(source, WriteSource):
        source = checked_source(source, request.asked.by)
    rows, df, choice = _write_input(source, storage, run)
    # The rows' schema in Spark's JSON form (Delta's log's), whichever engine reads them.
    schema = df.schema.json() if df is not None else rows.schema if rows is not None else None
    assert schema is not None
    job = dataclasses.replace(write_job(schema, request), engine=choice)
    if transaction is not None and snapshot is not None and transaction.done_in(snapshot):
        return NothingToDo(
            job,
            f"the table records version {transaction.version} of the writer "
            f"{transaction.app_id!r} (or a newer one) already: nothing is written",
        )
    return RunPlan(job=job, rows=df if df is not None else rows, started=time.perf_counter())


def _write_input(
    source: DataFrame | WriteSource, storage: Storage, run: RunWith
) -> tuple[InProcessInput | None, DataFrame | None, EngineChoice]:
    """A write's input and its engine: the in-process reading of a path, or the rows Spark
    reads (a DataFrame, or the path read by Spark)."""
    from zorder.api.sources import WriteSource, in_process_input, read_source

    rows, declined = None, None
    if not isinstance(source, WriteSource):
        declined = "a DataFrame is written by Spark (give a path to write in process)"
    elif run.engine != "spark":
        rows = in_process_input(source, run.context)
        declined = rows.declined
    work = rows.work if rows is not None else None
    choice = choose_engine(run.engine, what=f"write to {storage.uri}", declined=declined, work=work)
    if choice.engine == "arrow":
        return rows, None, choice
    df = source if not isinstance(source, WriteSource) else read_source(run.spark("write"), source)
    return None, df, choice


def _evolved(job: ClusterJob) -> ClusterJob:
    """``job`` on the table with the columns its rows bring added (schema_mode="merge")."""
    evolution, snapshot = job.evolution, job.snapshot
    if evolution is None or evolution.added is None or snapshot is None:
        return job
    phase("adding columns")
    evolved = add_columns(job.storage, snapshot, delta_schema(evolution.added))
    return dataclasses.replace(job, snapshot=evolved)


def _executed(
    plan: RunPlan,
    run: RunWith,
    here: ArrowRun | None,
    in_spark: Callable[[RunPlan], SparkRun],
    shown: str,
) -> ClusterMetrics:
    """``plan`` executed by the engine chosen for it and committed: in this process
    (``here``, where the input can be read here), else by Spark (the engine ``in_spark``
    makes, its session's tasks shown on the status line as ``shown``), and by Spark too
    when the in-process engine finds, before anything is committed, that it cannot go on."""
    if plan.job.chosen_engine.engine == "arrow" and here is not None:
        try:
            return execute_and_commit(plan, here)
        except NeedsSparkError as error:
            job = dataclasses.replace(plan.job, engine=_fallen_back(run.engine, error))
            plan = dataclasses.replace(plan, job=job)
    engine = in_spark(plan)
    with progress_of(run.progress, shown, engine.session):
        return execute_and_commit(plan, engine)


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


@dataclass(frozen=True, kw_only=True)
class RunWith:
    """How a write or an optimize runs: the engine asked for; the handle's context (its
    session, started only when Spark runs, and the zone and ANSI meaning filters and
    partition values are read with); a status line."""

    engine: Engine = "auto"
    context: Context = field(default_factory=Context)
    progress: bool = False

    def spark(self, what: str) -> SparkSession:
        """The session Spark runs ``what`` in (``"write"``, ``"optimize"``), started now if
        it was not; InvalidArgumentError if none can be had."""
        spark = self.context.session(f"Table.{what}")
        watch_session(spark)  # a status line shows its tasks
        return spark


@dataclass(frozen=True)
class NothingToDo:
    """A run planned with nothing to write or rewrite (an optimize with no file to
    rewrite, a write whose transaction the table records): the job (what the table should
    still record), and why, in words for the user."""

    job: ClusterJob
    why: str


def chosen_here(
    snapshot: TableSnapshot,
    partitions: Sequence[tuple[Any, ...]],
    parsed: ParsedFilter,
    context: Context,
) -> set[tuple[Any, ...]] | None:
    """The partitions an optimize's ``where`` (parsed and checked by
    :func:`~zorder.table.partition_filters.check_partition_where`) chooses, read without
    Spark in ``context``'s zone and ANSI meaning (the one decision of them, whichever
    engine runs); None where only Spark can tell."""
    zone, ansi = context.time_zone, context.ansi
    return partitions_where(snapshot, partitions, parsed, time_zone=zone, ansi=ansi)


def optimize_table(request: OptimizeRequest, *, run: RunWith) -> ClusterMetrics:
    """:meth:`zorder.Table.optimize`: the table ``request`` names, as of its snapshot (the
    newest version when planned), planned (:func:`plan_optimize`), then executed by the
    engine chosen and committed; with nothing to rewrite, only the properties the table
    should record are (a commit of their own where one changes)."""
    started = time.perf_counter()
    snapshot = request.snapshot
    shown = progress_of(run.progress, f"Optimizing {request.storage.uri}...", None)
    with timed_phases(), shown:
        planned = plan_optimize(request, run=run)
        if isinstance(planned, NothingToDo):
            job = planned.job
            wanted = job.remember.properties(snapshot, [])
            recorded = record_properties(job.storage, wanted, known=snapshot.configuration)
            unchanged = unchanged_metrics(job, started, recorded)
            return dataclasses.replace(unchanged, notes=(planned.why,))
        plan = dataclasses.replace(planned, started=started)

        def in_spark(plan: RunPlan) -> SparkRun:
            from zorder.spark.engine import SparkRun  # pyspark loads only when Spark runs

            names = plan.job.plan.names

            def sampler(
                groups: Sequence[Sequence[DataFile]], sizes: Sequence[int]
            ) -> list[pa.Table] | None:
                return sampled_here(snapshot, names, groups, sizes)  # a small one, here

            return SparkRun(run.spark("optimize"), sampler=sampler)

        here = ArrowRun(run.context.time_zone)
        return _executed(plan, run, here, in_spark, f"Optimizing {plan.job.uri}...")


def plan_optimize(request: OptimizeRequest, *, run: RunWith) -> RunPlan | NothingToDo:
    """An optimize of the request's snapshot planned: the job, the files to rewrite and the
    engine that will, or why nothing needs rewriting. Every input is checked before a
    session starts; ``where`` is read in ``run``'s context (its zone and ANSI meaning) where the
    exact evaluator reads it, else by Spark, on the partitions' values alone. Nothing is
    written or committed."""
    check_engine(run.engine)
    storage, snapshot, where, full = request.storage, request.snapshot, request.where, request.full
    fanout = check_fanout(request.fanout)
    # Refused here, before any session starts, whoever evaluates it below.
    parsed = None if where is None else check_partition_where(snapshot, where)
    job = optimize_job(request)
    phase("planning")
    partitions = list(snapshot.files_by_partition())
    chosen: set[tuple[Any, ...]] | None = set(partitions)
    if parsed is not None:  # in the run's zone and ANSI meaning, whichever engine runs
        chosen = chosen_here(snapshot, partitions, parsed, run.context)
    if chosen is None:  # only Spark can tell
        assert where is not None
        from zorder.spark.writes import chosen_by_spark

        chosen = chosen_by_spark(run.spark("optimize"), snapshot, partitions, where)
    picked = files_to_optimize(
        snapshot, job.plan.spec, chosen, full=full, target_file_size=job.target, fanout=fanout
    )
    read = rewrite_scope(snapshot, picked)
    if not read:
        return NothingToDo(job, _clustered_already(snapshot, job.plan.spec, fanout))
    what, work = f"optimize of {storage.uri}", optimize_work(read)
    choice = choose_engine(run.engine, what=what, declined=declined_in_process(job), work=work)
    job = dataclasses.replace(job, engine=choice)
    return RunPlan(job=job, read=tuple(read), started=time.perf_counter())
