"""zorder writes, Delta Spark reads (issue 58, item 2).

Each table below is written or changed by zorder only. Delta Spark's
``spark.read.format("delta")`` must return the same row multiset as DuckDB's
``delta_scan`` (the Delta kernel) and ``zorder.to_arrow``, for the whole table and
under filters; and it must skip files on zorder's statistics: for each filter the
files its scan read are set beside the files ``zorder.explain`` keeps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import duckdb
import pytest
from deltalake import DeltaTable, write_deltalake
from pyspark.sql import DataFrame, SparkSession

import zorder
from tests.spark.delta_oracle import delta_scan
from tests.spark.helpers import arrow_rows, kernel_rows

pytestmark = pytest.mark.spark

COLUMNS = ["a", "b", "s", "day", "ts"]
# Selective on the clustering columns, on a string, on a partition, and one that keeps all.
FILTERS = [
    "a < 100 AND b < 100",
    "a BETWEEN 400 AND 420",
    "s = 'k0123'",
    "day = '2026-11-02' AND ts >= TIMESTAMP '2026-11-01 20:00:00'",
    "b IS NULL OR a > 990",
]
SKIPPED: list[tuple[str, str, int, int, int]] = []  # table, filter, total, zorder, Delta Spark


def events(spark: SparkSession, start: int, rows: int) -> DataFrame:
    """a and b uniform in 0..999 (b NULL now and then), s a key, three days (one odd, one
    NULL), ts an hour of 2026-11-01."""
    return spark.range(start, start + rows).selectExpr(
        "CAST(pmod(id * 7919, 1000) AS INT) AS a",
        "CASE WHEN id % 97 = 0 THEN NULL ELSE CAST(pmod(id * 104729, 1000) AS INT) END AS b",
        "concat('k', lpad(CAST(pmod(id * 31, 5000) AS STRING), 4, '0')) AS s",
        "CASE pmod(id, 4) WHEN 0 THEN '2026-11-01' WHEN 1 THEN '2026-11-02' "
        "WHEN 2 THEN 'odd = value/%' ELSE NULL END AS day",
        "CAST(TIMESTAMP '2026-11-01 00:00:00' + make_interval(0, 0, 0, 0, 0, "
        "CAST(pmod(id * 13, 1440) AS INT), 0) AS TIMESTAMP) AS ts",
    )


def mapped(spark: SparkSession, path: str) -> None:
    """delta-rs's column-mapped table, then zorder clusters it."""
    table = zorder.to_arrow(_plain(spark, path + "-source"))
    # A zoned timestamp: with timestamp_ntz deltalake 1.6 leaves columnMapping out of the
    # protocol, and such a table is refused (tests/table/delta/test_features.py).
    assert table.schema.field("ts").type.tz is not None
    for part in range(3):
        write_deltalake(
            path,
            table.slice(part * 500, 500),
            mode="append",
            configuration={"delta.columnMapping.mode": "name"} if part == 0 else None,
        )
    zorder.optimize(spark, path, by=["a", "b"], num_files=4)


def _plain(spark: SparkSession, path: str) -> str:
    zorder.write(events(spark, 0, 1500), path, by=["s"], num_files=3)
    return path


def build(spark: SparkSession, kind: str, path: str) -> None:
    write: Callable[..., Any] = zorder.write
    if kind == "plain":
        write(events(spark, 0, 2000), path, by=["a", "b"], num_files=8)
    elif kind == "partitioned":
        write(events(spark, 0, 2000), path, by=["a", "b"], partition_by=["day"], num_files=8)
    elif kind == "hilbert":
        write(events(spark, 0, 2000), path, by=["a", "b"], curve="hilbert", num_files=8)
    elif kind == "appended":
        write(events(spark, 0, 1000), path, by=["a", "b"], num_files=4)
        write(events(spark, 1000, 1000), path, mode="append", num_files=4)
    elif kind == "optimized":  # appends, then an incremental optimize
        write(events(spark, 0, 1000), path, by=["a", "b"], num_files=4)
        for start in (1000, 1500):
            write(events(spark, start, 500), path, mode="append", num_files=2)
        zorder.optimize(spark, path, num_files=8)
    elif kind == "optimize_where":
        write(events(spark, 0, 2000), path, partition_by=["day"], by=["s"], num_files=8)
        zorder.optimize(spark, path, by=["a", "b"], where="day = '2026-11-02'", num_files=3)
    elif kind == "column_mapped":
        mapped(spark, path)
    elif kind == "blooms":
        write(events(spark, 0, 2000), path, by=["a", "b"], num_files=8, bloom_filters=["s"])
    elif kind == "restored":
        write(events(spark, 0, 1000), path, by=["a", "b"], num_files=4)
        write(events(spark, 1000, 1000), path, mode="append", num_files=4)
        zorder.restore(path, version=0)
    elif kind == "vacuumed":
        write(events(spark, 0, 1000), path, by=["s"], num_files=4)
        write(events(spark, 1000, 1000), path, mode="append", num_files=4)
        zorder.optimize(spark, path, by=["a", "b"], full=True, num_files=8)
        zorder.vacuum(path, retain_hours=0, dry_run=False, force=True)
    elif kind == "txn":
        for version, start in enumerate((0, 1000, 1000)):  # the last is a replay: skipped
            write(
                events(spark, start, 1000),
                path,
                by=["a", "b"],
                mode="append",
                num_files=4,
                txn_app_id="pipeline",
                txn_version=version if version < 2 else 1,
            )
    elif kind == "checkpointed":
        write(events(spark, 0, 1000), path, by=["a", "b"], num_files=4)
        write(events(spark, 1000, 1000), path, mode="append", num_files=4)
        DeltaTable(path).create_checkpoint()
        zorder.optimize(spark, path, num_files=8)
    else:
        raise AssertionError(kind)


KINDS = [
    "plain",
    "partitioned",
    "hilbert",
    "appended",
    "optimized",
    "optimize_where",
    "column_mapped",
    "blooms",
    "restored",
    "vacuumed",
    "txn",
    "checkpointed",
]


COMPAT = {"plain", "partitioned", "column_mapped"}  # also run on the oldest and newest Spark
CASES = [pytest.param(k, marks=pytest.mark.compat) if k in COMPAT else k for k in KINDS]


@pytest.fixture(scope="module")
def tables(delta: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], str]:
    """Each kind of table, built on first use (a run of a few kinds builds only those)."""
    root = tmp_path_factory.mktemp("zorder-written")
    built: dict[str, str] = {}

    def table(kind: str) -> str:
        if kind not in built:
            build(delta, kind, str(root / kind))
            built[kind] = str(root / kind)
        return built[kind]

    return table


@pytest.fixture(scope="module", autouse=True)
def report() -> Iterator[None]:
    yield
    if SKIPPED:
        lines = [
            f"{t:15} {f:40} {n:3} files: zorder {z:3}, Delta Spark {d:3}"
            for t, f, n, z, d in SKIPPED
        ]
        print("\nfiles kept, zorder.explain against Delta Spark's scan:\n" + "\n".join(lines))


@pytest.mark.parametrize("kind", CASES)
def test_delta_spark_reads_the_rows_duckdb_and_zorder_read(
    delta: SparkSession, kernel: duckdb.DuckDBPyConnection, tables: Callable[[str], str], kind: str
) -> None:
    path = tables(kind)
    expected = arrow_rows(zorder.to_arrow(path), COLUMNS)
    rows, files = delta_scan(delta, path, COLUMNS)
    assert rows == expected
    rows_built = {"restored": 1000, "column_mapped": 1500}.get(kind, 2000)
    assert sum(expected.values()) == rows_built  # nothing lost or doubled by the build
    assert files == len(DeltaTable(path).file_uris())
    assert kernel_rows(kernel, path, COLUMNS) == expected


@pytest.mark.parametrize("kind", CASES)
def test_delta_spark_skips_on_zorder_statistics(
    delta: SparkSession, tables: Callable[[str], str], kind: str
) -> None:
    path = tables(kind)
    total = len(DeltaTable(path).file_uris())
    skipped_somewhere = False
    for where in FILTERS:
        expected = arrow_rows(zorder.to_arrow(path, where), COLUMNS)
        rows, files = delta_scan(delta, path, COLUMNS, where)
        assert rows == expected, where
        kept = zorder.explain(path, where, spark=delta).files_scanned
        SKIPPED.append((kind, where, total, kept, files))
        # Delta Spark prunes on the same min/max/nullCount: never more files than zorder keeps
        # without bloom filters, and here no fewer (zorder's statistics are Delta's own).
        unbloomed = kept + zorder.explain(path, where, spark=delta).files_bloom_skipped
        assert files == unbloomed, (where, files, kept)
        skipped_somewhere |= files < total
    assert skipped_somewhere
