"""How far Spark's running jobs are, as the CLI's progress display shows it."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import SparkSession

__all__ = ["JobProgress", "job_progress"]


@dataclass(frozen=True)
class JobProgress:
    """The tasks of the stages running now: done of total."""

    stages: int
    tasks_done: int
    tasks_total: int


def job_progress(spark: SparkSession) -> JobProgress | None:
    """Spark's status tracker, read once; None where there is none (Spark Connect)."""
    try:
        tracker = spark.sparkContext.statusTracker()
        found = [tracker.getStageInfo(i) for i in tracker.getActiveStageIds()]
    except Exception:  # Connect sessions have no SparkContext; a stopped one neither
        return None
    infos = [i for i in found if i is not None]  # a stage may end between the two calls
    done: int = sum(int(i.numCompletedTasks) for i in infos)
    total: int = sum(int(i.numTasks) for i in infos)
    return JobProgress(stages=len(infos), tasks_done=done, tasks_total=total)
