"""zorder's jar (``zorder-spark.jar``, source ``jvm/src``): its classes in the session's JVM.

The jar holds the commit protocol that lets a task write several files of a
run (:mod:`zorder.spark.committer`) and the file plan executed in the JVM
(:mod:`zorder.spark.file_keys`). A classic session whose driver cannot load
them gets the jar with ``ADD JAR``, which ships it to the executors too; a
Spark Connect client reaches no JVM to add it to, and keeps the paths that
need no jar.
"""

from __future__ import annotations

import logging
from importlib import resources

from pyspark.sql import SparkSession

from zorder.spark.progress import is_connect

__all__ = ["JAR_PROBE_CLASS", "jar_path", "jvm_classes_available"]

_log = logging.getLogger(__name__)
_said: set[str] = set()  # what has been logged: a fallback is said once a process


def _say_once(message: str, *args: object) -> None:
    """Log that zorder's classes are not used, once a process: every job would say it again."""
    text = message % args
    if text not in _said:
        _said.add(text)
        _log.warning(
            "%s; zorder computes keys with Arrow UDFs (pyspark 4.1+) and writes a file a task",
            text,
        )


JAR_PROBE_CLASS = "zorder.spark.FileKeys"  # a class of the jar's newest version


def jar_path() -> str:
    """The jar as a local file path."""
    return str(resources.files("zorder.spark").joinpath("zorder-spark.jar"))


def _loadable(spark: SparkSession, name: str) -> bool:
    """Whether the driver, on this thread, can load class ``name`` (Spark looks it up there)."""
    try:
        spark.sparkContext._jvm.org.apache.spark.util.Utils.classForName(  # type: ignore[union-attr]
            name, True, False
        )
    except Exception:  # py4j's error for a missing class
        return False
    return True


def jvm_classes_available(spark: SparkSession) -> bool:
    """Whether zorder's classes can be used in ``spark`` (adding the jar if need be)."""
    if is_connect(spark):
        return False  # a Connect client reaches no JVM to load the classes into
    if _loadable(spark, JAR_PROBE_CLASS):
        return True
    jar = jar_path()
    if "'" in jar:  # ADD JAR takes the path between quotes as it is
        _say_once("cannot add %s to the session (a quote in its path)", jar)
        return False
    # ADD JAR ships the jar to the executors and makes the session's class loader,
    # which now holds it, this thread's.
    spark.sql(f"ADD JAR '{jar}'")
    if _loadable(spark, JAR_PROBE_CLASS):
        return True
    _say_once("Spark's driver cannot load %s (Spark %s)", jar, spark.version)
    return False
