"""Planning an optimize or a write: a frozen plan or a NothingToDo saying why, and nothing
written or committed by planning (zorder.api.cluster.plan_optimize, plan_write); no JVM."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake

import zorder
from zorder.api.cluster import NothingToDo, RunWith, plan_optimize, plan_write
from zorder.api.context import Context
from zorder.api.sources import WriteSource
from zorder.errors import InvalidArgumentError, SchemaMismatchError
from zorder.plan.jobs import ClusterOptions, OptimizeRequest, WriteRequest
from zorder.plan.modes import WriteMode
from zorder.plan.runs import InProcessInput, RunPlan
from zorder.table import Storage, load_snapshot
from zorder.table.delta.transactions import AppTransaction


def _planned(path: str, *, where: str | None = None, fanout: int = 4) -> RunPlan | NothingToDo:
    storage = Storage.of(path)
    run = RunWith(engine="arrow", context=Context.of(None))
    asked = ClusterOptions(by=["x", "y"])
    snapshot = load_snapshot(storage)
    request = OptimizeRequest(
        storage=storage, snapshot=snapshot, asked=asked, where=where, full=False, fanout=fanout
    )
    return plan_optimize(request, run=run)


def _entries(path: str) -> list[str]:
    return sorted(p.name for p in Path(path).iterdir())


def test_a_plan_names_the_files_to_rewrite_and_the_engine_and_writes_nothing(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "t")
    for part in range(3):
        rows = pa.table({"x": [part, part + 10], "y": [5 - part, part], "p": [part % 2] * 2})
        write_deltalake(path, rows, mode="append", partition_by=["p"])
    before = _entries(path)
    planned = _planned(path)
    assert isinstance(planned, RunPlan)
    every = load_snapshot(Storage.of(path)).files
    assert len(every) == 3
    assert {f.path for f in planned.read} == {f.path for f in every}
    assert planned.job.chosen_engine.engine == "arrow"
    assert planned.job.partition_by == ("p",)
    with pytest.raises(dataclasses.FrozenInstanceError):
        planned.read = ()  # type: ignore[misc]
    # Planning wrote no directory and committed nothing.
    assert _entries(path) == before
    assert DeltaTable(path).version() == 2
    chosen = _planned(path, where="p = 1")
    assert isinstance(chosen, RunPlan)
    assert {f.partition for f in chosen.read} == {(1,)}


def test_nothing_to_do_says_why_and_the_optimize_records_only_its_properties(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"x": list(range(40)), "y": list(range(40, 0, -1))}))
    zorder.optimize(None, path, by=["x", "y"], engine="arrow")
    version = DeltaTable(path).version()
    planned = _planned(path)
    assert isinstance(planned, NothingToDo)
    assert "nothing to optimize" in planned.why
    assert "clustered by" in planned.why
    metrics = zorder.optimize(None, path, by=["x", "y"], engine="arrow")
    assert metrics.notes == (planned.why,)
    assert DeltaTable(path).version() == version  # the properties were recorded already


def test_bad_input_is_refused_before_anything_is_planned(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"x": [1], "y": [2]}))
    with pytest.raises(InvalidArgumentError, match="fanout"):
        _planned(path, fanout=1)
    with pytest.raises(InvalidArgumentError, match="partition"):
        _planned(path, where="x = 1")  # an unpartitioned table has no partitions to choose


def _planned_write(
    source: str, path: str, *, mode: WriteMode = "append", **options: object
) -> RunPlan | NothingToDo:
    storage = Storage.of(path)
    snapshot = load_snapshot(storage) if Path(path, "_delta_log").exists() else None
    transaction = AppTransaction.of(options.pop("txn_app_id", None), options.pop("txn", None))
    request = WriteRequest(
        storage=storage,
        snapshot=snapshot,
        asked=ClusterOptions(**options),  # type: ignore[arg-type]
        mode=mode,
        transaction=transaction,
    )
    return plan_write(
        WriteSource(source), request, run=RunWith(engine="arrow", context=Context.of(None))
    )


def test_a_write_plan_holds_its_rows_and_engine_and_writes_nothing(tmp_path: Path) -> None:
    """Planning a write reads the input's metadata only: no table is created, no column
    added (schema_mode="merge" adds them when the plan runs), nothing committed."""
    source = str(tmp_path / "in.parquet")
    pq.write_table(pa.table({"x": [3, 1, 2], "y": [1, 2, 3], "z": [0.5, 1.5, 2.5]}), source)
    path = str(tmp_path / "t")
    planned = _planned_write(source, path, by=["x", "y"])
    assert isinstance(planned, RunPlan)
    assert planned.job.chosen_engine.engine == "arrow"
    assert isinstance(planned.rows, InProcessInput)
    assert planned.rows.work is not None
    assert planned.rows.work.rows == 3
    assert not Path(path).exists()  # no table made by planning

    write_deltalake(path, pa.table({"x": [9], "y": [8]}))
    merged = _planned_write(source, path, by=["x", "y"], schema_mode="merge")
    assert isinstance(merged, RunPlan)
    assert merged.job.evolution is not None
    assert merged.job.evolution.filled == ()
    assert merged.job.evolution.added is not None
    assert '"z"' in merged.job.evolution.added
    assert DeltaTable(path).version() == 0  # the column is added when the plan runs
    assert DeltaTable(path).schema().to_arrow().names == ["x", "y"]
    with pytest.raises(SchemaMismatchError, match="'z' is not in the table"):
        _planned_write(source, path, by=["x", "y"])


def test_a_write_the_table_records_already_is_nothing_to_do(tmp_path: Path) -> None:
    source = str(tmp_path / "in.parquet")
    pq.write_table(pa.table({"x": [3, 1, 2], "y": [1, 2, 3]}), source)
    path = str(tmp_path / "t")
    done = zorder.write(
        source, path, by=["x", "y"], engine="arrow", txn_app_id="app", txn_version=4
    )
    assert not done.skipped
    committed = DeltaTable(path).version()
    for version in (4, 3):
        planned = _planned_write(source, path, by=["x", "y"], txn_app_id="app", txn=version)
        assert isinstance(planned, NothingToDo)
        assert "'app'" in planned.why
        assert f"version {version}" in planned.why
    assert isinstance(_planned_write(source, path, txn_app_id="app", txn=5), RunPlan)
    again = zorder.write(
        source, path, mode="append", engine="arrow", txn_app_id="app", txn_version=4
    )
    assert again.skipped
    assert DeltaTable(path).version() == committed
