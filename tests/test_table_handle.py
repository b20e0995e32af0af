"""zorder.Table without a JVM: a delta-rs table and one Delta Spark wrote, opened once."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake

import zorder
from zorder.errors import InvalidArgumentError

DATA = Path(__file__).parent / "data"


def test_a_handle_reads_a_delta_rs_table_in_process(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"x": list(range(10)), "s": [f"v{i}" for i in range(10)]}))
    write_deltalake(path, pa.table({"x": [10, 11], "s": ["v10", "v11"]}), mode="append")
    table = zorder.Table(path)
    assert repr(table) == f"Table({table.uri!r})"
    assert table.version == 1
    assert [c.version for c in table.history()] == [1, 0]
    assert all(c.clustering is None and c.timestamp is not None for c in table.history())
    assert sorted(table.scan("x >= 5").to_arrow().column("x").to_pylist()) == list(range(5, 12))
    assert table.scan(version=0).to_arrow().num_rows == 10
    assert len(table.stats()) == 2
    assert table.describe().spec is None
    with pytest.raises(InvalidArgumentError, match="non-empty string"):
        zorder.Table("")


def test_a_handle_reads_a_table_delta_spark_wrote() -> None:
    table = zorder.Table(str(DATA / "table-without-dv-small"))
    assert table.history()[0].operation
    assert table.scan().to_arrow().num_rows == table.snapshot().total_rows
