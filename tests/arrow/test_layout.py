"""The in-process layout (zorder.arrow.layout) against obviously correct references."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from zorder.arrow.engine import _row_partitions
from zorder.arrow.layout import curve_files, sorted_files
from zorder.curves.clustering import ClusteringColumn, ClusteringPlan

values = st.lists(st.one_of(st.none(), st.integers(-5, 5)), min_size=0, max_size=200)


def plan_of(*names: str, curve: str = "zorder") -> ClusteringPlan:
    columns = tuple(ClusteringColumn(n, "bigint") for n in names)
    return ClusteringPlan(columns, curve, "rank")  # type: ignore[arg-type]


@given(values, st.integers(1, 12))
def test_sorted_files_are_contiguous_sorted_ranges(column: list[int | None], count: int) -> None:
    rows = pa.table({"a": pa.array(column, pa.int64())})
    laid_out = sorted_files(rows, plan_of("a"), count=count)
    order = laid_out.order.tolist()
    assert sorted(order) == list(range(len(column)))  # every row once
    assert len(laid_out.numbers) <= count
    assert list(laid_out.numbers) == sorted(set(laid_out.numbers.tolist()))

    def key(v: int | None) -> tuple[bool, int]:
        return (v is not None, v or 0)  # NULLs first

    written = [column[i] for i in order]
    assert written == sorted(column, key=key)
    # A run of equal values never spans two files.
    file_of = {}
    for index in range(len(laid_out.numbers)):
        for row in laid_out.rows_of(index):
            file_of[int(row)] = index
    for value in set(column):
        assert len({file_of[i] for i, v in enumerate(column) if v == value}) == 1


@given(
    st.lists(st.tuples(st.integers(0, 50), st.integers(0, 50)), min_size=1, max_size=300),
    st.integers(1, 9),
    st.sampled_from(["zorder", "hilbert"]),
)
def test_curve_files_follow_the_plan(pairs: list[tuple[int, int]], count: int, curve: str) -> None:
    rows = pa.table({"a": [p[0] for p in pairs], "b": [p[1] for p in pairs]})
    plan = plan_of("a", "b", curve=curve)
    fitted = plan.fit(rows, count=count)
    laid_out = curve_files(rows, plan, fitted, first_file=3)
    cells, keys = fitted.place(
        [rows.column("a").combine_chunks(), rows.column("b").combine_chunks()]
    )
    assert sorted(laid_out.order.tolist()) == list(range(len(pairs)))
    for index, number in enumerate(laid_out.numbers):
        own = laid_out.rows_of(index)
        assert set(cells[own] + 3) == {number}  # each row in its cell's file
        assert list(keys[own]) == sorted(keys[own])  # sorted along the curve inside it
    assert set(laid_out.numbers - 3) == set(cells.tolist())


def test_partitions_of_rows_over_chunks() -> None:
    """Chunks with different values: each chunk encoded apart would disagree."""
    first = pa.table({"day": ["x", "y", None], "n": [1, 2, 3]})
    second = pa.table({"day": ["z", "x", None], "n": [4, 5, 6]})
    rows = pa.concat_tables([first, second])
    partitions, members = _row_partitions(rows, ["day"])
    found = {
        p.values: sorted(rows.column("n").take(pa.array(m)).to_pylist())
        for p, m in zip(partitions, members, strict=True)
    }
    assert found == {("x",): [1, 5], ("y",): [2], ("z",): [4], (None,): [3, 6]}
    assert [p.rows for p in partitions] == [len(m) for m in members]
    assert np.concatenate(members).size == rows.num_rows
