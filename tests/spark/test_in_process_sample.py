"""An optimize's sample drawn in process: what Spark would sample, and used where it should be.

The optimizes here run in Spark (``engine="spark"``): it is the Spark engine's layout that
is handed the sample drawn in process. The in-process engine fits on the same sample
(test_in_process_engine compares the two engines' files).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import zorder
import zorder.arrow.sample as sample_module
import zorder.spark.engine as in_spark
from tests.spark.helpers import all_types_frame, kernel_rows, row_multiset
from tests.spark.test_partitioned_optimize import DAYS, appended_by_delta_rs, contents
from zorder.arrow.sample import sample_files
from zorder.spark.compat import collect_arrow
from zorder.spark.keys import comparable, resolve_clustering_columns
from zorder.spark.layout import cluster as layout_cluster
from zorder.spark.partitions import cluster_partitions as partitions_cluster
from zorder.table import Storage, load_snapshot

pytestmark = pytest.mark.spark

DATA = Path(__file__).resolve().parents[1] / "data"


def long_values(spark: SparkSession) -> DataFrame:
    """Strings and binaries longer than rank buckets look at, cut inside a multibyte
    character's neighbourhood."""
    rows = [("é" * 255 + "中" * 10, b"\x00" * 300), ("😀" * 300, b"\xff" * 256), ("a" * 257, b"")]
    return spark.createDataFrame(rows, "s string, bin binary")


def every_type(spark: SparkSession, path: str) -> list[str]:
    frame = all_types_frame(spark, 300)
    extra = long_values(spark)
    frame = frame.unionByName(extra, allowMissingColumns=True)
    zorder.write(frame, path, by=["i32", "s"], num_files=3)
    return list(frame.columns)


CASES: dict[str, tuple[str, ...]] = {
    "table_with_column_mapping": ("Super Name",),
    "table_with_partitioning_mapping": ("description",),
    "table-with-dv-small": ("value",),
    "table_with_deletion_logs": ("id", "age", "name"),
    "table_with_edge_timestamps": ("BIG_DATE", "NORMAL_DATE", "SOME_VALUE"),
    "checkpoint-v2-table": ("id", "name", "created_at"),
}


def assert_sampled_as_spark_reads(spark: SparkSession, path: str, names: list[str]) -> None:
    """Every row drawn in process (a sample larger than the table) is the row Spark's
    sample would hold: the same Arrow types, the same values, cut alike."""
    read = zorder.read(spark, path)
    columns = resolve_clustering_columns(read, names)
    expected = collect_arrow(read.select(*[comparable(c) for c in columns]))
    snapshot = load_snapshot(Storage.of(path))
    (drawn,) = sample_files(snapshot, [snapshot.files], names, [10**9], seed=0)
    assert drawn.schema == expected.schema
    assert drawn.num_rows == expected.num_rows
    assert row_multiset(zip(*drawn.to_pydict().values(), strict=True)) == row_multiset(
        zip(*expected.to_pydict().values(), strict=True)
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_table_others_wrote_is_sampled_as_spark_samples_it(
    spark: SparkSession, name: str
) -> None:
    assert_sampled_as_spark_reads(spark, str(DATA / name), list(CASES[name]))


def test_every_clustering_type_is_sampled_as_spark_samples_it(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    assert_sampled_as_spark_reads(spark, path, every_type(spark, path))


def samples_given(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each layout of an optimize from here on was handed a drawn sample."""
    given: list[bool] = []
    real_cluster, real_partitions = layout_cluster, partitions_cluster

    def cluster(*args: Any, **kwargs: Any) -> Any:
        given.append(kwargs.get("sample") is not None)
        return real_cluster(*args, **kwargs)

    def cluster_partitions(*args: Any, **kwargs: Any) -> Any:
        given.append(kwargs.get("sample") is not None)
        return real_partitions(*args, **kwargs)

    monkeypatch.setattr(in_spark, "cluster", cluster)
    monkeypatch.setattr(in_spark, "cluster_partitions", cluster_partitions)
    return given


@pytest.mark.parametrize("where", [None, "day >= '2026-11-03'"])
def test_a_small_optimize_is_sampled_in_process_and_a_large_one_by_spark(
    spark: SparkSession,
    kernel: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    where: str | None,
) -> None:
    given = samples_given(monkeypatch)
    layouts: dict[str, Counter[str]] = {}
    for arm in ("here", "spark"):
        path = str(tmp_path / arm)
        appended_by_delta_rs(path)
        before = contents(path)
        if arm == "spark":
            monkeypatch.setattr(sample_module, "IN_PROCESS_SAMPLE_ROWS", 0)
        metrics = zorder.optimize(
            spark, path, by=["a", "b"], where=where, num_files=8, engine="spark"
        )
        assert contents(path) == before  # no row lost or doubled (delta-rs reads it)
        assert kernel_rows(kernel, path, ["a", "b", "day"]) == before  # nor DuckDB's kernel
        chosen = DAYS if where is None else DAYS[2:]
        assert metrics.rows == sum(n for row, n in before.items() if row[2] in chosen)
        added = DeltaTable(path).get_add_actions(flatten=True)
        layouts[arm] = Counter(added.column("partition.day").to_pylist())
        for day in chosen:  # clustered: a lookup inside the day reads half its files
            lookup = zorder.explain(path, f"day = '{day}' AND a = 17")
            assert lookup.files_scanned <= 2
    assert given == [True, False]
    assert layouts["here"] == layouts["spark"]  # the same files in each day
    assert sum(layouts["here"][d] for d in chosen) == 8


def test_unpartitioned_optimize_is_sampled_in_process(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    given = samples_given(monkeypatch)
    path = str(tmp_path / "t")
    rows = collect_arrow(spark.range(3000).select((F.col("id") * 7919 % 1000).alias("a"), "id"))
    for start in range(0, 3000, 1000):
        write_deltalake(path, rows.slice(start, 1000), mode="append")
    metrics = zorder.optimize(spark, path, by=["a", "id"], num_files=6, engine="spark")
    assert given == [True]
    assert metrics.files_added == 6
    assert sorted(r.id for r in zorder.read(spark, path).select("id").collect()) == list(
        range(3000)
    )
    assert zorder.explain(path, "a = 17").files_scanned <= 3  # about 6 ** (1 - 1/2) files
    with pytest.raises(zorder.errors.InvalidArgumentError, match="sample_size must be >= 1"):
        zorder.optimize(spark, path, by=["id", "a"], num_files=6, sample_size=-1)


def test_a_failed_read_in_process_leaves_the_sample_to_spark(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    given = samples_given(monkeypatch)

    def unreadable(*args: Any, **kwargs: Any) -> pa.Table:
        raise OSError("storage said no")

    monkeypatch.setattr(sample_module, "read_file", unreadable)
    path = str(tmp_path / "t")
    appended_by_delta_rs(path)
    before = contents(path)
    zorder.optimize(spark, path, by=["a", "b"], num_files=8, engine="spark")
    assert given == [False]
    assert contents(path) == before
