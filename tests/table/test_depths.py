"""A version's clustering depth from its log, and the depth a rewrite leaves, without Spark."""

from __future__ import annotations

import datetime as dt
import decimal
import random
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake

import zorder
from zorder.stats import ColumnDepth, indexed_columns, stats_from_parquet
from zorder.table import Storage, WrittenFile, load_snapshot
from zorder.table.depths import rewritten_depths, snapshot_depths

DATA = Path(__file__).parent.parent / "data"


def test_random_appends_are_deep_and_sorted_ones_are_not(tmp_path: Path) -> None:
    scattered, sorted_ = str(tmp_path / "scattered"), str(tmp_path / "sorted")
    rng = random.Random(3)
    for start in range(0, 80, 10):
        write_deltalake(scattered, pa.table({"x": rng.sample(range(80), 10)}), mode="append")
        write_deltalake(sorted_, pa.table({"x": list(range(start, start + 10))}), mode="append")
    deep = zorder.describe(scattered).depth
    assert [d.column for d in deep] == ["x"]
    assert deep[0].files == 8
    assert deep[0].average_depth > 6
    assert deep[0].average_overlaps > 5
    flat = zorder.describe(sorted_)
    assert flat.depth == (ColumnDepth("x", 8, 0.0, 1.0, {1: 8}, 0, 0, 0),)
    assert flat.average_depth == {"x": 1.0}


def test_partitions_are_measured_apart_and_summed(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    for day in (1, 2):
        for _ in range(3):  # three files of each day all holding 0..9
            table = pa.table({"day": [day] * 10, "x": list(range(10))})
            write_deltalake(path, table, mode="append", partition_by=["day"])
    (x,) = zorder.describe(path, columns=["x"]).depth
    # Within a day every file meets the other two; the days never meet.
    assert (x.files, x.average_overlaps, x.average_depth, x.depth_histogram) == (6, 2, 3, {3: 6})
    # A partition column's files are constant: each partition's files share its value.
    (by_day,) = zorder.describe(path, columns=["day"]).depth
    assert (by_day.constant_files, by_day.average_depth) == (6, 3.0)


def test_files_holding_only_nulls_and_files_without_bounds_are_counted_apart(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"a": [1, 2], "b": pa.array([None, None], pa.int64())}))
    write_deltalake(path, pa.table({"a": [2, 3], "b": [5, 6]}), mode="append")
    b = zorder.describe(path, columns=["b"]).depth[0]
    assert (b.files, b.null_files, b.unknown_files, b.average_depth) == (1, 1, 0, 1.0)
    # Once the table indexes only its first column, deltalake reads no bounds of b in any
    # file: every file's range is unknown, and none is guessed.
    DeltaTable(path).alter.set_table_properties({"delta.dataSkippingNumIndexedCols": "1"})
    write_deltalake(path, pa.table({"a": [9], "b": [5]}), mode="append")
    b = zorder.describe(path, columns=["b"]).depth[0]
    assert (b.files, b.null_files, b.unknown_files, b.average_depth) == (0, 0, 3, 0.0)


def _rewritten_as_they_are(path: str) -> list[WrittenFile]:
    """Each file of the table as an optimize would describe it had it written it."""
    snapshot = load_snapshot(Storage.of(path))
    written = []
    for data_file, values in zip(snapshot.files, snapshot.files, strict=True):
        metadata = pq.read_metadata(snapshot.file_uri(data_file).removeprefix("file://"))
        schema = metadata.schema.to_arrow_schema()
        stats = stats_from_parquet(metadata, schema, indexed_columns(schema, {}))
        partition = {
            snapshot.schema.stored_name(c): snapshot.partition_text(c, v, time_zone=None)
            for c, v in zip(snapshot.partition_columns, values.partition, strict=True)
        }
        written.append(WrittenFile(data_file.path, data_file.size, stats, partition))
    return written


def test_a_rewrite_measured_from_footers_agrees_with_the_log(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    rng = random.Random(5)
    for _ in range(6):
        values = [rng.randrange(1000) for _ in range(5)]
        write_deltalake(
            path,
            pa.table(
                {
                    "day": [dt.date(2024, 1, 1 + v % 2) for v in values],
                    "i": values,
                    "s": [f"k{v:04d}é" for v in values],
                    "d": pa.array([decimal.Decimal(v) / 8 for v in values], pa.decimal128(9, 3)),
                    "ts": pa.array(
                        [
                            dt.datetime(2024, 1, 1, tzinfo=dt.UTC) + dt.timedelta(hours=v)
                            for v in values
                        ],
                        pa.timestamp("us", "UTC"),
                    ),
                    "ntz": pa.array(
                        [dt.datetime(2024, 1, 1) + dt.timedelta(minutes=v) for v in values],
                        pa.timestamp("us"),
                    ),
                    "day2": [dt.date(2020, 1, 1) + dt.timedelta(days=v) for v in values],
                    "n": pa.array([None] * 5, pa.float64()),
                }
            ),
            mode="append",
            partition_by=["day"],
        )
    snapshot = load_snapshot(Storage.of(path))
    columns = ["i", "s", "d", "ts", "ntz", "day2", "n"]
    logged = snapshot_depths(snapshot, columns)
    assert logged[0].average_depth > 1
    # Every file replaced by itself, described from its footer: the same depth.
    written = _rewritten_as_they_are(path)
    assert rewritten_depths(snapshot, columns, snapshot.files, written) == logged
    # Half replaced, half kept: the kept files still meet the rewritten ones.
    half = len(snapshot.files) // 2
    mixed = rewritten_depths(snapshot, columns, snapshot.files[:half], written[:half])
    assert mixed == logged
    # Nothing written in their place: only the kept files are measured.
    assert rewritten_depths(snapshot, columns, snapshot.files[:half], [])[0].files == (
        len(snapshot.files) - half
    )


def test_column_mapped_tables_are_measured_by_logical_names(tmp_path: Path) -> None:
    shutil.copytree(DATA / "table_with_column_mapping", tmp_path / "t")
    described = zorder.describe(str(tmp_path / "t"))
    assert described.depth
    assert all(d.files for d in described.depth)
    assert [d.column for d in described.depth] == list(described.columns)


@pytest.mark.parametrize("columns", [["a"], None])
def test_describe_measures_the_columns_it_shows(tmp_path: Path, columns: list[str] | None) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"a": [1, 2], "b": ["x", "y"], "c": [1.0, 2.0]}))
    described = zorder.describe(path, columns=columns)
    assert tuple(d.column for d in described.depth) == described.columns


def test_columns_without_one_order_are_unknown_not_an_error(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    table = pa.table({"n": pa.array([{"x": 1}, {"x": 2}]), "l": [[1], [2]], "bin": [b"a", b"b"]})
    write_deltalake(path, table)
    for depth in zorder.describe(path, columns=["n", "l", "bin"]).depth:
        assert (depth.files, depth.unknown_files) == (0, 1), depth  # a struct's bounds: nested
