"""The Spark session a command starts, and where the JVM's own output goes meanwhile.

The JVM that pyspark launches writes banners, log4j lines and warnings to
the stderr it inherits; they go to a log file of their own (named when a
command fails), unless ``--verbose`` shows them live, so that stderr holds
only zorder's progress and errors.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from zorder.errors import InvalidArgumentError, SparkStartError, ZorderError

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


def _started(start: Callable[[], SparkSession], where: str, log: Path | None) -> SparkSession:
    """``start()``'s session; its failure as a :class:`SparkStartError` that names ``where``
    and the JVM's last words (from ``log``), not pyspark's traceback."""
    try:
        return start()
    except ZorderError:
        raise
    except Exception as error:
        said = _last_line(log) if log is not None else None
        told = str(error).strip()
        cause = said or (told.splitlines()[0] if told else type(error).__name__)
        where_output = f"; the JVM's output is in {log}" if log is not None else ""
        raise SparkStartError(f"Spark did not start ({where}): {cause}{where_output}") from None


_FAILURE = re.compile(r"Exception|Error|No such file|not found|[Cc]annot|Could not")


def _last_line(log: Path) -> str | None:
    """The JVM's first line that reports a failure, else its last line that is not a stack
    frame, if it wrote any (cut short)."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return None
    said = [line.strip() for line in lines if line.strip() and not line.startswith(("\t", " "))]
    failures = [line for line in said if _FAILURE.search(line)]
    chosen = failures[0] if failures else said[-1] if said else None
    return chosen[:300] if chosen else None


def conf_settings(conf: list[str] | None) -> dict[str, str]:
    """``--conf KEY=VALUE`` items as settings (InvalidArgumentError for one without ``=``)."""
    settings: dict[str, str] = {}
    for item in conf or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InvalidArgumentError(f"--conf takes KEY=VALUE, got {item!r}")
        settings[key.strip()] = value
    return settings


@dataclass(frozen=True)
class SessionView:
    """What a command's session would say before it starts (work done in process starts
    none): the storage options its ``--conf`` Hadoop settings give (under the command's own
    ``--storage-option``), the zone and the ANSI meaning it would read filters with."""

    storage_options: dict[str, str]
    time_zone: str
    ansi: bool

    @classmethod
    def of(cls, conf: list[str] | None, options: dict[str, str], uri: str) -> SessionView:
        import pyspark

        from zorder.skipping.ansi import reads_as_ansi
        from zorder.table.storage import options_from_hadoop

        settings = conf_settings(conf)
        zone = settings.get("spark.sql.session.timeZone", "UTC")  # local_session's default
        ansi = reads_as_ansi(settings.get("spark.sql.ansi.enabled"), pyspark.__version__)
        return cls({**options_from_hadoop(settings, uri), **options}, zone, ansi)


def session(
    out: Output, master: str, conf: list[str] | None, remote: str | None = None
) -> SparkSession:
    """A session on ``master`` (or Spark Connect at ``remote``) with the ``--conf`` settings.

    ``out`` shows a status line while the JVM starts; its output goes to the
    log file :data:`spark_log` names, unless ``--verbose``.
    """
    from zorder.spark import local_session, remote_session
    from zorder.spark.session import check_master

    if remote is None:
        check_master(master)

    settings = conf_settings(conf)
    settings.setdefault("spark.ui.showConsoleProgress", "false")  # zorder shows its own

    def start() -> SparkSession:
        if remote is not None:
            return remote_session(remote, conf=settings)
        return local_session(master=master, conf=settings)

    with out.status(f"Starting Spark ({remote or master})..."):
        if spark_log.verbose:
            spark = _started(start, remote or master, None)
        else:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            log = Path(tempfile.gettempdir()) / f"zorder-spark-{stamp}-{os.getpid()}.log"
            spark_log.file = log
            with _stderr_to(log):
                spark = _started(start, remote or master, log)
        if remote is None:
            spark.sparkContext.setLogLevel("WARN" if spark_log.file else "ERROR")
    if spark_log.file is not None:
        _python_logs_to(spark_log.file)
    return spark


# pyspark's own loggers that write a failed query's context to stderr as JSON (the same
# error zorder then reports in one line): into the log file with the JVM's output.
_PYSPARK_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")


def _python_logs_to(log: Path) -> None:
    from pyspark.logger import PySparkLogger

    for name in _PYSPARK_LOGGERS:
        logger = PySparkLogger.getLogger(name)
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
            handler.close()  # an earlier command's file, in a process that runs several
        logger.addHandler(logging.FileHandler(log, delay=True))  # opened if it logs
        logger.propagate = False
