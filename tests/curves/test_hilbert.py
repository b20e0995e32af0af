"""Hilbert curve: exhaustive bijection and adjacency at small sizes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from zorder.curves import hilbert_index, hilbert_index_array, hilbert_point

SMALL = [(d, b) for d in range(1, 5) for b in range(1, 6) if d * b <= 12]


def test_first_order_two_dimensions() -> None:
    # Bit diagram of the first-order curve: 0 at the origin, then up, right, down.
    #   y=1 | 1 2
    #   y=0 | 0 3
    assert [hilbert_point(i, 2, 1) for i in range(4)] == [(0, 0), (0, 1), (1, 1), (1, 0)]


def test_second_order_two_dimensions() -> None:
    # Rows are y = 0..3, columns x = 0..3: four first-order curves, the
    # lower-left one entered along x, the lower-right one left along x.
    grid = [[hilbert_index((x, y), 2) for x in range(4)] for y in range(4)]
    assert grid == [
        [0, 1, 14, 15],
        [3, 2, 13, 12],
        [4, 7, 8, 11],
        [5, 6, 9, 10],
    ]


def test_one_dimension_is_the_line() -> None:
    assert [hilbert_index((x,), 4) for x in range(16)] == list(range(16))


@pytest.mark.parametrize(("dims", "bits"), SMALL)
def test_bijection_and_adjacency_exhaustive(dims: int, bits: int) -> None:
    size = 1 << (dims * bits)
    path = [hilbert_point(i, dims, bits) for i in range(size)]
    assert len(set(path)) == size
    assert all(0 <= c < (1 << bits) for p in path for c in p)
    for i, p in enumerate(path):
        assert hilbert_index(p, bits) == i
    for p, q in itertools.pairwise(path):
        assert sum(abs(a - b) for a, b in zip(p, q, strict=True)) == 1


@pytest.mark.parametrize(("dims", "bits"), SMALL)
def test_vectorized_equals_scalar_exhaustive(dims: int, bits: int) -> None:
    cells = np.array(list(itertools.product(range(1 << bits), repeat=dims)), dtype=np.uint64)
    keys = hilbert_index_array(cells, bits)
    assert keys.dtype == np.uint64
    assert [int(k) for k in keys] == [hilbert_index([int(v) for v in c], bits) for c in cells]


@given(
    st.integers(1, 8).flatmap(
        lambda d: st.integers(1, 40).flatmap(
            lambda b: st.tuples(
                st.just(b),
                st.lists(st.integers(0, (1 << b) - 1), min_size=d, max_size=d),
            )
        )
    )
)
def test_round_trip_wide(case: tuple[int, list[int]]) -> None:
    bits, point = case
    index = hilbert_index(point, bits)
    assert 0 <= index < 1 << (len(point) * bits)
    assert hilbert_point(index, len(point), bits) == tuple(point)


@given(
    st.integers(1, 6).flatmap(
        lambda d: st.integers(1, 64).flatmap(
            lambda b: st.tuples(
                st.just(b),
                st.lists(
                    st.lists(st.integers(0, (1 << b) - 1), min_size=d, max_size=d),
                    min_size=1,
                    max_size=12,
                ),
            )
        )
    )
)
def test_vectorized_equals_scalar_random(case: tuple[int, list[list[int]]]) -> None:
    bits, rows = case
    keys = hilbert_index_array(np.array(rows, dtype=np.uint64), bits)
    got = (
        [int(k) for k in keys]
        if keys.dtype == np.uint64
        else [int.from_bytes(bytes(r), "big") for r in keys]
    )
    assert got == [hilbert_index(r, bits) for r in rows]


def test_errors_name_the_value() -> None:
    with pytest.raises(ValueError, match="value 4 at position 0"):
        hilbert_index((4, 0), 2)
    with pytest.raises(ValueError, match="z-value 16"):
        hilbert_point(16, 2, 2)
