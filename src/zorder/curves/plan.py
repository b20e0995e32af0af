"""The file plan: fitted once on a sample, it says which file each row goes to.

Spark's write (:mod:`zorder.spark.keys`) and the advisor's simulation
(:mod:`zorder.advice`) both fit and apply it through these functions, so
the layout the advisor judges is the layout a write makes (one column
without cuts is the exception: a write sorts it by value with Spark's range
partitioner, here its rank buckets stand in, at 1,024 a column).

- Z-order: equal-mass cells of the rank ids (weighted, if the spec says so),
  below the spec's workload cuts if it has any;
- Hilbert: equal-mass ranges of the Hilbert key of the rank ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from zorder.curves.cells import FileCells, KeyRanges, balanced_cells, balanced_ranges
from zorder.curves.cuts import CutIds, CutTree, cut_cells, joined_ids
from zorder.curves.hilbert import hilbert_index_array
from zorder.curves.kinds import SpaceFillingCurve
from zorder.curves.morton import interleave_array
from zorder.curves.ranks import RankBuckets, rank_fit
from zorder.errors import InvalidArgumentError

__all__ = [
    "MAX_RANK_BITS",
    "CellKeyPacking",
    "FilePlan",
    "RankedSample",
    "cell_key_packing",
    "curve_keys",
    "fit_file_plan",
    "rank_bits",
    "rank_sample",
]

MAX_RANK_BITS = 10  # 1,024 buckets a column: far finer than any file box
_KEY_BITS = 62  # rank keys stay non-negative Spark longs


def rank_bits(dims: int) -> int:
    """Bits of each column's bucket number in a rank key of ``dims`` columns."""
    if not 1 <= dims <= _KEY_BITS:
        raise InvalidArgumentError(f"rank keys take 1 .. {_KEY_BITS} columns, got {dims}")
    return min(MAX_RANK_BITS, _KEY_BITS // dims)


@dataclass(frozen=True)
class RankedSample:
    """Rank buckets of each clustering column, fitted on a sample, and the sample's rank ids."""

    buckets: tuple[RankBuckets, ...]
    ids: npt.NDArray[np.uint64]  # sample rows x clustering columns


def rank_sample(arrays: Sequence[pa.Array], *, bits: int) -> RankedSample:
    """Rank buckets of each of the sample's columns, and the sample's ids."""
    fits = [rank_fit(a, bits) for a in arrays]
    ids = np.empty((len(arrays[0]) if arrays else 0, len(arrays)), dtype=np.uint64)
    for i, fit in enumerate(fits):
        ids[:, i] = fit.sample_ids
    return RankedSample(tuple(f.buckets for f in fits), ids)


def curve_keys(ids: npt.NDArray[np.uint64], curve: SpaceFillingCurve, bits: int) -> np.ndarray:
    """Each row's key along ``curve`` from its rank ids of ``bits`` bits."""
    if curve == "hilbert":
        return hilbert_index_array(ids, bits)
    return interleave_array(ids, bits)


# Packed cell keys stay non-negative Spark longs.
_LONG_BITS = 63


@dataclass(frozen=True)
class CellKeyPacking:
    """How :meth:`FilePlan.packed` puts a row's file above its rank key in one long.

    One long shuffles and sorts for less than a struct of two (8 bytes a row
    in Spark's row format instead of 32), and within a file, where the file
    number is the same for every row, the long's order is the key's. When
    file and key bits exceed 63 together (six or more columns into many
    files), the key's lowest ``dropped_bits`` go: rows then tie only at the
    finest bit levels of the order inside a file, and no file boundary moves.
    """

    key_bits: int
    dropped_bits: int

    @property
    def cell_shift(self) -> int:
        """The file number is the packed key shifted right by this many bits."""
        return self.key_bits - self.dropped_bits


def cell_key_packing(dims: int, bits: int, cell_count: int) -> CellKeyPacking:
    """The packing of ``dims`` rank ids of ``bits`` bits and files ``0 .. cell_count - 1``."""
    if cell_count < 1:
        raise InvalidArgumentError(f"cell_count must be >= 1, got {cell_count}")
    key_bits = dims * bits
    cell_bits = (cell_count - 1).bit_length()
    return CellKeyPacking(key_bits, max(0, key_bits + cell_bits - _LONG_BITS))


@dataclass(frozen=True)
class FilePlan:
    """How rows are cut into files: rank buckets, the curve, and the files over its ids."""

    buckets: tuple[RankBuckets, ...]
    curve: SpaceFillingCurve
    bits: int
    files: FileCells | KeyRanges
    cut_ids: CutIds | None = None

    @property
    def count(self) -> int:
        return self.files.count

    def rank_ids(self, arrays: Sequence[pa.Array]) -> npt.NDArray[np.uint64]:
        return np.stack(
            [b.key_ids(a) for a, b in zip(arrays, self.buckets, strict=True)], axis=1
        ).astype(np.uint64, copy=False)

    def place(
        self, arrays: Sequence[pa.Array]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint64]]:
        """Each row's file and its key along the curve (its order inside the file)."""
        ids = self.rank_ids(arrays)
        keys = np.asarray(curve_keys(ids, self.curve, self.bits), dtype=np.uint64)
        return self.cells(ids, keys, arrays), keys

    @property
    def packing(self) -> CellKeyPacking:
        return cell_key_packing(len(self.buckets), self.bits, self.count)

    def packed(self, arrays: Sequence[pa.Array]) -> npt.NDArray[np.int64]:
        """Each row's file above its key in one long (see :class:`CellKeyPacking`)."""
        cell, key = self.place(arrays)
        packing = self.packing
        packed = (cell.astype(np.uint64) << np.uint64(packing.cell_shift)) | (
            key >> np.uint64(packing.dropped_bits)
        )
        return packed.astype(np.int64)

    def cells(
        self,
        ids: npt.NDArray[np.uint64],
        keys: npt.NDArray[np.uint64],
        arrays: Sequence[pa.Array],
    ) -> npt.NDArray[np.int64]:
        if isinstance(self.files, KeyRanges):
            return self.files.cell_of_keys(keys, ids)
        if self.cut_ids is not None:
            ids = joined_ids(ids, self.cut_ids, arrays)
        return self.files.cell_of(ids)


def fit_file_plan(
    arrays: Sequence[pa.Array],
    *,
    curve: SpaceFillingCurve,
    bits: int,
    count: int,
    weights: Sequence[float] | None = None,
    cuts: CutTree | None = None,
    ranked: RankedSample | None = None,
    names: Sequence[str] = (),
) -> FilePlan:
    """The plan cutting the rows sampled in ``arrays`` (one per clustering column) into
    ``count`` files of equal mass; ``ranked`` is :func:`rank_sample` of them, if made already;
    ``names`` name the columns in errors.

    ``weights`` and ``cuts`` shape Z-order's cells (see
    :func:`~zorder.curves.cells.balanced_cells` and :mod:`zorder.curves.cuts`);
    Hilbert's ranges take neither.
    """
    if curve == "hilbert" and (weights is not None or cuts is not None):
        raise InvalidArgumentError(
            "weights and workload cuts shape Z-order's cells; Hilbert's files are ranges of "
            "its key: use curve='zorder'"
        )
    ranked = ranked if ranked is not None else rank_sample(arrays, bits=bits)
    aside = [b.set_aside_id for b in ranked.buckets]
    if curve == "hilbert":
        keys = curve_keys(ranked.ids, curve, bits)
        ranges = balanced_ranges(keys, count, ids=ranked.ids, set_aside=aside)
        return FilePlan(ranked.buckets, curve, bits, ranges)
    if cuts is None:
        cells = balanced_cells(ranked.ids, count, set_aside=aside, weights=weights)
        return FilePlan(ranked.buckets, curve, bits, cells)
    cut_ids = CutIds.of(cuts, [a.type for a in arrays], names)
    joined = joined_ids(ranked.ids, cut_ids, arrays)
    cells = cut_cells(cuts, cut_ids, joined, count, weights=weights, set_aside=aside)
    return FilePlan(ranked.buckets, curve, bits, cells, cut_ids)
