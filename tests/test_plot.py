"""Pictures: real PNG files of the expected size, from tables and from the curves."""

from __future__ import annotations

import datetime as dt
import struct
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pyarrow as pa
import pytest
from deltalake import write_deltalake
from typer.testing import CliRunner

import zorder
from zorder.cli import app
from zorder.curves.kinds import SpaceFillingCurve
from zorder.plot import MAX_PANELS, layout_figure, plot_curve, plot_layout

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
    with pytest.raises(zorder.errors.InvalidArgumentError, match="does not exist"):
        plot_curve(missing)
    result = CliRunner().invoke(app, ["plot", "--curve", "zorder", "-o", str(missing)])
    assert result.exit_code == 2
    assert not missing.parent.exists()


def _ticks(axis: Any) -> list[str]:
    return [label.get_text() for label in axis.get_ticklabels()]


def _quantiles(values: list[Any]) -> list[Any]:
    ordered = sorted(values)
    return [ordered[min(int(t * len(ordered)), len(ordered) - 1)] for t in (0, 0.25, 0.5, 0.75, 1)]


def test_the_axes_are_labelled_with_the_columns_values(tmp_path: Path) -> None:
    path = small_table(tmp_path)
    # A sample larger than the table is all of it: the ticks are the table's quantiles.
    figure = layout_figure(path, x="ip", y="port", sample=1000)
    [axes] = figure.axes
    ips = [f"10.0.{i % 7}.{i}" for i in range(400)]
    assert _ticks(axes.xaxis) == [ip if len(ip) <= 16 else ip[:15] + "…" for ip in _quantiles(ips)]
    assert _ticks(axes.yaxis) == ["0", "100", "200", "300", "399"]
    assert axes.get_xlabel() == "ip (spaced by rank in the sample)"
    assert figure.get_suptitle() == "4 file boxes of t over 400 sampled rows"
    plt.close(figure)


def partitioned_table(tmp_path: Path, days: int) -> str:
    path = str(tmp_path / "p")
    start = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    stamps = [start + dt.timedelta(minutes=17 * i) for i in range(days * 24 * 60 // 17)]
    write_deltalake(
        path,
        pa.table(
            {
                "ts": pa.array(stamps, pa.timestamp("us", tz="UTC")),
                "n": [i * 7919 % 1000 for i in range(len(stamps))],
                "day": [s.date() for s in stamps],
            }
        ),
        partition_by=["day"],
    )
    return path


def test_a_partitioned_table_gets_a_panel_per_partition(tmp_path: Path) -> None:
    path = partitioned_table(tmp_path, 3)
    figure = layout_figure(path, x="ts", y="n", sample=100_000)
    panels = [a for a in figure.axes if a.get_visible()]
    assert [a.get_title() for a in panels] == [f"day=2026-11-0{d}: 1 file box" for d in (1, 2, 3)]
    # Each panel's time axis spans its own day, from its first row to its last.
    start = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    stamps = [start + dt.timedelta(minutes=17 * i) for i in range(3 * 24 * 60 // 17)]
    second = [s for s in stamps if s.day == 2]
    shown = _ticks(panels[1].xaxis)
    assert shown[0] == min(second).strftime("%Y-%m-%d\n%H:%M:%S")
    assert shown[-1] == max(second).strftime("%Y-%m-%d\n%H:%M:%S")
    assert shown[0] == "2026-11-02\n00:05:00"
    assert figure.get_suptitle().endswith(", 3 partitions")
    plt.close(figure)
    out = plot_layout(path, tmp_path / "p.png", x="ts", y="n")
    assert png_size(out) == (1000, 1000)  # 2 x 2 panels of 5 inches, one left empty
    picked = plot_layout(path, tmp_path / "one.png", x="n", y="ts", where="day = '2026-11-03'")
    assert png_size(picked) == (800, 800)
    one = layout_figure(path, x="n", y="ts", where="day >= '2026-11-02'")
    assert [a.get_title() for a in one.axes if a.get_visible()] == [
        "day=2026-11-02: 1 file box",
        "day=2026-11-03: 1 file box",
    ]
    plt.close(one)
    with pytest.raises(zorder.errors.InvalidArgumentError, match="not partition columns"):
        layout_figure(path, x="n", y="ts", where="n > 3")
    with pytest.raises(
        zorder.errors.InvalidArgumentError, match="chooses none of the 3 partitions"
    ):
        layout_figure(path, x="n", y="ts", where="day = '2027-01-01'")


def test_panels_are_capped_and_the_title_says_so(tmp_path: Path) -> None:
    path = partitioned_table(tmp_path, MAX_PANELS + 2)
    figure = layout_figure(path, x="ts", y="n", sample=200)
    panels = [a for a in figure.axes if a.get_visible()]
    assert len(panels) == MAX_PANELS
    assert panels[0].get_title().startswith("day=2026-11-01:")  # the first by value
    assert figure.get_suptitle().endswith(
        f", {MAX_PANELS} of {MAX_PANELS + 2} partitions (where= picks others)"
    )
    plt.close(figure)
    result = runner.invoke(
        app,
        [
            "plot",
            path,
            "--x",
            "ts",
            "--y",
            "n",
            "--where",
            "day > '2026-11-12'",
            "-o",
            str(tmp_path / "c.png"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert png_size(tmp_path / "c.png") == (1000, 500)  # two panels side by side
