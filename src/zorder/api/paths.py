"""The path-first functions: each makes a :class:`~zorder.api.table.Table` and calls its
method, in one line.

``zorder.scan(path, where, ...)`` is ``Table(path, ...).scan(where, ...)``,
and so on for ``describe``, ``vacuum`` and ``optimize`` (``read``,
``explain`` and ``skipping_effectiveness`` are in :mod:`zorder.api.read`,
``to_arrow`` in :mod:`zorder.api.arrow`, the same way). They live apart
from the modules that hold the work (:mod:`~zorder.api.scanning`,
:mod:`~zorder.api.describe`, :mod:`~zorder.api.vacuum`,
:mod:`~zorder.api.cluster`), which the handle imports.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from zorder.api.describe import TableDescription
from zorder.api.scanning import Scan, Where
from zorder.api.table import Table
from zorder.api.vacuum import VacuumResult
from zorder.table import AsOf
from zorder.table.tiering import DEFAULT_FANOUT

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from zorder.api.cluster import ClusterMetrics
    from zorder.curves.kinds import ClusteringSpec, Curve, KeyMethod

__all__ = ["describe", "optimize", "scan", "vacuum"]


def scan(
    path: str,
    where: Where = None,
    *,
    columns: Sequence[str] | None = None,
    version: int | None = None,
    timestamp: AsOf | None = None,
    time_zone: str | None = None,
    storage_options: Mapping[str, str] | None = None,
    ansi: bool | None = None,
) -> Scan:
    """Plan a read of the table at ``path``: the files that may hold rows matching ``where``.

    ``Table(path, storage_options=..., time_zone=...).scan(where, columns=...,
    version=..., timestamp=...)`` (see :meth:`zorder.Table.scan`). ``where``
    is Spark SQL text or a PySpark Column (resolved with the active session;
    on Spark Connect it skips no file). ``version`` or ``timestamp`` (a
    datetime, a date or ISO-8601 text: the newest version committed at or
    before it) reads an older version, as Delta's ``versionAsOf`` and
    ``timestampAsOf`` do; one the log no longer (or not yet) holds raises
    :class:`~zorder.errors.VersionNotFoundError` naming those it holds.
    Zone-less timestamps, in the filter, in partition values and in
    ``timestamp``, are read in ``time_zone``, else in the active Spark
    session's zone, else in UTC. ``columns`` picks and orders the columns
    (default: all, in the table's order). ``ansi`` gives the filter the meaning
    of a session with ANSI mode on or off, else the active session's mode, else on.
    """
    return Table(path, storage_options=storage_options, time_zone=time_zone, ansi=ansi).scan(
        where, columns=columns, version=version, timestamp=timestamp
    )


def describe(
    path: str,
    *,
    columns: Sequence[str] | None = None,
    version: int | None = None,
    timestamp: AsOf | None = None,
    time_zone: str | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> TableDescription:
    """The table at ``path``: its clustering spec, file size target, runs and files.

    ``Table(path, storage_options=..., time_zone=...).describe(columns=...,
    version=..., timestamp=...)`` (see :meth:`zorder.Table.describe`): only the
    log is read, never a data file, and no JVM is started. A zone-less
    ``timestamp`` is read in ``time_zone``, else in the active Spark session's
    zone, else in UTC.
    """
    return Table(path, storage_options=storage_options, time_zone=time_zone).describe(
        columns=columns, version=version, timestamp=timestamp
    )


def vacuum(
    path: str,
    *,
    retain_hours: float | None = None,
    dry_run: bool = True,
    force: bool = False,
    storage_options: Mapping[str, str] | None = None,
) -> VacuumResult:
    """List (``dry_run``, the default) or delete files of the table at ``path`` that are unused.

    ``Table(path, storage_options=...).vacuum(retain_hours=..., dry_run=...,
    force=...)``; see :meth:`zorder.Table.vacuum` for what counts as unused
    and which retention applies.
    """
    return Table(path, storage_options=storage_options).vacuum(
        retain_hours=retain_hours, dry_run=dry_run, force=force
    )


def optimize(
    spark: SparkSession,
    path: str,
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
    storage_options: Mapping[str, str] | None = None,
    progress: bool = False,
) -> ClusterMetrics:
    """Cluster what needs it in the Delta table at ``path``, in one commit.

    ``Table(path, storage_options=..., spark=spark).optimize(...)`` with the
    same keywords (see :meth:`zorder.Table.optimize`).
    """
    return Table(path, storage_options=storage_options, spark=spark).optimize(
        by=by,
        curve=curve,
        num_files=num_files,
        target_file_size=target_file_size,
        method=method,
        sample_size=sample_size,
        where=where,
        full=full,
        fanout=fanout,
        progress=progress,
    )
