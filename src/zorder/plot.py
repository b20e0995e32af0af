"""Pictures: each file's box over a sample of the table, and the curves themselves.

The layout picture is Databricks' chessboard figure: every file's
[min, max] in two columns drawn as a rectangle (one colour per file) over a
sample of points. Both axes are spaced by rank within the sample, so IP
strings, timestamps and skewed numbers all spread over the square, and
labelled with the columns' values at the sample's quantiles. A partitioned
table gets one panel per partition (its files never overlap another's: drawn
together, the boxes would lie on top of each other), at most
:data:`MAX_PANELS` of them, the first by value; ``where`` (SQL over the
partition columns, as optimize's) picks which.
"""

from __future__ import annotations

import bisect
import datetime as dt
import decimal
import math
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

from zorder.columns import resolve_columns
from zorder.errors import InvalidArgumentError

matplotlib.use("Agg")  # files only, never a window

import matplotlib.pyplot as plt
import pyarrow as pa
from matplotlib.patches import Rectangle

from zorder.api.describe import FileDescription, describe_snapshot
from zorder.api.table import Table
from zorder.curves import deinterleave_bits, hilbert_point
from zorder.curves.kinds import SPACE_FILLING_CURVES, SpaceFillingCurve
from zorder.table import TableSnapshot
from zorder.table.partition_filters import check_partition_where, partitions_where

__all__ = ["MAX_PANELS", "layout_figure", "plot_curve", "plot_layout"]

_SIZE_INCHES = 8.0
_PANEL_INCHES = 5.0
_DPI = 100
MAX_PANELS = 12  # partitions drawn in one picture; where= picks others
_TICKS = (0.0, 0.25, 0.5, 0.75, 1.0)  # the sample's quantiles labelled on each axis
_LABEL_CHARS = 16


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


def _label(value: Any) -> str:
    """A value as an axis tick shows it: short, in the column's own terms."""
    if isinstance(value, dt.datetime):
        text = value.strftime("%Y-%m-%d %H:%M:%S")
        return text.removesuffix(" 00:00:00").replace(" ", "\n")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, int | decimal.Decimal) and not isinstance(value, bool):
        return f"{value:,}" if isinstance(value, int) else str(value)
    text = value.hex() if isinstance(value, bytes) else str(value)
    return text if len(text) <= _LABEL_CHARS else f"{text[: _LABEL_CHARS - 1]}…"


def _value_ticks(axis: Any, sorted_sample: list[Any]) -> None:
    """Ticks at the sample's quantiles, labelled with the values there."""
    if not sorted_sample:
        axis.set_ticks([])
        return
    last = len(sorted_sample) - 1
    axis.set_ticks(_TICKS)
    axis.set_ticklabels(
        [_label(sorted_sample[min(int(t * len(sorted_sample)), last)]) for t in _TICKS]
    )


def _boxes(count: int) -> str:
    return f"{count:,} file box{'es' if count != 1 else ''}"


def _partition_name(columns: Sequence[str], values: Sequence[Any]) -> str:
    shown = ("NULL" if v is None else _label(v).replace("\n", " ") for v in values)
    return ", ".join(f"{c}={v}" for c, v in zip(columns, shown, strict=True))


def _ordered(partitions: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Partitions by value, NULLs last in each column."""
    return sorted(
        partitions, key=lambda values: [(v is None, v if v is not None else 0) for v in values]
    )


def _chosen(
    snapshot: TableSnapshot, partitions: list[tuple[Any, ...]], where: str | None
) -> list[tuple[Any, ...]]:
    if where is None:
        return partitions
    parsed = check_partition_where(snapshot, where)
    chosen = partitions_where(snapshot, partitions, parsed, time_zone="UTC", ansi=True)
    if chosen is None:
        raise InvalidArgumentError(
            f"where={where!r} cannot be decided here without Spark; give a comparison of "
            f"partition columns ({', '.join(snapshot.partition_columns)}) with literals"
        )
    return [p for p in partitions if p in chosen]


def layout_figure(
    path: str,
    *,
    x: str,
    y: str,
    sample: int = 5000,
    seed: int = 7,
    where: str | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> Any:
    """The layout picture (a matplotlib figure) :func:`plot_layout` saves."""
    snapshot = Table(path, storage_options=storage_options).snapshot().table_snapshot
    x, y = resolve_columns([x, y], snapshot.schema.column_types)
    keys = snapshot.partition_columns
    described = describe_snapshot(snapshot, [x, y]).files
    partition_of = {f.path: f.partition for f in snapshot.files}
    by_partition: dict[tuple[Any, ...], list[FileDescription]] = {}
    for described_file in described:
        by_partition.setdefault(partition_of[described_file.path], []).append(described_file)
    every = _ordered(list(by_partition))
    chosen = _chosen(snapshot, every, where)
    if not chosen and every:
        raise InvalidArgumentError(f"where={where!r} chooses none of the {len(every)} partitions")
    drawn = chosen[:MAX_PANELS] or [()]
    points = _sample(snapshot, [x, y, *(k for k in keys if k not in (x, y))], sample, seed)
    rows = points.to_pylist()

    columns = math.ceil(math.sqrt(len(drawn)))
    lines = math.ceil(len(drawn) / columns)
    inches = (
        (_SIZE_INCHES, _SIZE_INCHES)
        if len(drawn) == 1
        else (_PANEL_INCHES * columns, _PANEL_INCHES * lines)
    )
    figure, grid = plt.subplots(lines, columns, figsize=inches, dpi=_DPI, squeeze=False)
    boxes = sampled = 0
    for index, partition in enumerate(drawn):
        axes = grid[index // columns][index % columns]
        here = [r for r in rows if tuple(r[k] for k in keys) == partition]
        files = by_partition.get(partition, [])
        drew = _panel(axes, files, here, x, y)
        boxes, sampled = boxes + drew, sampled + len(here)
        if keys:
            axes.set_title(f"{_partition_name(keys, partition)}: {_boxes(drew)}", fontsize=10)
    for index in range(len(drawn), lines * columns):
        grid[index // columns][index % columns].set_visible(False)
    name = Path(snapshot.uri).name
    title = f"{_boxes(boxes)} of {name} over {sampled:,} sampled rows"
    if keys:
        shown = (
            f"{len(drawn)} of {len(chosen)} partitions"
            if len(chosen) > len(drawn)
            else (f"{len(drawn)} partition{'s' if len(drawn) != 1 else ''}")
        )
        more = " (where= picks others)" if len(chosen) > len(drawn) else ""
        title = f"{title}, {shown}{more}"
    figure.suptitle(title)
    figure.tight_layout()
    return figure


def plot_layout(
    path: str,
    output: str | Path,
    *,
    x: str,
    y: str,
    sample: int = 5000,
    seed: int = 7,
    where: str | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> Path:
    """Draw every file's box in columns ``x`` and ``y`` over a sample of rows, one panel per
    partition (those ``where`` chooses; at most :data:`MAX_PANELS`); returns the PNG."""
    target = _check_output(output)
    figure = layout_figure(
        path, x=x, y=y, sample=sample, seed=seed, where=where, storage_options=storage_options
    )
    return _save(figure, target)


def _panel(
    axes: Any, files: Sequence[FileDescription], rows: Sequence[Mapping[str, Any]], x: str, y: str
) -> int:
    """One partition's file boxes over its sampled rows, axes spaced by rank and labelled by
    value; returns the boxes drawn (a file without bounds in both columns has none)."""
    xs, ys = [r[x] for r in rows], [r[y] for r in rows]
    sorted_x = sorted(v for v in xs if v is not None)
    sorted_y = sorted(v for v in ys if v is not None)
    colours = plt.get_cmap("tab20")
    boxes = 0
    for index, described in enumerate(files):
        low_x, high_x = described.min_values.get(x), described.max_values.get(x)
        low_y, high_y = described.min_values.get(y), described.max_values.get(y)
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
    _value_ticks(axes.xaxis, sorted_x)
    _value_ticks(axes.yaxis, sorted_y)
    axes.tick_params(labelsize=8)
    axes.set_xlabel(f"{x} (spaced by rank in the sample)")
    axes.set_ylabel(f"{y} (spaced by rank in the sample)")
    return boxes


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
