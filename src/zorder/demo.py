"""The main job on built-in data: Databricks' network-connections experiment.

Generates random connections (src_ip, dst_ip as dotted IPv4 strings,
src_port, dst_port), writes them as Delta tables as written, laid out
linearly and along the Z-order and Hilbert curves, measures how much
single-column equality filters skip on each (Databricks' skipping
effectiveness) against the ceiling 1 - F^(-1/d), times a point lookup, and
draws each layout's file boxes. :func:`run_demo` does all of it and returns
a frozen :class:`DemoResult`; ``zorder demo`` only prints it.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyarrow as pa
from deltalake import DeltaTable
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from zorder.api.paths import write
from zorder.api.read import explain, read, skipping_effectiveness
from zorder.api.scanning import ScanReport
from zorder.columns import sql_identifier
from zorder.curves.kinds import Curve
from zorder.skipping.sql import sql_literal
from zorder.spark.compat import arrow_frame
from zorder.table import (
    CommitRequest,
    Storage,
    commit_files,
    describe_written_files,
    is_delta_table,
    normalize_uri,
)
from zorder.table.delta.schema import delta_schema

__all__ = [
    "DEMO_LAYOUTS",
    "NETWORK_COLUMNS",
    "DemoResult",
    "LayoutResult",
    "LookupTimings",
    "PointLookup",
    "best_seconds",
    "ceiling",
    "equality_effectiveness",
    "network_connections",
    "network_frame",
    "random_network_values",
    "run_demo",
    "time_point_lookups",
    "write_as_written",
]

NETWORK_COLUMNS = ("src_ip", "dst_ip", "src_port", "dst_port")


def network_connections(rows: int, *, seed: int = 2018) -> pa.Table:
    """Random connections: uniform IPv4 addresses (as strings) and ports."""
    rng = np.random.default_rng(seed)

    def ips() -> list[str]:
        return [".".join(map(str, octets)) for octets in rng.integers(0, 256, (rows, 4)).tolist()]

    return pa.table(
        {
            "src_ip": ips(),
            "dst_ip": ips(),
            "src_port": rng.integers(0, 65536, rows).astype(np.int32),
            "dst_port": rng.integers(0, 65536, rows).astype(np.int32),
        }
    )


def network_frame(spark: SparkSession, rows: int, *, seed: int = 2018) -> DataFrame:
    """The same kind of connections generated inside Spark, for sizes the driver should not hold.

    Deterministic for a given ``rows`` and ``seed`` (a fixed number of input partitions).
    """

    def ip(offset: int) -> Column:
        octets = [(F.rand(seed + offset + i) * 256).cast("int") for i in range(4)]
        return F.concat_ws(".", *octets)

    return spark.range(rows, numPartitions=16).select(
        ip(100).alias("src_ip"),
        ip(200).alias("dst_ip"),
        (F.rand(seed + 300) * 65536).cast("int").alias("src_port"),
        (F.rand(seed + 301) * 65536).cast("int").alias("dst_port"),
    )


def random_network_values(rng: np.random.Generator, count: int) -> dict[str, list[object]]:
    """``count`` random values of each column's domain (most absent from any given table)."""

    def ips() -> list[object]:
        return [".".join(map(str, o)) for o in rng.integers(0, 256, (count, 4)).tolist()]

    def ports() -> list[object]:
        return [int(p) for p in rng.integers(0, 65536, count)]

    return {"src_ip": ips(), "dst_ip": ips(), "src_port": ports(), "dst_port": ports()}


def ceiling(files: int, dims: int) -> float:
    """Best mean skipping of single-column equality filters: 1 - F^(-1/d)."""
    return 1 - files ** (-1 / dims) if files and dims else 0.0


def equality_effectiveness(
    path: str | Path, values: Mapping[str, Sequence[object]]
) -> dict[str, float]:
    """Per column, Databricks' skipping effectiveness of ``column = value`` filters."""
    return {
        column: skipping_effectiveness(
            str(path), [f"{sql_identifier(column)} = {sql_literal(v)}" for v in wanted]
        )
        for column, wanted in values.items()
        if wanted
    }


@dataclass(frozen=True)
class LayoutResult:
    """Skipping effectiveness of one layout of a table (and how long writing it took)."""

    layout: str
    files: int
    per_column: Mapping[str, float]
    seconds: float = 0.0

    @property
    def mean(self) -> float:
        return float(np.mean(list(self.per_column.values())))

    @property
    def ceiling(self) -> float:
        return ceiling(self.files, len(self.per_column))


def file_count(path: str | Path) -> int:
    return len(DeltaTable(normalize_uri(path)).file_uris())


def write_as_written(
    df: DataFrame, path: str | Path, files: int, *, mode: Literal["create", "overwrite"] = "create"
) -> None:
    """The table as a plain writer leaves it: rows spread at random over ``files`` files."""
    storage = Storage.of(normalize_uri(path))
    directory = f"plain-{uuid.uuid4().hex[:12]}"
    df.repartition(files).write.parquet(f"{storage.uri}/{directory}")
    written = describe_written_files(storage, directory, df.columns, {})
    request = CommitRequest(
        storage=storage, schema=delta_schema(df.schema.json()), files=written, mode=mode
    )
    commit_files(request)


def best_seconds(run: Callable[[], object], repeat: int) -> float:
    """The fastest of ``repeat`` runs, in seconds."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


@dataclass(frozen=True)
class PointLookup:
    """One filter through ``read()`` against reading every row of the same table."""

    where: str
    files_scanned: int
    files_total: int
    rows_fraction: float
    rows_found: int
    lookup_s: float
    full_scan_s: float  # every file, Spark's row-group skipping off
    row_group_pruned_s: float | None = None  # every file, Spark's row-group skipping on

    @property
    def ratio(self) -> float:
        return self.lookup_s / self.full_scan_s

    @property
    def ratio_to_row_group_pruned(self) -> float | None:
        pruned = self.row_group_pruned_s
        return None if pruned is None else self.lookup_s / pruned


@dataclass(frozen=True)
class LookupTimings:
    """Point lookups on one table, with their medians."""

    table_rows: int
    lookups: tuple[PointLookup, ...]

    @property
    def median_ratio(self) -> float:
        return statistics.median(q.ratio for q in self.lookups)

    @property
    def median_rows_fraction(self) -> float:
        return statistics.median(q.rows_fraction for q in self.lookups)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data, the derived ratios and medians included."""
        queries = [
            dataclasses.asdict(q)
            | {"ratio": q.ratio, "ratio_to_row_group_pruned": q.ratio_to_row_group_pruned}
            for q in self.lookups
        ]
        return {
            "table_rows": self.table_rows,
            "queries": queries,
            "median_ratio": self.median_ratio,
            "median_rows_fraction": self.median_rows_fraction,
        }


def time_point_lookups(
    spark: SparkSession,
    path: str,
    wheres: Sequence[str],
    repeat: int,
    *,
    row_group_pruned: bool = False,
) -> LookupTimings:
    """Each filter through ``read()`` against reading every row of the table, best of ``repeat``.

    Both sides start from the table's path: the lookup plans on statistics and
    reads the kept files; the full scan reads every file of the same snapshot
    with Spark's own row-group skipping switched off. ``row_group_pruned``
    also times the full scan with that skipping left on.
    """
    results = []
    report: ScanReport | None = None
    for where in wheres:
        report = explain(path, where)

        def lookup(where: str = where) -> int:
            return read(spark, path, where).count()

        def full_scan(where: str = where) -> int:
            return read(spark, path).where(where).count()

        lookup_s = best_seconds(lookup, repeat)
        pruned_s = best_seconds(full_scan, repeat) if row_group_pruned else None
        spark.conf.set("spark.sql.parquet.filterPushdown", "false")
        try:
            full_scan_s = best_seconds(full_scan, repeat)
        finally:
            spark.conf.unset("spark.sql.parquet.filterPushdown")
        results.append(
            PointLookup(
                where=where,
                files_scanned=report.files_scanned,
                files_total=report.files_total,
                rows_fraction=report.rows_fraction,
                rows_found=lookup(),
                lookup_s=lookup_s,
                full_scan_s=full_scan_s,
                row_group_pruned_s=pruned_s,
            )
        )
    return LookupTimings(report.rows_total if report else 0, tuple(results))


DemoLayout = Literal["as written", "linear", "zorder", "hilbert"]
DEMO_LAYOUTS: tuple[DemoLayout, ...] = ("as written", "linear", "zorder", "hilbert")


@dataclass(frozen=True)
class DemoResult:
    """What ``make demo`` measured: each layout, a point lookup, and the pictures."""

    rows: int
    output: Path
    layouts: tuple[LayoutResult, ...]
    lookup: PointLookup
    pictures: Mapping[str, Path]

    @property
    def ceiling(self) -> float:
        return self.layouts[0].ceiling

    def table_path(self, layout: str) -> Path:
        return self.output / f"connections_{layout.replace(' ', '_')}"

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data (``zorder demo --json``), the derived means and ratios included."""
        return {
            "rows": self.rows,
            "output": str(self.output),
            "ceiling": self.ceiling,
            "layouts": [
                dataclasses.asdict(layout)
                | {"mean": layout.mean, "table": str(self.table_path(layout.layout))}
                for layout in self.layouts
            ],
            "lookup": dataclasses.asdict(self.lookup)
            | {
                "ratio": self.lookup.ratio,
                "ratio_to_row_group_pruned": self.lookup.ratio_to_row_group_pruned,
            },
            "pictures": {name: str(path) for name, path in self.pictures.items()},
        }


def run_demo(
    spark: SparkSession,
    *,
    rows: int = 1_000_000,
    files: int = 100,
    filters: int = 200,
    output: str | Path = "demo-output",
    progress: Callable[[str], None] = lambda message: None,
) -> DemoResult:
    """Databricks' experiment on ``rows`` generated connections, into tables under ``output``.

    Each layout (as written, linear, Z-order, Hilbert; ``files`` files each)
    is measured with ``filters`` equality filters per column on values of the
    table; a point lookup on the Z-ordered table is timed against a full scan;
    each layout's file boxes are drawn in ``src_ip`` x ``dst_port``.
    ``progress`` is told what is happening.
    """
    from zorder.plot import plot_layout  # matplotlib only for the pictures

    output = Path(output)
    progress(f"generating {rows:,} random connections")
    data = network_connections(rows)
    df = arrow_frame(spark, data).cache()
    df.count()
    picks = np.random.default_rng(7).integers(0, rows, filters)
    values = {c: [data.column(c)[int(i)].as_py() for i in picks] for c in NETWORK_COLUMNS}
    layouts = []
    for layout in DEMO_LAYOUTS:
        path = output / f"connections_{layout.replace(' ', '_')}"
        progress(f"writing {path} ({layout}, {files} files)")
        started = time.perf_counter()
        if layout == "as written":
            exists = is_delta_table(Storage.of(normalize_uri(path)))
            write_as_written(df, path, files, mode="overwrite" if exists else "create")
        else:
            curve: Curve = layout
            write(
                df,
                str(path),
                by=list(NETWORK_COLUMNS),
                curve=curve,
                num_files=files,
                mode="overwrite",
            )
        seconds = time.perf_counter() - started
        progress(f"measuring skipping on {path}")
        effect = equality_effectiveness(path, values)
        layouts.append(LayoutResult(layout, file_count(path), effect, seconds))
    df.unpersist()
    row = data.slice(rows // 2, 1).to_pylist()[0]
    where = f"src_ip = {sql_literal(row['src_ip'])} AND src_port = {row['src_port']}"
    progress("timing a point lookup")
    # Best of two: the first run of a query pays for planning and class loading.
    lookup = time_point_lookups(spark, str(output / "connections_zorder"), [where], 2)
    pictures: dict[str, Path] = {}
    for layout in DEMO_LAYOUTS:
        name = layout.replace(" ", "_")
        progress(f"drawing the {layout} layout")
        pictures[layout] = plot_layout(
            str(output / f"connections_{name}"),
            output / f"layout_{name}.png",
            x="src_ip",
            y="dst_port",
        )
    return DemoResult(rows, output, tuple(layouts), lookup.lookups[0], pictures)
