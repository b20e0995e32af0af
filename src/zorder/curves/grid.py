"""A curve's order over a small square grid, for pictures and the ``zorder curve`` table."""

from __future__ import annotations

from zorder.curves.hilbert import hilbert_index
from zorder.curves.kinds import SpaceFillingCurve
from zorder.curves.morton import interleave_bits
from zorder.errors import InvalidArgumentError

__all__ = ["curve_grid"]

MAX_GRID_BITS = 6


def curve_grid(curve: SpaceFillingCurve, bits: int) -> tuple[tuple[int, ...], ...]:
    """``grid[y][x]``: the curve's index of cell (x, y) of a 2**bits x 2**bits grid."""
    if not 1 <= bits <= MAX_GRID_BITS:
        raise InvalidArgumentError(f"bits must be in 1 .. {MAX_GRID_BITS} for a grid, got {bits}")
    index = interleave_bits if curve == "zorder" else hilbert_index
    side = 1 << bits
    return tuple(tuple(index([x, y], bits) for x in range(side)) for y in range(side))
