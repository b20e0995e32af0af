"""Planning an optimize: a frozen plan or a NothingToDo saying why, and nothing written
or committed by planning (zorder.api.cluster.plan_optimize); no JVM."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

import zorder
from zorder.api.cluster import NothingToDo, plan_optimize
from zorder.api.context import Context
from zorder.api.engines import RunWith
from zorder.api.jobs import ClusterOptions
from zorder.api.runs import RunPlan
from zorder.errors import InvalidArgumentError
from zorder.table import Storage, load_snapshot


def _planned(path: str, *, where: str | None = None, fanout: int = 4) -> RunPlan | NothingToDo:
    storage = Storage.of(path)
    run = RunWith(engine="arrow", context=Context.of(None))
    asked = ClusterOptions(by=["x", "y"])
    snapshot = load_snapshot(storage)
    return plan_optimize(storage, snapshot, asked, where=where, full=False, fanout=fanout, run=run)


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
