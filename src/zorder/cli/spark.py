"""The Spark session a command starts, and where the JVM's own output goes meanwhile.

The JVM that pyspark launches writes banners, log4j lines and warnings to
the stderr it inherits; they go to a log file of their own (named when a
command fails), unless ``--verbose`` shows them live, so that stderr holds
only zorder's progress and errors.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from zorder.errors import InvalidArgumentError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from zorder.cli.output import Output

__all__ = ["SparkLog", "session", "spark_log"]


@dataclass
class SparkLog:
    """Where the JVM's output goes: a file of its own, unless --verbose shows it live."""

    verbose: bool = False
    file: Path | None = None  # set once a session started with its output there


spark_log = SparkLog()


@contextlib.contextmanager
def _stderr_to(path: Path) -> Iterator[None]:
    """File descriptor 2 pointed at ``path`` meanwhile: processes started now inherit it.

    The JVM that pyspark launches (and the Python workers it forks) write
    their banners, log4j lines and warnings to the stderr they were born
    with; this process gets its own back afterwards.
    """
    sys.stderr.flush()
    saved = os.dup(2)
    with open(path, "ab") as log:
        os.dup2(log.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def session(
    out: Output, master: str, conf: list[str] | None, remote: str | None = None
) -> SparkSession:
    """A session on ``master`` (or Spark Connect at ``remote``) with the ``--conf`` settings.

    ``out`` shows a status line while the JVM starts; its output goes to the
    log file :data:`spark_log` names, unless ``--verbose``.
    """
    from zorder.spark import local_session, remote_session

    settings: dict[str, str] = {}
    for item in conf or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InvalidArgumentError(f"--conf takes KEY=VALUE, got {item!r}")
        settings[key.strip()] = value
    settings.setdefault("spark.ui.showConsoleProgress", "false")  # zorder shows its own

    def start() -> SparkSession:
        if remote is not None:
            return remote_session(remote, conf=settings)
        return local_session(master=master, conf=settings)

    with out.status(f"Starting Spark ({remote or master})..."):
        if spark_log.verbose:
            spark = start()
        else:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            log = Path(tempfile.gettempdir()) / f"zorder-spark-{stamp}-{os.getpid()}.log"
            with _stderr_to(log):
                spark = start()
            spark_log.file = log
        if remote is None:
            spark.sparkContext.setLogLevel("WARN" if spark_log.file else "ERROR")
    return spark
