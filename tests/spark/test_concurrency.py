"""Concurrent writers, idempotent optimize, and vacuum.

Another writer's commit is made to land at the worst moment: after optimize
has read its snapshot and written its files, just before it commits (by
wrapping the commit function from outside).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from pyspark.sql import SparkSession

import zorder
import zorder.plan.runs as runs_module
from zorder.errors import ConcurrentCommitError
from zorder.plan.modes import Engine
from zorder.table.delta.commit import commit_files

pytestmark = pytest.mark.spark

BY = ["a", "b"]
# Either engine writes an optimize's files; both commit through zorder.plan.runs.
ENGINES: list[Engine] = ["spark", "arrow"]


def rows(start: int, count: int) -> pa.Table:
    ids = list(range(start, start + count))
    return pa.table(
        {"a": pa.array(ids, pa.int64()), "b": pa.array([(i * 37) % 101 for i in ids], pa.int64())}
    )


def counted(path: Path) -> Counter[tuple[int, int]]:
    table = DeltaTable(str(path)).to_pyarrow_table()
    return Counter(zip(table.column("a").to_pylist(), table.column("b").to_pylist(), strict=True))


def expected(*tables: pa.Table) -> Counter[tuple[int, int]]:
    total: Counter[tuple[int, int]] = Counter()
    for t in tables:
        total += Counter(zip(t.column("a").to_pylist(), t.column("b").to_pylist(), strict=True))
    return total


def make_table(path: Path) -> pa.Table:
    first = rows(0, 4_000)
    for start in range(0, 4_000, 1_000):
        write_deltalake(str(path), first.slice(start, 1_000), mode="append")
    return first


def just_before_commit(monkeypatch: pytest.MonkeyPatch, other_writer: Callable[[], object]) -> None:
    real = commit_files

    def commit(*args: Any, **kwargs: Any) -> int:
        other_writer()
        return real(*args, **kwargs)

    monkeypatch.setattr(runs_module, "commit_files", commit)


def run_dirs(path: Path) -> list[Path]:
    return sorted(path.glob("zorder-*"))


@pytest.mark.parametrize("engine", ENGINES)
def test_append_during_optimize_is_kept(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: Engine
) -> None:
    path = tmp_path / "t"
    first = make_table(path)
    late = rows(10_000, 500)
    just_before_commit(monkeypatch, lambda: write_deltalake(str(path), late, mode="append"))
    # delta-rs sees that the other commit only added a file this one neither read nor
    # removed, so both stand: the appended file stays, unclustered, next to ours.
    metrics = zorder.optimize(spark, str(path), by=BY, num_files=3, engine=engine)
    assert metrics.engine == engine
    assert metrics.files_removed == 4
    assert len(DeltaTable(str(path)).file_uris()) == 3 + 1
    assert counted(path) == expected(first, late)


@pytest.mark.parametrize("engine", ENGINES)
def test_two_optimizes_at_once_one_fails_cleanly(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: Engine
) -> None:
    path = tmp_path / "t"
    first = make_table(path)
    real = commit_files
    inner_done: list[zorder.ClusterMetrics] = []

    def other_optimize() -> None:
        monkeypatch.setattr(runs_module, "commit_files", real)  # the inner run commits plainly
        inner = zorder.optimize(spark, str(path), by=["b", "a"], num_files=2, engine=engine)
        inner_done.append(inner)

    just_before_commit(monkeypatch, other_optimize)
    with pytest.raises(ConcurrentCommitError, match="concurrent"):
        zorder.optimize(spark, str(path), by=BY, num_files=3, engine=engine)
    assert inner_done[0].version is not None
    assert counted(path) == expected(first)
    # The loser's files were deleted with its run directory; only the winner's remain.
    assert len(run_dirs(path)) == 1
    retried = zorder.optimize(spark, str(path), by=BY, num_files=3, engine=engine)
    assert retried.files_removed == 2  # a retry works


@pytest.mark.parametrize("engine", ENGINES)
def test_concurrent_overwrite_makes_optimize_fail_without_resurrecting_rows(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: Engine
) -> None:
    path = tmp_path / "t"
    make_table(path)
    replacement = rows(50_000, 700)
    just_before_commit(
        monkeypatch, lambda: write_deltalake(str(path), replacement, mode="overwrite")
    )
    with pytest.raises(ConcurrentCommitError, match="concurrent"):
        zorder.optimize(spark, str(path), by=BY, num_files=3, engine=engine)
    assert counted(path) == expected(replacement)
    assert not run_dirs(path)  # the failed run's files went with its directory


def test_optimize_twice_rewrites_nothing_the_second_time(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = tmp_path / "t"
    first = make_table(path)
    done = zorder.optimize(spark, str(path), by=BY, num_files=3)
    assert done.files_added == 3
    version = DeltaTable(str(path)).version()
    again = zorder.optimize(spark, str(path), by=BY, num_files=3)
    assert (again.files_added, again.files_removed, again.version) == (0, 0, None)
    assert DeltaTable(str(path)).version() == version
    # Another spec or full=True: everything rewritten; an appended file: that file.
    assert zorder.optimize(spark, str(path), by=BY, curve="hilbert", num_files=3).files_added
    forced = zorder.optimize(spark, str(path), by=BY, curve="hilbert", num_files=3, full=True)
    assert forced.files_removed == 3
    write_deltalake(str(path), rows(90_000, 10), mode="append")
    assert zorder.optimize(spark, str(path), by=BY, curve="hilbert").files_removed == 1
    assert counted(path) == expected(first, rows(90_000, 10))


def test_vacuum_lists_orphans_and_removed_files_only_past_the_retention(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = tmp_path / "t"
    first = make_table(path)
    zorder.optimize(spark, str(path), by=BY, num_files=2)
    orphan = path / "zorder-deadbeef-000000000000" / "part-00000.parquet"
    orphan.parent.mkdir()
    orphan.write_bytes(b"left by a run that died before its commit")

    assert zorder.vacuum(str(path)).files == ()  # everything is younger than a week
    with pytest.raises(ValueError, match="below the safe minimum of 168 hours"):
        zorder.vacuum(str(path), retain_hours=1)
    listed = zorder.vacuum(str(path), retain_hours=0, force=True)
    assert listed.dry_run
    assert "zorder-deadbeef-000000000000/part-00000.parquet" in listed.files
    assert len(listed.files) == 1 + 4  # the orphan and the four files optimize removed
    assert orphan.exists()  # a dry run deletes nothing
    deleted = zorder.vacuum(str(path), retain_hours=0, force=True, dry_run=False)
    assert set(deleted.files) == set(listed.files)
    assert not orphan.exists()
    assert counted(path) == expected(first)
