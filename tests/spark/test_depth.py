"""Clustering depth through optimize: many unclustered files are deep, and optimize says how
much shallower it left them, as describe measures them afterwards."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake
from pyspark.sql import SparkSession
from typer.testing import CliRunner

import zorder
from zorder.cli import app

pytestmark = pytest.mark.spark


def scattered(path: str, files: int, *, partition: int | None = None) -> None:
    """``files`` appends of random rows: every file spans nearly the whole range."""
    rng = random.Random(files if partition is None else files + partition)
    for _ in range(files):
        rows = {"a": [rng.randrange(1000) for _ in range(40)]}
        rows["b"] = [rng.randrange(1000) for _ in range(40)]
        if partition is not None:
            rows["day"] = [partition] * 40
        by = None if partition is None else ["day"]
        write_deltalake(path, pa.table(rows), mode="append", partition_by=by)


def test_optimize_reports_the_depth_it_leaves(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    scattered(path, 12)
    read = zorder.describe(path, columns=["a", "b"]).depth
    assert all(d.average_depth > 10 for d in read)  # twelve files, all overlapping
    metrics = zorder.optimize(spark, path, by=["a", "b"], num_files=4)
    assert metrics.depth_before == read
    after = zorder.describe(path).depth
    assert metrics.depth_after == after  # from the footers, as the log then has them
    assert [d.column for d in after] == ["a", "b"]
    assert all(d.files == 4 and d.average_depth < 4 for d in after)
    assert sum(d.average_depth for d in after) < 6  # 2 x 2 cells: one column cut per file


def test_optimize_of_one_partition_from_the_command_line(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    for day in (1, 2):
        scattered(path, 6, partition=day)
    runner = CliRunner()
    args = ["optimize", path, "--by", "a,b", "--where", "day = 1", "--num-files", "2"]
    done = runner.invoke(app, [*args, "--json"])
    assert done.exit_code == 0, done.output
    metrics = json.loads(done.output)
    before = {d["column"]: d["average_depth"] for d in metrics["depth_before"]}
    after = {d["column"]: d["average_depth"] for d in metrics["depth_after"]}
    # Over the whole table: day 2's six files still overlap one another.
    assert before == {"a": 6.0, "b": 6.0}
    assert after == zorder.describe(path).average_depth
    assert all(4 <= after[c] < before[c] for c in after)  # (2 * d + 6 * 6) / 8, d <= 2
    again = runner.invoke(app, args, env={"COLUMNS": "100"})  # nothing left to do there
    assert again.exit_code == 0, again.output
    shown = f"{after['a']:.2f} → {after['a']:.2f}"
    assert "avg depth of a" in again.output
    assert shown in again.output
