"""A Spark standalone cluster: a master and a worker of their own, started from pyspark.

The executors' Python lacks zorder, NumPy and pyarrow (only pyspark is there,
as on a cluster where only the driver got ``pip install zorder``); the user's
own ``SparkSession.builder`` session, in a process of its own (this one holds
the suite's ``local[2]`` context), writes, optimizes, reads and vacuums.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.spark.standalone import (
    EXECUTOR_PYTHON_CANDIDATES,
    Standalone,
    executor_python,
    standalone_cluster,
)

pytestmark = [pytest.mark.spark, pytest.mark.compat]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Standalone]:
    """A master and one worker (1 core, 1 GB) on 127.0.0.1; both stopped by pid after."""
    if executor_python() is None:
        pytest.skip(
            f"no Python {sys.version_info.major}.{sys.version_info.minor} without zorder, NumPy "
            f"and pyarrow among {', '.join(EXECUTOR_PYTHON_CANDIDATES)} to run the executors"
        )
    root = tmp_path_factory.mktemp("standalone")
    with standalone_cluster(root) as running:
        yield running
        print(running.logs())  # shown by pytest when a test failed


def _job(cluster: Standalone, path: Path) -> dict[str, Any]:
    """``tests.spark.standalone_job`` in a process of its own, as a user runs a script."""
    job = ["-m", "tests.spark.standalone_job", cluster.url, cluster.python, str(path)]
    done = subprocess.run(
        [sys.executable, *job],
        cwd=ROOT,
        env=cluster.client_environment(),  # no PYTHONPATH: the executors must not see ours
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"{done.stderr[-4000:]}\n{cluster.logs()}"
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_every_step_on_a_standalone_cluster_whose_executors_lack_zorder(
    cluster: Standalone, tmp_path: Path
) -> None:
    result = _job(cluster, tmp_path)
    shared = result["shared"]
    assert result["master"] == cluster.url
    assert shared["executors"] == 1
    assert shared["files"] == [8, 6, 9]
    assert shared["rows"] == [100_000, 100_000]
    assert shared["none"] == 0
    assert shared["optimized"][0] >= 2  # two days' files rewritten, along another curve
    assert shared["matches"] == shared["expected_matches"] >= 1
    appended, merged, hilbert = result["files"]
    assert appended >= 1
    assert merged == 6 + appended  # a full optimize: the Hilbert optimize's files and the append's
    assert hilbert == 4
    flat, source = result["totals"]
    assert flat == source
    assert source[0] == 120_000
    assert result["parted_totals"][0] == result["parted_totals"][1] == result["hilbert_totals"]
    read, arrow, expected = result["matches"]
    assert read == arrow == expected >= 1
    scanned, total = result["scanned"]
    assert 1 <= scanned < total
    assert result["vacuumed"] == 8 + merged  # the files the optimizes replaced
    # The executor ran the Python it was given, which could import none of them:
    # no step above needed a Python worker with zorder or pyarrow.
    assert result["executor"] == [cluster.python, []]
    logs = list((cluster.root / "work").glob("app-*/*/stderr"))  # the worker's executor
    assert len(logs) == 1
    # A Python worker's run is logged as "PythonRunner: Times: ...": the probe's only.
    assert logs[0].read_text().count("PythonRunner: Times") == 1
