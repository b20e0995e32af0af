"""Timestamp partition values: which instant a partition's text in the log names.

Delta Spark writes a ``timestamp`` partition value as wall-clock text
(``2021-09-08 11:11:11``) and reads it in the session's time zone; ISO-8601
text with a zone (``2021-09-08T18:11:11.000000Z``) names its instant in any
session, and is what zorder writes. deltalake reads both in UTC. Pure.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable

__all__ = ["deltalake_reading", "instant", "is_zoned", "iso_text", "wall_clocks_in_zone"]

_ZONED = re.compile(r".*(?:[zZ]|[+-]\d\d(?::?\d\d)?)$")


def is_zoned(text: str) -> bool:
    """Does the text name its zone (``Z``, ``+02:00``)?"""
    return bool(_ZONED.fullmatch(text.strip()))


def _parsed(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))


def instant(text: str, zone: dt.tzinfo) -> dt.datetime:
    """The instant (in UTC) that ``text`` names in a session of ``zone``.

    Zone-less text is wall-clock time there; a gap or fold resolves as Java
    resolves it (``replace`` does the same: the earlier offset in a fold, a
    gap's wall clock shifted by the gap).
    """
    parsed = _parsed(text)
    if parsed.tzinfo is not None and is_zoned(text):
        return parsed.astimezone(dt.UTC)
    return parsed.replace(tzinfo=zone).astimezone(dt.UTC)


def deltalake_reading(text: str) -> dt.datetime:
    """The instant deltalake gives ``text``: zone-less text read in UTC."""
    return instant(text, dt.UTC)


def iso_text(moment: dt.datetime) -> str:
    """``moment`` (zone-aware) as ISO-8601 UTC text, to the microsecond: ``...T...Z``."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def wall_clocks_in_zone(
    texts: Iterable[str], zone: dt.tzinfo
) -> tuple[dict[dt.datetime, dt.datetime], set[dt.datetime]]:
    """For the zone-less ``texts``: deltalake's reading -> the instant in ``zone``; and the
    readings that zoned texts share with zone-less ones (which deltalake cannot tell apart)."""
    moved = {}
    zoned = set()
    for text in texts:
        if is_zoned(text):
            zoned.add(deltalake_reading(text))
        else:
            moved[deltalake_reading(text)] = instant(text, zone)
    return moved, {m for m in moved if m in zoned}
