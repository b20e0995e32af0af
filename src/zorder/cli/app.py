"""Typer application behind the ``zorder`` command: parse, call the API, print.

Each command turns its arguments into one API call and hands the frozen
result to :mod:`zorder.cli.output`. A :class:`~zorder.errors.ZorderError`
(bad input, a table zorder cannot use) is one red line and exit code 2;
anything else is a bug, reported as such with the file its traceback went to.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, ParamSpec, TypeVar

import typer

import zorder
from zorder.api.modes import InputFormat, WriteMode
from zorder.cli import output
from zorder.curves.kinds import Curve, KeyMethod, SpaceFillingCurve
from zorder.table.tiering import DEFAULT_FANOUT

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

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
MethodOption = Annotated[
    KeyMethod | None,
    typer.Option(
        help="Keys from sampled ranks or raw encodings (default: the table's, else rank)."
    ),
]


def _traceback_file() -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path(tempfile.gettempdir()) / f"zorder-error-{stamp}-{os.getpid()}.log"


@dataclass
class _SparkLog:
    """Where the JVM's output goes: a file of its own, unless --verbose shows it live."""

    verbose: bool = False
    file: Path | None = None  # set once a session started with its output there


_spark_log = _SparkLog()


def _command(function: Callable[P, T]) -> Callable[P, T]:
    """Register ``function`` as a command whose errors are reported, never dumped."""

    @functools.wraps(function)
    def reported(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return function(*args, **kwargs)
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise
        except zorder.ZorderError as error:
            output.fail(str(error), spark_log=_spark_log.file)
        except Exception as error:
            output.bug(error, _traceback_file(), spark_log=_spark_log.file)

    app.command()(reported)
    return reported


def _version_callback(value: bool) -> None:
    if value:
        output.version(zorder.__version__)
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
    _spark_log.verbose = verbose
    _spark_log.file = None


@contextlib.contextmanager
def _stderr_to(path: Path) -> Iterator[None]:
    """File descriptor 2 pointed at ``path`` meanwhile: processes started now inherit it.

    The JVM that pyspark launches (and the Python workers it forks) write
    their banners, log4j lines and warnings to the stderr they were born
    with; this process gets its own back afterwards.
    """
    sys.stderr.flush()
    saved = os.dup(2)
    with open(path, "ab") as log:
        os.dup2(log.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def _columns(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _session(master: str, conf: list[str] | None, remote: str | None = None) -> SparkSession:
    from zorder.spark import local_session, remote_session

    settings: dict[str, str] = {}
    for item in conf or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            output.fail(f"--conf takes KEY=VALUE, got {item!r}")
        settings[key.strip()] = value
    settings.setdefault("spark.ui.showConsoleProgress", "false")  # zorder shows its own

    def start() -> SparkSession:
        if remote is not None:
            return remote_session(remote, conf=settings)
        return local_session(master=master, conf=settings)

    with output.console.status(f"Starting Spark ({remote or master})..."):
        if _spark_log.verbose:
            spark = start()
        else:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            log = Path(tempfile.gettempdir()) / f"zorder-spark-{stamp}-{os.getpid()}.log"
            with _stderr_to(log):
                spark = start()
            _spark_log.file = log
        if remote is None:
            spark.sparkContext.setLogLevel("WARN" if _spark_log.file else "ERROR")
    return spark


@_command
def curve(
    curve: Annotated[SpaceFillingCurve, typer.Option(help="Which curve to print.")] = "zorder",
    bits: Annotated[int, typer.Option(min=1, max=5, help="Bits per dimension.")] = 3,
) -> None:
    """Print each cell's position along a curve over a 2-d grid."""
    from zorder.curves import curve_grid

    output.curve_grid(curve, curve_grid(curve, bits))


@_command
def demo(
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

    spark = _session(master, None, remote)
    with output.working("Demo:", spark):
        result = run_demo(
            spark, rows=rows, files=files, filters=filters, output=directory, progress=phase
        )
    output.demo_json(result) if as_json else output.demo(result)


@_command
def bench(
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
    spark = _session(master, None, remote)
    with (
        tempfile.TemporaryDirectory(prefix="zorder-bench-", dir=workdir) as tmp,
        output.working("Benchmark:", spark),
    ):
        result = run_bench(spark, tmp, config, progress=phase)
    output.bench(result)
    if json_path:
        Path(json_path).write_text(json.dumps(result.to_json(), indent=2, sort_keys=True) + "\n")


@_command
def write(
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
    master: MasterOption = "local[*]",
    remote: RemoteOption = None,
    conf: ConfOption = None,
    as_json: JsonOption = False,
) -> None:
    """Cluster SOURCE into the Delta table DEST (each partition on its own).

    An append without --by clusters the rows by the table's recorded spec.
    """
    from zorder.api import read_input

    spark = _session(master, conf, remote)
    df = read_input(spark, source, format=source_format)
    with output.working(f"Clustering {source} into {dest}...", spark):
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
        )
    output.result_json(metrics) if as_json else output.metrics(metrics)


@_command
def optimize(
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
    master: MasterOption = "local[*]",
    remote: RemoteOption = None,
    conf: ConfOption = None,
    as_json: JsonOption = False,
) -> None:
    """Cluster what needs it in the Delta table at PATH (or everything, --full), in one commit.

    Without --by the table's recorded spec is used; a new --by is recorded and reclusters all.
    """
    spark = _session(master, conf, remote)
    with output.working(f"Optimizing {path}...", spark):
        metrics = zorder.optimize(
            spark,
            path,
            by=_columns(by) if by else None,
            curve=curve,
            num_files=num_files,
            target_file_size=target_file_size,
            method=method,
            where=where,
            full=full,
            fanout=fanout,
        )
    output.result_json(metrics) if as_json else output.metrics(metrics)


@_command
def describe(
    path: Annotated[str, typer.Argument(help="Delta table.")],
    as_json: JsonOption = False,
) -> None:
    """The table's clustering spec, file size target, runs, and what is not clustered yet."""
    description = zorder.describe(path)
    output.result_json(description) if as_json else output.runs(description)


@_command
def vacuum(
    path: Annotated[str, typer.Argument(help="Delta table to clean up.")],
    retain_hours: Annotated[
        float, typer.Option(min=0, help="Keep files any version of the last N hours uses.")
    ] = 168,
    dry_run: Annotated[
        bool, typer.Option("--dry-run/--delete", help="List only (default), or delete.")
    ] = True,
    force: Annotated[
        bool, typer.Option(help="Allow a retention below 168 hours (unsafe for old readers).")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """List (or delete) files no version within the retention uses, orphans of crashed runs too."""
    result = zorder.vacuum(path, retain_hours=retain_hours, dry_run=dry_run, force=force)
    output.result_json(result) if as_json else output.vacuumed(result)


@_command
def query(
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
    if explain_only:
        report = zorder.explain(path, where, time_zone=time_zone)
        output.result_json(report) if as_json else output.scan(report)
        return
    if use_spark:
        zone = [f"spark.sql.session.timeZone={time_zone}"]
        spark = _session(master, [*zone, *(conf or [])], remote)
        report = zorder.explain(path, where, spark=spark)
        with output.working(f"Reading {path}...", spark):
            frame = zorder.read(spark, path, where)
            rows = (frame.select(*picked) if picked else frame).limit(limit).toArrow()
    else:
        from zorder.api.arrow import scan_arrow

        rows, report = scan_arrow(path, where, columns=picked, limit=limit, time_zone=time_zone)
    if as_json:
        output.rows_json(rows)
        return
    output.rows(f"{path} where {where or 'TRUE'} (first {limit} rows)", rows)
    output.scan(report)


@_command
def plot(
    path: Annotated[str | None, typer.Argument(help="Delta table (omit with --curve).")] = None,
    x: Annotated[str | None, typer.Option(help="Column across.")] = None,
    y: Annotated[str | None, typer.Option(help="Column up.")] = None,
    curve: Annotated[
        SpaceFillingCurve | None, typer.Option(help="Draw this curve itself instead of a table.")
    ] = None,
    bits: Annotated[int, typer.Option(min=1, max=6, help="Bits per dimension (--curve).")] = 3,
    sample: Annotated[int, typer.Option(min=1, help="Rows sampled for the points.")] = 5000,
    picture: Annotated[str, typer.Option("-o", "--output", help="PNG to write.")] = "layout.png",
) -> None:
    """Picture of each file's box in two columns (--x, --y), or of a curve (--curve)."""
    from zorder.plot import plot_curve, plot_layout

    if curve is not None:
        written = plot_curve(picture, curve=curve, bits=bits)
    elif path is None or x is None or y is None:
        output.fail("give PATH with --x and --y, or --curve zorder|hilbert")
    else:
        written = plot_layout(path, picture, x=x, y=y, sample=sample)
    output.console.print(f"wrote {written}")


@_command
def stats(
    path: Annotated[str, typer.Argument(help="Delta table.")],
    columns: Annotated[
        str | None,
        typer.Option(help="Columns to show min/max of (default: the clustering columns)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """One row per file: its run, record count and min/max of the clustering columns."""
    description = zorder.describe(path, columns=_columns(columns) if columns else None)
    if as_json:
        output.description_json(description)
    else:
        output.description(description)


def main() -> None:
    app()
