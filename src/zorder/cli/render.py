"""How each result of the API looks in a terminal: rich tables and lines, nothing printed.

Each function takes one frozen result and returns what to print, in order;
:class:`zorder.cli.output.ConsoleOutput` prints it. Their JSON forms are in
:mod:`zorder.cli.output` (any result) or here when a command's JSON differs
from its result's fields (``stats_json``).
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from zorder.cli.fitting import FittedTable
from zorder.sizes import size_text
from zorder.table.clustering import SPARK_PART_FILE

if TYPE_CHECKING:
    from zorder.api import (
        ClusterMetrics,
        ColumnDepth,
        RestoreResult,
        ScanReport,
        TableDescription,
        VacuumResult,
    )
    from zorder.api.advise import Advice
    from zorder.bench import BenchResult, LayoutQuality
    from zorder.curves.kinds import ClusteringSpec
    from zorder.demo import DemoResult, LayoutResult

Rendered = list[RenderableType]


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
    if isinstance(value, dict):  # a struct's or a map's value, at any depth
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return str(value)


def text(value: Any) -> str:
    """A value as a cell shows it: None as nothing, the rest as its JSON text."""
    if value is None:
        return ""
    shown = plain(value)
    return json.dumps(shown, ensure_ascii=False) if isinstance(shown, dict | list) else str(shown)


def wrote(path: str | Path) -> Rendered:
    return [Text(f"wrote {path}")]


def curve_grid(name: str, grid: Sequence[Sequence[int]]) -> Rendered:
    side = len(grid)
    table = Table(title=f"{name} index, {side}x{side} grid (x = first column, y = second)")
    table.add_column("y \\ x", justify="right", style="bold")
    for x in range(side):
        table.add_column(str(x), justify="right")
    for y, row in enumerate(grid):
        table.add_row(str(y), *(str(i) for i in row))
    return [table]


def metrics(result: ClusterMetrics) -> Rendered:
    if result.skipped:
        return [
            Text(
                f"{result.operation} {result.table_uri}: skipped, the table already records "
                "this transaction (or a newer one of its app id); nothing was written"
            )
        ]
    table = Table(title=f"{result.operation} {result.table_uri}", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", justify="right")
    rows = [
        ("clustered by", f"{', '.join(result.by)} ({result.curve}, {result.method} keys)"),
        *((("bloom filters", ", ".join(result.bloom_filters)),) if result.bloom_filters else ()),
        ("files removed", f"{result.files_removed:,} ({size_text(result.bytes_removed)})"),
        ("files added", f"{result.files_added:,} ({size_text(result.bytes_added)})"),
        ("rows", f"{result.rows:,}"),
        *(
            (f"avg depth of {before.column}", f"{_depth(before)} → {_depth(after)}")
            for before, after in zip(result.depth_before, result.depth_after, strict=True)
        ),
        ("table version", "unchanged" if result.version is None else str(result.version)),
        *((("engine", _engine(result)),) if result.engine else ()),
        ("seconds", f"{result.seconds:.1f}"),
    ]
    for name, value in rows:
        table.add_row(name, value)
    return [table, *(Text(f"note: {note}", style="yellow") for note in result.notes)]


def _engine(result: ClusterMetrics) -> str:
    """Who wrote the files, and why that engine: Spark, or this process (no JVM)."""
    where = "Spark" if result.engine == "spark" else "in process, no JVM"
    return f"{result.engine} ({where}): {result.engine_reason}"


def _depth(depth: ColumnDepth) -> str:
    """A column's average depth as a cell shows it; "-" when no file bounds the column."""
    return f"{depth.average_depth:.2f}" if depth.files else "-"


def histogram_text(histogram: Mapping[int, int]) -> str:
    """A depth histogram in one cell: ``depth:files`` pairs (``1:40 2:3 32:5``)."""
    return " ".join(f"{bucket}:{files:,}" for bucket, files in histogram.items()) or "-"


def depths(result: TableDescription) -> Rendered:
    """One row per described column: how far its files' [min, max] ranges overlap."""
    if not result.depth:
        return []
    unbounded = any(d.null_files or d.unknown_files for d in result.depth)
    names = [
        "column",
        "avg depth",
        "avg overlaps",
        "histogram",
        "files",
        "constant",
        *(("all NULL", "no bounds") if unbounded else ()),
    ]
    rows = [
        [
            d.column,
            _depth(d),
            f"{d.average_overlaps:.2f}" if d.files else "-",
            histogram_text(d.depth_histogram),
            f"{d.files:,}",
            f"{d.constant_files:,}",
            *((f"{d.null_files:,}", f"{d.unknown_files:,}") if unbounded else ()),
        ]
        for d in result.depth
    ]
    right = frozenset(i for i in range(1, len(names)) if names[i] != "histogram")
    title = "clustering depth, per partition (1.00: no two files share a value)"
    hint = "--columns picks the table columns measured; --json has every field"
    return [FittedTable(title, names, rows, right=right, keep="leading", hint=hint)]


def advice(result: Advice) -> Rendered:
    from zorder.advice.advisor import BLOOM_RULE  # loaded with the result already

    table = Table(
        title=(
            f"{result.filters} filters, {result.sample_rows:,} sampled rows, "
            f"{result.num_files} files ({result.seconds:.1f} s)"
        )
    )
    table.add_column("layout")
    table.add_column("rows scanned", justify="right")
    table.add_column("without filters", justify="right")
    table.add_column("spec")
    for candidate in result.candidates:
        chosen = candidate.spec == result.spec
        without = candidate.scanned_without_blooms
        table.add_row(
            candidate.name,
            f"{candidate.expected_scanned:.3f}",
            f"{without:.3f}" if candidate.spec.bloom_filters and without is not None else "",
            candidate.spec.describe(),
            style="bold" if chosen else None,
        )
    if result.current_scanned is not None:
        table.add_row("the table now", f"{result.current_scanned:.3f}", "", "its files as they are")
    shown: Rendered = [table]
    if result.left_out:
        shown.append(Text(f"{result.left_out} statement(s) never read the table: left out"))
    if result.blooms:
        lines = [f"  {b.describe()}" for b in result.blooms]
        shown.append(Text("\n".join([BLOOM_RULE + ":", *lines])))
    shown.append(
        Text(f"advised: {result.spec.describe()} ({result.expected_scanned:.3f} rows scanned)")
    )
    return shown


def spec_json(spec: ClusteringSpec) -> dict[str, Any]:
    """A spec as JSON, its workload cuts as the table records them."""
    return {
        "columns": list(spec.columns),
        "curve": spec.curve,
        "method": spec.method,
        "weights": list(spec.weights) if spec.weights is not None else None,
        "cuts": spec.cuts.to_json() if spec.cuts is not None else None,
        "bloom_filters": {b.column: b.fpp for b in spec.bloom_filters},
    }


def advice_json(result: Advice) -> dict[str, Any]:
    return {
        "spec": spec_json(result.spec),
        "expected_scanned": result.expected_scanned,
        "scanned_without_blooms": result.scanned_without_blooms,
        "candidates": [
            {
                "name": c.name,
                "described": c.spec.describe(),
                "spec": spec_json(c.spec),
                "expected_scanned": c.expected_scanned,
                "scanned_without_blooms": c.scanned_without_blooms,
            }
            for c in result.candidates
        ],
        "blooms": [
            {
                "column": b.column,
                "fpp": b.fpp,
                "chosen": b.chosen,
                "scanned_before": b.scanned_before,
                "scanned_after": b.scanned_after,
                "probe": b.probe,
                "filter_bytes": b.filter_bytes,
                "file_bytes": b.file_bytes,
                "described": b.describe(),
            }
            for b in result.blooms
        ],
        "num_files": result.num_files,
        "sample_rows": result.sample_rows,
        "filters": result.filters,
        "statements": result.statements,
        "left_out": result.left_out,
        "current_scanned": result.current_scanned,
        "seconds": result.seconds,
    }


_RETENTION_FROM = {
    "argument": "--retain-hours",
    "table": "the table's delta.deletedFileRetentionDuration",
    "default": "Delta's default; the table sets no delta.deletedFileRetentionDuration",
}


def vacuumed(result: VacuumResult) -> Rendered:
    shown: Rendered = []
    if result.files:
        table = Table(title=f"unused files of {result.table_uri}")
        table.add_column("file")
        for name in result.files:
            table.add_row(Text(name))
        shown.append(table)
    verb = "would delete" if result.dry_run else "deleted"
    hint = " (dry run: --delete to delete them)" if result.dry_run and result.files else ""
    source = _RETENTION_FROM.get(result.retention_from, result.retention_from)
    shown.append(
        Text(
            f"{verb} {len(result.files)} file(s) unused for {result.retain_hours:g} hours "
            f"({source}){hint}"
        )
    )
    return shown


def restored(result: RestoreResult) -> Rendered:
    if result.version is None:
        return [
            Text(
                f"{result.table_uri} already is what version {result.restored_version} was: "
                "nothing was committed"
            )
        ]
    # The location on a line of its own: a table's title would fold it.
    done = Text(
        f"restored version {result.restored_version} of {result.table_uri} "
        f"as version {result.version}"
    )
    table = Table(show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", justify="right")
    table.add_row("files removed", f"{result.files_removed:,} ({size_text(result.bytes_removed)})")
    table.add_row("files added", f"{result.files_added:,} ({size_text(result.bytes_added)})")
    return [done, table]


def scan(report: ScanReport) -> Rendered:
    shown: Rendered = [
        Text(
            f"{report.summary(blooms=False)}; {size_text(report.bytes_scanned)} "
            f"of {size_text(report.bytes_total)}"
        )
    ]
    probed = report.bloom_summary()
    if probed is not None:
        shown.append(Text(probed))
    if report.planned != "TRUE":
        # What skipping made of the filter: why a file was kept is read here.
        shown.append(Text(f"filter as planned: {report.planned}"))
    return shown


def stats_json(description: TableDescription) -> list[dict[str, Any]]:
    """``zorder stats --json``: one object a file, its min and max keyed by column."""
    files = []
    for f in description.files:
        entry: dict[str, Any] = {"path": f.path, "records": f.rows, "bytes": f.size}
        if f.partition:
            entry["partition"] = {k: plain(v) for k, v in f.partition.items()}
        for column in description.columns:
            entry[f"{column} min"] = plain(f.min_values.get(column))
            entry[f"{column} max"] = plain(f.max_values.get(column))
        files.append(entry)
    return files


# Inside a run a file's directories and its task's number tell it apart (Spark's
# part-<task>-<write uuid>...), so tables show those and --json the whole path.
def _short_name(name: str) -> str:
    match = SPARK_PART_FILE.match(name)
    return match["short"] if match else name


def _partition_text(partition: dict[str, Any]) -> str:
    return ", ".join(f"{k}={text(v) if v is not None else 'NULL'}" for k, v in partition.items())


def stats(result: TableDescription) -> Rendered:
    """One row per file, as wide as the terminal: the file, its rows, the clustering
    columns' bounds in their order, then its partition and run; what does not fit is named."""
    spec = result.spec or (result.clustering.spec if result.clustering else None)
    how = (
        f"clustered by {', '.join(spec.columns)} ({spec.curve}, {spec.method} keys)"
        if spec
        else "no zorder clustering recorded"
    )
    title = (
        f"{result.table_uri}: {_count(len(result.files), 'file')}, {result.rows:,} rows, "
        f"{size_text(result.size)}; {how}"
    )
    partitioned = any(f.partition for f in result.files)
    names = ["file", "records"]
    for column in result.columns:
        names += [f"{column} min", f"{column} max"]
    names += [*(["partition"] if partitioned else []), "run"]
    rows = []
    for f in result.files:
        cells = [_short_name(f.name) if f.run else f.name, _number(f.rows)]
        for column in result.columns:
            cells += [text(f.min_values.get(column)), text(f.max_values.get(column))]
        if partitioned:
            cells.append(_partition_text(dict(f.partition)))
        rows.append([*cells, text(f.run.id if f.run else "-")])
    numeric = [
        all(
            isinstance(v, int | float | decimal.Decimal) and not isinstance(v, bool)
            for f in result.files
            for v in (f.min_values.get(column), f.max_values.get(column))
            if v is not None
        )
        for column in result.columns
    ]
    right = frozenset([1, *(2 + 2 * i + k for i, n in enumerate(numeric) if n for k in (0, 1))])
    hint = "--columns picks which bounds to show; --json has every field"
    return [FittedTable(title, names, rows, right=right, keep="leading", hint=hint)]


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _number(count: int | None) -> str:
    """A count (rows, files) as every table writes one: 120,000; "-" when unknown."""
    return "-" if count is None else f"{count:,}"


def runs(result: TableDescription) -> Rendered:
    spec = result.spec
    if spec is None:
        how = "no spec recorded (pass --by to write or optimize)"
    else:
        shaped = "".join(f", {part}" for part in spec.shape())
        how = f"{', '.join(spec.columns)} ({spec.curve}, {spec.method} keys{shaped})"
    target = size_text(result.target_file_size) if result.target_file_size else "not set"
    loose = result.unclustered
    summary = Text.assemble(
        (result.table_uri, "bold"),
        f", version {result.version}: {_count(len(result.files), 'file')}, "
        f"{result.rows:,} rows, {size_text(result.size)}\n"
        f"clustered by: {how}\n"
        f"target file size (delta.targetFileSize): {target}\n"
        f"not clustered by the spec: {_count(len(loose), 'file')}, "
        f"{sum(f.rows or 0 for f in loose):,} rows, {size_text(sum(f.size for f in loose))} "
        f"({result.unclustered_fraction:.0%} of the bytes)"
        + (
            f"\ndeleted rows (deletion vectors; an optimize purges them): {result.deleted_rows:,}"
            if result.deleted_rows
            else ""
        ),
    )
    if not result.runs:
        return [summary, *depths(result)]
    partitioned = any(r.partition for r in result.runs)
    deleted = any(r.deleted_rows for r in result.runs)
    names = [
        *(("partition",) if partitioned else ()),
        "run",
        "spec",
        "files",
        "rows",
        *(("deleted",) if deleted else ()),
        "size",
    ]
    rows = [
        [
            *((_partition_text(dict(run.partition)),) if partitioned else ()),
            run.run.id,
            "current" if run.current else "older",
            f"{run.files:,}",
            _number(run.rows),
            *((f"{run.deleted_rows:,}",) if deleted else ()),
            size_text(run.size),
        ]
        for run in result.runs
    ]
    right = frozenset(
        i for i, name in enumerate(names) if name in ("files", "rows", "deleted", "size")
    )
    title = "runs (one cube of the table each)"
    hint = "--json has every run whole"
    fitted = FittedTable(title, names, rows, right=right, keep="leading", hint=hint)
    return [summary, fitted, *depths(result)]


def demo(result: DemoResult) -> Rendered:
    """One column per layout (a handful: fits 80 columns), one row per measure."""
    from zorder.demo import NETWORK_COLUMNS

    table = Table(title="Fraction of rows skipped by column = value")
    table.add_column("")
    for layout in result.layouts:
        table.add_column(layout.layout, justify="right")
    measures: list[tuple[str, Callable[[LayoutResult], str]]] = [
        *((c, lambda r, c=c: f"{r.per_column[c]:.2f}") for c in NETWORK_COLUMNS),
        ("mean", lambda r: f"{r.mean:.2f}"),
        ("mean / bound", lambda r: f"{r.mean / r.ceiling:.0%}" if r.ceiling else "-"),
        ("files", lambda r: f"{r.files:,}"),
        ("write s", lambda r: f"{r.seconds:.1f}"),
    ]
    for name, shown in measures:
        table.add_row(name, *(shown(layout) for layout in result.layouts))
    first = result.layouts[0]
    lookup = result.lookup
    lines = [
        f"bound: 1 - F^(-1/d) = {result.ceiling:.3f} for {first.files} files and "
        f"{len(NETWORK_COLUMNS)} columns, the best mean for values spread evenly over the "
        "columns' ranges (values held by fewer rows can beat it). "
        f"Tables are in {result.output}/.",
        f"Point lookup {lookup.where}: {lookup.rows_found} row(s); scanned "
        f"{lookup.files_scanned} of {lookup.files_total} files "
        f"({lookup.rows_fraction:.1%} of rows); {lookup.lookup_s:.2f} s through read() against "
        f"{lookup.full_scan_s:.2f} s reading every row.",
        *(
            f"  picture of the {name} layout: {picture}"
            for name, picture in result.pictures.items()
        ),
    ]
    return [table, *(Text(line) for line in lines)]


def bench(result: BenchResult) -> Rendered:
    from zorder.demo import NETWORK_COLUMNS

    shown: Rendered = []
    for rows_count, qualities in result.layout.items():
        # One column per layout, one row per measure: layout names wrap at their spaces.
        table = Table(title=f"Layout quality: {rows_count:,} rows into {result.config.files} files")
        table.add_column("")
        for q in qualities:
            table.add_column(q.layout, justify="right")
        measures: list[tuple[str, Callable[[LayoutQuality], str]]] = [
            *((c, lambda q, c=c: f"{q.sampled.per_column[c]:.3f}") for c in NETWORK_COLUMNS),
            ("sampled mean", lambda q: f"{q.sampled.mean:.3f}"),
            ("mean / bound", lambda q: f"{q.sampled.of_ceiling:.0%}"),
            ("random mean", lambda q: f"{q.random.mean:.3f}"),
            ("files", lambda q: f"{q.files:,}"),
        ]
        for name, measured in measures:
            table.add_row(name, *(measured(q) for q in qualities))
        shown.append(table)
    table = Table(title=f"Cost of clustering into {result.config.files} files (fastest run)")
    for name in ("rows", "contender", "seconds", "peak MiB"):
        table.add_column(name, justify="left" if name == "contender" else "right")
    for rows_count, runs in result.cost.items():
        for run in runs:
            peaks = ", ".join(f"{k} {v:,.0f}" for k, v in run.peak_mib.items() if v is not None)
            table.add_row(f"{rows_count:,}", run.contender, f"{run.seconds:.1f}", peaks or "-")
    shown.append(table)
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
    shown.append(table)
    return shown
