"""The path-first functions: each makes a :class:`~zorder.api.table.Table` and calls its
method, in one line.

``zorder.scan(path, where, ...)`` is ``Table(path, ...).scan(where, ...)``,
and so on for ``describe``, ``vacuum``, ``restore``, ``optimize``, ``write``
and ``advise`` (``read``, ``explain`` and ``skipping_effectiveness`` are in
:mod:`zorder.api.read`, ``to_arrow`` in :mod:`zorder.api.arrow`, the same
way). They live apart from the modules that hold the work
(:mod:`~zorder.api.scanning`, :mod:`~zorder.api.describe`,
:mod:`~zorder.api.vacuum`, :mod:`~zorder.api.restore`,
:mod:`~zorder.api.cluster`), which the handle imports.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from zorder.api.catalog import is_table_name, lookup, new_table_location, register
from zorder.api.describe import TableDescription
from zorder.api.restore import RestoreResult
from zorder.api.scanning import Scan, Where
from zorder.api.table import Table
from zorder.api.vacuum import VacuumResult
from zorder.errors import InvalidArgumentError, InvalidArgumentTypeError
from zorder.plan.modes import Engine, InputFormat, SchemaMode, WriteMode
from zorder.spark.settings import active_session
from zorder.table import AsOf
from zorder.table.tiering import DEFAULT_FANOUT

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from zorder.advice.advisor import Advice
    from zorder.api.cluster import ClusterMetrics
    from zorder.curves.kinds import BloomFilters, ClusteringSpec, Curve, KeyMethod

__all__ = ["advise", "describe", "optimize", "restore", "scan", "vacuum", "write"]


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
    spark: SparkSession | None = None,
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
    ``spark`` (else the active session) resolves a Column filter or a catalog name and
    gives the default zone and ANSI mode.
    """
    opened = Table(
        path,
        storage_options=storage_options,
        spark=spark,
        time_zone=time_zone,
        ansi=ansi,
        version=version,
        timestamp=timestamp,
    )
    return opened.scan(where, columns=columns)


def describe(
    path: str,
    *,
    columns: Sequence[str] | None = None,
    version: int | None = None,
    timestamp: AsOf | None = None,
    time_zone: str | None = None,
    storage_options: Mapping[str, str] | None = None,
    spark: SparkSession | None = None,
) -> TableDescription:
    """The table at ``path``: its clustering spec, file size target, runs and files.

    ``Table(path, storage_options=..., time_zone=...).describe(columns=...,
    version=..., timestamp=...)`` (see :meth:`zorder.Table.describe`): only the
    log is read, never a data file, and no JVM is started. A zone-less
    ``timestamp`` is read in ``time_zone``, else in the active Spark session's
    zone, else in UTC. ``spark`` (else the active session) resolves a catalog name.
    """
    opened = Table(
        path,
        storage_options=storage_options,
        spark=spark,
        time_zone=time_zone,
        version=version,
        timestamp=timestamp,
    )
    return opened.describe(columns=columns)


def vacuum(
    path: str,
    *,
    retain_hours: float | None = None,
    dry_run: bool = True,
    force: bool = False,
    storage_options: Mapping[str, str] | None = None,
    spark: SparkSession | None = None,
) -> VacuumResult:
    """List (``dry_run``, the default) or delete files of the table at ``path`` that are unused.

    ``Table(path, storage_options=...).vacuum(retain_hours=..., dry_run=...,
    force=...)``; see :meth:`zorder.Table.vacuum` for what counts as unused
    and which retention applies. ``spark`` (else the active session) resolves a catalog
    name; nothing runs in Spark.
    """
    return Table._unread(path, storage_options=storage_options, spark=spark).vacuum(
        retain_hours=retain_hours, dry_run=dry_run, force=force
    )


def restore(
    path: str,
    *,
    version: int | None = None,
    timestamp: AsOf | None = None,
    time_zone: str | None = None,
    storage_options: Mapping[str, str] | None = None,
    spark: SparkSession | None = None,
) -> RestoreResult:
    """Make the table at ``path`` what its version ``version``, or the newest committed at
    or before ``timestamp``, was, in one new commit (exactly one of the two).

    ``Table(path, storage_options=..., time_zone=...).restore(version=...,
    timestamp=...)``; see :meth:`zorder.Table.restore`. No JVM is started. A
    zone-less ``timestamp`` is read in ``time_zone``, else in the active Spark
    session's zone, else in UTC. ``spark`` (else the active session) resolves a catalog
    name and gives the default zone; nothing runs in Spark.
    """
    table = Table._unread(path, storage_options=storage_options, spark=spark, time_zone=time_zone)
    return table.restore(version=version, timestamp=timestamp)


def optimize(
    spark: SparkSession | Callable[[], SparkSession] | None,
    path: str,
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
    storage_options: Mapping[str, str] | None = None,
    progress: bool = False,
) -> ClusterMetrics:
    """Cluster what needs it in the Delta table at ``path``, in one commit.

    ``Table(path, storage_options=..., spark=spark).optimize(...)`` with the
    same keywords (see :meth:`zorder.Table.optimize`). ``spark`` may be None (the
    active session, if any: work done in process needs none) or a function that
    starts a session, called only when Spark runs.
    """
    return Table._unread(path, storage_options=storage_options, spark=spark).optimize(
        by=by,
        curve=curve,
        num_files=num_files,
        target_file_size=target_file_size,
        set_target_size=set_target_size,
        method=method,
        sample_size=sample_size,
        where=where,
        full=full,
        fanout=fanout,
        bloom_filters=bloom_filters,
        engine=engine,
        progress=progress,
    )


def write(
    df: DataFrame | str | os.PathLike[str],
    path: str | Table,
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
    spark: SparkSession | Callable[[], SparkSession] | None = None,
    storage_options: Mapping[str, str] | None = None,
    progress: bool = False,
    schema_mode: SchemaMode | None = None,
    location: str | None = None,
) -> ClusterMetrics:
    """Cluster ``df`` by the columns ``by`` along ``curve`` into the Delta table at ``path``
    (a location, a table name in the session's catalog, or a :class:`~zorder.Table`).

    A name the catalog does not know yet creates the table there (the session needs
    Delta's catalog): its files go to ``location`` when given, else where the catalog
    puts a managed table of that name, and the table is registered with ``CREATE TABLE
    name USING delta LOCATION``, so the catalog lists it as an external table. ``location``
    is for new names only.

    ``df`` is a DataFrame, or the path of Parquet files, CSV files or a Delta table
    (``format`` says which; None: what is found there), which ``engine`` may read and
    write in this process: ``"auto"`` (the default) does so within the in-process bounds,
    else Spark (``spark``, a function that starts a session, else the active session)
    reads it (see :meth:`zorder.Table.write`).

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
    idempotent, as Delta Spark's ``txnAppId`` / ``txnVersion``: when the table
    already records that version or a newer one for the app id, nothing is
    written or committed and the result's ``skipped`` is True (see
    :meth:`zorder.Table.write`, and :func:`zorder.foreach_batch` for streams).

    ``schema_mode="merge"`` adds the columns the rows bring to the table first, as
    nullable columns, and writes a nullable column they lack as NULL (see
    :meth:`zorder.Table.write`); the default refuses any difference.

    ``Table(path, storage_options=..., spark=df.sparkSession).write(df, ...)``
    (see :meth:`zorder.Table.write`); a :class:`~zorder.Table` given as
    ``path`` writes through that handle, with its own storage options.
    """
    if isinstance(path, Table):
        if storage_options is not None:
            raise InvalidArgumentError(
                f"storage_options were given with the handle {path!r}, which carries its own; "
                "open Table(location, storage_options=...) instead"
            )
        table = path
        created = None
    else:
        session = spark if isinstance(df, str | os.PathLike) else df.sparkSession
        resolved = _catalog_target(session, path, location)
        target = path if resolved is None else resolved[0]
        created = resolved if resolved is not None and resolved[2] else None
        table = Table._unread(target, storage_options=storage_options, spark=session)
    result = table.write(
        df,
        by=by,
        mode=mode,
        curve=curve,
        num_files=num_files,
        target_file_size=target_file_size,
        set_target_size=set_target_size,
        method=method,
        sample_size=sample_size,
        partition_by=partition_by,
        txn_app_id=txn_app_id,
        txn_version=txn_version,
        bloom_filters=bloom_filters,
        format=format,
        engine=engine,
        progress=progress,
        schema_mode=schema_mode,
    )
    if created is not None and not result.skipped:
        register(created[1], str(path), created[0])
    return result


def _catalog_target(
    spark: SparkSession | Callable[[], SparkSession] | None,
    path: str | os.PathLike[str],
    location: str | None,
) -> tuple[str, SparkSession, bool] | None:
    """For a write to a table name: the location to write, the session, and whether the
    table is new (the write then registers it); None where ``path`` is a path. Looked up
    once, and refused before anything is written."""
    if not is_table_name(path):
        if location is not None:
            raise InvalidArgumentError(
                f"location= is for a new table given by name; {os.fspath(path)!r} is a path "
                "already (leave location out)"
            )
        return None
    session = spark() if callable(spark) else spark
    session = session or active_session(None)
    found = lookup(session, str(path))
    assert session is not None  # lookup refuses without one
    if found is not None:
        if location is not None:
            raise InvalidArgumentError(
                f"table {path} exists in the session's catalog; location= is for new ones"
            )
        return found.location, session, False
    return new_table_location(session, str(path), location), session, True


def advise(
    source: str | DataFrame,
    workload: str | Path | Sequence[str],
    *,
    spark: SparkSession | None = None,
    num_files: int | None = None,
    max_columns: int | None = None,
    sample_size: int | None = None,
    seed: int | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> Advice:
    """The layout that lets ``workload`` skip the most rows of ``source``.

    ``source`` is a Delta table's path or a DataFrame; ``workload`` a sequence
    of SQL filters or queries (the ``WHERE`` conjuncts on the table's columns
    are taken, see :mod:`zorder.advice.workload`), or a path to a ``.sql``
    file of ``;``-separated statements. ``num_files`` is the file count to
    plan for (default: what a write or optimize of the data would make with
    the table's ``delta.targetFileSize``, else 128 MB a file); ``max_columns``
    caps the clustering columns (default 8). ``sample_size`` rows are sampled
    (default 1,000 a file, at least 100,000, more than a write samples).

    Returns :class:`Advice`: ``spec`` (pass it as ``by=``; it names bloom
    filters on columns the workload looks up by equality where they pay, see
    :mod:`zorder.advice.blooms`), ``expected_scanned`` (the mean fraction of
    rows the workload would scan, with those filters; ``scanned_without_blooms``
    without them), ``blooms`` (each lookup column's figures), the
    ``candidates`` compared and ``summary()``.

    A path is ``Table(path, storage_options=..., spark=spark).advise(workload,
    ...)`` (see :meth:`zorder.Table.advise`); ``source`` comes first because it
    may be a DataFrame, which brings its own session.
    """
    from pyspark.sql import DataFrame

    from zorder.api.advise import AdviceOptions, advise_frame

    if isinstance(source, str):
        return Table(source, storage_options=storage_options, spark=spark).advise(
            workload,
            num_files=num_files,
            max_columns=max_columns,
            sample_size=sample_size,
            seed=seed,
        )
    options = AdviceOptions(
        num_files=num_files, max_columns=max_columns, sample_size=sample_size, seed=seed
    )
    if isinstance(source, DataFrame):
        return advise_frame(source, workload, options)
    raise InvalidArgumentTypeError(
        f"source must be a Delta table path or a DataFrame, got {type(source).__name__}"
    )
