"""What a Spark session means for a filter, read from the session given (else the
active one): its zone, its ANSI mode, whether it is Spark 3.5 with ANSI on.

:class:`zorder.api.context.Context` reads them once per handle or call; the Spark
engine reads a write's zone from the session that holds its rows. Without pyspark
imported no session can be active: nothing here loads it to ask.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from zorder.errors import InvalidArgumentError
from zorder.skipping.ansi import ANSI_SETTING, ansi_enabled, reads_as_ansi

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "active_session",
    "legacy_ansi_session",
    "required_session",
    "session_ansi",
    "session_time_zone",
]


def active_session(spark: SparkSession | None) -> SparkSession | None:
    """``spark``, else the active session; None, without loading pyspark, when it is not
    loaded (no session can then be active)."""
    if spark is None and "pyspark.sql" not in sys.modules:
        return None
    from pyspark.sql import SparkSession

    return spark or SparkSession.getActiveSession()


def required_session(spark: SparkSession | None, what: str) -> SparkSession:
    """``spark``, else the active session; InvalidArgumentError saying ``what`` needs one."""
    session = active_session(spark)
    if session is None:
        raise InvalidArgumentError(f"{what} needs Spark: pass spark= or start a SparkSession")
    return session


def session_time_zone(spark: SparkSession | None) -> str:
    """The zone Spark reads zone-less timestamp literals in; UTC when no session is active."""
    session = active_session(spark)
    if session is None:
        return "UTC"
    return str(session.conf.get("spark.sql.session.timeZone", "UTC") or "UTC")


def session_ansi(spark: SparkSession | None) -> bool:
    """Whether filters mean what they mean to Spark 4.x with ANSI mode on: the session's
    ``spark.sql.ansi.enabled`` (off by default before Spark 4.0, on since) on a 4.x
    session; on, Spark 4.x's default, when no session is active.

    A Spark 3.5 session with ANSI on is read as one with it off
    (:func:`~zorder.skipping.ansi.reads_as_ansi`)."""
    session = active_session(spark)
    if session is None:
        return True
    setting = session.conf.get(ANSI_SETTING)
    return reads_as_ansi(None if setting is None else str(setting), str(session.version))


def legacy_ansi_session(spark: SparkSession | None) -> bool:
    """Whether ``spark`` (else the active session) is a Spark 3.5 session with ANSI mode on:
    read as one with it off (:func:`session_ansi`), except that its strings compared with
    numbers are cast otherwise (to BIGINT or DOUBLE, raising where malformed), so no string
    is read as ANSI off casts it (:meth:`ParsedFilter.for_ansi_off`)."""
    session = active_session(spark)
    if session is None:
        return False
    setting = session.conf.get(ANSI_SETTING)
    version = str(session.version)
    text = None if setting is None else str(setting)
    return ansi_enabled(text, version) and not reads_as_ansi(text, version)
