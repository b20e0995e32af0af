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

import numpy as np
import numpy.typing as npt

from zorder.curves.morton import (
    _as_points,
    _bit_planes,
    _check_coordinate,
    _check_shape,
    deinterleave_bits,
    interleave_bits,
    pack_bit_rows,
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
    x = [array[:, i].copy() for i in range(dims)]
    zero = np.uint64(0)
    q = 1 << (bits - 1)
    while q > 1:
        bit, low = np.uint64(q), np.uint64(q - 1)
        for i in range(dims):
            has_bit = (x[i] & bit) != zero
            # Where the bit is set, reflect x[0]'s low bits; else swap them with x[i]'s.
            swap = np.where(has_bit, zero, (x[0] ^ x[i]) & low)
            x[0] ^= np.where(has_bit, low, swap)
            if i:
                x[i] ^= swap
        q >>= 1
    for i in range(1, dims):
        x[i] ^= x[i - 1]
    t = np.zeros(n, dtype=np.uint64)
    q = 1 << (bits - 1)
    while q > 1:
        t ^= np.where((x[dims - 1] & np.uint64(q)) != zero, np.uint64(q - 1), zero)
        q >>= 1
    for i in range(dims):
        x[i] ^= t
    transposed = np.stack(x, axis=1)
    planes = _bit_planes(transposed, bits)
    return pack_bit_rows(planes.reshape(n, bits * dims))
