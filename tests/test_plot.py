"""Pictures: real PNG files of the expected size, from tables and from the curves."""

from __future__ import annotations

import struct
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake
from typer.testing import CliRunner

import zorder
from zorder.cli import app
from zorder.curves.kinds import SpaceFillingCurve
from zorder.plot import plot_curve, plot_layout

runner = CliRunner()


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert len(data) > 5000  # something was drawn
    return width, height


def small_table(tmp_path: Path) -> str:
    path = str(tmp_path / "t")
    for start in range(0, 400, 100):
        write_deltalake(
            path,
            pa.table(
                {
                    "ip": [f"10.0.{i % 7}.{i}" for i in range(start, start + 100)],
                    "port": list(range(start, start + 100)),
                }
            ),
            mode="append",
        )
    return path


def test_layout_picture(tmp_path: Path) -> None:
    path = small_table(tmp_path)
    written = plot_layout(path, tmp_path / "layout.png", x="IP", y="port", sample=300)
    assert png_size(written) == (800, 800)


@pytest.mark.parametrize("curve", ["zorder", "hilbert"])
def test_curve_picture(tmp_path: Path, curve: SpaceFillingCurve) -> None:
    written = plot_curve(tmp_path / f"{curve}.png", curve=curve, bits=3)
    assert png_size(written) == (800, 800)


def test_plot_command(tmp_path: Path) -> None:
    path = small_table(tmp_path)
    out = tmp_path / "cli.png"
    result = runner.invoke(app, ["plot", path, "--x", "ip", "--y", "port", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert png_size(out) == (800, 800)
    result = runner.invoke(app, ["plot", "--curve", "hilbert", "--bits", "2", "-o", str(out)])
    assert result.exit_code == 0, result.output
    bad = runner.invoke(app, ["plot", path, "--x", "nope", "--y", "port", "-o", str(out)])
    assert bad.exit_code == 2
    assert "unknown column 'nope'" in bad.output
    assert runner.invoke(app, ["plot", path]).exit_code == 2


def test_a_picture_in_a_missing_directory_is_refused_not_made_room_for(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir" / "x.png"
    with pytest.raises(zorder.InvalidArgumentError, match="does not exist"):
        plot_curve(missing)
    result = CliRunner().invoke(app, ["plot", "--curve", "zorder", "-o", str(missing)])
    assert result.exit_code == 2
    assert not missing.parent.exists()
