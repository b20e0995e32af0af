"""Delta Spark writers racing zorder on one table, checked against a model of the rows.

Each race pairs one Delta Spark command, run by a writer in a process of its
own (:mod:`tests.spark.race_child`), with one zorder operation run here:
``optimize`` (either engine), ``optimize(where=)``, the incremental
``optimize`` (the recorded spec), an append of a DataFrame or of Parquet
files, and a batch of a streaming query writing through
``zorder.foreach_batch``. The Delta commands are blind appends, ``DELETE``,
``UPDATE`` and ``MERGE`` (on a table with and one without deletion vectors),
overwrites with ``replaceWhere``, ``OPTIMIZE`` and ``OPTIMIZE ... ZORDER BY``.

The order of the two commits is chosen:

- ``delta-first``: zorder has read its snapshot and written its files; the
  Delta command runs from start to commit; then zorder commits;
- ``zorder-first``: the Delta command has taken its snapshot and waits in its
  own Spark job; zorder runs from start to commit; then the Delta command commits;
- ``free``: both start at once, a random moment apart.

Kills: the Delta writer is killed (SIGKILL, its whole process group) while
its command waits or at a random moment, and zorder, in a process of its own
(:mod:`tests.spark.race_zorder_child`), is killed before, during and after its
commit while a Delta command runs.

After every race the table is read by Delta Spark and by DuckDB's Delta
reader, and both must equal the model: the Delta commands the log records
(each tags its commit with ``userMetadata``), applied in the log's order to
the rows, plus the rows of every zorder append and batch whose ``txn`` the
log records, once each. zorder's appends touch ids no Delta command touches,
so they commute with every Delta command; optimize changes no row. An
operation that answered success must be in the log; one that failed must
have failed with a concurrency conflict (Delta's ``Concurrent*`` and
``*ChangedException``, zorder's ``ConcurrentCommitError``) and be absent.

``python -m tests.spark.races --operations 200`` runs the long version
(``make races``) and writes its figures into RELIABILITY.md; the tests run a
short one (``tests/spark/test_races.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest.mock import patch

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable
from pyspark.sql import SparkSession
from pyspark.sql.streaming.query import StreamingQuery

import zorder
import zorder.plan.runs as runs_module
from tests.spark.helpers import kernel_rows
from zorder.errors import ConcurrentCommitError
from zorder.plan.modes import Engine
from zorder.table.delta.commit import commit_files

COLUMNS = ["id", "p", "v", "a", "b"]
BY = ["a", "b"]
PARTS = 4
INITIAL = 2_000
Row = tuple[int, int, int, int, int]

DELTA_OPS = ("append", "delete", "update", "merge", "replace", "optimize", "optimize-zorder")
ZORDER_OPS = ("optimize", "optimize-where", "incremental", "append", "append-files", "stream")
ORDERS = ("delta-first", "zorder-first", "free")
# A command that failed on a concurrent commit: Delta's conflict exceptions (io.delta.exceptions).
DELTA_CONFLICT = re.compile(r"(Concurrent\w*|MetadataChanged|ProtocolChanged)Exception$")
MOMENTS = ("before-commit", "during-commit", "after-commit")
ENGINES: tuple[Engine, ...] = ("spark", "arrow")


def row(i: int, v: int = 0) -> Row:
    return (i, i % PARTS, v, (i * 7919) % 1000, (i * 104729) % 997)


def as_lists(rows: list[Row]) -> list[list[int]]:
    return [list(r) for r in rows]


class DeltaWriter:
    """The Delta Spark writer process: commands in, answers out, killable."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self.process: subprocess.Popen[str] | None = None
        self.answers: queue.Queue[dict[str, Any]] = queue.Queue()
        self.starts = 0

    def start(self) -> None:
        self.answers = queue.Queue()
        answers = self.answers
        self.log_file = open(self.log, "a")  # noqa: SIM115 - closed with the process
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.spark.race_child"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log_file,
            text=True,
            start_new_session=True,
            cwd=Path(__file__).parents[2],
        )
        self.starts += 1
        stdout = self.process.stdout
        assert stdout is not None

        def read() -> None:
            for line in stdout:
                if line.startswith("RACE "):
                    answers.put(json.loads(line[5:]))

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        ready = self.answers.get(timeout=300)
        assert ready["event"] == "ready", ready

    def send(self, command: dict[str, Any]) -> None:
        assert self.process is not None
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()

    def answer(self, tag: str, timeout: float = 300) -> dict[str, Any]:
        got = self.answers.get(timeout=timeout)
        assert got.get("tag") == tag, (tag, got)
        return got

    def run(self, command: dict[str, Any]) -> dict[str, Any]:
        self.send(command)
        return self.answer(command["tag"])

    def kill(self) -> None:
        assert self.process is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=60)
        self._closed()

    def stop(self) -> None:
        if self.process is not None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.kill()
                return
            self._closed()

    def _closed(self) -> None:
        """The ended process's pipes and log closed (its reader thread sees the end)."""
        assert self.process is not None
        self.reader.join(timeout=30)  # it stops at the end of the dead process's output
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self.log_file.close()
        self.process = None


@dataclass
class DeltaCommand:
    tag: str
    op: str
    args: dict[str, Any]

    def apply(self, rows: dict[int, Row]) -> None:
        """The command's effect on ``rows`` (by id), as Delta's documentation defines it."""
        if self.op in ("create", "append"):
            for r in self.args["rows"]:
                assert r[0] not in rows
                rows[r[0]] = tuple(r)
        elif self.op == "delete":
            for i in self.args["ids"]:
                rows.pop(i, None)
        elif self.op == "update":
            for i in self.args["ids"]:
                if i in rows:
                    rows[i] = (*rows[i][:2], rows[i][2] + 1, *rows[i][3:])
        elif self.op == "merge":
            for r in self.args["rows"]:
                i = r[0]
                if i in rows:
                    rows[i] = (*rows[i][:2], rows[i][2] + 1, *rows[i][3:])
                else:
                    rows[i] = tuple(r)
        elif self.op == "replace":
            low, high = self.args["range"]
            for i in [i for i in rows if low <= i < high]:
                del rows[i]
            for r in self.args["rows"]:
                rows[r[0]] = tuple(r)


@dataclass
class Outcome:
    """One operation: what it answered, and whether the log records it."""

    kind: str  # "delta:<op>" or "zorder:<op>"
    order: str
    table: str
    ok: bool | None  # None: killed, no answer
    error: str = ""
    recorded: bool = False
    tag: str = ""  # a Delta command's userMetadata
    app: str = ""  # a zorder append's txn app id
    batch: int | None = None  # a stream batch's id
    nothing: bool = False  # succeeded with nothing to commit (an OPTIMIZE of compact files)


@dataclass
class Pairing:
    """One race's two operations, and whether their transactions overlapped: one committed
    between the other's read and commit (told by the log, or by a conflict)."""

    order: str
    tag: str  # the Delta command's
    zorder_version: int | None  # the version zorder's commit made, if it made one
    hooked: bool = False  # delta-first: the Delta command ran inside zorder's commit hook
    overlapped: bool = False


@dataclass
class Tally:
    outcomes: list[Outcome] = field(default_factory=list)
    pairings: list[Pairing] = field(default_factory=list)
    checks: int = 0
    wrong: list[str] = field(default_factory=list)
    seconds: float = 0.0
    stop: bool = False  # stop at the first wrong result, leaving the table to look at

    def operations(self) -> int:
        return len(self.outcomes)


class Race:
    """One table, its Delta writer, its model, and the races run on it."""

    def __init__(
        self,
        spark: SparkSession,
        kernel: duckdb.DuckDBPyConnection,
        writer: DeltaWriter,
        root: Path,
        name: str,
        *,
        deletion_vectors: bool,
        seed: int,
        tally: Tally,
    ) -> None:
        self.spark, self.kernel, self.writer = spark, kernel, writer
        self.root, self.name = root, name
        self.path = str(root / name)
        self.random = random.Random(seed)
        self.tally = tally
        self.commands: dict[str, DeltaCommand] = {}
        self.appends: dict[str, list[Row]] = {}  # zorder's: txn app id -> rows
        self.batches: list[list[Row]] = []  # the stream's, by batch id
        self.pending: list[Outcome] = []  # this race's, until the log is read
        self.pairing: Pairing | None = None
        self.count = 0
        self.fresh = 10_000  # ids Delta's appends and merges insert
        self.zorder_fresh = 1_000_000  # ids zorder's appends and batches insert
        self.query: StreamingQuery | None = None
        self.live: set[int] = set(range(INITIAL))  # the model's ids at the last check
        self.stream_app = f"race-stream-{name}"
        properties = {"delta.enableDeletionVectors": str(deletion_vectors).lower()}
        self.delta("create", rows=as_lists([row(i) for i in range(INITIAL)]), properties=properties)
        # The table's spec, recorded by a first zorder optimize (the incremental one reads it).
        zorder.optimize(self.spark, self.path, by=BY, num_files=4, full=True)

    # --- Delta's side -----------------------------------------------------------------

    def tag(self, what: str) -> str:
        self.count += 1
        return f"{self.name}-{self.count}-{what}"

    def command(self, op: str, **args: Any) -> DeltaCommand:
        made = DeltaCommand(self.tag(op), op, args)
        self.commands[made.tag] = made
        return made

    def delta(self, op: str, **args: Any) -> dict[str, Any]:
        """A Delta command run alone (no race)."""
        made = self.command(op, **args)
        answer = self.writer.run({"op": op, "table": self.path, "tag": made.tag, **args})
        assert answer["ok"], answer
        return answer

    def new_ids(self, n: int) -> list[int]:
        start, self.fresh = self.fresh, self.fresh + n
        return list(range(start, start + n))

    def some_ids(self, n: int) -> list[int]:
        return sorted(self.random.sample(range(self.fresh), n))

    def delta_command(self, op: str) -> DeltaCommand:
        if op == "append":
            return self.command(op, rows=as_lists([row(i) for i in self.new_ids(20)]))
        if op in ("delete", "update"):
            return self.command(op, ids=self.some_ids(30))
        if op == "merge":
            ids = self.some_ids(15) + self.new_ids(5)
            return self.command(op, rows=as_lists([row(i) for i in ids]))
        if op == "replace":
            low = self.random.randrange(0, INITIAL - 40)
            rows = [row(i, v=500) for i in range(low, low + 40, 2)]
            return self.command(op, range=[low, low + 40], rows=as_lists(rows))
        if op == "optimize-zorder":
            return self.command("optimize", zorder_by=["b", "a"])
        return self.command("optimize")

    def send(self, made: DeltaCommand, pause: bool) -> None:
        """Send the command; with ``pause``, return once it is inside its Spark job (appends,
        merges, replaces: at their marker) or about to be (deletes, updates: after a moment)."""
        command = {"op": made.op, "table": self.path, "tag": made.tag, **made.args}
        marker = None
        if pause and made.op in ("append", "merge", "replace"):
            marker = self.root / f"{made.tag}.paused"
            command |= {"marker": str(marker), "pause": 4}
        elif pause and made.op in ("delete", "update"):
            present = [i for i in made.args["ids"] if i in self.live] or made.args["ids"]
            command |= {"spin_id": present[0], "spin": 10_000}
        self.writer.send(command)
        if marker is not None:
            wait_for_file(marker)
        elif pause:
            time.sleep(1.0)

    def delta_outcome(self, made: DeltaCommand, order: str, answer: dict[str, Any] | None) -> None:
        kind = "delta:" + ("optimize-zorder" if made.args.get("zorder_by") else made.op)
        ok = None if answer is None else bool(answer["ok"])
        error = "" if answer is None or ok else f"{answer['error']}: {answer['message'][:300]}"
        nothing = bool(ok) and made.op == "optimize" and answer is not None and not answer["result"]
        self.pending.append(
            Outcome(kind, order, self.name, ok, error, tag=made.tag, nothing=nothing)
        )

    # --- zorder's side ----------------------------------------------------------------

    def zorder_rows(self, n: int) -> list[Row]:
        start, self.zorder_fresh = self.zorder_fresh, self.zorder_fresh + n
        return [row(i) for i in range(start, start + n)]

    def frame(self, rows: list[Row]) -> Any:
        return self.spark.createDataFrame(rows, "id BIGINT, p INT, v BIGINT, a BIGINT, b BIGINT")

    def zorder_op(self, op: str) -> tuple[Callable[[], object], str]:
        """The operation, ready to run, and the app id that records it (appends)."""
        engine: Engine = self.random.choice(ENGINES)
        if op == "optimize":
            return lambda: zorder.optimize(
                self.spark, self.path, by=BY, num_files=4, full=True, engine=engine
            ), ""
        if op == "optimize-where":
            part = self.random.randrange(PARTS)
            return lambda: zorder.optimize(
                self.spark, self.path, where=f"p = {part}", num_files=1, engine=engine
            ), ""
        if op == "incremental":
            return lambda: zorder.optimize(self.spark, self.path, engine=engine), ""
        app = f"race-{self.tag('zorder-' + op)}"
        rows = self.zorder_rows(30)
        self.appends[app] = rows
        if op == "append":
            return lambda: zorder.write(
                self.frame(rows),
                self.path,
                by=BY,
                mode="append",
                num_files=2,
                txn_app_id=app,
                txn_version=0,
            ), app
        source = self.root / f"{app}-input"
        source.mkdir()
        pq.write_table(arrow_rows(rows), source / "rows.parquet")
        return lambda: zorder.write(
            str(source),
            self.path,
            by=BY,
            mode="append",
            num_files=2,
            engine="arrow",
            txn_app_id=app,
            txn_version=0,
        ), app

    def stream_batch(self) -> Callable[[], object]:
        """The next batch of the streaming query: a file for it, then wait for its txn."""
        source = self.root / f"{self.name}-stream-source"
        if self.query is None:
            source.mkdir(exist_ok=True)
            writer = zorder.foreach_batch(self.path, by=BY, num_files=2, app_id=self.stream_app)
            self.query = (
                self.spark.readStream.schema("id BIGINT, p INT, v BIGINT, a BIGINT, b BIGINT")
                .option("maxFilesPerTrigger", 1)
                .json(str(source))
                .writeStream.foreachBatch(writer)
                .option("checkpointLocation", str(self.root / f"{self.name}-checkpoint"))
                .trigger(processingTime="200 milliseconds")
                .start()
            )
        number = len(self.batches)
        rows = self.zorder_rows(30)
        self.batches.append(rows)
        query = self.query

        def batch() -> None:
            staged = source.parent / f".{self.name}-{number}.json"
            lines = [json.dumps(dict(zip(COLUMNS, r, strict=True))) for r in rows]
            staged.write_text("\n".join(lines))
            staged.rename(source / f"{number:05d}.json")
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline:
                recorded = DeltaTable(self.path).transaction_version(self.stream_app)
                if recorded is not None and recorded >= number:
                    return
                if query.exception() is not None:
                    raise query.exception()  # type: ignore[misc]
                time.sleep(0.1)
            raise AssertionError(f"the stream did not commit batch {number} in 180 s")

        return batch

    # --- one race -----------------------------------------------------------------------

    def race(self, delta_op: str, zorder_op: str, order: str) -> None:
        made = self.delta_command(delta_op)
        if zorder_op == "stream":
            run, app = self.stream_batch(), ""
        else:
            run, app = self.zorder_op(zorder_op)
        if order == "zorder-first" and made.op == "optimize":
            order = "free"  # Delta's OPTIMIZE has no job of ours to wait in
        answers: list[dict[str, Any]] = []
        if order == "delta-first":
            real = commit_files

            def commit(*args: Any, **kwargs: Any) -> int:
                if not answers:  # the first commit attempt only
                    self.send(made, pause=False)
                    answers.append(self.writer.answer(made.tag))
                return real(*args, **kwargs)

            with patch.object(runs_module, "commit_files", commit):
                zorder_ok, zorder_error, version = self.attempt(run)
            hooked = bool(answers)
            if not answers:  # zorder had nothing to commit: the Delta command runs after
                self.send(made, pause=False)
                answers.append(self.writer.answer(made.tag))
        else:
            hooked = False
            self.send(made, pause=order == "zorder-first")
            if order == "free":
                time.sleep(self.random.uniform(0, 2.5))
            zorder_ok, zorder_error, version = self.attempt(run)
            answers.append(self.writer.answer(made.tag))
        self.delta_outcome(made, order, answers[0])
        batch = len(self.batches) - 1 if zorder_op == "stream" else None
        self.pending.append(
            Outcome(
                f"zorder:{zorder_op}",
                order,
                self.name,
                zorder_ok,
                zorder_error,
                app=app,
                batch=batch,
            )
        )
        self.pairing = Pairing(order, made.tag, version, hooked=hooked)
        self.check()

    def attempt(self, run: Callable[[], object]) -> tuple[bool, str, int | None]:
        """Run zorder's operation: (succeeded, its conflict, the version it committed)."""
        try:
            result = run()
        except ConcurrentCommitError as error:
            return False, f"ConcurrentCommitError: {error}", None
        if isinstance(result, zorder.ClusterMetrics):
            return True, "", result.data_version or result.version
        return True, "", None

    def kill_delta(self, moment: str) -> None:
        """The Delta writer killed while its command waits (``paused``) or at a random moment,
        while zorder optimizes; the writer then starts again."""
        made = self.delta_command(self.random.choice(["update", "merge", "delete", "replace"]))
        run, _ = self.zorder_op("optimize")
        if moment == "paused":
            self.send(made, pause=True)
            zorder_ok, zorder_error, _ = self.attempt(run)
            self.writer.kill()
        else:
            self.send(made, pause=False)
            killer = threading.Timer(self.random.uniform(0.5, 4.0), self.writer.kill)
            killer.start()
            zorder_ok, zorder_error, _ = self.attempt(run)
            killer.join()
        self.writer.start()
        self.delta_outcome(made, f"kill-delta-{moment}", None)
        self.pending.append(
            Outcome("zorder:optimize", f"kill-delta-{moment}", self.name, zorder_ok, zorder_error)
        )
        self.check()

    def kill_zorder(self, op: str, moment: str) -> None:
        """zorder, in a process of its own, killed at ``moment`` while a Delta command runs."""
        app = ""
        if op == "append":
            app = f"race-{self.tag('zorder-killed-append')}"
            rows = self.zorder_rows(30)
            self.appends[app] = rows
            source = Path(f"{self.path}-input-{app}")
            source.mkdir()
            pq.write_table(arrow_rows(rows), source / "rows.parquet")
        child = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.spark.race_zorder_child",
                f"{op}:{app}" if app else op,
                self.path,
                moment,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
            cwd=Path(__file__).parents[2],
        )
        assert child.stdout is not None
        made = self.delta_command(self.random.choice(["update", "merge", "append", "delete"]))
        wait_for_line(child, "COMMITTING")
        if moment == "after-commit":
            wait_for_line(child, "COMMITTED")
        self.send(made, pause=False)
        if moment == "during-commit":
            time.sleep(self.random.uniform(0, 0.5))
        elif moment == "before-commit":
            time.sleep(1.0)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
        child.stdout.close()
        self.delta_outcome(made, f"kill-zorder-{moment}", self.writer.answer(made.tag))
        self.pending.append(
            Outcome(f"zorder:{op}", f"kill-zorder-{moment}", self.name, None, app=app)
        )
        self.check()

    # --- the check ----------------------------------------------------------------------

    def expected(self) -> tuple[Counter[Row], dict[str, tuple[int, int | None]], set[str]]:
        """The model's rows, from what the log records: (rows, the version and read version
        of each Delta command's commit by tag, zorder's app ids)."""
        table = DeltaTable(self.path)
        tagged = [
            (int(c["version"]), c["userMetadata"], c.get("readVersion"))
            for c in table.history()
            if c.get("userMetadata") in self.commands
        ]
        tags = [t for _, t, _ in sorted(tagged)]
        assert len(tags) == len(set(tags)), f"a Delta command committed twice: {tags}"
        rows: dict[int, Row] = {}
        for tag in tags:
            self.commands[tag].apply(rows)
        model = Counter(rows.values())
        apps = {a for a in self.appends if table.transaction_version(a) is not None}
        for app in apps:
            model.update(self.appends[app])
        batches = table.transaction_version(self.stream_app)
        for number in range(0 if batches is None else batches + 1):
            model.update(self.batches[number])
        self.live = set(rows)
        return model, {t: (v, r) for v, t, r in tagged}, apps

    def check(self) -> None:
        model, tags, apps = self.expected()
        self.tally.checks += 1
        batches = DeltaTable(self.path).transaction_version(self.stream_app)
        for outcome in self.pending:
            if outcome.tag:
                outcome.recorded = outcome.tag in tags
            elif outcome.app:
                outcome.recorded = outcome.app in apps
            elif outcome.batch is not None:
                outcome.recorded = batches is not None and batches >= outcome.batch
            else:
                outcome.recorded = bool(outcome.ok)  # optimize: no rows of its own to find
            self.judge(outcome)
            self.tally.outcomes.append(outcome)
        self.pending = []
        if self.pairing is not None:
            self.pairing.overlapped = overlapped(self.pairing, tags, self.tally.outcomes[-2:])
            self.tally.pairings.append(self.pairing)
            self.pairing = None
        delta_spark = Counter(
            tuple(r)
            for r in self.writer.run({"op": "read", "table": self.path, "tag": self.tag("read")})[
                "result"
            ]
        )
        duck = kernel_rows(self.kernel, self.path, COLUMNS)
        for reader, got in (("Delta Spark", delta_spark), ("DuckDB", duck)):
            if got != model:
                missing, extra = model - got, got - model
                self.tally.wrong.append(
                    f"{self.name} after {self.count} commands: {reader} read {sum(got.values())} "
                    f"rows, the model {sum(model.values())}; missing {sorted(missing)[:5]}, "
                    f"extra {sorted(extra)[:5]}"
                )
        if self.tally.wrong and self.tally.stop:
            raise AssertionError(f"{self.path}: {self.tally.wrong}")

    def judge(self, outcome: Outcome) -> None:
        where = f"{outcome.kind} ({outcome.order}, {outcome.table})"
        if (
            outcome.ok
            and not outcome.recorded
            and not outcome.nothing
            and outcome.kind.startswith("delta")
        ):
            self.tally.wrong.append(f"{where} answered success but the log does not record it")
        if (
            outcome.ok is True
            and not outcome.recorded
            and outcome.kind in ("zorder:append", "zorder:append-files", "zorder:stream")
        ):
            self.tally.wrong.append(f"{where} answered success but the log does not record it")
        if outcome.ok is False:
            if outcome.recorded:
                self.tally.wrong.append(f"{where} failed but the log records it: {outcome.error}")
            conflict = (
                outcome.error.startswith("ConcurrentCommitError")
                if outcome.kind.startswith("zorder")
                else bool(DELTA_CONFLICT.search(outcome.error.split(":")[0]))
            )
            if not conflict:
                self.tally.wrong.append(f"{where} failed with no clean conflict: {outcome.error}")

    def close(self) -> None:
        if self.query is not None:
            self.query.stop()


def overlapped(
    pairing: Pairing, commits: dict[str, tuple[int, int | None]], outcomes: list[Outcome]
) -> bool:
    """Whether the race's two transactions overlapped (see :class:`Pairing`)."""
    if pairing.hooked or any(o.ok is False for o in outcomes):
        return True  # inside zorder's commit, or a conflict: each saw the other
    version, read = commits.get(pairing.tag, (None, None))
    z = pairing.zorder_version
    return None not in (version, read, z) and read < z < version  # type: ignore[operator]


def arrow_rows(rows: list[Row]) -> pa.Table:
    schema = pa.schema(
        [
            ("id", pa.int64()),
            ("p", pa.int32()),
            ("v", pa.int64()),
            ("a", pa.int64()),
            ("b", pa.int64()),
        ]
    )
    return pa.Table.from_pylist([dict(zip(COLUMNS, r, strict=True)) for r in rows], schema=schema)


def wait_for_file(marker: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not marker.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"the Delta command never reached its pause ({marker})")
        time.sleep(0.05)


def wait_for_line(child: subprocess.Popen[str], wanted: str, timeout: float = 120) -> None:
    assert child.stdout is not None
    deadline = time.monotonic() + timeout
    for line in child.stdout:
        if line.strip() == wanted:
            return
        if time.monotonic() > deadline:
            break
    raise AssertionError(f"the zorder child never printed {wanted}")


def schedule(races: int) -> Iterator[tuple[str, str, str]]:
    """Delta commands, zorder operations and orders in turn: 12 races run every Delta
    command and zorder operation and every order 4 times; every zorder operation meets
    every order within 18, every pair of operations within 42."""
    for n in range(races):
        order = ORDERS[(n + n // len(ZORDER_OPS)) % len(ORDERS)]
        yield DELTA_OPS[n % len(DELTA_OPS)], ZORDER_OPS[n % len(ZORDER_OPS)], order


@contextlib.contextmanager
def racing(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, root: Path, seed: int
) -> Iterator[tuple[Tally, list[Race]]]:
    """A Delta writer and two tables (with and without deletion vectors) to race on."""
    tally = Tally()
    writer = DeltaWriter(root / "delta-writer.log")
    writer.start()
    tables: list[Race] = []
    try:
        for n, (name, vectors) in enumerate((("cow", False), ("dv", True))):
            tables.append(
                Race(
                    spark,
                    kernel,
                    writer,
                    root,
                    name,
                    deletion_vectors=vectors,
                    seed=seed + n,
                    tally=tally,
                )
            )
        yield tally, tables
    finally:
        for table in tables:
            table.close()
        writer.stop()


def run(
    spark: SparkSession,
    kernel: duckdb.DuckDBPyConnection,
    root: Path,
    *,
    races: int,
    kills: bool,
    seed: int = 0,
    stop: bool = False,
) -> Tally:
    started = time.monotonic()
    with racing(spark, kernel, root, seed) as (tally, tables):
        tally.stop = stop
        for n, (delta_op, zorder_op, order) in enumerate(schedule(races)):
            tables[n % 2].race(delta_op, zorder_op, order)
        if kills:
            for n, moment in enumerate(("paused", "random")):
                tables[n % 2].kill_delta(moment)
            for n, (op, moment) in enumerate(
                (op, moment) for op in ("append", "optimize") for moment in MOMENTS
            ):
                tables[n % 2].kill_zorder(op, moment)
    tally.seconds = time.monotonic() - started
    return tally


# --- the long run: make races ----------------------------------------------------------------

MARK_BEGIN = "<!-- races:begin -->"
MARK_END = "<!-- races:end -->"


def report(tally: Tally, command: str) -> str:
    by_kind: dict[str, Counter[str]] = {}
    for o in tally.outcomes:
        counts = by_kind.setdefault(o.kind, Counter())
        counts["ops"] += 1
        counts["ok" if o.ok else "killed" if o.ok is None else "conflict"] += 1
        counts["recorded"] += o.recorded
    orders = Counter(o.order for o in tally.outcomes)
    lines = [
        MARK_BEGIN,
        f"Measured by `{command}` ({time.strftime('%Y-%m-%d')}, {tally.seconds / 60:.1f} min): "
        f"**{tally.operations()} operations** in races, **{len(tally.wrong)} wrong** "
        f"(a row lost or doubled, a success the log lacks, a failure it records, or a failure "
        f"that is no clean conflict), over {tally.checks} reads of the table by Delta Spark and "
        "DuckDB against the model.",
        "",
        "| operation | ran | succeeded | failed on a conflict | killed | in the log |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for kind in sorted(by_kind):
        c = by_kind[kind]
        lines.append(
            f"| `{kind}` | {c['ops']} | {c['ok']} | {c['conflict']} | {c['killed']} | "
            f"{c['recorded']} |"
        )
    lines += ["", "| order asked | races | transactions overlapped |", "|---|---:|---:|"]
    for order in ORDERS:
        asked = [p for p in tally.pairings if p.order == order]
        lines.append(f"| {order} | {len(asked)} | {sum(p.overlapped for p in asked)} |")
    lines += [
        "",
        "Operations by order: " + ", ".join(f"{k} {v}" for k, v in sorted(orders.items())) + ".",
    ]
    if tally.wrong:
        lines += ["", "Wrong:", *[f"- {w}" for w in tally.wrong[:20]]]
    lines.append(MARK_END)
    return "\n".join(lines)


def main() -> None:
    import tempfile

    import pyspark

    from tests import delta_spark
    from tests.spark.helpers import connect_kernel
    from zorder.spark import local_session

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--operations", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--write-markdown", action="store_true")
    args = parser.parse_args()
    conf, coordinate, reason = delta_spark.session_conf(pyspark.__version__)
    if coordinate is None:
        raise SystemExit(f"the races need Delta Spark: {reason}")
    with delta_spark.resolving():
        spark = local_session(app_name="zorder-races", conf=conf)
    spark.sparkContext.setLogLevel("ERROR")
    kernel = connect_kernel()
    with tempfile.TemporaryDirectory(prefix="zorder-races-") as root:
        tally = run(
            spark, kernel, Path(root), races=(args.operations + 1) // 2, kills=True, seed=args.seed
        )
    command = f"python -m tests.spark.races --operations {args.operations}"
    text = report(tally, "make races" if args.write_markdown else command)
    print(text)
    if args.write_markdown:
        path = Path(__file__).parents[2] / "RELIABILITY.md"
        old = path.read_text()
        begin, end = old.index(MARK_BEGIN), old.index(MARK_END) + len(MARK_END)
        path.write_text(old[:begin] + text + old[end:])
    spark.stop()
    sys.exit(1 if tally.wrong else 0)


if __name__ == "__main__":
    main()
