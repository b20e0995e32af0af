"""Time travel: every read path, by version and by timestamp, against what deltalake holds.

A table with six versions (appends, a delete, an overwrite, a zorder write and the
commit that records its clustering properties)
is read as of each one through ``scan``, ``to_arrow``, ``read`` and
``describe``; each answer must be the rows deltalake's ``DeltaTable(path,
version=k)`` holds, and DuckDB's Delta reader agrees on the newest.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from pyspark.sql import SparkSession

import zorder
from tests.spark.helpers import arrow_rows, delta_rs_rows, kernel_rows, spark_rows

COLUMNS = ["id", "day", "v"]


def versioned_table(spark: SparkSession, path: Path) -> str:
    """Versions 0 create, 1 append, 2 delete, 3 overwrite, 4 zorder append, 5 its properties."""
    uri = str(path)

    def rows(start: int, count: int) -> pa.Table:
        return pa.table(
            {
                "id": pa.array(range(start, start + count), pa.int64()),
                "day": pa.array([f"d{i % 3}" for i in range(count)]),
                "v": pa.array([float(i) for i in range(count)]),
            }
        )

    write_deltalake(uri, rows(0, 30), partition_by=["day"])
    write_deltalake(uri, rows(100, 20), mode="append")
    DeltaTable(uri).delete("id < 10")
    write_deltalake(uri, rows(500, 15), mode="overwrite")
    frame = spark.createDataFrame(rows(900, 40).to_pylist())
    zorder.write(frame, uri, by=["id", "v"], mode="append", num_files=2)
    return uri


def held(uri: str, version: int) -> Counter[tuple[Any, ...]]:
    table = DeltaTable(uri, version=version)
    read = pa.RecordBatchReader.from_stream(table.scan(columns=COLUMNS)).read_all()
    return arrow_rows(read, COLUMNS)


@pytest.fixture(scope="module")
def table(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> str:
    return versioned_table(spark, tmp_path_factory.mktemp("travel") / "t")


def test_every_version_reads_what_deltalake_holds(spark: SparkSession, table: str) -> None:
    assert DeltaTable(table).version() == 5
    for version in range(6):
        expected = held(table, version)
        planned = zorder.scan(table, version=version)
        assert planned.report.version == version
        assert arrow_rows(planned.to_arrow(), COLUMNS) == expected
        assert arrow_rows(zorder.to_arrow(table, version=version), COLUMNS) == expected
        got = zorder.read(spark, table, version=version).select(*COLUMNS)
        assert spark_rows(got) == expected
        assert spark_rows(planned.to_spark(spark).select(*COLUMNS)) == expected
        assert zorder.describe(table, version=version).version == version


def test_a_filter_on_an_old_version_skips_by_its_own_statistics(
    spark: SparkSession, table: str
) -> None:
    where = "id >= 100 AND id < 105"
    for version in (1, 2):
        expected = Counter(r for r in held(table, version).elements() if 100 <= r[0] < 105)
        planned = zorder.scan(table, where, columns=["id", "day", "v"], version=version)
        assert arrow_rows(planned.to_arrow(), COLUMNS) == expected
        assert spark_rows(zorder.read(spark, table, where, version=version)) == expected
        report = zorder.explain(table, where, version=version)
        assert report.version == version
        assert report.files_scanned < report.files_total


def commit_times(path: str) -> dict[int, int]:
    """Each commit's time in ms, as Delta Spark takes it: its commit file's modification time."""
    log = Path(path) / "_delta_log"
    return {int(f.name[:20]): f.stat().st_mtime_ns // 1_000_000 for f in log.glob("*.json")}


def test_a_timestamp_picks_the_newest_version_at_or_before_it(table: str) -> None:
    times = commit_times(table)
    for version in range(6):
        at = dt.datetime.fromtimestamp(times[version] / 1000, dt.UTC)
        assert zorder.scan(table, timestamp=at).report.version == version
        between = at + dt.timedelta(microseconds=500)  # before the next commit's millisecond
        if version < 5 and times[version + 1] > times[version]:
            assert zorder.scan(table, timestamp=between).report.version == version
    text = dt.datetime.fromtimestamp(times[2] / 1000, dt.UTC).isoformat()
    assert zorder.explain(table, timestamp=text).version == 2
    assert arrow_rows(zorder.to_arrow(table, timestamp=text), COLUMNS) == held(table, 2)


def test_a_zone_less_timestamp_is_read_in_the_zone(table: str) -> None:
    times = commit_times(table)
    at = dt.datetime.fromtimestamp(times[3] / 1000, dt.UTC)
    wall = at.astimezone(dt.timezone(dt.timedelta(hours=5))).replace(tzinfo=None)
    assert zorder.scan(table, timestamp=wall, time_zone="+05:00").report.version == 3


def test_versions_the_log_does_not_hold_are_named(table: str, tmp_path: Path) -> None:
    with pytest.raises(zorder.errors.VersionNotFoundError, match="holds versions 0 to 5"):
        zorder.scan(table, version=7)
    newest = max(commit_times(table).values())
    later = dt.datetime.fromtimestamp(newest / 1000 + 60, dt.UTC)
    with pytest.raises(zorder.errors.VersionNotFoundError, match="after the newest commit"):
        zorder.to_arrow(table, timestamp=later)
    with pytest.raises(zorder.errors.VersionNotFoundError, match="before the oldest commit"):
        zorder.describe(table, timestamp="2001-01-01")
    with pytest.raises(zorder.errors.InvalidArgumentError, match="not both"):
        zorder.scan(table, version=1, timestamp="2001-01-01")
    with pytest.raises(zorder.errors.InvalidArgumentError, match="version must be an int"):
        zorder.scan(table, version=-1)
    with pytest.raises(zorder.errors.InvalidArgumentError, match="not ISO-8601"):
        zorder.scan(table, timestamp="yesterday")


def test_the_newest_version_still_agrees_with_other_readers(table: str, kernel: Any) -> None:
    assert arrow_rows(zorder.to_arrow(table), COLUMNS) == delta_rs_rows(table, COLUMNS)
    assert arrow_rows(zorder.to_arrow(table), COLUMNS) == kernel_rows(kernel, table, COLUMNS)
