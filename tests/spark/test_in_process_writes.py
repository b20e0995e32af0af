"""Writes from a path in process: Parquet files and Delta tables read as Spark reads them.

The in-process engine samples its own rows (Spark's engine samples with
Spark), so the files may differ; what must hold is the table: Spark's schema,
every row (read back by DuckDB's Delta kernel, delta-rs and Spark), the
partitions, a clustered layout, and Spark for what only Spark reads right.
"""

from __future__ import annotations

import datetime as dt
import decimal
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake
from pyspark.sql import SparkSession

import zorder
from tests.spark.helpers import arrow_rows, delta_rs_rows, kernel_rows, row_multiset
from zorder.demo import network_connections
from zorder.errors import InvalidArgumentError

pytestmark = [pytest.mark.spark]

DATA = Path(__file__).resolve().parents[1] / "data"
START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def typed_rows(rows: int) -> pa.Table:
    """Columns of the types Spark reads from Parquet unchanged, NULLs among them."""
    return pa.table(
        {
            "i8": pa.array([i % 100 - 50 for i in range(rows)], pa.int8()),
            "i32": pa.array([None if i % 13 == 0 else i * 7919 % 10_007 for i in range(rows)]),
            "i64": pa.array([i * 104_729 for i in range(rows)], pa.int64()),
            "f": pa.array([i / 7 for i in range(rows)], pa.float32()),
            "s": pa.array([f"user-{i * 31 % 997:04d}" for i in range(rows)]),
            "d": pa.array([dt.date(2026, 1, 1) + dt.timedelta(days=i % 400) for i in range(rows)]),
            "ts": pa.array(
                [
                    dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=i)
                    for i in range(rows)
                ],
                pa.timestamp("us", "UTC"),
            ),
            "ntz": pa.array(
                [dt.datetime(2026, 1, 1) + dt.timedelta(minutes=i) for i in range(rows)],
                pa.timestamp("ms"),
            ),
            "dec": pa.array(
                [decimal.Decimal(i).scaleb(-2) for i in range(rows)], pa.decimal128(12, 2)
            ),
            "day": pa.array([f"2026-11-0{i % 3 + 1}" for i in range(rows)]),
        }
    )


COLUMNS = ["i8", "i32", "i64", "f", "s", "d", "ts", "ntz", "dec", "day"]


def test_parquet_written_in_process_as_spark_writes_it(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    source = tmp_path / "in"
    source.mkdir()
    table = typed_rows(6_000)
    pq.write_table(table.slice(0, 4_000), source / "a.parquet")
    pq.write_table(table.slice(4_000), source / "b.parquet")
    by_arrow, by_spark = str(tmp_path / "arrow"), str(tmp_path / "spark")
    by, partition_by = ["i32", "s"], ["day"]
    written = zorder.write(str(source), by_arrow, by=by, partition_by=partition_by, num_files=12)
    assert written.engine == "arrow"
    assert written.rows == 6_000
    spark_written = zorder.write(
        str(source),
        by_spark,
        by=by,
        partition_by=partition_by,
        num_files=12,
        spark=spark,
        engine="spark",
    )
    assert spark_written.engine == "spark"
    # The same table: Spark's schema and partitions, every row.
    assert DeltaTable(by_arrow).schema().to_json() == DeltaTable(by_spark).schema().to_json()
    assert DeltaTable(by_arrow).metadata().partition_columns == ["day"]
    expected = kernel_rows(kernel, by_spark, COLUMNS)
    assert kernel_rows(kernel, by_arrow, COLUMNS) == expected
    assert delta_rs_rows(by_arrow, COLUMNS) == expected
    assert arrow_rows(zorder.to_arrow(by_arrow), COLUMNS) == expected
    assert row_multiset(zorder.read(spark, by_arrow).select(*COLUMNS).collect()) == expected
    # Hive-style directories as Spark names them; the log holds the values.
    days = {Path(uri).parent.name for uri in DeltaTable(by_arrow).file_uris()}
    assert days == {"day=2026-11-01", "day=2026-11-02", "day=2026-11-03"}
    # Clustered: a lookup of one value keeps at most half the files.
    report = zorder.scan(by_arrow, where="i32 = 4242").report
    assert report.files_scanned <= report.files_total // 2


def test_append_and_overwrite_from_a_delta_table(spark: SparkSession, tmp_path: Path) -> None:
    source = str(tmp_path / "events")
    rows = network_connections(20_000, seed=5)
    write_deltalake(source, rows)
    dest = str(tmp_path / "t")
    first = zorder.write(source, dest, by=["src_ip", "dst_port"], num_files=4)
    assert (first.engine, first.rows) == ("arrow", 20_000)
    again = zorder.write(source, dest, mode="append", txn_app_id="job", txn_version=1)
    assert again.engine == "arrow"
    assert zorder.describe(dest).rows == 40_000
    skipped = zorder.write(source, dest, mode="append", txn_app_id="job", txn_version=1)
    assert skipped.skipped
    files = len(DeltaTable(dest).file_uris())
    replaced = zorder.write(source, dest, mode="overwrite")
    assert replaced.files_removed == files
    assert DeltaTable(dest).to_pyarrow_table().num_rows == 20_000
    assert row_multiset(zorder.read(spark, dest).collect()) == row_multiset(
        zip(*[rows.column(c).to_pylist() for c in rows.column_names], strict=True)
    )


def test_a_dataframe_is_written_by_spark(spark: SparkSession, tmp_path: Path) -> None:
    df = spark.range(100).withColumnRenamed("id", "a")
    with pytest.raises(InvalidArgumentError, match="a DataFrame is written by Spark"):
        zorder.write(df, str(tmp_path / "t"), by=["a"], engine="arrow")
    assert zorder.write(df, str(tmp_path / "t"), by=["a"]).engine == "spark"


def test_files_of_the_legacy_calendar_fall_back_to_spark(
    spark: SparkSession, tmp_path: Path
) -> None:
    """INT96 timestamps (Spark 3.1's table): rebased by Spark's reader, not by pyarrow."""
    path = str(tmp_path / "t")
    shutil.copytree(DATA / "table_with_edge_timestamps", path)
    before = row_multiset(zorder.read(spark, path).collect())
    with pytest.raises(InvalidArgumentError, match="engine='arrow' cannot run"):
        zorder.optimize(None, path, by=["SOME_VALUE"], full=True, engine="arrow")
    assert (
        DeltaTable(path).version() == DeltaTable(str(DATA / "table_with_edge_timestamps")).version()
    )
    metrics = zorder.optimize(spark, path, by=["SOME_VALUE"], full=True)
    assert metrics.engine == "spark"
    assert "legacy" in metrics.engine_reason
    assert row_multiset(zorder.read(spark, path).collect()) == before


def test_cold_command_line_starts_no_jvm(tmp_path: Path) -> None:
    """No java on the PATH and no JAVA_HOME: optimize and write of small work still run."""
    source = tmp_path / "src.parquet"
    pq.write_table(network_connections(5_000, seed=2), source)
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "PYSPARK_PYTHON")}
    env["PATH"] = str(Path(sys.executable).parent)

    def run(*arguments: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "zorder", *arguments, "--json"],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )

    dest = tmp_path / "t"
    done = run("write", str(source), str(dest), "--by", "src_ip,dst_port", "--num-files", "4")
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"engine": "arrow"' in done.stdout
    done = run("optimize", str(dest), "--by", "dst_port,src_ip", "--num-files", "3")
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"engine": "arrow"' in done.stdout
    done = run("optimize", str(dest))  # nothing to do, said without Spark
    assert done.returncode == 0, done.stdout + done.stderr
    assert "nothing to optimize" in done.stdout
    assert DeltaTable(str(dest)).to_pyarrow_table().num_rows == 5_000
    refused = run("optimize", str(dest), "--full", "--engine", "spark")
    assert refused.returncode != 0  # Spark needs Java: the proof that none started before


def test_a_column_mapped_delta_input_is_read_by_spark(spark: SparkSession, tmp_path: Path) -> None:
    """Column mapping's field metadata: what a new table keeps of it is Spark's read's."""
    source = str(DATA / "table_with_column_mapping")
    dest = str(tmp_path / "t")
    first = zorder.to_arrow(source).column_names[0]
    written = zorder.write(source, dest, by=[first], num_files=2, spark=spark)
    assert written.engine == "spark"
    assert "metadata" in written.engine_reason
    assert DeltaTable(dest).to_pyarrow_table().num_rows == zorder.to_arrow(source).num_rows


def test_deletes_on_a_table_written_in_process_with_bloom_filters(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    """DELETEs as deletion vectors on files pyarrow wrote (bloom filters on): every reader
    leaves the deleted rows out, before and after an in-process optimize purges them."""
    from deltalake import TableFeatures

    from tests.delta_writer import delete_rows, live_adds

    source = tmp_path / "src.parquet"
    pq.write_table(network_connections(6_000, seed=9), source)
    path = str(tmp_path / "t")
    written = zorder.write(
        str(source), path, by=["src_ip", "dst_port"], num_files=4, bloom_filters=["src_port"]
    )
    assert written.engine == "arrow"
    DeltaTable(path).alter.add_feature(
        TableFeatures.DeletionVectors, allow_protocol_versions_increase=True
    )
    files = sorted(live_adds(Path(path)))
    delete_rows(path, files[0], range(0, 300, 3), storage="u")
    delete_rows(path, files[1], [0, 1, 2], storage="i")
    columns = ["src_ip", "dst_ip", "src_port", "dst_port"]
    expected = kernel_rows(kernel, path, columns)
    assert sum(expected.values()) == 6_000 - 100 - 3
    assert arrow_rows(zorder.to_arrow(path), columns) == expected
    assert row_multiset(zorder.read(spark, path).select(*columns).collect()) == expected
    port = next(iter(expected))[2]
    where = f"src_port = {port}"
    looked_up = kernel_rows(kernel, path, columns, where)
    assert arrow_rows(zorder.to_arrow(path, where), columns) == looked_up
    metrics = zorder.optimize(None, path, full=True, num_files=4)
    assert metrics.engine == "arrow"
    assert metrics.rows == sum(expected.values())
    assert not any("deletionVector" in add for add in live_adds(Path(path)).values())
    assert kernel_rows(kernel, path, columns) == expected
    assert delta_rs_rows(path, columns) == expected
    assert arrow_rows(zorder.to_arrow(path, where), columns) == looked_up
