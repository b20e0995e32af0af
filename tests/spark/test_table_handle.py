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
from zorder.api.inputs import read_input

pytestmark = pytest.mark.spark


def test_one_handle_writes_reads_describes_and_optimizes(
    spark: SparkSession, tmp_path: Path
) -> None:
    df = spark.range(4_000).select(
        (F.col("id") * 7 % 100).alias("a"), (F.col("id") * 13 % 50).alias("b"), "id"
    )
    table = zorder.Table(str(tmp_path / "t"), spark=spark)
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
