"""Timestamp partition values read as Delta Spark reads them.

Delta Spark writes a ``timestamp`` partition value as wall-clock text and
reads it in the session's time zone; ISO-8601 text with a zone names its
instant in any session. deltalake reads both in UTC.
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake
from deltalake.transaction import AddAction
from pyspark.sql import SparkSession

import zorder

pytestmark = pytest.mark.spark

LA = "America/Los_Angeles"
WALL = dt.datetime(2021, 9, 8, 11, 11, 11)


def table_with_both_kinds(path: Path) -> None:
    """Rows x=1 under wall-clock text, x=2 under an ISO-8601 instant (18:30 UTC)."""
    ts = pa.array([WALL.replace(tzinfo=dt.UTC)], pa.timestamp("us", "UTC"))
    write_deltalake(str(path), pa.table({"ts": ts, "x": [1]}), partition_by=["ts"])
    stored = path / "iso" / "part-0.parquet"
    stored.parent.mkdir()
    pq.write_table(pa.table({"x": pa.array([2], pa.int64())}), stored)
    table = DeltaTable(str(path))
    add = AddAction(
        path="iso/part-0.parquet",
        size=stored.stat().st_size,
        partition_values={"ts": "2021-09-08T18:30:00.000000Z"},
        modification_time=0,
        data_change=True,
        stats='{"numRecords":1}',
    )
    table.create_write_transaction([add], mode="append", schema=table.schema(), partition_by=["ts"])


def instants(table: pa.Table) -> dict[int, dt.datetime]:
    return {
        x: ts.astimezone(dt.UTC)
        for x, ts in zip(table.column("x").to_pylist(), table.column("ts").to_pylist(), strict=True)
    }


@pytest.fixture
def path(tmp_path: Path) -> str:
    table_with_both_kinds(tmp_path / "t")
    return str(tmp_path / "t")


def test_wall_clock_values_are_read_in_the_zone_asked(path: str) -> None:
    iso = dt.datetime(2021, 9, 8, 18, 30, tzinfo=dt.UTC)
    assert instants(zorder.to_arrow(path)) == {1: WALL.replace(tzinfo=dt.UTC), 2: iso}
    in_la = WALL.replace(tzinfo=dt.timezone(dt.timedelta(hours=-7))).astimezone(dt.UTC)
    assert instants(zorder.to_arrow(path, time_zone=LA)) == {1: in_la, 2: iso}
    # Filters and pruning see the same values.
    found = zorder.to_arrow(path, "ts = '2021-09-08 11:11:11'", time_zone=LA)
    assert found.column("x").to_pylist() == [1]
    # (A literal with its offset: skipping leaves zone-less literals outside UTC unknown.)
    report = zorder.explain(path, "ts < TIMESTAMP'2021-09-08 11:20:00-07:00'", time_zone=LA)
    assert report.files_scanned == 1  # 18:11 UTC (x=1) is kept, 18:30 UTC is pruned


def test_spark_reads_them_in_its_session_zone(spark: SparkSession, path: str) -> None:
    previous = spark.conf.get("spark.sql.session.timeZone")
    assert previous is not None  # set by default
    spark.conf.set("spark.sql.session.timeZone", LA)
    try:
        rows = zorder.read(spark, path, "ts = '2021-09-08 11:11:11'").collect()
        assert [r.x for r in rows] == [1]
        late = zorder.read(spark, path, "ts > '2021-09-08 11:20:00'").collect()
        assert [r.x for r in late] == [2]
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)


def test_optimize_keeps_the_partition_text(spark: SparkSession, path: str, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(path, copy)
    zorder.optimize(spark, str(copy), by=["x"], full=True)
    assert sorted(e["ts"] for e in DeltaTable(str(copy)).partitions()) == sorted(
        e["ts"] for e in DeltaTable(path).partitions()
    )


def test_written_outside_utc_read_back_in_any_zone(
    spark: SparkSession, kernel: Any, tmp_path: Path
) -> None:
    path = str(tmp_path / "w")
    moments = [
        dt.datetime(2021, 9, 8, 11, tzinfo=dt.UTC),
        dt.datetime(2021, 11, 7, 8, 30, tzinfo=dt.UTC),
    ]
    previous = spark.conf.get("spark.sql.session.timeZone")
    assert previous is not None  # set by default
    spark.conf.set("spark.sql.session.timeZone", LA)
    try:
        rows = [(moments[i % 2], i) for i in range(40)]
        df = spark.createDataFrame(rows, "ts timestamp, x long")
        zorder.write(df, path, by=["x"], partition_by=["ts"], num_files=2)
        seen = {r.x: r.ts.astimezone(dt.UTC) for r in zorder.read(spark, path).collect()}
        assert seen == {i: moments[i % 2] for i in range(40)}
        # An append of the same instants in this zone joins the partitions already there.
        zorder.write(spark.createDataFrame(rows[:4], df.schema), path, mode="append")
        assert len(DeltaTable(path).partitions()) == 2
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)
    for zone in ("UTC", LA, "Asia/Tokyo"):
        got = instants(zorder.to_arrow(path, "x < 40", time_zone=zone))
        assert got == {i: moments[i % 2] for i in range(40)}, zone
    found = kernel.sql(f"SELECT x, ts FROM delta_scan('{path}') WHERE x < 40").fetchall()
    assert {x: ts.astimezone(dt.UTC) for x, ts in found} == {i: moments[i % 2] for i in range(40)}


def test_a_scan_planned_in_another_zone_reads_as_the_session_does(
    spark: SparkSession, tmp_path: Path
) -> None:
    # Zone-less partition text (deltalake writes it so), read in a UTC session.
    path = str(tmp_path / "t")
    instants = [dt.datetime(2021, 9, 8, h, tzinfo=dt.UTC) for h in (11, 15)]
    table = pa.table({"ts": pa.array(instants, pa.timestamp("us", tz="UTC")), "x": [1, 2]})
    write_deltalake(path, table, partition_by=["ts"])
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    where = "ts = '2021-09-08 11:00:00'"
    full = [r.asDict() for r in zorder.read(spark, path).where(where).collect()]
    assert [r["x"] for r in full] == [1]
    planned = zorder.scan(path, where, columns=["x"], time_zone="America/New_York")
    # In New York both the text and the literal are New York's wall clock: the same row.
    assert planned.to_arrow().column("x").to_pylist() == [1]
    got = planned.to_spark(spark)  # planned again in the session's zone
    assert got.columns == ["x"]
    assert [r.x for r in got.collect()] == [1]
    # Everything the session reads has the log's instants, not instants moved twice.
    every = zorder.scan(path, time_zone="America/New_York").to_spark(spark)
    assert sorted(r.ts for r in every.collect()) == [i.replace(tzinfo=None) for i in instants]
    # read takes the same course: files chosen in the session's zone, as the rows are.
    again = zorder.read(spark, path, where, time_zone="America/New_York")
    assert [r.asDict() for r in again.collect()] == full


@pytest.mark.parametrize("engine", ["spark", "arrow"])
def test_an_optimize_where_is_read_in_the_handles_zone_by_either_engine(
    spark: SparkSession, path: str, tmp_path: Path, engine: Any
) -> None:
    # 11:30 in Los Angeles is 18:30 UTC: the ISO partition (x=2); in the session's UTC it
    # would be neither. The handle's zone decides, whichever engine runs.
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    copy = tmp_path / "copy"
    shutil.copytree(path, copy)
    handle = zorder.Table(str(copy), spark=spark, time_zone=LA)
    where = "ts = '2021-09-08 11:30:00'"
    metrics = handle.optimize(by=["x"], where=where, full=True, engine=engine)
    assert (metrics.files_removed, metrics.rows) == (1, 1)
    assert sorted(r.x for r in zorder.read(spark, str(copy)).collect()) == [1, 2]
    # The file removed is the ISO partition's: its directory is gone from the log.
    files = DeltaTable(str(copy)).file_uris()
    assert len(files) == 2
    assert not any("/iso/" in f for f in files)
