"""The zorder command's Spark commands, run in-process on the test session."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from deltalake import DeltaTable
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from typer.testing import CliRunner

import zorder
from zorder.cli import app

pytestmark = pytest.mark.spark
runner = CliRunner()


def test_write_optimize_stats(spark: SparkSession, tmp_path: Path) -> None:
    source = tmp_path / "src.csv"
    df = spark.range(500).select(
        (F.col("id") * 37 % 101).alias("a"), (F.col("id") * 53 % 89).alias("b"), "id"
    )
    df.coalesce(1).write.option("header", True).csv(str(source))
    dest = tmp_path / "table"
    result = runner.invoke(
        app, ["write", str(source), str(dest), "--by", "a,b", "--format", "csv", "--num-files", "4"]
    )
    assert result.exit_code == 0, result.output
    assert "files added" in result.output
    assert "500" in result.output
    assert len(DeltaTable(str(dest)).file_uris()) == 4

    result = runner.invoke(
        app, ["optimize", str(dest), "--by", "b,a", "--curve", "hilbert", "--num-files", "2"]
    )
    assert result.exit_code == 0, result.output
    assert "files removed" in result.output
    assert DeltaTable(str(dest)).version() == 3  # each clustering commit, then its properties

    result = runner.invoke(app, ["stats", str(dest), "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert len(rows) == 2
    assert sum(r["records"] for r in rows) == 500
    assert {"b min", "b max", "a min", "a max"} <= set(rows[0])

    table = runner.invoke(app, ["stats", str(dest)])
    assert table.exit_code == 0
    assert "2 files" in " ".join(table.output.split())  # the title wraps at the width


def test_bad_input_is_one_clear_line(spark: SparkSession, tmp_path: Path) -> None:
    source = tmp_path / "src"
    spark.range(10).write.parquet(str(source))
    result = runner.invoke(app, ["write", str(source), str(tmp_path / "t"), "--by", "idd"])
    assert result.exit_code == 2
    assert "unknown clustering column 'idd'; table columns: id" in result.output
    assert "Traceback" not in result.output
    both = ["--num-files", "2", "--target-file-size", "1MB"]
    result = runner.invoke(app, ["write", str(source), str(tmp_path / "t"), "--by", "id", *both])
    assert result.exit_code == 2
    assert "not both" in result.output
    result = runner.invoke(app, ["optimize", str(tmp_path / "none"), "--by", "id"])
    assert result.exit_code == 2
    assert "not a Delta table" in result.output
    # CSV is read as CSV without --format; read as Parquet, it is named, not a Java trace.
    csv = tmp_path / "conns.csv"
    csv.write_text("src_ip,dst_port\n10.0.0.1,80\n10.0.0.2,443\n")
    result = runner.invoke(app, ["write", str(csv), str(tmp_path / "c"), "--by", "src_ip"])
    assert result.exit_code == 0, result.output
    assert DeltaTable(str(tmp_path / "c")).to_pyarrow_table().num_rows == 2
    as_parquet = ["write", str(csv), str(tmp_path / "p"), "--by", "src_ip", "--format", "parquet"]
    result = runner.invoke(app, as_parquet)
    assert result.exit_code == 2
    assert "not Parquet" in result.output
    assert "--format csv|delta" in result.output
    assert "at org.apache" not in result.output


def test_demo_runs_small(spark: SparkSession, tmp_path: Path) -> None:
    output = tmp_path / "demo"
    result = runner.invoke(
        app,
        ["demo", "--rows", "3000", "--files", "8", "--filters", "20", "--output", str(output)],
        env={"COLUMNS": "80"},
    )
    assert result.exit_code == 0, result.output
    assert "Fraction of rows skipped" in result.output
    for curve in ("linear", "zorder", "hilbert"):
        assert DeltaTable(str(output / f"connections_{curve}")).to_pyarrow_table().num_rows == 3000
    header = next(line for line in result.output.splitlines() if "zorder" in line)
    assert "…" not in header  # at 80 columns every layout's name shows whole
    for measure in ("src_ip", "dst_port", "mean / bound", "write s"):
        assert re.search(rf"│ {re.escape(measure)} +│", result.output), result.output
    assert "bound: 1 - F^(-1/d)" in result.output
    assert "for 8 files" in result.output
    assert (output / "layout_zorder.png").read_bytes()[:4] == b"\x89PNG"


def test_demo_json(spark: SparkSession, tmp_path: Path) -> None:
    output = tmp_path / "demo"
    small = ["--rows", "2000", "--files", "4", "--filters", "10", "--output", str(output)]
    result = runner.invoke(app, ["demo", *small, "--json"])
    assert result.exit_code == 0, result.output
    measured = json.loads(result.output)
    assert measured["rows"] == 2000
    layouts = [layout["layout"] for layout in measured["layouts"]]
    assert layouts == ["as written", "linear", "zorder", "hilbert"]
    for layout in measured["layouts"]:
        per_column = layout["per_column"].values()
        assert layout["mean"] == pytest.approx(sum(per_column) / len(per_column))
    versions = {
        layout["layout"]: DeltaTable(layout["table"]).version() for layout in measured["layouts"]
    }
    # A plain writer's one commit; zorder's data commit, then its clustering spec's.
    assert versions == {"as written": 0, "linear": 1, "zorder": 1, "hilbert": 1}
    assert measured["lookup"]["ratio"] == pytest.approx(
        measured["lookup"]["lookup_s"] / measured["lookup"]["full_scan_s"]
    )
    assert Path(measured["pictures"]["zorder"]).read_bytes()[:4] == b"\x89PNG"


def test_query_prints_rows_and_what_was_scanned(spark: SparkSession, tmp_path: Path) -> None:
    dest = str(tmp_path / "t")
    import zorder

    zorder.write(
        spark.range(1000).select("id", (F.col("id") % 7).alias("m")), dest, by=["id"], num_files=10
    )
    result = runner.invoke(app, ["query", dest, "--where", "id = 123", "--limit", "5"])
    assert result.exit_code == 0, result.output
    assert "123" in result.output
    assert "scanned 1 of 10 files (10.0% of rows)" in result.output
    explained = runner.invoke(app, ["query", dest, "--where", "id < 0", "--explain"])
    assert "scanned 0 of 10 files" in explained.output
    bad = runner.invoke(app, ["query", dest, "--where", "idd = 1"])
    assert bad.exit_code == 2
    assert "unknown column 'idd'" in bad.output


def test_query_in_process_and_in_spark_agree(spark: SparkSession, tmp_path: Path) -> None:
    dest = str(tmp_path / "t")
    frame = spark.range(2000).select(
        "id", (F.col("id") % 7).alias("m"), F.expr("timestamp_seconds(id * 3600)").alias("ts")
    )
    zorder.write(frame, dest, by=["id", "m"], num_files=8)
    for where in ["m = 3 AND id < 500", "ts >= '1970-01-10 00:00:00' AND m IN (1, NULL)"]:
        for zone in ("UTC", "Asia/Tokyo"):
            common = ["query", dest, "--where", where, "--limit", "5000", "--time-zone", zone]
            here = runner.invoke(app, [*common, "--json"])
            there = runner.invoke(app, [*common, "--json", "--spark", "--master", "local[2]"])
            spark.conf.set("spark.sql.session.timeZone", "UTC")  # --time-zone set it
            assert here.exit_code == 0, here.output
            assert there.exit_code == 0, there.output
            rows = sorted(here.output.splitlines())
            assert rows == sorted(there.output.splitlines()), (where, zone)
            assert len(rows) > 10
    picked = runner.invoke(app, ["query", dest, "--where", "id = 5", "--columns", "m,id", "--json"])
    assert json.loads(picked.output) == {"m": 5, "id": 5}
    refused = runner.invoke(app, ["query", dest, "--where", "sha2(cast(id as string), 256) = ''"])
    assert refused.exit_code == 2
    assert "--spark" in refused.output
    explained = runner.invoke(app, ["query", dest, "--where", "id = 5", "--explain", "--json"])
    scanned = json.loads(explained.output)["files_scanned"]
    assert scanned == zorder.explain(dest, "id = 5").files_scanned < 8


def test_files_are_named_inside_their_run(spark: SparkSession, tmp_path: Path) -> None:
    import zorder

    dest = str(tmp_path / "t")
    metrics = zorder.write(spark.range(100).select("id"), dest, by=["id"], num_files=2)
    described = zorder.describe(dest)
    assert described.clustering is not None
    assert described.columns == ("id",)
    assert {f.run.id for f in described.files if f.run} == {metrics.run_id}
    assert all("/" not in f.name and f.path.endswith(f.name) for f in described.files)
    result = runner.invoke(app, ["stats", dest], env={"COLUMNS": "80"})
    text = " ".join(result.output.split())  # titles wrap at the terminal's width
    assert metrics.run_id in text
    assert "clustered by id (zorder, rank keys)" in text
    # At 80 columns each file is one line: its task number names it inside the run (first).
    lines = [line for line in result.output.splitlines() if metrics.run_id in line]
    assert [line.split("│")[1].strip() for line in lines] == ["part-00000", "part-00001"]
    assert all(len(line) <= 80 for line in result.output.splitlines())


def test_a_missing_input_is_one_clear_line(spark: SparkSession, tmp_path: Path) -> None:
    result = runner.invoke(app, ["write", str(tmp_path / "nope"), str(tmp_path / "t"), "--by", "a"])
    assert result.exit_code == 2
    assert f"no input at {tmp_path / 'nope'}" in result.output.replace("\n", "")


def test_partitioned_write_and_optimize_where(spark: SparkSession, tmp_path: Path) -> None:
    source = tmp_path / "src"
    spark.range(900).selectExpr(
        "id % 97 AS a",
        "id % 89 AS b",
        "CAST(DATE'2026-11-01' + CAST(id % 3 AS INT) AS STRING) AS day",
    ).write.parquet(str(source))
    dest = str(tmp_path / "t")
    result = runner.invoke(
        app,
        ["write", str(source), dest, "--by", "a,b", "--partition-by", "day", "--num-files", "6"],
    )
    assert result.exit_code == 0, result.output
    assert DeltaTable(dest).metadata().partition_columns == ["day"]
    result = runner.invoke(
        app, ["optimize", dest, "--by", "b,a", "--where", "day = '2026-11-03'", "--num-files", "1"]
    )
    assert result.exit_code == 0, result.output
    import zorder

    per_day = Counter(f.partition["day"] for f in zorder.describe(dest).files)
    assert per_day == {"2026-11-01": 2, "2026-11-02": 2, "2026-11-03": 1}
    explained = runner.invoke(app, ["query", dest, "--where", "day = '2026-11-02'", "--explain"])
    assert "scanned 1 of 3 partitions, 2 of 5 files" in explained.output
    refused = runner.invoke(app, ["optimize", dest, "--by", "a", "--where", "a = 1"])
    assert refused.exit_code == 2
    assert "not partition columns" in refused.output
    for width in (80, 120):  # the runs table fits: one line a run, every value whole or cut
        described = runner.invoke(app, ["describe", dest], env={"COLUMNS": str(width)})
        assert described.exit_code == 0, described.output
        lines = described.output.splitlines()
        assert all(len(line.rstrip()) <= width for line in lines), described.output
        runs = described.output.split("clustering depth")[0].splitlines()  # the depth follows
        body = [line for line in runs if line.startswith("│")]
        assert len(body) == 3, described.output  # a run a partition, none folded in two
        for line in body:
            cells = [cell.strip() for cell in line.strip("│").split("│")]
            assert cells[0].startswith("day=2026-11-0"), described.output
            assert all(cell.endswith("…") or "…" not in cell for cell in cells)


def test_a_growing_table_from_the_command_line(spark: SparkSession, tmp_path: Path) -> None:
    source = tmp_path / "src"
    spark.range(600).select(
        (F.col("id") * 37 % 101).alias("a"), (F.col("id") * 53 % 89).alias("b"), "id"
    ).write.parquet(str(source))
    dest = str(tmp_path / "table")
    first = runner.invoke(app, ["write", str(source), dest, "--by", "a,b", "--num-files", "4"])
    assert first.exit_code == 0, first.output
    appended = runner.invoke(app, ["write", str(source), dest, "--mode", "append"])
    assert appended.exit_code == 0, appended.output
    assert "a, b (zorder, rank keys)" in appended.output
    described = runner.invoke(app, ["describe", dest])
    assert described.exit_code == 0, described.output
    text = " ".join(described.output.split())
    assert "clustered by: a, b (zorder, rank keys)" in text
    assert "not clustered by the spec: 0 files" in text
    assert text.count("current") == 2  # two runs
    nothing = runner.invoke(app, ["optimize", dest])
    assert nothing.exit_code == 0, nothing.output
    assert "unchanged" in nothing.output
    full = runner.invoke(app, ["optimize", dest, "--full", "--num-files", "2"])
    assert full.exit_code == 0, full.output
    runs = zorder.describe(dest).runs
    assert [(r.files, r.rows) for r in runs] == [(2, 1_200)]


def test_json_output_of_write_and_query(spark: SparkSession, tmp_path: Path) -> None:
    source = tmp_path / "src"
    spark.range(50).select((F.col("id") % 7).alias("a"), "id").write.parquet(str(source))
    dest = str(tmp_path / "table")
    written = runner.invoke(app, ["write", str(source), dest, "--by", "a", "--json"])
    assert written.exit_code == 0, written.output
    metrics = json.loads(written.output)
    assert (metrics["rows"], metrics["by"], metrics["operation"]) == (50, ["a"], "write")
    queried = runner.invoke(app, ["query", dest, "--where", "a = 3", "--json", "--limit", "100"])
    assert queried.exit_code == 0, queried.output
    rows = [json.loads(line) for line in queried.output.splitlines()]
    assert sorted(r["id"] for r in rows) == [i for i in range(50) if i % 7 == 3]


def test_a_write_run_again_with_its_transaction_adds_nothing(
    spark: SparkSession, tmp_path: Path
) -> None:
    source = tmp_path / "src"
    spark.range(300).selectExpr("id AS a", "id % 7 AS b").write.parquet(str(source))
    dest = str(tmp_path / "table")
    command = ["write", str(source), dest, "--by", "a,b", "--mode", "append"]
    once = [*command, "--txn-app-id", "hourly", "--txn-version", "12"]
    first = runner.invoke(app, [*once, "--json"])
    assert first.exit_code == 0, first.output
    assert json.loads(first.output)["skipped"] is False
    again = runner.invoke(app, once)
    assert again.exit_code == 0, again.output
    assert "skipped" in again.output
    assert "nothing was written" in " ".join(again.output.split())
    again_json = runner.invoke(app, [*once, "--json"])
    assert json.loads(again_json.output)["skipped"] is True
    assert DeltaTable(dest).to_pyarrow_table().num_rows == 300
    assert DeltaTable(dest).transaction_version("hourly") == 12


def test_an_optimize_with_nothing_to_do_says_why_before_spark_starts(
    spark: SparkSession, tmp_path: Path
) -> None:
    """The log alone shows every file in a run of the table's spec and no tier to merge: the
    command answers without a JVM (JAVA_HOME points nowhere), naming the runs and the spec."""
    import os
    import subprocess
    import sys

    dest = str(tmp_path / "t")
    zorder.write(spark.range(200).selectExpr("id AS a", "id % 7 AS b"), dest, by=["a", "b"])
    env = {**os.environ, "JAVA_HOME": str(tmp_path / "no-java")}
    done = subprocess.run(
        [sys.executable, "-m", "zorder", "optimize", dest, "--json"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["version"] is None
    assert result["notes"][0].startswith("nothing to optimize: the 1 file(s) of")
    assert "1 run(s) clustered by zorder(a, b)" in result["notes"][0]
    # The API says the same from its own session, its depth included.
    answered = zorder.optimize(spark, dest)
    assert answered.notes == tuple(result["notes"])
    assert [d.average_depth for d in answered.depth_after] == [
        d["average_depth"] for d in result["depth_after"]
    ]


def test_the_second_day_mistakes_as_a_user_meets_them(spark: SparkSession, tmp_path: Path) -> None:
    """A clustering column NULL in every row is refused by name (exit 2, nothing written); an
    overwrite reports the files its commit removed."""
    source = tmp_path / "src"
    rows = spark.range(400).selectExpr("id AS a", "id % 9 AS b", "CAST(NULL AS STRING) AS note")
    rows.write.parquet(str(source))
    dest = str(tmp_path / "t")
    refused = runner.invoke(app, ["write", str(source), dest, "--by", "a,note"])
    assert refused.exit_code == 2
    assert "clustering column 'note' is NULL in all 400 rows" in " ".join(refused.output.split())
    assert not (tmp_path / "t" / "_delta_log").exists()
    first = runner.invoke(app, ["write", str(source), dest, "--by", "a,b", "--num-files", "3"])
    assert first.exit_code == 0, first.output
    again = runner.invoke(
        app, ["write", str(source), dest, "--mode", "overwrite", "--num-files", "2", "--json"]
    )
    assert again.exit_code == 0, again.output
    shown = json.loads(again.output)
    log = tmp_path / "t" / "_delta_log" / f"{shown['data_version']:020d}.json"
    removes = [line for line in log.read_text().splitlines() if '"remove"' in line]
    assert shown["files_removed"] == len(removes) == 3
