"""The notes a run gives, followed as printed: the API call, and the CLI command run as a
child process; and what a one-off size does to the table's recorded target.

The runs are the in-process engine's (a path written, no Spark): the notes are the same
whichever engine wrote the files.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

import zorder
from zorder.errors import InvalidArgumentError

ROOT = Path(__file__).resolve().parents[2]
TARGET = "delta.targetFileSize"


def _source(directory: Path, rows: int = 20_000, *, days: int = 0) -> str:
    directory.mkdir()
    ids = pa.array(range(rows), pa.int64())
    columns = {"a": pa.compute.multiply(ids, 7919), "b": pa.compute.bit_wise_and(ids, 255)}
    if days:
        columns["day"] = pa.array([f"d{i % days}" for i in range(rows)])
    pq.write_table(pa.table(columns), directory / "part-0.parquet")
    return str(directory)


def _rows(path: str) -> list[tuple[int, int]]:
    table = DeltaTable(path).to_pyarrow_table(columns=["a", "b"])
    return sorted(zip(table["a"].to_pylist(), table["b"].to_pylist(), strict=True))


def _recorded(path: str) -> str | None:
    return DeltaTable(path).metadata().configuration.get(TARGET)


def _zorder(command: str) -> subprocess.CompletedProcess[str]:
    """``command`` (``zorder ...``, as a note prints it) run with this worktree's zorder."""
    words = shlex.split(command)
    assert words[0] == "zorder"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "zorder", *words[1:], "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _one_file_note(notes: tuple[str, ...]) -> str:
    assert len(notes) == 1, notes
    return notes[0]


@pytest.mark.parametrize("days", [0, 3])
def test_the_one_file_note_s_api_call_gives_smaller_files(tmp_path: Path, days: int) -> None:
    path = str(tmp_path / "t")
    partition_by = ["day"] if days else None
    written = zorder.write(
        _source(tmp_path / "s", days=days), path, by=["a", "b"], partition_by=partition_by
    )
    note = _one_file_note(written.notes)
    recorded = _recorded(path)
    expected = _rows(path)
    call = re.search(r"optimize\(full=True, target_file_size=(\d+)\)", note)
    assert call is not None, note
    fixed = zorder.optimize(None, path, full=True, target_file_size=int(call.group(1)))
    assert fixed.notes == ()  # no partition is left in one file
    per_partition = max(days, 1)
    assert fixed.files_added >= 6 * per_partition  # about eight a partition
    assert _rows(path) == expected
    assert _recorded(path) == recorded  # a one-off: the table's target is as it was


def test_the_one_file_note_s_cli_command_runs_as_printed(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    note = _one_file_note(zorder.write(_source(tmp_path / "s"), path, by=["a", "b"]).notes)
    recorded = _recorded(path)
    expected = _rows(path)
    command = re.search(r"CLI: (zorder optimize [^)]*)\)", note)
    assert command is not None, note
    done = _zorder(command.group(1))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["files_added"] >= 6
    assert result["notes"] == []
    assert _rows(path) == expected
    assert _recorded(path) == recorded

    # With the note's --set-target-size the size becomes the table's, which later runs use.
    size = re.search(r"--target-file-size (\d+)", command.group(1))
    assert size is not None
    done = _zorder(f"{command.group(1)} --set-target-size")
    assert done.returncode == 0, done.stderr
    assert _recorded(path) == size.group(1)


def test_nothing_to_optimize_says_full_which_then_reclusters(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    zorder.write(_source(tmp_path / "s"), path, by=["a", "b"], num_files=4)
    idle = zorder.optimize(None, path, num_files=8)
    assert idle.files_added == 0
    assert "(full=True, CLI --full, reclusters every file)" in idle.notes[0]
    done = zorder.optimize(None, path, num_files=8, full=True)
    assert (done.files_removed, done.files_added) == (4, 8)


def test_a_one_off_num_files_leaves_the_recorded_target(tmp_path: Path) -> None:
    """The creating write records its size; later runs' num_files or target_file_size size
    themselves only, unless set_target_size=True."""
    path = str(tmp_path / "t")
    zorder.write(_source(tmp_path / "s"), path, by=["a", "b"], target_file_size="64MB")
    assert _recorded(path) == str(64 * 2**20)
    zorder.optimize(None, path, full=True, num_files=24)
    zorder.optimize(None, path, full=True, target_file_size="10KB")
    zorder.write(_source(tmp_path / "s2"), path, mode="append", num_files=3)
    zorder.write(_source(tmp_path / "s3"), path, mode="overwrite", num_files=5)
    assert _recorded(path) == str(64 * 2**20)
    # An optimize given no size follows the recorded 64 MB: the small files merge into one.
    merged = zorder.optimize(None, path, full=True)
    assert merged.files_added == 1
    zorder.optimize(None, path, full=True, num_files=4, set_target_size=True)
    files = pa.table(DeltaTable(path).get_add_actions(flatten=True))["size_bytes"].to_pylist()
    assert _recorded(path) == str(max(1, sum(files) // len(files)))
    zorder.optimize(None, path, full=True, target_file_size="1MB", set_target_size=True)
    assert _recorded(path) == str(2**20)


def test_a_one_off_num_files_on_a_table_another_writer_made_records_nothing(
    tmp_path: Path,
) -> None:
    """The issue's case: a delta-rs table (no delta.targetFileSize) optimized once with
    num_files keeps recording none, so the next optimize without a size writes the default
    size's files, not the one-off's; one without a size records the default."""
    from deltalake import write_deltalake

    path = str(tmp_path / "t")
    write_deltalake(path, pq.read_table(_source(tmp_path / "s")))
    zorder.optimize(None, path, by=["a", "b"], num_files=24)
    assert _recorded(path) is None
    zorder.optimize(None, path, by=["a", "b"], full=True, target_file_size="10KB")
    assert _recorded(path) is None
    merged = zorder.optimize(None, path, full=True)  # the default size: one file here
    assert merged.files_added == 1
    assert _recorded(path) == str(128 * 2**20)


def test_set_target_size_needs_a_size(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    zorder.write(_source(tmp_path / "s"), path, by=["a", "b"])
    with pytest.raises(InvalidArgumentError, match="give num_files or target_file_size"):
        zorder.optimize(None, path, full=True, set_target_size=True)


def test_the_no_spec_note_s_by_is_recorded_and_used_later(tmp_path: Path) -> None:
    from deltalake import write_deltalake

    path = str(tmp_path / "t")
    write_deltalake(path, pq.read_table(_source(tmp_path / "s")))  # no zorder spec
    with pytest.raises(InvalidArgumentError, match=re.escape("(CLI: --by a,b) once")) as raised:
        zorder.optimize(None, path)
    assert "pass by=[columns]" in str(raised.value)
    done = _zorder(f"zorder optimize {shlex.quote(path)} --by a,b")  # as the note spells it
    assert done.returncode == 0, done.stderr
    spec = zorder.describe(path).spec
    assert spec is not None
    assert spec.columns == ("a", "b")
    again = zorder.optimize(None, path, full=True, num_files=2)  # no by: the recorded one
    assert again.files_added == 2


def test_the_vacuum_note_s_force_vacuums(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    zorder.write(_source(tmp_path / "s"), path, by=["a", "b"], num_files=2)
    zorder.optimize(None, path, full=True, num_files=3)  # two files no longer in use
    with pytest.raises(InvalidArgumentError, match=re.escape("pass force=True (CLI: --force)")):
        zorder.vacuum(path, retain_hours=0)
    listed = zorder.vacuum(path, retain_hours=0, force=True)
    done = _zorder(f"zorder vacuum {shlex.quote(path)} --retain-hours 0 --force")
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["files"]) == len(listed.files) == 2
