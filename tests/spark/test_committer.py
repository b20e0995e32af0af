"""zorder's commit protocol: a task writes a run of files, exactly the files a task each gives.

Every write here is made twice: as zorder makes it in this session (a few
tasks, each a contiguous run of files, :mod:`zorder.spark.committer`), and
with each file a task of its own (the session given another commit
protocol, which zorder leaves in charge). Both must give the same files, by
name, partition and rows; the files must lie in their partitions' own
directories and hold their rows in the curve's order.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake
from pyspark.sql import DataFrame, SparkSession

import zorder
from zorder.curves.kinds import SpaceFillingCurve
from zorder.demo import NETWORK_COLUMNS, network_connections, network_frame
from zorder.spark.committer import COMMIT_PROTOCOL_SETTING, run_tasks
from zorder.spark.jar import jar_path
from zorder.spark.keys import sample_columns, sample_size_for
from zorder.spark.layout import plan_clustering
from zorder.spark.writes import file_number

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
BY = list(NETWORK_COLUMNS)
# A commit protocol of the session's own: Spark's base one, with which zorder gives each
# file a task of its own.
OTHER_PROTOCOL = "org.apache.spark.internal.io.HadoopMapReduceCommitProtocol"


@contextmanager
def session_protocol(spark: SparkSession, protocol: str) -> Iterator[None]:
    spark.conf.set(COMMIT_PROTOCOL_SETTING, protocol)
    try:
        yield
    finally:
        spark.conf.unset(COMMIT_PROTOCOL_SETTING)


def files_of(path: str) -> dict[str, pa.Table]:
    """The table's files by (directory, number): each file's rows in their order."""
    root = Path(path)
    files: dict[str, pa.Table] = {}
    for uri in DeltaTable(path).file_uris():
        relative = Path(uri.removeprefix("file://")).relative_to(root)
        partition = "/".join(p for p in relative.parent.parts if "=" in p)
        key = f"{partition}#{file_number(relative.as_posix())}"
        assert key not in files, f"two files of the run are numbered {key}"
        files[key] = pq.read_table(root / relative)
    return files


def physical_name(path: str, column: str) -> str:
    """``column``'s name in the files of the column-mapped table at ``path``."""
    for field in json.loads(DeltaTable(path).schema().to_json())["fields"]:
        if field["name"] == column:
            return str(field["metadata"]["delta.columnMapping.physicalName"])
    raise KeyError(column)


def rows(table: pa.Table) -> Counter[tuple[Any, ...]]:
    return Counter(zip(*[table.column(c).to_pylist() for c in table.column_names], strict=True))


def last_stage_tasks(spark: SparkSession) -> int:
    """Tasks of the last stage of the session's latest job (a write: its writing tasks)."""
    tracker = spark.sparkContext.statusTracker()
    job = tracker.getJobInfo(max(tracker.getJobIdsForGroup(None)))
    assert job is not None
    stage = tracker.getStageInfo(max(job.stageIds))
    assert stage is not None
    return stage.numTasks


def test_the_jar_is_built_from_its_source(tmp_path: Path) -> None:
    if shutil.which("javac") is None:
        pytest.skip("no javac on PATH to build the jar with")
    rebuilt = tmp_path / "zorder-spark.jar"
    subprocess.run(
        [str(ROOT / ".venv/bin/python"), str(ROOT / "scripts/build_jar.py"), "--out", rebuilt],
        check=True,
    )
    assert rebuilt.read_bytes() == Path(jar_path()).read_bytes(), (
        "src/zorder/spark/zorder-spark.jar is not built from jvm/src: run scripts/build_jar.py"
    )


@pytest.mark.compat
@pytest.mark.parametrize("curve", ["zorder", "hilbert"])
def test_a_task_writes_a_run_of_files_exactly_as_tasks_of_their_own(
    spark: SparkSession, tmp_path: Path, curve: SpaceFillingCurve
) -> None:
    files = 12
    frame = network_frame(spark, 30_000, seed=5)
    assert run_tasks(spark, files) == 4  # local[2]: two tasks a core
    few = str(tmp_path / "few")
    metrics = zorder.write(frame, few, by=BY, curve=curve, num_files=files)
    assert last_stage_tasks(spark) == 4
    with session_protocol(spark, OTHER_PROTOCOL):
        assert run_tasks(spark, files) is None
        zorder.write(frame, str(tmp_path / "own"), by=BY, curve=curve, num_files=files)
        assert last_stage_tasks(spark) == files
    assert spark.conf.get(COMMIT_PROTOCOL_SETTING, None) is None  # the session's, restored

    written, alone = files_of(few), files_of(str(tmp_path / "own"))
    assert metrics.files_added == len(written) == files
    assert sorted(written) == sorted(alone)
    for key, table in written.items():
        assert rows(table) == rows(alone[key]), key
    (run_directory,) = [p for p in Path(few).iterdir() if p.name.startswith("zorder-")]
    assert [p.name for p in run_directory.iterdir() if p.is_dir()] == []  # no hidden directory

    # Each file is its cell of the plan, its rows in the curve's order: the plan fitted on
    # the same sample places every row of a file in that file, keys not decreasing.
    plan = plan_clustering(frame, BY, curve=curve)
    sample = sample_columns(frame, plan.columns, sample_size=sample_size_for(files))
    fitted = plan.fit(sample, count=files)
    for key, table in written.items():
        packed = fitted.packed([table.column(c).combine_chunks() for c in BY])
        assert (packed >> np.int64(fitted.packing.cell_shift) == int(key[1:])).all()
        assert (np.diff(packed) >= 0).all(), f"file {key} is not in the curve's order"


def _day_table(path: str) -> None:
    """delta-rs's partitioned, column-mapped table of three days, two appends a day."""
    for number, day in enumerate(["2026-11-01", "2026-11-02", "2026-11-03"]):
        data = network_connections(6_000, seed=40 + number)
        data = data.append_column("day", pa.array([day] * data.num_rows))
        for half in (data.slice(0, 3_000), data.slice(3_000)):
            write_deltalake(
                path,
                half,
                partition_by=["day"],
                mode="append",
                configuration=None
                if DeltaTable.is_deltatable(path)
                else {"delta.columnMapping.mode": "name"},
            )


def test_partitioned_optimize_of_a_column_mapped_table_gives_the_same_files(
    spark: SparkSession, tmp_path: Path
) -> None:
    base = str(tmp_path / "base")
    _day_table(base)
    copies = {name: str(tmp_path / name) for name in ("few", "own")}
    for copy in copies.values():
        shutil.copytree(base, copy)
    # One clustering column: its rank buckets and then its values order each file.
    # zorder's commit protocol is the Spark engine's: both optimizes run in Spark.
    zorder.optimize(spark, copies["few"], by=["src_port"], num_files=15, engine="spark")
    assert last_stage_tasks(spark) == 4
    with session_protocol(spark, OTHER_PROTOCOL):
        zorder.optimize(spark, copies["own"], by=["src_port"], num_files=15, engine="spark")
        assert last_stage_tasks(spark) == 15

    written, alone = files_of(copies["few"]), files_of(copies["own"])
    assert sorted(written) == sorted(alone)
    assert len({key.split("#")[0] for key in written}) == 3  # each day's own directory
    assert sum(t.num_rows for t in written.values()) == 18_000
    port = physical_name(copies["few"], "src_port")
    for key, table in written.items():
        assert rows(table) == rows(alone[key]), key
        values = np.asarray(table.column(port).to_pylist())
        assert (np.diff(values) >= 0).all(), f"file {key} is not sorted"
    assert zorder.read(spark, copies["few"]).count() == 18_000


@pytest.mark.compat
def test_a_thread_of_its_own_loads_the_protocol_too(spark: SparkSession, tmp_path: Path) -> None:
    """Spark looks the protocol up in the calling thread's class loader, which a new
    Python thread (a new JVM thread) does not inherit from the one that added the jar."""
    frame = network_frame(spark, 5_000, seed=6)
    outcome: dict[str, Any] = {}

    def write() -> None:
        try:
            outcome["tasks"] = run_tasks(spark, 10)
            outcome["metrics"] = zorder.write(frame, str(tmp_path / "t"), by=BY, num_files=10)
        except BaseException as error:  # reported by the test's thread
            outcome["error"] = error

    thread = threading.Thread(target=write)
    thread.start()
    thread.join()
    assert "error" not in outcome, outcome.get("error")
    assert outcome["tasks"] == 4
    assert outcome["metrics"].files_added == len(files_of(str(tmp_path / "t"))) == 10


def test_a_session_protocol_of_its_own_is_left_in_charge(
    spark: SparkSession, tmp_path: Path
) -> None:
    frame: DataFrame = network_frame(spark, 5_000, seed=7)
    with session_protocol(spark, OTHER_PROTOCOL):
        zorder.write(frame, str(tmp_path / "t"), by=BY, num_files=6)
        assert spark.conf.get(COMMIT_PROTOCOL_SETTING) == OTHER_PROTOCOL
    assert len(files_of(str(tmp_path / "t"))) == 6


@pytest.mark.parametrize("before", [None, "org.apache.spark.sql.catalyst.optimizer.CombineFilters"])
def test_the_sort_kept_for_the_write_leaves_the_session_s_excluded_rules_as_they_were(
    spark: SparkSession, tmp_path: Path, before: str | None
) -> None:
    """The write excludes EliminateSorts (its key sort stays), then restores the setting."""
    setting = "spark.sql.optimizer.excludedRules"
    if before is not None:
        spark.conf.set(setting, before)
    try:
        frame = network_frame(spark, 5_000, seed=6)
        zorder.write(frame, str(tmp_path / "t"), by=BY, num_files=12)
        assert spark.conf.get(setting, None) == before
    finally:
        spark.conf.unset(setting)
