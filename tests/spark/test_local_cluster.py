"""A real multi-process cluster: separate executor JVMs, nothing shared with the driver."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]


def _job(module: str, path: Path) -> dict[str, Any]:
    """Run ``tests.spark.<module> PATH`` in a process of its own; its JSON line."""
    done = subprocess.run(
        [sys.executable, "-m", f"tests.spark.{module}", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_write_optimize_read_on_local_cluster(tmp_path: Path) -> None:
    result = _job("cluster_job", tmp_path / "conns")
    assert result["executors"] == 2
    assert (result["written_files"], result["optimized_files"]) == (8, 6)
    assert result["rows"] == 20_000
    assert result["matches"] == result["expected_matches"] >= 1
    assert result["files_scanned"] < 6


def test_executors_that_cannot_start_python_still_cluster(tmp_path: Path) -> None:
    """Rank keys in a classic session need nothing of Python on the executors (issue 35)."""
    result = _job("jvm_only_job", tmp_path)
    assert result["executors"] == 2
    assert result["files"] == [8, 6, 9]
    assert result["rows"] == [20_000, 20_000]
    assert result["none"] == 0
    assert result["optimized"][0] >= 2  # two days' files rewritten, along another curve
    assert result["matches"] == result["expected_matches"] >= 1
