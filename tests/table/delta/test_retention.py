"""``delta.deletedFileRetentionDuration`` read as Delta writers write it."""

from __future__ import annotations

import pytest

from zorder.errors import InvalidArgumentError
from zorder.table.delta.retention import (
    DEFAULT_RETENTION_HOURS,
    RETENTION_PROPERTY,
    interval_hours,
    table_retention,
)


@pytest.mark.parametrize(
    ("text", "hours"),
    [
        ("interval 7 days", 168),
        ("interval 168 hours", 168),
        ("interval 1 week", 168),
        ("interval 2 weeks", 336),
        ("interval 30 minutes", 0.5),
        ("interval 1 day", 24),
        ("interval 90 seconds", 90 / 3600),
        ("INTERVAL 30 DAYS", 720),  # Delta Spark lowercases the text first
        ("  interval   3   days  ", 72),
        ("30 days", 720),  # Delta Spark adds the missing "interval"
        ("interval 1 day 12 hours", 36),  # several parts, as Spark's intervals take
        ("interval 0 hours", 0),
        ("interval 3600000 milliseconds", 1),
    ],
)
def test_intervals_in_hours(text: str, hours: float) -> None:
    assert interval_hours(text) == pytest.approx(hours)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "interval",
        "7 days please",
        "interval seven days",
        "interval 7",
        "7 fortnights",
        "1.5 days",
    ],
)
def test_what_is_not_an_interval_is_refused_by_name(text: str) -> None:
    with pytest.raises(InvalidArgumentError, match="is not a retention interval") as error:
        interval_hours(text)
    assert repr(text) in str(error.value)
    assert "'interval 7 days'" in str(error.value)  # what would be accepted


@pytest.mark.parametrize("text", ["interval 1 month", "interval 1 year", "1 day 2 months"])
def test_months_and_years_are_refused_as_delta_refuses_them(text: str) -> None:
    with pytest.raises(InvalidArgumentError, match="which Delta does not accept"):
        interval_hours(text)


def test_a_negative_retention_is_refused() -> None:
    with pytest.raises(InvalidArgumentError, match="negative"):
        interval_hours("interval -1 days")


def test_a_table_without_the_property_keeps_a_week() -> None:
    retention = table_retention({})
    assert (retention.hours, retention.source) == (DEFAULT_RETENTION_HOURS, "default")
    assert DEFAULT_RETENTION_HOURS == 168
    retention = table_retention({RETENTION_PROPERTY: "interval 30 days"})
    assert (retention.hours, retention.source, retention.text) == (720, "table", "interval 30 days")
    with pytest.raises(InvalidArgumentError, match=f"the table's {RETENTION_PROPERTY}: 'soon'"):
        table_retention({RETENTION_PROPERTY: "soon"})
