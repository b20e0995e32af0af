"""The in-process engine against Spark's: the same files from the same rows.

Each case clusters copies of one table twice, ``engine="spark"`` and
``engine="arrow"``, with the same options: each file number must hold the same
rows in the same partition (both fit the file plan on the same in-process
sample). Then the arrow engine's table is read back by DuckDB's Delta kernel,
delta-rs, Spark and zorder, and must hold the rows it held before.
"""

from __future__ import annotations

import itertools
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import zorder
from tests.spark.helpers import (
    all_types_frame,
    arrow_rows,
    delta_rs_rows,
    kernel_rows,
    row_multiset,
)
from zorder.curves.cuts import CutTree
from zorder.curves.kinds import ClusteringSpec
from zorder.errors import InvalidArgumentError
from zorder.table.clustering import file_number

pytestmark = [pytest.mark.spark]

ROWS = 3_000
COLUMNS = ["b", "i8", "i16", "i32", "i64", "f32", "f64", "dec", "wide", "d", "ts", "ntz", "s"]

CASES: dict[str, dict[str, Any]] = {
    "zorder": {"by": ["i32", "s"]},
    "hilbert": {"by": ["d", "f64"], "curve": "hilbert"},
    "weights": {"by": ClusteringSpec(("i64", "dec", "ts"), "zorder", "rank", (2.0, 1.0, 1.0))},
    "cuts": {
        "by": ClusteringSpec(
            ("i32", "s"),
            "zorder",
            "rank",
            cuts=CutTree((0, -1, -1), (0, None, None), (1, -1, -1), (2, -1, -1)),
        )
    },
    "four-types": {"by": ["ntz", "b", "i8", "f32"]},
    "blooms": {"by": ["i16", "wide"], "bloom_filters": ["i64", "s"]},
}
PARTITIONED: dict[str, dict[str, Any]] = {
    "zorder": {"by": ["i32", "s"]},
    "one-column": {"by": ["s"]},
    "hilbert": {"by": ["ts", "i64"], "curve": "hilbert"},
}


def added(path: str) -> list[dict[str, Any]]:
    """The table's add actions, flattened."""
    actions: list[dict[str, Any]] = pa.table(
        DeltaTable(path).get_add_actions(flatten=True)
    ).to_pylist()
    return actions


def files_by_number(path: str) -> dict[int, tuple[tuple[Any, ...], Counter[tuple[Any, ...]]]]:
    """Each live file of the table's newest run: its partition values and its rows, as the
    file holds them, by the number its name carries."""
    adds = added(path)
    found = {}
    for add in adds:
        values = tuple(sorted((k, v) for k, v in add.items() if k.startswith("partition.")))
        rows = pq.read_table(Path(path) / add["path"]).to_pylist()
        found[file_number(add["path"])] = (values, row_multiset(tuple(r.values()) for r in rows))
    return found


def modern(frame: DataFrame) -> DataFrame:
    """``frame`` with its dates moved after 1582 (test_ancient_dates_are_left_to_spark has
    the others): Spark 3.5 reads older ones only from files Spark wrote."""
    moved = F.expr(
        "date_add(DATE'1600-01-01', CAST(datediff(d, DATE'0001-01-01') % 150000 AS INT))"
    )
    return frame.withColumn("d", moved)


@pytest.fixture(scope="module")
def source(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A table of two appends of every type (no binary: it cannot be clustered by here)."""
    path = str(tmp_path_factory.mktemp("engines") / "t")
    frame = modern(all_types_frame(spark, ROWS, seed=11).drop("bin"))
    half = ROWS // 2
    first, second = frame.limit(half), frame.subtract(frame.limit(half))
    zorder.write(first, path, by=["i32"], num_files=3, engine="spark")
    zorder.write(second, path, mode="append", num_files=2, engine="spark")
    return path


@pytest.fixture(scope="module")
def partitioned(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The same rows partitioned by a string column with a NULL partition."""
    path = str(tmp_path_factory.mktemp("engines") / "p")
    frame = modern(all_types_frame(spark, ROWS, seed=12).drop("bin"))
    keyed = frame.withColumn(
        "p", F.when(F.col("i8") % 3 == 0, None).otherwise((F.col("i8") % 3).cast("string"))
    )
    zorder.write(keyed, path, by=["i32"], partition_by=["p"], num_files=5, engine="spark")
    return path


def optimized_both_ways(table: str, tmp_path: Path, options: dict[str, Any]) -> tuple[str, str]:
    by_spark, by_arrow = str(tmp_path / "spark"), str(tmp_path / "arrow")
    shutil.copytree(table, by_spark)
    shutil.copytree(table, by_arrow)
    spark_metrics = zorder.optimize(None, by_spark, full=True, engine="spark", **options)
    arrow_metrics = zorder.optimize(None, by_arrow, full=True, engine="arrow", **options)
    assert (spark_metrics.engine, arrow_metrics.engine) == ("spark", "arrow")
    assert spark_metrics.rows == arrow_metrics.rows
    assert spark_metrics.files_added == arrow_metrics.files_added
    return by_spark, by_arrow


@pytest.mark.parametrize("case", list(CASES))
def test_same_files_as_spark(spark: SparkSession, source: str, tmp_path: Path, case: str) -> None:
    by_spark, by_arrow = optimized_both_ways(source, tmp_path, {"num_files": 9, **CASES[case]})
    expected = files_by_number(by_spark)
    assert len(expected) > 1
    assert files_by_number(by_arrow) == expected


@pytest.mark.parametrize("case", list(PARTITIONED))
def test_same_files_as_spark_inside_partitions(
    spark: SparkSession, partitioned: str, tmp_path: Path, case: str
) -> None:
    by_spark, by_arrow = optimized_both_ways(
        partitioned, tmp_path, {"num_files": 8, **PARTITIONED[case]}
    )
    expected = files_by_number(by_spark)
    partitions = {values for values, _ in expected.values()}
    assert (("partition.p", None),) in partitions  # NULL is a partition of its own
    assert len(partitions) == 5
    assert files_by_number(by_arrow) == expected


def test_plain_sort_cuts_sorted_ranges(spark: SparkSession, source: str, tmp_path: Path) -> None:
    """One column: Spark's range partitioner cuts at bounds it samples itself, so the files
    differ; each in-process file is a sorted range of the column, equal values in one."""
    path = str(tmp_path / "arrow")
    shutil.copytree(source, path)
    metrics = zorder.optimize(None, path, by=["i64"], full=True, num_files=6, engine="arrow")
    assert metrics.engine == "arrow"
    assert metrics.rows == ROWS
    ranges = []
    for add in added(path):
        values = pq.read_table(Path(path) / add["path"]).column("i64").to_pylist()
        present = [v for v in values if v is not None]
        assert values == sorted(values, key=lambda v: (v is not None, v or 0))  # NULLs first
        ranges.append((file_number(add["path"]), min(present), max(present), len(values)))
    ranges.sort()
    for (_, _, high, _), (_, low, _, _) in itertools.pairwise(ranges):
        assert high < low
    assert max(r[3] for r in ranges) <= 1.2 * ROWS / 6


def test_rows_read_back_by_every_reader(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, partitioned: str, tmp_path: Path
) -> None:
    path = str(tmp_path / "arrow")
    shutil.copytree(partitioned, path)
    columns = [*COLUMNS, "p"]
    before = kernel_rows(kernel, path, columns)
    metrics = zorder.optimize(None, path, by=["i32", "s"], full=True, num_files=40)
    assert metrics.engine == "arrow"  # auto: small work runs in process
    assert kernel_rows(kernel, path, columns) == before
    assert delta_rs_rows(path, columns) == before
    assert arrow_rows(zorder.to_arrow(path), columns) == before
    assert row_multiset(zorder.read(spark, path).select(*columns).collect()) == before
    # The layout is clustered: a lookup of one value keeps few files.
    value = next(v for row in before if (v := row[columns.index("i32")]) is not None)
    report = zorder.scan(path, where=f"i32 = {value}").report
    assert report.files_scanned <= report.files_total // 2


def test_bloom_filters_written_in_process_are_probed(
    spark: SparkSession, source: str, tmp_path: Path
) -> None:
    path = str(tmp_path / "arrow")
    shutil.copytree(source, path)
    zorder.optimize(
        None, path, by=["i32", "s"], full=True, num_files=8, bloom_filters=["i64"], engine="arrow"
    )
    for add in added(path):
        metadata = pq.read_metadata(Path(path) / add["path"])
        column = metadata.schema.names.index("i64")
        assert metadata.row_group(0).column(column).bloom_filter_offset is not None
    values = [r["i64"] for r in zorder.to_arrow(path).to_pylist() if r["i64"] is not None]
    # One row holds it, mid-range: min/max keep every file, the filters all but its own.
    rare = next(v for v in values if abs(v) < 2**60 and values.count(v) == 1 and abs(v) > 5)
    scan = zorder.scan(path, where=f"i64 = {rare}")
    assert scan.report.files_bloom_skipped > 0
    assert scan.report.files_scanned >= 1
    assert zorder.read(spark, path, f"i64 = {rare}").count() == values.count(rare)


def test_arrow_refuses_what_only_spark_does(source: str, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    shutil.copytree(source, path)
    with pytest.raises(InvalidArgumentError, match=r"engine='arrow' cannot run.*direct keys"):
        zorder.optimize(None, path, by=["i32", "s"], method="direct", engine="arrow")
    assert zorder.describe(path).version == DeltaTable(source).version()


def test_auto_runs_spark_over_the_bounds(
    spark: SparkSession, source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import zorder.plan.engines as engines

    monkeypatch.setattr(engines, "IN_PROCESS_ROWS", ROWS - 1)
    path = str(tmp_path / "t")
    shutil.copytree(source, path)
    with pytest.raises(InvalidArgumentError, match=f"{ROWS:,} rows, over the in-process bound"):
        zorder.optimize(None, path, by=["i32", "s"], full=True, engine="arrow")
    metrics = zorder.optimize(spark, path, by=["i32", "s"], full=True)
    assert metrics.engine == "spark"
    assert "over the in-process bound" in metrics.engine_reason


def test_ancient_dates_are_left_to_spark(spark: SparkSession, tmp_path: Path) -> None:
    """Dates before 1582 in files pyarrow writes: Spark 3.5 refuses to read them (it reads
    them from files Spark wrote), so the in-process engine leaves such rows to Spark."""
    path = str(tmp_path / "t")
    frame = spark.sql(
        "SELECT id AS a, date_add(DATE'1500-01-01', CAST(id AS INT)) AS d FROM range(100)"
    )
    zorder.write(frame, path, by=["a"], num_files=2, engine="spark")
    with pytest.raises(InvalidArgumentError, match=r"engine='arrow' cannot run.*1500-01-01"):
        zorder.optimize(None, path, by=["d", "a"], full=True, engine="arrow")
    metrics = zorder.optimize(spark, path, by=["d", "a"], full=True)
    assert metrics.engine == "spark"
    assert "1500-01-01" in metrics.engine_reason
    assert zorder.read(spark, path).count() == 100
