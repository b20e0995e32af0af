"""The progress display of ``write(..., progress=True)``, ``optimize`` and the CLI.

One status line (rich, which renders in terminals and in Jupyter) while
Spark works: what is being done, the running stages' tasks done of total
(Spark's status tracker, read four times a second from a thread of its own;
a Connect session has none, so there it is the time alone) and the seconds
so far.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext

from pyspark.sql import SparkSession
from rich.console import Console

from zorder.spark.progress import job_progress

__all__ = ["progress_of", "spark_status"]


@contextmanager
def spark_status(
    message: str, spark: SparkSession | None, *, console: Console | None = None
) -> Iterator[None]:
    """Show ``message``, the running tasks and the time until the block ends."""
    shown = console or Console(stderr=True)
    started = time.monotonic()
    stop = threading.Event()
    with shown.status(f"[bold]{message}[/]") as status:

        def refresh() -> None:
            while not stop.wait(0.25):
                state = job_progress(spark) if spark is not None else None
                tasks = (
                    f" {state.tasks_done:,}/{state.tasks_total:,} tasks"
                    if state is not None and state.tasks_total
                    else ""
                )
                status.update(f"[bold]{message}[/]{tasks} {time.monotonic() - started:.0f} s")

        thread = threading.Thread(target=refresh, name="zorder-progress", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()


def progress_of(show: bool, message: str, spark: SparkSession) -> AbstractContextManager[None]:
    """The display when ``show`` (the API's ``progress=True``), else nothing."""
    return spark_status(message, spark) if show else nullcontext()
