"""Shared plumbing of the benchmarks: machine facts, JSON results, BENCHMARKS.md sections."""

from __future__ import annotations

import json
import os
import platform
import re
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
MARKDOWN = ROOT / "BENCHMARKS.md"

_HEADER = """# Benchmarks

Every figure below was measured by the command shown with it, in one run on
the machine described with it. Speeds are compared as ratios within one run,
because the machines this is run on are shared and noisy. Re-run the command
to refresh a section; the other sections are left as they are.
"""


def machine_facts() -> dict[str, Any]:
    import numpy
    import pyspark

    from benchmarks.session import SESSION

    return {
        "pyspark": pyspark.__version__,
        "session": SESSION,
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "platform": platform.platform(),
        "processor": platform.machine(),
        "cpus": os.cpu_count(),
    }


def measured_on(machine: dict[str, Any]) -> str:
    """The sentence that says when, where and with which Spark a section was measured."""
    spark = f", pyspark {machine['pyspark']}, {machine['session']}" if "pyspark" in machine else ""
    return (
        f"Measured {machine['date']} on {machine['cpus']} CPUs, Python {machine['python']}{spark}."
    )


def command_line(module: str, argv: Sequence[str] | None = None) -> str:
    """The command that reproduces this run of ``module`` with ``argv``, from the repository root.

    Named by the caller (its ``__spec__.name``), not read off ``sys.argv[0]``,
    which is pytest's or a virtualenv's script when the benchmark is called.
    """
    arguments = list(sys.argv[1:] if argv is None else argv)
    return " ".join([".venv/bin/python -m", module, *arguments])


def lookups_table(reads: dict[str, Any], *, row_group_pruned: bool = False) -> list[str]:
    """Markdown rows of point lookups (``LookupTimings.to_json()``) and the verdict on them.

    Target: each lookup's time at most the fraction of rows it scans + 10% of
    reading every row (median over the lookups).
    """
    pruned = "| all files, row groups pruned " if row_group_pruned else ""
    lines = [
        f"| filter | files scanned | rows in them | read() {pruned}| all rows read | ratio |",
        "| --- | ---: | ---: | ---: |" + (" ---: |" if row_group_pruned else "") + " ---: | ---: |",
    ]
    for q in reads["queries"]:
        extra = f"{q['row_group_pruned_s']:.2f} s | " if row_group_pruned else ""
        lines.append(
            f"| `{q['where']}` | {q['files_scanned']} of {q['files_total']} | "
            f"{q['rows_fraction']:.1%} | {q['lookup_s']:.2f} s | {extra}"
            f"{q['full_scan_s']:.2f} s | {q['ratio']:.2f} |"
        )
    target = reads["median_rows_fraction"] + 0.10
    verdict = "pass" if reads["median_ratio"] <= target else "FAIL"
    lines += [
        "",
        f"Median ratio to reading every row (`spark.sql.parquet.filterPushdown=false`) "
        f"{reads['median_ratio']:.2f}; target at most {target:.2f} (median fraction of rows "
        f"scanned + 10%): **{verdict}**.",
    ]
    return lines


def write_json(name: str, payload: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")
    return path


def replace_section(name: str, body: str, markdown: Path = MARKDOWN) -> None:
    """Put ``body`` between this section's markers, keeping every other section."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    block = f"{start}\n{body.rstrip()}\n{end}"
    text = markdown.read_text() if markdown.exists() else _HEADER
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    markdown.write_text(text)
