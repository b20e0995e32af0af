"""zorder's benchmark: Databricks' experiment, the cost of clustering, and reads.

One run, one Spark session, the same generated network-connections rows for
every contender:

1. **Layout quality** (Databricks' 2018 experiment): 100 files of 1,000 and
   of 100,000 rows; as written, linear sort, Z-order on four columns, Z-order
   on (src_ip, dst_ip), Hilbert on four, delta-rs's ``optimize.z_order`` on
   four; single-column equality filters on values sampled from the table and
   on random values of each column's domain; mean skipping effectiveness and
   its fraction of the ceiling 1 - F^(-1/d).
2. **Cost**: wall time of ``zorder.write`` (Z-order and Hilbert on four
   columns) against a plain ``repartitionByRange(F, src_ip)
   .sortWithinPartitions(src_ip).write.parquet`` and against delta-rs's
   ``optimize.z_order`` of the same rows, with peak resident memory of the
   Spark driver JVM and of the delta-rs process.
3. **Reads**: point lookups through ``zorder.read`` against reading every
   row, on the largest Z-ordered table.

:func:`run_bench` measures and returns a frozen :class:`BenchResult`;
``zorder bench`` prints it, and ``benchmarks/product.py`` renders it into
BENCHMARKS.md with its targets. Peak memory is Linux's VmHWM, reset before
each Spark run through ``/proc/<pid>/clear_refs``; delta-rs runs in a child
process of its own (:mod:`zorder.bench_delta_rs`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from zorder.api.paths import write
from zorder.api.read import read
from zorder.curves.kinds import Curve
from zorder.demo import (
    NETWORK_COLUMNS,
    LookupTimings,
    ceiling,
    equality_effectiveness,
    file_count,
    network_frame,
    random_network_values,
    time_point_lookups,
    write_as_written,
)
from zorder.errors import BenchmarkError
from zorder.spark.compat import collect_arrow
from zorder.spark.progress import is_connect

__all__ = [
    "DEFAULT",
    "QUICK",
    "BenchConfig",
    "BenchResult",
    "CostRun",
    "Effectiveness",
    "LayoutQuality",
    "run_bench",
]


@dataclass(frozen=True)
class BenchConfig:
    """What one benchmark run measures."""

    files: int = 100
    layout_rows_per_file: tuple[int, ...] = (1_000, 100_000)
    cost_rows: tuple[int, ...] = (1_000_000, 3_000_000, 10_000_000)
    filters: int = 100
    lookups: int = 5
    # Fastest of three: on a shared two-core machine one run in two or three is
    # slowed by 10-25%, enough to move a ratio across its target.
    repeat: int = 3
    seed: int = 2018
    delta_rs: bool = True

    @property
    def layout_rows(self) -> tuple[int, ...]:
        return tuple(self.files * r for r in self.layout_rows_per_file)


DEFAULT = BenchConfig()
QUICK = BenchConfig(
    layout_rows_per_file=(1_000,), cost_rows=(100_000,), filters=50, lookups=2, repeat=2
)


@dataclass(frozen=True)
class Effectiveness:
    """Mean skipping of equality filters on one kind of values, per column and overall."""

    per_column: Mapping[str, float]
    mean: float
    of_ceiling: float


@dataclass(frozen=True)
class LayoutQuality:
    """One layout of the layout scale: its files, the ceiling, and both kinds of filters."""

    layout: str
    files: int
    ceiling: float
    sampled: Effectiveness  # values sampled from the table
    random: Effectiveness  # random values of each column's domain


@dataclass(frozen=True)
class CostRun:
    """The fastest of a contender's runs at one scale."""

    contender: str
    runs: int
    seconds: float
    peak_mib: Mapping[str, float | None]
    ingest_s: float | None = None  # delta-rs: writing its table first, not counted


@dataclass(frozen=True)
class BenchResult:
    """Everything one benchmark run measured."""

    config: BenchConfig
    layout: Mapping[int, tuple[LayoutQuality, ...]]  # by rows
    cost: Mapping[int, tuple[CostRun, ...]]  # by rows
    reads: LookupTimings

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data (rows as string keys), every field and derived ratio included."""
        return {
            "config": dataclasses.asdict(self.config),
            "layout": {
                str(rows): [dataclasses.asdict(q) for q in table]
                for rows, table in self.layout.items()
            },
            "cost": {
                str(rows): [dataclasses.asdict(c) for c in table]
                for rows, table in self.cost.items()
            },
            "reads": self.reads.to_json(),
        }


@dataclass(frozen=True)
class _Contender:
    name: str
    by: tuple[str, ...] = ()
    curve: Curve | None = None  # None for the ones not written by zorder.write
    layout: bool = True  # measured for skipping effectiveness
    cost: bool = True  # run at every cost scale, not only the layout scales


_FOUR = NETWORK_COLUMNS
CONTENDERS = (
    _Contender("as written", cost=False),
    _Contender("linear", _FOUR, "linear", cost=False),
    _Contender("zorder", _FOUR, "zorder"),
    _Contender("zorder (src_ip, dst_ip)", ("src_ip", "dst_ip"), "zorder", cost=False),
    _Contender("hilbert", _FOUR, "hilbert"),
    _Contender("plain sort by src_ip", layout=False),
    _Contender("delta-rs optimize.z_order"),
)


@dataclass
class _Peaks:
    """Peak resident memory of the driver's processes over one run."""

    pids: dict[str, int] = field(default_factory=dict)

    def reset(self) -> None:
        for pid in self.pids.values():
            # Not Linux, or not allowed: the peaks then cover the whole session.
            with contextlib.suppress(OSError):
                Path(f"/proc/{pid}/clear_refs").write_text("5")

    def read(self) -> dict[str, float | None]:
        return {name: _vm_hwm_mib(pid) for name, pid in self.pids.items()}


def _vm_hwm_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _driver_peaks(spark: SparkSession) -> _Peaks:
    pids = {"python driver": os.getpid()}
    if is_connect(spark):  # the server's JVM is another process, out of this client's reach
        return _Peaks(pids)
    jvm = spark.sparkContext._jvm
    if jvm is not None:
        pids["driver JVM"] = int(jvm.java.lang.ProcessHandle.current().pid())
    return _Peaks(pids)


def _run_delta_rs(source: str, dest: str, files: int) -> dict[str, Any]:
    process = subprocess.Popen(
        [sys.executable, "-m", "zorder.bench_delta_rs", source, dest, str(files)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    with process.stdout:
        output = process.stdout.read()
    # wait4, not Popen.wait: it also gives the child's peak memory.
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if status != 0:
        raise BenchmarkError(f"the delta-rs run failed (exit status {status}): {output[-2000:]}")
    result: dict[str, Any] = json.loads(output.strip().splitlines()[-1])
    result["peak_mib"] = {"delta-rs process": usage.ru_maxrss / 1024}
    return result


def _sampled_values(df: DataFrame, count: int, seed: int) -> dict[str, list[object]]:
    rows = collect_arrow(df.orderBy(F.rand(seed)).limit(count))
    return {c: rows.column(c).to_pylist() for c in NETWORK_COLUMNS}


def _quality(layout: str, path: str, values: dict[str, dict[str, list[object]]]) -> LayoutQuality:
    files = file_count(path)
    best = ceiling(files, len(NETWORK_COLUMNS))
    kinds = {}
    for kind, wanted in values.items():
        per_column = equality_effectiveness(path, wanted)
        mean = float(np.mean(list(per_column.values())))
        kinds[kind] = Effectiveness(per_column, mean, mean / best if best else 0.0)
    return LayoutQuality(layout, files, best, kinds["sampled"], kinds["random"])


def _lay_out(
    contender: _Contender, df: DataFrame, path: str, source: str, files: int, peaks: _Peaks
) -> dict[str, Any]:
    """Write ``df`` to ``path`` as ``contender`` does; its seconds and peak memory."""
    peaks.reset()
    started = time.perf_counter()
    extra: dict[str, Any] = {}
    if contender.curve is not None:
        write(df, path, by=list(contender.by), curve=contender.curve, num_files=files)
    elif contender.name == "as written":
        write_as_written(df, path, files)
    elif contender.name.startswith("plain sort"):
        df.repartitionByRange(files, "src_ip").sortWithinPartitions("src_ip").write.parquet(path)
    else:
        extra = _run_delta_rs(source, path, files)
    seconds = extra.pop("seconds", time.perf_counter() - started)
    memory = extra.pop("peak_mib", None) or peaks.read()
    return {"seconds": seconds, "peak_mib": memory, **extra}


def run_bench(
    spark: SparkSession,
    workdir: str | Path,
    config: BenchConfig = DEFAULT,
    *,
    progress: Callable[[str], None] = lambda message: None,
) -> BenchResult:
    """Run every measurement of ``config`` in ``workdir``; ``progress`` is told each step."""
    workdir = Path(workdir)
    peaks = _driver_peaks(spark)
    scales = sorted(set(config.layout_rows) | set(config.cost_rows))
    rng = np.random.default_rng(config.seed)
    layout: dict[int, tuple[LayoutQuality, ...]] = {}
    cost: dict[int, tuple[CostRun, ...]] = {}
    largest_zorder = ""
    for rows in scales:
        measured = _measure_scale(spark, workdir, config, rows, rng, peaks, progress)
        if rows in config.layout_rows:
            layout[rows] = measured.layout
        cost[rows] = measured.cost
        largest_zorder = measured.zorder_path
    progress("point lookups")
    picks = _sampled_values(read(spark, largest_zorder), config.lookups, config.seed)
    wheres = [
        f"src_ip = '{ip}' AND src_port = {port}"
        for ip, port in zip(picks["src_ip"], picks["src_port"], strict=True)
    ]
    reads = time_point_lookups(spark, largest_zorder, wheres, config.repeat)
    return BenchResult(config, layout, cost, reads)


@dataclass(frozen=True)
class _Scale:
    """One row count's measurements, and where its Z-ordered table is."""

    layout: tuple[LayoutQuality, ...]
    cost: tuple[CostRun, ...]
    zorder_path: str


def _measure_scale(
    spark: SparkSession,
    workdir: Path,
    config: BenchConfig,
    rows: int,
    rng: np.random.Generator,
    peaks: _Peaks,
    progress: Callable[[str], None],
) -> _Scale:
    """Every contender laid out at ``rows`` rows: its cost, and its skipping if measured."""
    with_layout = rows in config.layout_rows
    source = str(workdir / f"source-{rows}")
    progress(f"{rows:,} rows: generating the connections")
    network_frame(spark, rows, seed=config.seed).write.parquet(source)
    df = spark.read.parquet(source)
    values = {}
    if with_layout:
        values = {
            "sampled": _sampled_values(df, config.filters, config.seed),
            "random": random_network_values(rng, config.filters),
        }
    layout_rows: list[LayoutQuality] = []
    cost_rows: list[CostRun] = []
    chosen = [
        c
        for c in CONTENDERS
        if (c.cost or with_layout) and (config.delta_rs or not c.name.startswith("delta-rs"))
    ]
    timings: dict[str, list[dict[str, Any]]] = {c.name: [] for c in chosen}
    paths: dict[str, str] = {}
    # Cost contenders run config.repeat times, the later rounds in reverse order, so
    # that no contender always pays for a cold JVM; the fastest run counts.
    rounds = [chosen] + [
        [c for c in (chosen[::-1] if r % 2 else chosen) if c.cost] for r in range(1, config.repeat)
    ]
    for number, contenders in enumerate(rounds):
        for contender in contenders:
            path = str(workdir / f"{rows}-{contender.name.replace(' ', '_')}-{number}")
            progress(f"{rows:,} rows: {contender.name} (round {number + 1})")
            timings[contender.name].append(
                _lay_out(contender, df, path, source, config.files, peaks)
            )
            paths[contender.name] = path
    for contender in chosen:
        runs = timings[contender.name]
        if contender.cost:
            fastest = min(runs, key=lambda run: float(run["seconds"]))
            cost_rows.append(
                CostRun(
                    contender=contender.name,
                    runs=len(runs),
                    seconds=float(fastest["seconds"]),
                    peak_mib=fastest["peak_mib"],
                    ingest_s=fastest.get("ingest_s"),
                )
            )
        if with_layout and contender.layout:
            progress(f"{rows:,} rows: {contender.name}: measuring skipping")
            layout_rows.append(_quality(contender.name, paths[contender.name], values))
    return _Scale(tuple(layout_rows), tuple(cost_rows), paths["zorder"])
