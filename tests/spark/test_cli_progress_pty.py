"""The CLI's status line as a terminal shows it: `zorder` run as a child on a pseudo-terminal.

The CLI starts Spark only when a run needs it, inside the status line it already
shows; the line must then show the running tasks of Spark's jobs (and, for the
in-process engine, the files written of those planned and their rows).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_cli_progress_pty import on_a_pty, parquet_source

pytestmark = pytest.mark.spark


def test_a_spark_write_and_optimize_show_tasks_done_of_total(tmp_path: Path) -> None:
    source = parquet_source(tmp_path / "source", files=8, rows_each=50_000)
    dest = tmp_path / "t"
    spark = ("--engine", "spark", "--master", "local[1]", "--conf", "spark.ui.enabled=false")
    code, shown = on_a_pty(
        "write", str(source), str(dest), "--by", "a,id", "--num-files", "4", *spark
    )
    assert code == 0, shown
    tasks = re.findall(r"Clustering .* into .*\.\.\. ([a-z ]+) (\d+)/(\d+) tasks", shown)
    assert tasks, shown  # the line showed Spark's tasks while the write ran
    assert all(int(done) <= int(total) for _, done, total in tasks)
    assert {name for name, _, _ in tasks} & {"sampling", "clustering and writing", "counting"}

    code, shown = on_a_pty("optimize", str(dest), "--full", "--num-files", "6", *spark, timeout=600)
    assert code == 0, shown
    assert re.search(r"Optimizing .*\.\.\. [a-z ]+ \d+/\d+ tasks", shown), shown
