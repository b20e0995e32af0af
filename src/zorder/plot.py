"""Pictures: each file's box over a sample of the table, and the curves themselves.

The layout picture is Databricks' chessboard figure: every file's
[min, max] in two columns drawn as a rectangle (one colour per file) over a
sample of points. Both axes show ranks within the sample, so IP strings,
timestamps and skewed numbers all spread over the square.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import matplotlib

from zorder.columns import resolve_columns
from zorder.errors import InvalidArgumentError

matplotlib.use("Agg")  # files only, never a window

import matplotlib.pyplot as plt
import pyarrow as pa
from matplotlib.patches import Rectangle

from zorder.api.table import Table
from zorder.curves import deinterleave_bits, hilbert_point
from zorder.curves.kinds import SPACE_FILLING_CURVES, SpaceFillingCurve
from zorder.table import TableSnapshot

__all__ = ["plot_curve", "plot_layout"]

_SIZE_INCHES = 8.0
_DPI = 100


def _rank(sorted_sample: list[Any], value: Any, *, upper: bool) -> float:
    """Fraction of the sample below ``value`` (or at or below it, for upper bounds)."""
    if not sorted_sample:
        return 0.0
    position = (
        bisect.bisect_right(sorted_sample, value)
        if upper
        else bisect.bisect_left(sorted_sample, value)
    )
    return position / len(sorted_sample)


def _sample(snapshot: TableSnapshot, columns: list[str], size: int, seed: int) -> pa.Table:
    dataset = snapshot.table.to_pyarrow_dataset()  # reaches storage as the snapshot's table does
    total = dataset.count_rows()
    if total == 0:
        return pa.table({c: pa.array([], dataset.schema.field(c).type) for c in columns})
    picks = sorted(random.Random(seed).sample(range(total), min(size, total)))
    return dataset.take(pa.array(picks, pa.int64()), columns=columns)


def plot_layout(
    path: str,
    output: str | Path,
    *,
    x: str,
    y: str,
    sample: int = 5000,
    seed: int = 7,
    storage_options: Mapping[str, str] | None = None,
) -> Path:
    """Draw every file's box in columns ``x`` and ``y`` over a sample of rows; returns the PNG."""
    target = _check_output(output)
    snapshot = Table(path, storage_options=storage_options).snapshot().table_snapshot
    x, y = resolve_columns([x, y], snapshot.schema.column_types)
    points = _sample(snapshot, [x, y], sample, seed)
    xs = [v for v in points.column(x).to_pylist()]
    ys = [v for v in points.column(y).to_pylist()]
    sorted_x = sorted(v for v in xs if v is not None)
    sorted_y = sorted(v for v in ys if v is not None)
    actions = pa.table(snapshot.table.get_add_actions(flatten=True))

    figure, axes = plt.subplots(figsize=(_SIZE_INCHES, _SIZE_INCHES), dpi=_DPI)
    colours = plt.get_cmap("tab20")
    boxes = 0
    for index, row in enumerate(actions.to_pylist()):
        low_x, high_x = row.get(f"min.{x}"), row.get(f"max.{x}")
        low_y, high_y = row.get(f"min.{y}"), row.get(f"max.{y}")
        if None in (low_x, high_x, low_y, high_y):
            continue
        left, right = _rank(sorted_x, low_x, upper=False), _rank(sorted_x, high_x, upper=True)
        bottom, top = _rank(sorted_y, low_y, upper=False), _rank(sorted_y, high_y, upper=True)
        colour = colours(index % 20)
        axes.add_patch(
            Rectangle(
                (left, bottom),
                right - left,
                top - bottom,
                facecolor=colour,
                edgecolor=colour,
                alpha=0.35,
                linewidth=1.0,
            )
        )
        boxes += 1
    pairs = [(a, b) for a, b in zip(xs, ys, strict=True) if a is not None and b is not None]
    axes.scatter(
        [_rank(sorted_x, a, upper=False) for a, _ in pairs],
        [_rank(sorted_y, b, upper=False) for _, b in pairs],
        s=2,
        color="black",
        alpha=0.4,
    )
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1)
    axes.set_xlabel(f"rank of {x}")
    axes.set_ylabel(f"rank of {y}")
    name = Path(snapshot.uri).name
    axes.set_title(f"{boxes} file boxes of {name} over {len(pairs):,} sampled rows")
    return _save(figure, target)


def plot_curve(output: str | Path, *, curve: SpaceFillingCurve = "zorder", bits: int = 3) -> Path:
    """Draw the curve over a 2**bits x 2**bits grid, each cell labelled with its index."""
    target = _check_output(output)
    if curve not in SPACE_FILLING_CURVES:
        raise InvalidArgumentError(
            f"unknown curve {curve!r}; accepted: {', '.join(SPACE_FILLING_CURVES)}"
        )
    if not 1 <= bits <= 6:
        raise InvalidArgumentError(f"bits must be in 1 .. 6 for a picture, got {bits}")
    side = 1 << bits
    cells = side * side
    if curve == "zorder":
        path = [deinterleave_bits(i, 2, bits) for i in range(cells)]
    else:
        path = [hilbert_point(i, 2, bits) for i in range(cells)]
    figure, axes = plt.subplots(figsize=(_SIZE_INCHES, _SIZE_INCHES), dpi=_DPI)
    axes.plot([p[0] + 0.5 for p in path], [p[1] + 0.5 for p in path], color="tab:blue", lw=1.5)
    if bits <= 4:
        for index, (cx, cy) in enumerate(path):
            axes.text(
                cx + 0.5,
                cy + 0.5,
                str(index),
                ha="center",
                va="center",
                fontsize=9,
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 1},
            )
    axes.set_xticks(range(side + 1))
    axes.set_yticks(range(side + 1))
    axes.grid(True, color="lightgrey")
    axes.set_xlim(0, side)
    axes.set_ylim(0, side)
    axes.set_aspect("equal")
    axes.set_xlabel("x (first column)")
    axes.set_ylabel("y (second column)")
    axes.set_title(f"{curve} curve over a {side}x{side} grid")
    return _save(figure, target)


def _check_output(output: str | Path) -> Path:
    """Where the picture goes: in a directory that exists (none is made for it)."""
    target = Path(output)
    if not target.absolute().parent.is_dir():
        raise InvalidArgumentError(
            f"cannot write {str(output)!r}: directory {str(target.parent)!r} does not exist"
        )
    return target


def _save(figure: Any, target: Path) -> Path:
    figure.savefig(target, dpi=_DPI)
    plt.close(figure)
    return target
