"""Tables Delta Spark and Databricks wrote (tests/data), read and written by zorder.

Whatever zorder cannot yet do exactly on such a table it refuses by name,
before a row is returned or a file written; what it does, other readers
(DuckDB's delta_scan, delta-rs) confirm.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

import zorder
from tests.spark.helpers import arrow_rows, kernel_rows, row_multiset
from zorder.errors import UnsupportedTableError

pytestmark = pytest.mark.spark

DATA = Path(__file__).resolve().parents[1] / "data"


def copy_of(name: str, tmp_path: Path) -> str:
    target = tmp_path / name
    shutil.copytree(DATA / name, target)
    return str(target)


def log_listing(path: str) -> dict[str, bytes]:
    root = Path(path)
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


COLUMN_MAPPED = ["table_with_column_mapping", "table_with_partitioning_mapping"]


def every_path(spark: SparkSession) -> dict[str, Callable[[str], Any]]:
    return {
        "to_arrow": lambda path: zorder.to_arrow(path),
        "read": lambda path: zorder.read(spark, path).collect(),
        "explain": lambda path: zorder.explain(path, "true"),
        "describe": lambda path: zorder.describe(path),
        "optimize": lambda path: zorder.optimize(spark, path, by=["Super Name"], full=True),
        "append": lambda path: zorder.write(
            zorder.read(spark, path).limit(1), path, mode="append", by=["Super Name"]
        ),
    }


@pytest.mark.parametrize("name", COLUMN_MAPPED)
@pytest.mark.parametrize(
    "operation", ["to_arrow", "read", "explain", "describe", "optimize", "append"]
)
def test_column_mapping_is_refused_on_every_path(
    spark: SparkSession, tmp_path: Path, name: str, operation: str
) -> None:
    # Reading physical names as logical ones gives all-NULL columns, and an optimize
    # would commit those NULLs: until mapping is supported, nothing may touch the table.
    path = copy_of(name, tmp_path)
    before = log_listing(path)
    with pytest.raises(UnsupportedTableError, match=r"columnMapping \(mode 'name'\)") as error:
        every_path(spark)[operation](path)
    assert path in str(error.value)
    assert "version" in str(error.value)
    assert log_listing(path) == before


def test_v2_checkpoint_table_reads_exactly_and_refuses_writes_by_name(
    spark: SparkSession, kernel: Any, tmp_path: Path
) -> None:
    # Delta Spark's v2 checkpoints with sidecar files, and an identity column, which
    # deltalake (zorder's committer) does not write to.
    path = copy_of("checkpoint-v2-table", tmp_path)
    columns = ["id", "name", "created_at"]
    expected = kernel_rows(kernel, path, columns)
    assert sum(expected.values()) == 44
    assert arrow_rows(zorder.to_arrow(path), columns) == expected
    assert row_multiset(zorder.read(spark, path).select(*columns).collect()) == expected
    before = log_listing(path)
    with pytest.raises(UnsupportedTableError, match="'id' is an identity column"):
        zorder.optimize(spark, path, by=["id", "created_at"], num_files=2)
    with pytest.raises(UnsupportedTableError, match="'id' is an identity column"):
        zorder.write(zorder.read(spark, path).limit(1), path, mode="append", by=["id"])
    assert log_listing(path) == before
