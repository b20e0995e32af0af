"""Time functions against a brute-force reference: the statistics never drop a file with a match.

A file is a handful of instants (and maybe NULLs) near a DST change, a midnight or a
zone's odd offset; its statistics are their minimum, maximum and null count. For a
random filter on ``date_trunc`` below a day, ``unix_timestamp``, or a part of the
timestamp (``hour``, ``minute``, ``dayofweek``...), each row's value is computed the
slow way (Python's zoneinfo wall clock; Java's ``truncatedTo`` written out), and
wherever some row satisfies the filter, or its negation, the file must be kept.
Where the row evaluator accepts a rewrite, it must agree with the reference on
TRUE, FALSE and NULL, row by row.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zorder.errors import UnsupportedFilterError
from zorder.skipping.constants import FoldContext
from zorder.skipping.evaluate import might_match_mask
from zorder.skipping.explain import planned_sql
from zorder.skipping.nodes import Not, PartComparison
from zorder.skipping.predicates import Bound, bind
from zorder.skipping.rows import exact_predicate, row_mask
from zorder.skipping.sql import parse_filter

ZONES = [
    "America/New_York",
    "UTC",
    "Asia/Kolkata",  # +05:30
    "Australia/Lord_Howe",  # a DST change of 30 minutes
    "America/Santiago",  # clocks set back at midnight
    "America/Sao_Paulo",  # clocks moved forward at midnight (until 2019)
]
OPS = ["=", "<=>", "!=", "<", "<=", ">", ">="]
TYPES = {"ts": "timestamp"}
# Instants where the wall clock jumps, and midnights around them.
EDGES = [
    dt.datetime(2026, 3, 8, 7, tzinfo=dt.UTC),  # New York springs forward
    dt.datetime(2026, 11, 1, 6, tzinfo=dt.UTC),  # and falls back
    dt.datetime(2026, 4, 4, 15, tzinfo=dt.UTC),  # Lord Howe: 02:00 -> 01:30
    dt.datetime(2026, 4, 5, 3, tzinfo=dt.UTC),  # Santiago: 24:00 -> 23:00
    dt.datetime(2018, 11, 4, 3, tzinfo=dt.UTC),  # Sao Paulo: 00:00 -> 01:00
    dt.datetime(2026, 1, 1, 5, tzinfo=dt.UTC),  # New York's new year
    dt.datetime(2026, 6, 15, 4, tzinfo=dt.UTC),  # a plain midnight
]


@st.composite
def files(draw: st.DrawFn) -> list[dt.datetime | None]:
    """A file's rows: instants within a span of seconds to two days of an edge."""
    edge = draw(st.sampled_from(EDGES))
    around = draw(st.sampled_from([30 * 3600, 2 * 3600]))  # near the edge, often very near
    start = edge + dt.timedelta(seconds=draw(st.integers(-around, around)))
    span = draw(st.sampled_from([1, 59, 600, 3599, 3600, 7200, 20 * 3600, 86399, 2 * 86400]))
    offsets = draw(st.lists(st.integers(0, span * 1_000_000), min_size=1, max_size=6))
    rows: list[dt.datetime | None] = [start + dt.timedelta(microseconds=o) for o in offsets]
    if draw(st.integers(0, 4)) == 0:
        rows.append(None)
    return rows


def stats_of(rows: Sequence[dt.datetime | None]) -> pa.Table:
    present = [r for r in rows if r is not None]
    kind = pa.timestamp("us", tz="UTC")

    def struct(item: Any, arrow: pa.DataType) -> pa.StructArray:
        return pa.StructArray.from_arrays([pa.array([item], arrow)], names=["ts"])

    return pa.table(
        {
            "path": ["f0"],
            "size_bytes": pa.array([100], pa.int64()),
            "num_records": pa.array([len(rows)], pa.int64()),
            "null_count": struct(len(rows) - len(present), pa.int64()),
            "min": struct(min(present) if present else None, kind),
            "max": struct(max(present) if present else None, kind),
        }
    )


def compare(a: Any, op: str, b: Any) -> bool | None:
    if op == "<=>":
        return a is not None and a == b
    if a is None:
        return None
    outcomes: dict[str, bool] = {
        "=": a == b,
        "!=": a != b,
        "<": a < b,
        "<=": a <= b,
        ">": a > b,
        ">=": a >= b,
    }
    return outcomes[op]


def java_truncated(instant: dt.datetime, unit: str, zone: dt.tzinfo) -> dt.datetime:
    """Spark's date_trunc below a day, written out: ZonedDateTime.truncatedTo, i.e. the
    wall clock truncated and resolved by ofLocal with the old offset preferred."""
    micros = {"SECOND": 1_000_000, "MILLISECOND": 1000, "MICROSECOND": 1}
    if unit in micros:
        epoch = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
        count = (instant - epoch) // dt.timedelta(microseconds=1)
        return epoch + dt.timedelta(microseconds=count - count % micros[unit])
    local = instant.astimezone(zone)
    cut = {"minute": 0, "second": 0, "microsecond": 0}
    if unit == "MINUTE":
        del cut["minute"]
    wall = local.replace(tzinfo=None, **cut)
    valid = []
    for fold in (0, 1):
        candidate = wall.replace(tzinfo=zone, fold=fold)
        if candidate.astimezone(dt.UTC).astimezone(zone).replace(tzinfo=None) == wall:
            valid.append(candidate.utcoffset())
    if not valid:  # a gap: later by the gap's length, i.e. read with the offset before it
        return wall.replace(tzinfo=zone, fold=0).astimezone(dt.UTC)
    offset = local.utcoffset() if local.utcoffset() in valid else valid[0]
    assert offset is not None
    return (wall - offset).replace(tzinfo=dt.UTC)


def part_of(instant: dt.datetime, part: str, zone: dt.tzinfo) -> int:
    local = instant.astimezone(zone)
    day = local.date()
    values = {
        "hour": local.hour,
        "minute": local.minute,
        "second": local.second,
        "day": day.day,
        "dayofmonth": day.day,
        "dayofweek": day.isoweekday() % 7 + 1,  # Sunday 1
        "weekday": day.weekday(),  # Monday 0
        "dayofyear": day.timetuple().tm_yday,
        "month": day.month,
        "quarter": (day.month - 1) // 3 + 1,
    }
    return values[part]


def verdicts(text: str, zone: str, rows: Sequence[dt.datetime | None]) -> tuple[Bound, bool, bool]:
    """The filter bound in ``zone``, and whether the file is kept for it and for its NOT."""
    context = FoldContext(zone=zoneinfo.ZoneInfo(zone) if zone != "UTC" else dt.UTC)
    predicate = parse_filter(text, context=context).predicate()
    bound = bind(predicate, TYPES, time_zone=zone)
    negated = bind(Not(predicate), TYPES, time_zone=zone)
    stats = stats_of(rows)
    return (
        bound,
        bool(might_match_mask(bound, stats, TYPES)[0]),
        bool(might_match_mask(negated, stats, TYPES)[0]),
    )


def assert_sound(
    text: str,
    zone: str,
    rows: list[dt.datetime | None],
    value_of: Callable[[dt.datetime], Any],
    v: Any,
    op: str,
) -> Bound:
    truths = [compare(None if r is None else value_of(r), op, v) for r in rows]
    bound, kept, kept_negated = verdicts(text, zone, rows)
    if any(t is True for t in truths):
        assert kept, (text, zone, rows, planned_sql(bound))
    if any(t is False for t in truths):
        assert kept_negated, ("NOT", text, zone, rows, planned_sql(bound))
    return bound


def assert_exact_where_accepted(
    text: str,
    zone: str,
    rows: list[dt.datetime | None],
    value_of: Callable[[dt.datetime], Any],
    v: Any,
    op: str,
) -> bool:
    context = FoldContext(zone=zoneinfo.ZoneInfo(zone) if zone != "UTC" else dt.UTC)
    try:
        bound = exact_predicate(
            parse_filter(text, context=context).unfolded(), TYPES, time_zone=zone
        )
    except UnsupportedFilterError:
        return False
    table = pa.table({"ts": pa.array(rows, pa.timestamp("us", tz="UTC"))})
    got = row_mask(bound, table, TYPES).to_pylist()
    expected = [compare(None if r is None else value_of(r), op, v) for r in rows]
    assert got == expected, (text, zone, rows)
    return True


def literal_sql(instant: dt.datetime) -> str:
    return f"TIMESTAMP '{instant.astimezone(dt.UTC).replace(tzinfo=None).isoformat(sep=' ')}+00:00'"


@settings(deadline=None, max_examples=300)
@given(
    rows=files(),
    unit=st.sampled_from(["HOUR", "hour", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND"]),
    op=st.sampled_from(OPS),
    zone=st.sampled_from(ZONES),
    data=st.data(),
)
def test_date_trunc_below_a_day(
    rows: list[dt.datetime | None], unit: str, op: str, zone: str, data: st.DataObject
) -> None:
    tz = zoneinfo.ZoneInfo(zone)
    present = [r for r in rows if r is not None] or [EDGES[0]]
    near = data.draw(st.sampled_from(present)) + dt.timedelta(
        microseconds=data.draw(st.integers(-3_600_000_000, 3_600_000_000))
    )
    aligned = data.draw(st.booleans())
    v = java_truncated(near, unit.upper(), tz) if aligned else near
    text = f"date_trunc('{unit}', ts) {op} {literal_sql(v)}"

    def value_of(r: dt.datetime) -> dt.datetime:
        return java_truncated(r, unit.upper(), tz)

    bound = assert_sound(text, zone, rows, value_of, v, op)
    assert "kept by statistics" not in planned_sql(bound) or op == "<=>"
    assert assert_exact_where_accepted(text, zone, rows, value_of, v, op)


@settings(deadline=None, max_examples=150)
@given(rows=files(), op=st.sampled_from(OPS), data=st.data(), zone=st.sampled_from(ZONES))
def test_unix_timestamp(
    rows: list[dt.datetime | None], op: str, data: st.DataObject, zone: str
) -> None:
    present = [r for r in rows if r is not None] or [EDGES[0]]
    seconds = int(data.draw(st.sampled_from(present)).timestamp()) + data.draw(st.integers(-2, 2))
    text = f"unix_timestamp(ts) {op} {seconds}"

    def value_of(r: dt.datetime) -> int:
        return int((r - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // dt.timedelta(seconds=1))

    assert_sound(text, zone, rows, value_of, seconds, op)
    assert assert_exact_where_accepted(text, zone, rows, value_of, seconds, op)


PART_SPELLINGS = {
    "hour": ["hour(ts)", "extract(HOUR FROM ts)", "date_part('HOUR', ts)"],
    "minute": ["minute(ts)", "date_part('minute', ts)"],
    "second": ["second(ts)"],
    "day": ["day(ts)", "dayofmonth(ts)", "extract(DAY FROM ts)"],
    "dayofweek": ["dayofweek(ts)", "date_part('DOW', ts)"],
    "weekday": ["weekday(ts)"],
    "dayofyear": ["dayofyear(ts)"],
    "month": ["month(ts)"],
    "quarter": ["quarter(ts)"],
}
RANGES = {
    "hour": (0, 23),
    "minute": (0, 59),
    "second": (0, 59),
    "day": (1, 31),
    "dayofweek": (1, 7),
    "weekday": (0, 6),
    "dayofyear": (1, 366),
    "month": (1, 12),
    "quarter": (1, 4),
}


@settings(deadline=None, max_examples=600)
@given(
    rows=files(),
    part=st.sampled_from(sorted(PART_SPELLINGS)),
    op=st.sampled_from(OPS),
    zone=st.sampled_from(ZONES),
    data=st.data(),
)
def test_parts_of_a_timestamp_are_bounded_soundly(
    rows: list[dt.datetime | None], part: str, op: str, zone: str, data: st.DataObject
) -> None:
    tz = zoneinfo.ZoneInfo(zone)
    spelling = data.draw(st.sampled_from(PART_SPELLINGS[part]))
    low, high = RANGES[part]
    v = data.draw(st.integers(low - 1, high + 1))
    text = f"{spelling} {op} {v}"
    bound = assert_sound(text, zone, rows, lambda r: part_of(r, part, tz), v, op)
    if op != "<=>":
        assert isinstance(bound.tree, PartComparison), planned_sql(bound)


@settings(deadline=None, max_examples=150)
@given(
    rows=files(),
    part=st.sampled_from(["hour", "minute", "dayofweek", "month"]),
    zone=st.sampled_from(ZONES),
    data=st.data(),
)
def test_parts_in_lists(
    rows: list[dt.datetime | None], part: str, zone: str, data: st.DataObject
) -> None:
    tz = zoneinfo.ZoneInfo(zone)
    low, high = RANGES[part]
    listed = data.draw(st.lists(st.integers(low, high), min_size=1, max_size=4))
    with_null = data.draw(st.booleans())
    items = ", ".join([*map(str, listed), *(["NULL"] if with_null else [])])
    text = f"{part}(ts) IN ({items})"
    values = [None if r is None else part_of(r, part, tz) for r in rows]
    truths = [
        None if x is None else (True if x in listed else (None if with_null else False))
        for x in values
    ]
    bound, kept, kept_negated = verdicts(text, zone, rows)
    if any(t is True for t in truths):
        assert kept, (text, zone, rows, planned_sql(bound))
    if any(t is False for t in truths):
        assert kept_negated, (text, zone, rows, planned_sql(bound))


def test_a_narrow_file_is_skipped_and_a_wide_one_kept() -> None:
    """hour(ts) = 10 in New York: a file of 09:00-09:59 local is skipped, a file spanning
    two days is kept (the hours wrap), and the plan says the bound is per file."""
    narrow = [
        dt.datetime(2026, 11, 3, 14, tzinfo=dt.UTC),
        dt.datetime(2026, 11, 3, 14, 59, tzinfo=dt.UTC),
    ]
    wide = [dt.datetime(2026, 11, 3, 14, tzinfo=dt.UTC), dt.datetime(2026, 11, 5, 9, tzinfo=dt.UTC)]
    bound, kept, _ = verdicts("hour(ts) = 10", "America/New_York", narrow)
    assert not kept
    assert "per file" in planned_sql(bound)
    assert verdicts("hour(ts) = 10", "America/New_York", wide)[1]
    assert verdicts("hour(ts) = 9", "America/New_York", narrow)[1]
    # across New York's fall back, 01:00-01:59 happens twice: the hour is still 1
    twice = [
        dt.datetime(2026, 11, 1, 5, 30, tzinfo=dt.UTC),
        dt.datetime(2026, 11, 1, 6, 30, tzinfo=dt.UTC),
    ]
    assert verdicts("hour(ts) = 1", "America/New_York", twice)[1]


def test_the_hour_new_york_lives_twice_is_not_read_as_one() -> None:
    """01:05 EDT to 01:10 EST: one date, one hour at both ends, but the minutes between them
    run 05..59 and 00..10, so minute(ts) = 30 may match."""
    rows: list[dt.datetime | None] = [
        dt.datetime(2026, 11, 1, 5, 5, tzinfo=dt.UTC),
        dt.datetime(2026, 11, 1, 5, 30, tzinfo=dt.UTC),
        dt.datetime(2026, 11, 1, 6, 10, tzinfo=dt.UTC),
    ]
    assert verdicts("minute(ts) = 30", "America/New_York", rows)[1]
    assert verdicts("minute(ts) = 30", "America/New_York", [rows[0], rows[2]])[1]


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("hour(ts) = '10'", "hour(ts) compared with a string"),
        ("hour(ts) = 10.0D", "hour(ts) compared with a double"),
        ("from_unixtime(unix_timestamp(ts)) > '2026-11-03'", "FROM_UNIXTIME"),
    ],
)
def test_what_is_not_bounded_is_named_in_the_plan(text: str, named: str) -> None:
    context = FoldContext(zone=zoneinfo.ZoneInfo("America/New_York"))
    bound = bind(
        parse_filter(text, context=context).predicate(), TYPES, time_zone="America/New_York"
    )
    shown = planned_sql(bound)
    assert "kept by statistics" in shown, shown
    assert named in shown, shown


@settings(deadline=None, max_examples=150)
@given(
    rows=files(),
    form=st.sampled_from(["date_trunc('HOUR', ts)", "CAST(ts AS DATE)", "to_date(ts)"]),
    zone=st.sampled_from(ZONES),
    data=st.data(),
)
def test_monotone_functions_in_lists(
    rows: list[dt.datetime | None], form: str, zone: str, data: st.DataObject
) -> None:
    tz = zoneinfo.ZoneInfo(zone)
    present = [r for r in rows if r is not None] or [EDGES[0]]
    picked = data.draw(st.lists(st.sampled_from(present), min_size=1, max_size=3))
    shift = dt.timedelta(hours=data.draw(st.integers(-2, 2)))
    if form.startswith("date_trunc"):
        listed: list[Any] = [java_truncated(p + shift, "HOUR", tz) for p in picked]
        items = [literal_sql(v) for v in listed]

        def value_of(r: dt.datetime) -> Any:
            return java_truncated(r, "HOUR", tz)
    else:
        listed = [(p + shift).astimezone(tz).date() for p in picked]
        items = [f"DATE '{v.isoformat()}'" for v in listed]

        def value_of(r: dt.datetime) -> Any:
            return r.astimezone(tz).date()

    with_null = data.draw(st.booleans())
    text = f"{form} IN ({', '.join([*items, *(['NULL'] if with_null else [])])})"
    values = [None if r is None else value_of(r) for r in rows]
    truths = [
        None if x is None else (True if x in listed else (None if with_null else False))
        for x in values
    ]
    bound, kept, kept_negated = verdicts(text, zone, rows)
    if any(t is True for t in truths):
        assert kept, (text, zone, rows, planned_sql(bound))
    if any(t is False for t in truths):
        assert kept_negated, (text, zone, rows, planned_sql(bound))
