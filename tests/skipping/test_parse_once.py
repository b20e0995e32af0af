"""A filter is parsed once per scan; a comparison with NULL is NULL, under NOT too."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import write_deltalake

import zorder
from zorder.skipping import sql
from zorder.skipping.evaluate import might_match_mask
from zorder.skipping.explain import planned_sql
from zorder.skipping.predicates import Bound, NullComparison, bind
from zorder.skipping.rows import exact_predicate, row_mask
from zorder.skipping.sql import parse_filter

TYPES = {"x": "int", "y": "int"}
ROWS = pa.table(
    {
        "x": pa.array([1, 5, None, 3], pa.int32()),
        "y": pa.array([0, 2, 7, None], pa.int32()),
    }
)
# Two files: x and y in [0, 1] and in [5, 9]. Statistics may keep a file only if it may
# hold a row where the filter is TRUE.
STATS = pa.table(
    {
        "num_records": pa.array([2, 2], pa.int64()),
        "min": pa.array([{"x": 0, "y": 0}, {"x": 5, "y": 5}]),
        "max": pa.array([{"x": 1, "y": 1}, {"x": 9, "y": 9}]),
        "null_count": pa.array([{"x": 0, "y": 0}, {"x": 0, "y": 0}]),
    }
)


@pytest.mark.parametrize(
    ("where", "rows", "files"),
    [
        # NULL for every row, and NOT NULL is NULL: no row, no file, either way.
        ("x = NULL", [None] * 4, [False, False]),
        ("NOT (x = NULL)", [None] * 4, [False, False]),
        ("NOT (NOT (x < NULL))", [None] * 4, [False, False]),
        ("NOT (x = 1 + NULL)", [None] * 4, [False, False]),
        # NULL OR y > 1 is TRUE where y > 1, else NULL.
        ("x = NULL OR y > 1", [None, True, True, None], [False, True]),
        ("NOT (x = NULL OR y > 1)", [None, False, False, None], [False, False]),
        # NULL AND FALSE is FALSE, whose NOT is TRUE.
        ("NOT (x = NULL AND y > 1)", [True, None, None, None], [True, False]),
        ("NOT (x = NULL AND FALSE)", [True] * 4, [True, True]),
        # x >= NULL AND x <= 1: FALSE where x > 1, so its NOT keeps those rows.
        ("NOT (x BETWEEN NULL AND 1)", [None, True, None, True], [False, True]),
        ("NOT (x BETWEEN 1 AND NULL)", [None, None, None, None], [True, False]),  # x = 0
        ("x <=> NULL", [False, False, True, False], [False, False]),
        ("NOT (x IS DISTINCT FROM NULL)", [False, False, True, False], [False, False]),
    ],
)
def test_a_comparison_with_null_is_null_in_rows_and_in_statistics(
    where: str, rows: list[bool | None], files: list[bool]
) -> None:
    parsed = parse_filter(where)
    exact = exact_predicate(parsed.unfolded(), TYPES)  # answered, never refused
    assert row_mask(exact, ROWS, TYPES).to_pylist() == rows, where
    assert might_match_mask(bind(parsed.predicate(), TYPES), STATS, TYPES).tolist() == files


def test_the_folded_tree_keeps_a_null_comparison_under_not() -> None:
    parsed = parse_filter("NOT (x = NULL) AND TRUE")
    assert parsed.predicate() == NullComparison("=", "x")  # NOT NULL is NULL, not TRUE
    assert planned_sql(bind(parsed.predicate(), TYPES)) == "`x` = NULL"
    with pytest.raises(ValueError, match="unknown column 'nope'"):
        bind(parse_filter("nope = NULL").predicate(), TYPES)  # as Spark: the name must resolve


def test_a_bound_tree_is_its_own_type() -> None:
    bound = bind(parse_filter("x > 1").predicate(), TYPES)
    assert isinstance(bound, Bound)
    assert bound.columns == TYPES
    with pytest.raises(AttributeError):  # an unbound tree is no Bound (mypy says so first)
        might_match_mask(parse_filter("x > 1").predicate(), STATS, TYPES)  # type: ignore[arg-type]


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts parsed as filters while the test runs."""
    seen: list[str] = []
    parse = sql._parse

    def counted(text: str) -> object:
        seen.append(text)
        return parse(text)

    monkeypatch.setattr(sql, "_parse", counted)
    return seen


def test_a_scan_parses_its_filter_once(tmp_path: Path, parses: list[str]) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, ROWS)
    # Answered by the exact evaluator, and by the translation to DuckDB (x + y).
    for where, expected in [("NOT (x = NULL) OR y > 1", 2), ("x + y > 6", 1)]:
        parses.clear()
        planned = zorder.scan(path, where)
        assert planned.to_arrow().num_rows == expected, where
        assert parses == [where], where
        assert planned.parsed.text == where
        assert planned.bound is not None


@pytest.mark.parametrize("where", ["m = NULL", "NOT (m = NULL)", "m <> NULL OR i > 0"])
def test_a_null_comparison_spark_refuses_is_refused_not_answered(
    tmp_path: Path, where: str
) -> None:
    # Spark refuses to compare maps (DATATYPE_MISMATCH.INVALID_ORDERING_TYPE), with NULL too.
    path = tmp_path / "t"
    maps = pa.array([[("a", 1)], [("b", 2)]], type=pa.map_(pa.string(), pa.int64()))
    write_deltalake(path, pa.table({"i": [1, 2], "m": maps}))
    with pytest.raises(zorder.errors.UnsupportedFilterError, match="map column m"):
        zorder.to_arrow(str(path), where)
    assert zorder.to_arrow(str(path), "NOT (i = NULL)").num_rows == 0  # ints compare


def test_a_parsed_filter_converts_its_tree_once(parses: list[str]) -> None:
    parsed = parse_filter("x + 1 > 2 AND y IN (1, 2)")
    assert parsed.predicate() is parsed.predicate()
    assert parsed.unfolded() is parsed.unfolded()
    assert parsed.predicate(ansi_off=TYPES) is parsed.predicate(ansi_off=dict(TYPES))
    assert parsed.columns == {"x", "y"}
    assert parses == ["x + 1 > 2 AND y IN (1, 2)"]


def test_a_plan_in_another_zone_keeps_the_tree_and_the_instant(parses: list[str]) -> None:
    from zorder.skipping.clock import in_zone, parse_with_clock

    now = dt.datetime(2024, 6, 1, 2, 30, tzinfo=dt.UTC)
    plain = parse_with_clock("x > 1", columns=TYPES, time_zone="UTC", now=now)
    moved = in_zone(plain, columns=TYPES, time_zone="America/New_York")
    assert moved.tree is plain.tree  # nothing in it depends on the zone's clock: not parsed
    assert moved.context is not None
    assert moved.context.zone_name == "America/New_York"
    assert parses == ["x > 1"]
    # current_date() is 1 June in UTC and 31 May in New York at this instant: the text
    # pinned in the new zone differs, and only then is it parsed again, at the same instant.
    dated = parse_with_clock("d = current_date()", columns=["d"], time_zone="UTC", now=now)
    there = in_zone(dated, columns=["d"], time_zone="America/New_York")
    assert "2024-06-01" in dated.text
    assert "2024-05-31" in there.text
    assert there.context is not None
    assert there.context.now == now
    assert in_zone(there, columns=["d"], time_zone="UTC").text == dated.text


def test_advice_parses_each_statement_and_each_filter_once(
    parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlglot

    from zorder.advice import workload

    statements: list[str] = []
    parse_one = sqlglot.parse_one

    def one(text: str, **kwargs: Any) -> Any:
        statements.append(text)
        return parse_one(text, **kwargs)

    monkeypatch.setattr(sqlglot, "parse_one", one)
    queries = ["SELECT * FROM t WHERE x > 1 AND y = 2", "x > 1", "x > 1"]
    read = workload.read_workload(queries, TYPES)
    assert read.texts == ("(x > 1) AND (y = 2)", "x > 1", "x > 1")
    assert statements == queries  # each statement parsed once
    assert parses == ["(x > 1) AND (y = 2)", "x > 1"]  # each distinct filter once
    assert read.filters[1] is read.filters[2]
