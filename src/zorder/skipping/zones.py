"""Spark's session time zone, in one place: its names, its tzinfo, and the zone-less marker.

Pure: no other layer of the package is imported. A timestamp literal written
without a zone means the session's; which zone that is becomes known only
when the predicate is bound, so parsing marks it with :data:`SESSION_ZONE`.
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo

from zorder.errors import InvalidArgumentError
from zorder.skipping.coercion import InexactError

__all__ = ["SESSION_ZONE", "datetimes_zone", "is_utc", "need_zone", "session_zone"]


class _SessionZone(dt.tzinfo):
    """The zone of a TIMESTAMP literal written without one: Spark's session time zone.

    Which zone that is becomes known only when the predicate is bound, so a
    parsed literal carries this marker (offset 0) until then.
    """

    def utcoffset(self, when: dt.datetime | None) -> dt.timedelta:
        return dt.timedelta(0)

    def dst(self, when: dt.datetime | None) -> dt.timedelta:
        return dt.timedelta(0)

    def tzname(self, when: dt.datetime | None) -> str:
        return "session time zone"


SESSION_ZONE = _SessionZone()
_UTC_NAMES = {"utc", "z", "gmt", "etc/utc", "etc/gmt", "utc+00:00", "+00:00", "gmt+00:00", "uct"}
_OFFSET = re.compile(r"(?:UTC|GMT)?([+-])(\d{1,2}):?(\d{2})?")


def is_utc(time_zone: str) -> bool:
    """Whether Spark's session time zone ``time_zone`` is UTC under some name."""
    return time_zone.strip().lower() in _UTC_NAMES


def session_zone(time_zone: str) -> dt.tzinfo:
    """Spark's session time zone ``time_zone`` (a region or an offset) as a tzinfo.

    Python's zoneinfo resolves a local time in a DST gap or overlap as Java's
    ``atZone`` does (fold=0: shifted forward in a gap, the earlier offset in
    an overlap), so zone-less literals land on Spark's instants.
    """
    if is_utc(time_zone):
        return dt.UTC
    offset = _OFFSET.fullmatch(time_zone.strip())
    if offset:
        sign, hours, minutes = offset.groups()
        delta = dt.timedelta(hours=int(hours), minutes=int(minutes or 0))
        return dt.timezone(-delta if sign == "-" else delta)
    try:
        return zoneinfo.ZoneInfo(time_zone.strip())
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise InvalidArgumentError(
            f"unknown time zone {time_zone!r}; accepted: a region (Europe/Paris), UTC, "
            "or an offset (+05:30)"
        ) from None


def need_zone(zone: dt.tzinfo | None, what: str) -> dt.tzinfo:
    """``zone``, or InexactError saying that ``what`` needs the session's zone, unknown here."""
    if zone is None:
        raise InexactError(f"{what} depends on the session's time zone, not known here")
    return zone


def datetimes_zone(zone: dt.tzinfo | None) -> dt.tzinfo:
    """``zone``, or InexactError: a timestamp read as a string needs the session's zone."""
    if zone is None:
        raise InexactError("a timestamp as a string needs the session's zone")
    return zone
