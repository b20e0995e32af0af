"""CHAR(n) columns: Spark stores their values padded and pads what they are compared with.

Delta records such a column as ``string``, with Spark's declared type in the
field's metadata. zorder reproduces no padding, so no statistic or bloom
filter may rule a file out on one: ``c = 'a'`` matches the stored ``'a  '``
in Spark, and the file's bounds (``'a  '``) and any bloom filter (of
``'a  '``) would both say otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake

import zorder
from tests.delta_writer import _commit_metadata, _latest_metadata
from zorder.errors import UnsupportedFilterError


def char_table(path: Path) -> None:
    """One file of CHAR(3) values as Spark writes them (padded), the type in the metadata."""
    write_deltalake(path, pa.table({"c": ["a  ", "bb ", "ccc"], "n": [1, 2, 3]}))
    log = path / "_delta_log"
    metadata = _latest_metadata(log)
    schema = json.loads(metadata["schemaString"])
    schema["fields"][0]["metadata"] = {"__CHAR_VARCHAR_TYPE_STRING": "char(3)"}
    _commit_metadata(log, metadata | {"schemaString": json.dumps(schema)}, "ALTER TABLE")


def test_a_char_column_never_rules_a_file_out(tmp_path: Path) -> None:
    path = tmp_path / "t"
    char_table(path)
    table = zorder.Table(str(path))
    assert table.snapshot().table_snapshot.schema.column_types["c"] == "char(3)"
    for where in ("c = 'a'", "c IN ('a', 'x')", "c < 'a'", "c = 'a' AND n = 1"):
        assert zorder.explain(str(path), where).files_scanned == 1, where
    assert zorder.explain(str(path), "n = 7").files_scanned == 0  # other columns still skip


def test_to_arrow_refuses_a_comparison_it_cannot_pad(tmp_path: Path) -> None:
    path = tmp_path / "t"
    char_table(path)
    with pytest.raises(UnsupportedFilterError):
        zorder.to_arrow(str(path), "c = 'a'")
    assert zorder.to_arrow(str(path), "n = 1").column("c").to_pylist() == ["a  "]
