"""``Table``: one handle per Delta table, which owns what it opened.

Opening a handle decides once where the table lives and how to reach it (the
location normalized, the storage options resolved, given ones over the Spark
session's object-store settings, see :func:`~zorder.api.context.table_storage`,
into one :class:`~zorder.table.Storage`), which zone zone-less timestamps are
read in and which ANSI meaning filters have, and reads the table's log once:
the handle holds that snapshot. ``version``, ``scan``, ``read``,
``describe``, ``stats`` and ``history`` answer from it; :meth:`Table.refresh`
moves it to the newest version, as delta-rs's ``update_incremental`` and
pyiceberg's ``refresh`` do. ``write`` and ``optimize`` start from the newest
version (one read to plan) and pass the snapshot and the ``Storage`` down,
which nothing below opens again except the commit's own check of what landed
since; afterwards the handle holds the version they committed (read when next
needed), as after ``restore``. ``vacuum``, which deletes, reads the newest version first. The
path-first functions (:func:`zorder.scan`, :func:`zorder.write`, ...) are
one-line wrappers that open a handle and call its method.

Zones: a handle plans in its zone (``time_zone``, else the session's, else
UTC). Spark filters rows in its session's zone, so a plan read by Spark
(:meth:`Table.read`, :meth:`Scan.to_spark`) in a session whose zone differs
is planned again in that zone, from the same version: the files kept and the
rows filtered then mean the same instants, and the answer is Spark's. ANSI
mode likewise: a handle plans with the meaning of ANSI mode on or off
(``ansi``, else the session's, else on), and a plan read by a session of the
other mode is planned again in its mode.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from zorder.api.catalog import is_table_name, lookup
from zorder.api.context import Context
from zorder.api.describe import FileDescription, TableDescription, describe_snapshot
from zorder.api.restore import RestoreResult, check_restore_target, restore_snapshot
from zorder.api.scanning import Scan, Where, plan_scan
from zorder.api.vacuum import VacuumResult, check_retain_hours, vacuum_snapshot
from zorder.curves.kinds import BloomFilters
from zorder.errors import (
    InvalidArgumentError,
    InvalidArgumentTypeError,
    NotADeltaTableError,
    TableNotFoundError,
)
from zorder.plan.modes import Engine, InputFormat, SchemaMode, WriteMode
from zorder.table import (
    AsOf,
    Commit,
    DataFile,
    Storage,
    TableSnapshot,
    history,
    load_snapshot,
    not_a_table,
)
from zorder.table.tiering import DEFAULT_FANOUT

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from zorder.advice.advisor import Advice
    from zorder.api.cluster import ClusterMetrics, RunWith
    from zorder.curves.kinds import ClusteringSpec, Curve, KeyMethod

__all__ = ["Commit", "Snapshot", "Table"]


class Table:
    """The Delta table at ``uri``, opened: its log is read once, here, and the handle holds
    that version (:meth:`refresh` moves it to the newest).

    ``storage_options`` (else the session's settings, else the environment) reach it;
    ``spark`` (else the active session, if any; or a function that starts one, called only
    when Spark must run) resolves Column filters, gives the zone
    zone-less timestamps are read in (``time_zone`` overrides it) and whether filters
    have the meaning of ANSI mode on or off (``ansi`` overrides it; without a session,
    on: Spark 4.x's default), and runs :meth:`write`, :meth:`optimize`, :meth:`read`
    and :meth:`advise`. ``version`` or ``timestamp`` opens an older version, as
    Delta's ``versionAsOf`` and ``timestampAsOf``.

    A location that holds no table raises :class:`~zorder.errors.TableNotFoundError`
    (one that holds something else, Parquet files say,
    :class:`~zorder.errors.NotADeltaTableError`), unless ``create=True``: then it opens,
    :meth:`write` creates the table, and what needs a table before that raises there.
    """

    # The version held; None where no table is (yet, or not read). _made: a version this
    # handle committed, read when next needed.
    _held: TableSnapshot | None
    _made: int | None

    def __init__(
        self,
        uri: str | os.PathLike[str],
        *,
        storage_options: Mapping[str, str] | None = None,
        spark: SparkSession | Callable[[], SparkSession] | None = None,
        time_zone: str | None = None,
        ansi: bool | None = None,
        version: int | None = None,
        timestamp: AsOf | None = None,
        create: bool = False,
    ) -> None:
        if not isinstance(create, bool):
            raise InvalidArgumentTypeError(f"create must be True or False, got {create!r}")
        if create and (version is not None or timestamp is not None):
            raise InvalidArgumentError(
                "create=True opens a table to write; version= and timestamp= open one that "
                "exists: give one or the other"
            )
        self._resolve(uri, storage_options, spark, time_zone, ansi)
        try:
            self._held = self._load(version=version, timestamp=timestamp)
        except NotADeltaTableError:
            if not create:
                raise

    @classmethod
    def _unread(
        cls,
        uri: str | os.PathLike[str],
        *,
        storage_options: Mapping[str, str] | None,
        spark: SparkSession | Callable[[], SparkSession] | None,
        time_zone: str | None = None,
    ) -> Table:
        """A handle whose log is first read by the one method it is made for: the
        path-first ``write``, ``optimize``, ``vacuum`` and ``restore``, which read the
        newest version first anyway, read it once."""
        table = cls.__new__(cls)
        table._resolve(uri, storage_options, spark, time_zone, None)
        return table

    def _resolve(
        self,
        uri: str | os.PathLike[str],
        storage_options: Mapping[str, str] | None,
        spark: SparkSession | Callable[[], SparkSession] | None,
        time_zone: str | None,
        ansi: bool | None,
    ) -> None:
        """The handle's :class:`~zorder.api.context.Context`: where the table lives and how
        to reach it, its zone and ANSI meaning, its session; no read."""
        if not isinstance(uri, str | os.PathLike) or not os.fspath(uri):
            raise InvalidArgumentError(
                f"a table's location must be a non-empty string, got {uri!r}"
            )
        # A function given as spark starts the session when Spark first runs (the CLI's:
        # work done in process starts no JVM).
        context = Context.of(spark, time_zone=time_zone, ansi=ansi)
        self.name: str | None = None  # the catalog name it was opened by, if any
        if is_table_name(uri):
            assert isinstance(uri, str)
            session = context.started()  # a name is the catalog's: its session decides
            # In the settings of the session started for it (held), or of the active one.
            context = Context.of(context.spark, time_zone=time_zone, ansi=ansi)
            found = lookup(session, uri)
            if found is None:
                raise TableNotFoundError(
                    f"the session's catalog has no table named {uri} (and no directory of "
                    "that name exists): zorder.write(df, name) creates one; for a path, "
                    f"write ./{uri}"
                )
            self.name, uri = uri, found.location
        self.context = context.at(uri, storage_options)
        self._held = None
        self._made = None

    @property
    def storage(self) -> Storage:
        """Where the table lives and how to reach it."""
        return self.context.table_storage

    @property
    def spark(self) -> SparkSession | None:
        """The handle's session: given, active when opened, or started since (None: none)."""
        return self.context.spark

    @property
    def time_zone(self) -> str:
        """The zone zone-less timestamps are read in."""
        return self.context.time_zone

    @property
    def ansi(self) -> bool:
        """Whether filters mean what they mean with ANSI mode on."""
        return self.context.ansi

    @property
    def uri(self) -> str:
        """The normalized location (see :func:`zorder.table.normalize_uri`)."""
        return self.storage.uri

    @property
    def storage_options(self) -> Mapping[str, str]:
        """The options that reach the table: the given ones over the session's (read only:
        the handle's filesystem was made with them)."""
        return MappingProxyType(dict(self.storage.options))

    def __repr__(self) -> str:
        return f"Table({self.uri!r})"

    @property
    def version(self) -> int:
        """The version the handle holds (the newest when it was opened or refreshed)."""
        return self._snapshot().version

    def refresh(self) -> Table:
        """Move the handle to the table's newest version (one read of the log); returns it."""
        self._held, self._made = self._load(), None
        return self

    def history(self, *, limit: int | None = None) -> tuple[Commit, ...]:
        """The commits the log still holds up to the handle's version, newest first: version,
        time, operation, and the zorder run a commit added."""
        return history(self.storage, limit=limit, up_to=self._snapshot().version)

    def snapshot(self, *, version: int | None = None, timestamp: AsOf | None = None) -> Snapshot:
        """The version the handle holds, or ``version``, or the newest committed at or before
        ``timestamp`` (a datetime, a date or ISO-8601 text, zone-less ones read in the
        handle's zone), as Delta's ``versionAsOf`` and ``timestampAsOf``; from the log
        alone (another version than the one held is read for this call).

        A version the log no longer (or not yet) holds raises
        :class:`~zorder.errors.VersionNotFoundError` naming those it holds.
        """
        held = self._snapshot() if version is None and timestamp is None else self._held
        if held is not None and timestamp is None and version in (None, held.version):
            return Snapshot(self, held)
        return Snapshot(self, self._load(version=version, timestamp=timestamp))

    def scan(
        self,
        where: Where = None,
        *,
        columns: Sequence[str] | None = None,
        version: int | None = None,
        timestamp: AsOf | None = None,
    ) -> Scan:
        """The files that may hold rows matching ``where`` (Spark SQL text or a PySpark
        Column; on Spark Connect a Column skips no file), in the handle's zone.

        ``columns`` picks and orders the columns (default: all, in the table's
        order); ``version`` or ``timestamp`` as for :meth:`snapshot`.
        """
        return self.snapshot(version=version, timestamp=timestamp).scan(where, columns=columns)

    def read(
        self,
        where: Where = None,
        *,
        columns: Sequence[str] | None = None,
        version: int | None = None,
        timestamp: AsOf | None = None,
    ) -> DataFrame:
        """The matching rows as a Spark DataFrame; only files that may match are read.

        The full filter is applied to the rows, in the session's zone (see the
        module's note on zones).
        """
        planned = self.scan(where, columns=columns, version=version, timestamp=timestamp)
        return planned.to_spark(self._session("read"))

    def describe(
        self,
        *,
        columns: Sequence[str] | None = None,
        version: int | None = None,
        timestamp: AsOf | None = None,
    ) -> TableDescription:
        """Spec, file size target, runs and files, from the log alone (no data file is
        read, no JVM started).

        Every file comes with its rows, size, run and the bounds of ``columns``
        (default: the clustering columns, else the first four columns with
        statistics). Runs are listed per partition; files no run of the
        table's spec wrote are the unclustered part.
        """
        return self.snapshot(version=version, timestamp=timestamp).describe(columns=columns)

    def stats(
        self,
        *,
        columns: Sequence[str] | None = None,
        version: int | None = None,
        timestamp: AsOf | None = None,
    ) -> tuple[FileDescription, ...]:
        """Every file with its run, rows and the bounds of ``columns``."""
        return self.describe(columns=columns, version=version, timestamp=timestamp).files

    def vacuum(
        self, *, retain_hours: float | None = None, dry_run: bool = True, force: bool = False
    ) -> VacuumResult:
        """List (``dry_run``, the default) or delete the files no version within the
        retention uses.

        Unused: removed by a commit older than ``retain_hours``, or never
        committed at all (the files of a run that died before its commit) and
        older than ``retain_hours``. Without ``retain_hours`` the table's own
        ``delta.deletedFileRetentionDuration`` applies (one week when it sets
        none). A retention below the table's own (a week when it sets none) is
        refused unless ``force``, as in Delta's VACUUM, because older
        versions' readers may still need the files. The handle is refreshed first:
        what is unused is decided on the newest version.
        """
        check_retain_hours(retain_hours)
        # Deleting from an older version's view could delete files a newer one added.
        return vacuum_snapshot(
            self.refresh()._snapshot(),
            retain_hours=retain_hours,
            dry_run=dry_run,
            force=force,
        )

    def restore(
        self, *, version: int | None = None, timestamp: AsOf | None = None
    ) -> RestoreResult:
        """Make the table what version ``version``, or the newest committed at or before
        ``timestamp`` (as for :meth:`snapshot`), was: undo, in one new commit.

        Exactly one of the two. The commit adds the version's files that are not
        live now and removes the live ones it lacks, deletion vectors with them
        (no data file is written), and brings back the version's schema,
        partition columns and properties: the clustering spec and
        ``delta.targetFileSize`` it recorded with them. A version whose files a
        vacuum deleted, data files or deletion vectors' files, is refused by name
        (:class:`~zorder.errors.MissingFilesError`) before anything is committed;
        so is a restore that would remove files of an append-only table. A table
        that already is what the version was gets no commit (``version`` None).
        Made on the newest version: a commit made meanwhile fails it with
        :class:`~zorder.errors.ConcurrentCommitError`, and nothing is committed.
        The handle then holds the new version.

        As Delta's RESTORE, it takes back no writer's ``txn``: an idempotent
        writer's batches committed after the version restored stay recorded,
        and are not written again when replayed.
        """
        check_restore_target(version, timestamp)
        current = self._newest_for_commit()
        if current is None:
            raise not_a_table(self.storage, then="; nothing to restore")
        if version == current.version:
            target = current
        else:
            target = self._load(version=version, timestamp=timestamp)
        result = restore_snapshot(current, target)
        if result.version is not None:
            self._made = result.version
        return result

    def optimize(
        self,
        *,
        by: Sequence[str] | ClusteringSpec | None = None,
        curve: Curve | None = None,
        num_files: int | None = None,
        target_file_size: int | str | None = None,
        set_target_size: bool = False,
        method: KeyMethod | None = None,
        sample_size: int | None = None,
        where: str | None = None,
        full: bool = False,
        fanout: int = DEFAULT_FANOUT,
        bloom_filters: BloomFilters | None = None,
        engine: Engine = "auto",
        progress: bool = False,
    ) -> ClusterMetrics:
        """Cluster what needs it, in one commit, in this process or in Spark (``spark``, else
        the active session).

        Without ``by`` the table's recorded spec is used; a ``by`` (or ``curve``,
        ``method``) that differs from it is recorded as the new spec, and every
        file is then reclustered. Neither a recorded spec nor ``by`` is an error.

        **Incremental** (the default): files no zorder run of the current spec
        wrote (blind appends by other writers, an older layout) are clustered,
        together with the small runs, into one new run; large runs are left
        alone. Runs are tiered by size, ``fanout`` runs of a tier merging into
        one of the next (see :mod:`zorder.table.tiering`), so each byte is
        rewritten about log_fanout(growth) times and a partition holds fewer than
        ``fanout`` runs of each tier. Nothing to do means no commit (the metrics
        report 0 files and ``version=None``). ``full=True`` reclusters every file
        of the chosen partitions into one run.

        On a partitioned table each partition has its own runs and is clustered
        on its own. ``where`` (SQL over partition columns only, as Delta's
        ``OPTIMIZE ... WHERE``) chooses the partitions; files of the others are
        neither read nor rewritten. ``num_files`` is the total over the files
        written, shared by their partitions' rows (one file each at least);
        otherwise files are sized by ``target_file_size``, else the table's
        ``delta.targetFileSize``, else 128 MB, which the table then records.
        ``num_files`` and ``target_file_size`` size this run only; with
        ``set_target_size=True`` this run's size (``target_file_size``, or the mean
        size of the ``num_files`` written) becomes the table's
        ``delta.targetFileSize``, which later runs follow.

        The new files are added and the files rewritten are removed in a single
        transaction with ``dataChange = false``, checked against anything
        committed meanwhile: files appended by others are kept (the next optimize
        clusters them), and a concurrent removal of a file read here makes the
        commit fail with :class:`~zorder.errors.ConcurrentCommitError`, leaving
        the table as the other writer left it. ``progress=True`` shows a status
        line (running tasks, seconds) in the terminal or notebook meanwhile.

        ``bloom_filters`` names columns whose files get Parquet bloom filters
        (as in :meth:`write`); a list other than the table's is a new spec, and
        every file is rewritten to carry it.

        ``engine`` chooses who rewrites the files: ``"auto"`` (the default) this process
        (pyarrow, no JVM, no session needed) for work within the in-process bounds (4M
        rows, 256 MiB, 1,000 files read), else Spark; ``"spark"`` always Spark;
        ``"arrow"`` always this process, refusing work outside the bounds. Both write the
        same files from the same rows (:mod:`zorder.arrow.engine`); the result's
        ``engine`` and ``engine_reason`` say which ran and why.
        """
        from zorder.api.cluster import optimize_table
        from zorder.plan.jobs import ClusterOptions, OptimizeRequest

        asked = ClusterOptions(
            by=by,
            curve=curve,
            num_files=num_files,
            target_file_size=target_file_size,
            set_target_size=set_target_size,
            method=method,
            sample_size=sample_size,
            bloom_filters=bloom_filters,
        )
        newest = self._newest_for_commit()
        if newest is None:
            raise not_a_table(self.storage, then="; nothing to optimize")
        request = OptimizeRequest(
            storage=self.storage,
            snapshot=newest,
            asked=asked,
            where=where,
            full=full,
            fanout=fanout,
        )
        metrics = optimize_table(request, run=self._run_with(engine, progress))
        return self._committed(metrics)

    def write(
        self,
        df: DataFrame | str | os.PathLike[str],
        *,
        by: Sequence[str] | ClusteringSpec | None = None,
        mode: WriteMode = "error",
        curve: Curve | None = None,
        num_files: int | None = None,
        target_file_size: int | str | None = None,
        set_target_size: bool = False,
        method: KeyMethod | None = None,
        sample_size: int | None = None,
        partition_by: Sequence[str] | None = None,
        txn_app_id: str | None = None,
        txn_version: int | None = None,
        bloom_filters: BloomFilters | None = None,
        format: InputFormat | None = None,
        engine: Engine = "auto",
        progress: bool = False,
        schema_mode: SchemaMode | None = None,
    ) -> ClusterMetrics:
        """Cluster ``df`` by the columns ``by`` along ``curve`` into this table (created
        if there is none). ``df`` is a DataFrame, or the path of Parquet files, CSV files
        or a Delta table (``format`` says which; None: what is found there).

        The table remembers its clustering: a write that creates (or overwrites)
        a table records ``by``, ``curve`` and ``method`` in its properties, and
        an append without ``by`` clusters its rows by them (cluster on write:
        the rows form a run of their own, which queries skip inside at once).
        What is not given comes from the table's spec, else ``curve="zorder"``,
        ``method="rank"``. An append with another ``by`` clusters its rows by it
        and leaves the table's spec as it is.

        ``partition_by`` makes a new table partitioned by those columns (an append
        uses the table's own; a different list is an error). The rows of each
        partition are clustered on their own: every file holds one partition.
        ``num_files`` is then the total, shared by the partitions' row counts
        (one file each at least), and ``target_file_size`` applies per partition.

        ``mode`` follows Spark's writer: ``"error"`` refuses an existing table,
        ``"append"`` adds files (creating the table if needed), ``"overwrite"``
        replaces every file in the same commit. ``num_files`` is exact (empty
        ranges give no file); otherwise ``target_file_size`` (accepts ``"256MB"``;
        default the table's ``delta.targetFileSize``, else 128 MB) is divided into
        Spark's estimate of the input size. A table without
        ``delta.targetFileSize`` records the size used (for ``num_files``, the
        mean size written). The files are cut at quantiles of a sample of
        ``sample_size`` rows, by default 1,000 a file (at least 20,000, at most
        1,000,000), which keeps file sizes within about 10% of each other up to
        1,000 files. ``progress=True`` shows a status line (running tasks,
        seconds) in the terminal or notebook while Spark works.

        ``txn_app_id`` and ``txn_version`` (both or neither) make the write
        idempotent, as Delta Spark's ``txnAppId`` / ``txnVersion`` options: the
        commit records Delta's ``txn`` action for them, and when the table
        already records ``txn_version`` or a newer one for ``txn_app_id`` (a
        replayed streaming batch, a retried job, a concurrent writer that
        committed it first), nothing is written or committed and the result's
        ``skipped`` is True. Any mode takes them (``"error"`` still refuses an
        existing table). :func:`zorder.foreach_batch` passes a streaming
        query's id and batch id.

        ``bloom_filters`` names columns (any but those clustered by, typically
        ids looked up by equality) whose files carry Parquet bloom filters: a
        list of names, at a 1% false-positive rate, or names mapped to rates
        (``{"session_id": 0.001}``). They are part of the spec the table
        records, so later appends and optimizes write them too; None keeps the
        table's, ``[]`` writes none. Scans probe them for ``=`` and ``IN``
        (:attr:`ScanReport.files_bloom_skipped`); Spark, DuckDB and DataFusion
        read them too. Types: integers, strings, binary, dates, timestamps and
        decimals.

        ``engine``: a DataFrame is written by Spark; a path may be read and written in
        this process (pyarrow, no JVM, no session needed). ``"auto"`` (the default) does
        so for input within the in-process bounds (4M rows, 256 MiB, 1,000 files) that
        it reads as Spark would (Parquet or a Delta table; not CSV, whose types Spark
        infers), else Spark reads it; ``"arrow"`` refuses what it cannot do in process;
        ``"spark"`` always runs Spark. See :meth:`optimize`.

        ``schema_mode="merge"`` lets an append (or overwrite) bring columns the table
        lacks: they are added to the table as nullable columns (under column mapping
        with new ids and physical names) in a commit of their own, made before the
        rows are written (deltalake's append keeps the table's schema), so rows
        written before read them as NULL; a nullable column the rows lack is written
        as NULL. A column whose type differs is refused (type widening), and new
        columns are no clustering columns until a spec names them. The default
        (None) refuses any difference from the table's columns.
        """
        from zorder.api.cluster import write_table
        from zorder.api.sources import WriteSource
        from zorder.plan.jobs import ClusterOptions, WriteRequest
        from zorder.table.delta.transactions import AppTransaction

        transaction = AppTransaction.of(txn_app_id, txn_version)  # checked before any read

        asked = ClusterOptions(
            by=by,
            curve=curve,
            num_files=num_files,
            target_file_size=target_file_size,
            set_target_size=set_target_size,
            method=method,
            sample_size=sample_size,
            bloom_filters=bloom_filters,
            schema_mode=schema_mode,
        )
        source: DataFrame | WriteSource
        if isinstance(df, str | os.PathLike):
            source = WriteSource(os.fspath(df), format, dict(self.storage_options) or None)
        else:
            source = df
        if format is not None and not isinstance(df, str | os.PathLike):
            raise InvalidArgumentError(
                f"format={format!r} reads an input path; a DataFrame carries its own rows"
            )
        newest = self._newest_for_commit()
        request = WriteRequest(
            storage=self.storage,
            snapshot=newest,
            asked=asked,
            mode=mode,
            partition_by=partition_by,
            transaction=transaction,
        )
        metrics = write_table(source, request, run=self._run_with(engine, progress))
        return self._committed(metrics)

    def advise(
        self,
        workload: str | Path | Sequence[str],
        *,
        num_files: int | None = None,
        max_columns: int | None = None,
        sample_size: int | None = None,
        seed: int | None = None,
    ) -> Advice:
        """The layout that lets ``workload`` skip the most rows of the version the handle
        holds; Spark (``spark``, else the active session) samples it. See
        :func:`zorder.advise` for the workload, the options and the result."""
        from zorder.api.advise import AdviceOptions, advise_snapshot

        options = AdviceOptions(
            num_files=num_files, max_columns=max_columns, sample_size=sample_size, seed=seed
        )
        return advise_snapshot(
            self._session("advise, which samples the table with Spark,"),
            self._snapshot(),
            workload,
            options,
            self.context,
        )

    def _run_with(self, engine: Engine, progress: bool) -> RunWith:
        """How a write or an optimize of this handle runs: Spark's session is the handle's,
        started when first needed; filters and partition values read in its zone."""
        from zorder.api.cluster import RunWith

        return RunWith(engine=engine, context=self.context, progress=progress)

    def _session(self, what: str) -> SparkSession:
        return self.context.session(f"Table.{what}")

    def _load(self, *, version: int | None = None, timestamp: AsOf | None = None) -> TableSnapshot:
        """One read of the log: the newest version, or the one asked for."""
        return load_snapshot(
            self.storage, version=version, timestamp=timestamp, time_zone=self.time_zone
        )

    def _snapshot(self) -> TableSnapshot:
        """The version held: the one a commit of this handle made, read now if it was not."""
        if self._made is not None:
            self._held, self._made = self._load(version=self._made), None
        if self._held is None:
            self._held = self._load()  # raises NotADeltaTableError, unless one was made since
        return self._held

    def _newest_for_commit(self) -> TableSnapshot | None:
        """The newest version, held from now on: a commit starts from it (None: no table).

        The version held is the newest when the log has no commit after it (one look for a
        file, :func:`~zorder.table.delta.versions.has_commit_after`): then it is planned on as it
        is, so opening a handle and optimizing reads the log once; else the log is read."""
        from zorder.table.delta.versions import has_commit_after

        self.storage.warn_if_commits_unsafe()
        self.storage.filesystem()  # a configuration pyarrow refuses, refused before Spark runs
        held = self._held
        newest = held is not None and self._made is None
        if held is not None and newest and not has_commit_after(self.storage, held.version):
            return held
        try:
            self._held, self._made = self._load(), None
        except NotADeltaTableError:
            self._held = self._made = None
        return self._held

    def _committed(self, metrics: ClusterMetrics) -> ClusterMetrics:
        """Hold the version ``metrics`` says the commit made (read when next needed)."""
        if metrics.version is not None:
            self._made = metrics.version
        return metrics


@dataclass(frozen=True, eq=False)
class Snapshot:
    """One version of a :class:`Table`, pinned: every scan of it reads that version."""

    table: Table
    table_snapshot: TableSnapshot  # the log's view (zorder.table), as loaded

    @property
    def version(self) -> int:
        return self.table_snapshot.version

    @property
    def files(self) -> tuple[DataFile, ...]:
        return self.table_snapshot.files

    @property
    def total_rows(self) -> int:
        """Live rows: rows deletion vectors delete are not counted."""
        return self.table_snapshot.total_rows

    @property
    def total_bytes(self) -> int:
        return self.table_snapshot.total_bytes

    def scan(self, where: Where = None, *, columns: Sequence[str] | None = None) -> Scan:
        """The files of this version that may hold rows matching ``where`` (see
        :meth:`Table.scan`)."""
        return plan_scan(self.table_snapshot, where, self.table.context, columns=columns)

    def describe(self, *, columns: Sequence[str] | None = None) -> TableDescription:
        """This version's spec, runs and files (see :meth:`Table.describe`)."""
        return describe_snapshot(self.table_snapshot, columns)
