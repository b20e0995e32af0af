"""Typer application behind the ``zorder`` command: parse, call the API, print.

Each command gets its :class:`~zorder.cli.output.Output` (a console, or JSON
with ``--json``), turns its arguments into one API call and hands the frozen
result to it with the renderer of :mod:`zorder.cli.render` that draws it. A
:class:`~zorder.errors.ZorderError` (bad input, a table zorder cannot use) is
reported as refused, exit code 2; anything else is a bug, exit code 1, with
the file its traceback went to (:mod:`zorder.cli.output` has the scheme).
"""

from __future__ import annotations

import functools
import importlib.abc
import inspect
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Concatenate, ParamSpec, TypeVar

import typer

import zorder
from zorder.api.modes import InputFormat, WriteMode
from zorder.cli import render
from zorder.cli.output import Output, output_for
from zorder.cli.spark import session, spark_log
from zorder.curves.kinds import ClusteringSpec, Curve, KeyMethod, SpaceFillingCurve
from zorder.errors import InvalidArgumentError
from zorder.table import MIN_VACUUM_RETENTION_HOURS, parse_storage_options
from zorder.table.retention import DEFAULT_RETENTION_HOURS, RETENTION_PROPERTY
from zorder.table.tiering import DEFAULT_FANOUT

P = ParamSpec("P")
T = TypeVar("T")

app = typer.Typer(
    name="zorder",
    help="Z-order and Hilbert clustering with file-level data skipping for Delta Lake tables.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,  # errors are reported by _command, tracebacks go to a file
)

MasterOption = Annotated[
    str,
    typer.Option(help="Spark master: local[*], local-cluster[2,1,1024], spark://host:7077, yarn."),
]
RemoteOption = Annotated[
    str | None,
    typer.Option(help="Spark Connect instead of --master: sc://host:15002, or local[2]."),
]
ConfOption = Annotated[
    list[str] | None,
    typer.Option("--conf", help="Extra Spark setting KEY=VALUE (repeatable)."),
]
StorageOption = Annotated[
    list[str] | None,
    typer.Option(
        "--storage-option",
        help="Object-store setting KEY=VALUE as deltalake takes it (repeatable), e.g. "
        "AWS_ENDPOINT_URL=http://127.0.0.1:9000; unset ones come from the environment.",
    ),
]
CurveOption = Annotated[
    Curve | None, typer.Option(help="Curve to cluster along (default: the table's, else zorder).")
]
ByOption = Annotated[
    str | None,
    typer.Option(help="Clustering columns, comma-separated: a,b,c (default: the table's spec)."),
]
NumFilesOption = Annotated[int | None, typer.Option(min=1, help="Exact number of files.")]
TargetSizeOption = Annotated[
    str | None,
    typer.Option(
        help="Target file size instead, e.g. 256MB (default: the table's "
        "delta.targetFileSize, else 128MB)."
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]
VersionOption = Annotated[
    int | None, typer.Option("--version", min=0, help="Read this version of the table.")
]
AsOfOption = Annotated[
    str | None,
    typer.Option(
        "--as-of",
        help="Read the newest version committed at or before this time (ISO-8601, e.g. "
        "'2026-11-24 13:00:00'; without a zone, in --time-zone).",
    ),
]
MethodOption = Annotated[
    KeyMethod | None,
    typer.Option(
        help="Keys from sampled ranks or raw encodings (default: the table's, else rank)."
    ),
]


def _traceback_file() -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path(tempfile.gettempdir()) / f"zorder-error-{stamp}-{os.getpid()}.log"


def _command(function: Callable[Concatenate[Output, P], T]) -> Callable[P, T]:
    """Register ``function`` as a command: given its output, its errors reported, never dumped.

    The output is chosen once, before the command runs: JSON when the command
    has an ``as_json`` parameter (``--json``) and it is set, else the console.
    Typer sees the command's parameters after the output.
    """

    @functools.wraps(function)
    def reported(*args: P.args, **kwargs: P.kwargs) -> T:
        out = output_for(bool(kwargs.get("as_json", False)))
        try:
            return function(out, *args, **kwargs)
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise
        except zorder.ZorderError as error:
            out.refused(error, spark_log=spark_log.file)
        except Exception as error:
            out.bug(error, _traceback_file(), spark_log=spark_log.file)

    # Evaluated: typer reads a __signature__ as it is, string annotations and all.
    signature = inspect.signature(function, eval_str=True)
    parameters = list(signature.parameters.values())[1:]
    reported.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    app.command()(reported)
    return reported


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"zorder {zorder.__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version_callback, is_eager=True, help="Print the version."
        ),
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose", help="Show Spark's and the JVM's log output live, not in a log file."
        ),
    ] = False,
) -> None:
    """Z-order and Hilbert clustering with file-level data skipping for Delta Lake tables."""
    spark_log.verbose = verbose
    spark_log.file = None


def _columns(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


@_command
def curve(
    out: Output,
    curve: Annotated[SpaceFillingCurve, typer.Option(help="Which curve to print.")] = "zorder",
    bits: Annotated[int, typer.Option(min=1, max=5, help="Bits per dimension.")] = 3,
) -> None:
    """Print each cell's position along a curve over a 2-d grid."""
    from zorder.curves import curve_grid

    out.result(curve_grid(curve, bits), lambda grid: render.curve_grid(curve, grid))


@_command
def demo(
    out: Output,
    rows: Annotated[int, typer.Option(min=100, help="Connections to generate.")] = 1_000_000,
    files: Annotated[int, typer.Option(min=1, help="Files per table.")] = 100,
    filters: Annotated[int, typer.Option(min=1, help="Equality filters per column.")] = 200,
    directory: Annotated[str, typer.Option("--output", help="Where the tables go.")] = (
        "demo-output"
    ),
    master: MasterOption = "local[*]",
    remote: RemoteOption = None,
    as_json: JsonOption = False,
) -> None:
    """The network-connections experiment: linear vs Z-order vs Hilbert layouts."""
    from zorder.api.progress import phase
    from zorder.demo import run_demo

    spark = session(out, master, None, remote)
    with out.working("Demo:", spark):
        result = run_demo(
            spark, rows=rows, files=files, filters=filters, output=directory, progress=phase
        )
    out.result(result, render.demo, as_json=lambda measured: measured.to_json())


@_command
def bench(
    out: Output,
    quick: Annotated[
        bool, typer.Option(help="100 files x 1,000 rows and 100,000-row costs: about 2 minutes.")
    ] = False,
    workdir: Annotated[
        str | None, typer.Option(help="Where the tables go (default: a temporary directory).")
    ] = None,
    json_path: Annotated[
        str | None, typer.Option("--json", help="Also write the results as JSON here.")
    ] = None,
    no_delta_rs: Annotated[bool, typer.Option(help="Leave delta-rs's z_order out.")] = False,
    master: MasterOption = "local[*]",
    remote: RemoteOption = None,
) -> None:
    """Databricks' experiment, the cost against a plain sort and delta-rs, and point lookups."""
    import dataclasses
    import json

    from zorder.api.progress import phase
    from zorder.bench import DEFAULT, QUICK, run_bench

    config = dataclasses.replace(QUICK if quick else DEFAULT, delta_rs=not no_delta_rs)
    spark = session(out, master, None, remote)
    with (
        tempfile.TemporaryDirectory(prefix="zorder-bench-", dir=workdir) as tmp,
        out.working("Benchmark:", spark),
    ):
        result = run_bench(spark, tmp, config, progress=phase)
    out.result(result, render.bench)
    if json_path:
        Path(json_path).write_text(json.dumps(result.to_json(), indent=2, sort_keys=True) + "\n")


@_command
def write(
    out: Output,
    source: Annotated[str, typer.Argument(help="Input path (Parquet, CSV or Delta).")],
    dest: Annotated[str, typer.Argument(help="Delta table to write.")],
    by: ByOption = None,
    source_format: Annotated[
        InputFormat, typer.Option("--format", help="Format of SOURCE.")
    ] = "parquet",
    curve: CurveOption = None,
    num_files: NumFilesOption = None,
    target_file_size: TargetSizeOption = None,
    mode: Annotated[WriteMode, typer.Option(help="If DEST exists: error, append, overwrite.")] = (
        "error"
    ),
    method: MethodOption = None,
    partition_by: Annotated[
        str | None,
        typer.Option(help="Partition columns of a new table, comma-separated (e.g. day)."),
    ] = None,
    storage_option: StorageOption = None,
    master: MasterOption = "local[*]",
    remote: RemoteOption = None,
    conf: ConfOption = None,
    as_json: JsonOption = False,
) -> None:
    """Cluster SOURCE into the Delta table DEST (each partition on its own).

    An append without --by clusters the rows by the table's recorded spec.
    """
    from zorder.api import read_input

    spark = session(out, master, conf, remote)
    options = parse_storage_options(storage_option or [])
    df = read_input(spark, source, format=source_format, storage_options=options)
    with out.working(f"Clustering {source} into {dest}...", spark):
        metrics = zorder.write(
            df,
            dest,
            by=_columns(by) if by else None,
            mode=mode,
            curve=curve,
            num_files=num_files,
            target_file_size=target_file_size,
            method=method,
            partition_by=_columns(partition_by) if partition_by else None,
            storage_options=options,
        )
    out.result(metrics, render.metrics)


@_command
def optimize(
    out: Output,
    path: Annotated[str, typer.Argument(help="Delta table to cluster.")],
    by: ByOption = None,
    curve: CurveOption = None,
    num_files: NumFilesOption = None,
    target_file_size: TargetSizeOption = None,
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
    storage_option: StorageOption = None,
    master: MasterOption = "local[*]",
    remote: RemoteOption = None,
    conf: ConfOption = None,
    as_json: JsonOption = False,
) -> None:
    """Cluster what needs it in the Delta table at PATH (or everything, --full), in one commit.

    Without --by the table's recorded spec is used; a new --by (or --by-advice) is recorded
    and reclusters all.
    """
    if by_advice is not None and (by or curve or method):
        raise InvalidArgumentError(
            "--by-advice chooses the columns, curve and method; drop --by, --curve and --method"
        )
    spark = session(out, master, conf, remote)
    options = parse_storage_options(storage_option or [])
    chosen: list[str] | ClusteringSpec | None = _columns(by) if by else None
    if by_advice is not None:
        with out.working(f"Advising {path} for {by_advice}...", spark):
            chosen = zorder.advise(
                path, by_advice, spark=spark, num_files=num_files, storage_options=options
            ).spec
    with out.working(f"Optimizing {path}...", spark):
        metrics = zorder.optimize(
            spark,
            path,
            by=chosen,
            curve=curve,
            num_files=num_files,
            target_file_size=target_file_size,
            method=method,
            where=where,
            full=full,
            fanout=fanout,
            storage_options=options,
        )
    out.result(metrics, render.metrics)


@_command
def advise(
    out: Output,
    path: Annotated[str, typer.Argument(help="Delta table the workload queries.")],
    workload: Annotated[
        Path,
        typer.Option(help="The workload: a .sql file of ;-separated queries or filters."),
    ],
    num_files: Annotated[
        int | None, typer.Option("--files", min=1, help="Files to plan for (default: as sized).")
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
    spark = session(out, master, conf, remote)
    with out.working(f"Advising {path}...", spark):
        advice = zorder.advise(
            path,
            workload,
            spark=spark,
            num_files=num_files,
            max_columns=max_columns,
            storage_options=parse_storage_options(storage_option or []),
        )
    out.result(advice, render.advice, as_json=render.advice_json)


@_command
def describe(
    out: Output,
    path: Annotated[str, typer.Argument(help="Delta table.")],
    version: VersionOption = None,
    as_of: AsOfOption = None,
    time_zone: Annotated[str, typer.Option(help="Zone of an --as-of without one.")] = "UTC",
    storage_option: StorageOption = None,
    as_json: JsonOption = False,
) -> None:
    """The table's clustering spec, file size target, runs, and what is not clustered yet."""
    described = zorder.describe(
        path,
        version=version,
        timestamp=as_of,
        time_zone=time_zone,
        storage_options=parse_storage_options(storage_option or []),
    )
    out.result(described, render.runs)


@_command
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
    as_json: JsonOption = False,
) -> None:
    """List (or delete) files no version within the retention uses, orphans of crashed runs too.

    The result says which retention applied and where it came from.
    """
    result = zorder.vacuum(
        path,
        retain_hours=retain_hours,
        dry_run=dry_run,
        force=force,
        storage_options=parse_storage_options(storage_option or []),
    )
    out.result(result, render.vacuumed)


@_command
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
        str, typer.Option(help="Session time zone for timestamps written without one.")
    ] = "UTC",
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
    """
    picked = _columns(columns) if columns else None
    spark = None
    if use_spark and not explain_only:  # started first: its settings may reach the store
        zone = [f"spark.sql.session.timeZone={time_zone}"]
        spark = session(out, master, [*zone, *(conf or [])], remote)
    planned = zorder.scan(
        path,
        where,
        columns=picked,
        version=version,
        timestamp=as_of,
        time_zone=time_zone,
        storage_options=parse_storage_options(storage_option or []),
    )
    if explain_only:
        out.result(planned.report, render.scan)
        return
    if spark is not None:
        with out.working(f"Reading {path}...", spark):
            rows = planned.to_spark(spark).limit(limit).toArrow()
    else:
        rows = planned.to_arrow(limit)
    report = planned.report
    out.rows(f"{path} where {where or 'TRUE'} (first {limit} rows)", rows, report)


@_command
def plot(
    out: Output,
    path: Annotated[str | None, typer.Argument(help="Delta table (omit with --curve).")] = None,
    x: Annotated[str | None, typer.Option(help="Column across.")] = None,
    y: Annotated[str | None, typer.Option(help="Column up.")] = None,
    curve: Annotated[
        SpaceFillingCurve | None, typer.Option(help="Draw this curve itself instead of a table.")
    ] = None,
    bits: Annotated[int, typer.Option(min=1, max=6, help="Bits per dimension (--curve).")] = 3,
    sample: Annotated[int, typer.Option(min=1, help="Rows sampled for the points.")] = 5000,
    picture: Annotated[str, typer.Option("-o", "--output", help="PNG to write.")] = "layout.png",
    storage_option: StorageOption = None,
) -> None:
    """Picture of each file's box in two columns (--x, --y), or of a curve (--curve)."""
    from zorder.plot import plot_curve, plot_layout

    if curve is not None:
        written = plot_curve(picture, curve=curve, bits=bits)
    elif path is None or x is None or y is None:
        raise InvalidArgumentError("give PATH with --x and --y, or --curve zorder|hilbert")
    else:
        written = plot_layout(
            path,
            picture,
            x=x,
            y=y,
            sample=sample,
            storage_options=parse_storage_options(storage_option or []),
        )
    out.result(written, render.wrote)


@_command
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
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """One row per file: its run, record count and min/max of the clustering columns."""
    description = zorder.describe(
        path,
        columns=_columns(columns) if columns else None,
        version=version,
        timestamp=as_of,
        time_zone=time_zone,
        storage_options=parse_storage_options(storage_option or []),
    )
    out.result(description, render.stats, as_json=render.stats_json)


# Commands that start no Spark. pyarrow imports pandas (about 0.2 s, a third of a cold
# `zorder query`) the first time it converts anything, only to ask whether the input is a
# pandas object; these commands never have one, so in their process pandas is hidden from
# it. Spark needs pandas (Arrow UDFs, toPandas): a command that may start Spark keeps it.
_WITHOUT_SPARK = frozenset({"query", "describe", "stats", "vacuum", "curve"})


class _WithoutPandas(importlib.abc.MetaPathFinder):
    """An import of pandas fails, as if it were not installed (pyarrow then goes without)."""

    def find_spec(self, name: str, *args: object, **kwargs: object) -> None:
        if name.split(".")[0] == "pandas":
            raise ModuleNotFoundError(f"{name} is not loaded by this zorder command", name=name)


def main() -> None:
    arguments = sys.argv[1:]
    command = next((a for a in arguments if not a.startswith("-")), None)
    if command in _WITHOUT_SPARK and "--spark" not in arguments and "pandas" not in sys.modules:
        sys.meta_path.insert(0, _WithoutPandas())
    app()
