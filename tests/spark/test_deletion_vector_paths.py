"""Deleted rows found by each file's whole path, as Spark's ``_metadata.file_path`` gives it.

Files of one table may share a name in different directories (zorder's own
small-file layout does: ``zorder-<run>/zorder_file=<n>/part-0000T-<uuid>...``),
and directories may hold spaces, ``%``, ``#`` and characters beyond ASCII, which
Spark reports percent-encoded. Every answer is checked against the rows the
test wrote less the rows it deleted, and against DuckDB's delta_scan (the Delta
kernel).
"""

from __future__ import annotations

import json
import posixpath
import random
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, TableFeatures
from deltalake.transaction import AddAction, RemoveAction
from pyspark.sql import SparkSession

import zorder
from tests.delta_writer import STORAGES, delete_rows, live_adds
from tests.spark.helpers import arrow_rows, delta_rs_rows, kernel_rows, row_multiset

pytestmark = pytest.mark.spark

# Directory names Spark reads (zorder escapes Hadoop's glob characters in the paths it hands
# Spark; Hadoop splits at ``:``, which Delta writers escape), each holding a file of one name.
DIRECTORIES = [
    "plain",
    "with space",
    "pct%41",  # a literal %41, which is no "A"
    "pct%",
    "hash#x",
    "é中😀",
    "nbsp\u00a0x",  # a space beyond ASCII: Spark encodes it
    "ideographic\u3000space",
    "nel\u0085x",  # a control character beyond ASCII: encoded too
    "line\u2028sep",
    "plus+and=amp&",
    "semi;colon,dollar$@at",
    "quote'\"<>|^`~!()",
    "glob?x",
    "star*x",
    "brace{a,b}",
]
# Delta writers escape control characters in directory names; deltalake's file_uris leaves
# them encoded, so the partitioned purge's check of its files refuses such a table (nothing
# written): only the unpartitioned table holds one.
CONTROL = "tab\tx"
NAME = "part-00000-c3f8a1d2-5b7e-4f0a-9e2d-0123456789ab.c000.snappy.parquet"
DAYS = ["2026-11-01", "2026-11-02"]
FILTERS = ["TRUE", "a < 3", "id < 500 OR a = 6", "NOT (id BETWEEN 300 AND 900)"]


def committed(
    root: Path,
    schema: pa.Schema,
    files: dict[str, tuple[pa.Table, dict[str, str]]],
    partition_by: list[str] | None = None,
) -> None:
    """A new table of ``files`` (their data and partition values, by path under ``root``),
    written by pyarrow and committed in one transaction through deltalake's transaction
    API; deletion vectors then enabled."""
    table = DeltaTable.create(str(root), schema, partition_by=partition_by)
    adds: list[AddAction | RemoveAction] = []
    for relative, (data, values) in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(data, root / relative)
        adds.append(
            AddAction(
                path=relative,
                size=(root / relative).stat().st_size,
                partition_values=values,
                modification_time=int(time.time() * 1000),
                data_change=True,
                stats=json.dumps({"numRecords": data.num_rows}),
            )
        )
    table.create_write_transaction(
        adds, mode="append", schema=table.schema(), partition_by=partition_by
    )
    DeltaTable(str(root)).alter.add_feature(
        TableFeatures.DeletionVectors, allow_protocol_versions_increase=True
    )


def files_table(root: Path, *, partitioned: bool, rows: int = 120) -> dict[str, list[Any]]:
    """A table of one file per directory in :data:`DIRECTORIES` (under each of two
    partitions when ``partitioned``); returns each file's rows by its path."""
    schema = pa.schema([("id", pa.int64()), ("a", pa.int64())])
    files, written, start = {}, {}, 0
    for day in DAYS if partitioned else [None]:
        for directory in DIRECTORIES if partitioned else [*DIRECTORIES, CONTROL]:
            relative = f"{directory}/{NAME}" if day is None else f"day={day}/{directory}/{NAME}"
            ids = list(range(start, start + rows))
            start += rows
            data = pa.table({"id": ids, "a": [i * 7 % 10 for i in ids]}, schema=schema)
            files[relative] = (data, {} if day is None else {"day": day})
            written[relative] = [(i, i * 7 % 10) + (() if day is None else (day,)) for i in ids]
    if partitioned:
        schema = schema.append(pa.field("day", pa.string()))
    committed(root, schema, files, ["day"] if partitioned else None)
    return written


def delete_some(root: Path, seed: int) -> dict[str, set[int]]:
    """DELETEs as deletion vectors (every storage kind) on most files: the positions by file."""
    rng = random.Random(seed)
    deleted: dict[str, set[int]] = {}
    for number, (logged, add) in enumerate(sorted(live_adds(root).items())):
        if number % 4 == 3:
            continue  # some files keep every row
        count = json.loads(add["stats"])["numRecords"]
        rows = set(rng.sample(range(count), rng.randint(1, count // 2)))
        delete_rows(root, logged, rows, storage=STORAGES[number % 3])
        deleted[unquote(logged)] = rows  # the log's paths are percent-encoded
    return deleted


def live(written: dict[str, list[Any]], deleted: dict[str, set[int]]) -> Counter[tuple[Any, ...]]:
    """The rows the test wrote less those it deleted."""
    kept: list[Any] = []
    for relative, rows in written.items():
        gone = deleted.get(relative, set())
        kept += [row for position, row in enumerate(rows) if position not in gone]
    return row_multiset(kept)


@pytest.mark.parametrize("partitioned", [False, True], ids=["unpartitioned", "partitioned"])
def test_same_named_files_in_odd_directories_lose_exactly_their_deleted_rows(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path, partitioned: bool
) -> None:
    # (A partitioned table's root stays plain: deltalake's file_uris encodes an odd root, so
    # the purge's check of its files refuses the optimize, nothing written.)
    root = tmp_path / ("t" if partitioned else "table é #1")
    written = files_table(root, partitioned=partitioned)
    deleted = delete_some(root, seed=7)
    names = Counter(posixpath.basename(p) for p in live_adds(root))
    assert names == Counter({NAME: len(written)})  # one name for every file
    assert len(deleted) >= len(written) // 2
    columns = ["id", "a", "day"] if partitioned else ["id", "a"]
    expected = live(written, deleted)
    assert sum(expected.values()) < sum(len(rows) for rows in written.values())
    path = str(root)
    assert kernel_rows(kernel, path, columns) == expected
    # The filters' meaning is Spark's, on the expected rows held in memory.
    remembered = spark.createDataFrame(
        list(expected.elements()), "id long, a long" + (", day string" if partitioned else "")
    )
    for where in FILTERS:
        wanted = row_multiset(remembered.where(where).collect())
        assert kernel_rows(kernel, path, columns, where) == wanted, where
        read = zorder.read(spark, path, where).select(*columns).collect()
        assert row_multiset(read) == wanted, where
        assert arrow_rows(zorder.to_arrow(path, where), columns) == wanted, where

    zorder.optimize(spark, path, by=["a", "id"], full=True, num_files=3)
    assert not any("deletionVector" in add for add in live_adds(root).values())
    assert kernel_rows(kernel, path, columns) == expected
    assert delta_rs_rows(path, columns) == expected
    assert row_multiset(zorder.read(spark, path).select(*columns).collect()) == expected


@pytest.mark.parametrize("partitioned", [False, True], ids=["unpartitioned", "partitioned"])
def test_small_files_zorder_wrote_then_a_delete_read_exactly(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path, partitioned: bool
) -> None:
    # 20,000 rows into 50 files: zorder's layout for small files (today it names the files
    # of a run alike, directory by directory; the first test builds such a layout itself).
    path = str(tmp_path / "t")
    frame = spark.range(20_000).selectExpr(
        "id", "id * 7919 % 1000 AS a", "IF(id % 3 = 0, '2026-11-01', '2026-11-02') AS day"
    )
    zorder.write(
        frame, path, by=["a", "id"], num_files=50, partition_by=["day"] if partitioned else None
    )
    DeltaTable(path).alter.add_feature(
        TableFeatures.DeletionVectors, allow_protocol_versions_increase=True
    )
    adds = live_adds(Path(path))
    assert len(adds) >= 20
    rng = random.Random(3)
    for number, logged in enumerate(sorted(adds)[::3]):
        count = json.loads(adds[logged]["stats"])["numRecords"]
        delete_rows(
            path, logged, rng.sample(range(count), count // 4), storage=STORAGES[number % 3]
        )
    columns = ["id", "a", "day"]
    expected = kernel_rows(kernel, path, columns)
    assert 15_000 < sum(expected.values()) < 20_000
    for where in [
        "TRUE",
        "a < 100",
        "day = '2026-11-01' AND id > 10000",
        "id IN (7, 70, 700, 7000)",
    ]:
        wanted = kernel_rows(kernel, path, columns, where)
        read = zorder.read(spark, path, where).select(*columns).collect()
        assert row_multiset(read) == wanted, where
        assert arrow_rows(zorder.to_arrow(path, where), columns) == wanted, where

    zorder.optimize(spark, path, by=["a", "id"], full=True, num_files=4)
    assert not any("deletionVector" in add for add in live_adds(Path(path)).values())
    assert kernel_rows(kernel, path, columns) == expected
    assert delta_rs_rows(path, columns) == expected
    assert row_multiset(zorder.read(spark, path).select(*columns).collect()) == expected


def test_columns_named_like_the_read_s_own_are_kept_apart(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    # A user's columns named as the read's internal ones were, and as Spark's _metadata.
    root = tmp_path / "t"
    schema = pa.schema(
        [
            ("id", pa.int64()),
            ("__zorder_file_name", pa.string()),
            ("__zorder_row_index", pa.int64()),
            ("_metadata", pa.string()),
        ]
    )
    files: dict[str, tuple[pa.Table, dict[str, str]]] = {}
    written: dict[str, list[tuple[int, str, int, str]]] = {}
    for number in range(3):
        rows = [(i, NAME, 0, f"file_path {i}") for i in range(number * 50, number * 50 + 50)]
        data = pa.table(list(zip(*rows, strict=True)), schema=schema)
        files[f"dir{number}/{NAME}"] = (data, {})
        written[f"dir{number}/{NAME}"] = rows
    committed(root, schema, files)
    delete_rows(root, f"dir0/{NAME}", range(0, 50, 2))
    delete_rows(root, f"dir2/{NAME}", [0, 49])
    expected = live(written, {f"dir0/{NAME}": set(range(0, 50, 2)), f"dir2/{NAME}": {0, 49}})
    path, columns = str(root), schema.names
    assert kernel_rows(kernel, path, columns) == expected
    read = zorder.read(spark, path)
    assert read.columns == columns
    assert row_multiset(read.collect()) == expected
    assert row_multiset(zorder.read(spark, path, "id >= 100").collect()) == Counter(
        {row: n for row, n in expected.items() if row[0] >= 100}
    )
