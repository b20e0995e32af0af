"""The README's snippets for other Delta readers, run against a partitioned table zorder wrote.

The code is read out of README.md (blocks opening with ``# engine: NAME``), so
the documentation cannot drift from what works.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import zorder
from tests.api.test_engines import readme_snippets
from zorder.demo import network_frame

pytestmark = [pytest.mark.spark, pytest.mark.compat]

FILES = 20


@pytest.fixture(scope="module")
def table(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, int]:
    path = str(tmp_path_factory.mktemp("engines") / "conns")
    # About 1% of the connections go to port 443, so the snippets' filter finds rows,
    # over two days: the snippets read one of them.
    generated = network_frame(spark, 20_000, seed=5)
    df = generated.withColumn(
        "src_port", F.when(F.rand(9) < 0.01, F.lit(443)).otherwise(F.col("src_port"))
    ).withColumn("day", F.when(F.rand(3) < 0.5, "2026-11-01").otherwise("2026-11-02"))
    zorder.write(
        df,
        path,
        by=["src_ip", "dst_ip", "src_port", "dst_port"],
        partition_by=["day"],
        num_files=FILES,
    )
    expected = df.where("day = '2026-11-02' AND src_port = 443").count()
    assert expected > 25
    return path, expected


def run(name: str, path: str) -> dict[str, Any]:
    scope: dict[str, Any] = {"path": path}
    exec(compile(readme_snippets()[name], f"README.md ({name})", "exec"), scope)
    return scope


def test_deltalake_prunes_files_and_finds_every_row(table: tuple[str, int]) -> None:
    path, expected = table
    scope = run("deltalake", path)
    assert scope["rows"].num_rows == expected
    # The other day pruned, and files of this one skipped on their statistics.
    assert 0 < len(scope["kept"]) < FILES // 2


def scanned_files(profile: str) -> tuple[int, int]:
    """The files DuckDB's EXPLAIN ANALYZE says its Delta scan read, and the table's total."""
    found = re.search(r"Scanning Files:\D*(\d+)/(\d+)", profile)
    assert found is not None, profile
    return int(found[1]), int(found[2])


def test_duckdb_prunes_files_and_finds_every_row(table: tuple[str, int]) -> None:
    path, expected = table
    scope = run("duckdb", path)
    assert len(scope["rows"]) == expected
    profile = scope["plan"].fetchall()[0][1]
    scanned, total = scanned_files(profile)
    assert total == FILES
    assert 0 < scanned < FILES // 2  # the other day pruned, and files of this one skipped


def test_polars_finds_every_row(table: tuple[str, int]) -> None:
    path, expected = table
    scope = run("polars", path)
    assert scope["rows"].height == expected


def test_other_engines_read_a_partitioned_table_zorder_wrote_and_optimized(
    spark: SparkSession, tmp_path: Path
) -> None:
    import duckdb
    import polars as pl
    from deltalake import DeltaTable

    path = str(tmp_path / "days")
    df = network_frame(spark, 9_000, seed=8).withColumn(
        "day", F.concat(F.lit("2026-11-0"), (F.col("src_port") % 3 + 1).cast("string"))
    )
    zorder.write(df, path, by=["src_ip", "dst_port"], partition_by=["day"], num_files=9)
    zorder.optimize(spark, path, by=["dst_port", "src_ip"], where="day = '2026-11-02'")
    expected = df.where("day = '2026-11-02'").count()
    files = len(DeltaTable(path).file_uris())

    dataset = DeltaTable(path).to_pyarrow_dataset()
    import pyarrow.compute as pc

    assert dataset.to_table(filter=pc.field("day") == "2026-11-02").num_rows == expected
    assert pl.scan_delta(path).filter(pl.col("day") == "2026-11-02").collect().height == expected

    scope = run("duckdb", path)  # loads the extension as the README shows
    con: duckdb.DuckDBPyConnection = scope["con"]
    query = f"SELECT count(*) FROM delta_scan('{path}') WHERE day = '2026-11-02'"
    assert con.sql(query).fetchone() == (expected,)
    profile = con.sql(f"EXPLAIN ANALYZE {query}").fetchall()[0][1]
    scanned, total = scanned_files(profile)
    assert total == files
    assert 0 < scanned < total  # the other days' files are pruned
