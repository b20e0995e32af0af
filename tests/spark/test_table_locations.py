"""Table locations with characters clients might read differently: written, appended,
optimized and read back alike by deltalake, DuckDB's delta_scan, zorder.to_arrow and Spark;
or, where deltalake would open another place than Spark writes, refused before anything is
written."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pytest
from deltalake import DeltaTable
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from typer.testing import CliRunner

import zorder
from tests.spark.helpers import arrow_rows, delta_rs_rows, kernel_rows, row_multiset
from zorder.cli import app
from zorder.errors import InvalidArgumentError

pytestmark = pytest.mark.spark
runner = CliRunner()

COLUMNS = ["a", "b"]


def frame(spark: SparkSession, start: int, count: int) -> DataFrame:
    return spark.range(start, start + count).select(
        (F.col("id") * 7919 % 1000).alias("a"), (F.col("id") % 97).alias("b")
    )


def expected(*ranges: tuple[int, int]) -> Counter[tuple[Any, ...]]:
    return Counter(
        (i * 7919 % 1000, i % 97) for start, count in ranges for i in range(start, start + count)
    )


def assert_reads(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, path: str, rows: Counter[Any]
) -> None:
    # DuckDB's delta extension (1.5.5) drops a non-ASCII last character of a plain path's
    # root from the files' paths ('café' reads 'caf/part-...'); its URI reads right.
    assert kernel_rows(kernel, Path(path).as_uri(), COLUMNS) == rows
    if path[-1].isascii():
        assert kernel_rows(kernel, path, COLUMNS) == rows
    assert delta_rs_rows(path, COLUMNS) == rows
    assert arrow_rows(zorder.to_arrow(path), COLUMNS) == rows
    some = Counter({row: n for row, n in rows.items() if row[0] < 100})
    assert arrow_rows(zorder.to_arrow(path, "a < 100"), COLUMNS) == some  # DuckDB's prefilter
    assert row_multiset(zorder.read(spark, path, "a < 100").select(*COLUMNS).collect()) == some


@pytest.mark.parametrize("name", ["with space", "hash#x", "q?x", "naïve café", "star*x", "br{a,b}"])
def test_a_location_every_client_reads_alike_works_end_to_end(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path, name: str
) -> None:
    path = str(tmp_path / "tables" / name)
    zorder.write(frame(spark, 0, 1_500), path, by=COLUMNS, num_files=3)
    # Neighbours a glob pattern would take for the table (its copy, as a glob matches it)
    # or fail on (Hadoop cannot list a name with a colon as a relative path).
    if "?" in name or "*" in name:
        shutil.copytree(path, tmp_path / "tables" / name.replace("?", "A").replace("*", "A"))
    (tmp_path / "tables" / "c:x").mkdir()
    assert_reads(spark, kernel, path, expected((0, 1_500)))
    zorder.write(frame(spark, 5_000, 500), path, mode="append", num_files=1)
    zorder.optimize(spark, path, full=True, num_files=2)
    assert_reads(spark, kernel, path, expected((0, 1_500), (5_000, 500)))
    # The write and its properties, the append and the optimize (whose one-off num_files
    # records no size: set_target_size=False).
    assert DeltaTable(path).version() == 3


@pytest.mark.parametrize("name", ["with space", "naïve café"])
def test_a_file_uri_names_the_same_table_as_its_path(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path, name: str
) -> None:
    path = str(tmp_path / name)
    metrics = zorder.write(frame(spark, 0, 1_000), f"file://{path}", by=COLUMNS, num_files=2)
    assert metrics.table_uri == path
    assert_reads(spark, kernel, path, expected((0, 1_000)))
    assert arrow_rows(zorder.to_arrow(f"file://{path}"), COLUMNS) == expected((0, 1_000))


@pytest.mark.parametrize(
    "location",
    ["cli%41pct", "file://{tmp}/with%20space", "file://{tmp}/h#x", "brk[x]", "back\\slash"],
)
def test_a_location_clients_would_read_differently_is_refused_before_anything_is_written(
    spark: SparkSession, tmp_path: Path, location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    given = location.format(tmp=tmp_path)
    with pytest.raises(InvalidArgumentError, match="before anything is read or written") as refused:
        zorder.write(frame(spark, 0, 100), given, by=COLUMNS)
    assert repr(given) in str(refused.value)
    assert list(tmp_path.iterdir()) == []  # nothing written anywhere
    with pytest.raises(InvalidArgumentError, match="accepted: a local path"):
        zorder.to_arrow(given)


def test_the_cli_refuses_a_percent_and_writes_a_non_ascii_location(
    spark: SparkSession,
    kernel: duckdb.DuckDBPyConnection,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    source = str(tmp_path / "more")  # absolute: Spark's JVM has a working directory of its own
    frame(spark, 0, 1_000).write.parquet(source)
    refused = runner.invoke(app, ["write", source, "tables/cli%41pct", "--by", "a,b"])
    assert refused.exit_code == 2, refused.output
    assert "'tables/cli%41pct'" in refused.output
    assert "deltalake decodes percent-escapes" in refused.output
    assert not (tmp_path / "tables").exists()
    written = runner.invoke(app, ["write", source, "tables/naïve café", "--by", "a,b"])
    assert written.exit_code == 0, written.output
    assert_reads(spark, kernel, str(tmp_path / "tables" / "naïve café"), expected((0, 1_000)))
