"""The ``zorder`` command: help, version, and the curve tables."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from typer.testing import CliRunner

import zorder
from zorder.cli import app

runner = CliRunner()


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"zorder {zorder.__version__}"
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", zorder.__version__)


def test_help_lists_commands() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "curve" in result.output
    assert "demo" in result.output


def test_curve_table_has_every_index_once() -> None:
    result = runner.invoke(app, ["curve", "--curve", "hilbert", "--bits", "2"])
    assert result.exit_code == 0
    numbers = [int(n) for n in re.findall(r"│\s*(\d+)", result.output)]
    # 4 row labels plus 16 cells, each cell index exactly once.
    cells = sorted(numbers[i] for i in range(len(numbers)) if i % 5)
    assert cells == list(range(16))


def test_bad_option_is_a_clear_error() -> None:
    result = runner.invoke(app, ["curve", "--curve", "peano"])
    assert result.exit_code != 0
    assert "peano" in result.output


def test_console_script_runs() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "zorder", "--version"], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == f"zorder {zorder.__version__}"


def test_vacuum_lists_then_deletes_and_refuses_a_short_retention(tmp_path: Path) -> None:
    path = tmp_path / "t"
    write_deltalake(str(path), pa.table({"a": [1, 2, 3]}))
    orphan = path / "zorder-00000000-000000000000" / "part-0.parquet"
    orphan.parent.mkdir()
    orphan.write_bytes(b"never committed")

    refused = runner.invoke(app, ["vacuum", str(path), "--retain-hours", "1"])
    assert refused.exit_code == 2
    assert "below the safe minimum of 168 hours" in refused.output

    listed = runner.invoke(app, ["vacuum", str(path), "--retain-hours", "0", "--force"])
    assert listed.exit_code == 0, listed.output
    assert "would delete 1 file(s)" in listed.output
    assert orphan.exists()

    deleted = runner.invoke(
        app, ["vacuum", str(path), "--retain-hours", "0", "--force", "--delete"]
    )
    assert deleted.exit_code == 0, deleted.output
    assert "deleted 1 file(s)" in deleted.output
    assert not orphan.exists()
    assert DeltaTable(str(path)).to_pyarrow_table().num_rows == 3


def test_an_unexpected_error_is_reported_as_a_bug_with_its_traceback_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_deltalake(str(tmp_path / "t"), pa.table({"a": [1]}))

    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("oops")

    monkeypatch.setattr(zorder, "describe", broken)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    result = runner.invoke(app, ["stats", str(tmp_path / "t")])
    assert result.exit_code == 1
    assert "internal error: KeyError: 'oops'" in result.output
    assert "This is a bug in zorder" in result.output
    logs = list(tmp_path.glob("zorder-error-*.log"))
    assert len(logs) == 1
    assert "raise KeyError" in logs[0].read_text()
    assert str(logs[0]) in result.output.replace("\n", "")


def test_describe_a_table_zorder_did_not_write(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"a": [3, 1], "b": ["x", "y"], "c": [1.5, None]}))
    write_deltalake(path, pa.table({"a": [7], "b": ["z"], "c": [2.5]}), mode="append")
    described = zorder.describe(path)
    assert described.clustering is None
    assert described.columns == ("a", "b", "c")  # no clustering recorded: columns with stats
    assert described.rows == 3
    assert len(described.files) == 2
    assert all(f.run is None and f.name == f.path for f in described.files)
    assert sorted((f.min_values["a"], f.max_values["a"]) for f in described.files) == [
        (1, 3),
        (7, 7),
    ]
    assert zorder.describe(path, columns=["B"]).columns == ("b",)
    with pytest.raises(zorder.ColumnNotFoundError, match="unknown column 'd'"):
        zorder.describe(path, columns=["d"])
    result = runner.invoke(app, ["stats", path])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())  # titles wrap at the terminal's width
    assert "2 files, 3 rows" in text
    assert "no zorder clustering recorded" in text


def test_describe_shows_what_is_not_clustered(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"a": [3, 1], "b": ["x", "y"]}))
    write_deltalake(path, pa.table({"a": [7], "b": ["z"]}), mode="append")
    result = runner.invoke(app, ["describe", path])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "2 files, 3 rows" in text
    assert "no spec recorded (pass --by to write or optimize)" in text
    assert "delta.targetFileSize): not set" in text
    assert "not clustered by the spec: 2 files, 3 rows" in text
    assert "(100% of the bytes)" in text


def test_json_output_of_describe_vacuum_and_explain(tmp_path: Path) -> None:
    import json

    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"a": [3, 1], "b": ["x", "y"]}))
    described = json.loads(runner.invoke(app, ["describe", path, "--json"]).output)
    assert described["spec"] is None
    assert [f["rows"] for f in described["files"]] == [2]
    vacuumed = json.loads(runner.invoke(app, ["vacuum", path, "--json"]).output)
    assert vacuumed["files"] == []
    explained = runner.invoke(app, ["query", path, "--where", "a > 2", "--explain", "--json"])
    assert explained.exit_code == 0, explained.output
    assert json.loads(explained.output)["files_total"] == 1


def test_errors_go_to_stderr_so_json_output_stays_clean(tmp_path: Path) -> None:
    # A script reading `zorder describe ... --json` must never get a message instead.
    result = runner.invoke(app, ["describe", str(tmp_path / "missing"), "--json"])
    assert result.exit_code == 2
    assert "error:" in result.stderr
    assert result.stdout == ""
