"""Morton keys against slow bit-by-bit references and the worked examples."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from zorder.curves import (
    deinterleave_bits,
    encoding_for,
    interleave_array,
    interleave_bits,
    key_bytes,
    less_msb,
    zorder_less,
)


def reference_interleave(values: list[int], bits: int) -> int:
    """Z-value built from binary strings, one character per bit."""
    columns = [format(v, f"0{bits}b") for v in values]
    return int("".join("".join(level) for level in zip(*columns, strict=True)), 2)


@st.composite
def points(draw: st.DrawFn, max_dims: int = 8, max_bits: int = 80) -> tuple[list[int], int]:
    dims = draw(st.integers(1, max_dims))
    bits = draw(st.integers(1, max_bits))
    values = draw(st.lists(st.integers(0, (1 << bits) - 1), min_size=dims, max_size=dims))
    return values, bits


# Worked examples from the design notes.
@pytest.mark.parametrize(
    ("values", "bits", "expected"),
    [
        ([3, 6], 3, 0b011110),
        ([7, 3], 3, 0b101111),
        ([214, 97], 8, 0b1011011000101001),
        ([0, 0], 1, 0),
        ([1], 5, 1),
        ([1, 0, 0], 1, 0b100),
    ],
)
def test_golden_examples(values: list[int], bits: int, expected: int) -> None:
    assert interleave_bits(values, bits) == expected
    assert deinterleave_bits(expected, len(values), bits) == tuple(values)


def test_eight_by_eight_grid_is_the_z_pattern() -> None:
    row0 = [interleave_bits([x, 0], 3) for x in range(8)]
    assert row0 == [0, 2, 8, 10, 32, 34, 40, 42]
    col0 = [interleave_bits([0, y], 3) for y in range(8)]
    assert col0 == [0, 1, 4, 5, 16, 17, 20, 21]


@given(points())
def test_interleave_matches_reference(point: tuple[list[int], int]) -> None:
    values, bits = point
    assert interleave_bits(values, bits) == reference_interleave(values, bits)


@given(points())
def test_round_trip(point: tuple[list[int], int]) -> None:
    values, bits = point
    z = interleave_bits(values, bits)
    assert z < 1 << (len(values) * bits)
    assert deinterleave_bits(z, len(values), bits) == tuple(values)


def test_values_beyond_64_bits() -> None:
    big = (1 << 100) - 1
    z = interleave_bits([big, 0], 100)
    assert z == reference_interleave([big, 0], 100)
    assert deinterleave_bits(z, 2, 100) == (big, 0)


def test_out_of_range_value_names_it() -> None:
    with pytest.raises(ValueError, match=r"value 8 at position 1 does not fit in 3 unsigned bits"):
        interleave_bits([1, 8], 3)
    with pytest.raises(ValueError, match="value -1"):
        interleave_bits([-1], 3)
    with pytest.raises(ValueError, match="z-value 64"):
        deinterleave_bits(64, 2, 3)
    with pytest.raises(ValueError, match="dims must be >= 1"):
        interleave_bits([], 3)


@given(st.integers(0, 1 << 70), st.integers(0, 1 << 70))
def test_less_msb(x: int, y: int) -> None:
    assert less_msb(x, y) == (x.bit_length() < y.bit_length())


def test_zorder_less_example() -> None:
    assert zorder_less([3, 3], [0, 4])
    assert not zorder_less([0, 4], [3, 3])
    assert not zorder_less([5, 5], [5, 5])


@given(points(max_dims=6, max_bits=70))
def test_zorder_less_agrees_with_z_values_unsigned(point: tuple[list[int], int]) -> None:
    a, bits = point
    b = [v ^ (v >> 1) for v in reversed(a)] if len(a) > 1 else [a[0] // 2]
    for x, y in ((a, b), (b, a), (a, a)):
        expected = interleave_bits(x, bits) < interleave_bits(y, bits)
        assert zorder_less(x, y) == expected


@given(
    st.integers(1, 5).flatmap(
        lambda d: st.tuples(
            st.lists(st.integers(-(1 << 40), 1 << 40), min_size=d, max_size=d),
            st.lists(st.integers(-(1 << 40), 1 << 40), min_size=d, max_size=d),
        )
    ),
    st.integers(42, 90),
)
def test_zorder_less_signed_matches_sign_flipped_interleave(
    ab: tuple[list[int], list[int]], width: int
) -> None:
    a, b = ab
    flip = 1 << (width - 1)

    def z(point: list[int]) -> int:
        return interleave_bits([(v + flip) % (1 << width) for v in point], width)

    assert zorder_less(a, b) == (z(a) < z(b))


finite_or_not = st.floats(allow_nan=True, allow_infinity=True)


@given(
    st.integers(1, 4).flatmap(
        lambda d: st.tuples(
            st.lists(finite_or_not, min_size=d, max_size=d),
            st.lists(finite_or_not, min_size=d, max_size=d),
        )
    )
)
def test_zorder_less_floats_match_encoded_interleave(ab: tuple[list[float], list[float]]) -> None:
    a, b = ab
    enc = encoding_for("double")

    def z(point: list[float]) -> int:
        return interleave_bits([enc.encode(v) for v in point], 64)

    assert zorder_less(a, b) == (z(a) < z(b))


def test_zorder_less_rejects_bad_points() -> None:
    with pytest.raises(ValueError, match="different dimensions: 2 and 1"):
        zorder_less([1, 2], [1])
    with pytest.raises(TypeError, match="dimension 0: expected int or float, got str"):
        zorder_less(["a"], [1])  # type: ignore[list-item]


@st.composite
def arrays(draw: st.DrawFn) -> tuple[np.ndarray, int]:
    dims = draw(st.integers(1, 9))
    bits = draw(st.integers(1, 64))
    n = draw(st.integers(0, 20))
    rows = draw(
        st.lists(
            st.lists(st.integers(0, (1 << bits) - 1), min_size=dims, max_size=dims),
            min_size=n,
            max_size=n,
        )
    )
    return np.array(rows, dtype=np.uint64).reshape(n, dims), bits


def as_ints(keys: np.ndarray) -> list[int]:
    if keys.dtype == np.uint64:
        return [int(k) for k in keys]
    return [int.from_bytes(bytes(row), "big") for row in keys]


@given(arrays())
def test_vectorized_interleave_equals_scalar(case: tuple[np.ndarray, int]) -> None:
    points_array, bits = case
    n, dims = points_array.shape
    keys = interleave_array(points_array, bits)
    if dims * bits <= 64:
        assert keys.dtype == np.uint64
        assert keys.shape == (n,)
    else:
        assert keys.dtype == np.uint8
        assert keys.shape == (n, key_bytes(dims, bits))
    expected = [interleave_bits([int(v) for v in row], bits) for row in points_array]
    assert as_ints(keys) == expected


def test_vectorized_interleave_rejects_out_of_range() -> None:
    with pytest.raises(ValueError, match="value 9 does not fit in 3 unsigned bits"):
        interleave_array(np.array([[1, 9]]), 3)
    with pytest.raises(ValueError, match="negative coordinate -2"):
        interleave_array(np.array([[1, -2]]), 3)
    with pytest.raises(ValueError, match="2-d array"):
        interleave_array(np.array([1, 2]), 3)
