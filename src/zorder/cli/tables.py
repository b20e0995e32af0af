"""The commands on a table: write, optimize, advise, describe, vacuum, restore, query, stats.

Each turns its arguments into one call of the public API and hands the frozen
result to its :class:`~zorder.cli.output.Output` with the renderer of
:mod:`zorder.cli.render` that draws it; none holds logic of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

import zorder
from zorder.api.catalog import is_table_name
from zorder.api.modes import InputFormat, WriteMode
from zorder.cli import render
from zorder.cli.command import (
    AnsiOption,
    AsOfOption,
    BloomOption,
    ByOption,
    ConfOption,
    CurveOption,
    EngineOption,
    JsonOption,
    MasterOption,
    MethodOption,
    NumFilesOption,
    RemoteOption,
    SchemaModeOption,
    SetTargetOption,
    StorageOption,
    TargetSizeOption,
    VersionOption,
    bloom_list,
    column_list,
    command,
)
from zorder.cli.output import Output
from zorder.cli.rows import in_zone
from zorder.cli.spark import SessionView, session
from zorder.curves.kinds import ClusteringSpec
from zorder.errors import InvalidArgumentError
from zorder.sizes import MAX_FILES
from zorder.table import MIN_VACUUM_RETENTION_HOURS, parse_storage_options
from zorder.table.retention import DEFAULT_RETENTION_HOURS, RETENTION_PROPERTY
from zorder.table.tiering import DEFAULT_FANOUT

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@command
def write(
    out: Output,
    source: Annotated[str, typer.Argument(help="Input path (Parquet, CSV or Delta).")],
    dest: Annotated[str, typer.Argument(help="Delta table to write.")],
    by: ByOption = None,
    source_format: Annotated[
        InputFormat | None,
        typer.Option(
            "--format",
            help="Format of SOURCE (default: what it holds: a Delta log, .csv files, else "
            "Parquet).",
        ),
    ] = None,
    curve: CurveOption = None,
    num_files: NumFilesOption = None,
    target_file_size: TargetSizeOption = None,
    set_target_size: SetTargetOption = False,
    mode: Annotated[WriteMode, typer.Option(help="If DEST exists: error, append, overwrite.")] = (
        "error"
    ),
    method: MethodOption = None,
    partition_by: Annotated[
        str | None,
        typer.Option(help="Partition columns of a new table, comma-separated (e.g. day)."),
    ] = None,
    txn_app_id: Annotated[
        str | None,
        typer.Option(
            help="Make the write idempotent: the writer's id, recorded with --txn-version "
            "(Delta's txn action)."
        ),
    ] = None,
    txn_version: Annotated[
        int | None,
        typer.Option(
            help="This write's number for --txn-app-id: if DEST records it or a newer one, "
            "nothing is written."
        ),
    ] = None,
    bloom_filters: BloomOption = None,
    schema_mode: SchemaModeOption = None,
    engine: EngineOption = "auto",
    storage_option: StorageOption = None,
    master: MasterOption = "local[*]",
    remote: RemoteOption = None,
    conf: ConfOption = None,
    as_json: JsonOption = False,
) -> None:
    """Cluster SOURCE into the Delta table DEST (each partition on its own).

    An append without --by clusters the rows by the table's recorded spec. With
    --txn-app-id and --txn-version, running the same write again adds nothing.

    Small work runs in this process without starting Spark (--engine auto): Parquet or a
    Delta table within the in-process bounds.
    """
    options = parse_storage_options(storage_option or [])
    table = _handle(out, dest, options, (master, remote, conf), create=True)
    with out.working(f"Clustering {source} into {dest}...", None):
        metrics = table.write(
            source,
            by=column_list(by) if by else None,
            mode=mode,
            curve=curve,
            num_files=num_files,
            target_file_size=target_file_size,
            set_target_size=set_target_size,
            method=method,
            partition_by=column_list(partition_by) if partition_by else None,
            txn_app_id=txn_app_id,
            txn_version=txn_version,
            bloom_filters=bloom_list(bloom_filters),
            format=source_format,
            engine=engine,
            schema_mode=schema_mode,
        )
    out.result(metrics, render.metrics)


@command
def optimize(
    out: Output,
    path: Annotated[str, typer.Argument(help="Delta table to cluster.")],
    by: ByOption = None,
    curve: CurveOption = None,
    num_files: NumFilesOption = None,
    target_file_size: TargetSizeOption = None,
    set_target_size: SetTargetOption = False,
    method: MethodOption = None,
    where: Annotated[
        str | None,
        typer.Option(help="Partitions to optimize, SQL over partition columns only."),
    ] = None,
    full: Annotated[
        bool, typer.Option(help="Recluster every file into one run, not only what needs it.")
    ] = False,
    fanout: Annotated[
        int, typer.Option(min=2, help="Runs of a size tier merged into one (incremental).")
    ] = DEFAULT_FANOUT,
    by_advice: Annotated[
        Path | None,
        typer.Option(
            "--by-advice",
            help="Cluster by the spec `zorder advise` chooses for this workload (.sql file).",
        ),
    ] = None,
    bloom_filters: BloomOption = None,
    engine: EngineOption = "auto",
    storage_option: StorageOption = None,
    master: MasterOption = "local[*]",
    remote: RemoteOption = None,
    conf: ConfOption = None,
    as_json: JsonOption = False,
) -> None:
    """Cluster what needs it in the Delta table at PATH (or everything, --full), in one commit.

    Without --by the table's recorded spec is used; a new --by (or --by-advice) is recorded
    and reclusters all. Small work runs in this process without starting Spark (--engine
    auto).
    """
    if by_advice is not None and (by or curve or method):
        raise InvalidArgumentError(
            "--by-advice chooses the columns, curve and method; drop --by, --curve and --method"
        )
    options = parse_storage_options(storage_option or [])
    chosen: list[str] | ClusteringSpec | None = column_list(by) if by else None
    spark: SparkSession | None = None
    if by_advice is not None:
        spark = session(out, master, conf, remote)
        with out.working(f"Advising {path} for {by_advice}...", spark):
            chosen = zorder.advise(
                path, by_advice, spark=spark, num_files=num_files, storage_options=options
            ).spec
    table = _handle(out, path, options, (master, remote, conf), spark)
    with out.working(f"Optimizing {path}...", spark):
        metrics = table.optimize(
            by=chosen,
            curve=curve,
            num_files=num_files,
            target_file_size=target_file_size,
            set_target_size=set_target_size,
            method=method,
            where=where,
            full=full,
            fanout=fanout,
            bloom_filters=bloom_list(bloom_filters),
            engine=engine,
        )
    out.result(metrics, render.metrics)


def _handle(
    out: Output,
    path: str,
    options: dict[str, str],
    spark_options: tuple[str, str | None, list[str] | None],
    spark: SparkSession | None = None,
    *,
    create: bool = False,
) -> zorder.Table:
    """The table at ``path`` as the command writes it (``create``: or makes it): Spark
    (``spark``, else one started on ``--master``/``--remote`` with ``--conf``) only when
    Spark runs; the storage options, zone and ANSI meaning that session would give, before
    it starts."""
    master, remote, conf = spark_options
    view = SessionView.of(conf, options, path)
    return zorder.Table(
        path,
        storage_options=view.storage_options,
        spark=spark or (lambda: session(out, master, conf, remote)),
        time_zone=view.time_zone,
        ansi=view.ansi,
        create=create,
    )


def _located(
    out: Output,
    path: str,
    options: dict[str, str],
    spark_options: tuple[str, str | None, list[str] | None],
    spark: SparkSession | None = None,
) -> tuple[str, dict[str, str]]:
    """``path`` and ``options``; for a catalog name, where the table lives and the storage
    options that reach it, looked up through a session started on ``--master``/``--remote``
    with ``--conf`` (a persistent catalog: a Hive metastore, or Glue or Unity through its
    connector). A path starts no session."""
    if not is_table_name(path):
        return path, options
    table = _handle(out, path, options, spark_options, spark)
    return table.uri, dict(table.storage_options)


def _as_of(version: int | None, as_of: str | None) -> str | None:
    """``--as-of``, refused beside ``--version`` in the command line's own words."""
    if version is not None and as_of is not None:
        raise InvalidArgumentError(
            f"give --version or --as-of, not both (got --version {version} --as-of {as_of!r})"
        )
    return as_of


@command
def advise(
    out: Output,
    path: Annotated[str, typer.Argument(help="Delta table the workload queries.")],
    workload: Annotated[
        Path,
        typer.Option(help="The workload: a .sql file of ;-separated queries or filters."),
    ],
    num_files: Annotated[
        int | None,
        typer.Option(
            "--files", min=1, max=MAX_FILES, help="Files to plan for (default: as sized)."
        ),
    ] = None,
    max_columns: Annotated[
        int | None, typer.Option(min=1, help="Most clustering columns to consider (default 8).")
    ] = None,
    storage_option: StorageOption = None,
    master: MasterOption = "local[*]",
    remote: RemoteOption = None,
    conf: ConfOption = None,
    as_json: JsonOption = False,
) -> None:
    """The layout under which WORKLOAD's own filters skip the most rows of PATH.

    Simulates candidate layouts on a sample and prints their expected rows scanned;
    `zorder optimize PATH --by-advice WORKLOAD` applies the best.
    """
    options = parse_storage_options(storage_option or [])
    spark = session(out, master, conf, remote)
    with out.working(f"Advising {path}...", spark):
        advice = zorder.advise(
            path,
            workload,
            spark=spark,
            num_files=num_files,
            max_columns=max_columns,
            storage_options=options,
        )
    out.result(advice, render.advice, as_json=render.advice_json)


@command
def describe(
    out: Output,
    path: Annotated[str, typer.Argument(help="Delta table.")],
    columns: Annotated[
        str | None,
        typer.Option(help="Columns to measure the depth of (default: the clustering columns)."),
    ] = None,
    version: VersionOption = None,
    as_of: AsOfOption = None,
    time_zone: Annotated[str, typer.Option(help="Zone of an --as-of without one.")] = "UTC",
    storage_option: StorageOption = None,
    master: MasterOption = "local[*]",
    remote: RemoteOption = None,
    conf: ConfOption = None,
    as_json: JsonOption = False,
) -> None:
    """The table's clustering spec, file size target, runs, what is not clustered yet, and
    how deep its files overlap on each clustering column (from statistics alone)."""
    options = parse_storage_options(storage_option or [])
    location, options = _located(out, path, options, (master, remote, conf))
    described = zorder.describe(
        location,
        columns=column_list(columns) if columns else None,
        version=version,
        timestamp=_as_of(version, as_of),
        time_zone=time_zone,
        storage_options=options,
    )
    out.result(described, render.runs)


@command
def vacuum(
    out: Output,
    path: Annotated[str, typer.Argument(help="Delta table to clean up.")],
    retain_hours: Annotated[
        float | None,
        typer.Option(
            min=0,
            help="Keep files any version of the last N hours uses (default: the table's "
            f"{RETENTION_PROPERTY}, else {DEFAULT_RETENTION_HOURS:g}).",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run/--delete", help="List only (default), or delete.")
    ] = True,
    force: Annotated[
        bool,
        typer.Option(
            help=f"Allow a retention below {MIN_VACUUM_RETENTION_HOURS} hours or below the "
            "table's own (unsafe for old readers)."
        ),
    ] = False,
    storage_option: StorageOption = None,
    master: MasterOption = "local[*]",
    remote: RemoteOption = None,
    conf: ConfOption = None,
    as_json: JsonOption = False,
) -> None:
    """List (or delete) files no version within the retention uses, orphans of crashed runs too.

    The result says which retention applied and where it came from.
    """
    options = parse_storage_options(storage_option or [])
    location, options = _located(out, path, options, (master, remote, conf))
    result = zorder.vacuum(
        location, retain_hours=retain_hours, dry_run=dry_run, force=force, storage_options=options
    )
    out.result(result, render.vacuumed)


@command
def restore(
    out: Output,
    path: Annotated[str, typer.Argument(help="Delta table to restore.")],
    version: Annotated[
        int | None, typer.Option("--version", min=0, help="Restore this version of the table.")
    ] = None,
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of",
            help="Restore the newest version committed at or before this time (ISO-8601, "
            "e.g. '2026-11-24 13:00:00'; without a zone, in --time-zone).",
        ),
    ] = None,
    time_zone: Annotated[str, typer.Option(help="Zone of an --as-of without one.")] = "UTC",
    storage_option: StorageOption = None,
    master: MasterOption = "local[*]",
    remote: RemoteOption = None,
    conf: ConfOption = None,
    as_json: JsonOption = False,
) -> None:
    """Undo: make PATH what one of its versions was, in one new commit.

    Its files come back and later ones go (no data file is rewritten), with its
    schema, properties and clustering spec. Files a vacuum deleted are refused.
    """
    if version is None and as_of is None:
        raise InvalidArgumentError("give the version to restore: --version N or --as-of TIME")
    options = parse_storage_options(storage_option or [])
    location, options = _located(out, path, options, (master, remote, conf))
    result = zorder.restore(
        location,
        version=version,
        timestamp=_as_of(version, as_of),
        time_zone=time_zone,
        storage_options=options,
    )
    out.result(result, render.restored)


@command
def query(
    out: Output,
    path: Annotated[str, typer.Argument(help="Delta table.")],
    where: Annotated[
        str | None, typer.Option(help="SQL filter, e.g. \"src_ip = '1.2.3.4'\".")
    ] = None,
    limit: Annotated[int, typer.Option(min=0, help="Rows to print.")] = 20,
    columns: Annotated[
        str | None, typer.Option(help="Comma-separated columns to print (default: all).")
    ] = None,
    explain_only: Annotated[
        bool, typer.Option("--explain", help="Only report what would be scanned.")
    ] = False,
    use_spark: Annotated[
        bool,
        typer.Option(
            "--spark", help="Run the query in Spark (zorder.read) instead of in this process."
        ),
    ] = False,
    time_zone: Annotated[
        str,
        typer.Option(
            help="Session time zone: of timestamps written without one; rows print in it."
        ),
    ] = "UTC",
    ansi: AnsiOption = True,
    version: VersionOption = None,
    as_of: AsOfOption = None,
    storage_option: StorageOption = None,
    master: MasterOption = "local[*]",
    remote: RemoteOption = None,
    conf: ConfOption = None,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Rows as JSON lines (with --explain: the report as JSON)."),
    ] = False,
) -> None:
    """Rows of PATH matching --where, scanning only the files that can hold them.

    Without --spark no JVM starts: the files are read in this process
    (zorder.to_arrow), with Spark's semantics, or the filter is refused.
    --no-ansi answers as a session with ANSI mode off (Spark 3.5's default);
    in process, what means something else there is refused by name.
    """
    picked = column_list(columns) if columns else None
    spark = None
    if use_spark and not explain_only:  # started first: its settings may reach the store
        zone = [f"spark.sql.session.timeZone={time_zone}", f"spark.sql.ansi.enabled={ansi}".lower()]
        spark = session(out, master, [*zone, *(conf or [])], remote)
    options = parse_storage_options(storage_option or [])
    location, options = _located(out, path, options, (master, remote, conf), spark)
    planned = zorder.scan(
        location,
        where,
        columns=picked,
        version=version,
        timestamp=_as_of(version, as_of),
        time_zone=time_zone,
        storage_options=options,
        ansi=ansi,
    )
    if explain_only:
        out.result(planned.report, render.scan)
        return
    if spark is not None:
        from zorder.spark.compat import collect_arrow
        from zorder.spark.failures import filter_failures

        with out.working(f"Reading {path}...", spark), filter_failures(where or "TRUE"):
            rows = collect_arrow(planned.to_spark(spark).limit(limit))
    else:
        rows = planned.to_arrow(limit)
    title = f"{path} where {where or 'TRUE'} (first {limit} rows)"
    shown = in_zone(rows, time_zone)  # instants in the session's zone, as Spark shows them
    out.rows(title, shown, planned.report, pinned=planned.filter_columns)


@command
def stats(
    out: Output,
    path: Annotated[str, typer.Argument(help="Delta table.")],
    columns: Annotated[
        str | None,
        typer.Option(help="Columns to show min/max of (default: the clustering columns)."),
    ] = None,
    version: VersionOption = None,
    as_of: AsOfOption = None,
    time_zone: Annotated[str, typer.Option(help="Zone of an --as-of without one.")] = "UTC",
    storage_option: StorageOption = None,
    master: MasterOption = "local[*]",
    remote: RemoteOption = None,
    conf: ConfOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """One row per file: its run, record count and min/max of the clustering columns."""
    options = parse_storage_options(storage_option or [])
    location, options = _located(out, path, options, (master, remote, conf))
    description = zorder.describe(
        location,
        columns=column_list(columns) if columns else None,
        version=version,
        timestamp=_as_of(version, as_of),
        time_zone=time_zone,
        storage_options=options,
    )
    out.result(description, render.stats, as_json=render.stats_json)
