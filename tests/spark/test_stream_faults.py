"""A streaming query into a zorder table killed mid-batch writes every row exactly once.

Each case runs a real Structured Streaming query (``tests/spark/stream_child.py``,
a driver JVM of its own) over a directory of JSON files, one file a batch,
into a table through ``zorder.foreach_batch``; SIGKILLs its process group at
a moment of one batch; checks what the table and the query's checkpoint hold
then; and restarts the query from the same checkpoint in the tests' own
session (another driver, as after a crash), where it runs to the end. The
table must then hold every source row once, as DuckDB's ``delta_scan`` and
delta-rs read it, and record the last batch id for the query's id; each
batch's ``txn`` is in one commit only.

A last case races two plain ``zorder.write`` appends of the same (app id,
version), each in its own process, both past reading the table before either
commits: one commits, the other is skipped.

The children are what takes the time (a driver JVM each): they run two at a
time in a module fixture (:func:`faults`), which restarts each killed query as
soon as it is dead, and each test checks its own case.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from pyspark.sql import DataFrame, SparkSession

import zorder
from tests.spark.helpers import delta_rs_rows, kernel_rows, row_multiset
from tests.spark.stream_child import COLUMNS, start_query, write_batch
from zorder.table.clustering import commit_clustering

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
CHILD_ENV = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}"}
FILES = 4  # one batch each: batch ids 0..3
ROWS_PER_FILE = 200
LAST_BATCH = FILES - 1
TIMEOUT = 240  # seconds a child may take to reach a moment, or to finish
PARALLEL = 2  # cases at once (the race runs two children of its own)


SOURCE_SCHEMA = pa.schema(
    [("id", pa.int64()), ("a", pa.int64()), ("b", pa.int64()), ("c", pa.string())]
)


def source_row(i: int) -> dict[str, Any]:
    return {"id": i, "a": (i * 7919) % 1009, "b": (i * 104729) % 997, "c": f"c{(i * 31) % 50:02d}"}


def write_source(directory: Path) -> None:
    """FILES JSON files of ROWS_PER_FILE rows with unique ids, oldest first (the file source
    takes them in order of modification time, one a batch)."""
    directory.mkdir()
    for f in range(FILES):
        path = directory / f"part-{f}.json"
        rows = range(f * ROWS_PER_FILE, (f + 1) * ROWS_PER_FILE)
        path.write_text("".join(json.dumps(source_row(i)) + "\n" for i in rows))
        os.utime(path, (1_700_000_000 + f, 1_700_000_000 + f))


def source_rows(count: int = FILES * ROWS_PER_FILE) -> Counter[tuple[Any, ...]]:
    return row_multiset(tuple(source_row(i).values()) for i in range(count))


class Child:
    """A child process in its own process group, its stdout lines gathered as they come."""

    def __init__(self, args: list[str], log: Path) -> None:
        self.log = log
        with log.open("w") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tests.spark.stream_child", *args],
                cwd=ROOT,
                env=CHILD_ENV,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                start_new_session=True,  # its own process group: the driver JVM dies with it
            )
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        with stdout:
            for line in stdout:
                with self._changed:
                    self.lines.append(line.strip())
                    self._changed.notify_all()
        with self._changed:
            self.lines.append(EOF)
            self._changed.notify_all()

    def failed(self, what: str) -> AssertionError:
        tail = self.log.read_text()[-3000:] if self.log.exists() else ""
        return AssertionError(
            f"{what} (exit {self.process.poll()}); stdout: {self.lines}\nstderr's end:\n{tail}"
        )

    def wait_for(self, wanted: str, timeout: float = TIMEOUT) -> None:
        with self._changed:
            self._changed.wait_for(lambda: wanted in self.lines or EOF in self.lines, timeout)
            if wanted not in self.lines:
                raise self.failed(f"the child never printed {wanted!r}")

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=60)
        self._reader.join(60)

    def finish(self, timeout: float = TIMEOUT) -> None:
        """Wait for the child to exit on its own; it must succeed."""
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise self.failed(f"the child did not finish in {timeout} s") from None
        self._reader.join(60)
        if code != 0:
            raise self.failed("the child failed")

    def reports(self, prefix: str) -> list[dict[str, Any]]:
        """The JSON of each line that starts with ``prefix``."""
        return [json.loads(x.removeprefix(prefix)) for x in self.lines if x.startswith(prefix)]


EOF = "<end of output>"


@dataclass(frozen=True)
class Checkpoint:
    """What a query's checkpoint holds: its id, the batches its offset and commit logs record."""

    query_id: str
    offsets: frozenset[int]
    commits: frozenset[int]

    @classmethod
    def read(cls, directory: Path) -> Checkpoint:
        def batches(log: str) -> frozenset[int]:
            return frozenset(int(p.name) for p in (directory / log).iterdir() if p.name.isdigit())

        query_id = json.loads((directory / "metadata").read_text())["id"]
        return cls(str(query_id), batches("offsets"), batches("commits"))


@dataclass(frozen=True)
class Killed:
    """A query killed in batch ``at``: what its batches reported, and the state it left."""

    table: Path
    checkpoint: Path
    at: int
    reports: list[dict[str, Any]]  # BATCH lines of the killed run
    at_kill: Checkpoint
    recorded: int | None  # the table's txn version for the query's id after the kill


@dataclass(frozen=True)
class Streamed:
    """One streaming case: the killed run, then the restart's run to the end."""

    killed: Killed
    restarted: list[dict[str, Any]]  # what each batch of the restart reported
    after: Checkpoint

    @property
    def table(self) -> Path:
        return self.killed.table

    @property
    def at(self) -> int:
        return self.killed.at


@dataclass(frozen=True)
class Raced:
    table: Path
    metrics: list[dict[str, Any]]  # each racer's ClusterMetrics, as JSON
    version_before: int
    committing: int  # racers that passed the barrier to their commit


# What a child prints at each moment it is killed at (followed by the batch id).
MARKERS = {"after-commit": "COMMITTED", "before-commit": "COMMITTING", "spark": "WRITING"}
APP_ID = "race-load"
RACE_VERSION = 7


def wait_for_spark_files(table: Path, child: Child, timeout: float = TIMEOUT) -> None:
    """Until the slowed-down batch's Spark job has begun writing its run's files."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(table.glob("zorder-*/_temporary")):
            time.sleep(1.0)  # well inside the slowed-down job
            return
        time.sleep(0.05)
    raise child.failed("the child's Spark job never started writing")


def kill_in_batch(base: Path, source: Path, moment: str, at: int) -> Killed:
    """Run the query into a new table, clustered by a, b, and SIGKILL it at ``moment`` of
    batch ``at``."""
    table, checkpoint = base / "t", base / "checkpoint"
    args = [moment, str(source), str(table), str(checkpoint), "a,b", str(at)]
    child = Child(args, base / "child.log")
    try:
        child.wait_for(f"{MARKERS[moment]} {at}")
        if moment == "spark":
            wait_for_spark_files(table, child)
    finally:
        child.kill()
    at_kill = Checkpoint.read(checkpoint)
    made = (table / "_delta_log").is_dir()
    recorded = DeltaTable(str(table)).transaction_version(at_kill.query_id) if made else None
    return Killed(table, checkpoint, at, child.reports("BATCH "), at_kill, recorded)


def restart(spark: SparkSession, source: Path, killed: Killed, by: list[str] | None) -> Streamed:
    """The killed query restarted from its checkpoint, in this process, run to its end;
    clustered ``by`` (None: by the table's recorded spec)."""
    writer = zorder.foreach_batch(str(killed.table), by=by)
    reports: list[dict[str, Any]] = []

    def sink(df: DataFrame, batch_id: int) -> None:
        reports.append(write_batch(writer, df, batch_id))

    query = start_query(spark, str(source), str(killed.checkpoint), sink)
    try:
        if not query.awaitTermination(TIMEOUT):  # raises the query's error, if it failed
            raise AssertionError(f"the restarted query did not end in {TIMEOUT} s: {reports}")
    finally:
        query.stop()
    return Streamed(killed, reports, Checkpoint.read(killed.checkpoint))


def race_case(base: Path, source: Path) -> Raced:
    """Two processes append the same rows as (APP_ID, RACE_VERSION) to one existing table."""
    table, barrier = base / "t", base / "barrier"
    barrier.mkdir()
    # The table exists before the race: the first source file, appended by delta-rs.
    first = [source_row(i) for i in range(ROWS_PER_FILE)]
    write_deltalake(str(table), pa.Table.from_pylist(first, schema=SOURCE_SCHEMA))
    before = DeltaTable(str(table)).version()
    rows = str(source / "part-1.json")
    racers = [
        Child(
            ["race", rows, str(table), str(barrier), str(i), APP_ID, str(RACE_VERSION)],
            base / f"racer-{i}.log",
        )
        for i in (0, 1)
    ]
    for racer in racers:
        racer.finish()
    metrics = [m for racer in racers for m in racer.reports("METRICS ")]
    return Raced(table, metrics, before, sum("COMMITTING" in r.lines for r in racers))


# Where each query is killed: a moment of batch `at` (its first run clusters by a, b).
KILLS = {
    "after-commit": ("after-commit", 1),
    "before-commit": ("before-commit", 1),
    "in-spark": ("spark", 0),  # the batch that makes the table: no table is there yet
}
# Each streaming case: the killed query it restarts, and the columns the restart clusters
# by (None: the table's spec). Two cases restart one killed query: the second a copy of
# its table and checkpoint, taken before either restart.
STREAM_CASES: dict[str, tuple[str, list[str] | None]] = {
    "replayed-after-commit": ("after-commit", ["a", "b"]),
    "restarted-with-new-spec": ("after-commit", ["c"]),
    "killed-before-commit": ("before-commit", None),
    "killed-in-spark": ("in-spark", ["a", "b"]),
}


def copied(killed: Killed, to: Path) -> Killed:
    """The killed query's table and checkpoint, copied to ``to`` (the log's paths and the
    checkpoint's are relative to them, or the source's)."""
    table, checkpoint = to / "t", to / "checkpoint"
    shutil.copytree(killed.table, table)
    shutil.copytree(killed.checkpoint, checkpoint)
    return dataclasses.replace(killed, table=table, checkpoint=checkpoint)


@dataclass
class Faults:
    """Every case's outcome, or why it could not be run as planned."""

    streams: dict[str, Streamed | BaseException] = field(default_factory=dict)
    race: Raced | BaseException | None = None

    def stream(self, name: str) -> Streamed:
        found = self.streams[name]
        if isinstance(found, BaseException):
            raise found
        return found


@pytest.fixture(scope="module")
def faults(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Faults:
    """Every case of this module: the children killed two at a time, each killed query
    restarted here as soon as it is dead. A case that went wrong fails its own test only."""
    source = tmp_path_factory.mktemp("stream-source") / "json"
    write_source(source)
    found = Faults()
    with ThreadPoolExecutor(PARALLEL) as pool:
        kills = {
            pool.submit(kill_in_batch, tmp_path_factory.mktemp(name), source, *where): name
            for name, where in KILLS.items()
        }
        race = pool.submit(race_case, tmp_path_factory.mktemp("race"), source)
        for kill in as_completed(kills):
            cases = [case for case, (name, _) in STREAM_CASES.items() if name == kills[kill]]
            try:
                killed = kill.result()
                states = [killed] + [copied(killed, tmp_path_factory.mktemp(c)) for c in cases[1:]]
            except Exception as error:  # each case's own test raises it
                found.streams.update(dict.fromkeys(cases, error))
                continue
            for case, state in zip(cases, states, strict=True):
                try:
                    found.streams[case] = restart(spark, source, state, STREAM_CASES[case][1])
                except Exception as error:
                    found.streams[case] = error
        found.race = race.exception() or race.result()
    return found


def read_back(kernel: duckdb.DuckDBPyConnection, table: Path) -> Counter[tuple[Any, ...]]:
    """The table's rows as delta-rs reads them, checked equal to DuckDB's delta_scan."""
    rows = delta_rs_rows(str(table), COLUMNS)
    assert kernel_rows(kernel, str(table), COLUMNS) == rows
    return rows


def commits(table: Path) -> dict[int, list[dict[str, Any]]]:
    """Every commit of the log: its actions, by version."""
    return {
        int(path.stem): [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        for path in sorted((table / "_delta_log").glob("*.json"))
    }


def transactions(table: Path, app_id: str) -> list[tuple[int, int]]:
    """(commit version, txn version) of every ``txn`` action of ``app_id``, in log order."""
    return [
        (version, action["txn"]["version"])
        for version, actions in commits(table).items()
        for action in actions
        if "txn" in action and action["txn"]["appId"] == app_id
    ]


def assert_exactly_once(case: Streamed, kernel: duckdb.DuckDBPyConnection) -> None:
    """Every source row once; every batch's txn in one commit; the last batch recorded."""
    query_id = case.killed.at_kill.query_id
    assert case.after.query_id == query_id  # the restart is the same query
    assert {r["query"] for r in case.killed.reports + case.restarted} == {query_id}
    assert read_back(kernel, case.table) == source_rows()
    assert DeltaTable(str(case.table)).transaction_version(query_id) == LAST_BATCH
    recorded = transactions(case.table, query_id)
    assert [txn for _, txn in recorded] == list(range(FILES))  # each batch committed once
    assert case.after.commits == frozenset(range(FILES))
    # What each batch's write reported adds up to the source, with nothing twice.
    written = [r for r in case.killed.reports + case.restarted if not r["skipped"]]
    assert sorted(r["batch"] for r in written) == list(range(FILES))
    assert sum(r["rows"] for r in written) == FILES * ROWS_PER_FILE


def assert_killed_in_batch(case: Streamed, *, committed: bool) -> None:
    """At the kill: batches before ``at`` done, ``at`` planned but not in Spark's commit log,
    and in the table only if its data was ``committed``."""
    at = case.at
    assert case.killed.at_kill.offsets == frozenset(range(at + 1))
    assert case.killed.at_kill.commits == frozenset(range(at))  # Spark must replay batch `at`
    last_committed = at if committed else at - 1
    assert case.killed.recorded == (last_committed if last_committed >= 0 else None)
    done = range(at + 1) if committed else range(at)
    assert [(r["batch"], r["skipped"]) for r in case.killed.reports] == [(b, False) for b in done]
    # The restart runs batch `at` again first, then the rest.
    assert [r["batch"] for r in case.restarted] == list(range(at, FILES))
    assert [r["skipped"] for r in case.restarted] == [committed] + [False] * (FILES - 1 - at)


def test_a_batch_replayed_after_its_commit_adds_nothing(
    faults: Faults, kernel: duckdb.DuckDBPyConnection
) -> None:
    """SIGKILL right after zorder committed batch k, before Spark's commit log recorded it:
    the restart replays batch k, which the table records already, and it writes nothing."""
    case = faults.stream("replayed-after-commit")
    assert_killed_in_batch(case, committed=True)
    replayed = case.restarted[0]
    assert (replayed["rows"], replayed["data_version"]) == (0, None)
    assert_exactly_once(case, kernel)


@pytest.mark.parametrize("name", ["killed-before-commit", "killed-in-spark"])
def test_a_batch_killed_before_its_commit_is_written_once_on_restart(
    faults: Faults, kernel: duckdb.DuckDBPyConnection, name: str
) -> None:
    """SIGKILL while batch k's run is written (in Spark's job, or done and not committed):
    nothing of it is in the table; the restart writes it, once. Killed in Spark, k is the
    first batch: the restart makes the table, where the dead run left its directory."""
    case = faults.stream(name)
    assert_killed_in_batch(case, committed=False)
    assert case.restarted[0]["rows"] == ROWS_PER_FILE
    assert_exactly_once(case, kernel)
    # killed-before-commit restarts without by=: the table's spec, (a, b), clusters it.
    assert {tuple(r["by"]) for r in case.killed.reports + case.restarted} == {("a", "b")}
    # The dead run's files stay unreferenced, for vacuum.
    referenced = {
        Path(u.removeprefix("file://")).resolve() for u in DeltaTable(str(case.table)).file_uris()
    }
    runs = {p.parent.name for p in referenced}
    assert len([d for d in case.table.glob("zorder-*") if d.name not in runs]) == 1


def test_a_restart_with_another_spec_clusters_later_batches_by_it(
    faults: Faults, kernel: duckdb.DuckDBPyConnection
) -> None:
    """The query restarted with by=["c"] after batch 1 was committed by a, b: the replay adds
    nothing, later batches are clustered by c. An append does not change the table's
    recorded spec: it stays (a, b), so the batches clustered by c count as unclustered for
    the table (an incremental optimize would cluster them again by a, b)."""
    case = faults.stream("restarted-with-new-spec")
    assert_killed_in_batch(case, committed=True)
    assert_exactly_once(case, kernel)
    by_commit = {
        version: commit_clustering(action["commitInfo"])
        for version, actions in commits(case.table).items()
        for action in actions
        if "commitInfo" in action
    }
    for report in case.killed.reports + case.restarted:
        if report["skipped"]:
            continue
        expected = ("a", "b") if report["batch"] <= case.at else ("c",)
        assert tuple(report["by"]) == expected
        clustering = by_commit[report["data_version"]]
        assert clustering is not None
        assert clustering.spec.columns == expected
    described = zorder.describe(str(case.table))
    assert described.spec is not None
    assert described.spec.columns == ("a", "b")
    current = {run.run.fingerprint: run.current for run in described.runs}
    assert len(current) == 2  # one fingerprint per spec
    assert sorted(current.values()) == [False, True]
    assert {f.run.fingerprint for f in described.unclustered if f.run is not None} == {
        fp for fp, is_current in current.items() if not is_current
    }


def test_two_writers_racing_one_transaction_commit_it_once(
    faults: Faults, kernel: duckdb.DuckDBPyConnection
) -> None:
    """Two processes append the same rows as one (app id, version), both having read the
    table before either commits: one commits, the other is skipped, the rows are there once."""
    race = faults.race
    if isinstance(race, BaseException):
        raise race
    assert race is not None
    assert len(race.metrics) == 2
    assert race.committing == 2  # both had read the table, and planned on it, before a commit
    assert sorted(m["skipped"] for m in race.metrics) == [False, True]
    winner = next(m for m in race.metrics if not m["skipped"])
    loser = next(m for m in race.metrics if m["skipped"])
    assert winner["rows"] == ROWS_PER_FILE
    assert winner["data_version"] == race.version_before + 1
    assert (loser["rows"], loser["files_added"], loser["version"]) == (0, 0, None)
    assert read_back(kernel, race.table) == source_rows(2 * ROWS_PER_FILE)
    assert DeltaTable(str(race.table)).transaction_version(APP_ID) == RACE_VERSION
    assert transactions(race.table, APP_ID) == [(winner["data_version"], RACE_VERSION)]
    # The loser's files are gone: every run directory left is the winner's.
    uris = DeltaTable(str(race.table)).file_uris()
    runs = {Path(u).parent.name for u in uris if Path(u).parent.name.startswith("zorder-")}
    assert len(runs) == 1
    assert {d.name for d in race.table.glob("zorder-*")} == runs
