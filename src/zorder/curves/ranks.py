"""Clustering keys over Arrow arrays: rank buckets and direct encodings.

Both key methods turn each clustering column into unsigned integers that the
curves then combine:

- **rank** (default; Delta's range_partition_id, Hudi's boundary index):
  boundaries are quantiles of a sample; a value's bucket is the number of
  boundaries <= it, plus one, and nulls take bucket 0. Skew, offsets and
  shared prefixes stop mattering because buckets are equally full.
- **direct**: the order-preserving encodings of :mod:`zorder.curves.encodings`
  aligned to 64 bits, with the null flag as the top bit (so the lowest bit of
  a 64-bit encoding is dropped to make room).

These functions run inside Spark's Arrow-batched UDFs on the executors; the
scalar reference semantics they are tested against are
:func:`reference_bucket` and :func:`reference_direct_word`.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from zorder.curves.encodings import OrderedEncoding
from zorder.curves.search import GuidedSearch
from zorder.errors import InvalidArgumentError

__all__ = [
    "STRING_SAMPLE_PREFIX",
    "BoundarySearch",
    "RankBuckets",
    "RankFit",
    "bucket_ids",
    "direct_words",
    "quantile_boundaries",
    "rank_buckets",
    "rank_fit",
    "ranked_prefix",
    "reference_bucket",
    "reference_direct_word",
]

# Sampled strings are cut to this many characters before boundaries are
# chosen: any string is a valid boundary, and 1 MB values must not be held
# by the thousand in a sample.
STRING_SAMPLE_PREFIX = 256


def ranked_prefix(values: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """``values`` as far as rank buckets look at them: strings cut to their first
    STRING_SAMPLE_PREFIX characters, binaries to as many bytes, anything else whole.

    The Arrow twin of Spark's :func:`zorder.spark.keys.comparable` (``substring``
    counts characters in a string, bytes in a binary): a sample drawn in
    process cuts its values as one Spark collects does.
    """
    dtype = values.type
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
        return pc.utf8_slice_codeunits(values, 0, STRING_SAMPLE_PREFIX)
    if pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype):
        return pc.binary_slice(values, 0, STRING_SAMPLE_PREFIX)
    return values


_U64 = np.uint64


def _is_stringlike(dtype: pa.DataType) -> bool:
    return bool(
        pa.types.is_string(dtype)
        or pa.types.is_large_string(dtype)
        or pa.types.is_binary(dtype)
        or pa.types.is_large_binary(dtype)
        or pa.types.is_decimal(dtype)
    )


def _numeric_view(array: pa.Array) -> npt.NDArray[Any]:
    """A NumPy array with the same order as the Arrow values (nulls filled arbitrarily)."""
    dtype = array.type
    if pa.types.is_boolean(dtype):
        array = pc.cast(array, pa.uint8())
    elif pa.types.is_date32(dtype):
        array = array.view(pa.int32())
    elif pa.types.is_timestamp(dtype) or pa.types.is_date64(dtype):
        array = array.view(pa.int64())
    if array.null_count:
        fill = pa.scalar(0, array.type) if not pa.types.is_floating(array.type) else 0.0
        array = pc.fill_null(array, fill)
    values: npt.NDArray[Any] = array.to_numpy(zero_copy_only=False)
    return values


def _canonical_floats(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    # -0.0 and 0.0 are one value; every NaN is the one NaN (sorted last).
    return np.where(values == 0, values.dtype.type(0), values)


@dataclass(frozen=True)
class _SortedSample:
    """A sample's non-null values in order, grouped into runs of equal values."""

    values: pa.Array  # the non-null values (floats canonical), in sample order
    valid: npt.NDArray[np.bool_]  # which sample rows they are
    order: npt.NDArray[np.intp]  # values.take(order) is sorted
    run: npt.NDArray[np.intp]  # run number of each sorted position
    run_start: npt.NDArray[np.intp]  # first sorted position of each run

    @classmethod
    def of(cls, sample: pa.Array) -> _SortedSample:
        valid = np.asarray(sample.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        values = sample.drop_null()
        if pa.types.is_floating(values.type) and len(values):
            values = pa.array(_canonical_floats(values.to_numpy(zero_copy_only=False)), values.type)
        n = len(values)
        new_run = np.ones(n, dtype=bool)
        if _is_stringlike(values.type):
            order = np.asarray(pc.sort_indices(values).to_numpy(), dtype=np.intp)
            if n > 1:
                ordered = values.take(pa.array(order))
                differs = pc.not_equal(ordered.slice(1), ordered.slice(0, n - 1))
                new_run[1:] = differs.to_numpy(zero_copy_only=False)
        else:
            # Order words sort numbers as Spark does, NaN last and equal to itself.
            # Equal values share an id, so their order among themselves is free.
            words = _order_words(_numeric_view(values))
            order = np.argsort(words)
            ordered_words = words[order]
            new_run[1:] = ordered_words[1:] != ordered_words[:-1]
        return cls(
            values=values,
            valid=valid,
            order=order,
            run=np.cumsum(new_run) - 1,
            run_start=np.flatnonzero(new_run),
        )

    def boundary_runs(self, count: int) -> npt.NDArray[np.intp]:
        """The runs holding the values at ``count`` evenly spaced quantiles, minimum's aside."""
        n = len(self.order)
        if n == 0 or count == 0:
            return np.zeros(0, dtype=np.intp)
        # Boundaries cut the sorted sample into count + 1 equally full parts.
        positions = np.minimum(n - 1, (np.arange(1, count + 1) * n) // (count + 1))
        runs = np.unique(self.run[positions])
        # A boundary at the sample's minimum would leave bucket 1 empty.
        return runs[runs > 0]

    def nan_run(self) -> int | None:
        """The run of NaN values (the last one, NaN sorting above every number), if any."""
        if len(self.order) == 0 or not pa.types.is_floating(self.values.type):
            return None
        last = self.values[int(self.order[-1])].as_py()
        return int(self.run[-1]) if isinstance(last, float) and math.isnan(last) else None

    def boundaries(self, runs: npt.NDArray[np.intp]) -> pa.Array:
        return self.values.take(pa.array(self.order[self.run_start[runs]]))


def quantile_boundaries(sample: pa.Array, count: int) -> pa.Array:
    """Up to ``count`` distinct boundaries at evenly spaced quantiles of ``sample``.

    Nulls in the sample are ignored (they have a bucket of their own). NaN
    sorts after every number, as in Spark, and may be a boundary.
    """
    if count < 1:
        raise InvalidArgumentError(f"count must be >= 1, got {count}")
    ordered = _SortedSample.of(sample)
    return ordered.boundaries(ordered.boundary_runs(count))


def _order_words(values: npt.NDArray[Any]) -> npt.NDArray[np.uint64]:
    """uint64 words in the order of numeric ``values`` (canonical floats, NaN last)."""
    kind = values.dtype.kind
    if kind in "bu":
        return values.astype(_U64)
    if kind == "i":
        return values.astype(np.int64).view(_U64) ^ _U64(1 << 63)
    floats = np.where(np.isnan(values), np.nan, _canonical_floats(values)).astype(np.float64)
    bits = floats.view(_U64)
    negative = (bits >> _U64(63)).astype(bool)
    words: npt.NDArray[np.uint64] = np.where(negative, ~bits, bits | _U64(1 << 63))
    return words


class BoundarySearch:
    """Bucket ids against one sorted set of boundaries, prepared once for many batches.

    Numbers are compared as order-preserving uint64 words and strings and
    binaries by their 8-byte prefixes, both through a
    :class:`~zorder.curves.search.GuidedSearch`; decimals by a merge.
    """

    def __init__(self, boundaries: pa.Array) -> None:
        self.boundaries = boundaries
        self._guide: GuidedSearch | None = None
        self._prefixes: npt.NDArray[np.uint64] | None = None
        dtype = boundaries.type
        if len(boundaries) == 0 or pa.types.is_decimal(dtype):
            return
        if _is_stringlike(dtype):
            self._prefixes = _fixed_prefix(boundaries, 8)
            self._guide = GuidedSearch(self._prefixes)
        else:
            self._guide = GuidedSearch(_order_words(_numeric_view(boundaries)))

    def bucket_ids(self, values: pa.Array) -> npt.NDArray[np.uint64]:
        """Bucket of each value: 0 for null, else 1 + the number of boundaries <= it."""
        n = len(values)
        if len(self.boundaries) == 0:
            out = np.ones(n, dtype=_U64)
        elif pa.types.is_decimal(values.type):
            out = _merge_rank(values, self.boundaries)
        elif self._prefixes is not None:
            out = self._prefix_rank(values)
        else:
            assert self._guide is not None
            words = _order_words(_numeric_view(values))
            out = self._guide.count(words, side="right").astype(_U64) + _U64(1)
        if values.null_count:
            valid = np.asarray(values.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
            out[~valid] = 0
        return out

    def _prefix_rank(self, values: pa.Array) -> npt.NDArray[np.uint64]:
        """Bucket ids of strings or binaries by their first 8 bytes, exactly.

        Zero-padded big-endian 8-byte prefixes order like the values wherever
        they differ, so counting the boundaries' prefixes below a value's places
        every value whose prefix no boundary shares; only the others (usually
        few) go through the exact merge of :func:`_merge_rank`.
        """
        assert self._prefixes is not None
        assert self._guide is not None
        boundaries, bound_prefixes = self.boundaries, self._prefixes
        values = values.cast(boundaries.type) if values.type != boundaries.type else values
        value_prefixes = _fixed_prefix(values, 8)
        below = self._guide.count(value_prefixes, side="left")
        out = below.astype(_U64) + _U64(1)
        # A tie: the first boundary not below the value's prefix has that very prefix.
        first_not_below = bound_prefixes[np.minimum(below, len(bound_prefixes) - 1)]
        tied = np.flatnonzero((below < len(bound_prefixes)) & (first_not_below == value_prefixes))
        if tied.size:
            out[tied] = _merge_rank(values.take(pa.array(tied)), boundaries)
        return out


def bucket_ids(values: pa.Array, boundaries: pa.Array) -> npt.NDArray[np.uint64]:
    """Bucket of each value: 0 for null, else 1 + the number of boundaries <= it.

    ``boundaries`` must be sorted, distinct and of the same type as ``values``.
    For many batches against the same boundaries, keep a :class:`BoundarySearch`.
    """
    return BoundarySearch(boundaries).bucket_ids(values)


def _merge_rank(values: pa.Array, boundaries: pa.Array) -> npt.NDArray[np.uint64]:
    """Bucket ids by one stable sort of boundaries followed by values.

    A stable sort keeps each boundary before the values equal to it, so the
    number of boundaries seen up to a value's place is bisect_right's answer.
    Arrow compares strings and binaries byte by byte, as Spark does.
    """
    values = values.cast(boundaries.type) if values.type != boundaries.type else values
    nb = len(boundaries)
    combined = pa.concat_arrays([boundaries, values])
    order = pc.sort_indices(combined).to_numpy()
    is_boundary = order < nb
    seen = np.cumsum(is_boundary)
    out = np.empty(len(values), dtype=_U64)
    value_slots = ~is_boundary
    out[order[value_slots] - nb] = seen[value_slots].astype(_U64) + _U64(1)
    return out


@dataclass(frozen=True)
class RankBuckets:
    """One column's rank buckets: boundaries, and the key id of every bucket."""

    boundaries: pa.Array
    ids: npt.NDArray[np.uint64]  # ids[bucket]; ids[0] = 0 is the null bucket
    set_aside_id: int | None = None  # NaN's own id (the top one), which file cells set aside

    @functools.cached_property
    def search(self) -> BoundarySearch:
        return BoundarySearch(self.boundaries)

    def key_ids(self, values: pa.Array) -> npt.NDArray[np.uint64]:
        return self.ids[self.search.bucket_ids(values).astype(np.intp)]


@dataclass(frozen=True)
class RankFit:
    """Rank buckets fitted on a sample, and the key id of each of the sample's rows."""

    buckets: RankBuckets
    sample_ids: npt.NDArray[np.uint64]  # equal to buckets.key_ids(sample)


def rank_fit(sample: pa.Array, bits: int) -> RankFit:
    """Boundaries from ``sample`` and ids that place each bucket at its mid-rank.

    Bucket ``j`` gets id ``1 + floor(mid_j * (2**bits - 1))`` where ``mid_j``
    is the fraction of sampled rows below the middle of the bucket. With
    distinct values the buckets are equally full and the ids evenly spread;
    a value held by a quarter of the rows gets a quarter of the id range
    around its place, so every bit level of the key still halves the rows,
    however skewed or duplicated the column (a few distinct values included).

    Floating columns (with two bits or more) keep the top id for NaN alone,
    as nulls have id 0: NaN is the last boundary, whether or not the sample
    holds one, and the numbers share the ids below. A file holding NaN gets
    no bounds on that column, so the file cells set these rows aside
    (:func:`zorder.curves.cells.balanced_cells`) rather than spread them.

    One sort of the sample gives the boundaries, the buckets' masses and the
    sample's own ids (a boundary's bucket starts at its run of equal values),
    so the sample is never searched against its boundaries.
    """
    top = (1 << bits) - 1
    ordered = _SortedSample.of(sample)
    nan_aside = pa.types.is_floating(sample.type) and top >= 2
    number_top = top - 1 if nan_aside else top
    runs = ordered.boundary_runs(number_top - 1)
    nan_run = ordered.nan_run() if nan_aside else None
    if nan_run is not None:
        runs = np.append(runs[runs < nan_run], nan_run)
    boundaries = ordered.boundaries(runs)
    if nan_aside and nan_run is None:
        boundaries = pa.concat_arrays([boundaries, pa.array([math.nan], boundaries.type)])
    buckets = len(boundaries) + 1
    # Bucket of each run: 1 + the number of boundary runs up to and including it.
    starts_bucket = np.zeros(len(ordered.run_start), dtype=np.intp)
    starts_bucket[runs] = 1
    sorted_buckets = (np.cumsum(starts_bucket) + 1)[ordered.run]
    masses = np.bincount(sorted_buckets, minlength=buckets + 1)[1:].astype(np.float64)
    ids = np.empty(buckets + 1, dtype=_U64)
    ids[0] = 0
    if nan_aside:
        ids[1:-1] = _mid_rank_ids(masses[:-1], number_top)
        ids[-1] = top
    else:
        ids[1:] = _mid_rank_ids(masses, top)
    valid_ids = np.empty(len(ordered.order), dtype=_U64)
    valid_ids[ordered.order] = ids[sorted_buckets]
    sample_ids = np.zeros(len(sample), dtype=_U64)
    sample_ids[ordered.valid] = valid_ids
    buckets_fit = RankBuckets(boundaries, ids, set_aside_id=top if nan_aside else None)
    return RankFit(buckets_fit, sample_ids)


def _mid_rank_ids(masses: npt.NDArray[np.float64], top: int) -> npt.NDArray[np.uint64]:
    """Ids in 1 .. ``top`` of buckets with these row masses, each at its mid-rank."""
    total = masses.sum()
    if total == 0:
        masses = np.ones(len(masses))
        total = float(len(masses))
    middles = (np.cumsum(masses) - masses / 2) / total
    ids: npt.NDArray[np.uint64] = np.minimum(
        _U64(1) + np.floor(middles * top).astype(_U64), _U64(top)
    )
    return ids


def rank_buckets(sample: pa.Array, bits: int) -> RankBuckets:
    """The rank buckets of :func:`rank_fit`."""
    return rank_fit(sample, bits).buckets


# --------------------------------------------------------------------------
# Direct encodings, 64 bits per column


def _fixed_prefix(array: pa.Array, width: int) -> npt.NDArray[np.uint64]:
    """First ``width`` (<= 8) bytes of each binary/string value, big-endian, 0x00-padded."""
    if pa.types.is_large_string(array.type) or pa.types.is_large_binary(array.type):
        array = array.cast(pa.large_binary())
        offset_type: Any = np.int64
    else:
        array = array.cast(pa.binary())
        offset_type = np.int32
    _, offsets_buf, data_buf = array.buffers()
    n = len(array)
    offsets = np.frombuffer(offsets_buf, dtype=offset_type)[array.offset : array.offset + n + 1]
    starts = offsets[:-1].astype(np.int64)
    kept = np.minimum(offsets[1:] - offsets[:-1], width).astype(np.intp)
    # Eight zero bytes after the data let every value's window be read whole:
    # one big-endian uint64 per byte offset, then the bytes past the value's end
    # (or past ``width``) are masked off.
    stop = int(offsets[-1]) if n else 0
    data = np.zeros(stop + 8, dtype=np.uint8)
    if data_buf is not None and stop:
        data[:stop] = np.frombuffer(data_buf, dtype=np.uint8, count=stop)
    windows = np.ndarray(shape=(stop + 1,), dtype=">u8", buffer=data, strides=(1,))
    words: npt.NDArray[np.uint64] = windows[starts].astype(_U64) & _PREFIX_MASKS[kept]
    return words


# _PREFIX_MASKS[k]: the top k bytes of a 64-bit word.
_PREFIX_MASKS = np.array([((1 << (8 * k)) - 1) << (8 * (8 - k)) for k in range(9)], dtype=_U64)


def _decimal_words(array: pa.Array, precision: int) -> npt.NDArray[np.uint64]:
    """Top 64 bits of the sign-flipped unscaled value (all of it when p <= 18)."""
    n = len(array)
    buffer = array.buffers()[1]
    words = np.frombuffer(buffer, dtype="<u8")[2 * array.offset : 2 * (array.offset + n)]
    low, high = words[0::2], words[1::2]
    sign = _U64(1 << 63)
    if precision <= 18:
        return low ^ sign  # the value fits in the low word, sign-extended
    return high ^ sign


def _encoded_words(array: pa.Array, encoding: OrderedEncoding) -> npt.NDArray[np.uint64]:
    """Order-preserving encodings, left-aligned to 64 bits (nulls filled arbitrarily)."""
    dtype = array.type
    sign = _U64(1 << 63)
    if encoding.type_name in ("string", "binary"):
        width = encoding.value_bits // 8
        if width > 8:
            raise InvalidArgumentError(f"direct keys take at most 8 prefix bytes, got {width}")
        return _fixed_prefix(array, width)
    if pa.types.is_decimal(dtype):
        return _decimal_words(array, dtype.precision)
    values = _numeric_view(array)
    if values.dtype.kind == "f":
        width = values.dtype.itemsize * 8
        canonical = _canonical_floats(values)
        nan_bits = 0x7FC0_0000 if width == 32 else 0x7FF8_0000_0000_0000
        raw = canonical.view(np.uint32 if width == 32 else np.uint64).astype(_U64)
        raw = np.where(np.isnan(values), _U64(nan_bits), raw)
        top = _U64(1 << (width - 1))
        mask = _U64((1 << width) - 1)
        encoded = np.where(raw & top, raw ^ mask, raw | top)
        return encoded << _U64(64 - width)
    if values.dtype.kind == "u":  # booleans
        return values.astype(_U64) << _U64(64 - encoding.value_bits)
    bits = encoding.value_bits
    flipped = values.astype(np.int64).view(_U64) ^ sign  # sign flip at 64 bits
    # Sign-extended then flipped at 64 bits equals the narrow encoding shifted up.
    return flipped if bits == 64 else (flipped - (sign - _U64(1 << (bits - 1)))) << _U64(64 - bits)


def direct_words(array: pa.Array, encoding: OrderedEncoding) -> npt.NDArray[np.uint64]:
    """64-bit direct key word per value: null flag on top, then the encoding's top 63 bits."""
    words = _encoded_words(array, encoding) >> _U64(1)
    flag = _U64(1 << 63)
    if encoding.nulls == "first":
        words |= flag
        null_word = _U64(0)
    else:
        null_word = flag
    if array.null_count:
        valid = np.asarray(array.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        words[~valid] = null_word
    return words


# --------------------------------------------------------------------------
# Scalar references (slow, obviously correct)


def _sort_key(value: object, encoding: OrderedEncoding) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", errors="surrogatepass")
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    return encoding.encode(value)


def reference_bucket(value: object, boundaries: Sequence[object], encoding: OrderedEncoding) -> int:
    """Scalar :func:`bucket_ids`: 0 for null, else 1 + #boundaries <= value."""
    if value is None:
        return 0
    keys = [_sort_key(b, encoding) for b in boundaries]
    return 1 + bisect.bisect_right(keys, _sort_key(value, encoding))


def reference_direct_word(value: object, encoding: OrderedEncoding) -> int:
    """Scalar :func:`direct_words`."""
    flag = 1 << 63
    if value is None:
        return 0 if encoding.nulls == "first" else flag
    encoded = encoding.encode(value)
    bits = encoding.value_bits
    aligned = encoded << (64 - bits) if bits <= 64 else encoded >> (bits - 64)
    word = aligned >> 1
    return (flag | word) if encoding.nulls == "first" else word
