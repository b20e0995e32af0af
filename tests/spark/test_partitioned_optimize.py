"""``optimize(where=...)``: the chosen partitions, each clustered on its own, nothing else."""

from __future__ import annotations

import subprocess
import sys
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
from tests.spark.helpers import row_multiset
from zorder.plan.modes import Engine
from zorder.spark.settings import session_ansi
from zorder.table.delta.commit import commit_files

pytestmark = pytest.mark.spark

DAYS = ["2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04"]


def appended_by_delta_rs(path: str) -> None:
    """Four days, each arriving as three blind appends of 500 rows."""
    for batch in range(3):
        for number, day in enumerate(DAYS):
            start = (batch * len(DAYS) + number) * 500
            ids = list(range(start, start + 500))
            write_deltalake(
                path,
                pa.table(
                    {
                        "a": [i * 7919 % 1000 for i in ids],
                        "b": [i * 104729 % 997 for i in ids],
                        "day": [day] * 500,
                    }
                ),
                partition_by=["day"],
                mode="append",
            )


def live_files(path: str) -> dict[str, str]:
    """Each live file's path and its day."""
    actions = pa.table(DeltaTable(path).get_add_actions(flatten=True))
    return dict(
        zip(
            actions.column("path").to_pylist(),
            actions.column("partition.day").to_pylist(),
            strict=True,
        )
    )


def contents(path: str) -> Counter[tuple[object, ...]]:
    table = DeltaTable(path).to_pyarrow_table()
    columns = [table.column(c).to_pylist() for c in ("a", "b", "day")]
    return row_multiset(zip(*columns, strict=True))


def test_where_rewrites_only_the_chosen_partitions(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    appended_by_delta_rs(path)
    before_files, before_rows = live_files(path), contents(path)
    sizes = {f.path: f.size for f in zorder.describe(path).files}
    metrics = zorder.optimize(spark, path, by=["a", "b"], where="day >= '2026-11-03'", num_files=8)
    after = live_files(path)
    rewritten = {p for p, day in before_files.items() if day in DAYS[2:]}
    assert metrics.files_removed == len(rewritten) == 6
    assert metrics.bytes_removed == sum(sizes[p] for p in rewritten)
    # The other days' files are exactly as they were; the chosen days got 4 files each.
    assert {p: d for p, d in after.items() if d in DAYS[:2]} == {
        p: d for p, d in before_files.items() if d in DAYS[:2]
    }
    assert Counter(d for p, d in after.items() if p not in before_files) == {
        DAYS[2]: 4,
        DAYS[3]: 4,
    }
    assert contents(path) == before_rows
    assert zorder.read(spark, path, "day = '2026-11-04'").count() == 1500
    # Clustered inside its partition: a point lookup reads about one file of the day.
    assert zorder.explain(path, "day = '2026-11-04' AND a = 500").files_scanned <= 2

    again = zorder.optimize(spark, path, by=["a", "b"], where="day >= '2026-11-03'")
    assert again.version is None  # nothing to do: no commit
    rest = zorder.optimize(spark, path, by=["a", "b"], num_files=2)
    assert rest.files_removed == 6  # only the two days not yet clustered
    assert Counter(live_files(path).values()) == {DAYS[0]: 1, DAYS[1]: 1, DAYS[2]: 4, DAYS[3]: 4}
    assert contents(path) == before_rows


def test_bad_where_is_refused_before_anything_runs(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"a": [1, 2], "day": DAYS[:2]}), partition_by=["day"])
    version = DeltaTable(path).version()
    with pytest.raises(
        zorder.errors.InvalidArgumentError, match="names a, which are not partition"
    ):
        zorder.optimize(spark, path, by=["a"], where="a > 1 AND day = '2026-11-01'")
    with pytest.raises(zorder.errors.FilterParseError):
        zorder.optimize(spark, path, by=["a"], where="day = = 1")
    with pytest.raises(zorder.errors.InvalidArgumentError, match="both a partition column"):
        zorder.optimize(spark, path, by=["a", "day"])
    # Spark casts 'abc' to the int partition column: with ANSI on it fails (the filter's
    # fault); with ANSI off (Spark 3.5's default) the cast is NULL and no partition is chosen.
    numbered = str(tmp_path / "numbered")
    write_deltalake(numbered, pa.table({"a": [1, 2], "p": [1, 2]}), partition_by=["p"])
    if session_ansi(spark):
        with pytest.raises(
            zorder.errors.FilterEvaluationError, match=r"p = 'abc'.*CAST_INVALID_INPUT"
        ):
            zorder.optimize(spark, numbered, by=["a"], where="p = 'abc'")
        assert DeltaTable(numbered).version() == 0
    else:  # only the spec given by by= is recorded
        files = DeltaTable(numbered).file_uris()
        assert zorder.optimize(spark, numbered, by=["a"], where="p = 'abc'").files_added == 0
        assert DeltaTable(numbered).file_uris() == files
    plain = str(tmp_path / "plain")
    write_deltalake(plain, pa.table({"a": [1, 2]}))
    with pytest.raises(zorder.errors.InvalidArgumentError, match="has no partition columns"):
        zorder.optimize(spark, plain, by=["a"], where="a = 1")
    assert DeltaTable(path).version() == version


# ---------------------------------------------------------------- concurrency

ROOT = Path(__file__).resolve().parents[2]


# Either engine writes an optimize's files; both commit through zorder.plan.runs.
ENGINES: list[Engine] = ["spark", "arrow"]


def other_process(kind: str, path: str, *arguments: str) -> None:
    """Another writer's commit, from a process of its own, run to completion."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.spark.writer_child", kind, path, *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def just_before_commit(monkeypatch: pytest.MonkeyPatch, other: Callable[[], None]) -> None:
    """``other`` runs just before the next commit a run makes (either engine's)."""
    real = commit_files

    def commit(*args: Any, **kwargs: Any) -> int:
        other()
        return real(*args, **kwargs)

    monkeypatch.setattr(runs_module, "commit_files", commit)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kind", ["overwrite", "delete"])
def test_changes_to_other_partitions_during_optimize_stand(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, engine: Engine
) -> None:
    path = str(tmp_path / "t")
    appended_by_delta_rs(path)
    before = contents(path)
    just_before_commit(monkeypatch, lambda: other_process(kind, path, DAYS[0]))
    metrics = zorder.optimize(spark, path, by=["a", "b"], where=f"day = '{DAYS[3]}'", engine=engine)
    assert metrics.version is not None  # it committed
    kept = Counter({row: n for row, n in before.items() if row[2] != DAYS[0]})
    if kind == "overwrite":  # the other writer's rows, exactly as it left them
        kept += Counter({(a, 0, DAYS[0]): 1 for a in (-1, -2, -3)})
    assert contents(path) == kept


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("day", [DAYS[3], DAYS[0]], ids=["same-partition", "other-partition"])
def test_blind_appends_during_optimize_are_kept(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, day: str, engine: Engine
) -> None:
    path = str(tmp_path / "t")
    appended_by_delta_rs(path)
    before = contents(path)
    just_before_commit(monkeypatch, lambda: other_process("append", path, day))
    metrics = zorder.optimize(spark, path, by=["a", "b"], where=f"day = '{DAYS[3]}'", engine=engine)
    assert metrics.version is not None  # a blind append conflicts with nothing
    assert metrics.files_removed == 3  # the files it read, not the one appended meanwhile
    assert contents(path) == before + Counter({(a, 0, day): 1 for a in (-1, -2, -3)})
    days = Counter(live_files(path).values())
    assert days[DAYS[3]] == metrics.files_added + (day == DAYS[3])


@pytest.mark.parametrize("engine", ENGINES)
def test_two_optimizes_of_disjoint_partitions_both_commit(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: Engine
) -> None:
    path = str(tmp_path / "t")
    appended_by_delta_rs(path)
    before = contents(path)
    other = f"day = '{DAYS[0]}'"
    just_before_commit(monkeypatch, lambda: other_process("optimize", path, other, engine))
    metrics = zorder.optimize(spark, path, by=["a", "b"], where=f"day = '{DAYS[1]}'", engine=engine)
    assert metrics.version is not None
    days = Counter(live_files(path).values())
    assert days == {DAYS[0]: 1, DAYS[1]: metrics.files_added, DAYS[2]: 3, DAYS[3]: 3}
    assert contents(path) == before


@pytest.mark.parametrize("engine", ENGINES)
def test_a_change_to_the_same_partition_fails_the_optimize_cleanly(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: Engine
) -> None:
    path = str(tmp_path / "t")
    appended_by_delta_rs(path)
    just_before_commit(monkeypatch, lambda: other_process("overwrite", path, DAYS[1]))
    with pytest.raises(zorder.errors.ConcurrentCommitError, match="concurrent"):
        zorder.optimize(spark, path, by=["a", "b"], where=f"day = '{DAYS[1]}'", engine=engine)
    after = contents(path)  # as the other writer left it
    assert Counter(row[2] for row in after.elements())[DAYS[1]] == 3
    assert not list((tmp_path / "t").glob("zorder-*"))  # our files were cleaned up
