"""Grow a workload cut tree greedily on a sample (qd-tree style, Yang et al., SIGMOD 2020).

Starting from all the sampled rows, the leaf whose best cut lets the
workload skip the most rows is cut, until the tree has as many leaves as
the table will have files (or no cut helps). A cut is ``column >= value``
at a value the workload's own predicates compare the column with (both
sides of each literal), or at the leaf's quartiles of the column, so that
point lookups drawn anew still find halves to skip. Whether a filter skips
a side is decided by the skipping evaluator on the side's statistics
(minimum, maximum and null count of every column), so a cut on one column
that narrows a correlated one (ship date, receipt date) counts too.

Sides are computed for all candidate cuts of a leaf at once: rows sorted by
the cut column, prefix and suffix minima and maxima of every column's value
codes (positions in the column's sorted distinct values).
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from zorder.advice.simulate import Simulation
from zorder.curves.cuts import CutTree
from zorder.skipping import Bound, might_match_mask
from zorder.skipping.nodes import (
    Comparison,
    InList,
)
from zorder.skipping.visitor import PredicateCollector, visit

__all__ = ["grow_cut_tree"]

_QUARTILES = (0.25, 0.5, 0.75)
_NO_MIN = np.iinfo(np.int64).max
_NO_MAX = -1


@dataclass
class _Column:
    name: str
    distinct: pa.Array  # sorted distinct non-null values
    codes: npt.NDArray[np.int64]  # per sampled row: position in ``distinct``, -1 for NULL
    literal_cuts: npt.NDArray[np.int64]  # codes at which the workload's literals cut


@dataclass
class _Leaf:
    rows: npt.NDArray[np.intp]
    node: int
    gain: float = 0.0
    column: int = -1
    code: int = -1


def grow_cut_tree(
    simulation: Simulation, columns: Sequence[str], *, leaves: int, min_rows: int
) -> tuple[CutTree, tuple[str, ...]] | None:
    """A cut tree over ``columns`` with up to ``leaves`` leaves of at least ``min_rows``
    sampled rows each, and the columns it cuts (its column indexes refer to these); None if
    no cut lets the workload skip anything."""
    prepared = [_prepare(simulation, name) for name in columns]
    grower = _Grower(simulation, prepared, min_rows)
    root = _Leaf(np.arange(simulation.sample.num_rows), 0)
    grower.best_cut(root)
    nodes: list[list[Any]] = [[-1, None, -1, -1]]
    heap = [(-root.gain, 0, root)]
    count, tiebreak = 1, 1
    while heap and count < leaves:
        negative_gain, _, leaf = heapq.heappop(heap)
        if -negative_gain <= 0:
            break
        column = prepared[leaf.column]
        right = column.codes[leaf.rows] >= leaf.code
        value = column.distinct[leaf.code].as_py()
        children = []
        for rows in (leaf.rows[~right], leaf.rows[right]):
            nodes.append([-1, None, -1, -1])
            child = _Leaf(rows, len(nodes) - 1)
            grower.best_cut(child)
            children.append(child)
            heapq.heappush(heap, (-child.gain, tiebreak, child))
            tiebreak += 1
        nodes[leaf.node] = [leaf.column, value, children[0].node, children[1].node]
        count += 1
    if count == 1:
        return None
    used = list(dict.fromkeys(n[0] for n in nodes if n[0] >= 0))
    remap = {old: new for new, old in enumerate(used)}
    tree = CutTree(
        column=tuple(remap[n[0]] if n[0] >= 0 else -1 for n in nodes),
        value=tuple(n[1] for n in nodes),
        left=tuple(n[2] for n in nodes),
        right=tuple(n[3] for n in nodes),
    )
    return tree, tuple(prepared[i].name for i in used)


def _prepare(simulation: Simulation, name: str) -> _Column:
    values = simulation.sample.column(name).combine_chunks()
    distinct = pc.unique(values.drop_null())
    distinct = distinct.take(pc.sort_indices(distinct))
    codes = pc.fill_null(pc.index_in(values, value_set=distinct), -1).to_numpy()
    known = distinct.to_pylist()
    cuts: set[int] = set()
    for planned in simulation.filters:
        for literal in _literals(planned.predicate, name):
            try:
                cuts.add(bisect.bisect_left(known, literal))
                cuts.add(bisect.bisect_right(known, literal))
            except TypeError:  # a literal of another kind (compared in a wider type)
                continue
    literal_cuts = np.array(sorted(c for c in cuts if 0 < c < len(known)), dtype=np.int64)
    return _Column(name, distinct, np.asarray(codes, dtype=np.int64), literal_cuts)


def _literals(predicate: Bound, column: str) -> list[Any]:
    """The values ``predicate`` compares ``column`` with."""
    return visit(predicate.tree, _Literals(column))


class _Literals(PredicateCollector[list[Any]]):
    def __init__(self, column: str) -> None:
        self.column = column

    def empty(self) -> list[Any]:
        return []

    def combine(self, left: list[Any], right: list[Any]) -> list[Any]:
        return left + right

    def visit_comparison(self, node: Comparison) -> list[Any]:
        return [node.value] if node.column == self.column else []

    def visit_in_list(self, node: InList) -> list[Any]:
        return list(node.values) if node.column == self.column else []


class _Grower:
    def __init__(self, simulation: Simulation, columns: list[_Column], min_rows: int) -> None:
        self.simulation = simulation
        self.columns = columns
        self.min_rows = max(1, min_rows)
        self.types = simulation.types

    def best_cut(self, leaf: _Leaf) -> None:
        """Set ``leaf``'s best cut and its gain (rows the workload skips, weighted)."""
        n = len(leaf.rows)
        if n < 2 * self.min_rows:
            return
        sides: list[tuple[int, int, int]] = []  # (column, code, rows on the left)
        orders = []
        for j, column in enumerate(self.columns):
            codes = column.codes[leaf.rows]
            order = np.argsort(codes, kind="stable")
            ordered = codes[order]
            present = ordered[ordered >= 0]
            if len(present) == 0 or present[0] == present[-1]:
                orders.append(order)
                continue
            low, high = int(present[0]), int(present[-1])
            quartiles = present[(np.array(_QUARTILES) * len(present)).astype(np.intp)]
            literal = column.literal_cuts[
                (column.literal_cuts > low) & (column.literal_cuts <= high)
            ]
            for code in np.unique(np.concatenate([literal, quartiles])).tolist():
                if not low < code <= high:
                    continue
                left = int(np.searchsorted(ordered, code, side="left"))
                if self.min_rows <= left <= n - self.min_rows:
                    sides.append((j, int(code), left))
            orders.append(order)
        if not sides:
            return
        stats = self._side_statistics(leaf.rows, sides, orders)
        lefts = np.array([s[2] for s in sides], dtype=np.float64)
        rights = n - lefts
        gains = np.zeros(len(sides), dtype=np.float64)
        for weight, planned in zip(self.simulation.weights, self.simulation.filters, strict=True):
            kept = might_match_mask(planned.predicate, stats, self.types)
            if not kept[0]:
                continue  # the filter skips the whole leaf already
            gains += weight * (~kept[1::2] * lefts + ~kept[2::2] * rights)
        best = int(np.argmax(gains))
        leaf.gain, leaf.column, leaf.code = float(gains[best]), sides[best][0], sides[best][1]

    def _side_statistics(
        self,
        rows: npt.NDArray[np.intp],
        sides: list[tuple[int, int, int]],
        orders: list[npt.NDArray[np.intp]],
    ) -> pa.Table:
        """Statistics of the leaf (row 0) and of both sides of every cut (rows 2k+1, 2k+2)."""
        by_column: dict[int, list[int]] = {}  # the cuts of each cut column
        for k, (j, _, _) in enumerate(sides):
            by_column.setdefault(j, []).append(k)
        minima, maxima, nulls = [], [], []
        for column in self.columns:
            low = np.empty(1 + 2 * len(sides), dtype=np.int64)
            high = np.empty_like(low)
            null = np.empty_like(low)
            codes = column.codes[rows]
            present = codes >= 0
            low[0] = codes[present].min() if present.any() else _NO_MIN
            high[0] = codes.max() if present.any() else _NO_MAX
            null[0] = int((~present).sum())
            for j, ks in by_column.items():
                ordered = codes[orders[j]]
                as_min = np.where(ordered >= 0, ordered, _NO_MIN)
                as_max = np.where(ordered >= 0, ordered, _NO_MAX)
                prefix_min = np.minimum.accumulate(as_min)
                prefix_max = np.maximum.accumulate(as_max)
                suffix_min = np.minimum.accumulate(as_min[::-1])[::-1]
                suffix_max = np.maximum.accumulate(as_max[::-1])[::-1]
                prefix_null = np.cumsum(ordered < 0)
                total_null = int(prefix_null[-1])
                for k in ks:
                    left = sides[k][2]
                    low[2 * k + 1], high[2 * k + 1] = prefix_min[left - 1], prefix_max[left - 1]
                    low[2 * k + 2], high[2 * k + 2] = suffix_min[left], suffix_max[left]
                    null[2 * k + 1] = prefix_null[left - 1]
                    null[2 * k + 2] = total_null - prefix_null[left - 1]
            minima.append(_values(column.distinct, low, _NO_MIN))
            maxima.append(_values(column.distinct, high, _NO_MAX))
            nulls.append(pa.array(null, pa.int64()))
        names = [c.name for c in self.columns]
        records = np.empty(1 + 2 * len(sides), dtype=np.int64)
        records[0] = len(rows)
        records[1::2] = [s[2] for s in sides]
        records[2::2] = len(rows) - records[1::2]
        return pa.table(
            {
                "num_records": pa.array(records),
                "min": pa.StructArray.from_arrays(minima, names=names),
                "max": pa.StructArray.from_arrays(maxima, names=names),
                "null_count": pa.StructArray.from_arrays(nulls, names=names),
            }
        )


def _values(distinct: pa.Array, codes: npt.NDArray[np.int64], missing: int) -> pa.Array:
    """The values at ``codes`` (NULL where a side holds no value)."""
    absent = codes == missing
    if len(distinct) == 0:
        return pa.nulls(len(codes), distinct.type)
    return distinct.take(pa.array(np.where(absent, 0, codes), mask=absent))
