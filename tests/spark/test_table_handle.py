"""zorder.Table: one handle opens the table once and does every operation on it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import zorder
from tests.conftest import LogReads
from zorder.api.inputs import read_input

pytestmark = pytest.mark.spark


def test_one_handle_writes_reads_describes_and_optimizes(
    spark: SparkSession, tmp_path: Path
) -> None:
    df = spark.range(4_000).select(
        (F.col("id") * 7 % 100).alias("a"), (F.col("id") * 13 % 50).alias("b"), "id"
    )
    table = zorder.Table(str(tmp_path / "t"), spark=spark, create=True)
    zorder.write(df, table, by=["a", "b"], num_files=4)
    commits = table.history()
    assert commits[0].version == table.version
    written = [c for c in commits if c.clustering is not None]
    assert len(written) == 1
    clustering = written[0].clustering
    assert clustering is not None
    assert clustering.spec.columns == ("a", "b")
    planned = table.scan("a = 5")
    expected = df.filter("a = 5").count()
    assert planned.report.files_scanned < 4
    assert planned.to_arrow().num_rows == expected
    assert table.read("a = 5").count() == expected
    assert len(table.stats()) == 4
    described = table.describe()
    assert described.spec is not None
    assert described.spec.columns == ("a", "b")
    metrics = table.optimize(full=True, num_files=2)
    assert metrics.files_added == 2
    assert table.read().count() == 4_000
    assert table.scan("a = 5", version=written[0].version).report.files_total == 4  # time travel
    assert table.vacuum().files == ()  # the four replaced files are within the retention
    assert len(table.vacuum(retain_hours=0, force=True).files) == 4


def test_one_zone_policy_for_the_handle_the_wrappers_and_scans(
    spark: SparkSession, tmp_path: Path
) -> None:
    # Zone-less partition text (deltalake writes it so): 11:00 and 15:00 are other instants
    # in New York than in the UTC session, and the filter names an instant.
    path = str(tmp_path / "t")
    instants = [dt.datetime(2021, 9, 8, h, tzinfo=dt.UTC) for h in (11, 15)]
    rows = pa.table({"ts": pa.array(instants, pa.timestamp("us", tz="UTC")), "x": [1, 2]})
    write_deltalake(path, rows, partition_by=["ts"])
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    where = "ts <= TIMESTAMP'2021-09-08 11:00:00+00:00'"
    # The oracle: every row read, and Spark's own filter on them.
    expected = sorted(r.x for r in zorder.read(spark, path).where(where).collect())
    assert expected == [1]
    new_york = zorder.Table(path, spark=spark, time_zone="America/New_York")
    assert new_york.scan(where).to_arrow().column("x").to_pylist() == []  # 15:00 UTC on
    # Spark filters in its session's zone, so every Spark read plans in it: the handle's,
    # a scan's and the wrapper's, whatever zone they were asked to plan in.
    got = [
        new_york.read(where),
        new_york.scan(where).to_spark(spark),
        new_york.snapshot().scan(where).to_spark(spark),
        zorder.read(spark, path, where, time_zone="America/New_York"),
        zorder.read(spark, path, where),
        zorder.Table(path, spark=spark).read(where),
    ]
    assert [sorted(r.x for r in frame.collect()) for frame in got] == [expected] * len(got)
    # A handle on the session's zone skips the file in the wrapper's way.
    assert zorder.Table(path).scan(where).report == zorder.scan(path, where).report
    assert zorder.Table(path).scan(where).report.files_scanned == 1
    whole = read_input(spark, path, format="delta")  # the handle's read of every row
    assert sorted(r.x for r in whole.collect()) == [1, 2]


def test_optimize_reads_the_log_once_to_plan_and_once_to_check(
    spark: SparkSession, tmp_path: Path, log_reads: LogReads
) -> None:
    path = str(tmp_path / "t")
    df = spark.range(2_000).select((F.col("id") % 97).alias("a"), (F.col("id") % 31).alias("b"))
    zorder.write(df, path, by=["a", "b"], num_files=2)
    write_deltalake(path, pa.table({"a": [5, 6], "b": [7, 8]}), mode="append")  # a blind append
    table = zorder.Table(path, spark=spark)
    opened = log_reads.count
    assert table.version == 2
    assert table.describe().spec is not None
    metrics = table.optimize()
    assert metrics.files_removed >= 1
    # The handle holds the newest version (no commit after it): the optimize plans on it,
    # and reads the log once, in the commit's check of what landed since.
    assert log_reads.count - opened == 1, log_reads.calls
    assert table.version == metrics.version == 3  # the version it made, read when asked
    assert table.read().count() == 2_002
    assert table.scan("a = 5").to_arrow().num_rows == 2_000 // 97 + 1 + 1
    # The path-first optimize opens no handle of its own first: plan and check, once each.
    write_deltalake(path, pa.table({"a": [1], "b": [2]}), mode="append")
    before = log_reads.count
    assert zorder.optimize(spark, path).files_removed >= 1
    assert log_reads.count - before == 2, log_reads.calls


def test_a_write_through_the_handle_moves_it_to_the_version_written(
    spark: SparkSession, tmp_path: Path
) -> None:
    with pytest.raises(zorder.errors.TableNotFoundError, match="no such path"):
        zorder.Table(str(tmp_path / "t"), spark=spark)  # nothing there yet
    table = zorder.Table(str(tmp_path / "t"), spark=spark, create=True)
    with pytest.raises(zorder.errors.TableNotFoundError):
        _ = table.version
    df = spark.range(100).select(F.col("id").alias("a"))
    assert table.write(df, by=["a"], num_files=1).data_version == 0
    first = table.version
    table.write(df, mode="append")
    assert table.version > first
    assert table.scan().to_arrow().num_rows == 200
    with pytest.raises(zorder.errors.InvalidArgumentError, match="carries its own"):
        zorder.write(df, table, mode="append", storage_options={"x": "y"})


def test_a_handle_runs_spark_in_the_session_given_else_started_else_active(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"x": [1, 2, 3]}))
    # Given none: the settings are the active session's, and Spark work runs in the session
    # active when it runs (the handle holds none of its own).
    opened = zorder.Table(path)
    assert opened.spark is None
    assert opened.time_zone == spark.conf.get("spark.sql.session.timeZone")
    assert opened.read("x > 1").count() == 2
    assert opened.spark is None
    # A function given is called when Spark first runs, once, even with a session active.
    calls: list[int] = []

    def start() -> SparkSession:
        calls.append(1)
        return spark

    lazy = zorder.Table(path, spark=start)
    assert lazy.scan("x > 1").to_arrow().num_rows == 2
    assert calls == []
    assert lazy.read("x > 1").count() == 2
    assert lazy.read("x > 2").count() == 1
    assert calls == [1]
    assert lazy.spark is spark
