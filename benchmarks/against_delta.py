"""Against the tool Delta users already have: ``OPTIMIZE ZORDER BY`` and liquid clustering.

One session built as a Delta user builds theirs (``SparkSession.builder``
with Delta Spark's jars from Maven Central, its SQL extension and catalog,
Delta's defaults otherwise; ``tests/delta_spark.py`` picks the release for the
Spark line) runs both sides on copies of the same table, written unclustered
by Delta Spark itself.

Clustering (``--cases``):

- ``network-1m``, ``network-10m``: the demo's network connections
  (``zorder.demo.network_frame``), unpartitioned, by src_ip, dst_ip,
  src_port, dst_port;
- ``tpch-sf1``: TPC-H lineitem at SF 1 (DuckDB's tpch extension), by the
  columns its spec-drawn filters use (``benchmarks.tpch_filters.BY``);
- ``partitioned``: network connections partitioned by day, one day
  optimized (``OPTIMIZE ... WHERE day = <last day> ZORDER BY`` against
  ``zorder.optimize(where=...)``).

Delta runs with ``spark.databricks.delta.optimize.maxFileSize`` = the bytes
it optimizes / F (with Delta's default of 1 GiB it writes one file at these
sizes); zorder runs ``optimize(by=..., num_files=F, full=True)``, Z-order
against Z-order, with its default engine (``auto``: in process at these
bounds, else Spark) and, where that chose pyarrow, with ``engine="spark"``
too. ``--rounds`` rounds alternate the order; each side's best is kept. For
each: wall time; bytes removed and added, from the commit's own add and
remove actions; the heap the JVM (driver and executor: one JVM in local
mode) peaked at, and the Python driver's peak resident memory. Then the
skipping each layout gives on the same filters, judged by both engines on
both tables: the mean fraction of rows in the files ``zorder.explain`` keeps,
and the mean fraction of files Delta Spark's scan reads (its ``numFiles``
metric). Delta Spark's row counts on both tables must agree.

Growth (``--growth-appends``): a table ``CLUSTER BY`` the four columns
(liquid clustering, Hilbert) and zorder tables clustered once (Hilbert and
Z-order) get the same 2% appends by Delta Spark, each followed by Delta's
``OPTIMIZE`` and zorder's argument-free ``optimize``. Per step: bytes
rewritten per byte appended, and each layout's equality skipping against a
full recluster of a copy of it at that step (``OPTIMIZE ... FULL``;
``optimize(full=True)``).

Everything runs at each of ``--seeds``: the data (dbgen's lineitem is fixed;
its filters' draws change), the filter values, the appends.

    .venv/bin/python -m benchmarks.against_delta --write-markdown
"""

from __future__ import annotations

import argparse
import functools
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from deltalake import DeltaTable
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from tests.spark.delta_oracle import files_read

import zorder
from benchmarks import tpch_filters
from benchmarks.report import command_line, machine_facts, measured_on, replace_section, write_json
from benchmarks.session import delta_user_session
from zorder.columns import sql_identifier
from zorder.demo import NETWORK_COLUMNS, network_frame, random_network_values
from zorder.errors import BenchmarkError
from zorder.plan.engines import IN_PROCESS_ROWS
from zorder.skipping.sql import sql_literal

TIME_GOAL = 0.7  # zorder's clustering time against Delta's, at most
GROWTH_AMPLIFICATION_GOAL = 0.1  # zorder's cumulative write amplification against liquid's
GROWTH_SKIPPING_GOAL = 0.9  # zorder's worst step against its own full recluster
DELTA = "Delta OPTIMIZE ZORDER BY"
ZORDER = "zorder"
ZORDER_SPARK = "zorder engine=spark"
CASES = ("network-1m", "network-10m", "tpch-sf1", "partitioned")
DAYS = 10
LIQUID = "liquid clustering"
GROWERS = (LIQUID, "zorder hilbert", "zorder zorder")


@dataclass(frozen=True)
class Case:
    """A table both sides cluster, and the filters their layouts are judged on."""

    name: str
    by: tuple[str, ...]
    files: int  # F: the files each side writes (for ``where``: in the optimized day)
    rows: int
    where: str | None = None  # the optimize's WHERE (a partition predicate)
    scale: float = 0.0  # TPC-H's scale factor


# --- memory ---------------------------------------------------------------------------------


class Memory:
    """Peaks of one run: the JVM's heap pools (reset first) and this process's resident set."""

    def __init__(self, spark: SparkSession) -> None:
        factory = spark._jvm.java.lang.management.ManagementFactory  # type: ignore[union-attr]
        self._pools = [p for p in factory.getMemoryPoolMXBeans() if p.getType().name() == "HEAP"]

    def reset(self) -> None:
        for pool in self._pools:
            pool.resetPeakUsage()
        with open("/proc/self/clear_refs", "w") as refs:  # resets VmHWM to the current RSS
            refs.write("5")

    def peaks(self) -> dict[str, int]:
        heap = sum(int(p.getPeakUsage().getUsed()) for p in self._pools)
        with open("/proc/self/status") as status:
            hwm = next(line for line in status if line.startswith("VmHWM"))
        return {"jvm_heap": heap, "python_rss": int(hwm.split()[1]) * 1024}


# --- commits ----------------------------------------------------------------------------------


def _files(path: str, version: int | None = None) -> dict[str, int]:
    actions = DeltaTable(path, version=version).get_add_actions(flatten=True)
    return dict(
        zip(
            actions.column("path").to_pylist(),
            actions.column("size_bytes").to_pylist(),
            strict=True,
        )
    )


def commit_bytes(path: str, before: int) -> dict[str, int]:
    """Bytes and files the commits after version ``before`` removed and added, from the log."""
    old, new = _files(path, before), _files(path)
    removed = [size for name, size in old.items() if name not in new]
    added = [size for name, size in new.items() if name not in old]
    return {
        "bytes_removed": sum(removed),
        "bytes_added": sum(added),
        "files_removed": len(removed),
        "files_added": len(added),
        "files": len(new),
    }


def version(path: str) -> int:
    return DeltaTable(path).version()


# --- sources ---------------------------------------------------------------------------------


def day_names() -> list[str]:
    return [f"2026-11-{d + 1:02d}" for d in range(DAYS)]


def write_source(spark: SparkSession, case: Case, path: str, seed: int, tmp: Path) -> None:
    """The unclustered table as Delta Spark's writer leaves it."""
    if case.name.startswith("network"):
        network_frame(spark, case.rows, seed=seed).write.format("delta").save(path)
    elif case.name.startswith("tpch"):
        parquet = tmp / "lineitem.parquet"
        if not parquet.exists():
            tpch_filters.generate_lineitem(case.scale, parquet)
        spark.read.parquet(str(parquet)).write.format("delta").save(path)
    else:
        per_day = case.rows // DAYS
        for number, day in enumerate(day_names()):
            frame = network_frame(spark, per_day, seed=seed * 100 + number)
            frame = frame.withColumn("day", F.lit(day)).repartition(4)
            frame.write.format("delta").mode("append").partitionBy("day").save(path)


def last_day_files(path: str) -> list[Any]:
    """The files of the partitioned table's last day (the one its optimize selects)."""
    last = day_names()[-1]
    return [f for f in zorder.describe(path).files if str(f.partition.get("day")) == last]


def optimized_bytes(path: str, case: Case) -> int:
    """The bytes of the files the optimize selects: the table's, or its last day's."""
    files = zorder.describe(path).files if case.where is None else last_day_files(path)
    return sum(f.size for f in files)


# --- filters ---------------------------------------------------------------------------------


def equality_filters(
    by: Sequence[str], values: dict[str, list[Any]], also: str | None = None
) -> dict[str, list[str]]:
    suffix = f" AND {also}" if also else ""
    return {
        f"{column} = v": [f"{sql_identifier(column)} = {sql_literal(v)}{suffix}" for v in wanted]
        for column, wanted in values.items()
        if column in by
    }


def tpch_values(rng: np.random.Generator, count: int) -> dict[str, list[Any]]:
    """Values from lineitem's domains (clause 4.2.3): dates, discounts 0.00-0.10, quantities."""
    first = date(1992, 1, 2)
    days = rng.integers(0, (date(1998, 12, 1) - first).days, count)
    return {
        "l_shipdate": [first + timedelta(days=int(d)) for d in days],
        "l_discount": [f"{int(c) / 100:.2f}" for c in rng.integers(0, 11, count)],
        "l_quantity": [f"{int(q)}.00" for q in rng.integers(1, 51, count)],
    }


def case_filters(case: Case, seed: int, count: int, draws: int) -> dict[str, list[str]]:
    rng = np.random.default_rng(seed)
    if case.name.startswith("tpch"):
        values = tpch_values(rng, count)
        filters = {
            f"{column} = v": [
                f"{column} = " + (f"date '{v}'" if isinstance(v, date) else str(v)) for v in wanted
            ]
            for column, wanted in values.items()
        }
        filters["TPC-H templates"] = [d.spec for d in tpch_filters.draws(seed, draws)]
        return filters
    values = random_network_values(rng, count)
    if case.where is None:
        return equality_filters(case.by, values)
    return equality_filters(case.by, values, also=f"day = '{day_names()[-1]}'")


# --- clustering runs -------------------------------------------------------------------------


def delta_optimize(spark: SparkSession, path: str, case: Case, size: int) -> dict[str, Any]:
    spark.conf.set("spark.databricks.delta.optimize.maxFileSize", str(max(1, size // case.files)))
    try:
        where = f" WHERE {case.where}" if case.where else ""
        columns = ", ".join(case.by)
        spark.sql(f"OPTIMIZE delta.`{path}`{where} ZORDER BY ({columns})").collect()
    finally:
        spark.conf.unset("spark.databricks.delta.optimize.maxFileSize")
    return {"engine": "spark"}


def zorder_optimize(
    spark: SparkSession, path: str, case: Case, engine: zorder.Engine
) -> dict[str, Any]:
    metrics = zorder.optimize(
        spark,
        path,
        by=list(case.by),
        curve="zorder",
        num_files=case.files,
        where=case.where,
        full=True,
        engine=engine,
    )
    return {"engine": metrics.engine, "phases": dict(metrics.phase_seconds)}


def timed(memory: Memory, run: Callable[[], dict[str, Any]], path: str) -> dict[str, Any]:
    before = version(path)
    memory.reset()
    started = time.perf_counter()
    extra = run()
    seconds = time.perf_counter() - started
    return {"seconds": seconds, **memory.peaks(), **commit_bytes(path, before), **extra}


def judge(spark: SparkSession, path: str, case: Case, filters: dict[str, list[str]]) -> Any:
    """Per filter set: the mean fraction of rows zorder.explain keeps and of files Delta reads,
    and Delta Spark's row count of each filter (to compare across layouts)."""
    table = spark.read.format("delta").load(path)
    in_day = last_day_files(path) if case.where is not None else []
    total_files = len(_files(path)) if case.where is None else len(in_day)
    day_rows = sum(f.rows or 0 for f in in_day)
    judged: dict[str, dict[str, float]] = {}
    counts: dict[str, int] = {}
    for name, wheres in filters.items():
        rows_kept, files_read_ = [], []
        for where in wheres:
            report = zorder.explain(path, where, spark=spark)
            if case.where is None:
                rows_kept.append(report.rows_scanned / report.rows_total)
            else:
                rows_kept.append(report.rows_scanned / day_rows)
            df = table.where(where).agg(F.count(F.lit(1)).alias("n"))
            counts[where] = int(df.collect()[0]["n"])
            read = files_read(df)
            files_read_.append(read / total_files)
        judged[name] = {
            "zorder_rows_kept": statistics.fmean(rows_kept),
            "delta_files_read": statistics.fmean(files_read_),
        }
    return judged, counts


def cluster_case(
    spark: SparkSession, memory: Memory, case: Case, seed: int, rounds: int, tmp: Path, args: Any
) -> dict[str, Any]:
    source = str(tmp / f"{case.name}-{seed}-source")
    started = time.perf_counter()
    write_source(spark, case, source, seed, tmp)
    build_seconds = time.perf_counter() - started
    size = optimized_bytes(source, case)
    runs: dict[str, Callable[[str], dict[str, Any]]] = {
        DELTA: lambda path: delta_optimize(spark, path, case, size),
        ZORDER: lambda path: zorder_optimize(spark, path, case, "auto"),
    }
    if case.rows // (DAYS if case.where else 1) <= IN_PROCESS_ROWS:  # auto runs in process
        runs[ZORDER_SPARK] = lambda path: zorder_optimize(spark, path, case, "spark")
    measured: dict[str, list[dict[str, Any]]] = {}
    kept: dict[str, str] = {}
    for number in range(rounds):
        for name in list(runs)[:: -1 if number % 2 else 1]:
            path = str(tmp / f"{case.name}-{seed}-{name.replace(' ', '-')}-{number}")
            shutil.copytree(source, path)
            result = timed(memory, functools.partial(runs[name], path), path)
            measured.setdefault(name, []).append(result)
            if name in kept:
                shutil.rmtree(kept[name])
            kept[name] = path
    shutil.rmtree(source)
    filters = case_filters(case, seed, args.values, args.draws)
    skipping, counts = {}, {}
    for name in (DELTA, ZORDER):
        skipping[name], counts[name] = judge(spark, kept[name], case, filters)
    wrong = [w for w in counts[DELTA] if counts[DELTA][w] != counts[ZORDER][w]]
    if wrong:
        raise BenchmarkError(
            f"{case.name}: Delta Spark counts {counts[DELTA][wrong[0]]:,} rows for {wrong[0]} on "
            f"Delta's layout and {counts[ZORDER][wrong[0]]:,} on zorder's"
        )
    for path in kept.values():
        shutil.rmtree(path)
    best = {name: min(results, key=lambda r: r["seconds"]) for name, results in measured.items()}
    return {
        "case": case.name,
        "seed": seed,
        "rows": case.rows,
        "by": list(case.by),
        "files": case.files,
        "where": case.where,
        "bytes_optimized": size,
        "build_seconds": build_seconds,
        "runs": measured,
        "best": best,
        "skipping": skipping,
        "filters": {name: len(wheres) for name, wheres in filters.items()},
    }


# --- growth ----------------------------------------------------------------------------------


def mean_equality_kept(spark: SparkSession, path: str, filters: dict[str, list[str]]) -> float:
    """The mean fraction of rows zorder.explain keeps over every equality filter."""
    kept = [
        zorder.explain(path, where, spark=spark).rows_fraction
        for wheres in filters.values()
        for where in wheres
    ]
    return statistics.fmean(kept)


def grow(
    spark: SparkSession, seed: int, rows: int, files: int, appends: int, tmp: Path, args: Any
) -> dict[str, Any]:
    by = list(NETWORK_COLUMNS)
    columns = ", ".join(by)
    source = str(tmp / f"grow-{seed}-source")
    network_frame(spark, rows, seed=seed).write.format("delta").save(source)
    size = optimized_bytes(source, Case("network", tuple(by), files, rows))
    max_file = str(max(1, size // files))
    filters = equality_filters(by, random_network_values(np.random.default_rng(seed), args.values))
    paths = {name: str(tmp / f"grow-{seed}-{name.replace(' ', '-')}") for name in GROWERS}

    def optimize(name: str, path: str, *, full: bool) -> None:
        if name == LIQUID:
            spark.conf.set("spark.databricks.delta.optimize.maxFileSize", max_file)
            try:
                spark.sql(f"OPTIMIZE delta.`{path}`{' FULL' if full else ''}").collect()
            finally:
                spark.conf.unset("spark.databricks.delta.optimize.maxFileSize")
        else:
            zorder.optimize(spark, path, full=full)

    for name, path in paths.items():
        if name == LIQUID:
            spark.read.format("delta").load(source).createOrReplaceTempView("zorder_growth_base")
            spark.sql(
                f"CREATE TABLE delta.`{path}` USING delta CLUSTER BY ({columns}) "
                "AS SELECT * FROM zorder_growth_base"
            ).collect()
            spark.catalog.dropTempView("zorder_growth_base")
            optimize(name, path, full=True)
        else:
            shutil.copytree(source, path)
            curve = name.split()[-1]
            # Recorded, as liquid's maxFileSize is set for each of its OPTIMIZEs: later
            # argument-free optimizes keep this size (a one-off num_files sizes its run only).
            zorder.optimize(
                spark,
                path,
                by=by,
                curve=curve,  # type: ignore[arg-type]
                num_files=files,
                set_target_size=True,
            )
    shutil.rmtree(source)
    step_rows = int(rows * args.growth_fraction)
    steps: dict[str, list[dict[str, Any]]] = {name: [] for name in GROWERS}
    for number in range(appends):
        batch = network_frame(spark, step_rows, seed=seed * 1000 + number).localCheckpoint()
        for name, path in paths.items():
            before = version(path)
            batch.write.format("delta").mode("append").save(path)
            appended = commit_bytes(path, before)["bytes_added"]
            before = version(path)
            started = time.perf_counter()
            optimize(name, path, full=False)
            seconds = time.perf_counter() - started
            done = commit_bytes(path, before)
            kept = mean_equality_kept(spark, path, filters)
            copy = f"{path}-full"
            shutil.copytree(path, copy)
            optimize(name, copy, full=True)
            full_kept = mean_equality_kept(spark, copy, filters)
            shutil.rmtree(copy)
            steps[name].append(
                {
                    "bytes_appended": appended,
                    "bytes_rewritten": done["bytes_removed"],
                    "seconds": seconds,
                    "files": done["files"],
                    "skipped": 1 - kept,
                    "full_skipped": 1 - full_kept,
                }
            )
        batch.unpersist()
    for path in paths.values():
        shutil.rmtree(path)
    return {
        "seed": seed,
        "rows": rows,
        "files": files,
        "step_rows": step_rows,
        "appends": appends,
        "steps": steps,
    }


# --- Delta's key, simulated ---------------------------------------------------------------

# Per Delta's source (ZOrderClustering, MultiDimClustering): each column's
# range_partition_id over at most spark.databricks.io.skipping.mdc.rangeId.max ranges,
# interleave_bits of those ids (32-bit ints, most significant bit first, column after
# column), then repartitionByRange on that key and a random noise column: files of equal
# row counts along the key.
RANGE_ID_MAX = 1000
KEY_SIMULATIONS = (
    ("network, 16 files", (None, None, 65_536, 65_536), 16),
    ("network, 256 files", (None, None, 65_536, 65_536), 256),
    ("TPC-H lineitem, 64 files", (2_526, 11, 50), 64),
)


def simulated_delta_layout(
    distinct: Sequence[int | None], files: int, *, rows: int = 400_000, seed: int = 0
) -> dict[str, list[float]]:
    """Per column, the mean fraction of files an equality filter reads on independent
    uniform columns (``distinct`` values each; None: continuous) laid out by Delta's key
    (``equal counts``), and by zorder's rule instead (``equal bits``: each column cut into
    the same number of slabs by rank, each file one cell of the curve)."""
    rng = np.random.default_rng(seed)
    values = np.column_stack(
        [rng.random(rows) if k is None else rng.integers(0, k, rows) / k for k in distinct]
    )
    ranges = [RANGE_ID_MAX if k is None else min(k, RANGE_ID_MAX) for k in distinct]
    ids = np.column_stack(
        [np.minimum(np.floor(values[:, c] * r), r - 1) for c, r in enumerate(ranges)]
    ).astype(np.int64)
    width = max(int(np.ceil(np.log2(r))) for r in ranges)
    key = np.zeros(rows, dtype=np.int64)
    for bit in range(width - 1, -1, -1):
        for column in range(len(distinct)):
            key = (key << 1) | ((ids[:, column] >> bit) & 1)
    order = np.lexsort((rng.random(rows), key))  # the key, then Delta's noise
    equal = np.empty(rows, dtype=np.int64)
    equal[order] = np.arange(rows) * files // rows
    # Equal bits: each column's values cut into 2^b slabs by rank (b = log2(files) / columns),
    # interleaved, a file a cell of the curve: zorder's rank keys, cut at cell edges.
    share = int(np.log2(files)) // len(distinct)
    cells = np.zeros(rows, dtype=np.int64)
    for bit in range(share - 1, -1, -1):
        for column in range(len(distinct)):
            slab = np.minimum(np.floor(values[:, column] * 2**share), 2**share - 1)
            cells = (cells << 1) | ((slab.astype(np.int64) >> bit) & 1)
    layouts = {"equal counts": equal, "equal bits": cells}
    out: dict[str, list[float]] = {}
    probes = rng.random(4_000)
    for name, file_of in layouts.items():
        count = int(file_of.max()) + 1
        kept = []
        for column, k in enumerate(distinct):
            low = np.full(count, np.inf)
            high = np.full(count, -np.inf)
            np.minimum.at(low, file_of, values[:, column])
            np.maximum.at(high, file_of, values[:, column])
            wanted = probes if k is None else np.floor(probes * k) / k
            hit = (low[None, :] <= wanted[:, None]) & (wanted[:, None] <= high[None, :])
            kept.append(float(hit.mean()))
        out[name] = kept
    return out


def key_simulation() -> dict[str, Any]:
    return {
        name: {
            "distinct": list(distinct),
            "files": files,
            **simulated_delta_layout(distinct, files),
        }
        for name, distinct, files in KEY_SIMULATIONS
    }


def key_markdown(payload: dict[str, Any]) -> str:
    lines = [
        "## Delta's OPTIMIZE ZORDER BY key, simulated",
        "",
        f"`{payload['command']}`",
        "",
        "Why Delta's layout skips less on some columns: its key as its source builds it "
        f"(each column's `range_partition_id` over at most {RANGE_ID_MAX} ranges, "
        "`interleave_bits` of the ids, then `repartitionByRange` on the key and a noise "
        "column), simulated in numpy on 400,000 rows of independent uniform columns with as "
        "many distinct values as the benchmark's. *Equal counts*: files of equal row counts "
        "along the key, as Delta cuts them; *equal bits*: each column cut into as many slabs "
        "as the others by rank, each file one cell of the curve, as zorder's rank keys cut "
        "them. The fraction of files an equality filter on each "
        "column reads (columns in the key's order); compare the measured figures above.",
        "",
        "| table | distinct values | files | equal counts (Delta) | equal bits (zorder) |",
        "| --- | --- | ---: | --- | --- |",
    ]
    for name, r in payload["simulations"].items():
        distinct = ", ".join("continuous" if k is None else f"{k:,}" for k in r["distinct"])
        cells = [", ".join(f"{v:.1%}" for v in r[kind]) for kind in ("equal counts", "equal bits")]
        lines.append(f"| {name} | {distinct} | {r['files']} | {cells[0]} | {cells[1]} |")
    lines += ["", measured_on(payload["machine"])]
    return "\n".join(lines)


# --- main --------------------------------------------------------------------------------------


def cases(args: Any) -> list[Case]:
    known = {
        "network-1m": Case("network-1m", NETWORK_COLUMNS, args.files_1m, 1_000_000),
        "network-10m": Case("network-10m", NETWORK_COLUMNS, args.files_10m, 10_000_000),
        "tpch-sf1": Case(
            "tpch-sf1",
            tpch_filters.BY,
            args.files_tpch,
            int(6_000_000 * args.scale),
            scale=args.scale,
        ),
        "partitioned": Case(
            "partitioned",
            NETWORK_COLUMNS,
            args.files_day,
            DAYS * args.day_rows,
            where=f"day = '{day_names()[-1]}'",
        ),
    }
    if args.rows_1m:  # smaller tables, for a smoke run
        known["network-1m"] = Case("network-1m", NETWORK_COLUMNS, args.files_1m, args.rows_1m)
        known["network-10m"] = Case(
            "network-10m", NETWORK_COLUMNS, args.files_10m, args.rows_1m * 2
        )
    return [known[name] for name in args.cases]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="*", default=list(CASES), choices=CASES)
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds, best kept")
    parser.add_argument("--files-1m", type=int, default=16)
    parser.add_argument("--files-10m", type=int, default=256)
    parser.add_argument("--files-tpch", type=int, default=64)
    parser.add_argument("--files-day", type=int, default=16)
    parser.add_argument("--day-rows", type=int, default=400_000)
    parser.add_argument("--rows-1m", type=int, default=0, help="smaller network tables (smoke)")
    parser.add_argument("--scale", type=float, default=1.0, help="TPC-H scale factor")
    parser.add_argument("--values", type=int, default=8, help="equality values per column")
    parser.add_argument("--draws", type=int, default=2, help="draws per TPC-H template")
    parser.add_argument("--growth-rows", type=int, default=1_000_000)
    parser.add_argument("--growth-files", type=int, default=16)
    parser.add_argument("--growth-appends", type=int, default=10)
    parser.add_argument("--growth-fraction", type=float, default=0.02)
    parser.add_argument("--write-markdown", action="store_true", help="update BENCHMARKS.md")
    parser.add_argument(
        "--simulate-delta-key", action="store_true", help="only simulate Delta's key (numpy)"
    )
    args = parser.parse_args(argv)
    if args.simulate_delta_key:
        simulated = {
            "command": command_line(__spec__.name, argv),
            "machine": machine_facts(),
            "simulations": key_simulation(),
        }
        print(key_markdown(simulated))
        if args.write_markdown:
            write_json("against_delta_key", simulated)
            replace_section("against-delta-key", key_markdown(simulated))
        return simulated
    started = time.perf_counter()
    spark, coordinate = delta_user_session("zorder-bench-against-delta")
    memory = Memory(spark)
    clustering: list[dict[str, Any]] = []
    growth: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="zorder-against-delta-") as tmp:
        for seed in args.seeds:
            for case in cases(args):
                clustering.append(
                    cluster_case(spark, memory, case, seed, args.rounds, Path(tmp), args)
                )
                print(f"{case.name} seed {seed}: {summary_line(clustering[-1])}", flush=True)
            if args.growth_appends:
                growth.append(
                    grow(
                        spark,
                        seed,
                        args.growth_rows,
                        args.growth_files,
                        args.growth_appends,
                        Path(tmp),
                        args,
                    )
                )
    payload = {
        "command": command_line(__spec__.name, argv),
        "machine": machine_facts(),
        "delta": coordinate,
        "seconds": time.perf_counter() - started,
        "clustering": clustering,
        "growth": growth,
    }
    text = markdown(payload)
    print(text)
    if args.write_markdown:
        write_json("against_delta", payload)
        replace_section("against-delta", text)
    return payload


# --- report ------------------------------------------------------------------------------------


def time_ratio(result: dict[str, Any], name: str = ZORDER) -> float:
    return float(result["best"][name]["seconds"] / result["best"][DELTA]["seconds"])


def summary_line(result: dict[str, Any]) -> str:
    best = result["best"]
    return ", ".join(f"{name} {r['seconds']:.1f} s" for name, r in best.items())


def amplification(steps: list[dict[str, Any]]) -> float:
    appended = sum(s["bytes_appended"] for s in steps)
    return sum(s["bytes_rewritten"] for s in steps) / appended if appended else 0.0


def of_full(step: dict[str, Any]) -> float:
    return step["skipped"] / step["full_skipped"] if step["full_skipped"] else 1.0


def _mb(value: float) -> str:
    return f"{value / 1e6:,.1f}"


def markdown(payload: dict[str, Any]) -> str:
    lines = [
        "## Against Delta's own OPTIMIZE ZORDER BY and liquid clustering",
        "",
        f"`{payload['command']}`",
        "",
        f"Delta Spark `{payload['delta']}` in the same session (`SparkSession.builder` with "
        "Delta's jars, SQL extension and catalog, Delta's defaults otherwise), on copies of "
        "the same table written unclustered by Delta Spark. Delta runs `OPTIMIZE ... ZORDER BY` "
        "with `spark.databricks.delta.optimize.maxFileSize` = the bytes optimized / F; zorder "
        'runs `optimize(by=..., curve="zorder", num_files=F, full=True)` with its default '
        'engine (and `engine="spark"` beside it where the default ran in process). Best of '
        "the alternated rounds. Bytes from each commit's add and remove actions; JVM heap: "
        "the peaks of its heap pools during the run, summed (`java.lang.management`; driver "
        "and executor are one JVM in local "
        "mode); Python: the driver process's peak resident set.",
        "",
        "| table | seed | rows | F | contender | engine | seconds | vs Delta | MB read | "
        "MB written | files | JVM heap MB | Python MB |",
        "| --- | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in payload["clustering"]:
        for name, best in r["best"].items():
            ratio = best["seconds"] / r["best"][DELTA]["seconds"]
            lines.append(
                f"| {r['case']} | {r['seed']} | {r['rows']:,} | {r['files']} | {name} | "
                f"{best['engine']} | {best['seconds']:.1f} | {ratio:.2f} | "
                f"{_mb(best['bytes_removed'])} | {_mb(best['bytes_added'])} | "
                f"{best['files_added']} | {best['jvm_heap'] / 2**20:,.0f} | "
                f"{best['python_rss'] / 2**20:,.0f} |"
            )
    lines += [
        "",
        "Skipping on the same filters, judged by both engines on both layouts: the mean "
        "fraction of rows in the files `zorder.explain` keeps, and of files Delta Spark's scan "
        "reads (`numFiles`). Lower is better. Partitioned: fractions of the optimized day.",
        "",
        "| table | seed | filter set | filters | rows kept, Delta's layout | rows kept, "
        "zorder's | files read by Delta Spark, Delta's layout | files read, zorder's |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in payload["clustering"]:
        for name, count in r["filters"].items():
            d, z = r["skipping"][DELTA][name], r["skipping"][ZORDER][name]
            lines.append(
                f"| {r['case']} | {r['seed']} | `{name}` | {count} | {d['zorder_rows_kept']:.1%} | "
                f"{z['zorder_rows_kept']:.1%} | {d['delta_files_read']:.1%} | "
                f"{z['delta_files_read']:.1%} |"
            )
    if payload["growth"]:
        lines += growth_markdown(payload["growth"])
    lines += ["", *verdicts(payload), "", *findings(payload), "", measured_on(payload["machine"])]
    return "\n".join(lines)


def growth_markdown(growth: list[dict[str, Any]]) -> list[str]:
    first = growth[0]
    lines = [
        "",
        f"Growth: {first['rows']:,} network connections, then {first['appends']} appends of "
        f"{first['step_rows']:,} rows each by Delta Spark, each followed by an optimize: "
        f"`OPTIMIZE` on a table `CLUSTER BY` the four columns (liquid clustering, Hilbert; "
        f"maxFileSize = the base's bytes / {first['files']}), and `zorder.optimize(spark, path)` "
        "without arguments on tables zorder clustered once into "
        f"{first['files']} files (Hilbert; Z-order). These tables are far below liquid's "
        "`minCubeSize` (100 GiB), so liquid never seals a cube and reclusters them whole: what "
        "most users' tables get. Skipped: mean fraction of rows `zorder.explain` skips for "
        "single-column equality filters; against a full recluster of a copy at that step "
        "(`OPTIMIZE ... FULL`; `optimize(full=True)`).",
        "",
        "| seed | contender | write amplification, cumulative | worst step, of its full recluster "
        "| skipped after the last step | optimize seconds, total |",
        "| ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    for g in growth:
        for name, steps in g["steps"].items():
            lines.append(
                f"| {g['seed']} | {name} | {amplification(steps):.2f} | "
                f"{min(of_full(s) for s in steps):.2f} | {steps[-1]['skipped']:.1%} | "
                f"{sum(s['seconds'] for s in steps):.1f} |"
            )
    lines += [
        "",
        "Per step (first seed): MB rewritten per MB appended; rows skipped; that against a "
        "full recluster of the same rows.",
        "",
        "| step | " + " | ".join(first["steps"]) + " |",
        "| ---: |" + " --- |" * len(first["steps"]),
    ]
    for number in range(first["appends"]):
        cells = []
        for steps in first["steps"].values():
            s = steps[number]
            cells.append(
                f"{s['bytes_rewritten'] / s['bytes_appended']:.1f}x, {s['skipped']:.1%}, "
                f"{of_full(s):.2f}"
            )
        lines.append(f"| {number + 1} | " + " | ".join(cells) + " |")
    return lines


def _span(values: Sequence[float], form: str = ".2f") -> str:
    low, high = min(values), max(values)
    return f"{low:{form}}" if f"{low:{form}}" == f"{high:{form}}" else f"{low:{form}}-{high:{form}}"


def findings(payload: dict[str, Any]) -> list[str]:
    """What the figures above say, worked out from them (the ranges span the seeds)."""
    by_case: dict[str, list[dict[str, Any]]] = {}
    for r in payload["clustering"]:
        by_case.setdefault(r["case"], []).append(r)
    out = ["What the figures say (ranges span the seeds):", ""]
    if by_case:
        times = "; ".join(
            f"{case} {_span([time_ratio(r) for r in rs])}x"
            + (
                ' (in process; `engine="spark"` '
                f"{_span([time_ratio(r, ZORDER_SPARK) for r in rs])}x)"
                if all(ZORDER_SPARK in r["best"] for r in rs)
                else ""
            )
            for case, rs in by_case.items()
        )
        out.append(
            f"- **Time.** zorder's optimize against Delta's `OPTIMIZE ZORDER BY`: {times}. "
            "Delta's command first rebuilds its snapshot's state (50 tasks by default, "
            "`spark.databricks.delta.snapshotPartitions`) and, by its source, samples the input "
            "once per clustering column (each `range_partition_id` is a range partitioner) and "
            "once more for `repartitionByRange`; zorder samples once and runs one job that "
            "computes the keys in the JVM, shuffles, sorts each file along the curve and "
            "writes. That job is nearly all of zorder's time"
            + _phase_note(by_case)
            + ". The margin is smallest on TPC-H lineitem: its rows are 16 columns wide, and "
            "both sides shuffle and write every column, which neither can skip; zorder also "
            "sorts within each file (for row-group skipping), which Delta's range "
            "partitioning does not."
        )
    network = {case: rs for case, rs in by_case.items() if case != "tpch-sf1"}
    tpch = by_case.get("tpch-sf1", [])
    if network:
        last = f"{NETWORK_COLUMNS[-1]} = v"

        def read(rs: list[dict[str, Any]], who: str) -> str:
            return _span([r["skipping"][who][last]["delta_files_read"] for r in rs], ".0%")

        per_case = "; ".join(
            f"{case} ({rs[0]['files']} files) {read(rs, DELTA)} against {read(rs, ZORDER)}"
            for case, rs in network.items()
        )
        behind = [
            (case, name)
            for case, rs in network.items()
            for r in rs
            for name in r["filters"]
            for judge in ("zorder_rows_kept", "delta_files_read")
            if r["skipping"][DELTA][name][judge] < r["skipping"][ZORDER][name][judge] - 1e-9
        ]
        where = (
            "every column"
            if not behind
            else "most columns (not: "
            + ", ".join(f"{c} `{n}`" for c, n in dict.fromkeys(behind))
            + ")"
        )
        out.append(
            f"- **Skipping, network connections.** Delta's layout skips less on {where}, "
            "and the less the later the column comes in its key: an equality filter on "
            f"{NETWORK_COLUMNS[-1]}, the last, reads this fraction of the files on Delta's "
            f"layout against zorder's: {per_case}. The cause is in how "
            "Delta cuts files: `repartitionByRange` gives each file an equal row count along "
            "the interleaved key, and those cuts fall a few rows past the curve's cell edges, "
            "so a file holds rows of two cells and its min/max spans both; cells next to "
            "each other along a Z-curve most often differ in the last column's bit. zorder cuts "
            "files at cell edges from its sample. The simulation of Delta's key below "
            "reproduces Delta's measured figures on uniform data."
        )
    if tpch:
        ship = [r["skipping"][DELTA]["l_shipdate = v"]["delta_files_read"] for r in tpch]
        ship_z = [r["skipping"][ZORDER]["l_shipdate = v"]["delta_files_read"] for r in tpch]
        disc = [r["skipping"][DELTA]["l_discount = v"]["delta_files_read"] for r in tpch]
        disc_z = [r["skipping"][ZORDER]["l_discount = v"]["delta_files_read"] for r in tpch]
        templates = [r["skipping"][DELTA]["TPC-H templates"]["zorder_rows_kept"] for r in tpch]
        templates_z = [r["skipping"][ZORDER]["TPC-H templates"]["zorder_rows_kept"] for r in tpch]
        out.append(
            "- **Skipping, TPC-H lineitem: where Delta wins.** Delta's layout reads "
            f"{_span(ship, '.1%')} of the files for `l_shipdate = v` against zorder's "
            f"{_span(ship_z, '.1%')}, and keeps {_span(templates, '.1%')} of the rows for the "
            f"TPC-H templates against {_span(templates_z, '.1%')}; it reads "
            f"{_span(disc, '.0%')} for `l_discount = v` against {_span(disc_z, '.0%')}. Its key "
            "gives each column as many bits as it has range ids: l_shipdate has 2,526 dates "
            f"(capped at {RANGE_ID_MAX} ids: 10 bits), l_quantity 50 values (6 bits), "
            "l_discount 11 (4 bits), and `interleave_bits` takes the most significant bits "
            "first, so the top of the key, which decides the files, is nearly all l_shipdate's: "
            "the table is nearly sorted by l_shipdate. Seven of the ten templates filter "
            "l_shipdate, so that tilt pays on them. zorder gives every clustering column the "
            "same share of the files by rank, whatever its cardinality, which is what "
            "single-column filters on each of them need; it is a design choice, not a gap to "
            "close inside the same spec. A workload that leans on one column gets the tilt "
            "from `zorder.advise` (weights or workload cuts fitted to the filters; see its "
            "section), not from the columns' cardinalities."
        )
    if payload["growth"]:
        liquid = [amplification(g["steps"][LIQUID]) for g in payload["growth"]]
        mine = [
            amplification(steps)
            for g in payload["growth"]
            for name, steps in g["steps"].items()
            if name != LIQUID
        ]
        worst = [
            min(of_full(step) for step in steps)
            for g in payload["growth"]
            for name, steps in g["steps"].items()
            if name != LIQUID
        ]
        out.append(
            f"- **Growth.** Liquid clustering rewrote {_span(liquid, '.1f')} bytes per byte "
            f"appended over the appends, zorder {_span(mine, '.2f')}: below `minCubeSize` "
            "every liquid OPTIMIZE reclusters the whole table, while zorder's optimize "
            "clusters the new files into a run of their own and merges runs by size tiers. "
            "The price is skipping: after its worst step zorder's table skipped "
            f"{_span(worst, '.2f')} of what a full recluster of the same rows skips. A tier "
            "keeps up to `fanout - 1` runs unmerged (3 by default), and a run of one 2% "
            "append is a file or two whose bounds span most of every column, so every "
            "equality filter reads them; a full recluster spreads those rows over the "
            "table's cells. `fanout` is the knob (a smaller one merges sooner: more "
            "rewriting, more skipping); this run measures the default only."
        )
    return out


def _phase_note(by_case: dict[str, list[dict[str, Any]]]) -> str:
    spark_runs = [
        r["best"][ZORDER]
        for rs in by_case.values()
        for r in rs
        if r["best"][ZORDER]["engine"] == "spark" and r["best"][ZORDER].get("phases")
    ]
    if not spark_runs:
        return ""
    shares = [
        run["phases"].get("clustering and writing", 0.0) / run["seconds"] for run in spark_runs
    ]
    return f" ({_span(shares, '.0%')} of it where Spark ran, by its phases)"


def verdicts(payload: dict[str, Any]) -> list[str]:
    out = []
    for r in payload["clustering"]:
        ratio = time_ratio(r)
        label = "`where=` optimize of one day" if r["case"] == "partitioned" else "clustering"
        engine = r["best"][ZORDER]["engine"]
        spark_too = (
            f'; with `engine="spark"` {time_ratio(r, ZORDER_SPARK):.2f}x'
            if ZORDER_SPARK in r["best"]
            else ""
        )
        out.append(
            f"- {r['case']}, seed {r['seed']}: zorder's {label} ({engine}) {ratio:.2f}x Delta's "
            f"time{spark_too} (goal at most {TIME_GOAL}): "
            f"**{'pass' if ratio <= TIME_GOAL else 'FAIL'}**."
        )
    worse = [
        (r["case"], r["seed"], name, engine)
        for r in payload["clustering"]
        for name in r["filters"]
        for engine in ("zorder_rows_kept", "delta_files_read")
        if r["skipping"][ZORDER][name][engine] > r["skipping"][DELTA][name][engine] + 1e-9
    ]
    total = sum(len(r["filters"]) * 2 for r in payload["clustering"])
    out.append(
        f"- Skipping: zorder's layout at least Delta's in {total - len(worse)} of {total} "
        "(filter set, engine) pairs"
        + (
            "; behind in "
            + "; ".join(f"{c} seed {s} `{n}` by {e.split('_')[0]}" for c, s, n, e in worse)
            if worse
            else ""
        )
        + f": **{'pass' if not worse else 'FAIL'}**."
    )
    for g in payload["growth"]:
        liquid = amplification(g["steps"][LIQUID])
        for name, steps in g["steps"].items():
            if name == LIQUID:
                continue
            amp = amplification(steps)
            ratio = amp / liquid if liquid else 0.0
            worst = min(of_full(s) for s in steps)
            ok = ratio <= GROWTH_AMPLIFICATION_GOAL and worst >= GROWTH_SKIPPING_GOAL
            out.append(
                f"- Growth, seed {g['seed']}, {name}: write amplification {amp:.2f} against "
                f"liquid's {liquid:.2f} ({ratio:.3f}x, goal at most {GROWTH_AMPLIFICATION_GOAL}); "
                f"worst step {worst:.2f} of its full recluster (goal at least "
                f"{GROWTH_SKIPPING_GOAL}): **{'pass' if ok else 'FAIL'}**."
            )
    return out


if __name__ == "__main__":
    main()
