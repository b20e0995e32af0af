"""zorder.advise end to end: sample with Spark, write by the advice, read every row back."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from typer.testing import CliRunner

import zorder
from tests.delta_writer import delete_rows, live_adds
from tests.spark.helpers import arrow_rows, delta_rs_rows, kernel_rows, spark_rows
from zorder.cli import app
from zorder.table import Storage, load_snapshot

pytestmark = pytest.mark.spark
DATA = Path(__file__).parents[1] / "data"

WORKLOAD = [
    "day >= date '2024-03-01' AND day < date '2024-04-01'",
    "day >= date '2024-09-01' AND day < date '2024-10-01'",
    "select * from events e join users u on e.user_id = u.id where e.user_id = 4242",
    "user_id = 77",
    "kind = 'click' AND day > date '2024-11-15'",
    "select count(*) from users where country = 'FR'",
]


def events(spark: SparkSession, rows: int = 30_000) -> DataFrame:
    return spark.range(rows).select(
        F.expr("date_add(date '2024-01-01', cast(id * 7919 % 366 as int))").alias("day"),
        (F.col("id") * 104729 % 10_000).alias("user_id"),
        F.element_at(
            F.array(*(F.lit(k) for k in ("click", "view", "buy"))),
            (F.col("id") % 3 + 1).cast("int"),
        ).alias("kind"),
        F.col("id"),
    )


def test_a_table_written_by_the_advice_skips_and_keeps_every_row(
    spark: SparkSession, tmp_path: Path
) -> None:
    df = events(spark)
    advice = zorder.advise(df, WORKLOAD, num_files=12)
    assert advice.left_out == 1  # the users-only query
    assert advice.expected_scanned < 0.6
    path = str(tmp_path / "t")
    zorder.write(df, path, by=advice.spec, num_files=12)
    snapshot = load_snapshot(Storage.of(path))
    assert snapshot.recorded_spec == advice.spec  # weights and cuts recorded with it
    for where in (*advice_filters(), "day = date '2024-06-30'", "user_id IN (1, 2, 3)"):
        expected = df.filter(where).count()
        assert zorder.read(spark, path, where).count() == expected, where
    scanned = [zorder.explain(path, w) for w in advice_filters()]
    mean = sum(r.rows_scanned / r.rows_total for r in scanned) / len(scanned)
    assert mean < 0.75

    # An append without by= clusters by the advised spec; optimize keeps it.
    zorder.write(df.limit(3_000), path, mode="append", num_files=2)
    after = zorder.optimize(spark, path, full=True, num_files=12)
    assert load_snapshot(Storage.of(path)).recorded_spec == advice.spec
    assert after.rows == 33_000
    assert zorder.read(spark, path).count() == 33_000

    # Another table from the path, and the command line over a .sql file.
    again = zorder.advise(path, WORKLOAD, spark=spark, num_files=12)
    assert {c.name for c in again.candidates} >= {"day alone", "workload cuts"}
    # The table as it is now is measured from its files, exactly as explain counts them.
    table_filters = [*advice_filters(), "user_id = 4242"]  # the join's filter on the table too
    now = [zorder.explain(path, w) for w in table_filters]
    assert again.current_scanned == pytest.approx(
        sum(r.rows_scanned / r.rows_total for r in now) / len(now)
    )
    assert "the table now" in again.summary()
    assert zorder.advise(df, WORKLOAD, num_files=12).current_scanned is None  # no files yet
    sql = tmp_path / "workload.sql"
    sql.write_text(";\n".join(WORKLOAD) + ";")
    result = CliRunner().invoke(
        app, ["advise", path, "--workload", str(sql), "--files", "8", "--json"]
    )
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)
    assert shown["num_files"] == 8
    assert shown["spec"]["columns"]
    assert shown["left_out"] == 1
    assert 0 < shown["current_scanned"] < 1
    result = CliRunner().invoke(
        app, ["optimize", path, "--by-advice", str(sql), "--num-files", "8", "--json"]
    )
    assert result.exit_code == 0, result.output
    recorded = load_snapshot(Storage.of(path)).recorded_spec
    assert recorded is not None
    assert list(recorded.columns) == shown["spec"]["columns"]  # the same sample, the same advice
    assert zorder.read(spark, path).count() == 33_000


def advice_filters() -> list[str]:
    return [w for w in WORKLOAD if not w.startswith("select")]


def test_a_partitioned_table_takes_the_advice_per_partition(
    spark: SparkSession, tmp_path: Path
) -> None:
    df = events(spark, 12_000).withColumn(
        "region", F.when(F.col("id") % 4 == 0, "eu").otherwise("us")
    )
    advice = zorder.advise(df, [*advice_filters(), "region = 'eu' AND user_id = 5"], num_files=8)
    path = str(tmp_path / "p")
    zorder.write(df, path, by=advice.spec, num_files=8, partition_by=["region"])
    for where in [*advice_filters(), "region = 'eu' AND user_id = 5"]:
        assert zorder.read(spark, path, where).count() == df.filter(where).count(), where


@pytest.mark.parametrize(
    ("name", "workload", "columns"),
    [
        ("table-with-dv-small", ["value > 3", "value = 7"], ["value"]),
        (
            "table_with_column_mapping",
            ["`Super Name` >= 'M'", "`Company Very Short` = 'BMS'"],
            ["Company Very Short", "Super Name"],
        ),
    ],
)
def test_the_advice_rewrites_tables_others_wrote_row_for_row(
    spark: SparkSession,
    kernel: duckdb.DuckDBPyConnection,
    tmp_path: Path,
    name: str,
    workload: list[str],
    columns: list[str],
) -> None:
    path = str(tmp_path / name)
    shutil.copytree(DATA / name, path)
    before = kernel_rows(kernel, path, columns)
    advice = zorder.advise(path, workload, spark=spark, num_files=2)
    zorder.optimize(spark, path, by=advice.spec, full=True)
    assert kernel_rows(kernel, path, columns) == before
    assert arrow_rows(zorder.to_arrow(path), columns) == before
    assert spark_rows(zorder.read(spark, path).select(*columns)) == before
    # A DELETE committed as a deletion vector on the advised layout, then optimized away.
    if name == "table-with-dv-small":
        first = sorted(live_adds(Path(path)))[0]
        delete_rows(path, first, [0])
        after = kernel_rows(kernel, path, columns)
        assert sum(after.values()) == sum(before.values()) - 1
        assert arrow_rows(zorder.to_arrow(path), columns) == after
        assert spark_rows(zorder.read(spark, path).select(*columns)) == after
        zorder.optimize(spark, path)
        assert kernel_rows(kernel, path, columns) == after
        assert delta_rs_rows(path, columns) == after


def sessions(spark: SparkSession, rows: int = 48_000) -> DataFrame:
    """Events with a session id looked up by equality: two rows a session, on other days; and
    a payload, so that a file's filter is a small share of its bytes."""
    return spark.range(rows).select(
        F.expr("date_add(date '2024-01-01', cast(id * 7919 % 366 as int))").alias("day"),
        (F.col("id") * 104729 % (rows // 2)).alias("session_id"),
        F.element_at(
            F.array(*(F.lit(k) for k in ("click", "view", "buy"))),
            (F.col("id") % 3 + 1).cast("int"),
        ).alias("kind"),
        F.sha2(F.col("id").cast("string"), 256).alias("payload"),
        F.sha2(F.col("id").cast("string"), 512).alias("signature"),
    )


def test_lookups_by_id_get_bloom_filters_that_skip_what_the_curve_cannot(
    spark: SparkSession, tmp_path: Path
) -> None:
    df = sessions(spark)
    keys = [int(r[0]) for r in df.select("session_id").distinct().limit(400).collect()]
    lookups = [f"session_id = {k}" for k in keys[:30]]
    months = [
        f"day >= date '2024-{m:02d}-01' AND day < date '2024-{m + 1:02d}-01'" for m in range(1, 12)
    ]
    advice = zorder.advise(df, [*lookups, *months, "kind = 'buy'"], num_files=8)
    assert [b.column for b in advice.spec.bloom_filters] == ["session_id"]
    assert advice.blooms[0].chosen
    assert advice.scanned_without_blooms is not None
    assert advice.expected_scanned < advice.scanned_without_blooms
    path = str(tmp_path / "s")
    zorder.write(df, path, by=advice.spec, num_files=8)
    snapshot = load_snapshot(Storage.of(path))
    assert snapshot.recorded_spec == advice.spec  # the filters recorded with the layout
    # Lookups of other sessions (as a workload moves on): the statistics keep most files,
    # the filters all but the two that hold the session (and a false positive now and then).
    kept, left = [], []
    for key in keys[200:240]:
        where = f"session_id = {key}"
        report = zorder.explain(path, where)
        kept.append(report.files_scanned + report.files_bloom_skipped)
        left.append(report.files_scanned)
        assert zorder.read(spark, path, where).count() == df.filter(where).count()
    assert sum(kept) / len(kept) > 4
    assert sum(left) / len(left) < 3
