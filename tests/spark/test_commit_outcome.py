"""A failure after a commit never deletes what the commit references; one before it leaves
the table exactly as it was and no run directory behind.

Each kind of commit (a write that creates the table, an append, an overwrite,
an optimize, a purge of a partition whose rows are all deleted, a properties
commit) is made for real by deltalake; the step around it is made to raise:

- ``inside``: deltalake's call commits, then raises (a post-commit step or a
  storage error after the log entry was written), as an error or as Ctrl-C;
- ``before``: deltalake's call raises before it commits;
- ``after``: the step after the commit (reading its version back, recording
  the table's properties) raises.

Then every file the log references must exist, and deltalake, DuckDB's
``delta_scan`` and ``zorder.to_arrow`` read the same rows. An optimize's files are
written by either engine (Spark, or this process), then committed by the path both
share (:mod:`zorder.plan.runs`): each kind of optimize is made by each.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import duckdb
import pyarrow as pa
import pytest
from deltalake import DeltaTable, TableFeatures, write_deltalake
from deltalake.table import TableAlterer
from pyspark.sql import SparkSession

import zorder
import zorder.plan.runs as runs_module
import zorder.table.delta.commit as commit_module
from tests.delta_writer import delete_rows, live_adds
from tests.spark.helpers import arrow_rows, delta_rs_rows, kernel_rows
from zorder.plan.modes import Engine, WriteMode

pytestmark = pytest.mark.spark

COLUMNS = ["a", "b", "day"]
Rows = Counter[tuple[Any, ...]]


def rows(start: int, count: int, day: str = "keep") -> pa.Table:
    ids = range(start, start + count)
    return pa.table(
        {
            "a": pa.array([i * 7919 % 1000 for i in ids], pa.int64()),
            "b": pa.array([i % 97 for i in ids], pa.int64()),
            "day": pa.array([day] * count),
        }
    )


def counted(table: pa.Table) -> Rows:
    return arrow_rows(table, COLUMNS)


def referenced(path: str) -> set[str]:
    """The data files the newest version references, decoded, relative to the table."""
    return {unquote(p) for p in live_adds(Path(path))}


def run_directories(path: str) -> set[str]:
    return {p.name for p in Path(path).glob("zorder-*")}


def assert_readable(path: str, expected: Rows, kernel: duckdb.DuckDBPyConnection) -> None:
    """Every file the log references exists, and three readers read ``expected``."""
    missing = sorted(p for p in referenced(path) if not (Path(path) / p).is_file())
    assert not missing, f"the log references files storage lacks: {missing}"
    assert kernel_rows(kernel, path, COLUMNS) == expected
    assert delta_rs_rows(path, COLUMNS) == expected
    assert counted(zorder.to_arrow(path)) == expected


@dataclass(frozen=True)
class Kind:
    """One kind of commit: the table before it, the run that makes it, the rows after it."""

    name: str
    prepare: Callable[[str], Rows]  # makes the table at a path; its rows
    run: Callable[[SparkSession, str], object]
    after: Callable[[Rows], Rows]  # the rows once committed, from the rows before


def _new(path: str) -> Rows:
    return Counter()


def _appended(path: str) -> Rows:
    for start in range(0, 2_000, 1_000):  # two files, neither clustered
        write_deltalake(path, rows(start, 1_000), mode="append")
    return counted(rows(0, 2_000))


def _with_a_deleted_partition(path: str) -> Rows:
    """Partitioned by day; every row of day 'gone' deleted by a deletion vector."""
    write_deltalake(path, rows(0, 1_500), partition_by=["day"], mode="append")
    write_deltalake(path, rows(1_500, 500, "gone"), partition_by=["day"], mode="append")
    DeltaTable(path).alter.add_feature(
        TableFeatures.DeletionVectors, allow_protocol_versions_increase=True
    )
    (gone,) = [p for p, add in live_adds(Path(path)).items() if "day=gone" in p]
    delete_rows(path, gone, range(500))
    return counted(rows(0, 1_500))


NEW = rows(10_000, 2_000)


def _write(mode: WriteMode) -> Callable[[SparkSession, str], object]:
    def run(spark: SparkSession, path: str) -> object:
        df = spark.createDataFrame(NEW.to_pylist(), "a bigint, b bigint, day string")
        return zorder.write(df, path, by=["a", "b"], mode=mode, num_files=2)

    return run


ENGINES: tuple[Engine, ...] = ("spark", "arrow")


def _optimize(engine: Engine) -> Callable[[SparkSession, str], object]:
    def run(spark: SparkSession, path: str) -> object:
        return zorder.optimize(spark, path, by=["a", "b"], num_files=2, engine=engine)

    return run


def _unchanged(before: Rows) -> Rows:
    return before


def _purge(engine: Engine) -> Callable[[SparkSession, str], object]:
    def run(spark: SparkSession, path: str) -> object:
        return zorder.optimize(spark, path, by=["a"], where="day = 'gone'", engine=engine)

    return run


KINDS = {
    kind.name: kind
    for kind in [
        Kind("create", _new, _write("error"), lambda before: counted(NEW)),
        Kind("append", _appended, _write("append"), lambda before: before + counted(NEW)),
        Kind("overwrite", _appended, _write("overwrite"), lambda before: counted(NEW)),
        *(Kind(f"optimize-{e}", _appended, _optimize(e), _unchanged) for e in ENGINES),
        *(Kind(f"purge-{e}", _with_a_deleted_partition, _purge(e), _unchanged) for e in ENGINES),
    ]
}


def deltalake_commit(kind: str) -> tuple[Any, str]:
    """The deltalake function that makes ``kind``'s commit: (owner, attribute)."""
    if kind == "create":
        return commit_module, "create_table_with_add_actions"
    return DeltaTable, "create_write_transaction"


def raising(
    monkeypatch: pytest.MonkeyPatch,
    owner: Any,
    name: str,
    error: BaseException,
    *,
    commit_first: bool,
) -> list[int]:
    """Make ``owner.name`` raise ``error``, after doing its work when ``commit_first``;
    returns the list its calls are counted in."""
    real = getattr(owner, name)
    calls: list[int] = []

    def call(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if commit_first:
            real(*args, **kwargs)
        raise error

    monkeypatch.setattr(owner, name, call)
    return calls


ERRORS: dict[str, Callable[[], BaseException]] = {
    "error": lambda: OSError("connection reset by peer (injected)"),
    "interrupt": KeyboardInterrupt,
}


@pytest.mark.parametrize("error", ERRORS)
@pytest.mark.parametrize("kind", KINDS)
def test_a_failure_inside_deltalakes_call_after_it_committed_keeps_the_commit(
    spark: SparkSession,
    kernel: duckdb.DuckDBPyConnection,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    kind: str,
    error: str,
) -> None:
    path = str(tmp_path / "t")
    case = KINDS[kind]
    before = case.prepare(path)
    version = -1 if kind == "create" else DeltaTable(path).version()
    calls = raising(monkeypatch, *deltalake_commit(kind), ERRORS[error](), commit_first=True)
    if error == "interrupt":
        with pytest.raises(KeyboardInterrupt):
            case.run(spark, path)
    else:
        with caplog.at_level(logging.WARNING, logger="zorder.table.delta.outcome"):
            metrics = case.run(spark, path)
        # The log holds the commit: the run stands, as after a commit without the error.
        assert getattr(metrics, "data_version", None) == version + 1
        assert "the commit stands" in caplog.text
    assert calls == [1]
    monkeypatch.undo()
    assert DeltaTable(path).version() >= version + 1
    assert_readable(path, case.after(before), kernel)
    if kind.startswith("purge"):
        assert not any("day=gone" in p for p in referenced(path))
    else:
        assert any(p.startswith("zorder-") for p in referenced(path))


@pytest.mark.parametrize("error", ERRORS)
@pytest.mark.parametrize("kind", KINDS)
def test_a_failure_before_the_commit_leaves_the_table_as_it_was(
    spark: SparkSession,
    kernel: duckdb.DuckDBPyConnection,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    error: str,
) -> None:
    path = str(tmp_path / "t")
    case = KINDS[kind]
    before = case.prepare(path)
    log_before = sorted(p.name for p in (Path(path) / "_delta_log").glob("*"))
    files_before = referenced(path) if log_before else set()
    calls = raising(monkeypatch, *deltalake_commit(kind), ERRORS[error](), commit_first=False)
    with pytest.raises(type(ERRORS[error]())):
        case.run(spark, path)
    assert calls == [1]
    monkeypatch.undo()
    assert run_directories(path) == set()  # the run's files are gone, the table never had any
    assert sorted(p.name for p in (Path(path) / "_delta_log").glob("*")) == log_before
    if kind == "create":
        assert not DeltaTable.is_deltatable(path)
        return
    assert referenced(path) == files_before
    assert_readable(path, before, kernel)


@pytest.mark.parametrize("error", ERRORS)
@pytest.mark.parametrize("kind", ["create", "optimize-spark", "optimize-arrow"])
def test_a_failure_after_the_commit_keeps_the_commit(
    spark: SparkSession,
    kernel: duckdb.DuckDBPyConnection,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    error: str,
) -> None:
    """The step after the data commit (recording the table's properties) raises."""
    path = str(tmp_path / "t")
    case = KINDS[kind]
    before = case.prepare(path)
    raising(monkeypatch, runs_module, "record_properties", ERRORS[error](), commit_first=False)
    with pytest.raises(type(ERRORS[error]())) as raised:
        case.run(spark, path)
    monkeypatch.undo()
    assert_readable(path, case.after(before), kernel)
    if error == "error":  # the error says the commit was made
        assert any("committed before this error" in note for note in raised.value.__notes__)


def test_a_failure_reading_back_the_version_keeps_the_commit(
    spark: SparkSession,
    kernel: duckdb.DuckDBPyConnection,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = str(tmp_path / "t")
    case = KINDS["append"]
    before = case.prepare(path)
    timeout = OSError("timeout")
    raising(monkeypatch, commit_module, "_committed_version", timeout, commit_first=False)
    with pytest.raises(OSError, match="timeout"):
        case.run(spark, path)
    monkeypatch.undo()
    assert DeltaTable(path).version() == 2  # the two appends, then this one's commit
    assert_readable(path, case.after(before), kernel)


@pytest.mark.parametrize("error", ERRORS)
@pytest.mark.parametrize("commit_first", [True, False], ids=["inside", "before"])
def test_a_failing_properties_commit_keeps_the_data_commit(
    spark: SparkSession,
    kernel: duckdb.DuckDBPyConnection,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    error: str,
    commit_first: bool,
) -> None:
    path = str(tmp_path / "t")
    case = KINDS["create"]
    injected = ERRORS[error]()
    calls = raising(
        monkeypatch, TableAlterer, "set_table_properties", injected, commit_first=commit_first
    )
    if commit_first and error == "error":
        metrics = case.run(spark, path)  # the properties commit stands: the write succeeded
        assert getattr(metrics, "data_version", None) == 0
        assert getattr(metrics, "version", None) == 1  # the table's, after the properties
    else:
        with pytest.raises(type(ERRORS[error]())):
            case.run(spark, path)
    assert calls == [1]
    monkeypatch.undo()
    table = DeltaTable(path)
    assert table.version() == (1 if commit_first else 0)
    recorded = table.metadata().configuration.get("zorder.clustering.columns")
    assert (json.loads(recorded) if recorded else None) == (["a", "b"] if commit_first else None)
    assert_readable(path, case.after(Counter()), kernel)


def test_an_exception_after_the_properties_commit_keeps_everything(
    spark: SparkSession,
    kernel: duckdb.DuckDBPyConnection,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = str(tmp_path / "t")
    raising(monkeypatch, runs_module, "run_metrics", KeyboardInterrupt(), commit_first=False)
    with pytest.raises(KeyboardInterrupt):
        KINDS["create"].run(spark, path)
    monkeypatch.undo()
    assert DeltaTable(path).version() == 1  # the data, then the properties
    assert_readable(path, counted(NEW), kernel)
