"""Interactive point lookups: zorder.to_arrow against DuckDB, Polars and zorder.read.

A clustered network-connections table (10M rows in 100 files by default,
clustered by all four columns). For each column, equality lookups on values
sampled from the table, each timed as the best of ``--repeat`` runs:

- ``zorder.to_arrow(path, where)``: planning plus an in-process read, no JVM;
- DuckDB ``delta_scan`` (the delta extension, loaded once) to Arrow;
- Polars ``scan_delta(path).filter(sql_expr(where)).collect()``;
- ``zorder.read(spark, path, where).toArrow()`` in a warm local session.

Every engine must return the same number of rows. Then a cold ``zorder query``
point lookup, a new process end to end (Python start, imports, log, read,
print), as an analyst runs it. Goals: to_arrow's median at most 2x DuckDB's
on the same lookups; the cold ``zorder query`` under 1 second.

    .venv/bin/python -m benchmarks.lookups --write-markdown
"""

from __future__ import annotations

import argparse
import pathlib
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import duckdb_extension_delta
import polars as pl

import zorder
from benchmarks.report import command_line, machine_facts, measured_on, replace_section, write_json
from benchmarks.session import user_session
from zorder.demo import network_frame
from zorder.spark.compat import collect_arrow

COLUMNS = ("src_ip", "dst_ip", "src_port", "dst_port")
ENGINES = ("to_arrow", "duckdb", "polars", "read")
# Goals (issue 25): to_arrow at DuckDB's speed (DuckDB reads inside it), and a cold
# `zorder query` well under a second.
RATIO_GOAL = 1.1
COLD_GOAL_S = 0.6


def best(run: Callable[[], int], repeat: int) -> tuple[float, int]:
    """The fastest of ``repeat`` runs, and the rows the run returned."""
    times, rows = [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        rows = run()
        times.append(time.perf_counter() - started)
    return min(times), rows


def duckdb_connection() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    package = pathlib.Path(duckdb_extension_delta.__file__).parent
    con.load_extension(str(next(package.glob("extensions/*/delta.duckdb_extension"))))
    return con


def lookups(path: str, wheres: list[str], repeat: int, spark: Any) -> list[dict[str, Any]]:
    con = duckdb_connection()
    runners: dict[str, Callable[[str], int]] = {
        "to_arrow": lambda w: zorder.to_arrow(path, w).num_rows,
        "duckdb": lambda w: (
            con.sql(f"SELECT * FROM delta_scan('{path}') WHERE {w}").to_arrow_table().num_rows
        ),
        "polars": lambda w: pl.scan_delta(path).filter(pl.sql_expr(w)).collect().height,
        "read": lambda w: collect_arrow(zorder.read(spark, path, w)).num_rows,
    }
    for runner in runners.values():  # first calls pay for imports and class loading
        runner(wheres[0])
    results = []
    for where in wheres:
        timed = {
            name: best(lambda r=runner, w=where: r(w), repeat) for name, runner in runners.items()
        }
        counts = {name: rows for name, (_, rows) in timed.items()}
        if len(set(counts.values())) != 1:
            raise AssertionError(f"engines disagree on {where}: {counts}")
        report = zorder.explain(path, where)
        results.append(
            {
                "where": where,
                "rows": counts["to_arrow"],
                "files_scanned": report.files_scanned,
                "files_total": report.files_total,
                **{f"{name}_s": seconds for name, (seconds, _) in timed.items()},
            }
        )
    return results


def cold_queries(path: str, wheres: list[str]) -> list[float]:
    """Seconds for ``zorder query`` in a fresh process, end to end, per lookup."""
    times = []
    for where in wheres:
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "zorder", "query", path, "--where", where, "--limit", "5"],
            capture_output=True,
            text=True,
            check=False,
        )
        times.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise AssertionError(f"zorder query failed: {done.stdout}{done.stderr}")
    return times


def sampled_filters(path: str, per_column: int, seed: int) -> list[str]:
    sample = zorder.to_arrow(path, limit=200_000)
    rng = random.Random(seed)
    wheres = []
    for column in COLUMNS:
        values = sample.column(column).to_pylist()
        for value in rng.sample(values, per_column):
            literal = f"'{value}'" if isinstance(value, str) else str(value)
            wheres.append(f"{column} = {literal}")
    return wheres


def markdown(payload: dict[str, Any]) -> str:
    rows, machine = payload["lookups"], payload["machine"]
    medians = {name: statistics.median(r[f"{name}_s"] for r in rows) for name in ENGINES}
    ratio = statistics.median(r["to_arrow_s"] / r["duckdb_s"] for r in rows)
    cold = statistics.median(payload["cold_s"])
    lines = [
        "## Interactive lookups: to_arrow, DuckDB, Polars, read(), and a cold zorder query",
        "",
        f"`{payload['command']}`",
        "",
        f"{payload['rows']:,} network connections clustered by zorder into {payload['files']} "
        f"files by {', '.join(COLUMNS)} (written in {payload['write_s']:.0f} s). Equality "
        "lookups on values sampled from the table, each the best of "
        f"{payload['repeat']} runs; every engine returned the same rows. `read()` is "
        "`zorder.read(spark, ...).toArrow()` in a warm local session.",
        "",
        "| filter | rows | files scanned | to_arrow | DuckDB | Polars | read() |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| `{r['where']}` | {r['rows']:,} | {r['files_scanned']} of {r['files_total']} | "
            f"{r['to_arrow_s'] * 1000:.0f} ms | {r['duckdb_s'] * 1000:.0f} ms | "
            f"{r['polars_s'] * 1000:.0f} ms | {r['read_s'] * 1000:.0f} ms |"
        )
    lines += [
        f"| **median** | | | **{medians['to_arrow'] * 1000:.0f} ms** | "
        f"{medians['duckdb'] * 1000:.0f} ms | {medians['polars'] * 1000:.0f} ms | "
        f"{medians['read'] * 1000:.0f} ms |",
        "",
        f"Median of to_arrow / DuckDB over the lookups: {ratio:.2f}; goal at most "
        f"{RATIO_GOAL}: **{'pass' if ratio <= RATIO_GOAL else 'FAIL'}**.",
        "",
        f"A cold `zorder query PATH --where ... --limit 5` (a new Python process: start, "
        f"imports, log, read, print), one run for each of {len(payload['cold_s'])} lookups: "
        f"median {cold:.2f} s (min {min(payload['cold_s']):.2f}, max "
        f"{max(payload['cold_s']):.2f}); goal at most {COLD_GOAL_S} s: "
        f"**{'pass' if cold <= COLD_GOAL_S else 'FAIL'}**. "
        "The files are in the operating system's cache, as after any earlier query.",
        "",
        measured_on(machine),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--per-column", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--write-markdown", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args(argv)
    spark = user_session("zorder-bench-lookups")
    with tempfile.TemporaryDirectory(prefix="zorder-lookups-") as tmp:
        path = str(Path(tmp) / "conns")
        started = time.perf_counter()
        zorder.write(
            network_frame(spark, args.rows, seed=0), path, by=list(COLUMNS), num_files=args.files
        )
        write_s = time.perf_counter() - started
        wheres = sampled_filters(path, args.per_column, seed=1)
        payload = {
            "command": command_line(__spec__.name, argv),
            "machine": machine_facts(),
            "rows": args.rows,
            "files": args.files,
            "repeat": args.repeat,
            "write_s": write_s,
            "lookups": lookups(path, wheres, args.repeat, spark),
            "cold_s": cold_queries(path, wheres),
        }
    text = markdown(payload)
    print(text)
    if args.write_markdown:
        write_json("lookups", payload)
        replace_section("lookups", text)
    return payload


if __name__ == "__main__":
    main()
