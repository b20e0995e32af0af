"""zorder.Table: one handle opens the table once and does every operation on it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import zorder

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
    assert written[0].clustering.spec.columns == ("a", "b")  # type: ignore[union-attr]
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
