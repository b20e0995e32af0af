"""zorder's main operations on a Spark Connect session: ``python -m tests.spark.connect_child DIR``.

A local Connect server (``remote("local[2]")``) needs a process of its own:
pyspark starts it on this process's JVM, where the test session already runs
a classic SparkContext. Prints one JSON object of what it saw.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import pandas as pd
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from rich.console import Console

import zorder
from tests.spark.jvm import QUICK_JVM_OPTIONS
from zorder.api.progress import spark_status
from zorder.spark import remote_session


def _slowly(batches: Iterable[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    # Each pass over a partition waits 0.6 s: the watched write outlasts the
    # server's progress reports and the display's ticks however fast it runs.
    time.sleep(0.6)
    yield from batches


def main(directory: str) -> None:
    # Progress reports every 100 ms (default 2 s), so this test's short jobs send some.
    spark = remote_session(
        "local[2]",
        conf={
            "spark.connect.progress.reportInterval": "100ms",
            "spark.driver.extraJavaOptions": QUICK_JVM_OPTIONS,
        },
    )
    assert type(spark).__module__.startswith("pyspark.sql.connect"), type(spark)
    rows = spark.range(3_000).select(
        (F.col("id") * 7919 % 1000).alias("a"), (F.col("id") * 104729 % 997).alias("b"), "id"
    )
    seen: dict[str, object] = {}
    for curve in ("zorder", "hilbert", "linear"):
        path = str(Path(directory) / curve)
        metrics = zorder.write(rows, path, by=["a", "b"], curve=curve, num_files=4)
        seen[f"write {curve}"] = [metrics.files_added, metrics.rows]
    path = str(Path(directory) / "zorder")
    appended = zorder.write(
        rows.withColumn("id", F.col("id") + 10_000), path, mode="append", num_files=2
    )
    seen["append"] = [appended.by, appended.files_added]
    # The optimizes run in Spark, through Connect: ones this small would otherwise run in process.
    optimized = zorder.optimize(spark, path, full=True, num_files=3, engine="spark")
    seen["optimize"] = [optimized.files_removed, optimized.files_added]
    filters = ["a = 17", "a < 100 AND b > 500", "id >= 10000 OR b IN (1, 2, 3)", "a IS NULL"]
    seen["read"] = {w: zorder.read(spark, path, w).count() for w in filters}
    seen["explain"] = zorder.explain(path, "a = 17").files_scanned
    seen["column filter"] = zorder.read(spark, path, F.col("a") == 17).count()
    # A Column on Connect: no analyzed plan to skip by, so every file is read, rightly.
    column_report = zorder.explain(path, F.col("a") == 17, spark=spark)
    seen["explain column"] = [column_report.files_scanned, column_report.files_total]
    seen["to_spark"] = zorder.scan(path, "a = 17").to_spark(spark).count()
    seen["describe"] = [zorder.describe(path).version, len(zorder.describe(path).files)]
    seen["version 0"] = zorder.read(spark, path, version=0).count()
    seen["partitioned"] = zorder.write(
        rows.withColumn("day", (F.col("id") % 3).cast("string")),
        str(Path(directory) / "days"),
        by=["a", "b"],
        partition_by=["day"],
        num_files=6,
    ).files_added
    # Tables Databricks wrote: deletion vectors (2 of 10 rows deleted), column mapping.
    data = Path(__file__).resolve().parents[1] / "data"
    for name in ("table-with-dv-small", "table_with_column_mapping"):
        shutil.copytree(data / name, Path(directory) / name)
    deleted = str(Path(directory) / "table-with-dv-small")
    seen["deletion vectors"] = sorted(r.value for r in zorder.read(spark, deleted).collect())
    purged = zorder.optimize(spark, deleted, by=["value"], num_files=2, engine="spark")
    seen["purged"] = purged.rows
    mapped = zorder.read(spark, str(Path(directory) / "table_with_column_mapping"))
    seen["column mapping"] = sorted(r["Super Name"] for r in mapped.collect())
    sink = io.StringIO()
    with spark_status("Writing:", spark, console=Console(file=sink, force_terminal=True)):
        watched = spark.range(0, 200_000, 1, 2).select((F.col("id") % 1000).alias("a"), "id")
        zorder.write(
            watched.mapInPandas(_slowly, schema=watched.schema),
            str(Path(directory) / "watched"),
            by=["a", "id"],
            num_files=4,
        )
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", sink.getvalue())
    seen["progress"] = sorted(set(re.findall(r"Writing: ([a-z ]+) [\d,]+/[\d,]+ tasks", shown)))
    seen["stream"] = _stream(spark, Path(directory))
    print(json.dumps(seen), flush=True)
    spark.stop()


def _stream(spark: SparkSession, directory: Path) -> list[str]:
    """Two batches through zorder.foreach_batch (run on the server), with an app id; then a
    query without one, which a Connect batch refuses (it cannot see the query's id)."""
    source = directory / "landing"
    source.mkdir()
    for n in range(2):
        rows = (json.dumps({"a": i, "b": i % 7}) for i in range(n * 100, n * 100 + 100))
        (source / f"{n}.json").write_text("\n".join(rows))
    outcomes: list[str] = []
    for name, app_id in (("stream", "connect-loader"), ("unnamed", None)):
        writer = zorder.foreach_batch(str(directory / name), by=["a", "b"], app_id=app_id)
        query = (
            spark.readStream.schema("a BIGINT, b BIGINT")
            .option("maxFilesPerTrigger", 1)
            .json(str(source))
            .writeStream.foreachBatch(writer)
            .option("checkpointLocation", str(directory / f"{name}-checkpoint"))
            .start()
        )
        try:
            query.processAllAvailable()
            outcomes.append("done")
        except Exception as error:
            named = "pass zorder.foreach_batch(..., app_id=" in str(error)
            outcomes.append("refused" if named else f"failed: {str(error)[:300]}")
        finally:
            query.stop()
    return outcomes


if __name__ == "__main__":
    main(sys.argv[1])
