"""``schema_mode``: the strict default's error, what ``"merge"`` refuses, and the CLI's
``--schema-mode merge``, all in process (no Spark). Appends read back by delta-rs,
DuckDB's delta_scan and ``zorder.to_arrow``; the Spark engine and Spark's reads are in
tests/spark/test_schema_evolution.py."""

from __future__ import annotations

import datetime
import json
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake
from deltalake import Schema as DeltaSchema
from typer.testing import CliRunner

import zorder
from tests.delta_writer import enable_deletion_vectors
from zorder.cli import app
from zorder.errors import (
    ConcurrentCommitError,
    InvalidArgumentError,
    SchemaMismatchError,
    UnsupportedTableError,
)
from zorder.table.delta import evolution
from zorder.table.delta.snapshot import load_snapshot
from zorder.table.storage import Storage

COLUMNS = ["day", "x", "extra"]


def rows(path: Path, *columns: str) -> Counter[tuple[Any, ...]]:
    table = DeltaTable(str(path)).to_pyarrow_table()
    return Counter(zip(*[table.column(c).to_pylist() for c in columns], strict=True))


def parquet(path: Path, **columns: Any) -> str:
    pq.write_table(pa.table(columns), path)
    return str(path)


def first_batch(tmp_path: Path) -> str:
    return parquet(tmp_path / "one.parquet", day=["a", "b"] * 5, x=list(range(10)))


def with_extra(tmp_path: Path, start: int = 10) -> str:
    return parquet(
        tmp_path / f"two-{start}.parquet",
        day=["a", "b"] * 5,
        x=list(range(start, start + 10)),
        extra=[f"s{i}" for i in range(start, start + 10)],
    )


def log_entries(path: Path, version: int) -> list[dict[str, Any]]:
    text = (path / "_delta_log" / f"{version:020d}.json").read_text()
    return [json.loads(line) for line in text.splitlines()]


def test_the_strict_default_refuses_a_new_column_and_names_the_way_forward(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t"
    zorder.write(first_batch(tmp_path), str(path), by=["x"], engine="arrow")
    before = DeltaTable(str(path)).version()
    with pytest.raises(SchemaMismatchError) as refused:
        zorder.write(with_extra(tmp_path), str(path), mode="append", engine="arrow")
    message = str(refused.value)
    assert "'extra' is not in the table" in message
    assert 'schema_mode="merge"' in message
    assert "--schema-mode merge" in message
    assert DeltaTable(str(path)).version() == before  # nothing committed


def test_a_bad_schema_mode_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    path = tmp_path / "t"
    zorder.write(first_batch(tmp_path), str(path), by=["x"], engine="arrow")
    before = sorted(p.name for p in path.rglob("*"))
    for bad in ("overwrite", "MERGE", True):
        with pytest.raises(InvalidArgumentError, match=r"unknown schema_mode .*accepted: None"):
            zorder.write(
                with_extra(tmp_path),
                str(path),
                mode="append",
                engine="arrow",
                schema_mode=bad,  # type: ignore[arg-type]
            )
    with pytest.raises(InvalidArgumentError, match="unknown schema_mode"):
        zorder.foreach_batch(str(path), schema_mode="add")  # type: ignore[arg-type]
    assert sorted(p.name for p in path.rglob("*")) == before


@pytest.mark.parametrize("schema_mode", [None, "merge"])
def test_a_changed_type_is_refused_naming_both_types_and_type_widening(
    tmp_path: Path, schema_mode: Any
) -> None:
    path = tmp_path / "t"
    zorder.write(first_batch(tmp_path), str(path), by=["x"], engine="arrow")
    before = DeltaTable(str(path)).version()
    changed = parquet(
        tmp_path / "changed.parquet",
        day=["a"],
        x=pa.array([1], pa.int32()),
        extra=["new"],
    )
    with pytest.raises(SchemaMismatchError) as refused:
        zorder.write(changed, str(path), mode="append", engine="arrow", schema_mode=schema_mode)
    message = str(refused.value)
    assert "'x' is bigint in the table but int in the data" in message
    assert "typeWidening" in message
    assert DeltaTable(str(path)).version() == before
    assert DeltaTable(str(path)).schema().to_arrow().names == ["day", "x"]  # nothing added


@pytest.mark.parametrize("partition_by", [None, ["day"]])
def test_merge_adds_the_column_in_a_commit_of_its_own_then_the_rows(
    tmp_path: Path, kernel: duckdb.DuckDBPyConnection, partition_by: list[str] | None
) -> None:
    path = tmp_path / "t"
    zorder.write(
        first_batch(tmp_path), str(path), by=["x"], partition_by=partition_by, engine="arrow"
    )
    spec = DeltaTable(str(path)).metadata().configuration["zorder.clustering.columns"]
    before = DeltaTable(str(path)).version()
    metrics = zorder.write(
        with_extra(tmp_path), str(path), mode="append", engine="arrow", schema_mode="merge"
    )
    assert metrics.engine == "arrow"
    # The column's commit: deltalake's ADD COLUMN, schema only; then the data's commit.
    added = log_entries(path, before + 1)
    assert added[0]["commitInfo"]["operation"] == "ADD COLUMN"
    assert not any("add" in a or "remove" in a for a in added)
    assert metrics.data_version == before + 2
    data = [a["add"] for a in log_entries(path, before + 2) if "add" in a]
    assert data
    assert all("extra" in pq.read_schema(path / a["path"]).names for a in data)
    assert all(json.loads(a["stats"])["nullCount"]["extra"] == 0 for a in data)
    expected = Counter(
        [(d, x, None) for d, x in zip(["a", "b"] * 5, range(10), strict=True)]
        + [(d, x, f"s{x}") for d, x in zip(["a", "b"] * 5, range(10, 20), strict=True)]
    )
    assert rows(path, *COLUMNS) == expected
    kernel_found = kernel.sql(f"SELECT day, x, extra FROM delta_scan('{path}')").fetchall()
    assert Counter(kernel_found) == expected
    table = zorder.to_arrow(str(path))
    assert Counter(zip(*[table.column(c).to_pylist() for c in COLUMNS], strict=True)) == expected
    # Not a clustering column: the recorded spec keeps its columns.
    configuration = DeltaTable(str(path)).metadata().configuration
    assert configuration["zorder.clustering.columns"] == spec == '["x"]'
    # Filters on the new column skip and answer exactly.
    assert zorder.to_arrow(str(path), "extra = 's12'").column("x").to_pylist() == [12]
    assert zorder.to_arrow(str(path), "extra IS NULL").num_rows == 10
    # A batch without the column writes it as NULL (merge); strict refuses it.
    without = parquet(tmp_path / "three.parquet", day=["a"], x=[99])
    with pytest.raises(SchemaMismatchError, match="'extra' is missing from the data"):
        zorder.write(without, str(path), mode="append", engine="arrow")
    version = DeltaTable(str(path)).version()
    zorder.write(without, str(path), mode="append", engine="arrow", schema_mode="merge")
    assert DeltaTable(str(path)).version() == version + 1  # no column to add: one commit
    assert rows(path, *COLUMNS) == expected + Counter([("a", 99, None)])


def test_merge_on_a_column_mapped_table_gives_ids_and_physical_names(
    tmp_path: Path, kernel: duckdb.DuckDBPyConnection
) -> None:
    path = tmp_path / "t"
    for batch in range(2):
        write_deltalake(
            path,
            pa.table({"day": ["a", "b"] * 5, "x": list(range(10 * batch, 10 * batch + 10))}),
            partition_by=["day"],
            mode="append",
            configuration={"delta.columnMapping.mode": "id"} if batch == 0 else None,
        )
    zorder.write(
        with_extra(tmp_path, 20),
        str(path),
        by=["x"],
        mode="append",
        engine="arrow",
        schema_mode="merge",
    )
    table = DeltaTable(str(path))
    fields = {f["name"]: f for f in json.loads(table.schema().to_json())["fields"]}
    extra = fields["extra"]["metadata"]
    assert extra["delta.columnMapping.id"] == 3
    assert extra["delta.columnMapping.physicalName"].startswith("col-")
    assert table.metadata().configuration["delta.columnMapping.maxColumnId"] == "3"
    written = next(path.glob("zorder-*/**/*.parquet"))
    schema = pq.read_schema(written)
    assert extra["delta.columnMapping.physicalName"] in schema.names
    assert (
        schema.field(extra["delta.columnMapping.physicalName"]).metadata[b"PARQUET:field_id"]
        == b"3"
    )
    expected = Counter(
        [(d, x, None) for d, x in zip(["a", "b"] * 10, range(20), strict=True)]
        + [(d, x, f"s{x}") for d, x in zip(["a", "b"] * 5, range(20, 30), strict=True)]
    )
    kernel_found = kernel.sql(f"SELECT day, x, extra FROM delta_scan('{path}')").fetchall()
    assert Counter(kernel_found) == expected
    found = zorder.to_arrow(str(path))
    assert Counter(zip(*[found.column(c).to_pylist() for c in COLUMNS], strict=True)) == expected


def test_merge_refuses_an_unpartitioned_column_mapped_table_it_cannot_evolve(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t"
    write_deltalake(
        path,
        pa.table({"day": ["a"], "x": [1]}),
        configuration={"delta.columnMapping.mode": "name"},
    )
    with pytest.raises(UnsupportedTableError, match=r"ALTER TABLE .* ADD COLUMNS"):
        zorder.write(
            with_extra(tmp_path),
            str(path),
            by=["x"],
            mode="append",
            engine="arrow",
            schema_mode="merge",
        )
    assert DeltaTable(str(path)).version() == 0


def test_cli_write_with_schema_mode_merge(tmp_path: Path) -> None:
    path = tmp_path / "t"
    runner = CliRunner()
    made = runner.invoke(app, ["write", first_batch(tmp_path), str(path), "--by", "x"])
    assert made.exit_code == 0, made.output
    strict = runner.invoke(app, ["write", with_extra(tmp_path), str(path), "--mode", "append"])
    assert strict.exit_code != 0
    assert "--schema-mode merge" in " ".join(strict.output.split())
    merged = runner.invoke(
        app,
        ["write", with_extra(tmp_path), str(path), "--mode", "append", "--schema-mode", "merge"],
    )
    assert merged.exit_code == 0, merged.output
    assert rows(path, "x", "extra") == Counter(
        [(x, None) for x in range(10)] + [(x, f"s{x}") for x in range(10, 20)]
    )
    bad = runner.invoke(
        app, ["write", with_extra(tmp_path), str(path), "--mode", "append", "--schema-mode", "add"]
    )
    assert bad.exit_code != 0


def test_merge_refuses_a_column_mapped_table_of_table_features(tmp_path: Path) -> None:
    # deltalake's set_table_properties, which raises maxColumnId, would add features
    # (variantType) to such a protocol: refused, naming the way forward.
    path = tmp_path / "t"
    write_deltalake(
        path,
        pa.table({"day": ["a"], "x": [1]}),
        partition_by=["day"],
        configuration={"delta.columnMapping.mode": "name"},
    )
    enable_deletion_vectors(path)
    before = DeltaTable(str(path)).version()
    with pytest.raises(UnsupportedTableError, match="protocol lists table features"):
        zorder.write(
            with_extra(tmp_path),
            str(path),
            by=["x"],
            mode="append",
            engine="arrow",
            schema_mode="merge",
        )
    assert DeltaTable(str(path)).version() == before


def test_merge_refuses_a_batch_without_a_not_null_column(tmp_path: Path) -> None:
    path = tmp_path / "t"
    schema = pa.schema([pa.field("day", pa.string()), pa.field("x", pa.int64(), nullable=False)])
    write_deltalake(path, pa.table({"day": ["a"], "x": [1]}, schema=schema))
    without = parquet(tmp_path / "without.parquet", day=["b"], extra=["e"])
    with pytest.raises(SchemaMismatchError, match="'x' is missing from the data and NOT NULL"):
        zorder.write(
            without, str(path), by=["day"], mode="append", engine="arrow", schema_mode="merge"
        )
    assert DeltaTable(str(path)).version() == 0
    assert DeltaTable(str(path)).schema().to_arrow().names == ["day", "x"]


@pytest.mark.parametrize(
    ("kind", "values"),
    [
        # Each holds the value the filters that replace no partition are on, and NULL.
        ("int", pa.array([0, 7, None] * 4, pa.int32())),
        ("date", pa.array([datetime.date(1970, 1, 1), datetime.date(2024, 5, 1), None] * 4)),
    ],
)
def test_merge_on_a_column_mapped_table_partitioned_by_a_typed_column(
    tmp_path: Path, kernel: duckdb.DuckDBPyConnection, kind: str, values: pa.Array
) -> None:
    # The partition filters are parsed by the partition column's type: a value of it.
    path = tmp_path / "t"
    write_deltalake(
        path,
        pa.table({"day": values, "x": list(range(12))}),
        partition_by=["day"],
        configuration={"delta.columnMapping.mode": "name"},
    )
    table_id = DeltaTable(str(path)).metadata().id
    before = DeltaTable(str(path)).version()
    batch = tmp_path / "two.parquet"
    pq.write_table(
        pa.table({"day": values, "x": list(range(12, 24)), "extra": [f"s{i}" for i in range(12)]}),
        batch,
    )
    metrics = zorder.write(
        str(batch), str(path), by=["x"], mode="append", engine="arrow", schema_mode="merge"
    )
    assert metrics.data_version == before + 3  # maxColumnId, the schema, the data
    for version in (before + 1, before + 2):
        assert not any("add" in a or "remove" in a for a in log_entries(path, version))
    assert DeltaTable(str(path)).metadata().id == table_id
    days = values.to_pylist()
    expected = Counter(
        [(d, x, None) for d, x in zip(days, range(12), strict=True)]
        + [(d, x, f"s{x - 12}") for d, x in zip(days, range(12, 24), strict=True)]
    )
    kernel_found = kernel.sql(f"SELECT day, x, extra FROM delta_scan('{path}')").fetchall()
    assert Counter(kernel_found) == expected
    found = zorder.to_arrow(str(path))
    assert Counter(zip(*[found.column(c).to_pylist() for c in COLUMNS], strict=True)) == expected


def test_merge_refuses_when_another_writer_commits_between_its_two_commits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another writer (zorder itself, adding "other") commits right after the
    # maxColumnId commit: the overwrite, based on the old schema, would drop "other".
    path = tmp_path / "t"
    write_deltalake(
        path,
        pa.table({"day": ["a", "b"], "x": [1, 2]}),
        partition_by=["day"],
        configuration={"delta.columnMapping.mode": "name"},
    )
    original = evolution._raise_max_id
    storage = Storage.of(str(path))
    calls = []

    def then_another_writer(table: DeltaTable, max_id: int) -> None:
        original(table, max_id)
        calls.append(max_id)
        if len(calls) == 1:
            other = DeltaSchema.from_arrow(pa.schema([("other", pa.int64())]))
            evolution.add_columns(storage, load_snapshot(storage), other)

    monkeypatch.setattr(evolution, "_raise_max_id", then_another_writer)
    before = DeltaTable(str(path)).version()
    with pytest.raises(ConcurrentCommitError, match="run again"):
        zorder.write(
            with_extra(tmp_path),
            str(path),
            by=["x"],
            mode="append",
            engine="arrow",
            schema_mode="merge",
        )
    table = DeltaTable(str(path))
    assert table.version() == before + 3  # ours (maxColumnId), the other's two
    assert table.schema().to_arrow().names == ["day", "x", "other"]
    found = zorder.to_arrow(str(path))  # (delta-rs reads this mapped table's x as NULL)
    assert Counter(zip(*[found.column(c).to_pylist() for c in ("x", "other")], strict=True)) == (
        Counter([(1, None), (2, None)])
    )
    # Run again: on the new version, both columns kept.
    zorder.write(
        with_extra(tmp_path),
        str(path),
        by=["x"],
        mode="append",
        engine="arrow",
        schema_mode="merge",
    )
    assert DeltaTable(str(path)).schema().to_arrow().names == ["day", "x", "other", "extra"]
    found = zorder.to_arrow(str(path))
    kept = ("x", "other", "extra")
    assert Counter(zip(*[found.column(c).to_pylist() for c in kept], strict=True)) == Counter(
        [(1, None, None), (2, None, None)] + [(x, None, f"s{x}") for x in range(10, 20)]
    )
