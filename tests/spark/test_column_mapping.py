"""Column mapping (``name`` mode): files, statistics and partition values under physical names.

Tables Databricks wrote (tests/data), and tables delta-rs made with mapping
that then go through Delta Spark's RENAME COLUMN (tests/delta_writer.py), a
column added later, deletes as deletion vectors. Every read, optimize and
append is checked against DuckDB's delta_scan and delta-rs, and the table's
mapping must come out of every zorder commit unchanged.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake
from deltalake.transaction import AddAction, RemoveAction
from pyspark.sql import SparkSession

import zorder
from tests.delta_writer import (
    add_column,
    change_struct,
    delete_rows,
    enable_deletion_vectors,
    live_adds,
    rename_column,
)
from tests.spark.helpers import arrow_rows, delta_rs_rows, kernel_rows, row_multiset

pytestmark = pytest.mark.spark

DATA = Path(__file__).resolve().parents[1] / "data"


def mapping_of(path: str) -> list[tuple[str, Any]]:
    """Each column's logical name with its mapping metadata (physical name, id)."""
    schema = json.loads(DeltaTable(path).schema().to_json())
    return [(f["name"], sorted((f.get("metadata") or {}).items())) for f in schema["fields"]]


def check_everywhere(
    spark: SparkSession,
    kernel: duckdb.DuckDBPyConnection,
    path: str,
    columns: list[str],
    expected: Any,
) -> None:
    assert kernel_rows(kernel, path, columns) == expected
    assert delta_rs_rows(path, columns) == expected
    assert arrow_rows(zorder.to_arrow(path), columns) == expected
    assert row_multiset(zorder.read(spark, path).select(*columns).collect()) == expected


@pytest.mark.parametrize(
    ("name", "columns", "by"),
    [
        ("table_with_column_mapping", ["Company Very Short", "Super Name"], ["Super Name"]),
        ("table_with_partitioning_mapping", ["newid", "description"], ["description"]),
    ],
)
def test_databricks_tables_read_optimize_and_append(
    spark: SparkSession,
    kernel: duckdb.DuckDBPyConnection,
    tmp_path: Path,
    name: str,
    columns: list[str],
    by: list[str],
) -> None:
    path = str(tmp_path / name)
    shutil.copytree(DATA / name, path)
    mapping = mapping_of(path)
    expected = kernel_rows(kernel, path, columns)
    assert sum(expected.values()) > 0
    assert all(v is not None for row in expected for v in row)  # the bug this replaces: NULLs
    check_everywhere(spark, kernel, path, columns, expected)
    metrics = zorder.optimize(spark, path, by=by, full=True, num_files=2)
    assert metrics.rows == sum(expected.values())
    check_everywhere(spark, kernel, path, columns, expected)
    extra = spark.createDataFrame(
        zorder.read(spark, path).orderBy(*columns).limit(2).collect(),
        zorder.read(spark, path).schema,
    )
    zorder.write(extra, path, mode="append")
    check_everywhere(spark, kernel, path, columns, expected + row_multiset(extra.collect()))
    assert mapping_of(path) == mapping


def mapped_table(path: str, *, seed: int = 1) -> None:
    """delta-rs's column-mapped table (partition column first: DuckDB's delta extension 1.5.5
    reads a mapped partition column placed last as NULL), three appends."""
    rng = random.Random(seed)
    for batch in range(3):
        count = 200
        write_deltalake(
            path,
            pa.table(
                {
                    "day": [f"2026-11-0{1 + (batch + i) % 2}" for i in range(count)],
                    "a": [rng.randint(0, 999) for _ in range(count)],
                    "s": pa.array(
                        [
                            {"x": rng.randint(0, 9), "y": rng.choice(["p", "q"])}
                            for _ in range(count)
                        ]
                    ),
                }
            ),
            partition_by=["day"],
            mode="append",
            configuration={"delta.columnMapping.mode": "name"} if batch == 0 else None,
        )


def test_renames_added_columns_and_deletes(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    mapped_table(path)
    enable_deletion_vectors(path)
    rename_column(path, "a", "amount")
    rename_column(path, "day", "event_day")  # the partition column too
    # A column added after the first files: they lack it (NULL when read).
    add_column(path, "note", "string")
    late = pa.table(
        {
            "event_day": ["2026-11-02"] * 3,
            "amount": [5, 6, 7],
            "s": pa.array([None] * 3, pa.struct([("x", pa.int64()), ("y", pa.string())])),
            "note": ["n1", "n2", "n3"],
        }
    )
    write_deltalake(path, late, partition_by=["event_day"], mode="append")
    first, add = sorted(live_adds(Path(path)).items())[0]
    deleted = range(0, json.loads(add["stats"])["numRecords"], 3)
    delete_rows(path, first, deleted)
    columns = ["event_day", "amount", "note"]
    mapping = mapping_of(path)
    expected = kernel_rows(kernel, path, columns)
    assert sum(expected.values()) == 603 - len(deleted)
    assert any(row[2] is None for row in expected)
    assert any(row[2] == "n2" for row in expected)
    check_everywhere(spark, kernel, path, columns, expected)
    # Skipping and filters work on the logical names.
    where = "amount < 100 AND event_day = '2026-11-01'"
    wanted = kernel_rows(kernel, path, columns, where)
    assert arrow_rows(zorder.to_arrow(path, where), columns) == wanted
    assert row_multiset(zorder.read(spark, path, where).select(*columns).collect()) == wanted
    report = zorder.explain(path, where)
    assert report.partitions_scanned == 1
    nested = zorder.to_arrow(path, "amount < 50", columns=["s"]).column("s").to_pylist()
    assert all(v is None or set(v) == {"x", "y"} for v in nested)
    zorder.optimize(spark, path, by=["amount"], num_files=4)
    check_everywhere(spark, kernel, path, columns, expected)
    assert mapping_of(path) == mapping
    assert not any("deletionVector" in a for a in live_adds(Path(path)).values())


def test_id_mode_reads_and_writes_by_field_id(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    # In id mode readers find columns by Parquet field id. A file whose column ids match
    # but whose names do not (as a converted table's may) is read by its ids.
    path = str(tmp_path / "t")
    rng = random.Random(3)
    for batch in range(2):
        write_deltalake(
            path,
            pa.table(
                {
                    "day": [f"2026-11-0{1 + i % 2}" for i in range(100)],
                    "a": [rng.randint(0, 99) for _ in range(100)],
                    "s": pa.array([{"x": i, "y": str(i % 3)} for i in range(100)]),
                }
            ),
            partition_by=["day"],
            mode="append",
            configuration={"delta.columnMapping.mode": "id"} if batch == 0 else None,
        )
    rename_column(path, "a", "amount")
    columns = ["day", "amount"]
    expected = kernel_rows(kernel, path, columns)
    assert sum(expected.values()) == 200
    first, add = sorted(live_adds(Path(path)).items())[0]
    stored = pq.read_table(Path(path) / first)
    renamed = stored.rename_columns([f"other-{i}" for i in range(stored.num_columns)])
    schema = pa.schema(
        [renamed.schema.field(i).with_metadata(stored.schema.field(i).metadata) for i in range(2)]
    )
    replacement = Path(path) / "other-names.parquet"
    pq.write_table(renamed.cast(schema), replacement)  # same ids, other names
    table = DeltaTable(path)
    swap: list[AddAction | RemoveAction] = [
        AddAction(
            path=replacement.name,
            size=replacement.stat().st_size,
            partition_values=add["partitionValues"],
            modification_time=0,
            data_change=False,
            stats=add["stats"],
        ),
        RemoveAction(path=first, data_change=False, deletion_timestamp=0, size=add["size"]),
    ]
    table.create_write_transaction(swap, mode="append", schema=table.schema())
    # (DuckDB's delta_scan and delta-rs find columns by name: they read that file's as NULL.)
    assert arrow_rows(zorder.to_arrow(path), columns) == expected
    assert row_multiset(zorder.read(spark, path).select(*columns).collect()) == expected
    assert zorder.to_arrow(path, "amount >= 0", columns=["s"]).column("s").null_count == 0
    mapping = mapping_of(path)
    zorder.optimize(spark, path, by=["amount"], full=True, num_files=2)
    assert arrow_rows(zorder.to_arrow(path), columns) == expected
    assert kernel_rows(kernel, path, columns) == expected
    assert mapping_of(path) == mapping
    written = next(Path(path).glob("zorder-*/**/*.parquet"))
    ids = [f.metadata[b"PARQUET:field_id"] for f in pq.read_schema(written)]
    assert ids == [b"2", b"3"]  # amount (a), s; day is a partition column


@pytest.mark.parametrize("mode", ["name", "id"])
def test_nested_fields_added_and_dropped_since_a_file_was_written(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path, mode: str
) -> None:
    path = str(tmp_path / "t")
    nested = pa.struct([("x", pa.int64()), ("y", pa.string())])
    first = [{"x": i, "y": f"y{i}"} for i in range(4)]
    write_deltalake(
        path,
        pa.table({"k": list(range(4)), "s": pa.array(first, nested)}),
        configuration={"delta.columnMapping.mode": mode},
    )
    change_struct(path, "s", drop="y", add=("z", "string"))
    # Same count of nested fields, another field: y's values must not show up as z.
    later = pa.struct([("x", pa.int64()), ("z", pa.string())])
    write_deltalake(
        path,
        pa.table({"k": [10, 11], "s": pa.array([{"x": 10, "z": "z10"}, None], later)}),
        mode="append",
    )
    expected = {
        0: {"x": 0, "z": None},
        1: {"x": 1, "z": None},
        2: {"x": 2, "z": None},
        3: {"x": 3, "z": None},
        10: {"x": 10, "z": "z10"},
        11: None,
    }
    arrow = zorder.to_arrow(path)
    keys, values = arrow.column("k").to_pylist(), arrow.column("s").to_pylist()
    assert dict(zip(keys, values, strict=True)) == expected
    rows = zorder.read(spark, path).collect()
    spark_rows = {r.k: (r.s.asDict() if r.s is not None else None) for r in rows}
    assert spark_rows == expected
    found = kernel.sql(f"SELECT k, s FROM delta_scan('{path}')").fetchall()
    assert dict(found) == expected


def test_partitions_of_a_renamed_partition_column_are_chosen_as_spark_chooses(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    from zorder.api.cluster import chosen_here
    from zorder.api.context import Context
    from zorder.skipping.sql import parse_filter
    from zorder.spark.writes import chosen_by_spark
    from zorder.table import Storage, load_snapshot

    path = str(tmp_path / "renamed")
    shutil.copytree(DATA / "table_with_partitioning_mapping", path)
    columns = ["newid", "description"]
    expected = kernel_rows(kernel, path, columns)
    snapshot = load_snapshot(Storage.of(path))
    partitions = list(snapshot.files_by_partition())
    for where in ["newid >= 1", "NEWID = 1", "`newid` IN (1, NULL)", "newid IS NULL", "newid <> 1"]:
        chosen = chosen_here(snapshot, partitions, parse_filter(where), Context.of_session(spark))
        assert chosen is not None, where  # a column against literals: answered in process
        assert chosen == chosen_by_spark(spark, snapshot, partitions, where), where
    metrics = zorder.optimize(spark, path, by=["description"], where="newid >= 1", full=True)
    assert metrics.rows == sum(expected.values())
    check_everywhere(spark, kernel, path, columns, expected)
