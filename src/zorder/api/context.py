"""``Context``: what one handle or call reads its settings from, decided once.

Where the table lives and how to reach it (a :class:`~zorder.table.Storage`),
the zone zone-less timestamps are read in, the ANSI meaning filters have, the
clock a filter's ``current_date()`` reads, and the Spark session: given, or
started by a function when Spark first runs. :meth:`Context.of` decides the
zone and ANSI meaning once, from what was given, else the session's, else UTC
and ANSI on (Spark 4.x's default); everything below reads them from here and
no step asks the session again. The one exception is a plan read by another
session (:meth:`~zorder.api.scanning.Scan.to_spark`): Spark filters rows with
its own session's meaning, so that plan is made again in
:meth:`Context.of_session` of it.

Without pyspark imported no session can be active: nothing here loads it to ask.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from zorder.errors import InvalidArgumentError, InvalidArgumentTypeError
from zorder.spark.settings import (
    active_session,
    legacy_ansi_session,
    required_session,
    session_ansi,
    session_time_zone,
)
from zorder.table import Storage, normalize_uri

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["Context", "table_storage"]


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass(frozen=True, eq=False, kw_only=True)
class Context:
    """The settings of one handle or call (see the module's note).

    ``time_zone`` is the zone zone-less timestamps are read in (Spark's
    ``spark.sql.session.timeZone``); ``ansi`` whether filters mean what they mean with
    ANSI mode on; ``legacy_ansi`` whether the session is Spark 3.5 with ANSI mode on
    (read as ANSI off, except that strings compared with numbers are cast otherwise);
    ``clock`` the query's instant when a filter is planned."""

    storage: Storage | None = None
    time_zone: str = "UTC"
    ansi: bool = True
    legacy_ansi: bool = False
    clock: Callable[[], dt.datetime] = _utc_now
    given: SparkSession | None = None  # the session given (None: none was)
    start: Callable[[], SparkSession] | None = None  # starts one when Spark first runs
    # The session ``start`` made (at most one); the one mutable part: a session is started
    # once, by whichever step first runs Spark.
    _started: list[SparkSession] = field(default_factory=list, repr=False)

    @classmethod
    def of(
        cls,
        spark: SparkSession | Callable[[], SparkSession] | None,
        *,
        time_zone: str | None = None,
        ansi: bool | None = None,
    ) -> Context:
        """The context of a handle or call given ``spark`` (a session, a function that
        starts one, or None), ``time_zone`` and ``ansi`` (None: those of the session given,
        else of the one active now; with no session, UTC and ANSI on). Nothing is started.

        Only the settings are taken from an active session: Spark work runs in the session
        given, else in the one the function starts, else in the one active when it runs."""
        if time_zone is not None and (not isinstance(time_zone, str) or not time_zone.strip()):
            raise InvalidArgumentError(
                f"time_zone must be a zone name such as 'UTC' or 'Europe/Paris', got {time_zone!r}"
            )
        if ansi is not None and not isinstance(ansi, bool):
            raise InvalidArgumentTypeError(f"ansi must be True, False or None, got {ansi!r}")
        start = spark if callable(spark) else None
        given = None if callable(spark) else spark
        session = active_session(given)  # whose settings they are
        return cls(
            time_zone=time_zone if time_zone is not None else session_time_zone(session),
            ansi=ansi if ansi is not None else session_ansi(session),
            legacy_ansi=legacy_ansi_session(session),
            given=given,
            start=start,
        )

    @classmethod
    def of_session(cls, spark: SparkSession, storage: Storage | None = None) -> Context:
        """``spark``'s own meaning: its zone and ANSI mode."""
        return dataclasses.replace(cls.of(spark), storage=storage)

    def at(
        self, location: str | os.PathLike[str], storage_options: Mapping[str, str] | None
    ) -> Context:
        """This context for the table at ``location`` (see :func:`table_storage`)."""
        return dataclasses.replace(
            self, storage=table_storage(location, storage_options, self.spark)
        )

    @property
    def spark(self) -> SparkSession | None:
        """The session given or started so far (None: none yet; nothing is started)."""
        return self.given if self.given is not None else next(iter(self._started), None)

    def started(self) -> SparkSession | None:
        """The session Spark work runs in: the one given, else the one the function given
        starts (called now, once), else the one active now, if any."""
        if self.spark is None and self.start is not None:
            self._started.append(self.start())
        return active_session(self.spark)

    def session(self, what: str) -> SparkSession:
        """The session ``what`` runs in, started now if a function was given for it;
        InvalidArgumentError saying ``what`` needs one where none can be had."""
        return required_session(self.started(), what)

    @property
    def table_storage(self) -> Storage:
        """The table's storage (a context made by :meth:`at`)."""
        assert self.storage is not None, "a context for a table is made by Context.at"
        return self.storage

    def reads_like(self, other: Context) -> bool:
        """Whether filters mean the same in ``other``: same zone, same ANSI meaning."""
        return (self.time_zone, self.ansi, self.legacy_ansi) == (
            other.time_zone,
            other.ansi,
            other.legacy_ansi,
        )


def table_storage(
    location: str | os.PathLike[str],
    storage_options: Mapping[str, str] | None,
    spark: SparkSession | None,
) -> Storage:
    """Where the table at ``location`` lives and how to reach it: the location normalized
    (see :func:`~zorder.table.normalize_uri`), and ``storage_options`` over the object-store
    settings of ``spark``, else of the active session (see :mod:`zorder.spark.storage`)."""
    uri = normalize_uri(location)
    session = active_session(spark)
    if session is None:
        return Storage.of(uri, dict(storage_options or {}))
    from zorder.spark.storage import session_storage_options

    return Storage.of(uri, session_storage_options(session, uri, storage_options))
