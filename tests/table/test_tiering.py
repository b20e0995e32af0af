"""The incremental optimize's policy: size-tiered runs, checked against a plain simulation."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zorder.errors import InvalidArgumentError
from zorder.table import DataFile, Run
from zorder.table.tiering import files_to_recluster, tier

TARGET = 1_000  # bytes a file
_names = itertools.count()


def run_files(run: Run | None, sizes: list[int]) -> list[tuple[DataFile, Run | None]]:
    return [(DataFile(f"f{next(_names)}.parquet", size, 10), run) for size in sizes]


def new_run() -> Run:
    return Run(f"{next(_names):012x}", "abcd1234")


def recluster(table: list[tuple[DataFile, Run | None]], fanout: int = 4) -> list[DataFile]:
    files = [f for f, _ in table]
    return list(
        files_to_recluster(files, [r for _, r in table], target_file_size=TARGET, fanout=fanout)
    )


def test_tiers_are_powers_of_the_fanout_in_files() -> None:
    assert [tier(n * TARGET, target_file_size=TARGET, fanout=4) for n in (0, 1, 3)] == [0, 0, 0]
    assert [tier(n * TARGET, target_file_size=TARGET, fanout=4) for n in (4, 15)] == [1, 1]
    assert [tier(n * TARGET, target_file_size=TARGET, fanout=4) for n in (16, 63, 64)] == [2, 2, 3]
    assert tier(8 * TARGET, target_file_size=TARGET, fanout=2) == 3  # an exact power


def test_unclustered_files_are_always_reclustered_and_large_runs_left_alone() -> None:
    base = run_files(new_run(), [TARGET] * 100)
    loose = run_files(None, [500, 700])
    chosen = recluster(base + loose)
    assert chosen == [f for f, _ in loose]


def test_a_full_tier_merges_and_the_merge_cascades() -> None:
    base = run_files(new_run(), [TARGET] * 100)  # tier 3
    small = [run_files(new_run(), [TARGET] * 5) for _ in range(3)]  # tier 1 each
    table = base + [f for run in small for f in run]
    assert recluster(table) == []  # three of a tier: nothing to do
    loose = run_files(None, [TARGET] * 5)  # a fourth of tier 1, once clustered
    chosen = recluster(table + loose)
    assert Counter(f.path for f in chosen) == Counter(
        f.path for f, _ in [*loose, *(f for run in small for f in run)]
    )
    # Three runs of tier 2 and the merge of four tier-1 runs (20 files: tier 2) cascade.
    mid = [run_files(new_run(), [TARGET] * 20) for _ in range(3)]
    table = base + [f for run in mid for f in run] + [f for run in small for f in run] + loose
    chosen = recluster(table)
    assert len(chosen) == len(table) - len(base)


def test_fanout_is_checked() -> None:
    with pytest.raises(InvalidArgumentError, match="fanout must be an int of at least 2"):
        recluster(run_files(None, [1]), fanout=1)


@given(
    appends=st.lists(
        st.tuples(st.booleans(), st.integers(1, 40 * TARGET)), min_size=1, max_size=40
    ),
    fanout=st.integers(2, 6),
)
def test_after_every_optimize_no_tier_is_full_and_nothing_is_unclustered(
    appends: list[tuple[bool, int]], fanout: int
) -> None:
    """Appends (clustered runs or loose files) each followed by an optimize, simulated."""
    table = run_files(new_run(), [TARGET] * 50)
    for clustered, size in appends:
        table += run_files(new_run() if clustered else None, [size])
        chosen = {f.path for f in recluster(table, fanout)}
        assert {f.path for f, r in table if r is None} <= chosen
        kept = [(f, r) for f, r in table if f.path not in chosen]
        # Whole runs only: a run is either kept entirely or merged entirely.
        for run in {r for _, r in table if r is not None}:
            members = {f.path for f, r in table if r == run}
            assert members <= chosen or not members & chosen
        rewritten = sum(f.size for f, _ in table if f.path in chosen)
        table = kept + (run_files(new_run(), [rewritten]) if chosen else [])
        sizes: dict[Run, int] = Counter()
        for f, r in table:
            assert r is not None
            sizes[r] += f.size
        tiers = Counter(tier(s, target_file_size=TARGET, fanout=fanout) for s in sizes.values())
        assert max(tiers.values()) < fanout, tiers
        assert recluster(table, fanout) == []  # settled: a second optimize does nothing
