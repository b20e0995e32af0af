"""zorder's benchmark (`zorder bench`): Databricks' experiment, cost, reads.

The measurements live in :mod:`zorder.bench` so that the installed command can
run them; this wrapper adds machine facts and the exact command, renders the
results with their targets, and updates BENCHMARKS.md.

    .venv/bin/python -m benchmarks.product --write-markdown          # about 15 minutes
    .venv/bin/python -m benchmarks.product --quick --write-markdown  # about 2 minutes
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
from typing import Any

from benchmarks.report import (
    command_line,
    lookups_table,
    machine_facts,
    measured_on,
    replace_section,
    write_json,
)
from benchmarks.session import user_session
from zorder.bench import DEFAULT, QUICK, BenchConfig, run_bench
from zorder.demo import NETWORK_COLUMNS

# Databricks' published figures for their 2018 experiment (mean effectiveness).
PUBLISHED = {"linear": 0.25, "zorder (src_ip, dst_ip)": 0.82}
# The cost targets: zorder.write at most 1.15x the plain one-column sort from
# 1M rows on, and no slower than delta-rs at 10M. Below 1M rows the fixed costs
# of any job (count and sample, footers, commit), not the curve, make the ratio.
COST_RATIO_TARGET = 1.15
COST_TARGET_MIN_ROWS = 1_000_000
DELTA_RS_TARGET_MIN_ROWS = 10_000_000


def _pct(value: float) -> str:
    return f"{value:.0%}"


def _mib(peaks: dict[str, float | None] | None) -> str:
    if not peaks:
        return "-"
    return ", ".join(f"{k} {v:,.0f}" for k, v in peaks.items() if v is not None) or "-"


def _cost_verdicts(rows: int, by_name: dict[str, dict[str, Any]]) -> list[str]:
    notes = []
    zorder_s = by_name["zorder"]["seconds"]
    plain = by_name.get("plain sort by src_ip")
    if plain:
        ratio = zorder_s / plain["seconds"]
        if rows >= COST_TARGET_MIN_ROWS:
            verdict = "pass" if ratio <= COST_RATIO_TARGET else "FAIL"
            notes.append(
                f"zorder / plain sort {ratio:.2f} (target <= {COST_RATIO_TARGET}): {verdict}"
            )
        else:
            notes.append(
                f"zorder / plain sort {ratio:.2f} (no target below {COST_TARGET_MIN_ROWS:,} rows)"
            )
    delta_rs = by_name.get("delta-rs optimize.z_order")
    if delta_rs:
        ratio = zorder_s / delta_rs["seconds"]
        if rows >= DELTA_RS_TARGET_MIN_ROWS:
            verdict = "pass" if ratio <= 1 else "FAIL"
            notes.append(f"zorder / delta-rs {ratio:.2f} (target <= 1.00): {verdict}")
        else:
            notes.append(f"zorder / delta-rs {ratio:.2f}")
    return notes


def bench_markdown(payload: dict[str, Any]) -> str:
    """The results as Markdown tables (BENCHMARKS.md's product section)."""
    config = payload["config"]
    lines = [
        "### Layout quality: Databricks' network-connections experiment",
        "",
        f"{config['filters']} single-column equality filters per column, on values sampled "
        "from the table and on random values of each column's domain (random dotted IPv4, "
        "ports 0..65535). Each cell: mean fraction of rows skipped, and that as a fraction "
        "of the ceiling 1 - F^(-1/d) (d = 4). Databricks published about 0.25 for the "
        "linear layout and 0.82 for Z-order on (src_ip, dst_ip).",
    ]
    for rows, table in payload["layout"].items():
        lines += [
            "",
            f"{int(rows):,} rows into {config['files']} files:",
            "",
            "| layout | files | " + " | ".join(NETWORK_COLUMNS) + " | mean (sampled) "
            "| of ceiling | mean (random) | of ceiling |",
            "| --- |" + " ---: |" * (len(NETWORK_COLUMNS) + 5),
        ]
        for row in table:
            sampled, random_ = row["sampled"], row["random"]
            lines.append(
                f"| {row['layout']} | {row['files']} | "
                + " | ".join(f"{sampled['per_column'][c]:.3f}" for c in NETWORK_COLUMNS)
                + f" | {sampled['mean']:.3f} | {_pct(sampled['of_ceiling'])} "
                f"| {random_['mean']:.3f} | {_pct(random_['of_ceiling'])} |"
            )
    lines += [
        "",
        "### Cost of clustering",
        "",
        f"Wall time to lay out the same rows into {config['files']} files, read from Parquet. "
        "zorder: `zorder.write` on four columns (sample, key, shuffle, sort, write, footers, "
        "Delta commit). Plain sort: `repartitionByRange(F, src_ip).sortWithinPartitions(src_ip)"
        ".write.parquet`. delta-rs: `optimize.z_order` on four columns of a table delta-rs "
        "wrote from the same rows (its ingest not counted). Peak resident memory in MiB. "
        f"Each contender: the fastest of {config['repeat']} runs, the later ones in reverse "
        "order so that none always runs first on a cold JVM.",
        "",
        "| rows | contender | seconds | peak memory (MiB) |",
        "| ---: | --- | ---: | --- |",
    ]
    verdicts = []
    for rows, table in payload["cost"].items():
        by_name = {row["contender"]: row for row in table}
        for row in table:
            lines.append(
                f"| {int(rows):,} | {row['contender']} | {row['seconds']:.1f} | "
                f"{_mib(row['peak_mib'])} |"
            )
        verdicts.append(f"- {int(rows):,} rows: " + "; ".join(_cost_verdicts(int(rows), by_name)))
    lines += ["", *verdicts]
    reads = payload["reads"]
    lines += [
        "",
        f"### Reads: point lookups on {reads['table_rows']:,} Z-ordered rows",
        "",
        *lookups_table(reads),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None, config: BenchConfig | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the two-minute configuration")
    parser.add_argument("--no-delta-rs", action="store_true", help="leave delta-rs out")
    parser.add_argument("--write-markdown", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args(argv)
    chosen = config or (QUICK if args.quick else DEFAULT)
    chosen = dataclasses.replace(chosen, delta_rs=chosen.delta_rs and not args.no_delta_rs)
    spark = user_session("zorder-bench")
    with tempfile.TemporaryDirectory(prefix="zorder-bench-") as tmp:
        result = run_bench(spark, tmp, chosen, progress=lambda m: print(m, flush=True))
    payload = result.to_json()
    payload["command"] = command_line(__spec__.name, argv)
    payload["machine"] = machine_facts()
    machine = payload["machine"]
    text = "\n".join(
        [
            "## zorder bench: Databricks' experiment, cost, reads",
            "",
            f"`{payload['command']}`",
            "",
            bench_markdown(payload),
            "",
            measured_on(machine),
        ]
    )
    print(text)
    if args.write_markdown:
        write_json("product", payload)
        replace_section("product", text)
    return payload


if __name__ == "__main__":
    main()
