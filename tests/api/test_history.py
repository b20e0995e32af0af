"""What Delta's own tools show of zorder's commits: delta-rs's ``history()`` and the log's
``commitInfo`` (which ``DESCRIBE HISTORY`` prints), and how many commits a run makes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable, write_deltalake

import zorder
from zorder.table import Storage
from zorder.table.clustering import latest_clustering


def _events(start: int, rows: int) -> pa.Table:
    return pa.table(
        {
            "a": list(range(start, start + rows)),
            "b": [i * 7 % 1000 for i in range(start, start + rows)],
            "day": [f"2026-11-0{1 + i % 3}" for i in range(start, start + rows)],
        }
    )


def _delta_rs_table(tmp_path: Path) -> str:
    path = str(tmp_path / "events")
    for start in range(0, 6000, 2000):  # three appends: several files a partition
        write_deltalake(path, _events(start, 2000), partition_by=["day"], mode="append")
    return path


def _commit_info(path: str, version: int) -> dict[str, Any]:
    """The version's commitInfo as the log file holds it."""
    log = Path(path) / "_delta_log" / f"{version:020d}.json"
    for line in log.read_text().splitlines():
        action = json.loads(line)
        if "commitInfo" in action:
            info: dict[str, Any] = action["commitInfo"]
            return info
    raise AssertionError(f"no commitInfo in {log}")


def _history(path: str) -> dict[int, dict[str, Any]]:
    return {int(h["version"]): h for h in DeltaTable(path).history()}


def test_an_optimize_that_keeps_its_spec_is_one_commit_that_says_what_it_did(
    tmp_path: Path,
) -> None:
    path = _delta_rs_table(tmp_path)
    table = zorder.Table(path)
    first = table.optimize(by=["a", "b"], engine="arrow")
    # A new spec: the data commit, then the spec's properties in a commit of their own
    # (deltalake's transaction API takes no table properties).
    assert first.data_version == 3
    assert first.version == 4
    assert _history(path)[4]["operation"] == "SET TBLPROPERTIES"

    before = DeltaTable(path).version()
    table.refresh()
    again = table.optimize(by=["a", "b"], full=True, engine="arrow")
    after = DeltaTable(path).version()
    assert after == before + 1  # one commit: the spec did not change
    assert again.version == again.data_version == after
    assert again.files_removed > 0
    assert again.files_added > 0

    # delta-rs's history() shows zorder's parameters in that commit...
    shown = _history(path)[after]
    assert shown["operation"] == "WRITE"  # deltalake's transaction API fixes the name
    parameters = shown["operationParameters"]
    assert parameters["zOrderBy"] == '["a","b"]'
    assert parameters["predicate"] == "[]"
    assert parameters["curve"] == "zorder"
    assert parameters["mode"] == "Append"  # deltalake's own keys stay
    summary = json.loads(shown["userMetadata"])
    assert summary == {
        "zorder": "optimize",
        "zOrderBy": ["a", "b"],
        "curve": "zorder",
        "numRemovedFiles": again.files_removed,
        "numRemovedBytes": again.bytes_removed,
        "numAddedFiles": again.files_added,
        "numAddedBytes": again.bytes_added,
        "numOutputRows": 6000,
        "runId": again.run_id,
    }
    # ...as the log itself holds it: commitInfo.userMetadata, a compact line of JSON.
    info = _commit_info(path, after)
    assert info["userMetadata"] == shown["userMetadata"]
    assert " " not in info["userMetadata"]
    # The removes' sizes are what the version before held.
    held = pa.table(DeltaTable(path, version=before).get_add_actions(flatten=True))
    assert again.bytes_removed == sum(held.column("size_bytes").to_pylist())
    # zorder still reads its own record of the run from the same commit.
    recorded = latest_clustering(Storage.of(path))
    assert recorded is not None
    assert recorded.run.id == again.run_id
    assert recorded.spec.columns == ("a", "b")
    [newest] = table.refresh().history(limit=1)
    assert newest.user_metadata == shown["userMetadata"]
    assert newest.clustering is not None
    assert newest.clustering.run.id == again.run_id


def test_an_optimize_of_chosen_partitions_records_its_predicate(tmp_path: Path) -> None:
    path = _delta_rs_table(tmp_path)
    zorder.optimize(None, path, by=["b", "a"], curve="hilbert", engine="arrow")
    where = "day = '2026-11-02'"
    before = DeltaTable(path).version()
    result = zorder.optimize(None, path, where=where, full=True, engine="arrow")
    assert DeltaTable(path).version() == before + 1 == result.version
    assert result.files_added == 1  # one partition rewritten
    shown = _history(path)[before + 1]
    assert shown["operationParameters"]["predicate"] == json.dumps([where])
    assert shown["operationParameters"]["zOrderBy"] == '["b","a"]'
    summary = json.loads(shown["userMetadata"])
    assert summary["predicate"] == where
    assert summary["curve"] == "hilbert"
    assert summary["numRemovedFiles"] == result.files_removed
    assert summary["numOutputRows"] == result.rows == 2000
    recorded = latest_clustering(Storage.of(path))
    assert recorded is not None
    assert recorded.where == where
    assert json.loads(_commit_info(path, before + 1)["zorder"])["where"] == where


def test_a_size_already_recorded_adds_no_properties_commit(tmp_path: Path) -> None:
    path = _delta_rs_table(tmp_path)
    zorder.optimize(
        None, path, by=["a", "b"], target_file_size="1MB", set_target_size=True, engine="arrow"
    )
    operations = [h["operation"] for h in DeltaTable(path).history()]
    before = DeltaTable(path).version()
    zorder.optimize(None, path, full=True, target_file_size="1MB", engine="arrow")
    assert DeltaTable(path).version() == before + 1
    assert _history(path)[before + 1]["operation"] == "WRITE"
    # A one-off size sizes its own run only: one commit, the recorded size kept.
    once = zorder.optimize(None, path, full=True, target_file_size="2MB", engine="arrow")
    assert once.version == once.data_version == before + 2
    assert DeltaTable(path).metadata().configuration["delta.targetFileSize"] == str(1024 * 1024)
    # Another size, asked to be recorded, is: in a commit of its own after the data's.
    changed = zorder.optimize(
        None, path, full=True, target_file_size="2MB", set_target_size=True, engine="arrow"
    )
    assert changed.version == changed.data_version + 1 == before + 4  # type: ignore[operator]
    latest = _history(path)[before + 4]
    assert latest["operation"] == "SET TBLPROPERTIES"
    assert json.loads(latest["operationParameters"]["properties"]) == {
        "delta.targetFileSize": str(2 * 1024 * 1024)
    }
    assert operations.count("SET TBLPROPERTIES") == 1


def test_a_write_says_what_it_wrote(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    pq.write_table(_events(0, 3000), source / "part-0.parquet")
    path = str(tmp_path / "t")
    written = zorder.write(str(source), path, by=["a", "b"], num_files=3, engine="arrow")
    shown = _history(path)[written.data_version]  # type: ignore[index]
    summary = json.loads(shown["userMetadata"])
    assert summary == {
        "zorder": "write",
        "zOrderBy": ["a", "b"],
        "curve": "zorder",
        "numRemovedFiles": 0,
        "numRemovedBytes": 0,
        "numAddedFiles": 3,
        "numAddedBytes": written.bytes_added,
        "numOutputRows": 3000,
        "runId": written.run_id,
    }
    assert "predicate" not in shown["operationParameters"]
    assert shown["operationParameters"]["zOrderBy"] == '["a","b"]'
