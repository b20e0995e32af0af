"""Rank buckets and direct words over Arrow arrays against scalar references."""

from __future__ import annotations

import datetime as dt
import decimal
import math
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from zorder.curves import NullOrder, encoding_for
from zorder.curves.ranks import (
    _fixed_prefix,
    _sort_key,
    bucket_ids,
    direct_words,
    quantile_boundaries,
    rank_buckets,
    rank_fit,
    reference_bucket,
    reference_direct_word,
)

UTC = dt.UTC

# (Spark type name, Arrow type, strategy of non-null values)
TYPES: list[tuple[str, pa.DataType, st.SearchStrategy[Any]]] = [
    ("boolean", pa.bool_(), st.booleans()),
    ("tinyint", pa.int8(), st.integers(-128, 127)),
    ("smallint", pa.int16(), st.integers(-(2**15), 2**15 - 1)),
    ("int", pa.int32(), st.integers(-(2**31), 2**31 - 1)),
    ("bigint", pa.int64(), st.integers(-(2**63), 2**63 - 1)),
    ("float", pa.float32(), st.floats(width=32)),
    ("double", pa.float64(), st.floats()),
    (
        "decimal(10,2)",
        pa.decimal128(10, 2),
        st.decimals(min_value=-(10**8) + 1, max_value=10**8 - 1, places=2),
    ),
    (
        "decimal(38,4)",
        pa.decimal128(38, 4),
        st.integers(-(10**38) + 1, 10**38 - 1).map(
            lambda u: decimal.Decimal(u).scaleb(-4, context=decimal.Context(prec=60))
        ),
    ),
    ("date", pa.date32(), st.dates()),
    (
        "timestamp",
        pa.timestamp("us", tz="UTC"),
        st.datetimes(timezones=st.just(UTC)),
    ),
    ("timestamp_ntz", pa.timestamp("us"), st.datetimes()),
    ("string", pa.string(), st.text(max_size=12)),
    ("binary", pa.binary(), st.binary(max_size=12)),
]
IDS = [t[0] for t in TYPES]
NULL_ORDERS: tuple[NullOrder, ...] = ("first", "last")


def column(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Any]]:
    return st.lists(st.one_of(st.none(), strategy), max_size=40)


@pytest.mark.parametrize(("type_name", "arrow_type", "values"), TYPES, ids=IDS)
@given(data=st.data())
def test_bucket_ids_match_reference(
    type_name: str, arrow_type: pa.DataType, values: st.SearchStrategy[Any], data: st.DataObject
) -> None:
    sample = data.draw(column(values))
    rows = data.draw(column(values))
    count = data.draw(st.integers(1, 12))
    boundaries = quantile_boundaries(pa.array(sample, arrow_type), count)
    assert len(boundaries) <= count
    bounds = boundaries.to_pylist()
    enc = encoding_for(type_name)
    got = bucket_ids(pa.array(rows, arrow_type), boundaries)
    assert got.dtype == np.uint64
    assert list(got) == [reference_bucket(v, bounds, enc) for v in rows]


@pytest.mark.parametrize(("type_name", "arrow_type", "values"), TYPES, ids=IDS)
@given(data=st.data())
def test_quantile_boundaries_are_the_sorted_sample_at_evenly_spaced_positions(
    type_name: str, arrow_type: pa.DataType, values: st.SearchStrategy[Any], data: st.DataObject
) -> None:
    sample = data.draw(column(values))
    count = data.draw(st.integers(1, 12))
    encoding = encoding_for(type_name)
    ordered = sorted((_sort_key(v, encoding), v) for v in sample if v is not None)
    n = len(ordered)
    picked = {ordered[min(n - 1, i * n // (count + 1))][0] for i in range(1, count + 1) if n}
    expected = sorted(k for k in picked if k != ordered[0][0])  # never the minimum
    got = quantile_boundaries(pa.array(sample, arrow_type), count).to_pylist()
    assert [_sort_key(v, encoding) for v in got] == expected


@pytest.mark.parametrize(("type_name", "arrow_type", "values"), TYPES, ids=IDS)
@given(data=st.data())
def test_a_fit_gives_its_sample_the_ids_a_search_would(
    type_name: str, arrow_type: pa.DataType, values: st.SearchStrategy[Any], data: st.DataObject
) -> None:
    sample = pa.array(data.draw(column(values)), arrow_type)
    bits = data.draw(st.integers(1, 6))
    fit = rank_fit(sample, bits)
    assert fit.sample_ids.dtype == np.uint64
    assert fit.sample_ids.tolist() == fit.buckets.key_ids(sample).tolist()


@pytest.mark.parametrize(("type_name", "arrow_type", "values"), TYPES, ids=IDS)
@given(data=st.data())
def test_direct_words_match_reference(
    type_name: str, arrow_type: pa.DataType, values: st.SearchStrategy[Any], data: st.DataObject
) -> None:
    rows = data.draw(column(values))
    nulls = data.draw(st.sampled_from(NULL_ORDERS))
    enc = encoding_for(type_name, nulls=nulls)
    array = pa.array(rows, arrow_type)
    # Sliced arrays (non-zero offset) are what Arrow batches often are.
    for candidate in (array, pa.array([None, *rows], arrow_type).slice(1)):
        got = direct_words(candidate, enc)
        assert [int(w) for w in got] == [reference_direct_word(v, enc) for v in rows]


def test_nulls_take_bucket_zero_and_are_not_mixed_with_the_minimum() -> None:
    boundaries = quantile_boundaries(pa.array([1, 2, 3, 4]), 3)
    got = bucket_ids(pa.array([None, -(2**63), 1, 4, 5]), boundaries)
    assert got[0] == 0
    assert got[1] == 1
    assert list(got) == sorted(got)


def test_quantile_boundaries_are_sorted_distinct_and_spread() -> None:
    sample = pa.array(list(range(1000)) * 2)
    bounds = quantile_boundaries(sample, 9).to_pylist()
    assert bounds == sorted(set(bounds))
    assert bounds == [100, 200, 300, 400, 500, 600, 700, 800, 900]


def test_heavy_duplicates_collapse_boundaries() -> None:
    sample = pa.array([7] * 990 + list(range(10)))
    bounds = quantile_boundaries(sample, 100).to_pylist()
    assert bounds == sorted(set(bounds))
    assert 7 in bounds
    ids = bucket_ids(pa.array([7, 7, 0, 9]), quantile_boundaries(sample, 100))
    assert ids[0] == ids[1] > ids[2]


def test_nan_and_signed_zero() -> None:
    sample = pa.array([-0.0, 0.0, 1.0, math.nan, -math.inf, math.inf])
    bounds = quantile_boundaries(sample, 10)
    ids = bucket_ids(pa.array([-0.0, 0.0, math.nan, math.inf, None]), bounds)
    assert ids[0] == ids[1]
    assert ids[2] > ids[3] > ids[0] > ids[4] == 0


def test_shared_prefix_strings_are_spread_by_rank() -> None:
    prefix = "customer-account-identifier-"
    sample = pa.array([f"{prefix}{i:06d}" for i in range(1000)])
    bounds = quantile_boundaries(sample, 15)
    ids = bucket_ids(sample, bounds)
    counts = np.bincount(ids.astype(np.int64))
    assert len(np.flatnonzero(counts)) == 16
    assert counts[1:].max() - counts[1:].min() <= 2


@given(
    st.lists(st.one_of(st.none(), st.integers(-50, 50)), max_size=300),
    st.integers(1, 10),
)
def test_rank_bucket_ids_are_ordered_and_in_range(sample: list[int | None], bits: int) -> None:
    buckets = rank_buckets(pa.array(sample, pa.int64()), bits)
    ids = [int(i) for i in buckets.ids]
    assert ids[0] == 0
    assert ids[1:] == sorted(ids[1:])
    assert all(1 <= i <= (1 << bits) - 1 for i in ids[1:])
    values = pa.array([*sample, -1000, 1000, None], pa.int64())
    bounds = buckets.boundaries.to_pylist()
    enc = encoding_for("bigint")
    expected = [ids[reference_bucket(v, bounds, enc)] for v in values.to_pylist()]
    assert list(buckets.key_ids(values)) == expected


def test_rank_ids_follow_row_mass_not_bucket_count() -> None:
    # A hot value holding a quarter of the rows, then a long tail of distinct values.
    sample = pa.array([0] * 2500 + list(range(1, 7501)))
    buckets = rank_buckets(sample, 10)
    ids = buckets.key_ids(sample).astype(np.int64)
    top = 1023
    assert abs(ids[0] - top * 0.125) <= 2  # the hot value sits at its mid-rank
    # The key's top bit splits the rows in half, as it would without the skew.
    assert abs(np.mean(ids >= 512) - 0.5) < 0.01


def test_rank_ids_of_distinct_values_are_evenly_spread() -> None:
    buckets = rank_buckets(pa.array(list(range(8))), 4)
    assert [int(i) for i in buckets.key_ids(pa.array(list(range(8))))] == [
        1,
        3,
        5,
        7,
        9,
        11,
        13,
        15,
    ]


@given(
    st.lists(st.one_of(st.none(), st.binary(max_size=12)), max_size=40),
    st.integers(0, 5),
    st.sampled_from([pa.binary(), pa.large_binary()]),
    st.integers(1, 8),
)
def test_fixed_prefixes_are_the_first_bytes_zero_padded(
    values: list[bytes | None], start: int, arrow_type: pa.DataType, width: int
) -> None:
    # A slice keeps its parent's offsets and data: windows must start at the slice.
    array = pa.array(values, arrow_type).slice(min(start, len(values)))
    got = _fixed_prefix(array, width)
    for word, value in zip(got.tolist(), array.to_pylist(), strict=True):
        if value is not None:
            assert word == int.from_bytes(value[:width].ljust(8, b"\0"), "big")


def test_string_buckets_through_long_shared_prefixes() -> None:
    # Values that tie with boundaries on 8 bytes are ranked by the exact merge.
    sample = pa.array([f"https://example.org/{i:05d}" for i in range(0, 5000, 7)])
    bounds = quantile_boundaries(sample, 63)
    values = pa.array([f"https://example.org/{i:05d}" for i in range(5000)] + ["", "z"])
    encoding = encoding_for("string")
    expected = [reference_bucket(v, bounds.to_pylist(), encoding) for v in values.to_pylist()]
    assert bucket_ids(values, bounds).tolist() == expected


@pytest.mark.parametrize("with_nan", [True, False])
def test_nan_owns_the_top_id_of_a_floating_column(with_nan: bool) -> None:
    values = [float(v) for v in range(1000)] + ([math.nan] * 10 if with_nan else [])
    fit = rank_fit(pa.array(values), 10)
    assert fit.buckets.set_aside_id == 1023
    ids = fit.buckets.key_ids(pa.array([math.nan, math.inf, 999.0, -1.0, None]))
    assert ids[0] == 1023
    assert ids[1] < 1023
    assert ids[2] < 1023
    assert ids[4] == 0
    if with_nan:
        assert (fit.sample_ids == 1023).sum() == 10


def test_no_id_is_set_aside_for_integers_or_one_bit() -> None:
    assert rank_fit(pa.array(list(range(100))), 10).buckets.set_aside_id is None
    assert rank_fit(pa.array([1.0, 2.0, math.nan]), 1).buckets.set_aside_id is None
