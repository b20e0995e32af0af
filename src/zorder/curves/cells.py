"""File cells: the top of a Z-order cut into exactly as many boxes as files.

Binary Z-order splits every column in halves, so with F files and d columns
the file boundaries fall at log2(F) bits shared out unevenly: 100 files on
four columns get 2, 2, 1 and 1.6 splits, and files that straddle a coarse
boundary span wide ranges. Z-order is just as well defined in mixed radix:
interleave one digit per column, each digit in a base of its own. Choosing the
bases so that the top-level digits make exactly F cells of equal row mass
(about F^(1/d) slabs per column, 3 x 3 x 3 x 3.7 for 100 files on four
columns) gives every file one box whose sides are as even as F allows.

The split is built on a sample of key ids (the rank-bucket ids of each column),
column by column in the curve's order; each node cuts its rows at the sampled
quantiles that give its slabs cell counts in proportion to their row mass, so
skewed and duplicated values (which cannot be cut) still end with cells of
about equal size. For F = 2^k on even, independent data it is binary Z-order's
top k bits. Rows below the cells keep the ordinary Z-value order.

Curves without such a mixed-radix form (Hilbert's), and the binary direct
keys, make their files :class:`KeyRanges`: consecutive ranges of the key of
equal sampled row mass.

Pure NumPy; :func:`reference_cell` is the slow, obviously correct walk the
vectorized :meth:`FileCells.cell_of` is tested against.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from zorder.curves.search import GuidedSearch
from zorder.errors import InvalidArgumentError

__all__ = [
    "CellNode",
    "FileCells",
    "KeyRanges",
    "apportion",
    "balanced_cells",
    "balanced_ranges",
    "flatten",
    "reference_cell",
    "reference_range",
    "split_cells",
]

_ID_BITS = 32  # cell_of packs (node, id) into one uint64 to search all cuts at once
_MAX_TABLE = 1 << 21  # entries of cell_of's lookup table (16 MiB); beyond, it searches


@dataclass(frozen=True)
class FileCells:
    """A tree of cuts over key ids whose leaves are numbered cells.

    Node 0 is the root. An internal node splits on column ``column[node]`` at
    the sorted ids ``cuts[cut_start[node]:cut_start[node + 1]]``: an id below
    the first cut goes to child 0, an id >= cut i to child i + 1; its children
    are the nodes ``first_child[node]`` onwards. A leaf has ``column == -1``
    and is cell ``cell[node]``. Cells are numbered in curve order.
    """

    column: npt.NDArray[np.int64]
    cuts: npt.NDArray[np.uint64]
    cut_start: npt.NDArray[np.int64]
    first_child: npt.NDArray[np.int64]
    cell: npt.NDArray[np.int64]
    count: int
    depth: int

    @functools.cached_property
    def _next_node(self) -> _NextNode | None:
        """Each node's child for every id up to its last cut, or None if that table is too big.

        Key ids are rank-bucket ids (at most 1,024 values a column), so a node
        needs a row of at most 1,024 entries and a step of the walk is one
        lookup. A leaf's row is one entry: itself.
        """
        spans = np.zeros(len(self.column), dtype=np.int64)
        inner = np.flatnonzero(self.column >= 0)
        spans[inner] = self.cuts[self.cut_start[inner + 1] - 1].astype(np.int64)
        if int(spans.sum()) + len(spans) > _MAX_TABLE:
            return None
        offsets = np.zeros(len(spans), dtype=np.int64)
        offsets[1:] = np.cumsum(spans + 1)[:-1]
        table = np.empty(int(spans.sum()) + len(spans), dtype=np.int64)
        for node in range(len(spans)):
            row = table[offsets[node] : offsets[node] + spans[node] + 1]
            if self.column[node] < 0:
                row[:] = node
            else:
                cuts = self.cuts[self.cut_start[node] : self.cut_start[node + 1]]
                ids = np.arange(spans[node] + 1, dtype=np.uint64)
                row[:] = self.first_child[node] + np.searchsorted(cuts, ids, side="right")
        return _NextNode(table, offsets, spans, np.maximum(self.column, 0))

    @functools.cached_property
    def _cut_search(self) -> GuidedSearch:
        """Every (node, cut) pair as one sorted uint64, for ids too wide for a table.

        A single count over it finds each row's slot in its own node's cuts.
        """
        owners = np.repeat(np.arange(len(self.column), dtype=np.uint64), np.diff(self.cut_start))
        return GuidedSearch((owners << np.uint64(_ID_BITS)) | self.cuts)

    def cell_of(self, ids: npt.NDArray[np.uint64]) -> npt.NDArray[np.int64]:
        """Cell of each row of ``ids`` (rows x columns key ids below 2**32)."""
        ids = np.asarray(ids, dtype=np.uint64)
        if ids.ndim != 2:
            raise InvalidArgumentError(
                f"ids must be a 2-d array (rows x columns), got shape {ids.shape}"
            )
        rows = np.arange(len(ids))
        node = np.zeros(len(ids), dtype=np.int64)
        step = self._next_node
        if step is not None:
            for _ in range(self.depth):
                read = ids[rows, step.column[node]].astype(np.int64)  # below 2**32
                node = step.table[step.offsets[node] + np.minimum(read, step.spans[node])]
            return self.cell[node]
        cut_search = self._cut_search
        for _ in range(self.depth):
            column = self.column[node]
            inner = column >= 0
            if not inner.any():
                break
            at = node[inner]
            values = ids[rows[inner], column[inner]]
            packed = (at.astype(np.uint64) << np.uint64(_ID_BITS)) | values
            slot = cut_search.count(packed, side="right") - self.cut_start[at]
            node[inner] = self.first_child[at] + slot
        return self.cell[node]


@dataclass(frozen=True)
class _NextNode:
    """Lookup table of a walk: node n, id v -> table[offsets[n] + min(v, spans[n])]."""

    table: npt.NDArray[np.int64]
    offsets: npt.NDArray[np.int64]
    spans: npt.NDArray[np.int64]
    column: npt.NDArray[np.int64]  # the column each node reads (leaves: any, here 0)


def reference_cell(cells: FileCells, row: Sequence[int]) -> int:
    """The cell of one row, walking the tree node by node (the test oracle)."""
    node = 0
    while cells.column[node] >= 0:
        cuts = cells.cuts[cells.cut_start[node] : cells.cut_start[node + 1]].tolist()
        value = int(row[int(cells.column[node])])
        node = int(cells.first_child[node]) + sum(1 for cut in cuts if value >= cut)
    return int(cells.cell[node])


def reference_range(ranges: KeyRanges, row: Sequence[int], key: int | bytes) -> int:
    """The file of one row with ids ``row`` and curve ``key`` (the test oracle of ranges)."""
    held = any(
        aside is not None and int(value) >= aside
        for value, aside in zip(row, ranges.set_aside, strict=False)
    )
    if held and ranges.aside_bounds is not None:
        before = len(ranges.bounds) + 1
        return before + sum(1 for bound in ranges.aside_bounds.tolist() if key >= bound)
    return sum(1 for bound in ranges.bounds.tolist() if key >= bound)


def apportion(masses: npt.NDArray[np.float64], total: int) -> list[int]:
    """``total`` cells shared among slabs in proportion to ``masses``, each at least one.

    ``total`` must be at least the number of slabs.
    """
    if total < len(masses):
        raise InvalidArgumentError(f"cannot share {total} among {len(masses)}, one each at least")
    quotas = masses / masses.sum() * total
    shares = np.maximum(1, np.floor(quotas)).astype(np.int64)
    while shares.sum() > total:  # the minimum of one overshot: take from the most over quota
        spare = np.where(shares > 1, shares - quotas, -np.inf)
        shares[int(np.argmax(spare))] -= 1
    while shares.sum() < total:  # largest remainder first
        shares[int(np.argmax(quotas - shares))] += 1
    return [int(s) for s in shares]


def _slab_cuts(values: npt.NDArray[np.uint64], cells: int, parts: int) -> npt.NDArray[np.uint64]:
    """Ids that cut sorted ``values`` into up to ``parts`` slabs for ``cells`` cells.

    The cells are shared as evenly as whole numbers allow (11 as 4, 4, 3) and
    each slab's mass follows its share, so every cell gets the same mass.
    Equal ids are never separated: a cut that would fall inside a run of one
    id moves to the nearer end of the run, so heavy duplicates give fewer,
    uneven slabs that the caller then shares cells among by mass.
    """
    n = len(values)
    ends = np.cumsum([cells // parts + (i < cells % parts) for i in range(parts)])[:-1]
    chosen: list[int] = []
    for end in ends:
        target = (int(end) * n) // cells
        run = values[target]
        start = int(np.searchsorted(values, run, side="left"))
        stop = int(np.searchsorted(values, run, side="right"))
        if start > 0 and (stop >= n or target - start <= stop - target):
            chosen.append(int(run))  # the run opens the upper slab
        elif stop < n:
            chosen.append(int(values[stop]))  # the run closes the lower slab
    cuts: npt.NDArray[np.uint64] = np.unique(np.array(chosen, dtype=np.uint64))
    return cuts


@dataclass
class CellNode:
    """A node of cuts being built: a leaf (``column == -1``) or a cut of ``column``'s ids.

    Consecutive leaves of one ``group`` (not None) are one cell: several small
    leaves packed into one file.
    """

    column: int = -1
    cuts: npt.NDArray[np.uint64] | None = None
    children: list[CellNode] | None = None
    group: int | None = None


def _split(
    sample: npt.NDArray[np.uint64],
    cells: int,
    columns: list[int],
    leftover: bool,
    weights: npt.NDArray[np.float64],
) -> CellNode:
    """The subtree giving ``cells`` cells to the ``sample`` rows in a node.

    ``columns`` are the columns this round of the curve has yet to cut, in
    order, each into about cells^(w/W) slabs, w its weight and W the weight
    of the columns left (equal weights: cells^(1/len(columns))). Cells a round could
    not place (a column constant here, or shares rounded) go to a leftover
    round, in which the first column that can be cut takes them all; a
    leftover round that cuts nothing ends in one cell, as no box can be smaller.
    """
    d = sample.shape[1]
    while True:
        if cells <= 1 or len(sample) == 0:
            return CellNode()
        if not columns:
            if leftover:
                return CellNode()
            columns, leftover = [c for c in range(d) if weights[c] > 0] or list(range(d)), True
            continue
        column, rest = columns[0], columns[1:]
        left = float(weights[columns].sum())
        share = 1.0 if left <= 0 else float(weights[column]) / left
        parts = cells if leftover or not rest else max(1, round(cells**share))
        if parts > 1:
            values = np.sort(sample[:, column])
            cuts = _slab_cuts(values, cells, parts)
            if len(cuts):
                slab = np.searchsorted(cuts, sample[:, column], side="right")
                masses = np.bincount(slab, minlength=len(cuts) + 1).astype(np.float64)
                shares = apportion(masses, cells)
                children = [
                    _split(sample[slab == i], part, rest, False, weights)
                    for i, part in enumerate(shares)
                ]
                return CellNode(column, cuts, children)
        columns = rest  # nothing cut on this column here: the next ones get its cells


def _set_aside(
    sample: npt.NDArray[np.uint64],
    cells: int,
    aside: Sequence[tuple[int, int]],
    weights: npt.NDArray[np.float64],
) -> CellNode:
    """Rows holding a column's set-aside id (its top id) in cells of their own, then the rest.

    Each set-aside column becomes one cut at its id: the rows below it (the
    rest) and the rows at it, which get cells in proportion to their mass
    (at least one) and are cut on the other columns as usual.
    """
    if not aside or cells <= 1 or len(sample) == 0:
        return _split(sample, cells, list(range(sample.shape[1])), False, weights)
    (column, value), rest = aside[0], aside[1:]
    held = sample[:, column] >= value
    if held.all() or not held.any():  # nothing to part here
        return _set_aside(sample, cells, rest, weights)
    shares = apportion(np.array([(~held).sum(), held.sum()], dtype=np.float64), cells)
    kept = _set_aside(sample[~held], shares[0], rest, weights)
    parted = _split(sample[held], shares[1], list(range(sample.shape[1])), False, weights)
    return CellNode(column, np.array([value], dtype=np.uint64), [kept, parted])


def balanced_cells(
    sample: npt.NDArray[np.uint64],
    count: int,
    *,
    set_aside: Sequence[int | None] = (),
    weights: Sequence[float] | None = None,
) -> FileCells:
    """Cut the id space of ``sample`` (rows x columns) into ``count`` cells of equal row mass.

    ``set_aside`` gives, per column, an id (the column's largest) whose rows
    get cells of their own, after the others: NaN's, whose rows would take
    away the bounds of every file they were spread over. Fewer cells come
    back only when the sample cannot be cut that finely (fewer distinct rows
    than ``count``).

    ``weights`` (one per column, default equal) share the cuts out unequally:
    a column of weight w among columns weighing W in all is cut into about
    ``count**(w/W)`` slabs, so a column filtered twice as often can get twice
    the cuts' bits; a column of weight 0 is not cut (its order still counts
    inside each file).
    """
    sample = np.asarray(sample, dtype=np.uint64)
    if sample.ndim != 2 or sample.shape[1] < 1:
        raise InvalidArgumentError(
            f"sample must be a 2-d array with a column or more, got {sample.shape}"
        )
    if count < 1:
        raise InvalidArgumentError(f"count must be >= 1, got {count}")
    if len(sample) and int(sample.max()) >= 1 << _ID_BITS:
        raise InvalidArgumentError(f"key ids must be below 2**{_ID_BITS}, got {int(sample.max())}")
    shares = _weights(weights, sample.shape[1])
    aside = [(column, int(value)) for column, value in enumerate(set_aside) if value is not None]
    root = _set_aside(sample, count, aside, shares)

    return flatten(root)


def split_cells(
    sample: npt.NDArray[np.uint64],
    cells: int,
    *,
    weights: Sequence[float] | None = None,
    set_aside: Sequence[int | None] = (),
) -> CellNode:
    """The cuts giving the ``sample`` rows (rows x columns of ids) ``cells`` equal-mass cells,
    ``weights`` and ``set_aside`` as for :func:`balanced_cells`."""
    shares = _weights(weights, sample.shape[1])
    aside = [(column, int(value)) for column, value in enumerate(set_aside) if value is not None]
    return _set_aside(sample, cells, aside, shares)


def flatten(root: CellNode) -> FileCells:
    """``root``'s tree as a :class:`FileCells`, cells numbered depth first (the curve's order)."""
    # Breadth first, so each node's children are consecutive.
    order: list[CellNode] = [root]
    first_child: list[int] = []
    for node in order:
        first_child.append(len(order) if node.children else -1)
        order.extend(node.children or [])
    column = np.array([n.column for n in order], dtype=np.int64)
    cut_lists = [n.cuts if n.cuts is not None else np.zeros(0, np.uint64) for n in order]
    cut_start = np.zeros(len(order) + 1, dtype=np.int64)
    cut_start[1:] = np.cumsum([len(c) for c in cut_lists])

    # Cells numbered depth first: the order of the curve. Consecutive leaves of a group share one.
    cell = np.full(len(order), -1, dtype=np.int64)
    index = {id(n): i for i, n in enumerate(order)}
    stack, next_cell, depth = [(root, 0)], 0, 0
    last_group: int | None = None
    while stack:
        node, level = stack.pop()
        depth = max(depth, level)
        if node.children:
            stack.extend((child, level + 1) for child in reversed(node.children))
            continue
        if node.group is None or node.group != last_group:
            next_cell += 1
        cell[index[id(node)]] = next_cell - 1
        last_group = node.group
    return FileCells(
        column=column,
        cuts=np.concatenate(cut_lists).astype(np.uint64),
        cut_start=cut_start,
        first_child=np.array(first_child, dtype=np.int64),
        cell=cell,
        count=next_cell,
        depth=depth,
    )


def _weights(weights: Sequence[float] | None, columns: int) -> npt.NDArray[np.float64]:
    """``weights`` checked: one finite number >= 0 per column, one of them positive."""
    if weights is None:
        return np.ones(columns, dtype=np.float64)
    shares = np.asarray(list(weights), dtype=np.float64)
    if shares.shape != (columns,) or not np.isfinite(shares).all() or (shares < 0).any():
        raise InvalidArgumentError(
            f"weights must be {columns} finite numbers >= 0 (one per column), got {list(weights)}"
        )
    if not (shares > 0).any():
        raise InvalidArgumentError(
            f"weights must give some column a positive weight, got {list(weights)}"
        )
    return shares


@dataclass(frozen=True)
class KeyRanges:
    """Files as consecutive ranges of a key: file i holds bounds[i-1] <= key < bounds[i].

    Keys are uint64 curve keys, or fixed-width big-endian byte keys (a NumPy
    ``S`` array, compared byte by byte) when a key needs more than 64 bits.
    """

    bounds: np.ndarray  # sorted, distinct, each above the smallest sampled key
    # Rows holding a set-aside id (per column, or None) take the ranges of
    # ``aside_bounds`` instead, numbered after the others (see balanced_ranges).
    aside_bounds: np.ndarray | None = None
    set_aside: tuple[int | None, ...] = ()

    @property
    def count(self) -> int:
        aside = 0 if self.aside_bounds is None else len(self.aside_bounds) + 1
        return len(self.bounds) + 1 + aside

    def cell_of_keys(
        self, keys: np.ndarray, ids: npt.NDArray[np.uint64] | None = None
    ) -> npt.NDArray[np.int64]:
        """File of each key (bounds keep the sampled keys' dtype, even when empty).

        ``ids`` (rows x columns) are needed when ranges were set aside.
        """
        keys = _as_keys(keys)
        cells: npt.NDArray[np.int64] = np.searchsorted(self.bounds, keys, side="right")
        if self.aside_bounds is not None:
            if ids is None:
                raise InvalidArgumentError("these ranges set rows aside: pass the rows' ids")
            held = _held(ids, self.set_aside)
            cells[held] = (
                len(self.bounds) + 1 + np.searchsorted(self.aside_bounds, keys[held], side="right")
            )
        return cells


def _held(ids: npt.NDArray[np.uint64], set_aside: Sequence[int | None]) -> npt.NDArray[np.bool_]:
    """Rows holding their column's set-aside id in any column."""
    held = np.zeros(len(ids), dtype=bool)
    for column, value in enumerate(set_aside):
        if value is not None:
            held |= ids[:, column] >= value
    return held


def _cuts(keys: np.ndarray, count: int) -> np.ndarray:
    """Bounds cutting ``keys`` into ``count`` ranges of equal mass (sampled keys' dtype)."""
    ordered: np.ndarray = np.sort(keys)
    if len(ordered) == 0:
        return ordered
    cuts: np.ndarray = np.unique(ordered[np.arange(1, count) * len(ordered) // count])
    kept: np.ndarray = cuts[cuts > ordered[0]]
    return kept


def balanced_ranges(
    keys: np.ndarray,
    count: int,
    *,
    ids: npt.NDArray[np.uint64] | None = None,
    set_aside: Sequence[int | None] = (),
) -> KeyRanges:
    """Cut the sampled ``keys`` into ``count`` ranges of equal row mass.

    With the sample's ``ids`` and ``set_aside`` ids per column (NaN's, as for
    :func:`balanced_cells`), the rows holding a set-aside id get ranges of
    their own, in proportion to their mass and numbered after the others.
    Fewer ranges come back when repeated keys make some cuts coincide.
    """
    if count < 1:
        raise InvalidArgumentError(f"count must be >= 1, got {count}")
    keys = _as_keys(keys)
    if ids is not None and count > 1 and any(v is not None for v in set_aside):
        held = _held(np.asarray(ids, dtype=np.uint64), set_aside)
        if held.any() and not held.all():
            shares = apportion(np.array([(~held).sum(), held.sum()], np.float64), count)
            return KeyRanges(
                _cuts(keys[~held], shares[0]),
                aside_bounds=_cuts(keys[held], shares[1]),
                set_aside=tuple(set_aside),
            )
    return KeyRanges(_cuts(keys, count))


def _as_keys(keys: np.ndarray) -> np.ndarray:
    """Byte keys as they are; anything else as uint64 curve keys."""
    array = np.asarray(keys)
    return array if array.dtype.kind == "S" else array.astype(np.uint64, copy=False)
