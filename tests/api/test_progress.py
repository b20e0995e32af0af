"""The progress display: phases named by the operation, tasks from Spark's progress."""

from __future__ import annotations

import io
import re
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.console import Console

from zorder.api.progress import spark_status, status_text
from zorder.plan.progress import phase
from zorder.spark.progress import JobProgress, _ConnectProgress


def recording() -> tuple[Console, io.StringIO]:
    sink = io.StringIO()
    return Console(file=sink, force_terminal=True, width=200), sink


def plain(sink: io.StringIO) -> str:
    """What a terminal showed over time, without the escape codes."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", sink.getvalue())


def test_the_line_holds_the_phase_the_tasks_and_the_seconds() -> None:
    jobs = JobProgress(stages=2, tasks_done=1_234, tasks_total=5_000)
    text = status_text("Optimizing t:", "sampling", jobs, 12.4)
    assert text == "[bold]Optimizing t:[/] sampling 1,234/5,000 tasks 12 s"
    assert status_text("Writing:", "", None, 0.2) == "[bold]Writing:[/] 0 s"
    idle = JobProgress(stages=0, tasks_done=0, tasks_total=0)
    assert status_text("Writing:", "commit", idle, 3) == "[bold]Writing:[/] commit 3 s"


def test_a_phase_named_inside_the_display_is_shown() -> None:
    console, sink = recording()
    with spark_status("Working:", None, console=console):
        phase("sampling")
        time.sleep(0.6)  # the line is redrawn four times a second
        phase("clustering and writing")
        time.sleep(0.6)
    shown = plain(sink)
    assert "Working: sampling" in shown
    assert "Working: clustering and writing" in shown


def test_a_phase_outside_any_display_does_nothing() -> None:
    phase("sampling")  # no display: no error, nothing printed
    console, sink = recording()
    with spark_status("Working:", None, console=console):
        time.sleep(0.4)
    assert "sampling" not in plain(sink)  # an earlier phase does not leak into a display


def test_connect_progress_counts_the_operation_s_stages() -> None:
    handler = _ConnectProgress()
    stage = SimpleNamespace
    handler(
        stages=[
            stage(stage_id=0, num_tasks=4, num_completed_tasks=4, num_bytes_read=0, done=True),
            stage(stage_id=1, num_tasks=8, num_completed_tasks=3, num_bytes_read=0, done=False),
        ],
        inflight_tasks=2,
        operation_id="op",
        done=False,
    )
    assert handler.latest == JobProgress(stages=1, tasks_done=7, tasks_total=12)
    handler(stages=[], inflight_tasks=0, operation_id="op", done=True)
    assert handler.latest is None


def test_without_a_terminal_plain_lines_are_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """A log file, a scheduler's or a notebook's captured stderr: no status line can be
    redrawn there, so each phase is a plain line of its own, and so is every tick."""
    import zorder.api.progress as progress

    sink = io.StringIO()
    console = Console(file=sink, force_terminal=False, force_jupyter=False, width=200)
    monkeypatch.setattr(progress, "PLAIN_LINE_SECONDS", 0.2)
    with spark_status("Working:", None, console=console):
        phase("sampling")
        time.sleep(0.5)
        phase("commit")
    lines = sink.getvalue().splitlines()
    assert lines[0] == "Working: 0 s"
    assert "Working: sampling 0 s" in lines
    assert sum(line.startswith("Working: sampling") for line in lines) >= 2  # the ticks
    assert lines[-1].startswith("Working: commit")
    assert "\x1b" not in sink.getvalue()  # no escape codes in a log


def test_progress_true_on_an_in_process_write_counts_its_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The API's display for a run in this process (no tasks): files written of planned
    and their rows, here as plain lines (stderr is no terminal under pytest)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import zorder

    monkeypatch.setenv("COLUMNS", "400")  # one line each, however long the path
    (tmp_path / "s").mkdir()
    ids = pa.array(range(10_000), pa.int64())
    pq.write_table(pa.table({"a": ids, "b": ids}), tmp_path / "s" / "part-0.parquet")
    metrics = zorder.write(
        str(tmp_path / "s"), str(tmp_path / "t"), by=["a", "b"], num_files=5, progress=True
    )
    assert metrics.engine == "arrow"
    shown = capsys.readouterr().err
    assert re.search(r"Clustering into .*\.\.\. clustering and writing 0/5 files 0 rows", shown)
    # The phases after the writing still show what it wrote: all five files, every row.
    assert re.search(r"\.\.\. [a-z ]+ 5/5 files 10,000 rows", shown), shown
    assert metrics.files_added == 5
