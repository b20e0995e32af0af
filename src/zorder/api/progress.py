"""The progress display of ``write(..., progress=True)``, ``optimize`` and the CLI.

One status line (rich, which renders in terminals and in Jupyter) while
Spark works: what is being done, the phase (counting, sampling, clustering
and writing, statistics, commit), the running stages' tasks done of total
and the seconds so far. The tasks come from Spark itself: the status
tracker on a classic session, the server's progress messages on Spark
Connect (:func:`zorder.spark.progress.watch_jobs`). The line is redrawn
four times a second from a thread of its own.

The operations name their phases with :func:`phase`, which does nothing
when no display is showing, so they call it unconditionally.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar

from pyspark.sql import SparkSession
from rich.console import Console

from zorder.spark.progress import JobProgress, watch_jobs

__all__ = ["phase", "phase_seconds", "progress_of", "spark_status", "status_text", "timed_phases"]


class _Phase:
    """The phase the display shows; set by the operation, read by the display's thread.

    A new phase is drawn at once (``redraw``), not at the next tick: a phase
    shorter than a quarter second is still seen.
    """

    def __init__(self) -> None:
        self.name = ""
        self.redraw: Callable[[], None] = lambda: None


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


def status_text(message: str, step: str, jobs: JobProgress | None, seconds: float) -> str:
    """The status line: message, phase, tasks done of total, seconds."""
    parts = [f"[bold]{message}[/]"]
    if step:
        parts.append(step)
    if jobs is not None and jobs.tasks_total:
        parts.append(f"{jobs.tasks_done:,}/{jobs.tasks_total:,} tasks")
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
    and then, or nothing."""
    shown = console or Console(stderr=True)
    redrawn = shown.is_terminal or shown.is_jupyter
    if not (redrawn or plain_lines):
        yield
        return
    started = time.monotonic()
    stop = threading.Event()
    current = _Phase()
    token = _SHOWING.set(current)
    no_jobs: Callable[[], JobProgress | None] = lambda: None  # noqa: E731
    jobs_context: AbstractContextManager[Callable[[], JobProgress | None]] = (
        watch_jobs(spark) if spark is not None else nullcontext(no_jobs)
    )
    try:
        with jobs_context as jobs, _drawing(shown, message, redrawn) as update:

            def draw() -> None:
                update(status_text(message, current.name, jobs(), time.monotonic() - started))

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
    with shown.status(status_text(message, "", None, 0)) as status:
        yield status.update


def progress_of(show: bool, message: str, spark: SparkSession) -> AbstractContextManager[None]:
    """The display when ``show`` (the API's ``progress=True``), else nothing."""
    return spark_status(message, spark) if show else nullcontext()
