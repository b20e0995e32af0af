"""Everything the ``zorder`` command prints: rich tables for people, JSON for programs.

The commands in :mod:`zorder.cli.app` compute nothing; they hand the frozen
results of the API to the functions here.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import json
import re
import traceback
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession

    from zorder.api import ClusterMetrics, ScanReport, TableDescription, VacuumResult
    from zorder.bench import BenchResult
    from zorder.demo import DemoResult

console = Console()
# Errors go to stderr, so that what a command prints (JSON lines with --json) stays clean.
error_console = Console(stderr=True)


def plain(value: Any) -> Any:
    """``value`` as JSON can hold it: numbers, strings, booleans, None; the rest as text."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, decimal.Decimal | Path):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def _jsonable(value: Any) -> Any:
    """A frozen result (dataclasses, mappings, sequences inside) as plain JSON values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return plain(value)


def result_json(result: Any) -> None:
    """Any frozen result of the API as one JSON document on stdout (``--json``)."""
    typer.echo(json.dumps(_jsonable(result), indent=2))


def demo_json(result: DemoResult) -> None:
    """``zorder demo --json``: the measurements, with their means and ratios."""
    typer.echo(json.dumps(result.to_json(), indent=2))


def rows_json(table: pa.Table) -> None:
    """Rows as JSON lines, one object a row (``zorder query --json``)."""
    for row in table.to_pylist():
        typer.echo(json.dumps({k: plain(v) for k, v in row.items()}))


def _text(value: Any) -> str:
    return "" if value is None else str(plain(value))


def size_text(count: int) -> str:
    """Bytes in the largest unit that keeps the number at least 1 (1,024 bytes a KB)."""
    size = float(count)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1024 or unit == "TB":
            return f"{size:,.1f} {unit}" if unit != "B" else f"{int(size):,} B"
        size /= 1024
    return f"{count} B"  # pragma: no cover


def fail(message: str, *, spark_log: Path | None = None) -> NoReturn:
    """Bad input: one red line naming the problem, exit code 2."""
    error_console.print(f"[bold red]error:[/] {message}", highlight=False)
    if spark_log is not None:
        error_console.print(f"Spark's log: {spark_log}", highlight=False)
    raise typer.Exit(code=2)


def bug(error: BaseException, log: Path, *, spark_log: Path | None = None) -> NoReturn:
    """An error zorder did not raise on purpose: say so, and where its traceback went."""
    log.write_text("".join(traceback.format_exception(error)))
    error_console.print(
        f"[bold red]internal error:[/] {type(error).__name__}: {error}\n"
        f"This is a bug in zorder; the traceback is in {log}.",
        highlight=False,
    )
    if spark_log is not None:
        error_console.print(f"Spark's log: {spark_log}", highlight=False)
    raise typer.Exit(code=1)


def working(message: str, spark: SparkSession | None) -> AbstractContextManager[None]:
    """One status line while Spark works (see :mod:`zorder.api.progress`)."""
    from zorder.api.progress import spark_status

    return spark_status(message, spark, console=console)


def version(text: str) -> None:
    console.print(f"zorder {text}")


def curve_grid(name: str, grid: Sequence[Sequence[int]]) -> None:
    side = len(grid)
    table = Table(title=f"{name} index, {side}x{side} grid (x = first column, y = second)")
    table.add_column("y \\ x", justify="right", style="bold")
    for x in range(side):
        table.add_column(str(x), justify="right")
    for y, row in enumerate(grid):
        table.add_row(str(y), *(str(i) for i in row))
    console.print(table)


def metrics(result: ClusterMetrics) -> None:
    table = Table(title=f"{result.operation} {result.table_uri}", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", justify="right")
    rows = [
        ("clustered by", f"{', '.join(result.by)} ({result.curve}, {result.method} keys)"),
        ("files removed", f"{result.files_removed:,} ({size_text(result.bytes_removed)})"),
        ("files added", f"{result.files_added:,} ({size_text(result.bytes_added)})"),
        ("rows", f"{result.rows:,}"),
        ("table version", "unchanged" if result.version is None else str(result.version)),
        ("seconds", f"{result.seconds:.1f}"),
    ]
    for name, value in rows:
        table.add_row(name, value)
    console.print(table)


def vacuumed(result: VacuumResult) -> None:
    if result.files:
        table = Table(title=f"unused files of {result.table_uri}")
        table.add_column("file")
        for name in result.files:
            table.add_row(name)
        console.print(table)
    verb = "would delete" if result.dry_run else "deleted"
    hint = " (dry run: --delete to delete them)" if result.dry_run and result.files else ""
    console.print(
        f"{verb} {len(result.files)} file(s) unused for {result.retain_hours:g} hours{hint}"
    )


def rows(title: str, table: pa.Table) -> None:
    shown = Table(title=title)
    for name in table.column_names:
        shown.add_column(name, overflow="fold")
    for row in table.to_pylist():
        shown.add_row(*[_text(v) for v in row.values()])
    console.print(shown)


def scan(report: ScanReport) -> None:
    console.print(
        f"{report.summary()}; {size_text(report.bytes_scanned)} of {size_text(report.bytes_total)}",
        highlight=False,
    )


def description_json(description: TableDescription) -> None:
    files = []
    for f in description.files:
        entry: dict[str, Any] = {"path": f.path, "records": f.rows, "bytes": f.size}
        if f.partition:
            entry["partition"] = {k: plain(v) for k, v in f.partition.items()}
        for column in description.columns:
            entry[f"{column} min"] = plain(f.min_values.get(column))
            entry[f"{column} max"] = plain(f.max_values.get(column))
        files.append(entry)
    typer.echo(json.dumps(files, indent=2))


# Spark names a file part-<task>-<write uuid>-c<n>.<codec>.parquet; inside a run the task
# number alone tells its files apart, so tables show that and --json the whole path.
_SPARK_FILE_NAME = re.compile(r"^(?P<short>(?:.*/)?part-\d+)-[0-9a-f-]{36}-c\d+(?:\.\w+)*$")


def _short_name(name: str) -> str:
    match = _SPARK_FILE_NAME.match(name)
    return match["short"] if match else name


def description(result: TableDescription) -> None:
    spec = result.spec or (result.clustering.spec if result.clustering else None)
    how = (
        f"clustered by {', '.join(spec.columns)} ({spec.curve}, {spec.method} keys)"
        if spec
        else "no zorder clustering recorded"
    )
    table = Table(
        title=f"{result.table_uri}: {len(result.files)} files, {result.rows:,} rows, "
        f"{size_text(result.size)}; {how}"
    )
    partitioned = any(f.partition for f in result.files)
    if partitioned:
        table.add_column("partition", overflow="fold")
    table.add_column("run", overflow="fold")
    table.add_column("file", overflow="fold")
    table.add_column("records", justify="right")
    for column in result.columns:
        table.add_column(f"{column} min", justify="right", overflow="fold")
        table.add_column(f"{column} max", justify="right", overflow="fold")
    for f in result.files:
        name = _short_name(f.name) if f.run else f.name
        cells = [_text(f.run.id if f.run else "-"), name, _text(f.rows)]
        if partitioned:
            where = ", ".join(
                f"{k}={_text(v) if v is not None else 'NULL'}" for k, v in f.partition.items()
            )
            cells.insert(0, where)
        for column in result.columns:
            cells += [_text(f.min_values.get(column)), _text(f.max_values.get(column))]
        table.add_row(*cells)
    console.print(table)


def runs(result: TableDescription) -> None:
    spec = result.spec
    how = (
        f"{', '.join(spec.columns)} ({spec.curve}, {spec.method} keys)"
        if spec
        else "no spec recorded (pass --by to write or optimize)"
    )
    target = size_text(result.target_file_size) if result.target_file_size else "not set"
    loose = result.unclustered
    console.print(
        f"[bold]{result.table_uri}[/bold], version {result.version}: {len(result.files):,} files, "
        f"{result.rows:,} rows, {size_text(result.size)}\n"
        f"clustered by: {how}\n"
        f"target file size (delta.targetFileSize): {target}\n"
        f"not clustered by the spec: {len(loose):,} files, "
        f"{sum(f.rows or 0 for f in loose):,} rows, {size_text(sum(f.size for f in loose))} "
        f"({result.unclustered_fraction:.0%} of the bytes)"
        + (
            f"\ndeleted rows (deletion vectors; an optimize purges them): {result.deleted_rows:,}"
            if result.deleted_rows
            else ""
        ),
        highlight=False,
    )
    if not result.runs:
        return
    table = Table(title="runs (one cube of the table each)")
    partitioned = any(r.partition for r in result.runs)
    deleted = any(r.deleted_rows for r in result.runs)
    if partitioned:
        table.add_column("partition", overflow="fold")
    names = ("run", "spec", "files", "rows", *(("deleted",) if deleted else ()), "size")
    for name in names:
        table.add_column(name, justify="left" if name in ("run", "spec") else "right")
    for run in result.runs:
        cells = [
            run.run.id,
            "current" if run.current else "older",
            f"{run.files:,}",
            _text(run.rows),
            *((f"{run.deleted_rows:,}",) if deleted else ()),
            size_text(run.size),
        ]
        if partitioned:
            where = ", ".join(
                f"{k}={_text(v) if v is not None else 'NULL'}" for k, v in run.partition.items()
            )
            cells.insert(0, where)
        table.add_row(*cells)
    console.print(table)


def demo(result: DemoResult) -> None:
    from zorder.demo import NETWORK_COLUMNS

    table = Table(title="Skipping effectiveness: fraction of rows skipped by column = value")
    for name in ("layout", "files", *NETWORK_COLUMNS, "mean", "of ceiling", "write s"):
        table.add_column(name, justify="left" if name == "layout" else "right")
    for layout in result.layouts:
        table.add_row(
            layout.layout,
            str(layout.files),
            *(f"{layout.per_column[c]:.2f}" for c in NETWORK_COLUMNS),
            f"{layout.mean:.2f}",
            f"{layout.mean / layout.ceiling:.0%}" if layout.ceiling else "-",
            f"{layout.seconds:.1f}",
        )
    console.print(table)
    first = result.layouts[0]
    console.print(
        f"Ceiling for {first.files} files and {len(NETWORK_COLUMNS)} columns: "
        f"1 - F^(-1/d) = {result.ceiling:.3f}. Tables are in {result.output}/."
    )
    lookup = result.lookup
    console.print(
        f"Point lookup {lookup.where}: {lookup.rows_found} row(s); scanned "
        f"{lookup.files_scanned} of {lookup.files_total} files "
        f"({lookup.rows_fraction:.1%} of rows); {lookup.lookup_s:.2f} s through read() against "
        f"{lookup.full_scan_s:.2f} s reading every row.",
        highlight=False,
    )
    for name, picture in result.pictures.items():
        console.print(f"  picture of the {name} layout: {picture}")


def bench(result: BenchResult) -> None:
    from zorder.demo import NETWORK_COLUMNS

    for rows_count, qualities in result.layout.items():
        table = Table(title=f"Layout quality: {rows_count:,} rows into {result.config.files} files")
        for name in ("layout", "files", *NETWORK_COLUMNS, "sampled", "of ceiling", "random"):
            table.add_column(name, justify="left" if name == "layout" else "right")
        for q in qualities:
            table.add_row(
                q.layout,
                str(q.files),
                *(f"{q.sampled.per_column[c]:.3f}" for c in NETWORK_COLUMNS),
                f"{q.sampled.mean:.3f}",
                f"{q.sampled.of_ceiling:.0%}",
                f"{q.random.mean:.3f}",
            )
        console.print(table)
    table = Table(title=f"Cost of clustering into {result.config.files} files (fastest run)")
    for name in ("rows", "contender", "seconds", "peak MiB"):
        table.add_column(name, justify="left" if name == "contender" else "right")
    for rows_count, runs in result.cost.items():
        for run in runs:
            peaks = ", ".join(f"{k} {v:,.0f}" for k, v in run.peak_mib.items() if v is not None)
            table.add_row(f"{rows_count:,}", run.contender, f"{run.seconds:.1f}", peaks or "-")
    console.print(table)
    table = Table(title=f"Point lookups on {result.reads.table_rows:,} Z-ordered rows")
    for name in ("filter", "files scanned", "rows in them", "read()", "all rows", "ratio"):
        table.add_column(name, justify="left" if name == "filter" else "right")
    for lookup in result.reads.lookups:
        table.add_row(
            lookup.where,
            f"{lookup.files_scanned} of {lookup.files_total}",
            f"{lookup.rows_fraction:.1%}",
            f"{lookup.lookup_s:.2f} s",
            f"{lookup.full_scan_s:.2f} s",
            f"{lookup.ratio:.2f}",
        )
    console.print(table)
