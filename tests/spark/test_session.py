"""The installed stack works together: Spark on loopback, Arrow, deltalake."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark


def test_session_binds_to_loopback(spark: SparkSession) -> None:
    conf = spark.sparkContext.getConf()
    assert conf.get("spark.driver.bindAddress") == "127.0.0.1"
    assert conf.get("spark.driver.host") == "127.0.0.1"
    assert conf.get("spark.ui.enabled") == "false"
    total = spark.range(1000).selectExpr("sum(id)").first()
    assert total is not None
    assert total[0] == 499500


def test_spark_parquet_files_become_a_delta_table(spark: SparkSession, tmp_path: Path) -> None:
    # The path the clustering issue builds on: Spark writes Parquet, deltalake reads.
    table = pa.table({"x": [3, 1, 2]})
    write_deltalake(str(tmp_path / "t"), table)
    files = DeltaTable(str(tmp_path / "t")).file_uris()
    assert spark.read.parquet(*files).count() == 3
