"""zorder.write and zorder.optimize on a real local Spark, real Parquet, a real Delta log."""

from __future__ import annotations

import itertools
import json
import math
import shutil
import warnings
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet
import pytest
from deltalake import DeltaTable, write_deltalake
from deltalake.transaction import AddAction
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import zorder
import zorder.arrow.sample
import zorder.plan.runs as runs_module
import zorder.spark.engine as in_spark
from tests.spark.helpers import (
    all_types_frame,
    assert_stats_bound_files,
    delta_rows,
    logged_stats,
    needs_arrow_udf,
    spark_rows,
)
from zorder.curves import ClusteringSpec, Curve, KeyMethod
from zorder.errors import InvalidArgumentError
from zorder.plan.modes import Engine
from zorder.spark.compat import collect_arrow
from zorder.spark.keys import plan_key, sample_columns
from zorder.spark.layout import plan_clustering
from zorder.spark.scan import read_files
from zorder.table import Storage, WrittenFile, latest_clustering
from zorder.table.runs import describe_written_files, remove_writer_markers

pytestmark = pytest.mark.spark

CLUSTERABLE = [
    "b",
    "i8",
    "i16",
    "i32",
    "i64",
    "f32",
    "f64",
    "dec",
    "wide",
    "d",
    "ts",
    "ntz",
    "s",
    "bin",
]


@pytest.fixture(scope="module")
def mixed(spark: SparkSession) -> DataFrame:
    return all_types_frame(spark, 600).cache()


@pytest.mark.parametrize(
    ("curve", "method", "by"),
    [
        ("zorder", "rank", ["i32", "s", "ts"]),
        ("hilbert", "rank", ["f64", "dec", "d", "bin"]),
        pytest.param("zorder", "direct", ["i64", "f32", "ntz", "s"], marks=needs_arrow_udf),
        pytest.param("hilbert", "direct", ["wide", "b", "i8"], marks=needs_arrow_udf),
        ("linear", "rank", ["s", "i16"]),
        ("zorder", "rank", ["f64"]),
    ],
)
def test_write_keeps_every_row_and_stats_bound_data(
    spark: SparkSession,
    mixed: DataFrame,
    tmp_path: Path,
    curve: Curve,
    method: KeyMethod,
    by: list[str],
) -> None:
    path = tmp_path / "t"
    metrics = zorder.write(mixed, str(path), by=by, curve=curve, method=method, num_files=5)
    assert metrics.rows == 600
    assert metrics.files_added == len(logged_stats(path)) <= 5
    assert metrics.data_version == 0  # the rows (and properties, if any, after them)
    assert metrics.version == DeltaTable(str(path)).version()
    expected = spark_rows(mixed)
    assert delta_rows(path, mixed.columns) == expected
    assert assert_stats_bound_files(path) == metrics.files_added
    # Spark reading the files back agrees too.
    snapshot = zorder.table.load_snapshot(Storage.of(path))
    assert spark_rows(read_files(snapshot, spark, None)) == expected


@needs_arrow_udf  # the keys are computed again by the Arrow UDF
def test_each_file_is_a_task_of_its_own_sorted_along_the_curve(
    spark: SparkSession, tmp_path: Path
) -> None:
    """An unpartitioned run: one task a file, numbered as the file, so every file lies in
    the run's directory under a name of its own; each file in key order: its rows'
    Z-order keys never decrease."""
    frame = spark.range(20_000).select(
        (F.col("id") * 7919 % 5000).alias("a"), (F.col("id") * 104729 % 3000).alias("b")
    )
    path = tmp_path / "t"
    metrics = zorder.write(frame, str(path), by=["a", "b"], num_files=12)
    files = sorted(path.glob("zorder-*/*.parquet"))
    assert metrics.files_added == len(files) == len(list(path.rglob("*.parquet"))) == 12
    tasks = sorted(int(f.name.split("-")[1]) for f in files)
    assert tasks == list(range(12))  # more tasks than the shuffle's width: one a file
    assert len({f.name for f in files}) == 12
    assert delta_rows(path, ["a", "b"]) == spark_rows(frame)
    # The key the run computed, again: the sample is every row, so the same buckets.
    plan = plan_clustering(frame, ["a", "b"])
    fitted = plan.fit(sample_columns(frame, plan.columns), count=12)
    key = plan_key(plan.columns, fitted)
    shift = fitted.packing.cell_shift
    for data_file in files:
        read = spark.read.parquet(str(data_file)).coalesce(1)
        ordered = read.select(F.monotonically_increasing_id().alias("i"), key.alias("k"))
        keys = [r["k"] for r in ordered.orderBy("i").collect()]
        assert keys == sorted(keys), data_file.name
        # The file's cell is its task's number: the task named the file after it.
        assert {k >> shift for k in keys} == {int(data_file.name.split("-")[1])}


def test_optimize_rewrites_in_one_commit_and_keeps_rows(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    data = spark.range(3000).select(
        (F.col("id") * 7919 % 1000).alias("x"), (F.col("id") * 104729 % 997).alias("y"), "id"
    )
    arrow = collect_arrow(data)
    for start in range(0, 3000, 500):  # six files from another writer (delta-rs)
        write_deltalake(path, arrow.slice(start, 500), mode="append")
    before = DeltaTable(path)
    old_files = set(before.file_uris())
    assert len(old_files) == 6
    metrics = zorder.optimize(
        spark, path, by=["x", "y"], curve="hilbert", num_files=4, set_target_size=True
    )
    after = DeltaTable(path)
    assert metrics.data_version == before.version() + 1 == 6
    # Then the spec and file size go into the table's properties, in a commit of their own.
    assert metrics.version == after.version() == 7
    assert after.history(1)[0]["operation"] == "SET TBLPROPERTIES"
    assert metrics.files_removed == 6
    assert metrics.files_added == 4
    assert not old_files & set(after.file_uris())
    assert delta_rows(path, ["x", "y", "id"]) == spark_rows(data)
    assert assert_stats_bound_files(path) == 4
    last = after.history(2)[1]
    assert json.loads(last["zorder"])["by"] == ["x", "y"]
    # What delta-rs's history() (and DESCRIBE HISTORY) shows of it, whichever engine ran.
    assert last["operationParameters"]["zOrderBy"] == '["x","y"]'
    assert last["operationParameters"]["predicate"] == "[]"
    assert json.loads(last["userMetadata"]) == {
        "zorder": "optimize",
        "zOrderBy": ["x", "y"],
        "curve": "hilbert",
        "numRemovedFiles": 6,
        "numRemovedBytes": metrics.bytes_removed,
        "numAddedFiles": 4,
        "numAddedBytes": metrics.bytes_added,
        "numOutputRows": 3000,
        "runId": metrics.run_id,
    }
    assert metrics.bytes_removed == sum(before.get_add_actions().column("size_bytes").to_pylist())
    # Run again with the same spec and size: one commit, the data's.
    again = zorder.optimize(spark, path, full=True, engine="spark")
    assert again.engine == "spark"
    assert again.version == again.data_version == 8
    assert DeltaTable(path).history(1)[0]["operation"] == "WRITE"
    assert json.loads(DeltaTable(path).history(1)[0]["userMetadata"])["numRemovedFiles"] == 4
    log = (Path(path) / "_delta_log" / f"{metrics.data_version:020d}.json").read_text()
    actions = [json.loads(line) for line in log.splitlines()]
    adds = [a["add"] for a in actions if "add" in a]
    removes = [a["remove"] for a in actions if "remove" in a]
    assert len(adds) == 4
    assert len(removes) == 6
    assert not any(a["dataChange"] for a in adds)
    assert not any(r["dataChange"] for r in removes)


def test_optimize_takes_the_row_count_from_the_log_when_every_file_has_one(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    arrow = collect_arrow(spark.range(1200).select((F.col("id") * 7919 % 1000).alias("x"), "id"))
    small, path = str(tmp_path / "small"), str(tmp_path / "t")
    for table in (small, path):
        write_deltalake(table, arrow.slice(0, 700))
        write_deltalake(table, arrow.slice(700), mode="append")
    assert zorder.table.load_snapshot(Storage.of(path)).counted_rows == 1200
    counts_given: list[int | None] = []
    real_sample = sample_columns

    def spy(*args: Any, **kwargs: Any) -> pa.Table:
        counts_given.append(kwargs.get("rows"))
        return real_sample(*args, **kwargs)

    monkeypatch.setattr(zorder.spark.layout, "sample_columns", spy)
    # The Spark engine's jobs are counted: each optimize here runs in Spark.
    zorder.optimize(spark, small, by=["x", "id"], num_files=3, sample_size=500, engine="spark")
    assert counts_given == []  # a rewrite this small is sampled in process: no Spark job
    assert DeltaTable(small).to_pyarrow_table().num_rows == 1200
    monkeypatch.setattr(zorder.arrow.sample, "IN_PROCESS_SAMPLE_ROWS", 0)  # Spark samples
    zorder.optimize(spark, path, by=["x", "id"], num_files=3, sample_size=500, engine="spark")
    assert counts_given == [1200]  # no count job: the sample fraction came from the log

    # A file whose add action carries no statistics leaves the count to Spark.
    data_file = next((Path(path)).glob("zorder-*/**/*.parquet"))
    copy = Path(path) / "copy.parquet"
    copy.write_bytes(data_file.read_bytes())
    relative = copy.relative_to(path).as_posix()
    # deltalake annotates stats as str; None is how it writes an add action without any.
    no_stats = AddAction(relative, copy.stat().st_size, {}, 0, True, None)  # type: ignore[arg-type]
    DeltaTable(path).create_write_transaction(
        [no_stats],
        mode="append",
        schema=DeltaTable(path).schema(),
    )
    assert zorder.table.load_snapshot(Storage.of(path)).counted_rows is None
    rows_in_copy = pa.parquet.read_table(copy).num_rows
    zorder.optimize(spark, path, by=["x", "id"], num_files=3, sample_size=500, engine="spark")
    assert counts_given[1:] == [None]
    assert sum(delta_rows(path, ["x", "id"]).values()) == 1200 + rows_in_copy


def test_the_default_sample_grows_with_the_file_count(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sizes_given: list[int] = []
    real_sample = sample_columns

    def spy(*args: Any, **kwargs: Any) -> pa.Table:
        sizes_given.append(kwargs["sample_size"])
        return real_sample(*args, **kwargs)

    monkeypatch.setattr(zorder.spark.layout, "sample_columns", spy)
    df = spark.range(2000).select((F.col("id") * 7919 % 1000).alias("x"), "id")
    zorder.write(df, str(tmp_path / "few"), by=["x", "id"], num_files=4)
    zorder.write(df, str(tmp_path / "many"), by=["x", "id"], num_files=250)
    zorder.write(df, str(tmp_path / "fixed"), by=["x", "id"], num_files=250, sample_size=700)
    assert sizes_given == [20_000, 250_000, 700]
    assert sum(delta_rows(str(tmp_path / "many"), ["x", "id"]).values()) == 2000


def test_a_sample_size_below_one_is_refused_before_anything_is_written(
    spark: SparkSession, tmp_path: Path
) -> None:
    df = spark.range(10).select("id")
    for by in (["id"], ["id", "id2"]):
        frame = df.withColumn("id2", F.col("id") * 2)
        with pytest.raises(ValueError, match=r"sample_size must be >= 1.*got 0"):
            zorder.write(frame, str(tmp_path / "t"), by=by, sample_size=0)
    assert not (tmp_path / "t").exists()


def test_seed_example_gives_compact_boxes(spark: SparkSession, tmp_path: Path) -> None:
    # c1 = x, c2 = 99 - x, c3 = (x + 50) % 100: the points lie on a line (with a fold
    # in c3), so 4 files should each hold a short stretch of it.
    df = spark.range(100).select(
        F.col("id").cast("int").alias("c1"),
        (99 - F.col("id")).cast("int").alias("c2"),
        ((F.col("id") + 50) % 100).cast("int").alias("c3"),
    )
    path = tmp_path / "seed"
    zorder.write(df, str(path), by=["c1", "c2", "c3"], num_files=4)
    stats = list(logged_stats(path).values())
    assert len(stats) == 4
    assert sum(s["numRecords"] for s in stats) == 100
    for s in stats:
        # A quarter of the line: 25 consecutive values in every column (the
        # fold of c3 falls on a file boundary).
        for column in ("c1", "c2", "c3"):
            assert s["maxValues"][column] - s["minValues"][column] <= 24
    c1_ranges = sorted((s["minValues"]["c1"], s["maxValues"]["c1"]) for s in stats)
    assert all(a[1] < b[0] for a, b in itertools.pairwise(c1_ranges))


def test_zorder_files_are_boxes_separated_on_some_column(
    spark: SparkSession, tmp_path: Path
) -> None:
    # Z-order files are the cells of one cut of the rank space: any two files
    # lie on either side of a cut in some column, so their boxes never overlap
    # (equal values are never split, so the ranges do not even touch).
    df = spark.range(6_000).select(
        (F.col("id") * 7919 % 6000).cast("int").alias("a"),
        (F.col("id") * 104729 % 6007).cast("int").alias("b"),
        (F.col("id") % 13).cast("int").alias("c"),
    )
    path = tmp_path / "boxes"
    metrics = zorder.write(df, str(path), by=["a", "b", "c"], num_files=30)
    stats = list(logged_stats(path).values())
    assert metrics.files_added == len(stats) == 30
    assert sum(s["numRecords"] for s in stats) == 6_000
    assert max(s["numRecords"] for s in stats) <= 2 * 6_000 / 30
    for one, other in itertools.combinations(stats, 2):
        assert any(
            one["maxValues"][c] < other["minValues"][c]
            or other["maxValues"][c] < one["minValues"][c]
            for c in ("a", "b", "c")
        ), (one, other)


def test_modes_append_overwrite_error(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    df = spark.range(100).select((F.col("id") % 10).alias("a"), "id")
    zorder.write(df, path, by=["a", "id"], num_files=2)
    # Version 0 holds the rows, its spec recorded at 1: describe reads it from the commit.
    first = zorder.describe(path, version=0)
    assert first.spec is not None
    assert first.spec.columns == ("a", "id")
    assert first.unclustered_fraction == 0
    with pytest.raises(FileExistsError, match="already exists"):
        zorder.write(df, path, by=["a"], num_files=2)
    zorder.write(df, path, by=["a", "id"], num_files=3, mode="append")
    assert DeltaTable(path).to_pyarrow_table().num_rows == 200
    replaced = DeltaTable(path).get_add_actions(flatten=True)
    metrics = zorder.write(df, path, by=["id"], num_files=2, mode="overwrite")
    # v0 the rows, v1 their properties, v2 the append, v3 the overwrite, v4 its new spec
    assert (metrics.data_version, metrics.version) == (3, 4)
    # what the overwrite's commit removed: the 5 files of both writes
    removes = [a["remove"] for a in commit_actions(path, 3) if "remove" in a]
    assert (metrics.files_removed, metrics.bytes_removed) == (
        len(removes),
        sum(replaced.column("size_bytes").to_pylist()),
    )
    assert len(removes) == replaced.num_rows == 5
    assert json.loads(DeltaTable(path).metadata().configuration["zorder.clustering.columns"]) == [
        "id"
    ]  # an overwrite records its spec, as a create does
    assert DeltaTable(path).to_pyarrow_table().num_rows == 100
    assert len(logged_stats(path)) == 2


def commit_actions(path: str, version: int) -> list[dict[str, Any]]:
    log = Path(path) / "_delta_log" / f"{version:020d}.json"
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def test_append_schema_mismatch_names_columns(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    zorder.write(spark.range(10).select("id", F.lit("x").alias("s")), path, by=["id"], num_files=1)
    version = DeltaTable(path).version()
    other = spark.range(10).select(F.col("id").cast("string").alias("id"), F.lit(1).alias("n"))
    with pytest.raises(
        ValueError, match=r"'id' is bigint in the table but string in the data.*'s'"
    ):
        zorder.write(other, path, by=["id"], mode="append", num_files=1)
    assert DeltaTable(path).version() == version


def test_bad_input_is_refused_before_anything_is_written(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = tmp_path / "t"
    df = spark.range(10).select(
        "id",
        F.array("id").alias("arr"),
        F.create_map(F.lit("k"), "id").alias("m"),
        F.struct("id").alias("st"),
        F.col("id").alias("src_ip"),
    )
    cases = [
        (
            {"by": ["src_ipp"]},
            r"unknown clustering column 'src_ipp'; table columns: id, arr, m, st, src_ip",
        ),
        ({"by": []}, "no clustering columns given"),
        ({"by": ["id", "ID"]}, "listed twice"),
        ({"by": ["arr"]}, r"'arr' has type array<bigint>.*accepted types: boolean"),
        ({"by": ["m", "id"]}, r"'m' has type map<string,bigint>"),
        ({"by": ["st", "id"]}, r"'st' has type struct<id:bigint>"),
        (
            {"by": ["id"], "curve": "peano"},
            "unknown curve 'peano'; accepted: zorder, hilbert, linear",
        ),
        ({"by": ["id"], "method": "fast"}, "unknown key method 'fast'"),
        ({"by": ["id"], "mode": "merge"}, "unknown mode 'merge'"),
        ({"by": ["id"], "num_files": 0}, "num_files must be a positive int"),
        ({"by": ["id"], "target_file_size": "lots"}, "invalid size 'lots'"),
        ({"by": ["id"], "num_files": 2, "target_file_size": "1MB"}, "not both"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            zorder.write(df, str(path), **kwargs)  # type: ignore[arg-type]
        assert not path.exists(), kwargs
    with pytest.raises(zorder.errors.NotADeltaTableError, match="not a Delta table"):
        zorder.optimize(spark, str(tmp_path / "nothing"), by=["id"])


def test_case_insensitive_columns_and_odd_names(spark: SparkSession, tmp_path: Path) -> None:
    df = spark.range(50).select(F.col("id").alias("Src IP.v4"), (F.col("id") % 7).alias("ünï"))
    path = tmp_path / "t"
    metrics = zorder.write(df, str(path), by=["src ip.V4", "ÜNÏ"], num_files=3)
    assert metrics.by == ("Src IP.v4", "ünï")
    assert delta_rows(path, df.columns) == spark_rows(df)
    assert_stats_bound_files(path)


def test_a_backquote_in_a_column_name(spark: SparkSession, tmp_path: Path) -> None:
    """Spark quotes a backquote in a name by doubling it; zorder's column references too."""
    df = spark.range(40).select(F.col("id").alias("a`b"), (F.col("id") % 3).alias("p`q"))
    path = tmp_path / "t"
    zorder.write(df, str(path), by=["a`b", "p`q"], num_files=2)
    zorder.optimize(spark, str(path), by=["p`q", "a`b"], num_files=3, full=True)
    assert delta_rows(path, df.columns) == spark_rows(df)
    kept = zorder.read(spark, str(path), "`a``b` < 10 AND `p``q` = 1").collect()
    assert sorted(row[0] for row in kept) == [1, 4, 7]
    parted = tmp_path / "parted"
    zorder.write(df, str(parted), by=["a`b"], partition_by=["p`q"], num_files=2)
    assert delta_rows(parted, df.columns) == spark_rows(df)
    assert DeltaTable(str(parted)).metadata().partition_columns == ["p`q"]


@pytest.mark.parametrize(
    ("curve", "method"),
    [
        ("zorder", "rank"),
        ("hilbert", "rank"),
        pytest.param("zorder", "direct", marks=needs_arrow_udf),
    ],
)
def test_empty_dataframe_makes_an_empty_table(
    spark: SparkSession, tmp_path: Path, curve: Curve, method: KeyMethod
) -> None:
    df = spark.createDataFrame([], "a int, b string")
    path = str(tmp_path / "t")
    metrics = zorder.write(df, path, by=["a", "b"], num_files=4, curve=curve, method=method)
    assert metrics.files_added == 0
    table = DeltaTable(path)
    assert table.to_pyarrow_table().num_rows == 0
    assert [f.name for f in table.schema().fields] == ["a", "b"]


def test_failure_before_commit_leaves_table_unchanged(spark: SparkSession, tmp_path: Path) -> None:
    path = tmp_path / "t"
    good = spark.range(100).select((F.col("id") % 10).alias("a"), "id")
    zorder.write(good, str(path), by=["a", "id"], num_files=2)
    version = DeltaTable(str(path)).version()
    entries_before = sorted(p.name for p in path.iterdir())
    bad = good.withColumn(
        "a", F.when(F.col("id") == 77, F.raise_error("boom")).otherwise(F.col("a"))
    )
    with pytest.raises(Exception, match="boom"):
        zorder.write(bad, str(path), by=["a", "id"], num_files=2, mode="append")
    assert DeltaTable(str(path)).version() == version
    assert sorted(p.name for p in path.iterdir()) == entries_before  # run directory removed
    assert delta_rows(path, ["a", "id"]) == spark_rows(good)


def test_num_files_and_target_file_size(spark: SparkSession, tmp_path: Path) -> None:
    df = spark.range(20_000).select("id", (F.col("id") * 31 % 1009).alias("v"))
    exact = zorder.write(df, str(tmp_path / "a"), by=["id", "v"], num_files=7)
    assert exact.files_added == 7
    few_rows = df.limit(30)
    many = zorder.write(few_rows, str(tmp_path / "b"), by=["id", "v"], num_files=64)
    assert many.files_added <= 30
    assert many.rows == 30
    sized = zorder.write(df, str(tmp_path / "c"), by=["id", "v"], target_file_size="64KB")
    assert sized.num_files_target > 1
    assert sized.files_added == sized.num_files_target


def test_many_columns_warn(spark: SparkSession, tmp_path: Path) -> None:
    df = spark.range(200).select(*[(F.col("id") * (i + 3) % 17).alias(f"c{i}") for i in range(9)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        metrics = zorder.write(df, str(tmp_path / "t"), by=df.columns, num_files=3)
    assert any("9 columns" in str(w.message) for w in caught)
    assert metrics.rows == 200


def test_nan_in_a_file_leaves_its_double_bounds_out(spark: SparkSession, tmp_path: Path) -> None:
    df = spark.createDataFrame(
        [(1.0, 1), (math.nan, 2), (2.0, 3), (math.inf, 4)], "x double, k int"
    ).coalesce(1)
    path = tmp_path / "t"
    zorder.write(df, str(path), by=["k"], num_files=1)
    (stats,) = logged_stats(path).values()
    assert "x" not in stats["minValues"]
    assert "x" not in stats["maxValues"]
    assert stats["minValues"]["k"] == 1


def test_statistics_columns_follow_table_properties(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    base = spark.range(40).select(*[(F.col("id") + i).alias(f"c{i}") for i in range(40)])
    zorder.write(base, path, by=["c0", "c1"], num_files=2)
    stats = next(iter(logged_stats(path).values()))
    assert sorted(stats["minValues"], key=lambda n: int(n[1:])) == [f"c{i}" for i in range(32)]
    write_deltalake(
        str(tmp_path / "p"),
        pa.table({"a": [1], "b": [2]}),
        configuration={"delta.dataSkippingStatsColumns": "b"},
    )
    extra = spark.createDataFrame([(3, 4)], "a bigint, b bigint")
    zorder.write(extra, str(tmp_path / "p"), by=["a"], mode="append", num_files=1)
    newest = [s for p, s in logged_stats(tmp_path / "p").items() if p.startswith("zorder-")]
    assert newest[0]["minValues"] == {"b": 4}


def test_clustering_is_recorded_in_the_commit(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    metrics = zorder.write(spark.range(10).select("id"), path, by=["id"], num_files=1)
    recorded = latest_clustering(Storage.of(path))
    assert recorded is not None
    assert recorded.run.id == metrics.run_id
    assert recorded.spec == ClusteringSpec(("id",), "zorder", "rank")
    assert recorded.run.fingerprint == recorded.spec.fingerprint
    assert all(p.startswith(f"{recorded.run.directory}/") for p in logged_stats(path))
    # The run's txn action is in the log: what reads trust about its files.
    table = DeltaTable(path)
    assert table.transaction_version(recorded.run.transaction_id) == int(
        recorded.spec.fingerprint, 16
    )


def test_an_append_indexes_the_tables_first_columns_whatever_the_frames_order(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    first = pa.table({c: pa.array([1, 2], pa.int64()) for c in ("a", "b", "c")})
    write_deltalake(path, first, configuration={"delta.dataSkippingNumIndexedCols": "1"})
    df = spark.createDataFrame([(i, i, i) for i in range(100)], "c long, b long, a long")
    zorder.write(df, path, by=["b"], mode="append", num_files=2)
    actions = pa.RecordBatchReader.from_stream(DeltaTable(path).get_add_actions(flatten=True))
    for add in actions.read_all().to_pylist():
        indexed = sorted(
            k.removeprefix("min.") for k in add if k.startswith("min.") and add[k] is not None
        )
        assert indexed == ["a"], add


def test_a_run_written_where_zorder_cannot_see_it_is_not_committed(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spark and zorder reaching different stores must not commit a table without the rows."""
    path = tmp_path / "t"
    frame = spark.range(300).select((F.col("id") % 17).alias("a"), "id")
    zorder.write(frame, str(path), by=["a", "id"], num_files=3)
    before = DeltaTable(str(path)).version()
    elsewhere = tmp_path / "elsewhere"
    monkeypatch.setattr(in_spark, "spark_path", lambda _spark, uri: str(elsewhere / Path(uri).name))
    with pytest.raises(zorder.errors.StorageMismatchError, match="reach different stores"):
        zorder.optimize(spark, str(path), full=True, engine="spark")  # Spark writes the files
    assert any(elsewhere.rglob("*.parquet"))  # Spark did write, elsewhere
    assert DeltaTable(str(path)).version() == before
    assert delta_rows(path, ["a", "id"]) == spark_rows(frame)


@pytest.mark.parametrize("engine", ["spark", "arrow"])
def test_an_optimize_whose_files_lost_rows_is_not_committed(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: Engine
) -> None:
    path = tmp_path / "t"
    frame = spark.range(400).select((F.col("id") % 13).alias("a"), "id")
    zorder.write(frame, str(path), by=["a", "id"], num_files=4)
    before = DeltaTable(str(path)).version()

    def one_file_short(*args: Any, **kwargs: Any) -> list[WrittenFile]:
        return describe_written_files(*args, **kwargs)[1:]

    monkeypatch.setattr(runs_module, "describe_written_files", one_file_short)  # both engines'
    with pytest.raises(zorder.errors.InternalError, match="read 400 rows but its files hold"):
        zorder.optimize(spark, str(path), full=True, engine=engine)
    assert DeltaTable(str(path)).version() == before
    assert not list(path.glob("zorder-*/**/*.parquet"))[4:]  # the failed run's files went
    assert delta_rows(path, ["a", "id"]) == spark_rows(frame)


def test_an_optimize_that_only_records_a_spec_reports_its_version(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "empty")
    write_deltalake(path, pa.table({"a": pa.array([], pa.int64())}))
    metrics = zorder.optimize(spark, path, by=["a"])
    assert metrics.files_added == 0
    assert metrics.data_version is None  # no file written
    assert metrics.version == DeltaTable(path).version() == 1  # the spec's commit


def test_a_local_write_leaves_no_checksum_files_to_delete(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hadoop's raw local filesystem writes the run: no ``.crc`` beside each file, which
    zorder would only delete again. (Spark's ``_SUCCESS`` marker stays: in a run of no
    rows it is the one sign that Spark wrote where zorder looks.)"""
    found: list[str] = []
    real = remove_writer_markers

    def listing(storage: Storage, directory: str) -> int:
        found.extend(p.name for p in (tmp_path / "t" / directory).rglob("*") if p.is_file())
        return real(storage, directory)

    monkeypatch.setattr(in_spark, "remove_writer_markers", listing)
    rows = spark.range(4000).select(
        (F.col("id") % 7).alias("a"), "id", (F.col("id") % 2).alias("p")
    )
    zorder.write(rows, str(tmp_path / "t"), by=["a", "id"], num_files=4, partition_by=["p"])
    assert sorted(name.rsplit(".", 1)[-1] for name in found) == ["_SUCCESS"] + ["parquet"] * 4
    assert zorder.read(spark, str(tmp_path / "t")).count() == 4000


def _commit_totals(path: str, version: int) -> tuple[int, int, int, int]:
    """Files and bytes the commit ``version`` adds and removes, from its actions."""
    actions = commit_actions(path, version)
    adds = [a["add"] for a in actions if "add" in a]
    removes = [a["remove"] for a in actions if "remove" in a]
    return (
        len(adds),
        sum(a["size"] for a in adds),
        len(removes),
        sum(r["size"] for r in removes),
    )


def test_every_operation_reports_what_its_commit_holds(spark: SparkSession, tmp_path: Path) -> None:
    """files_added/bytes_added and files_removed/bytes_removed, read back from the log, for
    each kind of commit: create, append, overwrite, optimize (rewrite), optimize with
    where=, and optimize of a file with deleted rows (a purge)."""
    path = str(tmp_path / "t")
    rows = spark.range(600).selectExpr("id AS a", "id % 7 AS b", "CAST(id % 3 AS STRING) AS p")
    results = [
        zorder.write(rows, path, by=["a", "b"], partition_by=["p"], num_files=6),
        zorder.write(rows, path, mode="append", num_files=3),
        zorder.optimize(spark, path, where="p = '1'", full=True, num_files=1),
        zorder.optimize(spark, path, full=True, num_files=4),
        zorder.write(rows, path, mode="overwrite", num_files=3),
    ]
    deleted = str(tmp_path / "dv")
    shutil.copytree(Path(__file__).resolve().parents[1] / "data" / "table-with-dv-small", deleted)
    results.append(zorder.optimize(spark, deleted, by=["value"], num_files=1))
    for metrics in results:
        assert metrics.data_version is not None
        table = path if metrics.table_uri.endswith("/t") else deleted
        reported = (
            metrics.files_added,
            metrics.bytes_added,
            metrics.files_removed,
            metrics.bytes_removed,
        )
        assert reported == _commit_totals(table, metrics.data_version), metrics.operation
    assert [m.files_removed > 0 for m in results] == [False, False, True, True, True, True]


def test_a_spec_with_a_column_null_in_every_row_is_refused(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    rows = spark.range(300).selectExpr("id AS a", "id % 7 AS b", "CAST(NULL AS STRING) AS note")
    with pytest.raises(InvalidArgumentError, match="'note' is NULL in all 300 rows"):
        zorder.write(rows, path, by=["a", "note"], num_files=2)
    assert not (tmp_path / "t" / "_delta_log").exists()
    assert not list((tmp_path / "t").glob("zorder-*"))  # the run's files are deleted
    zorder.write(rows, path, by=["a", "b"], num_files=2)
    version = DeltaTable(path).version()
    with pytest.raises(InvalidArgumentError, match="by=\\['a'\\]"):
        zorder.optimize(spark, path, by=["a", "note"], num_files=2)
    assert DeltaTable(path).version() == version
    # An append that follows the recorded spec may bring a batch whose column is all NULL.
    nulls = rows.selectExpr("a", "CAST(NULL AS BIGINT) AS b", "note")
    assert zorder.write(nulls, path, mode="append", num_files=1).files_added == 1


def test_a_layout_of_one_file_a_partition_says_so_with_the_fix(
    spark: SparkSession, tmp_path: Path
) -> None:
    """The default 128 MB target makes one file a day of a small table: nothing to skip by
    inside a day. The result says so, with the sizes that give more files; following it
    leaves no note. An append beside other files is not judged."""
    path = str(tmp_path / "t")
    days = spark.range(3_000).selectExpr("id AS a", "id % 11 AS b", "CAST(id % 3 AS STRING) AS day")
    written = zorder.write(days, path, by=["a", "b"], partition_by=["day"])
    assert len(written.notes) == 1
    assert written.notes[0].startswith("3 of 3 partitions hold one file after this write")
    assert "optimize(full=True, target_file_size=" in written.notes[0]
    assert zorder.write(days, path, mode="append").notes == ()
    fixed = zorder.optimize(spark, path, full=True, num_files=24)
    assert fixed.notes == ()
    single = zorder.write(days.drop("day"), str(tmp_path / "one"), by=["a", "b"])
    assert single.notes[0].startswith("the table holds one file after this write")
