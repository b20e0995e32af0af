"""Tables that grow: the table remembers its clustering, appends are clustered on write,
and ``optimize()`` rewrites only what needs it."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import zorder
from tests.spark.helpers import delta_rows, spark_rows
from zorder.curves import ClusteringSpec
from zorder.plan.modes import Engine
from zorder.table import Storage, latest_clustering

BY = ["a", "b"]


def rows(spark: SparkSession, start: int, count: int) -> DataFrame:
    return spark.range(start, start + count).select(
        (F.col("id") * 7919 % 1000).alias("a"), (F.col("id") * 104729 % 997).alias("b"), "id"
    )


def blind_append(path: str, start: int, count: int) -> None:
    ids = list(range(start, start + count))
    write_deltalake(
        path,
        pa.table(
            {
                "a": [i * 7919 % 1000 for i in ids],
                "b": [i * 104729 % 997 for i in ids],
                "id": ids,
            }
        ),
        mode="append",
    )


def properties(path: str) -> dict[str, str]:
    return dict(DeltaTable(path).metadata().configuration)


def live_paths(path: str) -> set[str]:
    return set(DeltaTable(path).file_uris())


def test_the_spec_and_file_size_are_recorded_and_used_by_appends(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    first = zorder.write(rows(spark, 0, 2_000), path, by=BY, curve="hilbert", num_files=4)
    recorded = properties(path)
    assert json.loads(recorded["zorder.clustering.columns"]) == BY
    assert recorded["zorder.clustering.curve"] == "hilbert"
    assert recorded["zorder.clustering.method"] == "rank"
    assert int(recorded["delta.targetFileSize"]) == first.bytes_added // first.files_added
    # An append without by: clustered by the table's spec, a run of its own.
    appended = zorder.write(rows(spark, 2_000, 1_000), path, mode="append")
    assert (appended.by, appended.curve, appended.method) == (tuple(BY), "hilbert", "rank")
    assert appended.files_added >= 1
    description = zorder.describe(path)
    assert description.spec == ClusteringSpec(tuple(BY), "hilbert", "rank")
    assert description.target_file_size == int(recorded["delta.targetFileSize"])
    assert sorted(r.run.id for r in description.runs) == sorted([first.run_id, appended.run_id])
    assert all(r.current for r in description.runs)
    assert description.unclustered == ()
    assert properties(path) == recorded  # an append with the table's spec changes nothing


def test_without_a_spec_or_by_the_error_says_how_to_set_one(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    with pytest.raises(
        zorder.errors.InvalidArgumentError, match=r"no table at .*pass by=\[columns\]"
    ):
        zorder.write(rows(spark, 0, 10), path)
    assert not Path(path).exists()
    blind_append(path, 0, 100)
    calls: list[Callable[[], object]] = [
        lambda: zorder.optimize(spark, path),
        lambda: zorder.write(rows(spark, 0, 10), path, mode="append"),
    ]
    for call in calls:
        with pytest.raises(zorder.errors.InvalidArgumentError, match="records no clustering"):
            call()
    assert DeltaTable(path).version() == 0


def test_incremental_optimize_rewrites_only_what_needs_it(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    zorder.write(rows(spark, 0, 4_000), path, by=BY, num_files=16)
    base = live_paths(path)
    expected = delta_rows(path, ["a", "b", "id"])
    blind_append(path, 4_000, 300)
    expected += delta_rows(path, ["a", "b", "id"]) - expected
    blind = live_paths(path) - base
    metrics = zorder.optimize(spark, path)
    assert metrics.files_removed == 1  # the blind append's file only
    assert base <= live_paths(path)
    assert not blind & live_paths(path)
    assert delta_rows(path, ["a", "b", "id"]) == expected
    assert zorder.describe(path).unclustered == ()
    # Nothing to do: no commit.
    version = DeltaTable(path).version()
    again = zorder.optimize(spark, path)
    assert (again.version, again.files_removed, DeltaTable(path).version()) == (None, 0, version)


def test_small_runs_merge_once_a_tier_is_full(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    zorder.write(rows(spark, 0, 4_000), path, by=BY, num_files=16)  # tier 2 with fanout 4
    base = live_paths(path)
    runs = []
    for number in range(3):  # three small runs of tier 0: under the fanout, left alone
        runs.append(zorder.write(rows(spark, 4_000 + 100 * number, 100), path, mode="append"))
        assert zorder.optimize(spark, path).version is None
    expected = spark_rows(zorder.read(spark, path))
    blind_append(path, 5_000, 100)  # a fourth, once clustered: the tier merges
    expected += spark_rows(rows(spark, 5_000, 100).select("a", "b", "id"))
    metrics = zorder.optimize(spark, path)
    assert metrics.files_removed == sum(r.files_added for r in runs) + 1
    assert base <= live_paths(path)
    assert spark_rows(zorder.read(spark, path)) == expected
    assert len(zorder.describe(path).runs) == 2


def test_a_new_by_is_recorded_and_reclusters_everything(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    zorder.write(rows(spark, 0, 2_000), path, by=BY, num_files=4)
    files = live_paths(path)
    metrics = zorder.optimize(spark, path, by=["b", "id"])
    assert not files & live_paths(path)
    assert metrics.files_removed == 4
    assert json.loads(properties(path)["zorder.clustering.columns"]) == ["b", "id"]
    assert zorder.optimize(spark, path).version is None  # now clustered by the new spec
    # A curve alone changes the spec too.
    zorder.optimize(spark, path, curve="hilbert")
    assert zorder.describe(path).spec == ClusteringSpec(("b", "id"), "hilbert", "rank")


def test_full_reclusters_every_file_into_one_run(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    zorder.write(rows(spark, 0, 2_000), path, by=BY, num_files=4)
    zorder.write(rows(spark, 2_000, 500), path, mode="append", num_files=1)
    expected = spark_rows(zorder.read(spark, path))
    metrics = zorder.optimize(spark, path, full=True, num_files=3)
    assert (metrics.files_removed, metrics.files_added) == (5, 3)
    assert [r.files for r in zorder.describe(path).runs] == [3]
    assert spark_rows(zorder.read(spark, path)) == expected


def test_a_given_target_file_size_is_recorded_and_sizes_later_files(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    zorder.write(rows(spark, 0, 3_000), path, by=BY, target_file_size="8KB")
    assert properties(path)["delta.targetFileSize"] == str(8 * 1024)
    blind_append(path, 3_000, 3_000)
    metrics = zorder.optimize(spark, path)
    assert metrics.files_added == pytest.approx(metrics.bytes_removed / (8 * 1024), abs=2)
    # A table that sets its own size keeps it.
    other = str(tmp_path / "other")
    blind_append(other, 0, 100)
    DeltaTable(other).alter.set_table_properties({"delta.targetFileSize": "64mb"})
    zorder.optimize(spark, other, by=BY)
    assert properties(other)["delta.targetFileSize"] == "64mb"


def test_partitions_have_runs_of_their_own(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    days = rows(spark, 0, 3_000).withColumn(
        "day", F.when(F.col("id") % 2 == 0, "2026-11-01").otherwise("2026-11-02")
    )
    zorder.write(days, path, by=BY, partition_by=["day"], num_files=8)
    before = live_paths(path)
    write_deltalake(
        path,
        pa.table({"a": [1, 2], "b": [3, 4], "id": [-1, -2], "day": ["2026-11-02"] * 2}),
        mode="append",
        partition_by=["day"],
    )
    metrics = zorder.optimize(spark, path)
    assert metrics.files_removed == 1
    assert metrics.files_added == 1
    assert before <= live_paths(path)
    runs = zorder.describe(path).runs
    assert Counter(r.partition["day"] for r in runs) == {"2026-11-01": 1, "2026-11-02": 2}


def test_the_spec_survives_log_cleanup(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    zorder.write(rows(spark, 0, 1_000), path, by=BY, num_files=2)
    base = live_paths(path)
    DeltaTable(path).alter.set_table_properties(
        {"delta.logRetentionDuration": "interval 0 seconds"}
    )
    for start in range(1_000, 1_300, 100):
        blind_append(path, start, 100)
    table = DeltaTable(path)
    table.create_checkpoint()
    table.cleanup_metadata()
    assert latest_clustering(Storage.of(path)) is None  # the commits that recorded the run are gone
    metrics = zorder.optimize(spark, path)
    assert metrics.by == tuple(BY)
    assert metrics.files_removed == 3
    assert base <= live_paths(path)  # the run's txn survived in the checkpoint: still trusted


def test_an_append_with_another_by_keeps_the_table_spec(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    zorder.write(rows(spark, 0, 1_000), path, by=BY, num_files=2)
    appended = zorder.write(rows(spark, 1_000, 200), path, by=["id"], mode="append")
    assert appended.by == ("id",)
    description = zorder.describe(path)
    assert description.spec is not None
    assert description.spec.columns == tuple(BY)
    assert [r.current for r in description.runs].count(False) == 1
    assert len(description.unclustered) == appended.files_added
    assert zorder.optimize(spark, path).files_removed == appended.files_added


@pytest.mark.parametrize("engine", ["spark", "arrow"])
def test_a_blind_append_during_an_incremental_optimize_is_kept(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: Engine
) -> None:
    from tests.spark.test_partitioned_optimize import just_before_commit, other_process

    path = str(tmp_path / "t")
    zorder.write(rows(spark, 0, 2_000), path, by=BY, num_files=4)
    blind_append(path, 2_000, 100)
    expected = delta_rows(path, ["a", "b", "id"])
    just_before_commit(monkeypatch, lambda: other_process("append-ids", path, "5000"))
    metrics = zorder.optimize(spark, path, engine=engine)
    assert metrics.files_removed == 1  # the blind append it read
    expected += Counter((i * 7919 % 1000, i * 104729 % 997, i) for i in range(5_000, 5_100))
    assert delta_rows(path, ["a", "b", "id"]) == expected
    assert len(zorder.describe(path).unclustered) == 1  # the next optimize clusters it
    monkeypatch.undo()
    assert zorder.optimize(spark, path).files_removed == 1
    assert zorder.describe(path).unclustered == ()


def test_progress_shows_and_changes_nothing(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from zorder.spark.progress import job_progress

    path = str(tmp_path / "t")
    metrics = zorder.write(rows(spark, 0, 1_000), path, by=BY, num_files=2, progress=True)
    assert (metrics.rows, metrics.files_added) == (1_000, 2)
    blind_append(path, 1_000, 10)
    assert zorder.optimize(spark, path, progress=True).files_removed == 1
    idle = job_progress(spark)
    assert idle is not None  # a classic session has a status tracker
    assert (idle.stages, idle.tasks_total) == (0, 0)
    assert "Traceback" not in capsys.readouterr().err


def test_a_size_asked_for_later_replaces_the_recorded_one_when_set(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A later num_files or target_file_size (an append's, an overwrite's, an optimize's)
    sizes its own run and leaves delta.targetFileSize as it is; with set_target_size=True it
    replaces it, and the next optimize keeps that size."""
    path = str(tmp_path / "t")
    zorder.write(rows(spark, 0, 3_000), path, by=BY)  # the default: one file, its size kept
    first = int(properties(path)["delta.targetFileSize"])
    zorder.write(rows(spark, 3_000, 300), path, mode="append", num_files=3)
    assert int(properties(path)["delta.targetFileSize"]) == first
    zorder.write(rows(spark, 0, 3_000), path, mode="overwrite", num_files=6)
    assert int(properties(path)["delta.targetFileSize"]) == first
    overwrite = zorder.write(
        rows(spark, 0, 3_000), path, mode="overwrite", num_files=6, set_target_size=True
    )
    kept = overwrite.bytes_added // overwrite.files_added
    assert int(properties(path)["delta.targetFileSize"]) == kept
    blind_append(path, 3_000, 3_000)
    again = zorder.optimize(spark, path, full=True)  # sized by the recorded target
    assert again.files_added >= 10
    zorder.optimize(spark, path, target_file_size="1MB", full=True)
    assert int(properties(path)["delta.targetFileSize"]) == kept
    zorder.optimize(spark, path, target_file_size="1MB", full=True, set_target_size=True)
    assert properties(path)["delta.targetFileSize"] == str(1024 * 1024)
