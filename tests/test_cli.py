"""The ``zorder`` command: help, version, and the curve tables."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
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
