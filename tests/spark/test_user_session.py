"""Every public call in a session the user built, in a process of its own.

The child (:mod:`tests.spark.user_session_job`) builds its session with a plain
``SparkSession.builder``: Spark's own defaults (ANSI mode off on 3.5, on from
4.0; no session time zone), nothing from ``zorder.spark.local_session``. Each
call must give Spark's rows, and the process must exit with status 0.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.compat

ROOT = Path(__file__).resolve().parents[2]
CALLS = (
    "write",
    "append",
    "optimize",
    "read",
    "to_arrow",
    "explain",
    "hilbert",
    "partitioned",
    "optimize_where",
    "advise",
    "vacuum",
)


def test_every_public_call_in_a_users_own_session(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.spark.user_session_job", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "terminate called" not in done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    for call in CALLS:
        got, expected = result[call]
        assert got == expected, (call, result)
    assert result["read"][0] > 0
