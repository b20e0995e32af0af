"""Zone-less timestamp literals are read in Spark's session time zone, or not at all."""

from __future__ import annotations

import datetime as dt

import pytest

from zorder.skipping.predicates import Comparison, Unknown, bind
from zorder.skipping.sql import parse_predicate
from zorder.skipping.zones import is_utc

TYPES = {"ts": "timestamp", "d": "date", "ntz": "timestamp_ntz"}


@pytest.mark.parametrize(
    "where",
    [
        "ts <= TIMESTAMP'2020-01-01 00:00:00'",
        "ts <= '2020-01-01 00:00:00'",
        "ts <= TIMESTAMP_NTZ'2020-01-01 00:00:00'",
    ],
)
def test_zone_less_literals_are_read_in_the_session_zone(where: str) -> None:
    predicate = parse_predicate(where)
    bound = bind(predicate, TYPES, time_zone="America/New_York").tree
    assert isinstance(bound, Comparison)
    assert bound.value == dt.datetime(2020, 1, 1, 5, tzinfo=dt.UTC)  # EST is UTC-5
    assert isinstance(bind(predicate, TYPES, time_zone="Not/AZone").tree, Unknown)


@pytest.mark.parametrize(
    "where", ["d >= TIMESTAMP'2020-01-01 02:00:00'", "d >= TIMESTAMP'2020-01-01 02:00:00+00:00'"]
)
def test_dates_against_timestamps_decide_only_in_utc_sessions(where: str) -> None:
    predicate = parse_predicate(where)
    assert isinstance(bind(predicate, TYPES, time_zone="UTC").tree, Comparison)
    assert isinstance(bind(predicate, TYPES, time_zone="America/New_York").tree, Unknown)


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (
            "ts <= TIMESTAMP'2020-01-01 00:00:00+00:00'",
            dt.datetime(2020, 1, 1, tzinfo=dt.UTC),
        ),
        (
            "ts <= TIMESTAMP'2020-01-01 00:00:00-05:00'",
            dt.datetime(2020, 1, 1, 5, tzinfo=dt.UTC),
        ),
        ("ntz <= TIMESTAMP_NTZ'2020-01-01 00:00:00'", dt.datetime(2020, 1, 1)),
        ("d <= '2020-01-01'", dt.date(2020, 1, 1)),
    ],
)
def test_literals_whose_meaning_needs_no_zone_bind_in_any_session(
    where: str, value: object
) -> None:
    for zone in ("UTC", "America/New_York", "+05:30"):
        bound = bind(parse_predicate(where), TYPES, time_zone=zone).tree
        assert isinstance(bound, Comparison)
        assert bound.value == value


def test_zone_less_timestamp_in_a_utc_session_is_utc() -> None:
    bound = bind(parse_predicate("ts = TIMESTAMP'2020-01-01 03:00:00'"), TYPES, time_zone="Z").tree
    assert isinstance(bound, Comparison)
    assert bound.value == dt.datetime(2020, 1, 1, 3, tzinfo=dt.UTC)
    assert bound.value.tzinfo is dt.UTC


@pytest.mark.parametrize(
    ("zone", "utc"),
    [("UTC", True), ("Etc/UTC", True), ("+00:00", True), ("GMT", True), ("Europe/London", False)],
)
def test_utc_names(zone: str, utc: bool) -> None:
    assert is_utc(zone) is utc
