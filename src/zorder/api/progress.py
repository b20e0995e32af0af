"""The progress display of ``write(..., progress=True)``, ``optimize`` and the CLI.

One status line (rich, which renders in terminals and in Jupyter) while
Spark works: what is being done, the phase (counting, sampling, clustering
and writing, statistics, commit), the running stages' tasks done of total
and the seconds so far. The tasks come from Spark itself: the status
tracker on a classic session, the server's progress messages on Spark
Connect (:func:`zorder.spark.progress.watch_jobs`). The line is redrawn
four times a second from a thread of its own.

The operations name their phases with :func:`zorder.plan.progress.phase`, which
does nothing but time them when no display is showing, so they call it
unconditionally. A display
started before Spark is (the CLI starts Spark only when a run needs it) is
told the session when the run gets it (:func:`watch_session`), and shows
its tasks from then on. The in-process engine has no tasks: it counts the
files it writes of those it plans, and their rows
(:func:`zorder.plan.progress.files_planned`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from typing import TYPE_CHECKING

from rich.console import Console
from rich.live import Live
from rich.spinner import Spinner

from zorder.plan.progress import FileProgress, Shown, showing, showing_as
from zorder.sizes import size_text
from zorder.spark.progress import JobProgress, watch_jobs

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["progress_of", "spark_status", "status_text", "watch_session"]


def _no_jobs() -> JobProgress | None:
    return None


class _Phase(Shown):
    """The phase the display shows, and the session whose tasks it shows."""

    def __init__(self, watches: ExitStack) -> None:
        super().__init__()
        # Replaced whole, read by the display's thread.
        self.jobs: Callable[[], JobProgress | None] = _no_jobs
        self.session: SparkSession | None = None
        self.watches = watches  # the session's watch, ended with the display


def watch_session(spark: SparkSession) -> None:
    """Show the tasks of ``spark``'s jobs on the display that shows now, if any (and watches
    no session yet): a run calls it when it gets its session."""
    current = showing()
    if not isinstance(current, _Phase) or current.session is not None:
        return
    current.session = spark
    current.jobs = current.watches.enter_context(watch_jobs(spark))
    current.redraw()


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
    outer = showing()
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
    with showing_as(current), watches, _drawing(shown, message, redrawn) as update:
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
