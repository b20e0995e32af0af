"""Typer application behind the ``zorder`` command: parse, call the API, print."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.table import Table

import zorder
from zorder.curves import as_curve, hilbert_index, interleave_bits

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from zorder.api import ClusterMetrics

T = TypeVar("T")

app = typer.Typer(
    name="zorder",
    help="Z-order and Hilbert clustering with file-level data skipping for Delta Lake tables.",
    no_args_is_help=True,
    add_completion=False,
)
console = Console()


class Curve(StrEnum):
    zorder = "zorder"
    hilbert = "hilbert"


class LayoutCurve(StrEnum):
    zorder = "zorder"
    hilbert = "hilbert"
    linear = "linear"


class KeyMethod(StrEnum):
    rank = "rank"
    direct = "direct"


class SourceFormat(StrEnum):
    parquet = "parquet"
    csv = "csv"
    delta = "delta"


class Mode(StrEnum):
    error = "error"
    append = "append"
    overwrite = "overwrite"


MasterOption = Annotated[
    str,
    typer.Option(help="Spark master: local[*], local-cluster[2,1,1024], spark://host:7077, yarn."),
]
ConfOption = Annotated[
    list[str] | None,
    typer.Option("--conf", help="Extra Spark setting KEY=VALUE (repeatable)."),
]
CurveOption = Annotated[LayoutCurve, typer.Option(help="Curve to cluster along.")]
ByOption = Annotated[str, typer.Option(help="Clustering columns, comma-separated: a,b,c.")]
NumFilesOption = Annotated[int | None, typer.Option(min=1, help="Exact number of files.")]
TargetSizeOption = Annotated[
    str | None, typer.Option(help="Target file size instead, e.g. 256MB (default 128MB).")
]
MethodOption = Annotated[
    KeyMethod, typer.Option(help="Keys from sampled ranks (default) or raw encodings.")
]


def _version_callback(value: bool) -> None:
    if value:
        console.print(f"zorder {zorder.__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version_callback, is_eager=True, help="Print the version."
        ),
    ] = False,
) -> None:
    """Z-order and Hilbert clustering with file-level data skipping for Delta Lake tables."""


def curve_table(curve: Curve, bits: int) -> Table:
    """The curve's index of every cell of a 2**bits x 2**bits grid (x across, y down)."""
    side = 1 << bits
    index = interleave_bits if curve is Curve.zorder else hilbert_index
    title = f"{curve.value} index, {side}x{side} grid (x = first column, y = second)"
    table = Table(title=title, show_lines=False)
    table.add_column("y \\ x", justify="right", style="bold")
    for x in range(side):
        table.add_column(str(x), justify="right")
    for y in range(side):
        table.add_row(str(y), *(str(index([x, y], bits)) for x in range(side)))
    return table


@app.command()
def curve(
    curve: Annotated[Curve, typer.Option(help="Which curve to print.")] = Curve.zorder,
    bits: Annotated[int, typer.Option(min=1, max=5, help="Bits per dimension.")] = 3,
) -> None:
    """Print each cell's position along a curve over a 2-d grid."""
    console.print(curve_table(curve, bits))


@app.command()
def demo(
    rows: Annotated[int, typer.Option(min=100, help="Connections to generate.")] = 1_000_000,
    files: Annotated[int, typer.Option(min=1, help="Files per table.")] = 100,
    filters: Annotated[int, typer.Option(min=1, help="Equality filters per column.")] = 200,
    output: Annotated[str, typer.Option(help="Where the Delta tables go.")] = "demo-output",
    master: MasterOption = "local[*]",
) -> None:
    """The network-connections experiment: linear vs Z-order vs Hilbert layouts."""
    import numpy as np

    from zorder.demo import (
        NETWORK_COLUMNS,
        LayoutResult,
        equality_effectiveness,
        file_count,
        network_connections,
        write_as_written,
    )
    from zorder.table import is_delta_table, normalize_uri

    spark = _session(master, None)
    with console.status(f"Generating {rows:,} random connections..."):
        data = network_connections(rows)
        df = spark.createDataFrame(data).cache()
        df.count()
    rng = np.random.default_rng(7)
    picks = rng.integers(0, rows, filters)
    values = {c: [data.column(c)[int(i)].as_py() for i in picks] for c in NETWORK_COLUMNS}
    results = []
    for layout in ("as_written", "linear", "zorder", "hilbert"):
        path = f"{output}/connections_{layout}"
        with _working(f"Writing {path} ({layout.replace('_', ' ')}, {files} files)..."):
            started = time.perf_counter()
            if layout == "as_written":
                exists = is_delta_table(normalize_uri(path))
                write_as_written(df, path, files, mode="overwrite" if exists else "create")
            else:
                zorder.write(
                    df,
                    path,
                    by=list(NETWORK_COLUMNS),
                    curve=as_curve(layout),
                    num_files=files,
                    mode="overwrite",
                )
        console.print(
            f"  {file_count(path)} files, {rows:,} rows, {time.perf_counter() - started:.1f} s"
        )
        effect = equality_effectiveness(path, values)
        results.append(LayoutResult(layout.replace("_", " "), file_count(path), effect))
    table = Table(title="Skipping effectiveness: fraction of rows skipped by column = value")
    for name in ("layout", "files", *NETWORK_COLUMNS, "mean", "of ceiling"):
        table.add_column(name, justify="left" if name == "layout" else "right")
    for result in results:
        table.add_row(
            result.layout,
            str(result.files),
            *(f"{result.per_column[c]:.2f}" for c in NETWORK_COLUMNS),
            f"{result.mean:.2f}",
            f"{result.mean / result.ceiling:.0%}" if result.ceiling else "-",
        )
    console.print(table)
    ceiling_value = results[0].ceiling
    console.print(
        f"Ceiling for {results[0].files} files and {len(NETWORK_COLUMNS)} columns: "
        f"1 - F^(-1/d) = {ceiling_value:.3f}. Tables are in {output}/."
    )
    _demo_lookup(spark, f"{output}/connections_zorder", data)
    from zorder.plot import plot_layout

    for result in results:
        name = result.layout.replace(" ", "_")
        picture = plot_layout(
            f"{output}/connections_{name}",
            f"{output}/layout_{name}.png",
            x="src_ip",
            y="dst_port",
        )
        console.print(f"  picture of the {result.layout} layout: {picture}")


@app.command()
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
    markdown_path: Annotated[
        str | None, typer.Option("--markdown", help="Also write the tables as Markdown here.")
    ] = None,
    no_delta_rs: Annotated[bool, typer.Option(help="Leave delta-rs's z_order out.")] = False,
    master: MasterOption = "local[*]",
) -> None:
    """Databricks' experiment, the cost against a plain sort and delta-rs, and point lookups."""
    import dataclasses
    import tempfile
    from pathlib import Path

    from rich.markdown import Markdown

    from zorder.bench import DEFAULT, QUICK, bench_markdown, run_bench

    config = dataclasses.replace(QUICK if quick else DEFAULT, delta_rs=not no_delta_rs)
    spark = _session(master, None)
    with (
        tempfile.TemporaryDirectory(prefix="zorder-bench-", dir=workdir) as tmp,
        console.status("Benchmark...") as status,
    ):
        payload = run_bench(spark, tmp, config, progress=lambda m: status.update(m))
    text = bench_markdown(payload)
    console.print(Markdown(text))
    if json_path:
        Path(json_path).write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")
    if markdown_path:
        Path(markdown_path).write_text(text + "\n")


def _demo_lookup(spark: SparkSession, path: str, data: Any) -> None:
    """One point lookup through read(), against Spark scanning every file."""
    from zorder.bench import best_seconds

    row = data.slice(data.num_rows // 2, 1).to_pylist()[0]
    where = f"src_ip = '{row['src_ip']}' AND src_port = {row['src_port']}"
    report = zorder.explain(path, where)

    def through_read() -> int:
        return zorder.read(spark, path, where).count()

    def full_scan() -> int:
        return zorder.read(spark, path).where(where).count()

    # Best of two: the first run of a query pays for planning and class loading.
    timings = {"read()": best_seconds(through_read, 2), "full scan": best_seconds(full_scan, 2)}
    found = through_read()
    console.print(
        f"Point lookup {where}: {found} row(s); {report.summary()}; "
        f"{timings['read()']:.2f} s through read() against {timings['full scan']:.2f} s "
        "scanning every file."
    )


def _columns(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _session(master: str, conf: list[str] | None) -> SparkSession:
    from zorder.spark import local_session

    settings: dict[str, str] = {}
    for item in conf or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            _fail(f"--conf takes KEY=VALUE, got {item!r}")
        settings[key.strip()] = value
    with console.status(f"Starting Spark ({master})..."):
        spark = local_session(master=master, conf=settings)
        spark.sparkContext.setLogLevel("ERROR")
    return spark


def _fail(message: str) -> NoReturn:
    console.print(f"[bold red]error:[/] {message}", highlight=False)
    raise typer.Exit(code=2)


def _guarded(action: Callable[[], T]) -> T:
    """Bad input becomes one red line and exit code 2, not a traceback."""
    try:
        return action()
    except zorder.ZorderError as error:
        _fail(str(error))


def _bytes(count: int) -> str:
    size = float(count)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1024 or unit == "TB":
            return f"{size:,.1f} {unit}" if unit != "B" else f"{int(size):,} B"
        size /= 1024
    return f"{count} B"


def _summary(metrics: ClusterMetrics) -> Table:
    table = Table(title=f"{metrics.operation} {metrics.table_uri}", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", justify="right")
    rows = [
        ("clustered by", f"{', '.join(metrics.by)} ({metrics.curve}, {metrics.method} keys)"),
        ("files removed", f"{metrics.files_removed:,} ({_bytes(metrics.bytes_removed)})"),
        ("files added", f"{metrics.files_added:,} ({_bytes(metrics.bytes_added)})"),
        ("rows", f"{metrics.rows:,}"),
        ("table version", "unchanged" if metrics.version is None else str(metrics.version)),
        ("seconds", f"{metrics.seconds:.1f}"),
    ]
    for name, value in rows:
        table.add_row(name, value)
    return table


@contextmanager
def _working(message: str) -> Iterator[None]:
    # Spark's own stage progress bar shows on stderr meanwhile.
    console.print(f"[bold]{message}[/]")
    yield


def _cluster_and_report(message: str, run: Callable[[], ClusterMetrics]) -> None:
    with _working(message):
        metrics = _guarded(run)
    console.print(_summary(metrics))


def _read_source(spark: SparkSession, source: str, source_format: SourceFormat) -> DataFrame:
    if source_format is SourceFormat.delta:
        from zorder.table import load_snapshot, normalize_uri

        return load_snapshot(normalize_uri(source)).dataframe(spark)
    if source_format is SourceFormat.csv:
        return spark.read.option("header", True).option("inferSchema", True).csv(source)
    return spark.read.parquet(source)


@app.command()
def write(
    source: Annotated[str, typer.Argument(help="Input path (Parquet, CSV or Delta).")],
    dest: Annotated[str, typer.Argument(help="Delta table to write.")],
    by: ByOption,
    source_format: Annotated[
        SourceFormat, typer.Option("--format", help="Format of SOURCE.")
    ] = SourceFormat.parquet,
    curve: Annotated[
        LayoutCurve, typer.Option(help="Curve to cluster along.")
    ] = LayoutCurve.zorder,
    num_files: NumFilesOption = None,
    target_file_size: TargetSizeOption = None,
    mode: Annotated[
        Mode, typer.Option(help="If DEST exists: error, append, overwrite.")
    ] = Mode.error,
    method: MethodOption = KeyMethod.rank,
    master: MasterOption = "local[*]",
    conf: ConfOption = None,
) -> None:
    """Cluster SOURCE by columns into the Delta table DEST."""
    spark = _session(master, conf)
    df = _guarded(lambda: _read_source(spark, source, source_format))
    _cluster_and_report(
        f"Clustering {source} by {by} along the {curve.value} curve...",
        lambda: zorder.write(
            df,
            dest,
            by=_columns(by),
            mode=mode.value,
            curve=curve.value,
            num_files=num_files,
            target_file_size=target_file_size,
            method=method.value,
        ),
    )


@app.command()
def optimize(
    path: Annotated[str, typer.Argument(help="Delta table to rewrite clustered.")],
    by: ByOption,
    curve: Annotated[
        LayoutCurve, typer.Option(help="Curve to cluster along.")
    ] = LayoutCurve.zorder,
    num_files: NumFilesOption = None,
    target_file_size: TargetSizeOption = None,
    method: MethodOption = KeyMethod.rank,
    force: Annotated[
        bool, typer.Option(help="Rewrite even a table one run already clustered this way.")
    ] = False,
    master: MasterOption = "local[*]",
    conf: ConfOption = None,
) -> None:
    """Rewrite the Delta table at PATH clustered by columns, in one commit."""
    spark = _session(master, conf)
    _cluster_and_report(
        f"Optimizing {path} by {by} along the {curve.value} curve...",
        lambda: zorder.optimize(
            spark,
            path,
            by=_columns(by),
            curve=curve.value,
            num_files=num_files,
            target_file_size=target_file_size,
            method=method.value,
            force=force,
        ),
    )


@app.command()
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
) -> None:
    """List (or delete) files no version within the retention uses, orphans of crashed runs too."""
    result = _guarded(
        lambda: zorder.vacuum(path, retain_hours=retain_hours, dry_run=dry_run, force=force)
    )
    table = Table(title=f"unused files of {result.table_uri}")
    table.add_column("file")
    for name in result.files:
        table.add_row(name)
    if result.files:
        console.print(table)
    verb = "would delete" if result.dry_run else "deleted"
    console.print(
        f"{verb} {len(result.files)} file(s) unused for {result.retain_hours:g} hours"
        + (" (dry run: --delete to delete them)" if result.dry_run and result.files else "")
    )


@app.command()
def query(
    path: Annotated[str, typer.Argument(help="Delta table.")],
    where: Annotated[
        str | None, typer.Option(help="SQL filter, e.g. \"src_ip = '1.2.3.4'\".")
    ] = None,
    limit: Annotated[int, typer.Option(min=0, help="Rows to print.")] = 20,
    explain_only: Annotated[
        bool, typer.Option("--explain", help="Only report what would be scanned.")
    ] = False,
    master: MasterOption = "local[*]",
    conf: ConfOption = None,
) -> None:
    """Rows of PATH matching --where, scanning only the files that can hold them."""
    report = _guarded(lambda: zorder.explain(path, where))
    if not explain_only:
        spark = _session(master, conf)
        frame = _guarded(lambda: zorder.read(spark, path, where))
        rows = frame.limit(limit).toArrow()
        table = Table(title=f"{path} where {where or 'TRUE'} (first {limit} rows)")
        for name in rows.column_names:
            table.add_column(name, overflow="fold")
        for row in rows.to_pylist():
            table.add_row(*["" if v is None else str(v) for v in row.values()])
        console.print(table)
    console.print(
        f"{report.summary()}; {_bytes(report.bytes_scanned)} of {_bytes(report.bytes_total)}",
        highlight=False,
    )


@app.command()
def plot(
    path: Annotated[str | None, typer.Argument(help="Delta table (omit with --curve).")] = None,
    x: Annotated[str | None, typer.Option(help="Column across.")] = None,
    y: Annotated[str | None, typer.Option(help="Column up.")] = None,
    curve: Annotated[
        Curve | None, typer.Option(help="Draw this curve itself instead of a table.")
    ] = None,
    bits: Annotated[int, typer.Option(min=1, max=6, help="Bits per dimension (--curve).")] = 3,
    sample: Annotated[int, typer.Option(min=1, help="Rows sampled for the points.")] = 5000,
    output: Annotated[str, typer.Option("-o", "--output", help="PNG to write.")] = "layout.png",
) -> None:
    """Picture of each file's box in two columns (--x, --y), or of a curve (--curve)."""
    from zorder.plot import plot_curve, plot_layout

    if curve is not None:
        written = _guarded(lambda: plot_curve(output, curve=curve.value, bits=bits))
    else:
        if path is None or x is None or y is None:
            _fail("give PATH with --x and --y, or --curve zorder|hilbert")
        written = _guarded(lambda: plot_layout(path, output, x=x, y=y, sample=sample))
    console.print(f"wrote {written}")


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, int | float | str | bool):
        return value
    return str(value)


@app.command()
def stats(
    path: Annotated[str, typer.Argument(help="Delta table.")],
    columns: Annotated[
        str | None,
        typer.Option(help="Columns to show min/max of (default: the clustering columns)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """One row per file: record count and min/max of the clustering columns."""
    from zorder.table import file_statistics, latest_clustering, normalize_uri

    uri = normalize_uri(path)
    actions = _guarded(lambda: file_statistics(uri))
    if columns:
        shown = _columns(columns)
    else:
        clustering = latest_clustering(uri)
        shown = list(clustering.spec.columns) if clustering else []
        if not shown:
            shown = [n[4:] for n in actions.column_names if n.startswith("min.")][:4]
    missing = [c for c in shown if f"min.{c}" not in actions.column_names]
    if missing:
        _fail(f"no statistics for {', '.join(map(repr, missing))} in {uri}")
    rows = []
    for row in actions.to_pylist():
        entry: dict[str, Any] = {"path": row["path"], "records": row.get("num_records")}
        for column in shown:
            entry[f"{column} min"] = _plain(row.get(f"min.{column}"))
            entry[f"{column} max"] = _plain(row.get(f"max.{column}"))
        rows.append(entry)
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table(title=f"{uri}: {len(rows)} files")
    for name in ["path", "records", *[f"{c} {side}" for c in shown for side in ("min", "max")]]:
        table.add_column(name, justify="left" if name == "path" else "right", overflow="fold")
    for entry in rows:
        table.add_row(*["" if v is None else str(v) for v in entry.values()])
    console.print(table)


def main() -> None:
    app()
