"""``schema_mode="merge"``: an append whose rows bring new columns, on both engines.

A plain table, a partitioned one and a column-mapped one (delta-rs's, name mode)
each get a batch with two new columns, then a batch without one of the table's
older columns. Each time the table is read back exactly by DuckDB's
``delta_scan``, delta-rs, Spark (``zorder.read``) and ``zorder.to_arrow``:
rows written before read NULL in the new columns, the new rows their values.
The columns come in commits of their own before the data's, and the data's
files hold them. Then an optimize rewrites the old files and the new ones
together. A stream through ``zorder.foreach_batch`` whose batches bring a
column the table lacks is merged the same way.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake
from pyspark.sql import SparkSession

import zorder
from tests.spark.helpers import arrow_rows, delta_rs_rows, kernel_rows, row_multiset
from zorder.plan.modes import EngineUsed

pytestmark = pytest.mark.spark

COLUMNS = ["day", "x", "s", "extra", "n"]
OLD = "day string, x bigint, s string"
NEW = "day string, x bigint, s string, extra string, n bigint"
LATE = "day string, x bigint, extra string, n bigint"  # s missing: written as NULL


def batch(start: int, count: int, columns: str) -> list[dict[str, Any]]:
    names = [c.split()[0] for c in columns.split(", ")]
    every: dict[str, Callable[[int], Any]] = {
        "day": lambda i: f"2026-11-0{1 + i % 3}",
        "x": lambda i: i * 7919 % 1000,
        "s": lambda i: f"s{i % 17}",
        "extra": lambda i: None if i % 5 == 0 else f"e{i}",
        "n": lambda i: i,
    }
    return [{name: every[name](i) for name in names} for i in range(start, start + count)]


def as_rows(records: list[dict[str, Any]]) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(r.get(c) for c in COLUMNS) for r in records)


def arrow_of(records: list[dict[str, Any]], columns: str) -> pa.Table:
    types = {"string": pa.string(), "bigint": pa.int64()}
    fields = [(c.split()[0], types[c.split()[1]]) for c in columns.split(", ")]
    return pa.table({n: pa.array([r[n] for r in records], t) for n, t in fields})


def append(
    spark: SparkSession,
    tmp_path: Path,
    path: str,
    records: list[dict[str, Any]],
    columns: str,
    engine: EngineUsed,
) -> zorder.ClusterMetrics:
    """``records`` appended under merge: a DataFrame by Spark, a Parquet file in process."""
    if engine == "spark":
        df = spark.createDataFrame([tuple(r.values()) for r in records], columns)
        return zorder.write(df, path, mode="append", schema_mode="merge")
    source = tmp_path / f"batch-{records[0]['x']}-{len(records)}.parquet"
    pq.write_table(arrow_of(records, columns), source)
    return zorder.write(str(source), path, mode="append", engine="arrow", schema_mode="merge")


def make_table(path: str, kind: str, records: list[dict[str, Any]]) -> None:
    first = arrow_of(records, OLD)
    if kind == "mapped":  # delta-rs's column-mapped table, then zorder's first run
        write_deltalake(
            path,
            first.slice(0, 10),
            partition_by=["day"],
            configuration={"delta.columnMapping.mode": "name"},
        )
        rest = Path(path).parent / "rest.parquet"
        pq.write_table(first.slice(10), rest)
        zorder.write(str(rest), path, by=["x"], mode="append", engine="arrow")
        return
    source = Path(path).parent / "first.parquet"
    pq.write_table(first, source)
    partition_by = ["day"] if kind == "partitioned" else None
    zorder.write(str(source), path, by=["x"], partition_by=partition_by, engine="arrow")


def read_everywhere(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, path: str
) -> Counter[tuple[Any, ...]]:
    found = kernel_rows(kernel, path, COLUMNS)
    assert delta_rs_rows(path, COLUMNS) == found
    assert arrow_rows(zorder.to_arrow(path), COLUMNS) == found
    assert row_multiset(zorder.read(spark, path).select(*COLUMNS).collect()) == found
    return found


def log(path: str, version: int) -> list[dict[str, Any]]:
    text = (Path(path) / "_delta_log" / f"{version:020d}.json").read_text()
    return [json.loads(line) for line in text.splitlines()]


def physical(path: str) -> dict[str, str]:
    schema = json.loads(DeltaTable(path).schema().to_json())
    return {
        f["name"]: f["metadata"].get("delta.columnMapping.physicalName", f["name"])
        for f in schema["fields"]
    }


@pytest.mark.parametrize("engine", ["spark", "arrow"])
@pytest.mark.parametrize("kind", ["plain", "partitioned", "mapped"])
def test_an_append_with_new_columns_is_read_exactly_by_every_reader(
    spark: SparkSession,
    kernel: duckdb.DuckDBPyConnection,
    tmp_path: Path,
    kind: str,
    engine: EngineUsed,
) -> None:
    path = str(tmp_path / "t")
    old = batch(0, 60, OLD)
    make_table(path, kind, old)
    before = DeltaTable(path).version()
    new = batch(60, 50, NEW)
    metrics = append(spark, tmp_path, path, new, NEW, engine)
    assert metrics.engine == engine
    assert metrics.data_version is not None
    # The columns' commits first (one; two under column mapping), adding and removing
    # no file; then the data's, whose files hold the new columns.
    between = range(before + 1, metrics.data_version)
    assert len(between) == (2 if kind == "mapped" else 1)
    assert not any("add" in a or "remove" in a for v in between for a in log(path, v))
    names = physical(path)
    added = [a["add"] for a in log(path, metrics.data_version) if "add" in a]
    assert added
    for action in added:
        stored = pq.read_schema(Path(path) / action["path"]).names
        assert names["extra"] in stored
        assert names["n"] in stored
    expected = as_rows(old) + as_rows(new)
    assert read_everywhere(spark, kernel, path) == expected
    assert any(r[3] is None for r in expected)
    assert any(r[3] is not None for r in expected)
    # The spec keeps its columns: the new ones are no clustering columns.
    configuration = DeltaTable(path).metadata().configuration
    assert configuration["zorder.clustering.columns"] == '["x"]'
    if kind == "mapped":
        schema = json.loads(DeltaTable(path).schema().to_json())
        ids = {f["name"]: f["metadata"]["delta.columnMapping.id"] for f in schema["fields"]}
        assert ids == {"day": 1, "x": 2, "s": 3, "extra": 4, "n": 5}
        assert names["extra"].startswith("col-")
        assert configuration["delta.columnMapping.maxColumnId"] == "5"
    # A batch without one of the table's columns: it reads NULL there.
    late = batch(110, 30, LATE)
    version = DeltaTable(path).version()
    done = append(spark, tmp_path, path, late, LATE, engine)
    assert done.data_version == version + 1  # no column to add: the data's commit alone
    expected += as_rows(late)
    assert read_everywhere(spark, kernel, path) == expected
    # An optimize rewrites the files without the columns and those with them alike.
    zorder.optimize(spark, path, full=True, num_files=3, engine=engine)
    assert read_everywhere(spark, kernel, path) == expected
    wanted = Counter(r for r in expected if r[3] == "e77")
    assert arrow_rows(zorder.to_arrow(path, "extra = 'e77'"), COLUMNS) == wanted
    found = zorder.read(spark, path, "n IS NULL").select(*COLUMNS).collect()
    assert row_multiset(found) == Counter(r for r in expected if r[4] is None)


def test_a_stream_whose_batches_bring_a_new_column_is_merged(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    path, source = str(tmp_path / "t"), tmp_path / "source"
    source.mkdir()
    old = batch(0, 40, OLD)
    make_table(path, "partitioned", old)
    new = batch(40, 60, NEW)
    for number, start in enumerate(range(0, 60, 20)):
        staged = tmp_path / f".{number}.json"
        staged.write_text("\n".join(json.dumps(r) for r in new[start : start + 20]))
        staged.rename(source / f"{number}.json")
    writer = zorder.foreach_batch(path, schema_mode="merge")
    stream = spark.readStream.schema(NEW).option("maxFilesPerTrigger", 1).json(str(source))
    query = (
        stream.writeStream.foreachBatch(writer)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .start()
    )
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    assert query.exception() is None
    assert DeltaTable(path).transaction_version(str(query.id)) == 2  # three batches
    assert read_everywhere(spark, kernel, path) == as_rows(old) + as_rows(new)
    operations = [
        a["commitInfo"]["operation"]
        for v in range(DeltaTable(path).version() + 1)
        for a in log(path, v)
        if "commitInfo" in a
    ]
    assert operations.count("ADD COLUMN") == 1  # the first batch's; the others had them
