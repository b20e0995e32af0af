"""The ``zorder`` command: help, version, and the curve tables."""

from __future__ import annotations

import re
import subprocess
import sys

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
