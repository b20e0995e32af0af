"""Where a clustering write's time goes, phase by phase, against a plain range sort.

The same rows (network connections, read from Parquet) into the same number
of files, in one local session: ``zorder.write`` by four columns, Z-order and
Hilbert, and the floor, a plain ``repartitionByRange(F, src_ip)
.sortWithinPartitions(src_ip).write.parquet``. zorder's phases are the wall
seconds of :attr:`zorder.ClusterMetrics.phase_seconds`:

- counting: the input's size (Spark's plan statistics; a job only when the
  plan has none);
- sampling: the sample job and the boundaries fitted on the driver;
- clustering and writing: one Spark job, the keys (computed in the JVM,
  :mod:`zorder.spark.file_keys`) and the shuffle in its first stage, the
  sort and the Parquet write in its second;
- statistics: the written footers read back; commit and properties: the
  Delta commits.

Both write with the same tasks, so the comparison holds the file count and
the tasks per file equal: zorder's (:func:`zorder.spark.committer.run_tasks`:
a few a core, each writing a contiguous run of files), and the plain sort's
range tasks as many, each cut into files every rows/files rows
(``maxRecordsPerFile``); a task a file for both where zorder gives each file
a task of its own. The first round warms the JVM up and is reported on its
own (*first run*); each contender is then the fastest of the ``--repeat``
steady rounds, alternating in order, and a phase is shown from that run.
Issue 35's target: zorder at most 1.10x the plain sort at 1M and 3M rows
into 32 files.

    .venv/bin/python -m benchmarks.phases --write-markdown
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Literal

from pyspark.sql import SparkSession

import zorder
from benchmarks.report import command_line, machine_facts, measured_on, replace_section, write_json
from benchmarks.session import user_session
from zorder.curves import Curve
from zorder.demo import NETWORK_COLUMNS, network_frame
from zorder.spark.committer import run_tasks
from zorder.spark.writes import LOCAL_WRITE_OPTIONS

PHASES = ("counting", "sampling", "clustering and writing", "statistics", "commit", "properties")


def _zorder(spark: SparkSession, source: str, out: str, curve: Curve, files: int) -> dict[str, Any]:
    frame = spark.read.parquet(source)
    metrics = zorder.write(frame, out, by=list(NETWORK_COLUMNS), curve=curve, num_files=files)
    return {
        "seconds": metrics.seconds,
        "phases": dict(metrics.phase_seconds),
        "tasks": run_tasks(spark, files) or files,
        "files": metrics.files_added,
    }


def _plain(spark: SparkSession, source: str, out: str, rows: int, files: int) -> dict[str, Any]:
    started = time.perf_counter()
    tasks = run_tasks(spark, files) or files
    frame = spark.read.parquet(source)
    laid_out = frame.repartitionByRange(tasks, "src_ip").sortWithinPartitions("src_ip")
    # Through the local filesystem zorder's writes use (no checksum files): the
    # comparison is of the layouts, not of Hadoop's checksums.
    writer = laid_out.write.options(**LOCAL_WRITE_OPTIONS)
    if tasks < files:
        writer = writer.option("maxRecordsPerFile", math.ceil(rows / files))
    writer.parquet(out)
    seconds = time.perf_counter() - started
    written = len(list(Path(out).glob("*.parquet")))
    return {"seconds": seconds, "phases": {}, "tasks": tasks, "files": written}


def measure(spark: SparkSession, tmp: str, rows: int, files: int, repeat: int) -> dict[str, Any]:
    source = f"{tmp}/source-{rows}"
    network_frame(spark, rows).write.parquet(source)
    contenders: list[Curve | Literal["plain sort"]] = ["zorder", "hilbert", "plain sort"]
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in contenders}
    for attempt in range(repeat + 1):  # round 0 warms up
        order = contenders if attempt % 2 == 0 else list(reversed(contenders))
        for name in order:
            out = f"{tmp}/{name.replace(' ', '-')}-{uuid.uuid4().hex[:8]}"
            if name == "plain sort":
                runs[name].append(_plain(spark, source, out, rows, files))
            else:
                runs[name].append(_zorder(spark, source, out, name, files))
    best = {name: min(results[1:], key=lambda r: r["seconds"]) for name, results in runs.items()}
    first = {name: results[0]["seconds"] for name, results in runs.items()}
    return {"rows": rows, "files": files, "best": best, "first": first}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rows", type=int, nargs="+", default=[1_000_000, 3_000_000], help="scales"
    )
    parser.add_argument("--files", type=int, default=32)
    parser.add_argument(
        "--repeat", type=int, default=3, help="steady runs of each contender, after one warm-up"
    )
    parser.add_argument("--write-markdown", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(
            f"--repeat must be at least 1 (steady runs after the warm-up), got {args.repeat}"
        )
    spark = user_session("zorder-bench-phases")
    with tempfile.TemporaryDirectory(prefix="zorder-phases-") as tmp:
        scales = [measure(spark, tmp, rows, args.files, args.repeat) for rows in args.rows]
    payload = {
        "command": command_line(__spec__.name, argv),
        "machine": machine_facts(),
        "repeat": args.repeat,
        "scales": scales,
    }
    text = markdown(payload)
    print(text)
    if args.write_markdown:
        write_json("phases", payload)
        replace_section("phases", text)
    return payload


def markdown(payload: dict[str, Any]) -> str:
    machine = payload["machine"]
    lines = [
        "## Where a clustering write's time goes: phases against a plain sort",
        "",
        f"`{payload['command']}`",
        "",
        "The same rows read from Parquet into the same number of files in one local session, "
        "with the same tasks: `zorder.write` by four columns (Z-order, Hilbert; a few tasks a "
        "core, each writing a run of files through zorder's commit protocol) and the floor, a "
        "plain `repartitionByRange(T, src_ip).sortWithinPartitions(src_ip).write.parquet` "
        "into as many tasks, each cut every rows/files rows (`maxRecordsPerFile`); both through "
        "Hadoop's raw local filesystem, as zorder's writes are (no `.crc` files). "
        "Phases are zorder's own wall seconds (`ClusterMetrics.phase_seconds`): "
        "*clustering and writing* is one Spark job (keys computed in the JVM by zorder's jar, and "
        "the shuffle; then sort and Parquet write). The first round warms the JVM up and is "
        "shown on its own (zorder runs first in it, so its first run pays for the cold start "
        "and for adding its jar); each "
        f"contender is then the fastest of {payload['repeat']} steady runs, "
        "alternating in order. Target (issue 35): zorder at most 1.10x the plain sort.",
        "",
        "| rows | files | tasks | contender | total | "
        + " | ".join(PHASES)
        + " | / plain sort | first run |",
        "| ---: | ---: | ---: | --- | ---: | "
        + " | ".join("---:" for _ in PHASES)
        + " | ---: | ---: |",
    ]
    for scale in payload["scales"]:
        plain = scale["best"]["plain sort"]["seconds"]
        for name in ("zorder", "hilbert", "plain sort"):
            result = scale["best"][name]
            phases = result["phases"]
            cells = [f"{phases[p]:.2f}" if p in phases else "" for p in PHASES]
            lines.append(
                f"| {scale['rows']:,} | {result['files']} | {result['tasks']} | {name} "
                f"| {result['seconds']:.2f} | "
                + " | ".join(cells)
                + f" | {result['seconds'] / plain:.2f} | {scale['first'][name]:.2f} |"
            )
    lines += [
        "",
        measured_on(machine),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
