"""``restore`` after zorder's own Spark writes: an optimize that changed the spec, undone.

Restore itself starts no JVM (``tests/api/test_restore.py`` covers it on tables
deltalake and Delta Spark wrote); here Spark writes and optimizes the table,
and reads it back after the restore.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import zorder
from tests.spark.helpers import kernel_rows, spark_rows
from zorder.curves.kinds import ClusteringSpec

pytestmark = pytest.mark.spark

COLUMNS = ["id", "a", "b"]


def test_restore_undoes_an_optimize_that_changed_the_spec(
    spark: SparkSession, tmp_path: Path, kernel: duckdb.DuckDBPyConnection
) -> None:
    path = str(tmp_path / "t")
    rows = spark.range(300).select(
        "id", (F.col("id") % 7).alias("a"), (F.col("id") % 11).alias("b")
    )
    zorder.write(rows.where("id < 200"), path, by=["a", "b"], num_files=2)
    zorder.write(rows.where("id >= 200"), path, mode="append")  # clustered on write by a, b
    table = zorder.Table(path, spark=spark)
    before, version = table.describe(), table.version
    held = spark_rows(table.read())
    assert before.spec == ClusteringSpec(("a", "b"), "zorder", "rank")

    optimized = table.optimize(by=["b"], curve="hilbert", num_files=1)
    assert table.describe().spec == ClusteringSpec(("b",), "hilbert", "rank")
    assert optimized.files_added == 1

    restored = table.restore(version=version)
    assert (restored.restored_version, restored.version) == (version, table.version)
    assert (restored.files_added, restored.files_removed) == (len(before.files), 1)
    after = table.describe()
    assert after.spec == before.spec
    assert after.target_file_size == before.target_file_size
    assert after.runs == before.runs  # the runs are the runs of the spec again
    assert after.unclustered == before.unclustered == ()
    assert spark_rows(table.read()) == held
    assert kernel_rows(kernel, path, COLUMNS) == held
    # As it was: an optimize of what the spec already clusters rewrites nothing.
    assert table.optimize(full=False).files_added == 0
