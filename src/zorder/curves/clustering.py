"""What clustering rows means, resolved against a schema: the columns with their types, the
curve, the key method, weights, cuts and bloom filters; and fitting its file plan.

Pure, so both engines lay rows out from one plan: Spark's
(:mod:`zorder.spark.layout`) and the in-process one (:mod:`zorder.arrow.layout`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import pyarrow as pa

from zorder.curves.cuts import CutTree
from zorder.curves.kinds import BloomColumn, ClusteringSpec, Curve, KeyMethod
from zorder.curves.plan import FilePlan, fit_file_plan, rank_bits

__all__ = [
    "DEFAULT_SAMPLE_SEED",
    "DEFAULT_SAMPLE_SIZE",
    "MAX_SAMPLE_SIZE",
    "SAMPLE_ROWS_PER_FILE",
    "WARN_ABOVE_COLUMNS",
    "ClusteringColumn",
    "ClusteringPlan",
    "bits_per_column",
    "sample_arrays",
    "sample_size_for",
]

WARN_ABOVE_COLUMNS = 8
# Not 0: data made with rand(0) would otherwise be sampled by its own values.
DEFAULT_SAMPLE_SEED = 0x5EED_2026
# Rank buckets of 1,024 ids a column (four columns) want more than a few sampled rows
# each; a partition's sample has the same floor. It was 100,000 until issue 35: for
# fewer than 100 files that sampled more rows than the files need, and the sample's
# transfer and fit were a tenth of a 1M-row write (benchmarks/phases.py).
DEFAULT_SAMPLE_SIZE = 20_000
# Files cut at sampled quantiles differ in size by about 1/sqrt(sampled rows per
# file). Measured on 3M rows into 1,000 files: 100 rows a file gave a 9.7%
# standard deviation (0.77x to 1.37x the mean), 1,000 a file 2.6% (0.92x-1.09x).
SAMPLE_ROWS_PER_FILE = 1_000
# Spark's range partitioner stops at the same size; it bounds the driver's memory.
MAX_SAMPLE_SIZE = 1_000_000


def sample_size_for(num_files: int) -> int:
    """The default sample for ``num_files`` files: SAMPLE_ROWS_PER_FILE a file,
    at least DEFAULT_SAMPLE_SIZE and at most MAX_SAMPLE_SIZE rows.

    >>> sample_size_for(4), sample_size_for(32), sample_size_for(300), sample_size_for(5_000)
    (20000, 32000, 300000, 1000000)
    """
    return min(MAX_SAMPLE_SIZE, max(DEFAULT_SAMPLE_SIZE, SAMPLE_ROWS_PER_FILE * num_files))


@dataclass(frozen=True)
class ClusteringColumn:
    """A clustering column as resolved against a schema."""

    name: str
    type_name: str  # Spark's simpleString, canonical


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


def sample_arrays(sample: pa.Table) -> list[pa.Array]:
    """A sample's columns as single arrays, as the file plan is fitted on them."""
    return [sample.column(i).combine_chunks() for i in range(sample.num_columns)]


@dataclass(frozen=True)
class ClusteringPlan:
    """What clustering rows means, checked before any job runs."""

    columns: tuple[ClusteringColumn, ...]
    curve: Curve
    method: KeyMethod
    weights: tuple[float, ...] | None = None
    cuts: CutTree | None = None
    bloom_filters: tuple[BloomColumn, ...] = ()  # as the rows' schema spells the columns

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def spec(self) -> ClusteringSpec:
        """The plan as a table records it: column names, curve, key method, weights, cuts,
        bloom filters."""
        return ClusteringSpec(
            tuple(self.names),
            self.curve,
            self.method,
            self.weights,
            self.cuts,
            bloom_filters=self.bloom_filters,
        )

    @property
    def sorts_plainly(self) -> bool:
        """One column without workload cuts, or the linear baseline: a plain range sort."""
        return self.curve == "linear" or (len(self.columns) == 1 and self.cuts is None)

    def fit(self, sample: pa.Table, *, count: int) -> FilePlan:
        """The file plan (rank keys) of ``count`` files over ``sample``, whose columns are the
        clustering columns in order."""
        return fit_file_plan(
            sample_arrays(sample)[: len(self.columns)],
            curve="hilbert" if self.curve == "hilbert" else "zorder",
            bits=bits_per_column(len(self.columns)),
            count=count,
            weights=self.weights,
            cuts=self.cuts,
            names=self.names,
        )
