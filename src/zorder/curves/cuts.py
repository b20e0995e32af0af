"""Workload cuts: a binary tree of cuts on column values, placed where queries draw their lines.

Equal-mass cells cut every column at its quantiles, wherever the queries
draw their lines; a query for the year 1995 then reads the two files that
straddle its first of January. A cut tree (a qd-tree, Yang et al., SIGMOD
2020) cuts at the workload's own boundaries instead: each node splits its
rows by ``column >= value``, the values taken from the predicates the
workload filters on, chosen greedily by :mod:`zorder.advice`. The tree is
data, fitted once and recorded with the table's clustering spec, so every
later run (an append, an incremental optimize, another partition) cuts its
rows at the same values.

A tree's leaves rarely hold equal shares of a run's rows, and a run's file
count is its own: :func:`cut_cells` shares the run's files among the leaves
by row mass, cuts a leaf given several files into equal-mass Z-order cells
(:func:`zorder.curves.cells.balanced_cells`), and packs neighbouring leaves
into one file when there are more leaves than files. Cuts compare values as
Spark orders them; NULL goes below every value (the left side), as in the
rank keys.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from zorder.curves.cells import CellNode, FileCells, apportion, flatten, split_cells
from zorder.curves.ranks import BoundarySearch
from zorder.errors import InvalidArgumentError

__all__ = ["CutIds", "CutTree", "cut_cells", "joined_ids"]


@dataclass(frozen=True, repr=False)
class CutTree:
    """Binary cuts on values. Node 0 is the root; node ``i`` with ``column[i] >= 0`` sends a
    row whose value of that column is ``>= value[i]`` to node ``right[i]`` and any other row
    (smaller, or NULL) to ``left[i]``; ``column[i] == -1`` marks a leaf.

    ``column`` indexes the clustering columns of the spec the tree belongs to.
    Values are Python values of the column's type (int, Decimal, date,
    datetime, str, float, bytes).
    """

    column: tuple[int, ...]
    value: tuple[Any, ...]
    left: tuple[int, ...]
    right: tuple[int, ...]

    def __post_init__(self) -> None:
        n = len(self.column)
        if n == 0 or not (len(self.value) == len(self.left) == len(self.right) == n):
            raise InvalidArgumentError("a cut tree needs one column, value, left, right a node")
        parents = [0] * n
        for node in range(n):
            if self.column[node] < -1:
                raise InvalidArgumentError(
                    f"cut tree node {node}: column {self.column[node]} (a leaf is -1)"
                )
            if self.column[node] < 0:
                continue
            children = (self.left[node], self.right[node])
            if not all(node < child < n for child in children) or children[0] == children[1]:
                raise InvalidArgumentError(
                    f"cut tree node {node}: children {children} must be two nodes after it"
                )
            value = self.value[node]
            if value is None or (isinstance(value, float) and math.isnan(value)):
                raise InvalidArgumentError(
                    f"cut tree node {node}: cuts at {value!r}; a cut value is a number (not "
                    "NaN), text, bytes or time"
                )
            for child in children:
                parents[child] += 1
        if parents[0] != 0 or any(count != 1 for count in parents[1:]):
            raise InvalidArgumentError(
                "a cut tree's nodes other than the root must each have exactly one parent"
            )

    def to_json(self) -> list[Any]:
        """The tree as JSON: a list of nodes, ``[column, value, left, right]`` or ``[-1]``,
        each value tagged with its kind (``{"date": "1995-01-01"}``)."""
        return [
            [c, _tagged(v), lo, hi] if c >= 0 else [-1]
            for c, v, lo, hi in zip(self.column, self.value, self.left, self.right, strict=True)
        ]

    @classmethod
    def from_json(cls, nodes: Any) -> CutTree:
        """The tree :meth:`to_json` wrote; InvalidArgumentError names what does not parse."""
        if not isinstance(nodes, list) or not nodes:
            raise InvalidArgumentError(f"a cut tree is a non-empty JSON list, got {nodes!r}")
        rows: list[tuple[int, Any, int, int]] = []
        for node in nodes:
            if node == [-1]:
                rows.append((-1, None, -1, -1))
            elif isinstance(node, list) and len(node) == 4 and _all_ints(node[0], *node[2:]):
                rows.append((node[0], _untagged(node[1]), node[2], node[3]))
            else:
                raise InvalidArgumentError(
                    f"a cut tree node is [column, value, left, right] or [-1], got {node!r}"
                )
        column, value, left, right = zip(*rows, strict=True)
        return cls(tuple(column), tuple(value), tuple(left), tuple(right))

    @property
    def cut_count(self) -> int:
        return sum(1 for c in self.column if c >= 0)

    def __repr__(self) -> str:
        # Its values may be thousands of a workload's literals: counted, not listed.
        return f"CutTree(<{self.cut_count} cuts on columns {list(self.cut_columns)}>)"

    @property
    def cut_columns(self) -> tuple[int, ...]:
        """The clustering columns the tree cuts, in order of first use."""
        return tuple(dict.fromkeys(c for c in self.column if c >= 0))

    def boundaries(self, column: int, dtype: pa.DataType) -> pa.Array:
        """The sorted, distinct cut values of ``column``, as an Arrow array of ``dtype``."""
        values = [v for c, v in zip(self.column, self.value, strict=True) if c == column]
        array = pa.array(values).cast(dtype) if values else pa.array([], dtype)
        unique: pa.Array = array.unique()
        return unique.take(pc.sort_indices(unique))


def _all_ints(*values: Any) -> bool:
    return all(isinstance(v, int) and not isinstance(v, bool) for v in values)


def _tagged(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolean": value}
    if isinstance(value, int):
        return {"int": value}
    if isinstance(value, float):
        return {"double": value if math.isfinite(value) else str(value)}
    if isinstance(value, decimal.Decimal):
        return {"decimal": str(value)}
    if isinstance(value, str):
        return {"string": value}
    if isinstance(value, bytes):
        return {"binary": value.hex()}
    if isinstance(value, dt.datetime):
        return {"timestamp" if value.tzinfo else "timestamp_ntz": value.isoformat()}
    if isinstance(value, dt.date):
        return {"date": value.isoformat()}
    raise InvalidArgumentError(f"a cut value must be a number, text, bytes or time, got {value!r}")


_UNTAG: dict[str, Any] = {
    "boolean": bool,
    "int": int,
    "double": float,
    "decimal": decimal.Decimal,
    "string": str,
    "binary": bytes.fromhex,
    "date": dt.date.fromisoformat,
    "timestamp": dt.datetime.fromisoformat,
    "timestamp_ntz": dt.datetime.fromisoformat,
}


def _untagged(tagged: Any) -> Any:
    if not (isinstance(tagged, dict) and len(tagged) == 1 and next(iter(tagged)) in _UNTAG):
        raise InvalidArgumentError(
            f"a cut value is one of {{{', '.join(_UNTAG)}}}: value, got {tagged!r}"
        )
    kind, raw = next(iter(tagged.items()))
    try:
        return _UNTAG[kind](raw)
    except (TypeError, ValueError, decimal.InvalidOperation) as error:
        raise InvalidArgumentError(f"cut value {tagged!r} does not parse: {error}") from None


@dataclass(frozen=True)
class CutIds:
    """The tree's columns as bucket ids: 0 for NULL, else 1 + the number of the column's cut
    values at or below the value, so ``value >= cut j`` exactly when the id is ``>= j + 2``."""

    columns: tuple[int, ...]  # clustering column of each id column
    searches: tuple[BoundarySearch, ...]

    @classmethod
    def of(cls, tree: CutTree, types: Sequence[pa.DataType], names: Sequence[str] = ()) -> CutIds:
        """The tree's cut values as boundaries of the clustering columns' Arrow ``types``
        (``names`` name the columns in errors)."""
        columns = tree.cut_columns
        searches = []
        for c in columns:
            name = repr(names[c]) if c < len(names) else str(c)
            if c >= len(types):
                raise InvalidArgumentError(
                    f"the workload cuts name clustering column {name}; there are {len(types)}"
                )
            try:
                boundaries = tree.boundaries(c, types[c])
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as error:
                raise InvalidArgumentError(
                    f"the workload cuts of column {name} do not fit its type {types[c]}: {error}; "
                    "record a new spec (by=...)"
                ) from None
            searches.append(BoundarySearch(boundaries))
        return cls(columns, tuple(searches))

    def ids(self, arrays: Sequence[pa.Array]) -> npt.NDArray[np.uint64]:
        """Rows x tree columns of bucket ids, from the clustering columns' ``arrays``."""
        n = len(arrays[0]) if arrays else 0
        out = np.empty((n, len(self.columns)), dtype=np.uint64)
        for i, (column, search) in enumerate(zip(self.columns, self.searches, strict=True)):
            out[:, i] = search.bucket_ids(arrays[column])
        return out

    def cut_id(self, column: int, value: Any) -> int:
        """The id at which ``column >= value`` starts: the id of ``value`` itself, a boundary
        (found by the search, as every row is, whatever Python form the value has)."""
        search = self.searches[self.columns.index(column)]
        as_array = pa.array([value]).cast(search.boundaries.type)
        return int(search.bucket_ids(as_array)[0])


def joined_ids(
    rank_ids: npt.NDArray[np.uint64], cut_ids: CutIds, arrays: Sequence[pa.Array]
) -> npt.NDArray[np.uint64]:
    """The id matrix :func:`cut_cells`' cells read: rank ids, then the tree columns' ids."""
    return np.hstack([np.asarray(rank_ids, dtype=np.uint64), cut_ids.ids(arrays)])


def cut_cells(
    tree: CutTree,
    cut_ids: CutIds,
    ids: npt.NDArray[np.uint64],
    count: int,
    *,
    weights: Sequence[float] | None = None,
    set_aside: Sequence[int | None] = (),
) -> FileCells:
    """``count`` file cells: the tree's leaves, shared out by the sample's row mass.

    ``ids`` is the sample's :func:`joined_ids`: its first columns are the rank
    ids the rows are Z-ordered by inside a leaf, one per clustering column. A
    leaf given ``k`` files is cut into ``k`` equal-mass Z-order cells of those
    (``weights`` and ``set_aside`` as for
    :func:`~zorder.curves.cells.balanced_cells`); with fewer files than
    leaves holding rows, light neighbouring leaves share a file (a leaf is
    never split across files it does not own), and a leaf no sampled row
    reached shares its neighbour's. Fewer cells than ``count`` come back only
    when leaves cannot be cut finer or packed runs outweigh their files.
    """
    if count < 1:
        raise InvalidArgumentError(f"count must be >= 1, got {count}")
    ids = np.asarray(ids, dtype=np.uint64)
    d = ids.shape[1] - len(cut_ids.columns)
    nodes, leaves, rows_at = _tree_nodes(tree, cut_ids, ids, d)
    masses = np.array([len(rows_at[leaf]) for leaf in leaves], dtype=np.float64)
    full = np.flatnonzero(masses > 0).tolist()
    if not full:  # no sampled row: one cell, as balanced_cells gives
        return flatten(CellNode())
    runs = _runs(masses[full], count)
    run_of = {full[j]: r for r, run in enumerate(runs) for j in run}
    shares = apportion(np.array([masses[[full[j] for j in run]].sum() for run in runs]), count)
    edges: dict[int, tuple[CellNode, CellNode]] = {}
    for r, (run, share) in enumerate(zip(runs, shares, strict=True)):
        members = [nodes[leaves[full[j]]] for j in run]
        if len(run) == 1 and share > 1:
            rows = rows_at[leaves[full[run[0]]]]
            sub = split_cells(ids[rows, :d], share, weights=weights, set_aside=set_aside)
            if sub.children:
                node = members[0]
                node.column, node.cuts, node.children = sub.column, sub.cuts, sub.children
                edges[r] = (_edge_leaf(node, first=True), _edge_leaf(node, first=False))
                continue
        for member in members:  # one file for the run: consecutive leaves of one group
            member.group = 2 * r
    # A leaf no sampled row reached shares the file of the leaf holding rows before it (the
    # first one's, if none is before it): that leaf's last file, or first, when it has several.
    for i, leaf in enumerate(leaves):
        if masses[i] > 0:
            continue
        before = [j for j in full if j < i]
        r = run_of[before[-1]] if before else run_of[full[0]]
        group = 2 * r + 1 if before else 2 * r
        if r in edges:
            edges[r][1 if before else 0].group = group
            nodes[leaf].group = group
        else:
            nodes[leaf].group = 2 * r
    return flatten(nodes[0])


def _tree_nodes(
    tree: CutTree, cut_ids: CutIds, ids: npt.NDArray[np.uint64], d: int
) -> tuple[list[CellNode], list[int], dict[int, npt.NDArray[np.intp]]]:
    """The tree as cell nodes cutting ``ids``' columns after the first ``d``; its leaves in
    the curve's order; and the sample's rows at each leaf."""
    nodes = [CellNode() for _ in tree.column]
    rows_at: dict[int, npt.NDArray[np.intp]] = {0: np.arange(len(ids))}
    leaves: list[int] = []
    stack = [0]
    while stack:  # depth first, left before right: the leaves in the curve's order
        at = stack.pop()
        column = tree.column[at]
        rows = rows_at.pop(at)
        if column < 0:
            leaves.append(at)
            rows_at[at] = rows
            continue
        cut = cut_ids.cut_id(column, tree.value[at])
        position = d + cut_ids.columns.index(column)
        right = ids[rows, position] >= cut
        nodes[at].column = position
        nodes[at].cuts = np.array([cut], dtype=np.uint64)
        nodes[at].children = [nodes[tree.left[at]], nodes[tree.right[at]]]
        rows_at[tree.left[at]], rows_at[tree.right[at]] = rows[~right], rows[right]
        stack.extend((tree.right[at], tree.left[at]))
    return nodes, leaves, rows_at


def _runs(masses: npt.NDArray[np.float64], count: int) -> list[list[int]]:
    """Consecutive leaves (by index) in at most ``count`` runs of about equal mass.

    Each leaf alone when there are no more leaves than files; otherwise light
    leaves are packed together up to a file's mass, a heavy leaf stays alone
    (to get its files by mass), and while there are more runs than files the
    neighbouring pair of least mass is merged.
    """
    if len(masses) <= count:
        return [[i] for i in range(len(masses))]
    target = float(masses.sum()) / count
    runs: list[list[int]] = []
    current: list[int] = []
    mass = 0.0
    for i, m in enumerate(masses.tolist()):
        if current and mass + m > target:
            runs.append(current)
            current, mass = [], 0.0
        current.append(i)
        mass += m
    runs.append(current)
    weights = [float(masses[run].sum()) for run in runs]
    while len(runs) > count:
        j = min(range(len(runs) - 1), key=lambda k: weights[k] + weights[k + 1])
        runs[j : j + 2] = [runs[j] + runs[j + 1]]
        weights[j : j + 2] = [weights[j] + weights[j + 1]]
    return runs


def _edge_leaf(node: CellNode, *, first: bool) -> CellNode:
    while node.children:
        node = node.children[0 if first else -1]
    return node
