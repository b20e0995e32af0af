"""How far Spark's running jobs are, as the CLI's progress display shows it.

A classic session has a status tracker to poll; a Spark Connect session has
none, but its client hands each progress message from the server to
registered handlers (``spark.registerProgressHandler``). :func:`watch_jobs`
gives both the same face: a function that returns the latest state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["JobProgress", "is_connect", "job_progress", "watch_jobs"]


@dataclass(frozen=True)
class JobProgress:
    """The tasks of the stages running now: done of total; the bytes they read, where Spark
    Connect reports them (0: not known)."""

    stages: int
    tasks_done: int
    tasks_total: int
    bytes_read: int = 0


def is_connect(spark: SparkSession) -> bool:
    """Whether ``spark`` is a Spark Connect session (no SparkContext, no py4j)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def job_progress(spark: SparkSession) -> JobProgress | None:
    """Spark's status tracker, read once; None where there is none (Spark Connect)."""
    if is_connect(spark):
        return None
    try:
        tracker = spark.sparkContext.statusTracker()
        found = [tracker.getStageInfo(i) for i in tracker.getActiveStageIds()]
    except Exception:  # a stopped session has no tracker either
        return None
    infos = [i for i in found if i is not None]  # a stage may end between the two calls
    done: int = sum(int(i.numCompletedTasks) for i in infos)
    total: int = sum(int(i.numTasks) for i in infos)
    return JobProgress(stages=len(infos), tasks_done=done, tasks_total=total)


class _ConnectProgress:
    """A progress handler that keeps the latest state of the running operation.

    The client calls it on the thread that runs the query; the display's
    thread reads ``latest``, one reference, replaced whole.
    """

    def __init__(self) -> None:
        self.latest: JobProgress | None = None

    def __call__(
        self,
        stages: Iterable[Any] | None,
        inflight_tasks: int,
        operation_id: str | None,
        done: bool,
    ) -> None:
        known = list(stages or ())
        if done or not known:
            self.latest = None
            return
        self.latest = JobProgress(
            stages=sum(1 for s in known if not s.done),
            tasks_done=sum(int(s.num_completed_tasks) for s in known),
            tasks_total=sum(int(s.num_tasks) for s in known),
            bytes_read=sum(int(getattr(s, "num_bytes_read", 0) or 0) for s in known),
        )


@contextmanager
def watch_jobs(spark: SparkSession) -> Iterator[Callable[[], JobProgress | None]]:
    """A reader of the running jobs' progress, valid until the block ends.

    On Spark Connect the server reports progress every
    ``spark.connect.progress.reportInterval`` (2 s by default), so shorter
    jobs show no tasks at all.
    """
    if not is_connect(spark):
        yield lambda: job_progress(spark)
        return
    handler = _ConnectProgress()
    spark.registerProgressHandler(handler)
    try:
        yield lambda: handler.latest
    finally:
        spark.removeProgressHandler(handler)
