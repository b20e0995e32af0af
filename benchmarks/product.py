"""zorder's benchmark (`zorder bench`): Databricks' experiment, cost, reads.

The measurements live in :mod:`zorder.bench` so that the installed command can
run them; this wrapper adds machine facts and the exact command, and updates
BENCHMARKS.md.

    .venv/bin/python -m benchmarks.product --write-markdown          # about 15 minutes
    .venv/bin/python -m benchmarks.product --quick --write-markdown  # about 2 minutes
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
from typing import Any

from benchmarks.report import command_line, machine_facts, replace_section, write_json
from zorder.bench import DEFAULT, QUICK, BenchConfig, bench_markdown, run_bench
from zorder.spark import local_session


def main(argv: list[str] | None = None, config: BenchConfig | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the two-minute configuration")
    parser.add_argument("--no-delta-rs", action="store_true", help="leave delta-rs out")
    parser.add_argument("--write-markdown", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args(argv)
    chosen = config or (QUICK if args.quick else DEFAULT)
    chosen = dataclasses.replace(chosen, delta_rs=chosen.delta_rs and not args.no_delta_rs)
    spark = local_session(app_name="zorder-bench")
    spark.sparkContext.setLogLevel("ERROR")
    with tempfile.TemporaryDirectory(prefix="zorder-bench-") as tmp:
        payload = run_bench(spark, tmp, chosen, progress=lambda m: print(m, flush=True))
    payload["command"] = command_line()
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
            f"Measured {machine['date']} on {machine['cpus']} CPUs, Python {machine['python']}.",
        ]
    )
    print(text)
    if args.write_markdown:
        write_json("product", payload)
        replace_section("product", text)
    return payload


if __name__ == "__main__":
    main()
