"""Reads: planning cost over a large log, and point lookups against a full scan.

1. Planning: a synthetic Delta log of 100,000 files with statistics (built
   with deltalake's transaction API; the data files need not exist, nothing
   reads them). Compared: the time deltalake needs to load the log and list
   its add actions, and the time zorder needs on top of that to evaluate a
   predicate against every file. Target: planning under a tenth of the load.
2. Point lookups on a clustered network-connections table (10M rows by
   default): ``zorder.read(...).count()`` against a full scan of the same
   files with the same filter. Target: lookup time at most (fraction of rows
   scanned + 10%) of the full scan's.

    .venv/bin/python -m benchmarks.reads --write-markdown
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable
from deltalake import Schema as DeltaSchema
from deltalake.transaction import AddAction, create_table_with_add_actions
from pyspark.sql import SparkSession

import zorder
from benchmarks.report import (
    command_line,
    lookups_table,
    machine_facts,
    measured_on,
    replace_section,
    write_json,
)
from benchmarks.session import user_session
from zorder.api.context import Context
from zorder.api.scanning import plan_scan
from zorder.demo import best_seconds, network_frame, time_point_lookups
from zorder.table import Storage, load_snapshot


def synthetic_log(path: str, files: int, seed: int) -> None:
    rng = random.Random(seed)
    schema = pa.schema(
        [
            ("src_ip", pa.string()),
            ("dst_ip", pa.string()),
            ("src_port", pa.int32()),
            ("dst_port", pa.int32()),
        ]
    )
    adds = []
    for i in range(files):
        low, high = sorted(rng.randrange(65536) for _ in range(2))
        stats = {
            "numRecords": 100_000,
            "minValues": {
                "src_ip": f"{i % 250}.1.0.0",
                "dst_ip": "1.0.0.0",
                "src_port": low,
                "dst_port": 0,
            },
            "maxValues": {
                "src_ip": f"{i % 250}.9.9.9",
                "dst_ip": "99.9.9.9",
                "src_port": high,
                "dst_port": 65535,
            },
            "nullCount": {"src_ip": 0, "dst_ip": 0, "src_port": 0, "dst_port": 0},
        }
        adds.append(
            AddAction(
                path=f"zorder-synthetic/part-{i:06d}.parquet",
                size=64 * 1024 * 1024,
                partition_values={},
                modification_time=0,
                data_change=True,
                stats=json.dumps(stats),
            )
        )
    create_table_with_add_actions(path, DeltaSchema.from_arrow(schema), adds)


def planning(workdir: Path, files: int, repeat: int) -> dict[str, Any]:
    path = str(workdir / "log")
    synthetic_log(path, files, seed=3)
    where = "src_port = 12345 AND src_ip = '7.5.5.5'"
    load_s = best_seconds(lambda: DeltaTable(path).get_add_actions(flatten=False), repeat)
    explain_s = best_seconds(lambda: zorder.explain(path, where), repeat)
    report = zorder.explain(path, where)
    # What zorder adds to deltalake's own load: evaluating the filter on every file.
    snapshot = load_snapshot(Storage.of(path))
    planning_s = best_seconds(lambda: plan_scan(snapshot, where, Context.of(None)), repeat)
    return {
        "files": files,
        "deltalake_load_s": load_s,
        "zorder_explain_s": explain_s,
        "planning_s": planning_s,
        "planning_over_load": planning_s / load_s,
        "files_kept": report.files_scanned,
    }


def lookups(
    spark: SparkSession, workdir: Path, rows: int, files: int, queries: int
) -> dict[str, Any]:
    path = str(workdir / "conns")
    started = time.perf_counter()
    zorder.write(
        network_frame(spark, rows, seed=0),
        path,
        by=["src_ip", "dst_ip", "src_port", "dst_port"],
        num_files=files,
    )
    write_s = time.perf_counter() - started
    picks = zorder.read(spark, path).limit(queries).collect()
    wheres = [f"src_ip = '{row['src_ip']}' AND src_port = {row['src_port']}" for row in picks]
    timed = time_point_lookups(spark, path, wheres, 2, row_group_pruned=True)
    return {"rows": rows, "files": files, "write_s": write_s, **timed.to_json()}


def markdown(payload: dict[str, Any]) -> str:
    plan, look, machine = payload["planning"], payload["lookups"], payload["machine"]
    lines = [
        "## Reads: planning over a large log, and point lookups",
        "",
        f"`{payload['command']}`",
        "",
        f"Planning over a synthetic log of {plan['files']:,} files: deltalake loads the log and "
        f"lists its add actions in {plan['deltalake_load_s']:.3f} s; evaluating the filter "
        f"against every file's statistics then takes {plan['planning_s']:.3f} s "
        f"({plan['planning_over_load']:.2f}x the load; {plan['files_kept']} files kept), and "
        f"`zorder.explain` end to end {plan['zorder_explain_s']:.3f} s. Target: planning under "
        f"0.1x the load: **{'pass' if plan['planning_over_load'] < 0.1 else 'FAIL'}**. Best of "
        f"{payload['repeat']} runs each.",
        "",
        f"Point lookups on {look['rows']:,} clustered rows in {look['files']} files (written in "
        f"{look['write_s']:.0f} s), `src_ip = v AND src_port = p` for rows of the table, each the "
        "best of 2 runs:",
        "",
        *lookups_table(look, row_group_pruned=True),
        "",
        "Against Spark's default scan of all files, which already skips Parquet row groups on "
        "their own statistics, the median ratio is "
        f"{statistics.median(q['ratio_to_row_group_pruned'] for q in look['queries']):.2f}.",
        "",
        measured_on(machine),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log-files", type=int, default=100_000)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--queries", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--write-markdown", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args(argv)
    spark = user_session("zorder-bench-reads")
    with tempfile.TemporaryDirectory(prefix="zorder-reads-") as tmp:
        payload = {
            "command": command_line(__spec__.name, argv),
            "machine": machine_facts(),
            "repeat": args.repeat,
            "planning": planning(Path(tmp), args.log_files, args.repeat),
            "lookups": lookups(spark, Path(tmp), args.rows, args.files, args.queries),
        }
    text = markdown(payload)
    print(text)
    if args.write_markdown:
        write_json("reads", payload)
        replace_section("reads", text)
    return payload


if __name__ == "__main__":
    main()
