"""``Table``: one handle per Delta table, deciding once where it lives and how to reach it.

The location is normalized, the storage options resolved (given ones over
the Spark session's object-store settings, see
:func:`~zorder.api.scanning.table_storage`) into one
:class:`~zorder.table.Storage`, and the zone zone-less timestamps are read in
chosen, when the handle is made; every method then works on that. The
path-first functions (:func:`zorder.scan`, :func:`zorder.read`,
:func:`zorder.describe`, ...) are one-line wrappers that make a handle and
call its method.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from zorder.api.describe import FileDescription, TableDescription, describe_snapshot
from zorder.api.scanning import (
    Scan,
    Where,
    plan_scan,
    required_session,
    session_ansi,
    session_time_zone,
    table_storage,
)
from zorder.api.vacuum import VacuumResult, check_retain_hours, vacuum_snapshot
from zorder.errors import InvalidArgumentError, InvalidArgumentTypeError
from zorder.table import (
    AsOf,
    Commit,
    DataFile,
    TableSnapshot,
    history,
    load_snapshot,
)
from zorder.table.tiering import DEFAULT_FANOUT

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from zorder.api.cluster import ClusterMetrics
    from zorder.curves.kinds import ClusteringSpec, Curve, KeyMethod

__all__ = ["Commit", "Snapshot", "Table"]


class Table:
    """The Delta table at ``uri``: ``storage_options`` (else the session's settings, else the
    environment) reach it; ``spark`` (else the active session, if any) resolves Column
    filters, gives the zone zone-less timestamps are read in (``time_zone`` overrides it)
    and whether filters have the meaning of ANSI mode on or off (``ansi`` overrides it;
    without a session, on: Spark 4.x's default), and runs :meth:`optimize` and
    :meth:`read`."""

    def __init__(
        self,
        uri: str | os.PathLike[str],
        *,
        storage_options: Mapping[str, str] | None = None,
        spark: SparkSession | None = None,
        time_zone: str | None = None,
        ansi: bool | None = None,
    ) -> None:
        if not isinstance(uri, str | os.PathLike) or not os.fspath(uri):
            raise InvalidArgumentError(
                f"a table's location must be a non-empty string, got {uri!r}"
            )
        self.spark = spark
        self.storage = table_storage(uri, storage_options, spark)
        self.time_zone = time_zone if time_zone is not None else session_time_zone(spark)
        if ansi is not None and not isinstance(ansi, bool):
            raise InvalidArgumentTypeError(f"ansi must be True, False or None, got {ansi!r}")
        self.ansi = ansi if ansi is not None else session_ansi(spark)

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
        """The newest version."""
        return self.snapshot().version

    def history(self, *, limit: int | None = None) -> tuple[Commit, ...]:
        """The commits the log still holds, newest first: version, time, operation, and
        the zorder run a commit added."""
        return history(self.storage, limit=limit)

    def snapshot(self, *, version: int | None = None, timestamp: AsOf | None = None) -> Snapshot:
        """One version, from the log alone: the newest, or ``version``, or the newest
        committed at or before ``timestamp`` (a datetime, a date or ISO-8601 text, zone-less
        ones read in the handle's zone), as Delta's ``versionAsOf`` and ``timestampAsOf``.

        A version the log no longer (or not yet) holds raises
        :class:`~zorder.errors.VersionNotFoundError` naming those it holds.
        """
        loaded = load_snapshot(
            self.storage, version=version, timestamp=timestamp, time_zone=self.time_zone
        )
        return Snapshot(self, loaded)

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
        versions' readers may still need the files.
        """
        check_retain_hours(retain_hours)
        return vacuum_snapshot(
            self.snapshot().table_snapshot,
            retain_hours=retain_hours,
            dry_run=dry_run,
            force=force,
        )

    def optimize(
        self,
        *,
        by: Sequence[str] | ClusteringSpec | None = None,
        curve: Curve | None = None,
        num_files: int | None = None,
        target_file_size: int | str | None = None,
        method: KeyMethod | None = None,
        sample_size: int | None = None,
        where: str | None = None,
        full: bool = False,
        fanout: int = DEFAULT_FANOUT,
        progress: bool = False,
    ) -> ClusterMetrics:
        """Cluster what needs it, in one commit; ``spark`` (else the active session) runs it.

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

        The new files are added and the files rewritten are removed in a single
        transaction with ``dataChange = false``, checked against anything
        committed meanwhile: files appended by others are kept (the next optimize
        clusters them), and a concurrent removal of a file read here makes the
        commit fail with :class:`~zorder.errors.ConcurrentCommitError`, leaving
        the table as the other writer left it. ``progress=True`` shows a status
        line (running tasks, seconds) in the terminal or notebook meanwhile.
        """
        from zorder.api.cluster import optimize_table
        from zorder.api.jobs import ClusterOptions

        asked = ClusterOptions(
            by=by,
            curve=curve,
            num_files=num_files,
            target_file_size=target_file_size,
            method=method,
            sample_size=sample_size,
        )
        return optimize_table(
            self._session("optimize"),
            self.storage,
            asked,
            where=where,
            full=full,
            fanout=fanout,
            progress=progress,
        )

    def _session(self, what: str) -> SparkSession:
        return required_session(self.spark, f"Table.{what}")


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
        return plan_scan(
            self.table_snapshot,
            where,
            spark=self.table.spark,
            time_zone=self.table.time_zone,
            columns=columns,
            ansi=self.table.ansi,
        )

    def describe(self, *, columns: Sequence[str] | None = None) -> TableDescription:
        """This version's spec, runs and files (see :meth:`Table.describe`)."""
        return describe_snapshot(self.table_snapshot, columns)
