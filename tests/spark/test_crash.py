"""SIGKILL at any moment of a run leaves the table readable, with exactly the old or new rows.

Each case starts a child process (:mod:`tests.spark.crash_child`) that runs
``optimize`` or an append through ``zorder.write`` in Spark (its own driver JVM)
or in process, waits for the moment to come, and kills the child's whole process
group. The moments ``spark`` and ``arrow`` kill each engine while it writes a
run's files; the commit moments run the default engine. Then the table must
load, hold exactly the rows of the version before the run or (for a completed
commit) after it, reference only files that exist, and ``vacuum`` must find
the files left behind and nothing the table uses.

The children are what takes the time (a driver JVM each, where Spark runs), so
every case's table is prepared first and the kills run a few at a time in
parallel (:func:`killed`); each test then checks its own case.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from pyspark.sql import SparkSession

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


APPENDS = ("append", "append-files")  # a DataFrame (always Spark), files (in process)


def appended_rows() -> Counter[tuple[object, ...]]:
    return Counter((i + 1_000_000, i % 97, f"new-{i}") for i in range(3_000))


def table_rows(path: Path) -> Counter[tuple[object, ...]]:
    table = DeltaTable(str(path)).to_pyarrow_table()
    return Counter(zip(*(table.column(c).to_pylist() for c in ("a", "b", "s")), strict=True))


def wait_for(child: subprocess.Popen[str], predicate_line: str, timeout: float = 240) -> None:
    """Read the child's lines until ``predicate_line``; a child that falls silent fails after
    ``timeout`` seconds instead of blocking the module's fixture (the reading thread ends
    when the child is killed)."""
    assert child.stdout is not None
    stdout = child.stdout
    seen = threading.Event()

    def read() -> None:
        for line in stdout:
            if line.strip() == predicate_line:
                seen.set()
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout)
    if not seen.is_set():
        raise AssertionError(f"the child never printed {predicate_line!r} (exit {child.poll()})")


def wait_for_spark_files(path: Path, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(path.glob("zorder-*/_temporary")):
            time.sleep(1.0)  # well inside the slowed-down job
            return
        time.sleep(0.05)
    raise AssertionError("the child's Spark job never started writing")


def assert_one_file_written(path: Path, runs_before: set[Path]) -> None:
    """The in-process run announced its first file: it is there, the others are not yet."""
    (run,) = set(path.glob("zorder-*")) - runs_before
    written = list(run.rglob("*.parquet"))
    assert len(written) == 1, f"the run's files at the kill: {written}"


def kill_group(child: subprocess.Popen[str]) -> None:
    os.killpg(child.pid, signal.SIGKILL)
    child.wait(timeout=60)
    if child.stdout is not None:
        child.stdout.close()


def kill_at(operation: str, path: Path, moment: str) -> None:
    """Run ``crash_child OPERATION PATH MOMENT`` and SIGKILL its process group at MOMENT."""
    runs_before = set(path.glob("zorder-*"))
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
        elif moment == "arrow":
            wait_for(child, "WRITING")
            assert_one_file_written(path, runs_before)
        elif moment == "after-commit":
            wait_for(child, "COMMITTED")
        else:
            wait_for(child, "COMMITTING")
    finally:
        kill_group(child)


# Children at once: each is mostly a JVM starting and a job waiting to be killed.
PARALLEL_KILLS = 2


@dataclass(frozen=True)
class Killed:
    """A table, what it held before a run, and the run killed at its moment."""

    path: Path
    before: Counter[tuple[object, ...]]
    version: int
    clustered: frozenset[str] = frozenset()
    failure: BaseException | None = None  # why the kill did not happen as planned

    def checked(self) -> Killed:
        """This case, once its kill is known to have happened (else its own error)."""
        if self.failure is not None:
            raise self.failure
        return self


def four_files(path: Path, *, partitioned: bool = False) -> frozenset[str]:
    """The original rows as four files delta-rs wrote (partitioned by ``day`` if asked);
    no file is zorder's."""
    rows = original_rows()
    if partitioned:
        rows = rows.append_column("day", pa.array([f"d{i % 3}" for i in range(ROWS)]))
    for start in range(0, ROWS, ROWS // 4):
        write_deltalake(
            str(path),
            rows.slice(start, ROWS // 4),
            partition_by=["day"] if partitioned else None,
            mode="append",
        )
    return frozenset()


def clustered_half_then_appended(spark: SparkSession, path: Path) -> frozenset[str]:
    """Half the rows clustered by zorder, the other half appended blind; the clustered files."""
    table = pa.Table.from_batches(original_rows().to_batches())
    write_deltalake(str(path), table.slice(0, ROWS // 2), mode="append")
    zorder.optimize(spark, str(path), by=["a", "b", "s"], num_files=4)
    clustered = frozenset(Path(u).name for u in DeltaTable(str(path)).file_uris())
    write_deltalake(str(path), table.slice(ROWS // 2), mode="append")
    return clustered


PLAIN_CASES = [
    ("optimize", "spark"),
    ("optimize", "arrow"),
    ("optimize", "before-commit"),
    ("optimize", "during-commit"),
    ("optimize", "after-commit"),
    ("append", "spark"),
    ("append", "before-commit"),
    ("append-files", "arrow"),
    ("append-files", "before-commit"),
]
BEFORE_THE_PROPERTIES = ("append", "after-commit")
PARTITION_MOMENTS = ["spark", "arrow", "before-commit"]
INCREMENTAL_MOMENTS = ["spark", "arrow", "before-commit", "after-commit"]


@pytest.fixture(scope="module")
def killed(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> dict[tuple[str, str], Killed]:
    """Every case of this module: its table prepared, then its run killed (in parallel)."""
    prepare: dict[tuple[str, str], Callable[[Path], frozenset[str]]] = {
        case: four_files for case in [*PLAIN_CASES, BEFORE_THE_PROPERTIES]
    }
    for moment in PARTITION_MOMENTS:
        prepare[("optimize-day", moment)] = lambda path: four_files(path, partitioned=True)
    for moment in INCREMENTAL_MOMENTS:
        prepare[("incremental", moment)] = lambda path: clustered_half_then_appended(spark, path)
    cases: dict[tuple[str, str], Killed] = {}
    for (operation, moment), made in prepare.items():
        path = tmp_path_factory.mktemp(f"{operation}-{moment}") / "t"
        clustered = made(path)
        cases[(operation, moment)] = Killed(
            path, table_rows(path), DeltaTable(str(path)).version(), clustered
        )
    with ThreadPoolExecutor(PARALLEL_KILLS) as pool:
        kills = {case: pool.submit(kill_at, case[0], k.path, case[1]) for case, k in cases.items()}
    # A kill that went wrong fails its own test, not the module's.
    return {case: replace(cases[case], failure=kill.exception()) for case, kill in kills.items()}


@pytest.mark.parametrize(("operation", "moment"), PLAIN_CASES)
def test_sigkill_leaves_old_or_new_state(
    killed: dict[tuple[str, str], Killed], operation: str, moment: str
) -> None:
    case = killed[(operation, moment)].checked()
    path, before = case.path, case.before
    table = DeltaTable(str(path))
    committed = table.version() > case.version
    if moment in ("spark", "arrow", "before-commit"):
        assert not committed
    if moment == "after-commit":
        assert committed
    expected = before + appended_rows() if committed and operation in APPENDS else before
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


@pytest.mark.parametrize("moment", PARTITION_MOMENTS)
def test_sigkill_mid_optimize_of_a_partition_leaves_the_table_as_it_was(
    killed: dict[tuple[str, str], Killed], moment: str
) -> None:
    case = killed[("optimize-day", moment)].checked()
    table = DeltaTable(str(case.path))
    assert table.version() == case.version
    assert table_rows(case.path) == case.before
    for uri in table.file_uris():
        assert Path(uri.removeprefix("file://")).exists()


def test_sigkill_between_the_commit_and_the_properties_loses_nothing(
    spark: SparkSession, killed: dict[tuple[str, str], Killed]
) -> None:
    """The spec goes into the properties in a commit after the data's: a kill in between
    leaves the rows committed, and the next call finds the spec in the history."""
    case = killed[BEFORE_THE_PROPERTIES].checked()
    path, before = case.path, case.before
    assert table_rows(path) == before + appended_rows()
    assert "zorder.clustering.columns" not in DeltaTable(str(path)).metadata().configuration
    metrics = zorder.optimize(spark, str(path))
    assert metrics.by == ("a", "b", "s")  # from the history: the run's commit recorded it
    assert metrics.files_removed == 4  # delta-rs's files; the appended run is current
    assert zorder.describe(str(path)).spec is not None  # recorded now
    assert table_rows(path) == before + appended_rows()


@pytest.mark.parametrize("moment", INCREMENTAL_MOMENTS)
def test_sigkill_mid_incremental_optimize_leaves_old_or_new_state(
    killed: dict[tuple[str, str], Killed], moment: str
) -> None:
    case = killed[("incremental", moment)].checked()
    after = DeltaTable(str(case.path))
    assert after.version() == case.version + (moment == "after-commit")
    assert table_rows(case.path) == case.before
    assert case.clustered <= {Path(u).name for u in after.file_uris()}  # the run was left alone
    for uri in after.file_uris():
        assert Path(uri.removeprefix("file://")).exists()
