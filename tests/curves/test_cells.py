"""File cells against a node-by-node walk, and the properties the layout relies on."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from zorder.curves.cells import balanced_cells, balanced_ranges, reference_cell, reference_range


@st.composite
def samples(draw: st.DrawFn) -> np.ndarray:
    columns = draw(st.integers(1, 4))
    rows = draw(st.integers(1, 300))
    # Few distinct ids make heavy duplicates and constant columns likely.
    high = draw(st.sampled_from([1, 3, 50, 1024]))
    return draw(hnp.arrays(np.uint64, (rows, columns), elements=st.integers(0, high)))


@given(samples(), st.integers(1, 40), st.data())
def test_cell_of_equals_the_walk(sample: np.ndarray, count: int, data: st.DataObject) -> None:
    cells = balanced_cells(sample, count)
    queries = data.draw(hnp.arrays(np.uint64, (25, sample.shape[1]), elements=st.integers(0, 1100)))
    rows = np.concatenate([sample, queries])
    got = cells.cell_of(rows)
    assert got.tolist() == [reference_cell(cells, row.tolist()) for row in rows]
    assert 1 <= cells.count <= count
    assert sorted(set(got[: len(sample)].tolist())) == list(range(cells.count))


@given(samples(), st.integers(1, 40), st.data())
def test_cells_follow_the_componentwise_order(
    sample: np.ndarray, count: int, data: st.DataObject
) -> None:
    # A row no greater than another in every column never lands in a later
    # cell: the cells are numbered along a curve, as Z-order's are.
    cells = balanced_cells(sample, count)
    low = data.draw(hnp.arrays(np.uint64, (30, sample.shape[1]), elements=st.integers(0, 1100)))
    steps = data.draw(hnp.arrays(np.uint64, low.shape, elements=st.integers(0, 100)))
    assert (cells.cell_of(low) <= cells.cell_of(low + steps)).all()


def test_distinct_rows_make_exactly_the_cells_asked_for_of_equal_mass() -> None:
    rng = np.random.default_rng(3)
    sample = rng.integers(0, 1024, (50_000, 4)).astype(np.uint64)
    for count in (1, 2, 7, 97, 100, 128):
        cells = balanced_cells(sample, count)
        assert cells.count == count
        masses = np.bincount(cells.cell_of(sample), minlength=count)
        assert masses.max() <= 1.1 * len(sample) / count
        assert masses.min() >= 0.9 * len(sample) / count


def test_each_column_is_cut_into_about_the_root_of_the_cell_count() -> None:
    # 100 cells on four columns: every column in about 100^(1/4) ~ 3.2 slabs,
    # not 4, 4, 2, 2 as binary Z-order's top bits would give.
    rng = np.random.default_rng(4)
    sample = rng.integers(0, 1024, (40_000, 4)).astype(np.uint64)
    cells = balanced_cells(sample, 100)
    inner = cells.column >= 0
    slabs_by_column = {
        column: np.mean(np.diff(cells.cut_start)[inner & (cells.column == column)] + 1)
        for column in range(4)
    }
    assert all(3 <= slabs <= 4 for slabs in slabs_by_column.values()), slabs_by_column


def test_heavy_duplicates_and_nulls_still_give_cells_of_similar_mass() -> None:
    rng = np.random.default_rng(5)
    n = 60_000
    # Column 0: 40% one value; column 1: 30% id 0 (the null bucket).
    heavy = np.where(rng.random(n) < 0.4, 500, rng.integers(1, 1024, n))
    nulls = np.where(rng.random(n) < 0.3, 0, rng.integers(1, 1024, n))
    sample = np.stack([heavy, nulls, rng.integers(0, 1024, n)], axis=1).astype(np.uint64)
    cells = balanced_cells(sample, 60)
    masses = np.bincount(cells.cell_of(sample), minlength=cells.count)
    assert cells.count == 60
    assert masses.max() <= 1.5 * n / 60
    assert masses.min() >= 0.5 * n / 60


def test_rows_that_cannot_be_told_apart_share_one_cell() -> None:
    sample = np.full((100, 3), 7, dtype=np.uint64)
    cells = balanced_cells(sample, 10)
    assert cells.count == 1
    assert set(cells.cell_of(sample).tolist()) == {0}


@pytest.mark.parametrize(
    ("sample", "count", "message"),
    [
        (np.zeros(5, dtype=np.uint64), 2, "2-d array"),
        (np.zeros((5, 2), dtype=np.uint64), 0, "count must be >= 1"),
        (np.full((5, 2), 2**40, dtype=np.uint64), 2, "below 2\\*\\*32"),
    ],
)
def test_bad_input_is_refused(sample: np.ndarray, count: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        balanced_cells(sample, count)


@given(st.integers(2, 40), st.integers(0, 2**32 - 1), st.data())
def test_cell_of_equals_the_walk_for_ids_too_wide_for_a_table(
    count: int, seed: int, data: st.DataObject
) -> None:
    # Ids in the upper half of 32 bits make the per-node lookup table too big,
    # so cell_of searches the packed cuts instead; it must agree with the walk.
    sample = np.random.default_rng(seed).integers(2**31, 2**32, (200, 3)).astype(np.uint64)
    cells = balanced_cells(sample, count)
    assert cells._next_node is None
    queries = data.draw(hnp.arrays(np.uint64, (25, 3), elements=st.integers(0, 2**32 - 1)))
    rows = np.concatenate([sample, queries])
    got = cells.cell_of(rows)
    assert got.tolist() == [reference_cell(cells, row.tolist()) for row in rows]


@given(
    hnp.arrays(np.uint64, st.integers(0, 400), elements=st.integers(0, 2**62)),
    st.integers(1, 50),
    st.sampled_from([None, 3, 40]),
)
def test_key_ranges_split_the_sample_evenly_and_in_key_order(
    keys: np.ndarray, count: int, distinct: int | None
) -> None:
    if distinct is not None:
        keys = keys % np.uint64(distinct)  # repeated keys, which no cut can separate
    ranges = balanced_ranges(keys, count)
    assert 1 <= ranges.count <= count
    files = ranges.cell_of_keys(keys)
    reference = [sum(1 for bound in ranges.bounds.tolist() if k >= bound) for k in keys.tolist()]
    assert files.tolist() == reference
    # The same keys as big-endian bytes (as direct keys are), after a zero word
    # and before a word of their own bytes: the same cuts, compared byte by byte.
    words = keys.astype(">u8").view(np.uint8).reshape(len(keys), 8)
    wide = np.hstack([np.zeros_like(words), words, words[:, ::-1]])
    byte_keys = np.ascontiguousarray(wide).view("S24").reshape(len(keys))
    byte_ranges = balanced_ranges(byte_keys, count)
    assert byte_ranges.count == ranges.count
    # NumPy hands bytes back without trailing zero bytes: pad them to compare.
    byte_bounds = [bound.ljust(24, b"\0") for bound in byte_ranges.bounds.tolist()]
    byte_files = byte_ranges.cell_of_keys(byte_keys)
    assert byte_files.tolist() == [sum(1 for b in byte_bounds if bytes(r) >= b) for r in wide]
    assert byte_files.tolist() == files.tolist()
    order = np.argsort(keys, kind="stable")
    assert (np.diff(files[order]) >= 0).all()  # ranges follow the key
    if len(keys):
        masses = np.bincount(files, minlength=ranges.count)
        assert masses.min() >= 1  # no empty file
        # A range ends at the first key reaching its quantile: it holds its share
        # plus at most the copies of one repeated key.
        _, copies = np.unique(keys, return_counts=True)
        assert masses.max() <= -(-len(keys) // count) + copies.max()


def test_rows_set_aside_get_cells_of_their_own() -> None:
    # Four columns; the last holds its set-aside id (NaN's) in 1% of the rows.
    rng = np.random.default_rng(3)
    sample = rng.integers(1, 1023, (20_000, 4)).astype(np.uint64)
    nan_rows = rng.random(len(sample)) < 0.01
    sample[nan_rows, 3] = 1023
    spread = balanced_cells(sample, 100)
    aside = balanced_cells(sample, 100, set_aside=[None, None, None, 1023])
    assert len(set(spread.cell_of(sample[nan_rows]).tolist())) > 20  # the top slab of column 3
    assert aside.count == 100
    assert set(aside.cell_of(sample[nan_rows]).tolist()) == {99}  # last along the curve
    assert 99 not in set(aside.cell_of(sample[~nan_rows]).tolist())
    sizes = np.bincount(aside.cell_of(sample[~nan_rows]), minlength=100)[:99]
    assert sizes.max() <= 1.3 * sizes.min()


@given(samples(), st.integers(1, 40), st.data())
def test_set_aside_cells_equal_the_walk(
    sample: np.ndarray, count: int, data: st.DataObject
) -> None:
    columns = sample.shape[1]
    aside = data.draw(
        st.lists(st.sampled_from([None, 1, 3, 50]), min_size=columns, max_size=columns)
    )
    cells = balanced_cells(sample, count, set_aside=aside)
    got = cells.cell_of(sample)
    assert got.tolist() == [reference_cell(cells, row.tolist()) for row in sample]
    assert 1 <= cells.count <= count
    assert sorted(set(got.tolist())) == list(range(cells.count))


def test_ranges_set_rows_aside_too() -> None:
    rng = np.random.default_rng(5)
    ids = rng.integers(1, 1023, (20_000, 3)).astype(np.uint64)
    nan_rows = rng.random(len(ids)) < 0.01
    ids[nan_rows, 2] = 1023
    keys = rng.permutation(len(ids)).astype(np.uint64)  # any key order will do
    ranges = balanced_ranges(keys, 50, ids=ids, set_aside=[None, None, 1023])
    assert ranges.count == 50
    files = ranges.cell_of_keys(keys, ids)
    some = np.flatnonzero(nan_rows)[:50].tolist() + list(range(200))
    assert [int(files[i]) for i in some] == [
        reference_range(ranges, ids[i].tolist(), int(keys[i])) for i in some
    ]
    assert set(files[nan_rows].tolist()) == {49}
    assert 49 not in set(files[~nan_rows].tolist())
    sizes = np.bincount(files[~nan_rows], minlength=50)[:49]
    assert sizes.max() <= 1.2 * sizes.min()
    plain = balanced_ranges(keys, 50)
    assert plain.aside_bounds is None
    assert (
        plain.cell_of_keys(keys).tolist()
        == np.searchsorted(plain.bounds, keys, side="right").tolist()
    )
