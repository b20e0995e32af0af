"""zorder's commit protocol: a task writes several files of a run, with no hidden directory.

Spark's file writer starts a new file only when a partition value changes
(or a row count is reached), and puts each partition value in a directory.
So a run whose every file is a cell of the plan (not a count of rows) either
gives each file a task of its own, whose per-task cost dominates when files
are small, or writes the file number as a hidden partition column. The
commit protocol in ``zorder-spark.jar`` (source: ``jvm/src``) takes the
second way and then takes the hidden directory out of each path again: the
file goes into its partition's directory, named after its file number as
when it had a task of its own (see :func:`zorder.spark.writes.file_number`).

The protocol is used only where the driver can load it (a classic session;
``ADD JAR`` when the class is missing) and the session has not chosen a
commit protocol of its own; anywhere else each file keeps a task of its own.
"""

from __future__ import annotations

import logging

from pyspark.sql import SparkSession

from zorder.spark.jar import jvm_classes_available

__all__ = ["COMMIT_PROTOCOL", "COMMIT_PROTOCOL_SETTING", "FILE_COLUMN_OPTION", "run_tasks"]

_log = logging.getLogger(__name__)

COMMIT_PROTOCOL = "zorder.spark.FileRunCommitProtocol"
COMMIT_PROTOCOL_SETTING = "spark.sql.sources.commitProtocolClass"
FILE_COLUMN_OPTION = "zorder.fileColumn"  # the write option the protocol reads
_SPARK_DEFAULT_PROTOCOL = (
    "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol"
)
# Tasks a core: more than one evens out tasks that finish at different times.
_TASKS_PER_CORE = 2


def _protocol_available(spark: SparkSession) -> bool:
    chosen = spark.conf.get(COMMIT_PROTOCOL_SETTING, None)
    if chosen not in (None, _SPARK_DEFAULT_PROTOCOL, COMMIT_PROTOCOL):
        _log.info("the session's commit protocol is %s: each file gets a task of its own", chosen)
        return False
    return jvm_classes_available(spark)


def run_tasks(spark: SparkSession, files: int) -> int | None:
    """How many tasks write a run of ``files`` files, or None: a task a file.

    A few tasks a core, each a contiguous run of files, where zorder's commit
    protocol is available; a task a file elsewhere, or when that is no more tasks.
    """
    if files <= 1 or not _protocol_available(spark):
        return None
    tasks = _TASKS_PER_CORE * max(1, spark.sparkContext.defaultParallelism)
    return tasks if tasks < files else None
