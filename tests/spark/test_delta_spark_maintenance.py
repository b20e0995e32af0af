"""Delta Spark's own commands on zorder's tables (issue 58, item 5).

Delta Spark runs ``OPTIMIZE``, ``OPTIMIZE ZORDER BY``, ``VACUUM`` (by default,
and after 0 hours with its check off), ``RESTORE``, ``REORG ... APPLY (PURGE)``,
checkpoints, log cleanup and auto compaction on tables zorder clustered. After
each, Delta Spark, DuckDB and zorder read the same rows; zorder knows which
files its spec no longer describes (Delta rewrote them) and its next
``optimize`` re-clusters them by the spec the table recorded. That spec
outlasts the log's cleanup on tables with table features too. A Delta
``readStream`` downstream sees each appended row once and no rewritten row.

Two kinds of table: ``zorder``, made by ``zorder.write`` (Delta's protocol
(1, 2): the spec is in its properties), and ``features``, made by Delta Spark
with deletion vectors (table features, writer 7: zorder gives it no
properties) and then clustered by zorder.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from pyspark.sql import DataFrame, SparkSession

import zorder
from tests.spark.delta_oracle import delta_rows
from tests.spark.helpers import arrow_rows, kernel_rows, spark_rows
from zorder.table.delta.versions import commit_infos
from zorder.table.storage import Storage

pytestmark = pytest.mark.spark

COLUMNS = ["id", "a", "b", "s"]
BY = ["a", "b"]
KINDS = ("zorder", "features")


def new_rows(spark: SparkSession, start: int, count: int) -> DataFrame:
    return spark.range(start, start + count).selectExpr(
        "id",
        "CAST(pmod(id * 7919, 1000) AS INT) AS a",
        "CAST(pmod(id * 104729, 1000) AS INT) AS b",
        "concat('k', CAST(id AS STRING)) AS s",
    )


def make(spark: SparkSession, path: str, kind: str) -> None:
    if kind == "zorder":
        zorder.write(new_rows(spark, 0, 3_000), path, by=BY, num_files=4)
        return
    spark.sql(
        f"CREATE TABLE delta.`{path}` (id BIGINT, a INT, b INT, s STRING) USING delta "
        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    )
    for start in (0, 1_000, 2_000):
        new_rows(spark, start, 1_000).write.format("delta").mode("append").save(path)
    zorder.optimize(spark, path, by=BY, num_files=4)


def read_everywhere(spark: SparkSession, kernel: duckdb.DuckDBPyConnection, path: str) -> Any:
    """The rows, the same as Delta Spark, DuckDB's Delta reader and zorder's two reads see."""
    rows = delta_rows(spark, path, COLUMNS)
    assert kernel_rows(kernel, path, COLUMNS) == rows
    assert arrow_rows(zorder.to_arrow(path), COLUMNS) == rows
    assert spark_rows(zorder.read(spark, path).select(*COLUMNS)) == rows
    return rows


def unclustered(path: str) -> list[str]:
    """The live files no zorder run of the table wrote (as describe tells them)."""
    return [f.path for f in zorder.describe(path).files if f.run is None]


def reclustered(spark: SparkSession, kernel: duckdb.DuckDBPyConnection, path: str) -> None:
    """zorder's ``optimize`` without ``by`` rewrites exactly the files no run of it wrote,
    by the table's recorded spec, and every reader's rows stay as they were."""
    rows = read_everywhere(spark, kernel, path)
    rewritten = unclustered(path)
    assert rewritten
    metrics = zorder.optimize(spark, path)
    assert metrics.by == tuple(BY)
    assert metrics.files_removed == len(rewritten)
    assert unclustered(path) == []
    assert read_everywhere(spark, kernel, path) == rows


@pytest.fixture
def settings(delta: SparkSession) -> Iterator[dict[str, str | None]]:
    """Session settings changed by one test (by :func:`set_conf`): their values before,
    put back afterwards."""
    before: dict[str, str | None] = {}
    yield before
    for key, value in before.items():
        if value is None:
            delta.conf.unset(key)
        else:
            delta.conf.set(key, value)


def set_conf(spark: SparkSession, before: dict[str, str | None], key: str, value: str) -> None:
    before.setdefault(key, spark.conf.get(key, None))
    spark.conf.set(key, value)


@pytest.mark.parametrize(
    ("kind", "command"),
    [("zorder", "OPTIMIZE"), ("features", "OPTIMIZE"), ("features", "OPTIMIZE ZORDER BY (b)")],
)
def test_files_deltas_optimize_rewrote_are_clustered_again_by_the_recorded_spec(
    delta: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path, kind: str, command: str
) -> None:
    path = str(tmp_path / "t")
    make(delta, path, kind)
    before = read_everywhere(delta, kernel, path)
    assert unclustered(path) == []
    delta.sql(f"{command.replace('OPTIMIZE', f'OPTIMIZE delta.`{path}`', 1)}")
    assert read_everywhere(delta, kernel, path) == before
    description = zorder.describe(path)
    assert description.spec is not None
    assert description.spec.columns == tuple(BY)  # still known, though no run holds a file
    reclustered(delta, kernel, path)


def test_restore_reorg_checkpoints_and_vacuum_by_delta_leave_a_zorder_table_right(
    delta: SparkSession,
    kernel: duckdb.DuckDBPyConnection,
    tmp_path: Path,
    settings: dict[str, str | None],
) -> None:
    path = str(tmp_path / "t")
    name = f"delta.`{path}`"
    make(delta, path, "features")
    zorder.write(new_rows(delta, 10_000, 500), path, mode="append")
    appended_version = zorder.describe(path).version
    appended = read_everywhere(delta, kernel, path)
    delta.sql(f"DELETE FROM {name} WHERE a < 200")  # deletion vectors on zorder's files
    assert sum(read_everywhere(delta, kernel, path).values()) < sum(appended.values())

    delta.sql(f"RESTORE TABLE {name} TO VERSION AS OF {appended_version}")
    assert read_everywhere(delta, kernel, path) == appended
    assert unclustered(path) == []  # the restored files are zorder's, its runs vouch for them

    delta.sql(f"UPDATE {name} SET s = 'updated' WHERE b < 100")
    delta.sql(f"DELETE FROM {name} WHERE a > 900")
    changed = read_everywhere(delta, kernel, path)
    delta.sql(f"REORG TABLE {name} APPLY (PURGE)")  # rewrites the files with vectors
    assert read_everywhere(delta, kernel, path) == changed
    assert not any(f.deleted_rows for f in zorder.describe(path).files)

    delta.sql(f"ALTER TABLE {name} SET TBLPROPERTIES ('delta.checkpointInterval' = '2')")
    new_rows(delta, 20_000, 100).write.format("delta").mode("append").save(path)
    new_rows(delta, 20_100, 100).write.format("delta").mode("append").save(path)
    assert list((tmp_path / "t" / "_delta_log").glob("*.checkpoint*.parquet"))
    grown = read_everywhere(delta, kernel, path)

    delta.sql(f"VACUUM {name}")  # 7 days kept: nothing to delete yet
    assert read_everywhere(delta, kernel, path) == grown
    set_conf(delta, settings, "spark.databricks.delta.retentionDurationCheck.enabled", "false")
    delta.sql(f"VACUUM {name} RETAIN 0 HOURS")
    assert read_everywhere(delta, kernel, path) == grown
    # Delta's vacuum left nothing behind, and zorder's spec file is hidden from it.
    assert zorder.vacuum(path, retain_hours=0, force=True).files == ()
    assert list((tmp_path / "t" / "_zorder" / "specs").glob("*.json"))
    spec = zorder.describe(path).spec
    assert spec is not None
    assert spec.columns == tuple(BY)

    history = delta.sql(f"DESCRIBE HISTORY {name}").collect()
    zorders = [h for h in history if (h["userMetadata"] or "").startswith('{"zorder"')]
    assert {h["operation"] for h in zorders} == {"WRITE"}
    assert len(zorders) == 2  # the optimize and the append (no properties on table features)
    detail = delta.sql(f"DESCRIBE DETAIL {name}").collect()[0]
    assert detail["numFiles"] == len(zorder.describe(path).files)

    reclustered(delta, kernel, path)  # what Delta rewrote or appended, by the spec


def test_the_spec_outlasts_the_log_cleanup_on_a_table_with_features(
    delta: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    name = f"delta.`{path}`"
    make(delta, path, "features")
    log = tmp_path / "t" / "_delta_log"
    assert any(info.get("zorder") for _, info in commit_infos(Storage.of(path)))
    delta.sql(
        f"ALTER TABLE {name} SET TBLPROPERTIES ('delta.logRetentionDuration' = 'interval 1 days', "
        "'delta.deletedFileRetentionDuration' = 'interval 1 days', "
        "'delta.checkpointInterval' = '2')"
    )
    # Delta cleans up commits older than the retention (by day) once a checkpoint is
    # past them: make every commit so far two days old.
    aged = time.time() - 2 * 86_400
    for commit in log.glob("*.json"):
        os.utime(commit, (aged, aged))
    new_rows(delta, 20_000, 100).write.format("delta").mode("append").save(path)
    new_rows(delta, 20_100, 100).write.format("delta").mode("append").save(path)
    assert not (log / f"{0:020d}.json").exists()  # the cleanup ran
    assert not any(info.get("zorder") for _, info in commit_infos(Storage.of(path)))
    spec = zorder.describe(path).spec
    assert spec is not None
    assert spec.columns == tuple(BY)
    reclustered(delta, kernel, path)  # Delta's two appends, by the spec the table kept


def test_files_auto_compaction_rewrote_are_noticed(
    delta: SparkSession,
    kernel: duckdb.DuckDBPyConnection,
    tmp_path: Path,
    settings: dict[str, str | None],
) -> None:
    path = str(tmp_path / "t")
    make(delta, path, "zorder")
    delta.sql(
        f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES ('delta.autoOptimize.autoCompact' = 'true')"
    )
    set_conf(delta, settings, "spark.databricks.delta.autoCompact.minNumFiles", "2")
    new_rows(delta, 10_000, 200).write.format("delta").mode("append").save(path)
    history = delta.sql(f"DESCRIBE HISTORY delta.`{path}` LIMIT 1").collect()
    assert history[0]["operation"] == "OPTIMIZE"  # Delta compacted after the append
    reclustered(delta, kernel, path)


def _streamed(spark: SparkSession, path: str, **options: str) -> tuple[Any, list[Any]]:
    seen: list[Any] = []

    def collect(batch: DataFrame, _: int) -> None:
        seen.extend(tuple(r) for r in batch.select(*COLUMNS).collect())

    reader = spark.readStream.format("delta")
    for key, value in options.items():
        reader = reader.option(key, value)
    query = reader.load(path).writeStream.foreachBatch(collect).start()
    return query, seen


@pytest.mark.parametrize("kind", KINDS)
def test_a_delta_stream_downstream_sees_each_appended_row_once(
    delta: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path, kind: str
) -> None:
    path = str(tmp_path / "t")
    make(delta, path, kind)
    # zorder's rewrites say dataChange=false, which Delta's source skips. On a table with
    # deletion vectors an optimize of files with deleted rows removes them with
    # dataChange=true (see zorder.table.delta.commit), as a DELETE's rewrite does: a stream
    # there needs skipChangeCommits, as it does for Delta's own DELETE.
    options = {"skipChangeCommits": "true"} if kind == "features" else {}
    query, seen = _streamed(delta, path, **options)
    try:
        query.processAllAvailable()
        zorder.write(new_rows(delta, 10_000, 400), path, mode="append")
        query.processAllAvailable()
        zorder.optimize(delta, path, full=True)
        query.processAllAvailable()
        if kind == "features":
            delta.sql(f"DELETE FROM delta.`{path}` WHERE a < 100")
            zorder.optimize(delta, path, full=True)  # a purge: removes with dataChange=true
            query.processAllAvailable()
        zorder.write(new_rows(delta, 20_000, 300), path, mode="append")
        zorder.optimize(delta, path)
        query.processAllAvailable()
        assert query.exception() is None
    finally:
        query.stop()
    appended = Counter(tuple(r) for r in new_rows(delta, 0, 3_000).collect())
    appended += Counter(tuple(r) for r in new_rows(delta, 10_000, 400).collect())
    appended += Counter(tuple(r) for r in new_rows(delta, 20_000, 300).collect())
    assert Counter(seen) == appended  # each appended row once, no rewritten row again
    read_everywhere(delta, kernel, path)
