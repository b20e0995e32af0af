"""Delta Spark writers racing zorder: a short run of tests/spark/races.py.

12 races (every Delta command, every zorder operation, every order) and 8
kills (the Delta writer while its command waits and at a random moment;
zorder's append and optimize before, during and after their commits). The
long run is ``make races`` (200 operations), whose figures RELIABILITY.md gives.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.spark import races

pytestmark = pytest.mark.spark


def test_delta_spark_writers_racing_zorder_lose_and_double_no_row(
    delta: Any, kernel: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    # 9 races: every Delta and zorder operation, each order three times (make races: 200).
    tally = races.run(delta, kernel, tmp_path, races=9, kills=True)
    assert tally.wrong == []
    kinds = {o.kind for o in tally.outcomes}
    assert kinds >= {f"delta:{op}" for op in races.DELTA_OPS}
    assert kinds >= {f"zorder:{op}" for op in races.ZORDER_OPS}
    # Every order was asked for. The two that force an overlap showed one at least once; a
    # free race overlaps by chance (about a quarter of make races' free races, RELIABILITY.md),
    # so on a slow machine none of the short run's few may.
    assert {p.order for p in tally.pairings} >= set(races.ORDERS)
    for order in ("delta-first", "zorder-first"):
        assert any(p.overlapped for p in tally.pairings if p.order == order), order
    # Every operation that answered was either recorded or failed on a clean conflict.
    answered = [o for o in tally.outcomes if o.ok is not None and not o.nothing]
    assert all(o.recorded == o.ok for o in answered)
