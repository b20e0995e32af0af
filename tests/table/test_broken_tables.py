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
