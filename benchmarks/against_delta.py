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
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pyspark
from deltalake import DeltaTable
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from tests import delta_spark
from tests.spark.delta_oracle import files_read

import zorder
from benchmarks import tpch_filters
from benchmarks.report import command_line, machine_facts, measured_on, replace_section, write_json
from benchmarks.session import user_session
from zorder.api.engines import IN_PROCESS_ROWS
from zorder.columns import sql_identifier
from zorder.demo import NETWORK_COLUMNS, network_frame, random_network_values
from zorder.errors import BenchmarkError
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
    filters: dict[str, list[str]] = field(default_factory=dict)  # filter set -> filters


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
    table = DeltaTable(path, version=version) if version is not None else DeltaTable(path)
    actions = table.get_add_actions(flatten=True)
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


def optimized_bytes(path: str, case: Case) -> int:
    """The bytes of the files the optimize selects: the table's, or its last day's."""
    files = zorder.describe(path).files
    if case.where is None:
        return sum(f.size for f in files)
    last = day_names()[-1]
    return sum(f.size for f in files if str(f.partition.get("day")) == last)


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
    total_files = len(_files(path))
    last = day_names()[-1]
    in_day = [f for f in zorder.describe(path).files if str(f.partition.get("day")) == last]
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
            files_read_.append(read / (total_files if case.where is None else len(in_day)))
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


def delta_session() -> tuple[SparkSession, str]:
    conf, coordinate, reason = delta_spark.session_conf(pyspark.__version__)
    if coordinate is None:
        raise BenchmarkError(f"needs Delta Spark: {reason}")
    for tuning in (  # the tests' own settings, not a user's
        "spark.databricks.delta.snapshotPartitions",
        "spark.sql.sources.parallelPartitionDiscovery.parallelism",
    ):
        conf.pop(tuning)
    conf["spark.ui.showConsoleProgress"] = "false"
    with delta_spark.resolving():
        return user_session("zorder-bench-against-delta", conf=conf), coordinate


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
    args = parser.parse_args(argv)
    started = time.perf_counter()
    spark, coordinate = delta_session()
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
        "the peak of its heap pools during the run (driver and executor are one JVM in local "
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
    lines += ["", *verdicts(payload), "", measured_on(payload["machine"])]
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
