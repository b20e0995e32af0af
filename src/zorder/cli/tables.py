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
from zorder.cli import render
from zorder.cli.command import (
    AS_OF,
    REACH,
    AnsiOption,
    AsOf,
    Clustering,
    JsonOption,
    Reach,
    SchemaModeOption,
    column_list,
    command,
)
from zorder.cli.output import Output
from zorder.cli.rows import in_zone
from zorder.cli.spark import SessionView
from zorder.curves.kinds import ClusteringSpec
from zorder.errors import InvalidArgumentError
from zorder.plan.modes import InputFormat, WriteMode
from zorder.sizes import MAX_FILES
from zorder.table import MIN_VACUUM_RETENTION_HOURS
from zorder.table.delta.retention import DEFAULT_RETENTION_HOURS, RETENTION_PROPERTY
from zorder.table.tiering import DEFAULT_FANOUT

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from zorder.advice.advisor import Advice
    from zorder.api.scanning import Scan

SourceFormatOption = Annotated[
    InputFormat | None,
    typer.Option(
        "--format",
        help="Format of SOURCE (default: what it holds: a Delta log, .csv files, else Parquet).",
    ),
]
WriteModeOption = Annotated[
    WriteMode, typer.Option(help="If DEST exists: error, append, overwrite.")
]
PartitionByOption = Annotated[
    str | None,
    typer.Option(help="Partition columns of a new table, comma-separated (e.g. day)."),
]
TxnAppIdOption = Annotated[
    str | None,
    typer.Option(
        help="Make the write idempotent: the writer's id, recorded with --txn-version "
        "(Delta's txn action)."
    ),
]
TxnVersionOption = Annotated[
    int | None,
    typer.Option(
        help="This write's number for --txn-app-id: if DEST records it or a newer one, "
        "nothing is written."
    ),
]
PartitionsWhereOption = Annotated[
    str | None, typer.Option(help="Partitions to optimize, SQL over partition columns only.")
]
FullOption = Annotated[
    bool, typer.Option(help="Recluster every file into one run, not only what needs it.")
]
FanoutOption = Annotated[
    int, typer.Option(min=2, help="Runs of a size tier merged into one (incremental).")
]
ByAdviceOption = Annotated[
    Path | None,
    typer.Option(
        "--by-advice",
        help="Cluster by the spec `zorder advise` chooses for this workload (.sql file).",
    ),
]


@command
def write(
    out: Output,
    source: Annotated[str, typer.Argument(help="Input path (Parquet, CSV or Delta).")],
    dest: Annotated[str, typer.Argument(help="Delta table to write.")],
    clustering: Clustering,
    source_format: SourceFormatOption = None,
    mode: WriteModeOption = "error",
    partition_by: PartitionByOption = None,
    txn_app_id: TxnAppIdOption = None,
    txn_version: TxnVersionOption = None,
    schema_mode: SchemaModeOption = None,
    reach: Reach = REACH,
    as_json: JsonOption = False,
) -> None:
    """Cluster SOURCE into the Delta table DEST (each partition on its own).

    An append without --by clusters the rows by the table's recorded spec. With
    --txn-app-id and --txn-version, running the same write again adds nothing.

    Small work runs in this process without starting Spark (--engine auto): Parquet or a
    Delta table within the in-process bounds.
    """
    table = _handle(out, dest, reach, create=True)
    with out.working(f"Clustering {source} into {dest}...", None):
        metrics = table.write(
            source,
            **clustering.keywords(),
            mode=mode,
            partition_by=column_list(partition_by) if partition_by else None,
            txn_app_id=txn_app_id,
            txn_version=txn_version,
            format=source_format,
            schema_mode=schema_mode,
        )
    out.result(metrics, render.metrics)


@command
def optimize(
    out: Output,
    path: Annotated[str, typer.Argument(help="Delta table to cluster.")],
    clustering: Clustering,
    where: PartitionsWhereOption = None,
    full: FullOption = False,
    fanout: FanoutOption = DEFAULT_FANOUT,
    by_advice: ByAdviceOption = None,
    reach: Reach = REACH,
    as_json: JsonOption = False,
) -> None:
    """Cluster what needs it in the Delta table at PATH (or everything, --full), in one commit.

    Without --by the table's recorded spec is used; a new --by (or --by-advice) is recorded
    and reclusters all. Small work runs in this process without starting Spark (--engine
    auto).
    """
    asked, spark = clustering.keywords(), None
    if by_advice is not None:
        spark, asked["by"] = _advised(out, path, by_advice, clustering, reach)
    table = _handle(out, path, reach, spark)
    with out.working(f"Optimizing {path}...", spark):
        metrics = table.optimize(**asked, where=where, full=full, fanout=fanout)
    out.result(metrics, render.metrics)


def _advised(
    out: Output, path: str, workload: Path, clustering: Clustering, reach: Reach
) -> tuple[SparkSession, ClusteringSpec]:
    """``--by-advice``: the session started for it and the spec ``zorder advise`` chooses
    for ``workload``, which leaves no room for --by, --curve or --method (refused first)."""
    if clustering.by or clustering.curve or clustering.method:
        raise InvalidArgumentError(
            "--by-advice chooses the columns, curve and method; drop --by, --curve and --method"
        )
    spark, advice = _advice(out, reach, path, workload, num_files=clustering.num_files)
    return spark, advice.spec


def _advice(
    out: Output,
    reach: Reach,
    path: str,
    workload: Path,
    *,
    num_files: int | None,
    max_columns: int | None = None,
) -> tuple[SparkSession, Advice]:
    """``zorder.advise`` of ``path`` for ``workload``, and the session started for it."""
    spark = reach.session(out)
    with out.working(f"Advising {path} for {workload}...", spark):
        advice = zorder.advise(
            path,
            workload,
            spark=spark,
            num_files=num_files,
            max_columns=max_columns,
            storage_options=reach.storage_options,
        )
    return spark, advice


def _handle(
    out: Output,
    path: str,
    reach: Reach,
    spark: SparkSession | None = None,
    *,
    create: bool = False,
) -> zorder.Table:
    """The table at ``path`` as the command writes it (``create``: or makes it): Spark
    (``spark``, else one started on ``--master``/``--remote`` with ``--conf``) only when
    Spark runs; the storage options, zone and ANSI meaning that session would give, before
    it starts."""
    view = SessionView.of(reach.conf, reach.storage_options, path)
    return zorder.Table(
        path,
        storage_options=view.storage_options,
        spark=spark or (lambda: reach.session(out)),
        time_zone=view.time_zone,
        ansi=view.ansi,
        create=create,
    )


def _located(
    out: Output, path: str, reach: Reach, spark: SparkSession | None = None
) -> tuple[str, dict[str, str]]:
    """``path`` and the storage options; for a catalog name, where the table lives and the
    storage options that reach it, looked up through a session started on
    ``--master``/``--remote`` with ``--conf`` (a persistent catalog: a Hive metastore, or
    Glue or Unity through its connector). A path starts no session."""
    if not is_table_name(path):
        return path, reach.storage_options
    table = _handle(out, path, reach, spark)
    return table.uri, dict(table.storage_options)


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
    reach: Reach = REACH,
    as_json: JsonOption = False,
) -> None:
    """The layout under which WORKLOAD's own filters skip the most rows of PATH.

    Simulates candidate layouts on a sample and prints their expected rows scanned;
    `zorder optimize PATH --by-advice WORKLOAD` applies the best.
    """
    _, advice = _advice(out, reach, path, workload, num_files=num_files, max_columns=max_columns)
    out.result(advice, render.advice, as_json=render.advice_json)


@command
def describe(
    out: Output,
    path: Annotated[str, typer.Argument(help="Delta table.")],
    columns: Annotated[
        str | None,
        typer.Option(help="Columns to measure the depth of (default: the clustering columns)."),
    ] = None,
    pinned: AsOf = AS_OF,
    time_zone: Annotated[str, typer.Option(help="Zone of an --as-of without one.")] = "UTC",
    reach: Reach = REACH,
    as_json: JsonOption = False,
) -> None:
    """The table's clustering spec, file size target, runs, what is not clustered yet, and
    how deep its files overlap on each clustering column (from statistics alone)."""
    location, options = _located(out, path, reach)
    described = zorder.describe(
        location,
        columns=column_list(columns) if columns else None,
        version=pinned.version,
        timestamp=pinned.timestamp,
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
    reach: Reach = REACH,
    as_json: JsonOption = False,
) -> None:
    """List (or delete) files no version within the retention uses, orphans of crashed runs too.

    The result says which retention applied and where it came from.
    """
    location, options = _located(out, path, reach)
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
    reach: Reach = REACH,
    as_json: JsonOption = False,
) -> None:
    """Undo: make PATH what one of its versions was, in one new commit.

    Its files come back and later ones go (no data file is rewritten), with its
    schema, properties and clustering spec. Files a vacuum deleted are refused.
    """
    if version is None and as_of is None:
        raise InvalidArgumentError("give the version to restore: --version N or --as-of TIME")
    location, options = _located(out, path, reach)
    result = zorder.restore(
        location,
        version=version,
        timestamp=AsOf(version=version, as_of=as_of).timestamp,
        time_zone=time_zone,
        storage_options=options,
    )
    out.result(result, render.restored)


QueryWhereOption = Annotated[
    str | None, typer.Option(help="SQL filter, e.g. \"src_ip = '1.2.3.4'\".")
]
LimitOption = Annotated[int, typer.Option(min=0, help="Rows to print.")]
PrintedOption = Annotated[
    str | None, typer.Option(help="Comma-separated columns to print (default: all).")
]
ExplainOption = Annotated[
    bool, typer.Option("--explain", help="Only report what would be scanned.")
]
UseSparkOption = Annotated[
    bool,
    typer.Option(
        "--spark", help="Run the query in Spark (zorder.read) instead of in this process."
    ),
]
SessionZoneOption = Annotated[
    str,
    typer.Option(help="Session time zone: of timestamps written without one; rows print in it."),
]
RowsJsonOption = Annotated[
    bool, typer.Option("--json", help="Rows as JSON lines (with --explain: the report as JSON).")
]


@command
def query(
    out: Output,
    path: Annotated[str, typer.Argument(help="Delta table.")],
    where: QueryWhereOption = None,
    limit: LimitOption = 20,
    columns: PrintedOption = None,
    explain_only: ExplainOption = False,
    use_spark: UseSparkOption = False,
    time_zone: SessionZoneOption = "UTC",
    ansi: AnsiOption = True,
    pinned: AsOf = AS_OF,
    reach: Reach = REACH,
    as_json: RowsJsonOption = False,
) -> None:
    """Rows of PATH matching --where, scanning only the files that can hold them.

    Without --spark no JVM starts: the files are read in this process (zorder.to_arrow),
    with Spark's semantics, or the filter is refused. --no-ansi answers as a session with
    ANSI mode off (Spark 3.5's default); in process, what means something else there is
    refused by name.
    """
    zone, meaning = f"spark.sql.session.timeZone={time_zone}", f"spark.sql.ansi.enabled={ansi}"
    # Started first, when asked for: its settings may reach the store.
    spark = reach.session(out, zone, meaning.lower()) if use_spark and not explain_only else None
    location, options = _located(out, path, reach, spark)
    planned = zorder.scan(
        location,
        where,
        columns=column_list(columns) if columns else None,
        version=pinned.version,
        timestamp=pinned.timestamp,
        time_zone=time_zone,
        storage_options=options,
        ansi=ansi,
    )
    if explain_only:
        out.result(planned.report, render.scan)
        return
    _print_rows(out, planned, spark, (path, where or "TRUE", limit), time_zone)


def _print_rows(
    out: Output,
    planned: Scan,
    spark: SparkSession | None,
    asked: tuple[str, str, int],
    time_zone: str,
) -> None:
    """The first rows of ``planned`` (``asked``: the table as named, the filter, how many
    rows), read in process or by ``spark`` (a filter Spark cannot evaluate refused in one
    line naming it), printed with instants in ``time_zone``, as Spark shows them."""
    from zorder.spark.compat import collect_arrow
    from zorder.spark.failures import filter_failures

    path, where, limit = asked
    if spark is None:
        rows = planned.to_arrow(limit)
    else:
        with out.working(f"Reading {path}...", spark), filter_failures(where):
            rows = collect_arrow(planned.to_spark(spark).limit(limit))
    title = f"{path} where {where} (first {limit} rows)"
    out.rows(title, in_zone(rows, time_zone), planned.report, pinned=planned.filter_columns)


@command
def stats(
    out: Output,
    path: Annotated[str, typer.Argument(help="Delta table.")],
    columns: Annotated[
        str | None,
        typer.Option(help="Columns to show min/max of (default: the clustering columns)."),
    ] = None,
    pinned: AsOf = AS_OF,
    time_zone: Annotated[str, typer.Option(help="Zone of an --as-of without one.")] = "UTC",
    reach: Reach = REACH,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """One row per file: its run, record count and min/max of the clustering columns."""
    location, options = _located(out, path, reach)
    description = zorder.describe(
        location,
        columns=column_list(columns) if columns else None,
        version=pinned.version,
        timestamp=pinned.timestamp,
        time_zone=time_zone,
        storage_options=options,
    )
    out.result(description, render.stats, as_json=render.stats_json)
