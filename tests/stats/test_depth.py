"""Clustering depth from file bounds: the sweep against brute force over pairs and points."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zorder.stats.depth import ColumnDepth, column_depth, depth_bucket, file_depths

Range = tuple[int, int]


def reference_bucket(depth: int) -> int:
    """Snowflake's buckets, written out: 0..16, then 32, 64, 128, ..."""
    if depth <= 16:
        return depth
    bucket = 32
    while bucket < depth:
        bucket *= 2
    return bucket


def reference_depths(ranges: Sequence[Range], groups: Sequence[int]) -> list[tuple[int, int]]:
    """(overlaps, depth) of every file: all pairs, and every integer point of its range."""
    measured = []
    for i, (low, high) in enumerate(ranges):
        mates = [j for j in range(len(ranges)) if groups[j] == groups[i]]
        overlaps = sum(1 for j in mates if j != i and ranges[j][0] <= high and low <= ranges[j][1])
        depth = max(
            sum(1 for j in mates if ranges[j][0] <= point <= ranges[j][1])
            for point in range(low, high + 1)
        )
        measured.append((overlaps, depth))
    return measured


def reference_column(
    ranges: Sequence[Range], groups: Sequence[int], null_files: int = 0, unknown_files: int = 0
) -> ColumnDepth:
    measured = reference_depths(ranges, groups)
    count = len(measured)
    histogram = Counter(reference_bucket(depth) for _, depth in measured)
    return ColumnDepth(
        column="c",
        files=count,
        average_overlaps=sum(o for o, _ in measured) / count if count else 0.0,
        average_depth=sum(d for _, d in measured) / count if count else 0.0,
        depth_histogram=dict(sorted(histogram.items())),
        constant_files=sum(1 for low, high in ranges if low == high),
        null_files=null_files,
        unknown_files=unknown_files,
    )


def assert_same(found: ColumnDepth, expected: ColumnDepth) -> None:
    assert found.average_overlaps == pytest.approx(expected.average_overlaps)
    assert found.average_depth == pytest.approx(expected.average_depth)
    assert found == dataclasses.replace(
        expected, average_overlaps=found.average_overlaps, average_depth=found.average_depth
    )


ranges_st = st.lists(
    st.tuples(st.integers(-20, 20), st.integers(0, 12)).map(lambda r: (r[0], r[0] + r[1])),
    max_size=20,
)


def test_buckets_are_snowflakes() -> None:
    assert [depth_bucket(d) for d in (0, 1, 16, 17, 32, 33, 64, 65, 1000)] == [
        0,
        1,
        16,
        32,
        32,
        64,
        64,
        128,
        1024,
    ]


@given(st.integers(0, 5000))
def test_bucket_matches_the_written_out_rule(depth: int) -> None:
    assert depth_bucket(depth) == reference_bucket(depth)


@given(ranges_st)
def test_sweep_equals_brute_force(ranges: list[Range]) -> None:
    lows = np.array([r[0] for r in ranges], np.int64)
    highs = np.array([r[1] for r in ranges], np.int64)
    overlaps, depths = file_depths(lows, highs)
    assert list(zip(overlaps.tolist(), depths.tolist(), strict=True)) == reference_depths(
        ranges, [0] * len(ranges)
    )
    # Every file is at least its own depth; no deeper than the files it meets, plus itself.
    assert all(1 <= d <= o + 1 for o, d in zip(overlaps, depths, strict=True))


@given(ranges_st, st.data())
def test_partitions_never_overlap_and_add_up(ranges: list[Range], data: st.DataObject) -> None:
    groups = data.draw(st.lists(st.integers(0, 3), min_size=len(ranges), max_size=len(ranges)))
    found = column_depth(
        "c", pa.array([r[0] for r in ranges]), pa.array([r[1] for r in ranges]), groups
    )
    assert_same(found, reference_column(ranges, groups))


@given(st.integers(1, 40), st.integers(-5, 5))
def test_ranges_sharing_a_value_are_all_as_deep_as_their_count(count: int, shared: int) -> None:
    # Snowflake: every file overlapping every other gives overlaps n - 1 and depth n.
    lows = pa.array([shared - i for i in range(count)])
    highs = pa.array([shared + i % 3 for i in range(count)])
    found = column_depth("c", lows, highs, [0] * count)
    assert found.average_overlaps == count - 1
    assert found.average_depth == count
    assert found.depth_histogram == {depth_bucket(count): count}


def test_disjoint_files_have_depth_one_and_touching_ones_overlap() -> None:
    apart = column_depth("c", pa.array([0, 10, 20]), pa.array([9, 19, 29]), [0, 0, 0])
    assert (apart.average_overlaps, apart.average_depth, apart.depth_histogram) == (
        0.0,
        1.0,
        {1: 3},
    )
    touching = column_depth("c", pa.array([0, 9]), pa.array([9, 19]), [0, 0])
    assert (touching.average_overlaps, touching.average_depth) == (1.0, 2.0)
    # In two partitions the same ranges do not meet.
    split = column_depth("c", pa.array([0, 0]), pa.array([9, 9]), [0, 1])
    assert (split.average_overlaps, split.average_depth) == (0.0, 1.0)


def test_files_without_bounds_are_counted_apart_and_never_invented() -> None:
    found = column_depth(
        "c",
        pa.array([1, None, None, 4, 8, 5.0, float("nan")]),
        pa.array([5, 3, None, None, 9, 4.0, 7.0]),  # [5, 4]: bounds the wrong way round
        [0] * 7,
        valueless=[False, False, True, False, False, False, False],
    )
    assert found.files == 2  # [1, 5] and [8, 9]
    assert found.null_files == 1  # every row NULL: holds no value, overlaps nothing
    assert found.unknown_files == 4  # a bound missing, NaN, or the bounds reversed
    assert (found.average_overlaps, found.average_depth) == (0.0, 1.0)
    nothing = column_depth("c", pa.nulls(2, pa.int64()), pa.nulls(2, pa.int64()), [0, 0])
    assert nothing == ColumnDepth("c", 0, 0.0, 0.0, {}, 0, 0, 2)
    assert column_depth("c", pa.array([], pa.int64()), pa.array([], pa.int64()), []).files == 0


TYPED: list[tuple[st.SearchStrategy[Any], pa.DataType, Callable[[Any], Any]]] = [
    # Strings order by their UTF-8 bytes, as Spark and Delta order them.
    (st.text(max_size=4), pa.string(), lambda s: s.encode("utf-8")),
    (
        st.decimals(min_value=-100, max_value=100, places=2, allow_nan=False),
        pa.decimal128(10, 2),
        decimal.Decimal,
    ),
    (st.dates(dt.date(1, 1, 1), dt.date(9999, 1, 1)), pa.date32(), lambda d: d),
    (
        st.datetimes(dt.datetime(1900, 1, 1), dt.datetime(2200, 1, 1), timezones=st.just(dt.UTC)),
        pa.timestamp("us", "UTC"),
        lambda t: t,
    ),
    (st.floats(allow_nan=False, width=64), pa.float64(), lambda f: f),
]


@pytest.mark.parametrize(
    ("values", "kind", "key"), TYPED, ids=["string", "decimal", "date", "timestamp", "double"]
)
@settings(max_examples=max(10, settings().max_examples // 4))  # the sweep is tested above
@given(data=st.data())
def test_typed_bounds_compare_in_their_types_order(
    values: st.SearchStrategy[Any], kind: pa.DataType, key: Callable[[Any], Any], data: Any
) -> None:
    pairs = data.draw(st.lists(st.tuples(values, values), max_size=12))
    bounds = [(min(a, b, key=key), max(a, b, key=key)) for a, b in pairs]
    # The reference works on each value's place in the order, every point between.
    order = sorted({key(v) for pair in bounds for v in pair})
    place = {v: i for i, v in enumerate(order)}
    ranges = [(place[key(low)], place[key(high)]) for low, high in bounds]
    found = column_depth(
        "c",
        pa.array([low for low, _ in bounds], kind),
        pa.array([high for _, high in bounds], kind),
        [0] * len(bounds),
    )
    assert_same(found, reference_column(ranges, [0] * len(ranges)))


def test_the_sweep_is_not_quadratic() -> None:
    rng = np.random.default_rng(7)
    lows = rng.integers(0, 10**9, 100_000)
    found = column_depth(
        "c", pa.array(lows), pa.array(lows + 10**5), rng.integers(0, 100, 100_000)
    )  # well under a second; all pairs would be 10^10 comparisons
    assert found.files == 100_000
    assert 1.0 <= found.average_depth <= 2.0
