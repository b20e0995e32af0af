"""Workload cuts and weighted cells: every row lands in a cell, the cells follow the cuts."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from zorder.curves.cells import balanced_cells, reference_cell
from zorder.curves.cuts import CutIds, CutTree, cut_cells, joined_ids
from zorder.curves.kinds import ClusteringSpec
from zorder.errors import InvalidArgumentError
from zorder.table.clustering import recorded_spec, spec_properties

DAY0 = dt.date(2020, 1, 1)


def reference_leaf(tree: CutTree, row: list[Any]) -> int:
    """The leaf a row of values reaches, walking the tree (NULL goes left)."""
    node = 0
    while tree.column[node] >= 0:
        value = row[tree.column[node]]
        right = value is not None and value >= tree.value[node]
        node = tree.right[node] if right else tree.left[node]
    return node


@st.composite
def trees(draw: st.DrawFn) -> CutTree:
    """A random tree over (int 0..99, date in 2020) grown by splitting random leaves."""
    column: list[int] = [-1]
    value: list[int | dt.date | None] = [None]
    left: list[int] = [-1]
    right: list[int] = [-1]
    for _ in range(draw(st.integers(0, 12))):
        leaves = [i for i, c in enumerate(column) if c < 0]
        at = draw(st.sampled_from(leaves))
        which = draw(st.integers(0, 1))
        cut = (
            draw(st.integers(1, 99))
            if which == 0
            else DAY0 + dt.timedelta(draw(st.integers(1, 364)))
        )
        column[at], value[at], left[at], right[at] = which, cut, len(column), len(column) + 1
        column += [-1, -1]
        value += [None, None]
        left += [-1, -1]
        right += [-1, -1]
    return CutTree(tuple(column), tuple(value), tuple(left), tuple(right))


def _sample(seed: int, n: int) -> list[pa.Array]:
    rng = np.random.default_rng(seed)
    numbers = rng.integers(0, 100, n)
    days = rng.integers(0, 365, n)
    nulls = rng.random(n) < 0.05
    return [
        pa.array([None if z else int(x) for x, z in zip(numbers, nulls, strict=True)], pa.int64()),
        pa.array([DAY0 + dt.timedelta(int(d)) for d in days], pa.date32()),
    ]


@given(tree=trees(), count=st.integers(1, 20), seed=st.integers(0, 1000))
def test_cut_cells_follow_the_tree(tree: CutTree, count: int, seed: int) -> None:
    arrays = _sample(seed, 400)
    cut_ids = CutIds.of(tree, [a.type for a in arrays])
    rank_ids = np.stack(
        [np.nan_to_num(a.to_numpy(zero_copy_only=False).astype("float"), nan=0) for a in arrays[:1]]
        + [np.arange(400) % 7],
        axis=1,
    ).astype(np.uint64)
    ids = joined_ids(rank_ids, cut_ids, arrays)
    cells = cut_cells(tree, cut_ids, ids, count)
    found = cells.cell_of(ids)
    assert (found >= 0).all()
    assert (found < cells.count).all()
    assert cells.count <= max(count, 1)
    rows = list(zip(*(a.to_pylist() for a in arrays), strict=True))
    leaves = np.array([reference_leaf(tree, list(r)) for r in rows])
    for i in range(0, 400, 37):
        assert found[i] == reference_cell(cells, ids[i].tolist())
    full_leaves = len(set(leaves.tolist()))
    if count >= full_leaves:  # each file holds one leaf's rows: its box is the leaf's
        for cell in np.unique(found):
            assert len(set(leaves[found == cell].tolist())) == 1
    else:  # light leaves packed whole; a leaf cut into several files owns all of them
        for leaf in np.unique(leaves):
            own = set(found[leaves == leaf].tolist())
            if len(own) > 1:
                assert set(leaves[np.isin(found, list(own))].tolist()) == {leaf}


def test_cut_cells_share_many_files_among_big_leaves() -> None:
    arrays = _sample(1, 2000)
    tree = CutTree((0, -1, -1), (50, None, None), (1, -1, -1), (2, -1, -1))
    cut_ids = CutIds.of(tree, [a.type for a in arrays])
    rank_ids = np.stack([np.arange(2000) % 1000, np.arange(2000) // 2], axis=1).astype(np.uint64)
    ids = joined_ids(rank_ids, cut_ids, arrays)
    cells = cut_cells(tree, cut_ids, ids, 10)
    found = cells.cell_of(ids)
    assert cells.count == 10
    sizes = np.bincount(found)
    assert sizes.min() > 0.6 * sizes.mean()
    right = np.array([v is not None and v >= 50 for v in arrays[0].to_pylist()])
    assert not set(found[right].tolist()) & set(found[~right].tolist())


def test_weights_share_the_cuts_unequally() -> None:
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 1024, (20_000, 2)).astype(np.uint64)
    even = balanced_cells(ids, 64)
    heavy = balanced_cells(ids, 64, weights=[2.0, 1.0])
    only_first = balanced_cells(ids, 64, weights=[1.0, 0.0])

    def slabs(cells: Any, column: int) -> int:
        """The most slabs a node of ``column`` cuts its rows into (1: never cut)."""
        counts = np.diff(cells.cut_start)[cells.column == column]
        return int(counts.max()) + 1 if len(counts) else 1

    assert slabs(even, 0) == slabs(even, 1) == 8
    assert slabs(heavy, 0) == 16
    assert slabs(heavy, 1) == 4
    assert slabs(only_first, 1) == 1
    assert only_first.count == 64
    with pytest.raises(InvalidArgumentError, match="weights must be 2 finite numbers"):
        balanced_cells(ids, 4, weights=[1.0])
    with pytest.raises(InvalidArgumentError, match="positive weight"):
        balanced_cells(ids, 4, weights=[0.0, 0.0])


VALUES = [
    7,
    -2.5,
    decimal.Decimal("0.07"),
    "DELIVER IN PERSON",
    b"\x00\xff",
    dt.date(1995, 1, 1),
    dt.datetime(2026, 3, 29, 1, 30, tzinfo=dt.UTC),
    dt.datetime(2026, 3, 29, 1, 30),
    True,
]


@pytest.mark.parametrize("value", VALUES, ids=[type(v).__name__ for v in VALUES])
def test_a_spec_with_cuts_and_weights_is_recorded_and_read_back(value: Any) -> None:
    tree = CutTree(
        (1, -1, 0, -1, -1), (value, None, 3, None, None), (1, -1, 3, -1, -1), (2, -1, 4, -1, -1)
    )
    spec = ClusteringSpec(("a", "b"), "zorder", "rank", weights=(1.0, 0.5), cuts=tree)
    properties = spec_properties(spec)
    back = recorded_spec(properties)
    assert back == spec
    assert back is not None
    assert back.fingerprint == spec.fingerprint
    assert back.cuts is not None
    assert type(back.cuts.value[0]) is type(value)


def test_plain_specs_keep_their_fingerprint_and_clear_old_weights() -> None:
    plain = ClusteringSpec(("a", "b"), "zorder", "rank")
    assert plain.fingerprint == "4df667d6"  # as every earlier version named its runs
    properties = spec_properties(plain)
    assert properties["zorder.clustering.weights"] == "null"
    assert properties["zorder.clustering.cuts"] == "null"
    assert recorded_spec(properties) == plain


def test_bad_specs_say_what_is_accepted() -> None:
    with pytest.raises(InvalidArgumentError, match="curve='zorder', method='rank'"):
        ClusteringSpec(("a", "b"), "hilbert", "rank", weights=(1.0, 1.0))
    with pytest.raises(InvalidArgumentError, match="one per column"):
        ClusteringSpec(("a", "b"), "zorder", "rank", weights=(1.0,))
    with pytest.raises(InvalidArgumentError, match="beyond the 1"):
        ClusteringSpec(
            ("a",),
            "zorder",
            "rank",
            cuts=CutTree((1, -1, -1), (5, None, None), (1, -1, -1), (2, -1, -1)),
        )
    with pytest.raises(InvalidArgumentError, match="children"):
        CutTree((0, -1), (5, None), (0, -1), (1, -1))
    with pytest.raises(InvalidArgumentError, match="cut value"):
        CutTree.from_json([[0, {"month": 5}, 1, 2], [-1], [-1]])


def test_heavy_leaves_keep_their_files_and_empty_samples_get_one() -> None:
    # Leaves in order: [<5], [5,10), [10,20), [>=20]; rows only in [10,20), cut into files.
    tree = CutTree(
        (0, 0, -1, -1, 0, -1, -1),
        (10, 5, None, None, 20, None, None),
        (1, 2, -1, -1, 5, -1, -1),
        (4, 3, -1, -1, 6, -1, -1),
    )
    a = pa.array(list(range(10, 20)) * 10, pa.int64())
    b = pa.array(list(range(100)), pa.int64())
    cut_ids = CutIds.of(tree, [a.type, b.type])
    ids = joined_ids(
        np.stack([a.to_numpy(), b.to_numpy()], axis=1).astype(np.uint64), cut_ids, [a, b]
    )
    for count in (1, 2, 3, 4):
        cells = cut_cells(tree, cut_ids, ids, count)
        assert cells.count == count
        assert len(set(cells.cell_of(ids).tolist())) == count
        unseen = joined_ids(
            np.zeros((2, 2), np.uint64), cut_ids, [pa.array([1, 99]), pa.array([0, 0])]
        )
        assert set(cells.cell_of(unseen).tolist()) <= set(range(count))
    # One heavy leaf among light ones, fewer files than leaves: the heavy one gets the files.
    heavy = pa.array([30] * 96 + [1, 7, 12, 25], pa.int64())
    small = CutTree(
        (0, 0, -1, -1, 0, -1, 0, -1, -1),
        (10, 5, None, None, 20, None, 30, None, None),
        (1, 2, -1, -1, 5, -1, 7, -1, -1),
        (4, 3, -1, -1, 6, -1, 8, -1, -1),
    )
    cut_ids = CutIds.of(small, [heavy.type, b.type])
    ids = joined_ids(
        np.stack([heavy.to_numpy(), b.to_numpy()], axis=1).astype(np.uint64), cut_ids, [heavy, b]
    )
    cells = cut_cells(small, cut_ids, ids, 4)
    sizes = np.bincount(cells.cell_of(ids))
    assert cells.count == 4
    assert sizes.max() < 60
    empty = pa.array([], pa.int64())
    from zorder.curves.plan import fit_file_plan

    plan = fit_file_plan(
        [empty],
        curve="zorder",
        bits=10,
        count=4,
        cuts=CutTree((0, -1, -1), (5, None, None), (1, -1, -1), (2, -1, -1)),
    )
    assert plan.count == 1
    assert plan.place([pa.array([1, 9, None], pa.int64())])[0].tolist() == [0, 0, 0]


def test_cut_values_are_found_whatever_their_python_form() -> None:
    # A date cut on a column widened to timestamp_ntz; an int cut on a double column.
    tree = CutTree(
        (0, -1, 1, -1, -1),
        (dt.date(2020, 1, 2), None, 3, None, None),
        (1, -1, 3, -1, -1),
        (2, -1, 4, -1, -1),
    )
    days = pa.array(
        [dt.datetime(2020, 1, 1, 23), dt.datetime(2020, 1, 2), None, dt.datetime(2020, 1, 3)],
        pa.timestamp("us"),
    )
    numbers = pa.array([2.5, 3.0, 4.0, 2.9])
    cut_ids = CutIds.of(tree, [days.type, numbers.type])
    ids = joined_ids(np.zeros((4, 2), np.uint64), cut_ids, [days, numbers])
    cells = cut_cells(tree, cut_ids, ids, 3)
    # Before the cut and NULL go left; at the cut goes right, then 3.0 >= 3 and 2.9 < 3.
    assert cells.cell_of(ids).tolist() == [0, 2, 0, 1]
    with pytest.raises(InvalidArgumentError, match="column 'n' do not fit its type int8"):
        CutIds.of(
            CutTree((0, -1, -1), (1000, None, None), (1, -1, -1), (2, -1, -1)), [pa.int8()], ["n"]
        )


def test_malformed_trees_are_refused() -> None:
    with pytest.raises(InvalidArgumentError, match="exactly one parent"):
        CutTree((0, 0, -1, -1), (5, 3, None, None), (1, 2, -1, -1), (2, 3, -1, -1))
    with pytest.raises(InvalidArgumentError, match="two nodes after it"):
        CutTree((0, -1), (5, None), (1, -1), (1, -1))
    with pytest.raises(InvalidArgumentError, match="not NaN"):
        CutTree((0, -1, -1), (float("nan"), None, None), (1, -1, -1), (2, -1, -1))


def test_weights_name_the_same_runs_however_they_are_written() -> None:
    ints = ClusteringSpec(("a", "b"), "zorder", "rank", weights=(2, 1))
    floats = ClusteringSpec(("a", "b"), "zorder", "rank", weights=(2.0, 1.0))
    assert ints == floats
    assert ints.fingerprint == floats.fingerprint
    assert recorded_spec(spec_properties(ints)) == ints
    with pytest.raises(InvalidArgumentError, match="weights must be numbers"):
        ClusteringSpec(("a", "b"), "zorder", "rank", weights=("2", 1))  # type: ignore[arg-type]


def test_a_spec_with_workload_cuts_prints_in_one_line() -> None:
    """Printed, a spec counts its cuts (which may be thousands of a workload's literals)."""
    values = tuple(range(0, 3_000, 3))
    nodes = len(values)
    column = (*([0] * nodes), *([-1] * (nodes + 1)))
    # A right-leaning chain: node i cuts at values[i]; its left child a leaf, its right node i+1.
    left = tuple(nodes + i for i in range(nodes)) + (-1,) * (nodes + 1)
    right = tuple(i + 1 if i + 1 < nodes else 2 * nodes for i in range(nodes)) + (-1,) * (nodes + 1)
    tree = CutTree(column, values + (None,) * (nodes + 1), left, right)
    spec = ClusteringSpec(("a", "b"), "zorder", "rank", weights=(2, 1), cuts=tree)
    assert str(spec) == "zorder(a, b) weights 2:1, 1000 workload cuts"
    assert repr(spec) == (
        "ClusteringSpec(columns=('a', 'b'), curve='zorder', method='rank', "
        "weights=(2.0, 1.0), cuts=<1000 workload cuts>)"
    )
    assert repr(tree) == "CutTree(<1000 cuts on columns [0]>)"
    assert "\n" not in repr(spec)
