"""``vacuum`` deletes only what Delta Spark's VACUUM may: never a hidden name at any depth,
never a table nested in this one's directory, never a live file.

Tables are written by delta-rs; every stray file is made old (``os.utime``) so
that only the rules, not the retention, keep it.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from typer.testing import CliRunner

import zorder
from tests.delta_writer import set_properties
from zorder.cli import app
from zorder.table.delta.maintenance import vacuum_hidden

runner = CliRunner()

# A partition column whose directories start with "_", and values whose directory
# names are escaped ("a b" -> "_p=a%20b") or look hidden or like another column.
ODD = ["a b", "k=v", "_u", ".d", "100%", None]
MONTH_AGO = time.time() - 30 * 24 * 3600


def _rows(start: int, count: int) -> pa.Table:
    return pa.table(
        {
            "_p": [ODD[i % len(ODD)] for i in range(start, start + count)],
            "x": list(range(start, start + count)),
        }
    )


def _on_disk(root: Path) -> set[str]:
    """Every file under ``root`` but the table's own log, relative to it."""
    found = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    return {p for p in found if not p.startswith("_delta_log/")}


def _put(
    root: Path, relative: str, data: bytes = b"no version of the table references this"
) -> str:
    file = root / relative
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_bytes(data)
    return relative


def _age(root: Path) -> None:
    """Date every file but the outer log a month back: any retention would select it."""
    for file in root.rglob("*"):
        if file.is_file() and not file.relative_to(root).as_posix().startswith("_delta_log/"):
            os.utime(file, (MONTH_AGO, MONTH_AGO))


def _live(root: Path) -> set[str]:
    return {
        Path(u.removeprefix("file://")).relative_to(root).as_posix()
        for u in _table(root).file_uris()
    }


def _table(root: Path, version: int | None = None) -> DeltaTable:
    return DeltaTable(str(root), version=version)


def _sorted_rows(rows: pa.Table) -> list[tuple[Any, ...]]:
    columns = sorted(rows.column_names)
    return sorted(zip(*[rows.column(c).to_pylist() for c in columns], strict=True), key=repr)


def _kernel_rows(kernel: Any, root: Path) -> list[tuple[Any, ...]]:
    """The rows DuckDB's delta_scan (the Delta kernel) reads, columns by name."""
    found = kernel.sql(f"SELECT * FROM delta_scan('{root}')")
    order = sorted(range(len(found.columns)), key=lambda i: found.columns[i])
    return sorted((tuple(row[i] for i in order) for row in found.fetchall()), key=repr)


def _nest(root: Path, relative: str) -> Path:
    """A Delta table of its own at ``relative`` in ``root``, with a removed file."""
    nested = root / relative
    write_deltalake(str(nested), pa.table({"y": [1, 2]}))
    write_deltalake(str(nested), pa.table({"y": [3, 4, 5]}), mode="overwrite")
    return nested


@pytest.fixture
def table(tmp_path: Path) -> Path:
    """A table partitioned by ``_p`` (odd values), a version of it overwritten, two
    tables nested in its directory, and files no version references, hidden or not."""
    root = tmp_path / "outer"
    write_deltalake(str(root), _rows(0, 12), partition_by=["_p"])
    write_deltalake(str(root), _rows(12, 6), partition_by=["_p"], mode="append")
    write_deltalake(str(root), _rows(100, 12), partition_by=["_p"], mode="overwrite")
    _nest(root, "nested")
    _nest(root, "_p=_u/inner")
    return root


def _strays(root: Path) -> tuple[set[str], set[str]]:
    """Old files no version references: those Delta Spark's VACUUM deletes, and those
    it never looks at (hidden names at any depth) or that are kept here (anything next
    to a _delta_log)."""
    garbage = {
        _put(root, "orphan.parquet"),
        _put(root, "_p=a%20b/stray.parquet"),
        _put(root, "_p=_u/stray.parquet"),  # the value starts with "_", the column too
        _put(root, "zorder-deadbeef-000000000000/zorder_file=0/part-00000.parquet"),
        _put(root, "_change_data/cdc-00000.parquet"),  # Delta vacuums the change feed
        _put(root, "plain/dir/old.parquet"),
        _put(root, "odd name #1 %20 ü.parquet"),
    }
    hidden = {
        _put(root, "_staging/part-00000.parquet"),
        _put(root, "_staging/deeper/part-00001.parquet"),
        _put(root, ".hidden/part-00000.parquet"),
        _put(root, "_pp=1/part-00000.parquet"),  # not "_p=": not a partition's directory
        _put(root, "_p_backup/part-00000.parquet"),
        _put(root, "_p=a%20b/_tmp/part-00000.parquet"),
        _put(root, "_p=a%20b/.part-00000.parquet.crc"),
        _put(root, "_p=k%3Dv/_SUCCESS"),
        # A _delta_log of no table: the directory holding it counts as a table's all the same.
        _put(root, "fake/_delta_log/00000000000000000000.json", b"{}"),
        _put(root, "fake/part-00000.parquet"),
        _put(root, "plain/deep/er/_delta_log/part-00000.parquet"),
        _put(root, "plain/deep/.cache/part-00000.parquet"),
        _put(root, "zorder-deadbeef-000000000000/_temporary/0/part-00000.parquet"),
    }
    return garbage, hidden


def test_vacuum_deletes_what_it_lists_and_nothing_hidden_nested_or_live(
    table: Path, kernel: Any
) -> None:
    root = table
    garbage, hidden = _strays(root)
    nested_files = {f for f in _on_disk(root) if f.startswith(("nested/", "_p=_u/inner/"))}
    live = _live(root)
    removed = _on_disk(root) - live - nested_files - garbage - hidden
    # The two overwritten versions' files, in every partition directory (odd names too).
    assert len(removed) == 2 * len(ODD)
    assert all(f.startswith("_p=") and "/part-" in f for f in removed)
    rows = _sorted_rows(_table(root).to_pyarrow_table())
    assert _kernel_rows(kernel, root) == rows
    nested_rows = {
        n: (_sorted_rows(_table(root / n).to_pyarrow_table()), _kernel_rows(kernel, root / n))
        for n in ("nested", "_p=_u/inner")
    }
    _age(root)
    before = _on_disk(root)

    # Within the week only the strays are old enough: a month back, against the
    # removes committed just now.
    assert set(zorder.vacuum(str(root)).files) == garbage

    listed = zorder.vacuum(str(root), retain_hours=0, force=True)
    assert listed.dry_run
    assert set(listed.files) == garbage | removed
    assert _on_disk(root) == before  # a dry run deletes nothing

    deleted = zorder.vacuum(str(root), retain_hours=0, force=True, dry_run=False)
    assert deleted.files == listed.files
    assert _on_disk(root) == before - garbage - removed
    assert live | hidden | nested_files <= _on_disk(root)

    assert _sorted_rows(_table(root).to_pyarrow_table()) == rows
    assert _kernel_rows(kernel, root) == rows
    for nested, (by_deltalake, by_kernel) in nested_rows.items():
        assert _sorted_rows(_table(root / nested).to_pyarrow_table()) == by_deltalake
        assert _kernel_rows(kernel, root / nested) == by_kernel
        # Even the file the nested table's overwrite removed stays: its version 0 reads.
        assert _table(root / nested, version=0).to_pyarrow_table().num_rows == 2
    assert zorder.vacuum(str(root), retain_hours=0, force=True).files == ()


def test_a_nested_table_whose_log_is_recent_keeps_its_old_data_files(tmp_path: Path) -> None:
    # Only the data files are past the retention: the nested table is found by its
    # _delta_log on storage, not by what deltalake happens to list.
    root = tmp_path / "outer"
    write_deltalake(str(root), pa.table({"a": [1, 2, 3]}))
    nested = _nest(root, "sub/nested")
    for file in nested.glob("*.parquet"):
        os.utime(file, (MONTH_AGO, MONTH_AGO))
    stray = _put(root, "sub/stray.parquet")
    os.utime(root / stray, (MONTH_AGO, MONTH_AGO))

    assert zorder.vacuum(str(root)).files == (stray,)
    zorder.vacuum(str(root), dry_run=False)
    assert not (root / stray).exists()
    assert _table(nested).to_pyarrow_table().column("y").to_pylist() == [3, 4, 5]
    assert _table(nested, version=0).to_pyarrow_table().num_rows == 2


def test_uniform_iceberg_metadata_is_never_vacuumed(tmp_path: Path) -> None:
    root = tmp_path / "uniform"
    write_deltalake(str(root), pa.table({"a": [1, 2, 3]}))
    set_properties(root, {"delta.universalFormat.enabledFormats": "iceberg"})
    kept = {
        _put(root, "metadata/v1.metadata.json", b"{}"),
        _put(root, "metadata/snap-1.avro"),
    }
    orphan = _put(root, "orphan.parquet")
    _age(root)

    assert zorder.vacuum(str(root), retain_hours=0, force=True, dry_run=False).files == (orphan,)
    assert kept <= _on_disk(root)


def test_the_cli_deletes_only_what_it_lists(tmp_path: Path) -> None:
    root = tmp_path / "_tables" / "outer"  # names above the table's root hide nothing
    write_deltalake(str(root), pa.table({"a": [1, 2, 3]}))
    nested = _nest(root, "nested")
    orphan = _put(root, "orphan.parquet")
    staged = _put(root, "_staging/part-00000.parquet")
    _age(root)
    arguments = ["vacuum", str(root), "--retain-hours", "0", "--force", "--json"]

    listed = runner.invoke(app, arguments)
    assert listed.exit_code == 0, listed.output
    assert json.loads(listed.stdout)["files"] == [orphan]
    deleted = runner.invoke(app, [*arguments, "--delete"])
    assert deleted.exit_code == 0, deleted.output
    assert json.loads(deleted.stdout)["files"] == [orphan]
    assert not (root / orphan).exists()
    assert (root / staged).exists()
    assert _table(nested).to_pyarrow_table().column("y").to_pylist() == [3, 4, 5]


@pytest.mark.parametrize(
    ("name", "hidden"),
    [
        ("_delta_log", True),
        ("_staging", True),
        (".hidden", True),
        ("_SUCCESS", True),
        (".part-0.parquet.crc", True),
        ("_p=1", False),  # a partition's directory of column _p
        ("_p=", False),
        ("_pp=1", True),  # column _pp is no partition column
        ("_p", True),
        ("_change_data", False),
        ("_delta_index_x", False),
        ("part-0.parquet", False),
        ("metadata", False),  # only with UniForm Iceberg on
        ("p=_", False),
    ],
)
def test_hidden_names_are_delta_sparks(name: str, hidden: bool) -> None:
    assert vacuum_hidden(name, ("_p", "q")) is hidden


def test_iceberg_metadata_is_hidden_only_with_uniform() -> None:
    assert vacuum_hidden("metadata", (), iceberg=True)
    assert not vacuum_hidden("metadata", ())
    assert not vacuum_hidden("metadata2", (), iceberg=True)


@pytest.mark.parametrize("hours", [float("nan"), float("inf"), 1e30, -1.0])
def test_a_retention_that_is_not_a_number_of_hours_is_refused(tmp_path: Path, hours: float) -> None:
    path = tmp_path / "t"
    write_deltalake(path, pa.table({"a": [1]}))
    with pytest.raises(zorder.errors.InvalidArgumentError, match="retain_hours must be from 0 to"):
        zorder.vacuum(str(path), retain_hours=hours, force=True)
    result = CliRunner().invoke(app, ["vacuum", str(path), "--retain-hours", str(hours), "--force"])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
