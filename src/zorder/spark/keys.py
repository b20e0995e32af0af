"""Clustering-key Columns computed inside Spark.

Column in, Column out: the curve keys are Arrow-batched UDFs whose NumPy
bodies are the vectorized curve core, so no Python code runs per row and
nothing but a sample and its boundaries travels to the driver.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.functions import ArrowUDFType, arrow_udf
from pyspark.sql.types import (
    BinaryType,
    DataType,
    IntegerType,
    LongType,
    StructField,
    StructType,
)

from zorder.columns import resolve_column
from zorder.curves import encoding_for
from zorder.curves.cells import FileCells, KeyRanges, balanced_ranges
from zorder.curves.cuts import CutTree
from zorder.curves.encodings import SUPPORTED_TYPES, OrderedEncoding, canonical_type_name
from zorder.curves.kinds import Curve, SpaceFillingCurve
from zorder.curves.plan import (
    MAX_RANK_BITS,
    FilePlan,
    RankedSample,
    curve_keys,
    fit_file_plan,
    rank_bits,
    rank_sample,
)
from zorder.curves.ranks import (
    STRING_SAMPLE_PREFIX,
    RankBuckets,
    direct_words,
)
from zorder.errors import (
    InvalidArgumentError,
    UnsupportedColumnTypeError,
)

__all__ = [
    "DEFAULT_SAMPLE_SEED",
    "DEFAULT_SAMPLE_SIZE",
    "MAX_RANK_BITS",
    "MAX_SAMPLE_SIZE",
    "SAMPLE_ROWS_PER_FILE",
    "WARN_ABOVE_COLUMNS",
    "CellKeyPacking",
    "SampleRanks",
    "arrow_udf_of",
    "bits_per_column",
    "cell_key",
    "cell_key_packing",
    "comparable",
    "curve_keys",
    "direct_file_key",
    "direct_ranges",
    "file_cells",
    "fit_plan",
    "fit_rank_buckets",
    "key_ids",
    "key_ranges",
    "plan_key",
    "rank_boundaries",
    "rank_key",
    "resolve_clustering_columns",
    "sample_columns",
    "sample_size_for",
]


DEFAULT_SAMPLE_SIZE = 100_000
# Files cut at sampled quantiles differ in size by about 1/sqrt(sampled rows per
# file). Measured on 3M rows into 1,000 files: 100 rows a file gave a 9.7%
# standard deviation (0.77x to 1.37x the mean), 1,000 a file 2.6% (0.92x-1.09x).
SAMPLE_ROWS_PER_FILE = 1_000
# Spark's range partitioner stops at the same size; it bounds the driver's memory.
MAX_SAMPLE_SIZE = 1_000_000
# Not 0: data made with rand(0) would otherwise be sampled by its own values.
DEFAULT_SAMPLE_SEED = 0x5EED_2026
WARN_ABOVE_COLUMNS = 8
# Bernoulli sampling at 1.1x the wanted size falls short of it with a
# probability that is negligible from a few hundred rows on.
_OVERSAMPLE = 1.1


@dataclass(frozen=True)
class ClusteringColumn:
    """A clustering column as resolved against a DataFrame's schema."""

    name: str
    type_name: str  # Spark's simpleString, canonical


def _type_name(data_type: DataType) -> str:
    return str(data_type.simpleString())


def resolve_clustering_columns(df: DataFrame, by: Sequence[str]) -> list[ClusteringColumn]:
    """Check ``by`` against ``df``'s schema; names resolve case-insensitively, as in Spark.

    Raises ValueError, naming the bad value and what would be accepted, for an
    empty or duplicated list, an unknown column or an unsupported type.
    """
    if isinstance(by, str):
        by = [by]
    names = list(df.columns)
    if not by:
        raise InvalidArgumentError(
            f"no clustering columns given; table columns: {', '.join(names)}"
        )
    fields = {f.name: f for f in df.schema.fields}
    resolved: list[ClusteringColumn] = []
    seen: set[str] = set()
    for wanted in by:
        if not isinstance(wanted, str) or not wanted:
            raise InvalidArgumentError(
                f"clustering column names must be non-empty strings, got {wanted!r}"
            )
        actual = resolve_column(wanted, names, kind="clustering column")
        if actual in seen:
            raise InvalidArgumentError(
                f"clustering column {actual!r} is listed twice in by={list(by)}"
            )
        seen.add(actual)
        spark_type = _type_name(fields[actual].dataType)
        try:
            type_name = canonical_type_name(spark_type)
        except InvalidArgumentError:
            raise UnsupportedColumnTypeError(
                f"clustering column {actual!r} has type {spark_type}, which has no order a "
                f"clustering key can use; accepted types: {', '.join(SUPPORTED_TYPES)}"
            ) from None
        resolved.append(ClusteringColumn(actual, type_name))
    return resolved


def bits_per_column(dims: int) -> int:
    """Bits of each column's bucket number in a rank key of ``dims`` columns."""
    bits = rank_bits(dims)
    if dims > WARN_ABOVE_COLUMNS:
        warnings.warn(
            f"clustering on {dims} columns: each column gets only {bits} bits "
            f"({1 << bits} buckets) of the key, so each is clustered more coarsely",
            UserWarning,
            stacklevel=3,
        )
    return bits


def comparable(column: ClusteringColumn) -> Column:
    """``column`` as far as rank buckets look at it.

    Strings and binaries are cut to their first STRING_SAMPLE_PREFIX
    characters (bytes): boundaries are sampled values cut alike, and a
    boundary b of at most that length is <= a value v exactly when it is <= v's
    prefix of that length. So samples keep no 1 MB strings, and the key UDFs
    get batches of bounded size. Values of at most that many bytes (hence
    characters) pass whole: ``substring`` copies every value it is given,
    which took a tenth of the key UDF's input time on short strings.
    """
    value = F.col(f"`{column.name}`")
    if column.type_name in ("string", "binary"):
        cut = F.substring(value, 1, STRING_SAMPLE_PREFIX)
        short = F.octet_length(value) <= STRING_SAMPLE_PREFIX
        return F.when(short, value).otherwise(cut).alias(column.name)
    return value


def sample_columns(
    df: DataFrame,
    columns: Sequence[ClusteringColumn],
    *,
    sample_size: int = DEFAULT_SAMPLE_SIZE,
    seed: int = DEFAULT_SAMPLE_SEED,
    rows: int | None = None,
) -> pa.Table:
    """A uniform sample of about ``sample_size`` rows of ``df``'s clustering columns.

    A count (unless ``rows``, the exact row count, is known, as from a Delta
    snapshot's statistics), then one Bernoulli pass over the clustering
    columns with a little oversampling; only the sampled rows travel, and the
    driver trims them to ``sample_size`` at random. Unlike
    ``orderBy(rand()).limit(n)``, whose per-partition top-n all meet in one
    task, this stays cheap on any number of partitions.
    """
    if sample_size < 1:
        raise InvalidArgumentError(f"sample_size must be >= 1, got {sample_size}")
    columns_only = df.select(*[comparable(c) for c in columns])
    if rows is None:
        rows = columns_only.count()
    if rows <= sample_size:
        return columns_only.toArrow()
    fraction = min(1.0, _OVERSAMPLE * sample_size / rows)
    sample = columns_only.sample(fraction=fraction, seed=seed).toArrow()
    if sample.num_rows > sample_size:
        keep = np.random.default_rng(seed).choice(sample.num_rows, sample_size, replace=False)
        sample = sample.take(pa.array(np.sort(keep)))
    return sample


def sample_size_for(num_files: int) -> int:
    """The default sample for ``num_files`` files: SAMPLE_ROWS_PER_FILE a file,
    at least DEFAULT_SAMPLE_SIZE and at most MAX_SAMPLE_SIZE rows.

    >>> sample_size_for(100), sample_size_for(300), sample_size_for(5_000)
    (100000, 300000, 1000000)
    """
    return min(MAX_SAMPLE_SIZE, max(DEFAULT_SAMPLE_SIZE, SAMPLE_ROWS_PER_FILE * num_files))


@dataclass(frozen=True)
class SampleRanks:
    """Rank buckets of each clustering column, fitted on a sample, and the sample's key ids."""

    buckets: dict[str, RankBuckets]
    ids: npt.NDArray[np.uint64]  # sample rows x clustering columns, as the key UDFs compute them

    @property
    def ranked(self) -> RankedSample:
        return RankedSample(tuple(self.buckets.values()), self.ids)


def _arrays(sample: pa.Table) -> list[pa.Array]:
    return [sample.column(i).combine_chunks() for i in range(sample.num_columns)]


def fit_rank_buckets(
    sample: pa.Table, columns: Sequence[ClusteringColumn], *, bits: int
) -> SampleRanks:
    """Rank buckets (quantile boundaries and ids) of each column of ``sample``."""
    ranked = rank_sample(_arrays(sample)[: len(columns)], bits=bits)
    return SampleRanks(
        {c.name: b for c, b in zip(columns, ranked.buckets, strict=True)}, ranked.ids
    )


def rank_boundaries(
    df: DataFrame,
    columns: Sequence[ClusteringColumn],
    *,
    bits: int,
    sample_size: int = DEFAULT_SAMPLE_SIZE,
    seed: int = DEFAULT_SAMPLE_SEED,
) -> dict[str, RankBuckets]:
    """Rank buckets of each column from a uniform sample of ``df``."""
    sample = sample_columns(df, columns, sample_size=sample_size, seed=seed)
    return fit_rank_buckets(sample, columns, bits=bits).buckets


def key_ids(arrays: Sequence[pa.Array], per_column: Sequence[RankBuckets]) -> np.ndarray:
    return np.stack([b.key_ids(a) for a, b in zip(arrays, per_column, strict=True)], axis=1)


def fit_plan(
    sample: pa.Table,
    ranks: SampleRanks,
    *,
    curve: SpaceFillingCurve,
    bits: int,
    count: int,
    weights: Sequence[float] | None = None,
    cuts: CutTree | None = None,
) -> FilePlan:
    """The file plan of ``count`` files fitted on ``sample`` (its columns the clustering
    columns, in order) and its ``ranks``."""
    return fit_file_plan(
        _arrays(sample)[: len(ranks.buckets)],
        curve=curve,
        bits=bits,
        count=count,
        weights=weights,
        cuts=cuts,
        ranked=ranks.ranked,
    )


def file_cells(ranks: SampleRanks, *, count: int) -> FileCells:
    """``count`` file cells of equal row mass over the rank ids of the sample, NaN's set aside."""
    plan = fit_file_plan([], curve="zorder", bits=0, count=count, ranked=ranks.ranked)
    assert isinstance(plan.files, FileCells)
    return plan.files


def key_ranges(ranks: SampleRanks, *, curve: Curve, bits: int, count: int) -> KeyRanges:
    """``count`` ranges of equal row mass of the sample's keys along ``curve``."""
    if curve != "hilbert":
        raise InvalidArgumentError(f"key ranges cut the Hilbert curve here, not {curve!r}")
    plan = fit_file_plan([], curve=curve, bits=bits, count=count, ranked=ranks.ranked)
    assert isinstance(plan.files, KeyRanges)
    return plan.files


def arrow_udf_of(function: Callable[..., pa.Array], return_type: DataType) -> Callable[..., Column]:
    with warnings.catch_warnings():
        # Spark prefers type hints; the variadic key functions cannot state their arity.
        warnings.simplefilter("ignore", UserWarning)
        udf: Callable[..., Column] = arrow_udf(function, return_type, ArrowUDFType.SCALAR)
    return udf


def rank_key(
    columns: Sequence[ClusteringColumn],
    buckets: Mapping[str, RankBuckets],
    *,
    curve: Curve,
    bits: int,
) -> Column:
    """Long key: each column's rank-bucket id (0 = null), combined along ``curve``."""
    if curve not in ("zorder", "hilbert"):
        raise InvalidArgumentError(
            f"rank keys combine columns along 'zorder' or 'hilbert', got {curve!r}"
        )
    per_column = [buckets[c.name] for c in columns]

    def keys(*arrays: pa.Array) -> pa.Array:
        ids = key_ids(arrays, per_column)
        return pa.array(curve_keys(ids, curve, bits).astype(np.int64), pa.int64())

    udf = arrow_udf_of(keys, LongType())
    return udf(*[comparable(c) for c in columns])


# Packed cell keys stay non-negative Spark longs.
_LONG_BITS = 63


@dataclass(frozen=True)
class CellKeyPacking:
    """How :func:`cell_key` puts a row's file above its rank key in one long.

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


def cell_key(
    columns: Sequence[ClusteringColumn],
    buckets: Mapping[str, RankBuckets],
    files: FileCells | KeyRanges,
    *,
    curve: Curve,
    bits: int,
) -> Column:
    """:func:`plan_key` of the plan of these rank ``buckets``, ``files`` and ``curve``."""
    if curve not in ("zorder", "hilbert"):
        raise InvalidArgumentError(
            f"rank keys combine columns along 'zorder' or 'hilbert', got {curve!r}"
        )
    if isinstance(files, FileCells) and curve != "zorder":
        raise InvalidArgumentError(
            f"file cells cut the Z-order curve, not {curve!r}; use key ranges"
        )
    per_column = tuple(buckets[c.name] for c in columns)
    return plan_key(columns, FilePlan(per_column, curve, bits, files))


def plan_key(columns: Sequence[ClusteringColumn], plan: FilePlan) -> Column:
    """Long of each row's file above its rank key along the plan's curve (see
    :class:`CellKeyPacking`).

    File and key come from one computation of the rank ids, the costly part
    for strings, so the rows need no second pass (as a range partitioner's
    sample would).
    """
    packing = cell_key_packing(len(columns), plan.bits, plan.count)

    def keys(*arrays: pa.Array) -> pa.Array:
        cell, key = plan.place(arrays)
        packed = (cell.astype(np.uint64) << np.uint64(packing.cell_shift)) | (
            key >> np.uint64(packing.dropped_bits)
        )
        return pa.array(packed.astype(np.int64), pa.int64())

    udf = arrow_udf_of(keys, LongType())
    return udf(*[comparable(c) for c in columns])


def direct_ranges(
    sample: pa.Table, columns: Sequence[ClusteringColumn], *, curve: Curve, count: int
) -> KeyRanges:
    """``count`` ranges of equal row mass of the direct keys of ``sample`` along ``curve``."""
    arrays = [sample.column(i).combine_chunks() for i in range(len(columns))]
    encodings = [encoding_for(c.type_name) for c in columns]
    return balanced_ranges(_byte_keys(_direct_keys(arrays, encodings, curve)), count)


def direct_file_key(
    columns: Sequence[ClusteringColumn], files: KeyRanges, *, curve: Curve
) -> Column:
    """Struct of each row's ``file`` (its range of ``files``) and direct ``key``.

    The key is 64-bit direct words per column combined along ``curve``, as
    big-endian bytes, so Spark's unsigned byte-wise order of binaries is the
    order along the curve. File and key come from one evaluation of the key,
    so the rows need no range partitioner's sampling pass over the UDF.
    """
    if curve not in ("zorder", "hilbert"):
        raise InvalidArgumentError(
            f"direct keys combine columns along 'zorder' or 'hilbert', got {curve!r}"
        )
    encodings = [encoding_for(c.type_name) for c in columns]

    def keys(*arrays: pa.Array) -> pa.Array:
        packed = _direct_keys(arrays, encodings, curve)
        n, width = packed.shape
        offsets = np.arange(0, (n + 1) * width, width, dtype=np.int32)
        key = pa.Array.from_buffers(
            pa.binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(packed.tobytes())]
        )
        file = pa.array(files.cell_of_keys(_byte_keys(packed)).astype(np.int32), pa.int32())
        return pa.StructArray.from_arrays([file, key], names=["file", "key"])

    struct = StructType([StructField("file", IntegerType()), StructField("key", BinaryType())])
    udf = arrow_udf_of(keys, struct)
    return udf(*[comparable(c) for c in columns])


def _direct_keys(
    arrays: Sequence[pa.Array], encodings: Sequence[OrderedEncoding], curve: Curve
) -> npt.NDArray[np.uint8]:
    """Rows' direct keys as an (n x 8 * columns) array of big-endian bytes.

    Strings and binaries may come cut by :func:`comparable`: a direct word
    reads only their first 8 bytes.
    """
    words = np.stack([direct_words(a, e) for a, e in zip(arrays, encodings, strict=True)], axis=1)
    combined = curve_keys(words, "hilbert" if curve == "hilbert" else "zorder", 64)
    if combined.ndim == 1:  # one column: a single uint64 word
        combined = combined.astype(">u8").view(np.uint8).reshape(len(words), 8)
    return np.ascontiguousarray(combined)


def _byte_keys(packed: npt.NDArray[np.uint8]) -> np.ndarray:
    """Rows of big-endian key bytes as one fixed-width NumPy bytes value each."""
    return packed.view(f"S{packed.shape[1]}").reshape(len(packed))
