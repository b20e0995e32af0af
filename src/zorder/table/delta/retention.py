"""How long a table keeps the files its older versions need: ``delta.deletedFileRetentionDuration``.

Delta writes the retention as interval text (``"interval 7 days"``); Delta
Spark also takes it without the ``interval`` word and with several parts
(``"interval 1 day 12 hours"``), and refuses months and years, whose length
in hours is not fixed. :func:`interval_hours` reads all of that, so a table
another writer configured is read as that writer meant it.

Pure: nothing here imports anything beyond the standard library and
:mod:`zorder.errors`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from zorder.errors import InvalidArgumentError

__all__ = [
    "DEFAULT_RETENTION",
    "DEFAULT_RETENTION_HOURS",
    "RETENTION_PROPERTY",
    "Retention",
    "interval_hours",
    "table_retention",
]

RETENTION_PROPERTY = "delta.deletedFileRetentionDuration"
DEFAULT_RETENTION = "interval 1 week"
# Delta's own default when the property is absent (Delta Spark and deltalake alike).
DEFAULT_RETENTION_HOURS = 168.0

_HOURS_PER_UNIT = {
    "week": 168.0,
    "day": 24.0,
    "hour": 1.0,
    "minute": 1 / 60,
    "second": 1 / 3600,
    "millisecond": 1 / 3_600_000,
    "microsecond": 1 / 3_600_000_000,
    "nanosecond": 1 / 3_600_000_000_000,
}
_PART = re.compile(r"(?P<number>[+-]?\d+)\s+(?P<unit>[a-z]+?)s?(?=\s|$)")
_ACCEPTED = (
    "an interval such as 'interval 7 days', 'interval 168 hours', 'interval 1 week' or "
    "'interval 1 day 12 hours' (whole numbers of weeks, days, hours, minutes, seconds, "
    "milliseconds, microseconds or nanoseconds)"
)


def interval_hours(text: str) -> float:
    """The hours in Delta interval text such as ``"interval 7 days"``.

    Raises :class:`~zorder.errors.InvalidArgumentError` naming the text and
    what is accepted when it is not such an interval, is negative, or counts
    months or years.
    """
    body = text.strip().lower()
    if body.startswith("interval"):
        body = body.removeprefix("interval").strip()
    hours = 0.0
    position = 0
    for part in _PART.finditer(body):
        if body[position : part.start()].strip():
            break
        unit = part["unit"]
        if unit in ("month", "year"):
            raise InvalidArgumentError(
                f"{text!r} counts {unit}s, which Delta does not accept in a retention "
                f"(their length varies); write days instead, e.g. 'interval 30 days'"
            )
        if unit not in _HOURS_PER_UNIT:
            break
        hours += int(part["number"]) * _HOURS_PER_UNIT[unit]
        position = part.end()
    if position == 0 or body[position:].strip():
        raise InvalidArgumentError(f"{text!r} is not a retention interval: expected {_ACCEPTED}")
    if hours < 0:
        raise InvalidArgumentError(f"{text!r} is a negative retention; expected {_ACCEPTED}")
    return hours


@dataclass(frozen=True)
class Retention:
    """A retention in hours and where it came from."""

    hours: float
    source: Literal["argument", "table", "default"]
    text: str  # the interval as the table holds it, or as Delta's default reads


def table_retention(configuration: Mapping[str, str | None]) -> Retention:
    """The retention a table's properties set, or Delta's default of one week."""
    text = configuration.get(RETENTION_PROPERTY)
    if text is None:
        return Retention(DEFAULT_RETENTION_HOURS, "default", DEFAULT_RETENTION)
    try:
        return Retention(interval_hours(text), "table", text)
    except InvalidArgumentError as error:
        raise InvalidArgumentError(f"the table's {RETENTION_PROPERTY}: {error}") from None
