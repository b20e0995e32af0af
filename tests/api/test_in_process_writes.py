"""In-process writes that need no Spark to check: inputs left to Spark, hidden files,
empty inputs."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

import zorder
from zorder.api.context import Context
from zorder.api.sources import WriteSource, in_process_input
from zorder.errors import InvalidArgumentError


def test_inputs_only_spark_reads_right_are_left_to_it(tmp_path: Path) -> None:
    csv = tmp_path / "in.csv"
    csv.write_text("a,b\n1,x\n2,y\n")
    assert "CSV" in str(in_process_input(WriteSource(str(csv)), Context()).declined)
    unsigned = tmp_path / "u.parquet"
    pq.write_table(pa.table({"a": pa.array([1, 2], pa.uint32())}), unsigned)
    assert "uint32" in str(in_process_input(WriteSource(str(unsigned)), Context()).declined)
    nanos = tmp_path / "n.parquet"
    pq.write_table(
        pa.table({"t": pa.array([1, 2], pa.timestamp("ns"))}), nanos, coerce_timestamps=None
    )
    assert in_process_input(WriteSource(str(nanos)), Context()).declined is not None
    hive = tmp_path / "hive" / "day=1"
    hive.mkdir(parents=True)
    pq.write_table(pa.table({"a": [1]}), hive / "part.parquet")
    assert "hive" in str(in_process_input(WriteSource(str(tmp_path / "hive")), Context()).declined)
    with pytest.raises(InvalidArgumentError, match=r"engine='arrow' cannot run.*CSV"):
        zorder.write(str(csv), str(tmp_path / "t"), by=["a"], engine="arrow")
    assert not (tmp_path / "t").exists()


def test_hidden_files_of_an_input_are_not_read(tmp_path: Path) -> None:
    """As Spark lists a directory: parts starting with _ or . and files being copied are
    not the input's (a failed job's _temporary/ copies would double rows)."""
    source = tmp_path / "in"
    rows = pa.table({"a": list(range(100)), "b": [i % 7 for i in range(100)]})
    for place in ("part-0.parquet", "_temporary/0/part-0.parquet", ".hidden/part-0.parquet"):
        (source / place).parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(rows, source / place)
    pq.write_table(rows, source / "part-1.parquet._COPYING_")
    written = zorder.write(str(source), str(tmp_path / "t"), by=["a", "b"], num_files=2)
    assert written.engine == "arrow"
    assert written.rows == 100
    assert DeltaTable(str(tmp_path / "t")).to_pyarrow_table().num_rows == 100


def test_an_empty_input_makes_an_empty_table(tmp_path: Path) -> None:
    source = tmp_path / "empty.parquet"
    pq.write_table(
        pa.table({"a": pa.array([], pa.int64()), "b": pa.array([], pa.string())}), source
    )
    written = zorder.write(str(source), str(tmp_path / "t"), by=["a", "b"], num_files=2)
    assert (written.engine, written.rows, written.files_added) == ("arrow", 0, 0)
    table = DeltaTable(str(tmp_path / "t"))
    assert table.to_pyarrow_table().num_rows == 0
    assert [f.name for f in table.schema().fields] == ["a", "b"]
