"""Planning a filter as written: the clock pinned, long and deep filters, the plan shown."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pyarrow as pa
import pytest

from zorder.errors import FilterParseError
from zorder.skipping import bind, might_match_mask, parse_predicate
from zorder.skipping.clock import pin_clock
from zorder.skipping.explain import planned_sql
from zorder.skipping.rows import exact_predicate, row_mask
from zorder.skipping.sql import MAX_NESTING, parse_unfolded

NOW = dt.datetime(2026, 11, 24, 23, 30, 0, 123456, tzinfo=dt.UTC)
KOLKATA = zoneinfo.ZoneInfo("Asia/Kolkata")  # already the 25th there


@pytest.mark.parametrize(
    ("text", "pinned"),
    [
        ("d < current_date()", "d < (DATE'2026-11-25')"),
        ("d < CURRENT_DATE - 1", "d < (DATE'2026-11-25') - 1"),
        ("d < curdate ( )", "d < (DATE'2026-11-25')"),
        ("ts > now()", "ts > (TIMESTAMP'2026-11-24 23:30:00.123456+00:00')"),
        ("ts > current_timestamp", "ts > (TIMESTAMP'2026-11-24 23:30:00.123456+00:00')"),
        ("t < localtimestamp()", "t < (TIMESTAMP_NTZ'2026-11-25 05:00:00.123456')"),
        # Not calls of the clock: a string, a quoted name, a qualified name.
        ("s = 'current_date()'", "s = 'current_date()'"),
        ("`current_date` = 1", "`current_date` = 1"),
        ("t.current_date = 1", "t.current_date = 1"),
        ("now = 1", "now = 1"),
    ],
)
def test_the_clock_is_read_once_in_the_session_zone(text: str, pinned: str) -> None:
    assert pin_clock(text, now=NOW, zone=KOLKATA, columns=["d", "ts", "t", "s"]) == pinned


def test_a_bare_clock_name_is_the_column_when_the_table_has_one() -> None:
    # As Spark resolves it: current_date without parentheses is a column if one exists.
    assert pin_clock("current_date = 1", now=NOW, zone=dt.UTC, columns=["current_date"]) == (
        "current_date = 1"
    )
    assert pin_clock("current_date() = d", now=NOW, zone=dt.UTC, columns=["current_date"]) == (
        "(DATE'2026-11-24') = d"
    )


@pytest.mark.parametrize("terms", [494, 5_000])
def test_thousands_of_or_terms_plan_and_answer(terms: int) -> None:
    text = " OR ".join(f"x = {i}" for i in range(0, 2 * terms, 2))
    types = {"x": "int"}
    stats = pa.table(
        {
            "num_records": pa.array([1, 1], pa.int64()),
            "min": pa.array([{"x": 4}, {"x": 3 * terms}]),
            "max": pa.array([{"x": 4}, {"x": 3 * terms}]),
            "null_count": pa.array([{"x": 0}, {"x": 0}]),
        }
    )
    mask = might_match_mask(bind(parse_predicate(text), types), stats, types)
    assert mask.tolist() == [True, False]
    rows = pa.table({"x": pa.array([4, 5, None], pa.int32())})
    exact = exact_predicate(parse_unfolded(text), types)
    assert row_mask(exact, rows, types).to_pylist() == [True, False, None]


def test_nesting_is_limited_with_a_clear_error() -> None:
    deep = "(" * (MAX_NESTING // 2 - 2) + "x = 1" + ")" * (MAX_NESTING // 2 - 2)
    assert parse_predicate(deep) is not None
    too_deep = "NOT " * (MAX_NESTING + 1) + "x = 1"
    with pytest.raises(FilterParseError, match=r"nests \d+ levels deep.*at most 200"):
        parse_predicate(too_deep)


def test_the_plan_shows_folded_literals_and_what_statistics_keep() -> None:
    types = {"d": "date", "x": "int", "s": "string"}
    predicate = parse_predicate("d >= date '2024-06-01' AND (x IN (1, 2.5) OR upper(s) = 'A')")
    shown = planned_sql(bind(predicate, types))
    assert shown.startswith("`d` >= DATE'2024-06-01' AND (`x` IN (1.0BD, 2.5BD) OR [kept by")
    assert "UPPER(s) = 'A'" in shown
    assert planned_sql(bind(parse_predicate("NOT (x > 1)"), types)) == "`x` <= 1"


@pytest.mark.parametrize("unit", ["d", "h", "m", "y", "w", "s"])
def test_an_interval_unit_spark_does_not_read_is_a_parse_error(unit: str) -> None:
    # sqlglot reads 'd' as DAY and folding would compute it; Spark refuses the text.
    with pytest.raises(FilterParseError, match=f"'{unit}' is not an interval unit"):
        parse_predicate(f"d > date '2024-01-01' - interval '1' {unit}")


def test_interval_spellings_spark_reads_still_parse() -> None:
    for text in [
        "d > date '2024-01-01' - interval 1 day 2 hours",
        "d > date '2024-01-01' - interval '1-2' year to month",
        "d > date '2024-01-01' + interval -3 DAYS AND x = 1",
        "d > date '2024-01-01' - interval '1 day' AND x = 1",
    ]:
        parse_predicate(text)


def test_negative_edge_literals_read_as_spark_reads_them() -> None:
    # Spark's grammar takes the minus with the digits: -128Y is a TINYINT, while
    # -CAST(128 AS TINYINT) overflows; sqlglot parses both alike, the text tells them apart.
    types = {"b": "tinyint"}
    rows = pa.table({"b": pa.array([-128, 5, None], pa.int8())})
    exact = exact_predicate(parse_unfolded("b = -128Y"), types)
    assert row_mask(exact, rows, types).to_pylist() == [True, False, None]
    assert "CAST" in str(parse_predicate("b = -CAST(128 AS TINYINT)"))  # left to Spark
    with pytest.raises(FilterParseError, match="both as a typed literal and as a negated CAST"):
        parse_predicate("b = -128Y OR b = -CAST(128 AS TINYINT)")
