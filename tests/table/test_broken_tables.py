"""Tables whose log or files break the protocol: a ZorderError that says what, never a raw one."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import write_deltalake

import zorder
from zorder.errors import BrokenTableError, UnsupportedTableError, ZorderError

READERS: dict[str, Callable[[str], Any]] = {
    "to_arrow": lambda path: zorder.to_arrow(path),
    "explain": lambda path: zorder.explain(path, "a > 1"),
    "describe": lambda path: zorder.describe(path),
}


def three_versions(path: Path) -> None:
    for start in (0, 10, 20):
        write_deltalake(str(path), pa.table({"a": list(range(start, start + 10))}), mode="append")


def rewrite_commit(
    path: Path, version: int, edit: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
) -> None:
    commit = path / "_delta_log" / f"{version:020d}.json"
    actions = [json.loads(line) for line in commit.read_text().splitlines()]
    commit.write_text("\n".join(json.dumps(a) for a in edit(actions)) + "\n")


def no_protocol(path: Path) -> None:
    rewrite_commit(path, 0, lambda actions: [a for a in actions if "protocol" not in a])


def no_metadata(path: Path) -> None:
    rewrite_commit(path, 0, lambda actions: [a for a in actions if "metaData" not in a])


def missing_commit(path: Path) -> None:
    (path / "_delta_log" / f"{1:020d}.json").unlink()


def future_protocol(path: Path) -> None:
    def edit(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for action in actions:
            if "protocol" in action:
                action["protocol"] = {"minReaderVersion": 4, "minWriterVersion": 8}
        return actions

    rewrite_commit(path, 0, edit)


def missing_data_file(path: Path) -> None:
    next(path.glob("*.parquet")).unlink()


@pytest.mark.parametrize(
    ("breakage", "error"),
    [
        (no_protocol, ZorderError),
        (no_metadata, ZorderError),
        (missing_commit, BrokenTableError),
        (future_protocol, UnsupportedTableError),
    ],
    ids=["no-protocol", "no-metadata", "missing-commit", "future-protocol"],
)
@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_broken_log_is_named(
    tmp_path: Path, breakage: Callable[[Path], None], error: type[ZorderError], reader: str
) -> None:
    path = tmp_path / "t"
    three_versions(path)
    breakage(path)
    with pytest.raises(error) as raised:
        READERS[reader](str(path))
    assert str(path) in str(raised.value)


def test_a_missing_data_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "t"
    three_versions(path)
    missing_data_file(path)
    with pytest.raises(BrokenTableError, match=r"\.parquet.*which storage does not hold"):
        zorder.to_arrow(str(path))


def _parquet_folder(path: Path, *, partitioned: bool) -> None:
    import pyarrow.parquet as pq

    rows = pa.table({"a": [1, 2, 3], "day": ["x", "y", "x"]})
    if partitioned:  # as Spark's or pyarrow's partitioned writes lay them out: day=x/...
        pq.write_to_dataset(rows, str(path), partition_cols=["day"])
    else:
        path.mkdir()
        pq.write_table(rows, path / "part-00000.snappy.parquet")


@pytest.mark.parametrize(
    ("make", "says", "nothing"),
    [
        (lambda p: None, r"\(no such path\)", True),
        (lambda p: p.mkdir(), r"\(the folder exists but holds no _delta_log\)", True),
        (lambda p: (p.mkdir(), (p / "notes.txt").write_text("x")), "holds no _delta_log", True),
        (lambda p: p.write_text("a\n1\n"), r"\(a file, not a table's folder\)", False),
        (
            lambda p: (p / "_delta_log").mkdir(parents=True),
            "_delta_log holds no readable commit",
            False,
        ),
        (lambda p: _parquet_folder(p, partitioned=False), "a folder of Parquet files", False),
        (lambda p: _parquet_folder(p, partitioned=True), "a folder of Parquet files", False),
    ],
    ids=["missing", "empty", "other files", "a file", "empty log", "parquet", "hive parquet"],
)
def test_what_is_there_instead_of_a_table_is_named(
    tmp_path: Path, make: Callable[[Path], Any], says: str, nothing: bool
) -> None:
    """Nothing of a table there is a TableNotFoundError; something else, the NotADeltaTableError
    it subclasses. Either is raised on opening, unless the handle is opened to create one."""
    path = tmp_path / "t"
    make(path)
    for reader in READERS.values():
        with pytest.raises(
            zorder.errors.NotADeltaTableError, match=f"not a Delta table: .*{says}"
        ) as e:
            reader(str(path))
        assert isinstance(e.value, zorder.errors.TableNotFoundError) is nothing
    with pytest.raises(
        zorder.errors.NotADeltaTableError, match=f"not a Delta table: .*{says}"
    ) as e:
        zorder.Table(str(path))
    assert isinstance(e.value, zorder.errors.TableNotFoundError) is nothing
    created = zorder.Table(str(path), create=True)
    with pytest.raises(zorder.errors.NotADeltaTableError, match=f"{says}.*; nothing to optimize"):
        created.optimize(by=["a"], engine="arrow")
    with pytest.raises(zorder.errors.NotADeltaTableError, match=f"{says}.*; nothing to restore"):
        created.restore(version=0)


def test_a_handle_to_create_a_table_cannot_time_travel(tmp_path: Path) -> None:
    with pytest.raises(
        zorder.errors.InvalidArgumentError, match="create=True opens a table to write"
    ):
        zorder.Table(str(tmp_path / "t"), create=True, version=0)
    with pytest.raises(
        zorder.errors.InvalidArgumentTypeError, match="create must be True or False"
    ):
        zorder.Table(str(tmp_path / "t"), create="yes")  # type: ignore[arg-type]


def test_a_parquet_folder_is_told_how_to_become_a_table(tmp_path: Path) -> None:
    path = tmp_path / "events"
    _parquet_folder(path, partitioned=True)
    with pytest.raises(zorder.errors.NotADeltaTableError) as raised:
        zorder.describe(str(path))
    assert str(raised.value) == (
        f"not a Delta table: {path} (a folder of Parquet files, not a Delta table: make one "
        f"of it with `zorder write {path} DEST --by COLUMNS` (zorder.write in Python))"
    )
