"""Other Delta readers prune files with our statistics and still get every matching row."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.dataset as ds
import pytest
from deltalake import DeltaTable
from pyspark.sql import SparkSession

import zorder
from tests.spark.helpers import PREFIX, all_types_frame

pytestmark = pytest.mark.spark


def test_delta_rs_dataset_pruning_agrees_with_a_full_filter(
    spark: SparkSession, tmp_path: Path
) -> None:
    df = all_types_frame(spark, 800, seed=3)
    path = str(tmp_path / "t")
    zorder.write(df, path, by=["i32", "s", "ts", "d"], num_files=8)
    table = DeltaTable(path)
    full = table.to_pyarrow_table()
    dataset = table.to_pyarrow_dataset()
    ts_mid = dt.datetime(1990, 6, 1, 12, 0, 0, 123456, tzinfo=dt.UTC)
    predicates = [
        ds.field("i32") > 0,
        ds.field("i32") == full.column("i32").drop_null()[5].as_py(),
        ds.field("s") >= PREFIX + "5",
        ds.field("s") < "a",
        ds.field("ts") <= ts_mid,
        ds.field("ts") > ts_mid,
        ds.field("d") == full.column("d").drop_null()[3].as_py(),
        ds.field("d") < dt.date(1000, 1, 1),
    ]
    pruned_somewhere = False
    for predicate in predicates:
        expected = full.filter(predicate).num_rows
        assert dataset.to_table(filter=predicate).num_rows == expected, predicate
        fragments = list(dataset.get_fragments(filter=predicate))
        pruned_somewhere |= len(fragments) < len(list(dataset.get_fragments()))
    assert pruned_somewhere  # the statistics were really used
    assert pc.sum(pc.is_null(full.column("s"))).as_py() > 0
