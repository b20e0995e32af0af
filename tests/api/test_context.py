"""The one context of a handle: its zone, ANSI meaning, clock and session, decided once
and passed down (zorder.api.context); no JVM."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake

import zorder
from zorder.api.context import Context
from zorder.api.scanning import plan_scan
from zorder.errors import InvalidArgumentError, InvalidArgumentTypeError


def test_without_a_session_a_context_reads_utc_with_ansi_on() -> None:
    context = Context.of(None)
    assert (context.time_zone, context.ansi, context.legacy_ansi) == ("UTC", True, False)
    assert context.spark is None
    assert context.started() is None
    with pytest.raises(InvalidArgumentError, match="a test needs Spark"):
        context.session("a test")
    given = Context.of(None, time_zone="Asia/Kolkata", ansi=False)
    assert (given.time_zone, given.ansi) == ("Asia/Kolkata", False)
    assert not given.reads_like(context)
    assert context.reads_like(Context.of(None))


@pytest.mark.parametrize(
    ("keywords", "error", "named"),
    [
        ({"ansi": "yes"}, InvalidArgumentTypeError, "'yes'"),
        ({"time_zone": 5}, InvalidArgumentError, "5"),
        ({"time_zone": " "}, InvalidArgumentError, "' '"),
    ],
)
def test_bad_settings_are_refused_naming_them(
    keywords: dict[str, object], error: type[Exception], named: str
) -> None:
    with pytest.raises(error, match=named):
        Context.of(None, **keywords)  # type: ignore[arg-type]
    with pytest.raises(error, match=named):
        zorder.Table("/nowhere", create=True, **keywords)  # type: ignore[arg-type]


def test_a_session_function_runs_once_and_only_when_spark_is_needed(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"x": [1, 2, 3]}))
    calls: list[int] = []
    session = object()  # what the function returns is the session, started once

    def start() -> object:
        calls.append(1)
        return session

    table = zorder.Table(path, spark=start)  # type: ignore[arg-type]
    assert table.scan("x > 1").to_arrow().column("x").to_pylist() == [2, 3]
    table.optimize(by=["x"], engine="arrow")
    assert calls == []
    assert table.spark is None
    assert table.context.started() is session
    assert table.context.started() is session
    assert calls == [1]
    assert table.spark is session


def test_a_handle_plans_every_scan_in_the_context_it_opened_with(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    instant = dt.datetime(2021, 9, 8, 11, tzinfo=dt.UTC)
    rows = pa.table({"ts": pa.array([instant], pa.timestamp("us", tz="UTC")), "x": [1]})
    write_deltalake(path, rows, partition_by=["ts"])
    table = zorder.Table(path, time_zone="America/New_York", ansi=False)
    scan = table.scan("ts = '2021-09-08 11:00:00'")
    assert scan.context is table.context
    assert (scan.time_zone, scan.ansi) == ("America/New_York", False)
    assert table.snapshot().scan().context is table.context
    # The context is frozen: a handle's zone is decided once.
    with pytest.raises(dataclasses.FrozenInstanceError):
        table.context.time_zone = "UTC"  # type: ignore[misc]


def test_the_clock_a_filter_reads_is_the_contexts(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    days = [dt.date(2024, 1, 1), dt.date(2024, 6, 1)]
    write_deltalake(path, pa.table({"d": pa.array(days, pa.date32()), "x": [1, 2]}))
    table = zorder.Table(path)
    pinned = dataclasses.replace(
        table.context, clock=lambda: dt.datetime(2024, 3, 1, tzinfo=dt.UTC)
    )
    scan = plan_scan(table.snapshot().table_snapshot, "d < current_date()", pinned)
    assert scan.to_arrow().column("x").to_pylist() == [1]
    assert "2024-03-01" in str(scan.row_filter)
