"""Counting sorted boundaries below each of many keys, faster than a binary search.

Every clustering key starts with "how many boundaries are <= this value",
for every row. ``np.searchsorted`` answers it with a branchy binary search of
about 60 ns a key over a thousand boundaries, which made it the largest part
of computing a key. :class:`GuidedSearch` instead splits the boundaries' range
into equal-width cells and keeps, per cell, the index of its first boundary:
a key's cell is one subtraction and shift away, and a few comparisons finish
the count. Cells that still hold many boundaries (lumpy data such as dotted
IP strings, whose bytes use a dozen of 256 values) get a finer guide of their
own, a few levels deep; what no level separates falls back to
``np.searchsorted``. The answers are exactly ``np.searchsorted``'s, which the
tests check on adversarial inputs.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt

from zorder.errors import InvalidArgumentError

__all__ = ["GuidedSearch"]

_U64 = np.uint64
# A cell with at most this many boundaries is finished by comparing with each.
_FINISH_WIDTH = 4
# Cells per boundary in a guide: more makes cells narrower, and the table larger.
_CELLS_PER_BOUNDARY = 4
_MAX_CELLS = 1 << 14
_MAX_LEVELS = 4


class GuidedSearch:
    """``np.searchsorted(bounds, keys, side)`` for many batches of keys over fixed ``bounds``.

    ``bounds`` are sorted uint64 (repeats allowed). Guides are built once, so
    an instance is meant to be reused across batches.
    """

    def __init__(self, bounds: npt.ArrayLike) -> None:
        bounds = np.ascontiguousarray(bounds, dtype=_U64)
        if bounds.ndim != 1:
            raise InvalidArgumentError(f"bounds must be 1-d, got shape {bounds.shape}")
        if len(bounds) > 1 and bool(np.any(bounds[1:] < bounds[:-1])):
            raise InvalidArgumentError("bounds must be sorted")
        # The guides work on distinct values; repeats come back through the
        # number of bounds before each distinct one (and before none: 0).
        self._distinct, repeats = np.unique(bounds, return_counts=True)
        self._before = np.concatenate([[0], np.cumsum(repeats)]).astype(np.int64)
        # Guide nodes, flattened. A node covers distinct[lo:hi]; its cell c holds
        # distinct[starts[offset + c] : starts[offset + c + 1]] and, if still
        # wide, is refined by node children[offset + c] (else -1).
        bases: list[int] = []
        shifts: list[int] = []
        cell_counts: list[int] = []
        offsets: list[int] = []
        starts: list[npt.NDArray[np.int64]] = []
        children: list[npt.NDArray[np.int64]] = []
        total = 0  # entries of starts so far: the next node's offset
        pending = [(0, len(self._distinct), 0, -1, -1)]  # lo, hi, level, parent, cell
        while pending:
            lo, hi, level, parent, parent_cell = pending.pop()
            node = len(bases)
            if parent >= 0:
                children[parent][parent_cell] = node
            base = int(self._distinct[lo]) if hi > lo else 0
            span = int(self._distinct[hi - 1]) - base if hi > lo else 0
            cells = min(_MAX_CELLS, _power_of_two_at_least(_CELLS_PER_BOUNDARY * (hi - lo)))
            shift = max(0, span.bit_length() - (cells.bit_length() - 1))
            local = (self._distinct[lo:hi] - _U64(base)) >> _U64(shift)
            node_starts = np.empty(cells + 2, dtype=np.int64)
            node_starts[: cells + 1] = lo + np.searchsorted(
                local, np.arange(cells + 1, dtype=_U64), side="left"
            )
            node_starts[cells + 1] = hi
            bases.append(base)
            shifts.append(shift)
            cell_counts.append(cells)
            offsets.append(total)
            total += len(node_starts)
            starts.append(node_starts)
            children.append(np.full(cells + 2, -1, dtype=np.int64))
            if level + 1 < _MAX_LEVELS:
                wide = np.flatnonzero(np.diff(node_starts) > _FINISH_WIDTH)
                for cell in wide.tolist():
                    first, last = int(node_starts[cell]), int(node_starts[cell + 1])
                    pending.append((first, last, level + 1, node, cell))
        self._bases = np.array(bases, dtype=_U64)
        self._shifts = np.array(shifts, dtype=_U64)
        self._cells = np.array(cell_counts, dtype=_U64)
        self._offsets = np.array(offsets, dtype=np.int64)
        self._starts = np.concatenate(starts)
        self._children = np.concatenate(children)

    def count(
        self, keys: npt.ArrayLike, side: Literal["left", "right"] = "right"
    ) -> npt.NDArray[np.int64]:
        """Number of bounds < each key (``side="left"``) or <= it (``"right"``)."""
        keys = np.ascontiguousarray(keys, dtype=_U64)
        distinct = self._distinct
        n, m = len(keys), len(distinct)
        if m == 0 or n == 0:
            return np.zeros(n, dtype=np.int64)
        # The root guide on all keys at once; a key below every bound lands in
        # cell 0, whose comparisons then count nothing.
        root_base = self._bases[0]
        cell = np.minimum((keys - root_base) >> self._shifts[0], self._cells[0]).astype(np.intp)
        cell[keys < root_base] = 0
        lo = self._starts[cell]
        hi = self._starts[cell + 1]
        deeper = np.flatnonzero(self._children[cell] >= 0)
        if deeper.size:
            self._refine(keys, lo, hi, deeper, self._children[cell[deeper]])
        return self._before[self._finish(keys, lo, hi, side)]

    def _refine(
        self,
        keys: npt.NDArray[np.uint64],
        lo: npt.NDArray[np.int64],
        hi: npt.NDArray[np.int64],
        rows: npt.NDArray[np.intp],
        node: npt.NDArray[np.int64],
    ) -> None:
        """Narrow ``lo``/``hi`` of ``rows`` through the finer guides, starting at ``node``."""
        while rows.size:
            values = keys[rows]
            base = self._bases[node]
            below = values < base  # every bound of the node is above the key
            cell = np.minimum((values - base) >> self._shifts[node], self._cells[node])
            slot = self._offsets[node] + cell.astype(np.int64)
            first = np.where(below, lo[rows], self._starts[slot])
            lo[rows] = first
            hi[rows] = np.where(below, first, self._starts[slot + 1])
            child = np.where(below, -1, self._children[slot])
            keep = child >= 0
            rows, node = rows[keep], child[keep]

    def _finish(
        self,
        keys: npt.NDArray[np.uint64],
        lo: npt.NDArray[np.int64],
        hi: npt.NDArray[np.int64],
        side: Literal["left", "right"],
    ) -> npt.NDArray[np.int64]:
        """Distinct bounds below (or at) each key, given that the answer is in [lo, hi]."""
        distinct = self._distinct
        last = len(distinct) - 1
        found = lo.copy()
        for step in range(_FINISH_WIDTH):
            index = lo + step
            bound = distinct[np.minimum(index, last)]
            hit = (bound <= keys) if side == "right" else (bound < keys)
            found += hit & (index < hi)
        wide = np.flatnonzero(hi - lo > _FINISH_WIDTH)
        if wide.size:  # what no guide level separated
            found[wide] = np.searchsorted(distinct, keys[wide], side=side)
        return found


def _power_of_two_at_least(value: int) -> int:
    return 1 << max(1, (max(1, value) - 1).bit_length())
