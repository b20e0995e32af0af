"""``zorder query``'s rows within the terminal's width, as DuckDB's shell prints them."""

from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake
from rich.console import Console
from typer.testing import CliRunner

from zorder.cli import app
from zorder.cli.fitting import ELLIPSIS, MAX_CELL_WIDTH, fit_columns
from zorder.cli.rows import rows_table

runner = CliRunner()

WIDE = pa.table({f"column_{i:02d}": [i, i + 100, -i] for i in range(19)})


def printed(table: pa.Table, width: int = 80) -> str:
    console = Console(width=width, record=True, file=io.StringIO())
    for part in rows_table("rows", table, width):
        console.print(part)
    return console.export_text()


def header_cells(text: str) -> list[str]:
    header = next(line for line in text.splitlines() if line.startswith("┃"))
    return [cell.strip() for cell in header.strip("┃").split("┃")]


def test_every_column_shows_when_all_fit() -> None:
    fitted = fit_columns([2, 5, 10], 80)
    assert fitted.leading == (0, 1, 2)
    assert fitted.trailing == fitted.hidden == ()
    assert fitted.widths == {0: 2, 1: 5, 2: 10}


def test_long_values_are_cut_before_columns_are_hidden() -> None:
    fitted = fit_columns([2, 200, 25], 80)
    assert fitted.hidden == ()
    assert fitted.widths[0] == 2
    assert fitted.widths[2] == 25
    # The cut column takes every cell the others leave: 1 + (2+3) + (w+3) + (25+3) = 80.
    assert fitted.widths[1] == 80 - 1 - 5 - 3 - 28


def test_leading_and_trailing_columns_in_turn_around_the_gap() -> None:
    fitted = fit_columns([9] * 19, 80)
    assert fitted.leading == (0, 1, 2)
    assert fitted.trailing == (16, 17, 18)
    assert fitted.hidden == tuple(range(3, 16))
    # One wide column on the left stops that side; the right goes on filling the width.
    fitted = fit_columns([9, 9, 60, *[4] * 10], 60)
    assert fitted.leading == (0, 1)
    assert fitted.trailing == (9, 10, 11, 12)
    assert fitted.hidden == tuple(range(2, 9))


def test_a_width_narrower_than_one_column_still_shows_its_start() -> None:
    fitted = fit_columns([MAX_CELL_WIDTH, MAX_CELL_WIDTH], 12)
    assert fitted.leading == (0,)
    assert fitted.hidden == (1,)
    assert 1 + fitted.widths[0] + 3 + 4 <= 12


def test_a_wide_table_keeps_its_ends_and_names_what_is_hidden() -> None:
    text = printed(WIDE)
    assert all(len(line) <= 80 for line in text.splitlines())
    headers = header_cells(text)
    ends = ["column_00", "column_01", "column_02", ELLIPSIS, "column_16", "column_17"]
    assert headers == [*ends, "column_18"]
    assert f"{ELLIPSIS} 13 more columns: column_03, column_04" in text
    assert "column_15 (--columns" in " ".join(text.split())
    first_row = next(line for line in text.splitlines() if line.startswith("│"))
    assert [cell.strip() for cell in first_row.strip("│").split("│")] == [
        "0",
        "1",
        "2",
        ELLIPSIS,
        "16",
        "17",
        "18",
    ]


def test_a_narrow_table_shows_every_column_and_cuts_long_values() -> None:
    table = pa.table(
        {
            "id": [1, 2],
            "name": ["x" * 200, "short"],
            "note": ["line one\nline two", None],
        }
    )
    text = printed(table)
    assert header_cells(text) == ["id", "name", "note"]
    assert ELLIPSIS + " " not in text.splitlines()[-1]  # no "… N more columns" line
    rows = [line for line in text.splitlines() if line.startswith("│")]
    assert len(rows) == 2  # one line a row: a newline in a value is shown as \n
    assert "x" * 20 in rows[0]
    assert rows[0].split("│")[2].rstrip().endswith(ELLIPSIS)
    assert "line one\\nline two" in rows[0]
    assert all(len(line) <= 80 for line in text.splitlines())


def test_values_are_text_not_markup() -> None:
    text = printed(pa.table({"a": ["[bold]not markup[/bold]"]}))
    assert "[bold]not markup[/bold]" in text


@pytest.mark.parametrize("width", [40, 80, 120])
def test_query_fits_the_terminal(tmp_path: Path, width: int) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, WIDE)
    result = runner.invoke(app, ["query", path], env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert all(len(line) <= width for line in lines), result.stdout
    headers = header_cells(result.stdout)
    assert headers[0] == "column_00"
    assert headers[-1] == "column_18"
    assert ELLIPSIS in headers
    assert "more columns" in result.stdout
    assert "scanned 1 of 1 files" in result.stdout


def test_query_prints_instants_in_the_time_zone_it_is_given(tmp_path: Path) -> None:
    utc = dt.UTC
    path = str(tmp_path / "t")
    winter, summer = (
        dt.datetime(2026, 11, 2, 15, tzinfo=utc),
        dt.datetime(2026, 7, 1, 12, 30, tzinfo=utc),
    )
    write_deltalake(
        path,
        pa.table(
            {
                "ts": pa.array([winter, summer], pa.timestamp("us", tz="UTC")),
                "ntz": pa.array([winter.replace(tzinfo=None), None], pa.timestamp("us")),
                "nest": pa.array(
                    [{"t": winter}, {"t": None}], pa.struct([("t", pa.timestamp("us", tz="UTC"))])
                ),
                "many": pa.array([[summer], []], pa.list_(pa.timestamp("us", tz="UTC"))),
            }
        ),
    )
    zoned = ["query", path, "--time-zone", "America/New_York", "--json"]
    result = runner.invoke(app, zoned)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows == [
        {
            "ts": "2026-11-02T10:00:00-05:00",  # EST
            "ntz": "2026-11-02T15:00:00",  # a wall clock: no zone to show it in
            "nest": {"t": "2026-11-02T10:00:00-05:00"},
            "many": ["2026-07-01T08:30:00-04:00"],
        },
        {"ts": "2026-07-01T08:30:00-04:00", "ntz": None, "nest": {"t": None}, "many": []},  # EDT
    ]
    # The same instants: parsed back, each is what the table holds.
    assert dt.datetime.fromisoformat(rows[0]["ts"]) == winter
    assert dt.datetime.fromisoformat(rows[1]["ts"]) == summer
    shown = runner.invoke(app, ["query", path, "--time-zone", "+05:30", "--columns", "ts"])
    assert shown.exit_code == 0, shown.output
    assert "2026-11-02T20:30:00+05:30" in shown.output
    assert "2026-07-01T18:00:00+05:30" in shown.output
    plain = runner.invoke(app, ["query", path, "--columns", "ts", "--json"])
    assert json.loads(plain.stdout.splitlines()[0]) == {"ts": "2026-11-02T15:00:00+00:00"}
