"""The progress display of ``write(..., progress=True)``, ``optimize`` and the CLI.

One status line (rich, which renders in terminals and in Jupyter) while
Spark works: what is being done, the phase (counting, sampling, clustering
and writing, statistics, commit), the running stages' tasks done of total
and the seconds so far. The tasks come from Spark itself: the status
tracker on a classic session, the server's progress messages on Spark
Connect (:func:`zorder.spark.progress.watch_jobs`). The line is redrawn
four times a second from a thread of its own.

The operations name their phases with :func:`phase`, which does nothing
when no display is showing, so they call it unconditionally. A display
started before Spark is (the CLI starts Spark only when a run needs it) is
told the session when the run gets it (:func:`watch_session`), and shows
its tasks from then on. The in-process engine has no tasks: it counts the
files it writes of those it plans, and their rows (:func:`files_planned`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Console
from rich.live import Live
from rich.spinner import Spinner

from zorder.sizes import size_text
from zorder.spark.progress import JobProgress, watch_jobs

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "FileProgress",
    "files_planned",
    "phase",
    "phase_seconds",
    "progress_of",
    "spark_status",
    "status_text",
    "timed_phases",
    "watch_session",
]


@dataclass(frozen=True)
class FileProgress:
    """The in-process engine's files: written of planned, and the rows written."""

    files_done: int
    files_total: int
    rows: int


def _no_jobs() -> JobProgress | None:
    return None


class _Phase:
    """The phase the display shows; set by the operation, read by the display's thread.

    A new phase is drawn at once (``redraw``), not at the next tick: a phase
    shorter than a quarter second is still seen.
    """

    def __init__(self, watches: ExitStack) -> None:
        self.name = ""
        self.redraw: Callable[[], None] = lambda: None
        # Replaced whole, read by the display's thread.
        self.jobs: Callable[[], JobProgress | None] = _no_jobs
        self.session: SparkSession | None = None
        self.files: FileProgress | None = None
        self.watches = watches  # the session's watch, ended with the display
        self.lock = threading.Lock()  # files are counted by the writers' threads


_SHOWING: ContextVar[_Phase | None] = ContextVar("zorder_progress_phase", default=None)
# When each phase of the running operation began (see timed_phases).
_MARKS: ContextVar[list[tuple[str, float]] | None] = ContextVar("zorder_phase_marks", default=None)


@contextmanager
def timed_phases() -> Iterator[None]:
    """Time the phases :func:`phase` names inside the block (read with :func:`phase_seconds`)."""
    token = _MARKS.set([("checking", time.perf_counter())])
    try:
        yield
    finally:
        _MARKS.reset(token)


def phase_seconds() -> tuple[tuple[str, float], ...]:
    """Each phase so far in the :func:`timed_phases` block and its seconds, in order; a phase
    named twice (a partitioned write counts, then samples) adds up."""
    marks = _MARKS.get()
    if not marks:
        return ()
    ends = [at for _, at in marks[1:]] + [time.perf_counter()]
    totals: dict[str, float] = {}
    for (name, began), ended in zip(marks, ends, strict=True):
        totals[name] = totals.get(name, 0.0) + ended - began
    return tuple(totals.items())


def phase(name: str) -> None:
    """Say what the operation does now (``"sampling"``...): on the display, if one shows,
    and to the phase timing of :func:`timed_phases`."""
    marks = _MARKS.get()
    if marks is not None:
        marks.append((name, time.perf_counter()))
    current = _SHOWING.get()
    if current is not None:
        current.name = name
        current.redraw()


def watch_session(spark: SparkSession) -> None:
    """Show the tasks of ``spark``'s jobs on the display that shows now, if any (and watches
    no session yet): a run calls it when it gets its session."""
    current = _SHOWING.get()
    if current is None or current.session is not None:
        return
    current.session = spark
    current.jobs = current.watches.enter_context(watch_jobs(spark))
    current.redraw()


def files_planned(total: int) -> Callable[[int], None]:
    """Show ``0/total files`` on the display that shows now, if any; the function returned
    counts one file written and its rows (from any thread)."""
    current = _SHOWING.get()
    if current is None:
        return lambda rows: None
    shown = current
    shown.files = FileProgress(0, total, 0)
    shown.redraw()

    def written(rows: int) -> None:
        with shown.lock:
            was = shown.files or FileProgress(0, total, 0)
            shown.files = FileProgress(was.files_done + 1, was.files_total, was.rows + rows)
        shown.redraw()

    return written


def status_text(
    message: str,
    step: str,
    jobs: JobProgress | None,
    seconds: float,
    files: FileProgress | None = None,
) -> str:
    """The status line: message, phase, tasks done of total (and the bytes they read, where
    Spark says), or files written of planned and their rows; seconds."""
    parts = [f"[bold]{message}[/]"]
    if step:
        parts.append(step)
    if jobs is not None and jobs.tasks_total:
        parts.append(f"{jobs.tasks_done:,}/{jobs.tasks_total:,} tasks")
        if jobs.bytes_read:
            parts.append(f"{size_text(jobs.bytes_read)} read")
    if files is not None:
        parts.append(f"{files.files_done:,}/{files.files_total:,} files")
        parts.append(f"{files.rows:,} rows")
    parts.append(f"{seconds:.0f} s")
    return " ".join(parts)


# Where no status line can be redrawn (a log file, a scheduler's or a notebook's captured
# stderr), a plain line is written at each new phase and every this many seconds.
PLAIN_LINE_SECONDS = 10.0


@contextmanager
def spark_status(
    message: str,
    spark: SparkSession | None,
    *,
    console: Console | None = None,
    plain_lines: bool = True,
) -> Iterator[None]:
    """Show ``message``, the phase, the running tasks and the time until the block ends: one
    status line redrawn in a terminal or Jupyter, else (``plain_lines``) plain lines now
    and then, or nothing.

    ``spark`` None: the session is not known yet (:func:`watch_session` tells it). Inside
    another display this one adds nothing: the outer line goes on, told the session."""
    outer = _SHOWING.get()
    if outer is not None:
        if spark is not None:
            watch_session(spark)
        yield
        return
    shown = console or Console(stderr=True)
    redrawn = shown.is_terminal or shown.is_jupyter
    if not (redrawn or plain_lines):
        yield
        return
    started = time.monotonic()
    stop = threading.Event()
    watches = ExitStack()
    current = _Phase(watches)
    token = _SHOWING.set(current)
    try:
        with watches, _drawing(shown, message, redrawn) as update:
            if spark is not None:
                watch_session(spark)

            def draw() -> None:
                seconds = time.monotonic() - started
                update(status_text(message, current.name, current.jobs(), seconds, current.files))

            def refresh() -> None:
                while not stop.wait(0.25 if redrawn else PLAIN_LINE_SECONDS):
                    draw()

            current.redraw = draw
            thread = threading.Thread(target=refresh, name="zorder-progress", daemon=True)
            thread.start()
            try:
                yield
            finally:
                stop.set()
                thread.join()
    finally:
        _SHOWING.reset(token)


@contextmanager
def _drawing(shown: Console, message: str, redrawn: bool) -> Iterator[Callable[[str], None]]:
    """What shows a status text: the redrawn status line, or a plain line printed each time."""
    if not redrawn:
        shown.print(status_text(message, "", None, 0), highlight=False)
        yield lambda text: shown.print(text, highlight=False)
        return
    # rich's Status draws a new text only at its next tick: a Live of one spinner is
    # refreshed at once, so a phase or a file count shorter than a tick is still seen.
    spinner = Spinner("dots", text=status_text(message, "", None, 0))
    with Live(spinner, console=shown, refresh_per_second=12.5, transient=True) as live:

        def update(text: str) -> None:
            spinner.update(text=text)
            live.refresh()

        yield update


def progress_of(
    show: bool, message: str, spark: SparkSession | None
) -> AbstractContextManager[None]:
    """The display when ``show`` (the API's ``progress=True``), else nothing; the display
    showing already (the CLI's) is told ``spark``."""
    if show:
        return spark_status(message, spark)
    if spark is not None:
        watch_session(spark)
    return nullcontext()
