"""The main operations on a Spark Connect session give what a classic session gives."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow.compute as pc
from deltalake import DeltaTable

ROOT = Path(__file__).resolve().parents[2]


def test_write_append_optimize_read_explain_over_connect(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-W",
            "error::UserWarning",
            "-m",
            "tests.spark.connect_child",
            str(tmp_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["write zorder"] == [4, 3_000]
    assert seen["write hilbert"] == [4, 3_000]
    assert seen["write linear"][1] == 3_000
    assert seen["append"] == [["a", "b"], 2]  # clustered by the table's spec
    assert seen["optimize"] == [6, 3]
    table = DeltaTable(str(tmp_path / "zorder")).to_pyarrow_table()
    assert table.num_rows == 6_000
    a, b, ids = table.column("a"), table.column("b"), table.column("id")
    expected = {
        "a = 17": pc.sum(pc.equal(a, 17)).as_py(),
        "a < 100 AND b > 500": pc.sum(pc.and_(pc.less(a, 100), pc.greater(b, 500))).as_py(),
        "id >= 10000 OR b IN (1, 2, 3)": pc.sum(
            pc.or_(pc.greater_equal(ids, 10_000), pc.is_in(b, pc.cast([1, 2, 3], b.type)))
        ).as_py(),
        "a IS NULL": 0,
    }
    assert seen["read"] == expected
    assert seen["column filter"] == expected["a = 17"]  # a Column, not SQL text
    assert 1 <= seen["explain"] < 3
    assert seen["explain column"] == [3, 3]
    assert seen["to_spark"] == expected["a = 17"]
    assert seen["describe"] == [DeltaTable(str(tmp_path / "zorder")).version(), 3]
    assert seen["version 0"] == 3_000  # as the first write left it
    days = DeltaTable(str(tmp_path / "days")).get_add_actions(flatten=True)
    assert seen["partitioned"] == days.num_rows
    assert Counter(days.column("partition.day").to_pylist()) == {"0": 2, "1": 2, "2": 2}
    assert seen["deletion vectors"] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert seen["purged"] == 8
    assert seen["column mapping"] == [
        "Anthony Johnson",
        "Mr. Daniel Ferguson MD",
        "Nathan Bennett",
        "Stephanie Mcgrath",
        "Timothy Lamb",
    ]
    # foreach_batch runs where Connect runs batches, keyed by the app id it was given.
    assert seen["stream"] == ["done", "refused"]
    streamed = DeltaTable(str(tmp_path / "stream"))
    assert streamed.to_pyarrow_table().num_rows == 200
    assert streamed.transaction_version("connect-loader") == 1
    assert not (tmp_path / "unnamed" / "_delta_log").exists()
    # The status line showed the tasks of the server's jobs, from its progress messages.
    assert "clustering and writing" in seen["progress"]
