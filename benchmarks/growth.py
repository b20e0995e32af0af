"""A table that grows: appends, each followed by an optimize, and what the optimizes cost.

Base: network connections clustered by zorder into 100 files (1,000,000 rows
by default). Then 16 appends of 1/16 of the base each, alternating
``zorder.write(mode="append")`` without ``by`` (clustered on write by the
table's spec) and blind appends by ``deltalake.write_deltalake``, each
followed by an optimize. Three contenders, each on its own copy:

- zorder incremental: ``zorder.optimize(spark, path)``, no arguments;
- zorder full: ``zorder.optimize(spark, path, full=True)``;
- delta-rs: every append by ``write_deltalake``, then ``optimize.z_order``
  on the four columns (its target size: the zorder table's file size).

After each optimize: its time, the bytes it rewrote, the table's file count,
and skipping effectiveness of single-column equality filters as a fraction
of the ceiling 1 - F^(-1/4) for that file count. At the end, write
amplification = bytes rewritten by the optimizes / bytes appended.

Separately, on copies of the base with a 5% blind append: the incremental
optimize's time against a full one, the median of rounds in one session.

    .venv/bin/python -m benchmarks.growth --write-markdown
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from deltalake import DeltaTable, write_deltalake
from pyspark.sql import SparkSession

import zorder
from benchmarks.report import command_line, machine_facts, measured_on, replace_section, write_json
from benchmarks.session import user_session
from zorder.demo import (
    NETWORK_COLUMNS,
    ceiling,
    equality_effectiveness,
    network_connections,
    random_network_values,
)

AMPLIFICATION_GOAL = 3.0
OF_CEILING_GOAL = 0.80
COST_GOAL = 0.3
CONTENDERS = ("zorder incremental", "zorder full", "delta-rs")


@dataclass(frozen=True)
class Step:
    """One append and the optimize after it, on one contender's table."""

    append: str  # who appended: "zorder" or "delta-rs"
    bytes_appended: int
    seconds: float
    bytes_rewritten: int
    files: int
    of_ceiling: float

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def table_bytes(path: str) -> int:
    return sum(f.size for f in zorder.describe(path).files)


def quality(path: str, values: dict[str, list[object]]) -> tuple[int, float]:
    """The table's file count and mean skipping effectiveness as a fraction of its ceiling."""
    files = len(DeltaTable(path).file_uris())
    mean = float(np.mean(list(equality_effectiveness(path, values).values())))
    best = ceiling(files, len(values))
    return files, mean / best if best else 0.0


def run_contender(
    spark: SparkSession,
    name: str,
    path: str,
    appends: list[pa.Table],
    values: dict[str, list[object]],
    target: int,
) -> list[Step]:
    steps = []
    for number, rows in enumerate(appends):
        before = table_bytes(path)
        if name != "delta-rs" and number % 2 == 0:
            zorder.write(spark.createDataFrame(rows), path, mode="append")
            appender = "zorder"
        else:
            write_deltalake(path, rows, mode="append")
            appender = "delta-rs"
        appended = table_bytes(path) - before
        started = time.perf_counter()
        if name == "delta-rs":
            done = DeltaTable(path).optimize.z_order(list(NETWORK_COLUMNS), target_size=target)
            removed = done["filesRemoved"]  # JSON text in deltalake 1.x
            removed = json.loads(removed) if isinstance(removed, str) else removed
            rewritten = int(removed.get("totalSize") or 0)
        else:
            metrics = zorder.optimize(spark, path, full=name == "zorder full")
            rewritten = metrics.bytes_removed
        seconds = time.perf_counter() - started
        files, of_ceiling = quality(path, values)
        steps.append(Step(appender, appended, seconds, rewritten, files, of_ceiling))
    return steps


def incremental_cost(
    spark: SparkSession, base: str, tmp: str, rows: pa.Table, rounds: int
) -> dict[str, Any]:
    """Incremental and full optimize of copies of ``base`` plus a blind append of ``rows``."""
    seconds: dict[str, list[float]] = {"incremental": [], "full": []}
    runs: dict[str, Callable[[str], object]] = {
        "incremental": lambda path: zorder.optimize(spark, path),
        "full": lambda path: zorder.optimize(spark, path, full=True),
    }
    for number in range(rounds):
        for kind in list(runs)[:: -1 if number % 2 else 1]:
            copy = str(Path(tmp) / f"cost-{kind}-{number}")
            shutil.copytree(base, copy)
            write_deltalake(copy, rows, mode="append")
            started = time.perf_counter()
            runs[kind](copy)
            seconds[kind].append(time.perf_counter() - started)
            shutil.rmtree(copy)
    medians = {kind: statistics.median(times) for kind, times in seconds.items()}
    return {
        "seconds": seconds,
        "median": medians,
        "ratio": medians["incremental"] / medians["full"],
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-rows", type=int, default=1_000_000)
    parser.add_argument("--base-files", type=int, default=100)
    parser.add_argument("--appends", type=int, default=16)
    parser.add_argument("--filters", type=int, default=40, help="values per column")
    parser.add_argument("--cost-fraction", type=float, default=0.05)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the cost comparison")
    parser.add_argument("--contenders", nargs="+", default=list(CONTENDERS), choices=CONTENDERS)
    parser.add_argument("--write-markdown", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args(argv)
    spark = user_session("zorder-bench-growth")
    by = list(NETWORK_COLUMNS)
    step_rows = args.base_rows // 16
    appends = [network_connections(step_rows, seed=5000 + n) for n in range(args.appends)]
    values = random_network_values(np.random.default_rng(11), args.filters)
    with tempfile.TemporaryDirectory(prefix="zorder-growth-") as tmp:
        base_rows = network_connections(args.base_rows, seed=4000)
        base = str(Path(tmp) / "base")
        zorder.write(spark.createDataFrame(base_rows), base, by=by, num_files=args.base_files)
        target = int(DeltaTable(base).metadata().configuration["delta.targetFileSize"])
        start_files, start_quality = quality(base, values)
        results: dict[str, list[Step]] = {}
        for name in args.contenders:
            path = str(Path(tmp) / name.replace(" ", "-"))
            if name == "delta-rs":
                write_deltalake(path, base_rows)
                DeltaTable(path).optimize.z_order(by, target_size=target)
            else:
                shutil.copytree(base, path)
            results[name] = run_contender(spark, name, path, appends, values, target)
        cost_rows = network_connections(int(args.base_rows * args.cost_fraction), seed=9000)
        cost = incremental_cost(spark, base, tmp, cost_rows, args.rounds)
    payload = {
        "command": command_line(__spec__.name, argv),
        "machine": machine_facts(),
        "base_rows": args.base_rows,
        "base_files": args.base_files,
        "step_rows": step_rows,
        "target_file_size": target,
        "start": {"files": start_files, "of_ceiling": start_quality},
        "contenders": {name: [s.to_json() for s in steps] for name, steps in results.items()},
        "cost_fraction": args.cost_fraction,
        "cost": cost,
    }
    text = markdown(payload)
    print(text)
    if args.write_markdown:
        write_json("growth", payload)
        replace_section("growth", text)
    return payload


def amplification(steps: list[dict[str, Any]]) -> float:
    appended = sum(s["bytes_appended"] for s in steps)
    return sum(s["bytes_rewritten"] for s in steps) / appended if appended else 0.0


def markdown(payload: dict[str, Any]) -> str:
    contenders, machine, cost = payload["contenders"], payload["machine"], payload["cost"]
    lines = [
        "## A growing table: appends, each followed by an optimize",
        "",
        f"`{payload['command']}`",
        "",
        f"Base: {payload['base_rows']:,} network connections clustered by zorder into "
        f"{payload['base_files']} files (target file size recorded: "
        f"{payload['target_file_size']:,} bytes; {payload['start']['of_ceiling']:.0%} of the "
        f"ceiling). Then appends of {payload['step_rows']:,} rows, alternating "
        '`zorder.write(mode="append")` without `by` and blind `write_deltalake` appends (the '
        "delta-rs contender: `write_deltalake` only), each followed by an optimize: "
        "`zorder.optimize(spark, path)` (incremental), `zorder.optimize(spark, path, full=True)`, "
        "and delta-rs `optimize.z_order` on the four columns. Effectiveness: single-column "
        "equality filters on random values, as a fraction of the ceiling 1 - F^(-1/4) for the "
        "table's file count F after the optimize.",
        "",
        "| append | by | "
        + " | ".join(f"{name}: s, MB rewritten, files, of ceiling" for name in contenders)
        + " |",
        "| ---: | --- |" + " --- |" * len(contenders),
    ]
    count = len(next(iter(contenders.values()), []))
    for number in range(count):
        cells = []
        for steps in contenders.values():
            s = steps[number]
            cells.append(
                f"{s['seconds']:.1f}, {s['bytes_rewritten'] / 1e6:.1f}, {s['files']}, "
                f"{s['of_ceiling']:.0%}"
            )
        by = next(iter(contenders.values()))[number]["append"]
        lines.append(f"| {number + 1} | {by} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "| contender | write amplification | worst of ceiling | optimize seconds, total |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, steps in contenders.items():
        lines.append(
            f"| {name} | {amplification(steps):.2f} | {min(s['of_ceiling'] for s in steps):.0%} "
            f"| {sum(s['seconds'] for s in steps):.1f} |"
        )
    verdicts = []
    incremental = contenders.get("zorder incremental")
    if incremental:
        amp = amplification(incremental)
        worst = min(s["of_ceiling"] for s in incremental)
        verdicts += [
            f"- Incremental write amplification {amp:.2f} (goal at most {AMPLIFICATION_GOAL:g}): "
            f"**{'pass' if amp <= AMPLIFICATION_GOAL else 'FAIL'}**.",
            f"- Incremental effectiveness after every optimize at least {worst:.0%} of the "
            f"ceiling (goal at least {OF_CEILING_GOAL:.0%}): "
            f"**{'pass' if worst >= OF_CEILING_GOAL else 'FAIL'}**.",
        ]
    ratio = cost["ratio"]
    verdicts.append(
        f"- After a {payload['cost_fraction']:.0%} blind append to the base, incremental "
        f"optimize {cost['median']['incremental']:.1f} s against full "
        f"{cost['median']['full']:.1f} s (medians of {len(cost['seconds']['full'])} rounds, one "
        f"session): ratio {ratio:.2f} (goal at most {COST_GOAL:g}): "
        f"**{'pass' if ratio <= COST_GOAL else 'FAIL'}**."
    )
    lines += [
        "",
        *verdicts,
        "",
        measured_on(machine),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
