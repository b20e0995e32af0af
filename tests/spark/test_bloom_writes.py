"""Bloom filters as part of the layout: ``bloom_filters=`` on write and optimize.

The files of a table whose spec names bloom filters carry one Parquet
split-block bloom filter per row group on each such column (as Spark's
Parquet writer makes them), the table records them with its spec, and later
appends and optimizes keep writing them. DuckDB's ``parquet_bloom_probe``
finds them: other engines read them too.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable
from pyspark.sql import DataFrame, SparkSession

import zorder
from tests.spark.helpers import delta_rs_rows, kernel_rows
from zorder.curves.kinds import BloomColumn
from zorder.errors import ColumnNotFoundError, InvalidArgumentError, UnsupportedColumnTypeError

pytestmark = pytest.mark.spark

BLOOM_PROPERTY = "zorder.clustering.bloomFilters"


def events(spark: SparkSession, start: int, count: int) -> DataFrame:
    """Rows with a clustering column, an id looked up by equality and a decimal amount."""
    return spark.range(start, start + count).selectExpr(
        "id % 97 AS port",
        "CAST(id * 7919 % 100003 AS BIGINT) AS ts",
        "sha2(CAST(id AS STRING), 256) AS session_id",
        "CAST(id / 100 AS DECIMAL(12, 2)) AS amount",
        "IF(id % 2 = 0, 1.5D, 2.5D) AS score",
    )


def bloom_columns_of(path: Path) -> dict[str, set[str]]:
    """Per data file (relative path): the columns every row group of it has a filter on."""
    table = DeltaTable(str(path))
    found = {}
    for relative in table.file_uris():
        metadata = pq.ParquetFile(relative).metadata
        per_group = [
            {
                metadata.row_group(g).column(c).path_in_schema
                for c in range(metadata.num_columns)
                if metadata.row_group(g).column(c).bloom_filter_offset is not None
            }
            for g in range(metadata.num_row_groups)
        ]
        found[relative] = set.intersection(*per_group) if per_group else set()
    return found


@pytest.mark.compat
def test_a_write_gives_every_file_filters_and_records_them(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = tmp_path / "t"
    metrics = zorder.write(
        events(spark, 0, 20_000),
        str(path),
        by=["port", "ts"],
        num_files=4,
        bloom_filters={"session_id": 0.001, "amount": 0.01},
    )
    assert metrics.files_added == 4
    files = bloom_columns_of(path)
    assert len(files) == 4
    assert all(columns == {"session_id", "amount"} for columns in files.values())
    configuration = DeltaTable(str(path)).metadata().configuration
    assert json.loads(configuration[BLOOM_PROPERTY]) == {"session_id": 0.001, "amount": 0.01}
    spec = zorder.describe(str(path)).spec
    assert spec is not None
    assert spec.bloom_filters == (BloomColumn("amount"), BloomColumn("session_id", 0.001))
    assert "bloom filters on amount, session_id (fpp 0.001)" in spec.describe()


@pytest.mark.compat
def test_appends_and_optimizes_keep_writing_them_until_a_spec_drops_them(
    spark: SparkSession, tmp_path: Path, kernel: duckdb.DuckDBPyConnection
) -> None:
    path = tmp_path / "t"
    zorder.write(
        events(spark, 0, 5_000), str(path), by=["port", "ts"], bloom_filters=["session_id"]
    )
    zorder.write(events(spark, 5_000, 5_000), str(path), mode="append")  # the recorded spec
    zorder.write(events(spark, 10_000, 5_000), str(path), by=["ts"], mode="append")  # another by
    assert all(c == {"session_id"} for c in bloom_columns_of(path).values())
    optimized = zorder.optimize(spark, str(path), full=True, num_files=3)
    assert optimized.files_added == 3
    files = bloom_columns_of(path)
    assert len(files) == 3
    assert all(c == {"session_id"} for c in files.values())
    assert zorder.describe(str(path)).spec.bloom_filters == (BloomColumn("session_id"),)  # type: ignore[union-attr]
    columns = ["port", "ts", "session_id", "amount"]
    assert delta_rs_rows(str(path), columns) == kernel_rows(kernel, str(path), columns)
    assert sum(delta_rs_rows(str(path), columns).values()) == 15_000

    # A list other than the table's is a new spec: every file is rewritten without them.
    dropped = zorder.optimize(spark, str(path), bloom_filters=[], num_files=2)
    assert dropped.files_added == 2
    assert dropped.files_removed == 3
    assert all(not c for c in bloom_columns_of(path).values())
    configuration = DeltaTable(str(path)).metadata().configuration
    assert configuration[BLOOM_PROPERTY] == "null"


def test_adding_filters_to_a_clustered_table_rewrites_its_runs(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = tmp_path / "t"
    zorder.write(events(spark, 0, 6_000), str(path), by=["port", "ts"], num_files=3)
    assert all(not c for c in bloom_columns_of(path).values())
    metrics = zorder.optimize(spark, str(path), bloom_filters=["session_id"], num_files=2)
    assert metrics.files_removed == 3
    assert metrics.files_added == 2
    assert all(c == {"session_id"} for c in bloom_columns_of(path).values())
    again = zorder.optimize(spark, str(path))  # the files carry the spec's filters now
    assert again.files_added == 0
    assert again.version is None


def test_a_partitioned_table_and_duckdb_finds_the_filters(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = tmp_path / "t"
    df = events(spark, 0, 9_000).selectExpr("*", "CAST(port % 3 AS INT) AS day")
    zorder.write(
        df, str(path), by=["ts"], partition_by=["day"], num_files=6, bloom_filters=["session_id"]
    )
    files = bloom_columns_of(path)
    assert len(files) == 6
    assert all(c == {"session_id"} for c in files.values())
    present = df.select("session_id").first()[0]  # type: ignore[index]
    connection = duckdb.connect()
    for uri in files:
        excluded = connection.execute(
            "SELECT bool_and(bloom_filter_excludes) FROM parquet_bloom_probe(?, 'session_id', ?)",
            [uri, present],
        ).fetchone()
        holds = connection.execute(
            "SELECT count(*) FROM read_parquet(?) WHERE session_id = ?", [uri, present]
        ).fetchone()
        assert excluded is not None
        assert holds is not None
        assert excluded[0] == (holds[0] == 0)  # one file holds it; the filters rule out the rest


def test_a_column_mapped_table_names_its_physical_columns(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Databricks' column-mapped table: the filters are on the files' physical names."""
    path = tmp_path / "mapped"
    vendored = Path(__file__).resolve().parents[1] / "data" / "table_with_column_mapping"
    shutil.copytree(vendored, path)
    before = DeltaTable(str(path))
    physical = json.loads(before.schema().to_json())["fields"][1]["metadata"][
        "delta.columnMapping.physicalName"
    ]
    rows = zorder.read(spark, str(path))
    zorder.write(
        spark.createDataFrame(rows.limit(4).collect(), rows.schema),  # fixed rows
        str(path),
        by=["Super Name"],
        mode="append",
        bloom_filters=["Super Name"],
    )
    added = DeltaTable(str(path)).file_uris()
    new = [uri for uri in added if uri not in set(before.file_uris())]
    assert new
    for uri in new:
        metadata = pq.ParquetFile(uri).metadata
        names = {
            metadata.row_group(0).column(c).path_in_schema
            for c in range(metadata.num_columns)
            if metadata.row_group(0).column(c).bloom_filter_offset is not None
        }
        assert names == {physical}


def test_bad_bloom_filters_are_refused_before_anything_is_written(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = tmp_path / "t"
    df = events(spark, 0, 100)
    with pytest.raises(UnsupportedColumnTypeError, match="'score' has type double"):
        zorder.write(df, str(path), by=["port"], bloom_filters=["score"])
    with pytest.raises(ColumnNotFoundError, match="session_idd"):
        zorder.write(df, str(path), by=["port"], bloom_filters=["session_idd"])
    with pytest.raises(InvalidArgumentError, match="strictly between 0 and 1"):
        zorder.write(df, str(path), by=["port"], bloom_filters={"session_id": 0})
    with pytest.raises(InvalidArgumentError, match="twice"):
        zorder.write(df, str(path), by=["port"], bloom_filters=["session_id", "SESSION_ID"])
    assert not path.exists()


def test_writer_options_size_each_filter_for_the_largest_file() -> None:
    from zorder.spark.writes import bloom_filter_bytes, bloom_filter_options

    assert bloom_filter_bytes(40_000, 0.01) == 64 << 10  # Parquet's bits, a power of two
    assert bloom_filter_bytes(1, 0.01) == 32  # one block at least
    options = bloom_filter_options(
        [BloomColumn("sid"), BloomColumn("n", 0.001)], {"sid": "col-1", "n": "n"}, 20_000
    )
    assert options["parquet.bloom.filter.enabled#col-1"] == "true"
    assert options["parquet.enable.dictionary#col-1"] == "false"
    assert options["parquet.bloom.filter.expected.ndv#n"] == "40000"  # twice the planned rows
    assert options["parquet.bloom.filter.fpp#n"] == "0.001"
    assert not any("adaptive" in key for key in options)  # a distinct count sizes them
    assert options["parquet.bloom.filter.max.bytes"] == str(bloom_filter_bytes(40_000, 0.001))
    assert bloom_filter_options([], {}, 5) == {}
    unknown = bloom_filter_options([BloomColumn("sid")], {}, None)
    assert unknown["parquet.bloom.filter.max.bytes"] == str(1 << 20)  # Parquet's default
    with pytest.raises(InvalidArgumentError, match=r"'a\.b'"):
        bloom_filter_options([BloomColumn("a.b")], {}, 5)


def test_appends_keep_the_tables_filters_and_partitions_take_none(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = tmp_path / "t"
    zorder.write(events(spark, 0, 500), str(path), by=["port"], bloom_filters=["session_id"])
    with pytest.raises(InvalidArgumentError, match="an append keeps the table's spec"):
        zorder.write(events(spark, 500, 10), str(path), mode="append", bloom_filters=["ts"])
    same = zorder.write(
        events(spark, 500, 10), str(path), mode="append", bloom_filters=["SESSION_ID"]
    )
    assert same.bloom_filters == ("session_id",)
    df = events(spark, 0, 100).selectExpr("*", "port % 2 AS day")
    with pytest.raises(InvalidArgumentError, match="'day' is a partition column"):
        zorder.write(
            df, str(tmp_path / "p"), by=["ts"], partition_by=["day"], bloom_filters=["day"]
        )
    assert not (tmp_path / "p").exists()


def test_a_spec_without_filters_keeps_the_tables_and_order_names_nothing(
    spark: SparkSession, tmp_path: Path
) -> None:
    from zorder.curves.kinds import ClusteringSpec
    from zorder.plan.jobs import ClusterOptions, _resolved_spec

    path = tmp_path / "t"
    zorder.write(
        events(spark, 0, 500), str(path), by=["port"], bloom_filters=["session_id", "amount"]
    )
    table = zorder.Table(str(path))
    snapshot = table.snapshot().table_snapshot
    advised = ClusteringSpec(("ts",), "zorder", "rank")  # advise's spec, no filter paying
    kept = _resolved_spec(ClusterOptions(by=advised), snapshot, table.storage)
    assert [b.column for b in kept.bloom_filters] == ["amount", "session_id"]
    dropped = _resolved_spec(ClusterOptions(by=advised, bloom_filters=[]), snapshot, table.storage)
    assert dropped.bloom_filters == ()
    reordered = _resolved_spec(
        ClusterOptions(bloom_filters=["amount", "session_id"]), snapshot, table.storage
    )
    assert reordered.fingerprint == snapshot.recorded_spec.fingerprint  # type: ignore[union-attr]
