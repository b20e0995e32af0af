"""A uniform sample of rows nobody has counted, in one pass (zorder's jar).

Each partition of the DataFrame keeps a uniform reservoir of its rows and
counts them (``zorder.spark.Reservoirs`` in the JVM); the driver then draws
the sample from the reservoirs. How many rows come from each partition follows
the multivariate hypergeometric law over the partitions' counts, and they are
drawn uniformly from its reservoir, so the result is a uniform sample without
replacement of the whole DataFrame, as a count followed by a Bernoulli pass
gives, in one job instead of two. A partition holding more of the rows than its
reservoir can serve (far more than its share) leaves the draw to that slower
path, which then needs no count.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame

__all__ = ["MAX_SKETCH_ROWS", "Sketch", "reservoir_size", "sketch"]

# The reservoirs reach the driver whole: at most this many times the sample's rows.
MAX_SKETCH_ROWS = 2.5


def reservoir_size(sample_size: int, partitions: int) -> int:
    """Rows each partition keeps for a sample of ``sample_size`` over ``partitions`` partitions:
    twice an even share and some, so a partition up to twice the average size serves its draw.

    >>> reservoir_size(100_000, 8), reservoir_size(100_000, 1), reservoir_size(10, 1_000)
    (25464, 100000, 10)
    """
    share = sample_size / max(1, partitions)
    return min(sample_size, math.ceil(2 * share + 4 * math.sqrt(share) + 16))


@dataclass(frozen=True)
class Sketch:
    """Each partition's reservoir: ``rows`` (the sampled columns), and for each row its
    partition's index and that partition's row count."""

    rows: pa.Table
    partition: np.ndarray
    partition_rows: np.ndarray

    @property
    def count(self) -> int:
        """The rows of the whole DataFrame."""
        _, first = np.unique(self.partition, return_index=True)
        return int(self.partition_rows[first].sum())

    def draw(self, sample_size: int, seed: int) -> pa.Table | None:
        """A uniform sample of ``min(sample_size, count)`` rows, in partition order; None when a
        partition's reservoir is too small for its share of the draw."""
        order = np.argsort(self.partition, kind="stable")
        _, first, kept = np.unique(self.partition[order], return_index=True, return_counts=True)
        counts = self.partition_rows[order][first].astype(np.int64)
        if counts.sum() <= sample_size:
            return self.rows if bool((kept == counts).all()) else None
        rng = np.random.default_rng(seed)
        share = rng.multivariate_hypergeometric(counts, sample_size)
        if bool((share > kept).any()):
            return None
        # A uniformly random share[p] of partition p's reservoir, itself uniform over p's rows.
        group = np.repeat(np.arange(len(first)), kept)
        shuffled = np.lexsort((rng.random(len(order)), group))
        position = np.arange(len(order)) - first[group]
        chosen = order[shuffled[position < share[group]]]
        return self.rows.take(pa.array(np.sort(chosen), pa.int64()))


def sketch(columns: DataFrame, sample_size: int, seed: int) -> Sketch | None:
    """One job over ``columns`` (a classic session's, with zorder's jar loaded) keeping each
    partition's reservoir for a sample of ``sample_size`` rows; None, and no job, where the
    reservoirs would hold more than MAX_SKETCH_ROWS times the sample (many small
    partitions: there a count costs little beside the pass)."""
    jvm = columns.sparkSession.sparkContext._jvm
    assert jvm is not None  # a classic session
    reservoirs = jvm.zorder.spark.Reservoirs
    partitions = reservoirs.partitions(columns._jdf)
    size = reservoir_size(sample_size, partitions)
    if partitions * size > MAX_SKETCH_ROWS * sample_size:
        return None
    suffix = uuid.uuid4().hex
    partition, count = f"__zorder_partition_{suffix}", f"__zorder_rows_{suffix}"
    sketched = DataFrame(
        reservoirs.sketch(columns._jdf, size, seed, partition, count), columns.sparkSession
    ).toArrow()
    return Sketch(
        sketched.drop_columns([partition, count]),
        sketched.column(partition).to_numpy(),
        sketched.column(count).to_numpy(),
    )
