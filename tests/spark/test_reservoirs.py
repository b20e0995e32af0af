"""One-pass samples from partition reservoirs: uniform, exact in size, and one job."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import zorder.spark.keys as keys_module
from zorder.spark.jar import jvm_classes_available
from zorder.spark.keys import resolve_clustering_columns, sample_columns
from zorder.spark.reservoirs import Sketch, reservoir_size, sketch

# ---------------------------------------------------------------- the draw, without Spark


def reservoirs(counts: list[int], size: int, rng: np.random.Generator) -> Sketch:
    """What the JVM keeps: each partition's uniform reservoir of ``size`` of its rows
    (row ids numbered across partitions), with its index and count."""
    ids, partition, rows = [], [], []
    start = 0
    for index, count in enumerate(counts):
        kept = rng.choice(count, min(count, size), replace=False) + start
        ids.append(kept)
        partition += [index] * len(kept)
        rows += [count] * len(kept)
        start += count
    order = rng.permutation(len(partition))  # rows arrive in no particular order
    table = pa.table({"id": np.concatenate(ids)}).take(pa.array(order))
    return Sketch(table, np.array(partition)[order], np.array(rows)[order])


def test_every_row_is_drawn_with_the_same_probability_across_uneven_partitions() -> None:
    counts = [400, 1_600, 100, 900]  # 3,000 rows; reservoirs of 300 serve a draw of 300
    total, wanted, trials = sum(counts), 300, 3_000
    rng = np.random.default_rng(7)
    hits = np.zeros(total)
    for trial in range(trials):
        drawn = reservoirs(counts, 700, rng).draw(wanted, seed=trial)
        assert drawn is not None
        ids = drawn.column("id").to_numpy()
        assert len(ids) == wanted
        assert len(set(ids.tolist())) == wanted
        hits[ids] += 1
    # Each row in a sample with probability 0.1: 300 of 3,000 trials, give or take 16.4.
    expected = trials * wanted / total
    spread = np.sqrt(expected * (1 - wanted / total))
    assert np.abs(hits - expected).max() < 5 * spread
    start = 0
    for count in counts:  # each partition's share, to well within 1%
        share = hits[start : start + count].sum() / (trials * wanted)
        assert abs(share - count / total) < 0.01
        start += count


def test_a_partition_above_its_share_leaves_the_draw_to_a_count() -> None:
    rng = np.random.default_rng(1)
    heavy = reservoirs([100_000, 10, 10], reservoir_size(1_000, 3), rng)
    assert heavy.count == 100_020
    assert heavy.draw(1_000, seed=1) is None  # about 999 rows wanted of a reservoir of 756
    # Fewer rows than the sample: all of them, when every reservoir holds its partition.
    small = reservoirs([5, 0, 7], 10, rng)
    drawn = small.draw(1_000, seed=1)
    assert drawn is not None
    assert sorted(drawn.column("id").to_pylist()) == list(range(12))
    assert reservoirs([50, 3], 10, rng).draw(1_000, seed=1) is None  # 40 rows never kept


# ---------------------------------------------------------------- in Spark


@contextmanager
def jobs_counted(spark: SparkSession) -> Iterator[list[int]]:
    """The number of Spark jobs run inside the block, in the list it yields."""
    counted: list[int] = []
    group = "zorder-test-reservoirs"
    spark.sparkContext.setJobGroup(group, "counted")
    try:
        yield counted
    finally:
        counted.append(len(spark.sparkContext.statusTracker().getJobIdsForGroup(group)))
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]


def uneven(spark: SparkSession, sizes: list[int]) -> DataFrame:
    """Ids 0.. in one partition per size, the partitions as big as ``sizes``."""
    frames, start = [], 0
    for size in sizes:
        frames.append(spark.range(start, start + size, 1, 1))
        start += size
    frame = frames[0]
    for other in frames[1:]:
        frame = frame.union(other)
    return frame.select(F.col("id"), (F.col("id") % 97).alias("x"))


pytestmark_spark = pytest.mark.spark


@pytestmark_spark
def test_rows_nobody_counted_are_sampled_uniformly_in_one_job(spark: SparkSession) -> None:
    assert jvm_classes_available(spark)
    frame = uneven(spark, [10_000, 20_000, 30_000, 40_000])
    columns = resolve_clustering_columns(frame, ["id", "x"])
    with jobs_counted(spark) as jobs:
        sample = sample_columns(frame, columns, sample_size=10_000, seed=3)
    assert jobs == [1]
    ids = sample.column("id").to_numpy()
    assert len(ids) == 10_000
    assert len(np.unique(ids)) == 10_000
    assert ((ids >= 0) & (ids < 100_000)).all()
    assert sample.column("x").to_pylist() == (ids % 97).tolist()  # whole rows, as they were
    shares = np.histogram(ids, bins=[0, 10_000, 30_000, 60_000, 100_000])[0] / 10_000
    assert np.abs(shares - [0.1, 0.2, 0.3, 0.4]).max() < 0.015  # sd of each about 0.004
    again = sample_columns(frame, columns, sample_size=10_000, seed=3)
    assert again.equals(sample)  # the same seed, the same sample


@pytestmark_spark
def test_a_partition_holding_most_rows_is_sampled_after_the_sketch(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = uneven(spark, [50_000, *[100] * 8])
    columns = resolve_clustering_columns(frame, ["id", "x"])
    counts: list[int | None] = []
    real = sketch

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        made = real(*args, **kwargs)
        counts.append(None if made is None else made.count)
        return made

    monkeypatch.setattr(keys_module, "sketch", spy)
    with jobs_counted(spark) as jobs:
        sample = sample_columns(frame, columns, sample_size=5_000, seed=3)
    assert counts == [50_800]  # the sketch counted the rows, and its draw fell short
    assert jobs == [2]  # the sketch, then a Bernoulli pass that needs no count
    ids = sample.column("id").to_numpy()
    assert len(ids) == 5_000
    assert len(np.unique(ids)) == 5_000


@pytestmark_spark
def test_many_small_partitions_are_counted_first(spark: SparkSession) -> None:
    frame = spark.range(0, 4_000, 1, 200).select("id")
    columns = resolve_clustering_columns(frame, ["id"])
    assert sketch(frame, 1_000, 3) is None  # 200 reservoirs of 35 would be 7x the sample
    with jobs_counted(spark) as jobs:
        sample = sample_columns(frame, columns, sample_size=1_000, seed=3)
    assert len(jobs) == 1
    assert jobs[0] >= 2
    assert len(set(sample.column("id").to_pylist())) == 1_000
