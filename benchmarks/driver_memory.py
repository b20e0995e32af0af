"""Clustering 8M rows with a 600 MB driver heap: nothing but samples and footers reach it.

The rows are generated inside Spark (network connections: IP strings and
ports), clustered on four columns with ``zorder.write`` and committed; the
driver JVM is started with ``spark.driver.memory=600m``. In local mode the
executors share the driver JVM, so the heap also carries the shuffle.

    .venv/bin/python -m benchmarks.driver_memory --write-markdown
"""

from __future__ import annotations

import argparse
import tempfile
import time
from typing import Any

import zorder
from benchmarks.report import command_line, machine_facts, replace_section, write_json
from benchmarks.session import user_session
from zorder.demo import network_frame
from zorder.spark.keys import sample_size_for


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=8_000_000)
    parser.add_argument("--files", type=int, default=32)
    parser.add_argument("--driver-memory", default="600m")
    parser.add_argument("--write-markdown", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args(argv)
    spark = user_session(
        "zorder-bench-driver-memory",
        conf={"spark.driver.memory": args.driver_memory, "spark.sql.shuffle.partitions": "16"},
    )
    heap = spark.sparkContext._jvm.java.lang.Runtime.getRuntime().maxMemory()  # type: ignore[union-attr]
    df = network_frame(spark, args.rows, seed=0)
    with tempfile.TemporaryDirectory(prefix="zorder-memory-") as tmp:
        started = time.perf_counter()
        metrics = zorder.write(
            df, f"{tmp}/t", by=["src_ip", "dst_ip", "src_port", "dst_port"], num_files=args.files
        )
        seconds = time.perf_counter() - started
    payload = {
        "command": command_line(__spec__.name, argv),
        "machine": machine_facts(),
        "config": {"rows": args.rows, "files": args.files, "driver_memory": args.driver_memory},
        "results": {
            "rows_written": metrics.rows,
            "files_added": metrics.files_added,
            "driver_max_heap_bytes": int(heap),
            "seconds": seconds,
        },
    }
    text = "\n".join(
        [
            "## Driver memory: 8M rows with a 600 MB driver heap",
            "",
            f"`{payload['command']}`",
            "",
            f"Clustered {metrics.rows:,} generated rows on four columns (Z-order, rank keys) "
            f"into {metrics.files_added} files in {seconds:.0f} s with the driver JVM's maximum "
            f"heap at {heap / 2**20:.0f} MiB (`spark.driver.memory={args.driver_memory}`, local "
            "mode, so the same heap also ran the tasks). Only the key sample "
            f"({sample_size_for(args.files):,} rows of the four columns) and the Parquet footers "
            "reached the driver.",
            "",
            f"Measured {payload['machine']['date']} on {payload['machine']['cpus']} CPUs.",
        ]
    )
    print(text)
    if args.write_markdown:
        write_json("driver_memory", payload)
        replace_section("driver-memory", text)
    spark.stop()
    return payload


if __name__ == "__main__":
    main()
