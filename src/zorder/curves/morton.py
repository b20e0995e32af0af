"""Morton (Z-order) keys: bit interleaving and the XOR comparison.

Convention used everywhere in zorder: at each bit level, most significant
level first, the first dimension's bit comes first. So for two 3-bit values
``Z(x, y) = x2 y2 x1 y1 x0 y0``.
"""

from __future__ import annotations

import functools
import math
import numbers
import struct
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from zorder.errors import InvalidArgumentError, InvalidArgumentTypeError

__all__ = [
    "deinterleave_bits",
    "interleave_array",
    "interleave_bits",
    "key_bytes",
    "less_msb",
    "zorder_less",
]


def _check_shape(dims: int, bits: int) -> None:
    if dims < 1:
        raise InvalidArgumentError(f"dims must be >= 1, got {dims}")
    if bits < 1:
        raise InvalidArgumentError(f"bits must be >= 1, got {bits}")


def _check_coordinate(value: int, bits: int, position: int) -> None:
    if value < 0 or value >> bits:
        raise InvalidArgumentError(
            f"value {value} at position {position} does not fit in {bits} unsigned bits; "
            f"accepted: 0 .. {(1 << bits) - 1}"
        )


def interleave_bits(values: Sequence[int], bits: int) -> int:
    """Interleave ``bits``-wide unsigned integers into one Z-value.

    >>> interleave_bits([3, 6], 3)
    30
    >>> bin(interleave_bits([214, 97], 8))
    '0b1011011000101001'
    """
    dims = len(values)
    _check_shape(dims, bits)
    for position, value in enumerate(values):
        _check_coordinate(value, bits, position)
    z = 0
    for level in range(bits - 1, -1, -1):
        for value in values:
            z = (z << 1) | ((value >> level) & 1)
    return z


def deinterleave_bits(z: int, dims: int, bits: int) -> tuple[int, ...]:
    """Inverse of :func:`interleave_bits`.

    >>> deinterleave_bits(30, 2, 3)
    (3, 6)
    """
    _check_shape(dims, bits)
    if z < 0 or z >> (dims * bits):
        raise InvalidArgumentError(
            f"z-value {z} does not fit in {dims} x {bits} bits; "
            f"accepted: 0 .. {(1 << (dims * bits)) - 1}"
        )
    out = [0] * dims
    position = dims * bits - 1
    for _level in range(bits):
        for dim in range(dims):
            out[dim] = (out[dim] << 1) | ((z >> position) & 1)
            position -= 1
    return tuple(out)


def less_msb(x: int, y: int) -> bool:
    """True when the highest set bit of ``x`` is below that of ``y`` (x, y >= 0).

    Chan's trick: no logarithm needed, it works for any integer width.
    """
    return x < y and x < (x ^ y)


_FLOAT_SIGN = 1 << 63
_FLOAT_MASK = (1 << 64) - 1


def _float_key(value: float) -> int:
    """Order-preserving 64-bit image of a double (-0.0 == 0.0, NaN after +inf)."""
    if math.isnan(value):
        return 0x7FF8_0000_0000_0000 | _FLOAT_SIGN
    if value == 0.0:
        value = 0.0
    raw: int = struct.unpack(">Q", struct.pack(">d", value))[0]
    return (raw ^ _FLOAT_MASK) if raw & _FLOAT_SIGN else (raw | _FLOAT_SIGN)


def zorder_less(a: Sequence[int | float], b: Sequence[int | float]) -> bool:
    """True when point ``a`` comes strictly before point ``b`` in Z-order.

    The Z-values are never built: the dimension whose XOR has the highest set
    bit decides, ties going to the earlier dimension. Integers of any width
    and sign are compared as their two's complement with the sign bit flipped
    at a width wide enough for both (so negatives come first); a dimension in
    which either side is a float compares the doubles' order-preserving bits.

    >>> zorder_less([3, 3], [0, 4])
    True
    """
    if len(a) != len(b):
        raise InvalidArgumentError(f"points have different dimensions: {len(a)} and {len(b)}")
    if not a:
        raise InvalidArgumentError("points must have at least one dimension")
    best_dim = -1
    best_xor = 0
    best_sign_split = False
    keys: list[tuple[int, int]] = []
    for dim, (x, y) in enumerate(zip(a, b, strict=True)):
        if not (isinstance(x, numbers.Real) and isinstance(y, numbers.Real)):
            raise InvalidArgumentTypeError(
                f"dimension {dim}: expected int or float, got {type(x).__name__} "
                f"and {type(y).__name__}"
            )
        if isinstance(x, numbers.Integral) and isinstance(y, numbers.Integral):
            kx, ky = int(x), int(y)
            # Differing signs differ in the (flipped) sign bit, which sits
            # above every magnitude bit at any common width: it always wins.
            sign_split = (kx < 0) != (ky < 0)
        else:
            kx, ky = _float_key(float(x)), _float_key(float(y))
            sign_split = False
        keys.append((kx, ky))
        if sign_split:
            if not best_sign_split:
                best_dim, best_sign_split = dim, True
            continue
        if best_sign_split:
            continue
        # Two same-sign integers: their XOR is non-negative in two's complement.
        xor = kx ^ ky
        if best_dim < 0 or less_msb(best_xor, xor):
            best_dim, best_xor = dim, xor
    kx, ky = keys[best_dim]
    return kx < ky


# --------------------------------------------------------------------------
# Vectorized forms


def key_bytes(dims: int, bits: int) -> int:
    """Width in bytes of the big-endian byte key for ``dims`` x ``bits`` bits."""
    return (dims * bits + 7) // 8


def _as_points(points: npt.ArrayLike, bits: int) -> npt.NDArray[np.uint64]:
    array = np.asarray(points)
    if array.ndim != 2:
        raise InvalidArgumentError(
            f"points must be a 2-d array (n x dims), got shape {array.shape}"
        )
    if not 1 <= bits <= 64:
        raise InvalidArgumentError(f"bits must be in 1 .. 64 for arrays, got {bits}")
    if array.dtype.kind == "i":
        if array.size and int(array.min()) < 0:
            raise InvalidArgumentError(
                f"negative coordinate {int(array.min())}; accepted: unsigned values"
            )
        array = array.astype(np.uint64)
    elif array.dtype.kind != "u":
        raise InvalidArgumentTypeError(f"points must have an integer dtype, got {array.dtype}")
    array = array.astype(np.uint64, copy=False)
    if bits < 64 and array.size:
        too_big = array >> np.uint64(bits)
        if too_big.any():
            bad = int(array.reshape(-1)[np.flatnonzero(too_big.reshape(-1))[0]])
            raise InvalidArgumentError(
                f"value {bad} does not fit in {bits} unsigned bits; "
                f"accepted: 0 .. {(1 << bits) - 1}"
            )
    return array


def _bit_planes(points: npt.NDArray[np.uint64], bits: int) -> npt.NDArray[np.uint8]:
    """(n, d) values -> (n, bits, d) array of bits, most significant level first."""
    n, dims = points.shape
    as_bytes = points.astype(">u8").view(np.uint8).reshape(n, dims, 8)
    planes = np.unpackbits(as_bytes, axis=2)[:, :, 64 - bits :]
    return planes.transpose(0, 2, 1)


def _pack_bit_rows(bit_rows: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """Rows of bits (most significant first) -> big-endian bytes, left-padded with zeros."""
    n, width = bit_rows.shape
    padded = np.zeros((n, 8 * ((width + 7) // 8)), dtype=np.uint8)
    padded[:, padded.shape[1] - width :] = bit_rows
    return np.packbits(padded, axis=1)


@functools.cache
def _spread_table(chunk_bits: int, stride: int) -> npt.NDArray[np.uint64]:
    """table[v] = v's bits moved from position k to position k * stride."""
    values = np.arange(1 << chunk_bits, dtype=np.uint64)
    table = np.zeros(1 << chunk_bits, dtype=np.uint64)
    for k in range(chunk_bits):
        table |= ((values >> np.uint64(k)) & np.uint64(1)) << np.uint64(k * stride)
    return table


def _interleave_levels(
    points: npt.NDArray[np.uint64], low_level: int, levels: int
) -> npt.NDArray[np.uint64]:
    """Z-value of bit levels ``low_level .. low_level + levels - 1`` (levels * d <= 64)."""
    n, dims = points.shape
    chunk = min(16, levels)  # a 2**16-entry table still sits in the L2 cache
    table = _spread_table(chunk, dims)
    out = np.zeros(n, dtype=np.uint64)
    mask = np.uint64((1 << chunk) - 1)
    for dim in range(dims):
        column = points[:, dim] >> np.uint64(low_level)
        if low_level + levels < 64:
            column &= np.uint64((1 << levels) - 1)
        for start in range(0, levels, chunk):
            spread = table[(column >> np.uint64(start)) & mask]
            out |= spread << np.uint64(start * dims + dims - 1 - dim)
    return out


def _levels_per_word(dims: int) -> int:
    """Most bit levels whose interleaving fills whole bytes of one 64-bit word (0: none)."""
    for levels in range(64 // dims, 0, -1):
        if levels * dims % 8 == 0:
            return levels
    return 0


def interleave_array(
    points: npt.ArrayLike, bits: int
) -> npt.NDArray[np.uint64] | npt.NDArray[np.uint8]:
    """Vectorized :func:`interleave_bits` over the rows of an (n x d) array.

    Returns uint64 Z-values when ``d * bits <= 64``, else an (n x bytes) uint8
    array of big-endian keys (see :func:`key_bytes`), left-padded with zero
    bits, whose lexicographic order is the Z-order.
    """
    array = _as_points(points, bits)
    n, dims = array.shape
    _check_shape(dims, bits)
    if dims * bits <= 64:
        return _interleave_levels(array, 0, bits)
    per_word = _levels_per_word(dims)
    if per_word == 0:  # more than 8 dimensions: go through bit planes
        return _pack_bit_rows(_bit_planes(array, bits).reshape(n, bits * dims))
    # Whole bytes from the lowest levels up; the top word takes the remainder
    # and the left padding.
    pieces = []
    low = 0
    while low < bits:
        levels = min(per_word, bits - low)
        word = _interleave_levels(array, low, levels)
        width = (levels * dims + 7) // 8
        pieces.append(word.astype(">u8").view(np.uint8).reshape(n, 8)[:, 8 - width :])
        low += levels
    return np.ascontiguousarray(np.hstack(pieces[::-1]))
