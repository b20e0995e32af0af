"""GuidedSearch against np.searchsorted, on inputs that stress its guides."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from zorder.curves.search import GuidedSearch

TOP = 2**64 - 1


@st.composite
def sorted_bounds(draw: st.DrawFn) -> np.ndarray:
    # Spread, clustered in a few narrow lumps far apart (as byte prefixes of
    # dotted IPs are), heavily repeated, or at the ends of the range.
    shape = draw(st.sampled_from(["spread", "lumps", "repeats", "extremes"]))
    size = draw(st.integers(0, 300))
    if shape == "spread":
        values = draw(hnp.arrays(np.uint64, size, elements=st.integers(0, TOP)))
    elif shape == "lumps":
        lumps = draw(st.lists(st.integers(0, TOP - 1000), min_size=1, max_size=5))
        offsets = draw(hnp.arrays(np.uint64, size, elements=st.integers(0, 999)))
        picks = draw(hnp.arrays(np.int64, size, elements=st.integers(0, len(lumps) - 1)))
        values = np.array(lumps, dtype=np.uint64)[picks] + offsets
    elif shape == "repeats":
        values = draw(hnp.arrays(np.uint64, size, elements=st.integers(0, 3)))
    else:
        values = draw(hnp.arrays(np.uint64, size, elements=st.sampled_from([0, 1, TOP - 1, TOP])))
    return np.sort(values)


def _keys(bounds: np.ndarray, extra: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        near = [bounds, bounds - np.uint64(1), bounds + np.uint64(1)]  # wraps at the ends
    return np.concatenate([*near, extra, np.array([0, TOP], dtype=np.uint64)])


@given(
    sorted_bounds(),
    hnp.arrays(np.uint64, st.integers(0, 50), elements=st.integers(0, TOP)),
    st.sampled_from(["left", "right"]),
)
def test_counts_equal_searchsorted(
    bounds: np.ndarray, extra: np.ndarray, side: Literal["left", "right"]
) -> None:
    keys = _keys(bounds, extra)
    got = GuidedSearch(bounds).count(keys, side=side)
    assert got.tolist() == np.searchsorted(bounds, keys, side=side).tolist()


def test_lumpy_bounds_of_the_size_used_for_rank_buckets() -> None:
    # 1,023 boundaries as the 8-byte prefixes of dotted IPv4 strings give: lumps
    # inside lumps, deeper than one guide resolves.
    rng = np.random.default_rng(7)
    ips = [
        ".".join(map(str, o)).encode()[:8].ljust(8, b"\0")
        for o in rng.integers(0, 256, (20_000, 4))
    ]
    words = np.sort(np.frombuffer(b"".join(ips), dtype=">u8").astype(np.uint64))
    bounds = words[:: len(words) // 1023][:1023]
    keys = _keys(bounds, words)
    search = GuidedSearch(bounds)
    for side in ("left", "right"):
        assert (
            search.count(keys, side=side).tolist()
            == np.searchsorted(bounds, keys, side=side).tolist()
        )


def test_empty_inputs() -> None:
    assert GuidedSearch(np.zeros(0, np.uint64)).count(np.array([5], np.uint64)).tolist() == [0]
    assert GuidedSearch(np.array([3], np.uint64)).count(np.zeros(0, np.uint64)).tolist() == []


@pytest.mark.parametrize(
    ("bounds", "message"),
    [(np.array([3, 1], np.uint64), "sorted"), (np.zeros((2, 2), np.uint64), "1-d")],
)
def test_bad_bounds_are_refused(bounds: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GuidedSearch(bounds)
