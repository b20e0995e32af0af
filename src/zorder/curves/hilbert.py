"""Hilbert curve in any number of dimensions (Skilling's transform).

J. Skilling, "Programming the Hilbert curve", AIP Conf. Proc. 707 (2004):
the point's coordinates are transformed in place into the "transposed"
Hilbert index, whose bits interleaved (first coordinate first, as in
:mod:`zorder.curves.morton`) are the distance along the curve. Consecutive
distances are always neighbouring cells, which is why files clustered on the
Hilbert curve cover tighter boxes than on the Z curve.

The two directions are named as an inverse pair:
:func:`hilbert_index` (point -> distance) and :func:`hilbert_point`
(distance -> point).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from zorder.curves.morton import (
    _as_points,
    _check_coordinate,
    _check_shape,
    deinterleave_bits,
    interleave_array,
    interleave_bits,
)

__all__ = ["hilbert_index", "hilbert_index_array", "hilbert_point"]


def _axes_to_transpose(x: list[int], bits: int) -> None:
    dims = len(x)
    top = 1 << (bits - 1)
    # Undo the excess work: walk levels from the top, reflecting or swapping
    # the lower bits so every sub-cube is entered the same way.
    q = top
    while q > 1:
        low = q - 1
        for i in range(dims):
            if x[i] & q:
                x[0] ^= low
            else:
                t = (x[0] ^ x[i]) & low
                x[0] ^= t
                x[i] ^= t
        q >>= 1
    # Gray encode.
    for i in range(1, dims):
        x[i] ^= x[i - 1]
    t = 0
    q = top
    while q > 1:
        if x[dims - 1] & q:
            t ^= q - 1
        q >>= 1
    for i in range(dims):
        x[i] ^= t


def _transpose_to_axes(x: list[int], bits: int) -> None:
    dims = len(x)
    end = 2 << (bits - 1)
    # Gray decode.
    t = x[dims - 1] >> 1
    for i in range(dims - 1, 0, -1):
        x[i] ^= x[i - 1]
    x[0] ^= t
    # Redo the excess work, bottom level first.
    q = 2
    while q != end:
        low = q - 1
        for i in range(dims - 1, -1, -1):
            if x[i] & q:
                x[0] ^= low
            else:
                t = (x[0] ^ x[i]) & low
                x[0] ^= t
                x[i] ^= t
        q <<= 1


def hilbert_index(point: Sequence[int], bits: int) -> int:
    """Distance of ``point`` (``bits``-wide unsigned coordinates) along the curve.

    >>> [hilbert_index(p, 1) for p in [(0, 0), (0, 1), (1, 1), (1, 0)]]
    [0, 1, 2, 3]
    """
    dims = len(point)
    _check_shape(dims, bits)
    for position, value in enumerate(point):
        _check_coordinate(value, bits, position)
    transposed = list(point)
    _axes_to_transpose(transposed, bits)
    return interleave_bits(transposed, bits)


def hilbert_point(index: int, dims: int, bits: int) -> tuple[int, ...]:
    """Point at distance ``index`` along the curve; inverse of :func:`hilbert_index`.

    >>> hilbert_point(2, 2, 1)
    (1, 1)
    """
    _check_shape(dims, bits)
    transposed = list(deinterleave_bits(index, dims, bits))
    _transpose_to_axes(transposed, bits)
    return tuple(transposed)


def _narrowest_unsigned(bits: int) -> type[np.unsignedinteger[Any]]:
    for dtype in (np.uint8, np.uint16, np.uint32):
        if bits <= np.iinfo(dtype).bits:
            return dtype
    return np.uint64


# Rows per slice of the transform: small enough that a slice's coordinates
# stay in the CPU cache through the bits x dims passes.
_SLICE_ROWS = 1 << 15


def _axes_to_transpose_arrays(x: list[npt.NDArray[Any]], bits: int) -> None:
    """Vectorized :func:`_axes_to_transpose`, branch-free, in place."""
    dims = len(x)
    dtype = x[0].dtype.type
    q = 1 << (bits - 1)
    flag = np.empty_like(x[0])
    t = np.empty_like(x[0])
    while q > 1:
        level = dtype(q.bit_length() - 1)
        low = dtype(q - 1)
        for i in range(dims):
            # flag = all ones where x[i] has bit q, else 0.
            np.right_shift(x[i], level, out=flag)
            np.bitwise_and(flag, dtype(1), out=flag)
            np.negative(flag, out=flag)
            # t = low bits to swap where the bit is clear.
            np.bitwise_xor(x[0], x[i], out=t)
            np.bitwise_and(t, low, out=t)
            np.bitwise_and(t, np.invert(flag), out=t)
            if i:
                np.bitwise_xor(x[i], t, out=x[i])
            # Where the bit is set, reflect x[0]'s low bits; else swap with x[i].
            np.bitwise_and(flag, low, out=flag)
            np.bitwise_or(flag, t, out=flag)
            np.bitwise_xor(x[0], flag, out=x[0])
        q >>= 1
    for i in range(1, dims):
        np.bitwise_xor(x[i], x[i - 1], out=x[i])
    t.fill(0)
    q = 1 << (bits - 1)
    while q > 1:
        np.right_shift(x[dims - 1], dtype(q.bit_length() - 1), out=flag)
        np.bitwise_and(flag, dtype(1), out=flag)
        np.negative(flag, out=flag)
        np.bitwise_and(flag, dtype(q - 1), out=flag)
        np.bitwise_xor(t, flag, out=t)
        q >>= 1
    for i in range(dims):
        np.bitwise_xor(x[i], t, out=x[i])


def hilbert_index_array(
    points: npt.ArrayLike, bits: int
) -> npt.NDArray[np.uint64] | npt.NDArray[np.uint8]:
    """Vectorized :func:`hilbert_index` over the rows of an (n x d) array.

    Same return convention as :func:`zorder.curves.morton.interleave_array`:
    uint64 when ``d * bits <= 64``, else big-endian byte keys.
    """
    array = _as_points(points, bits)
    n, dims = array.shape
    _check_shape(dims, bits)
    dtype = _narrowest_unsigned(bits)
    transposed = np.empty((n, dims), dtype=np.uint64)
    for start in range(0, n, _SLICE_ROWS):
        rows = slice(start, min(n, start + _SLICE_ROWS))
        x = [array[rows, i].astype(dtype) for i in range(dims)]
        _axes_to_transpose_arrays(x, bits)
        for i in range(dims):
            transposed[rows, i] = x[i]
    return interleave_array(transposed, bits)
