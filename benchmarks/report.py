"""Shared plumbing of the benchmarks: machine facts, JSON results, BENCHMARKS.md sections."""

from __future__ import annotations

import json
import os
import platform
import re
import sys
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

    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "platform": platform.platform(),
        "processor": platform.machine(),
        "cpus": os.cpu_count(),
    }


def command_line() -> str:
    """The command that reproduces this run, as run from the repository root."""
    module = Path(sys.argv[0]).resolve().relative_to(ROOT).with_suffix("")
    return " ".join([".venv/bin/python -m", ".".join(module.parts), *sys.argv[1:]])


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
