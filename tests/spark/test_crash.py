"""SIGKILL at any moment of a run leaves the table readable, with exactly the old or new rows.

Each case starts a child process (its own Spark driver JVM) that runs
``optimize`` or an append through ``zorder.write``, waits for the moment to
come, and kills the child's whole process group. Then the table must load,
hold exactly the rows of the version before the run or (for a completed
commit) after it, reference only files that exist, and ``vacuum`` must find
the files left behind and nothing the table uses.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

import zorder

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
ROWS = 10_000


def original_rows() -> pa.Table:
    ids = pa.array(range(ROWS), pa.int64())
    return pa.table(
        {
            "a": ids,
            "b": pa.array([(i * 7919) % 1009 for i in range(ROWS)], pa.int64()),
            "s": pa.array([f"row-{(i * 31) % ROWS:05d}" for i in range(ROWS)]),
        }
    )


def appended_rows() -> Counter[tuple[object, ...]]:
    return Counter((i + 1_000_000, i % 97, f"new-{i}") for i in range(3_000))


def table_rows(path: Path) -> Counter[tuple[object, ...]]:
    table = DeltaTable(str(path)).to_pyarrow_table()
    return Counter(zip(*(table.column(c).to_pylist() for c in ("a", "b", "s")), strict=True))


def wait_for(child: subprocess.Popen[str], predicate_line: str, timeout: float = 240) -> None:
    assert child.stdout is not None
    deadline = time.monotonic() + timeout
    for line in child.stdout:
        if line.strip() == predicate_line:
            return
        if time.monotonic() > deadline:
            break
    raise AssertionError(f"the child never printed {predicate_line!r} (exit {child.poll()})")


def wait_for_spark_files(path: Path, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(path.glob("zorder-*/_temporary")):
            time.sleep(1.0)  # well inside the slowed-down job
            return
        time.sleep(0.05)
    raise AssertionError("the child's Spark job never started writing")


def kill_group(child: subprocess.Popen[str]) -> None:
    os.killpg(child.pid, signal.SIGKILL)
    child.wait(timeout=60)
    if child.stdout is not None:
        child.stdout.close()


def kill_at(operation: str, path: Path, moment: str) -> None:
    """Run ``crash_child OPERATION PATH MOMENT`` and SIGKILL its process group at MOMENT."""
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.spark.crash_child", operation, str(path), moment],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: the driver JVM dies with it
    )
    try:
        if moment == "spark":
            wait_for(child, "STARTED")
            wait_for_spark_files(path)
        elif moment == "after-commit":
            wait_for(child, "COMMITTED")
        else:
            wait_for(child, "COMMITTING")
    finally:
        kill_group(child)


@pytest.mark.parametrize(
    ("operation", "moment"),
    [
        ("optimize", "spark"),
        ("optimize", "before-commit"),
        ("optimize", "during-commit"),
        ("optimize", "after-commit"),
        ("append", "spark"),
        ("append", "before-commit"),
    ],
)
def test_sigkill_leaves_old_or_new_state(tmp_path: Path, operation: str, moment: str) -> None:
    path = tmp_path / "t"
    for start in range(0, ROWS, ROWS // 4):  # four files, written by delta-rs
        write_deltalake(str(path), original_rows().slice(start, ROWS // 4), mode="append")
    before = table_rows(path)
    version_before = DeltaTable(str(path)).version()

    kill_at(operation, path, moment)

    table = DeltaTable(str(path))
    committed = table.version() > version_before
    if moment in ("spark", "before-commit"):
        assert not committed
    if moment == "after-commit":
        assert committed
    expected = before + appended_rows() if committed and operation == "append" else before
    assert table_rows(path) == expected
    for uri in table.file_uris():
        assert Path(uri.removeprefix("file://")).exists()

    # The files the dead run left are never referenced; vacuum finds them, and only them.
    leftovers = zorder.vacuum(str(path), retain_hours=0, force=True)
    referenced = {Path(u.removeprefix("file://")).resolve() for u in table.file_uris()}
    listed = {(path / f).resolve() for f in leftovers.files}
    assert not listed & referenced
    zorder.vacuum(str(path), retain_hours=0, force=True, dry_run=False)
    assert table_rows(path) == expected
    left = [p.relative_to(path) for p in path.rglob("*.parquet") if p.resolve() not in referenced]
    # Only what Spark's killed job left in its _temporary stays: a hidden name, which
    # Delta Spark's VACUUM never deletes either.
    assert not [p for p in left if not any(n.startswith(("_", ".")) for n in p.parts)]


@pytest.mark.parametrize("moment", ["spark", "before-commit"])
def test_sigkill_mid_optimize_of_a_partition_leaves_the_table_as_it_was(
    tmp_path: Path, moment: str
) -> None:
    path = tmp_path / "days"
    rows = original_rows()
    days = pa.array([f"d{i % 3}" for i in range(ROWS)])
    for start in range(0, ROWS, ROWS // 4):
        write_deltalake(
            str(path),
            rows.append_column("day", days).slice(start, ROWS // 4),
            partition_by=["day"],
            mode="append",
        )
    before, version = table_rows(path), DeltaTable(str(path)).version()
    kill_at("optimize-day", path, moment)
    table = DeltaTable(str(path))
    assert table.version() == version
    assert table_rows(path) == before
    for uri in table.file_uris():
        assert Path(uri.removeprefix("file://")).exists()


def test_sigkill_between_the_commit_and_the_properties_loses_nothing(
    spark: object, tmp_path: Path
) -> None:
    """The spec goes into the properties in a commit after the data's: a kill in between
    leaves the rows committed, and the next call finds the spec in the history."""
    path = tmp_path / "t"
    for start in range(0, ROWS, ROWS // 4):
        write_deltalake(str(path), original_rows().slice(start, ROWS // 4), mode="append")
    before = table_rows(path)
    kill_at("append", path, "after-commit")
    assert table_rows(path) == before + appended_rows()
    assert "zorder.clustering.columns" not in DeltaTable(str(path)).metadata().configuration
    metrics = zorder.optimize(spark, str(path))  # type: ignore[arg-type]
    assert metrics.by == ("a", "b", "s")  # from the history: the run's commit recorded it
    assert metrics.files_removed == 4  # delta-rs's files; the appended run is current
    assert zorder.describe(str(path)).spec is not None  # recorded now
    assert table_rows(path) == before + appended_rows()


@pytest.mark.parametrize("moment", ["spark", "before-commit", "after-commit"])
def test_sigkill_mid_incremental_optimize_leaves_old_or_new_state(
    spark: object, tmp_path: Path, moment: str
) -> None:
    path = tmp_path / "t"
    table = pa.Table.from_batches(original_rows().to_batches())
    write_deltalake(str(path), table.slice(0, ROWS // 2), mode="append")
    zorder.optimize(spark, str(path), by=["a", "b", "s"], num_files=4)  # type: ignore[arg-type]
    clustered = {Path(u).name for u in DeltaTable(str(path)).file_uris()}
    write_deltalake(str(path), table.slice(ROWS // 2), mode="append")  # blind append
    before, version = table_rows(path), DeltaTable(str(path)).version()
    kill_at("incremental", path, moment)
    after = DeltaTable(str(path))
    assert after.version() == version + (moment == "after-commit")
    assert table_rows(path) == before
    assert clustered <= {Path(u).name for u in after.file_uris()}  # the run was left alone
    for uri in after.file_uris():
        assert Path(uri.removeprefix("file://")).exists()
