"""The worker daemon skips pyspark's per-task cache invalidation only while nothing changed."""

from __future__ import annotations

import importlib
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from zorder import worker_daemon as worker


@pytest.fixture
def probe_module(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    name = f"zorder_probe_{uuid.uuid4().hex}"
    path = tmp_path / f"{name}.py"
    path.write_text("VALUE = 42\n")
    yield name, path
    sys.modules.pop(name, None)


@pytest.mark.spark
def test_local_workers_run_through_the_daemon_and_still_see_new_files(
    spark: SparkSession, probe_module: tuple[str, Path]
) -> None:
    def importlib_kind(_: object) -> Iterator[str]:
        from pyspark import worker_util

        yield type(vars(worker_util)["importlib"]).__name__

    kinds = set(spark.sparkContext.parallelize(range(4), 2).mapPartitions(importlib_kind).collect())
    assert kinds == ({"_InvalidateOnPathChanges"} if worker.NEEDED else {"module"})

    # A module shipped after the workers started is importable in the next tasks.
    name, path = probe_module
    spark.sparkContext.addPyFile(str(path))

    def probe(_: object) -> Iterator[int]:
        yield importlib.import_module(name).VALUE

    assert spark.sparkContext.parallelize(range(4), 2).mapPartitions(probe).collect() == [42, 42]
