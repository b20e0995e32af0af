"""A Delta Spark writer in a process of its own: ``python -m tests.spark.race_child``.

It starts a local Spark driver with Delta Spark's jars, extension and catalog
(:mod:`tests.delta_spark`), prints ``RACE {"event": "ready"}`` and then runs
one command a line from stdin (JSON), answering each on stdout with a line
``RACE {...}``. A command names its ``op``, the ``table`` (a path), a ``tag``
and the op's own arguments; every commit it makes carries the tag as Delta's
``userMetadata``, so the log says which commands committed, whatever the
answer (or a kill) said.

Ops: ``append`` (rows), ``delete``/``update`` (``ids``), ``merge`` (rows
upserted by id: a match adds 1 to ``v``), ``replace`` (``overwrite`` with
``replaceWhere`` on an id range: the range's rows become ``rows``),
``optimize`` (Delta's OPTIMIZE, ``where`` and ``zorder_by`` optional),
``create`` (a new table of ``rows``, partitioned by ``p``, with ``properties``)
and ``read`` (every row, as lists).

``pause`` (seconds) makes the op wait inside its own Spark job, after Delta
has taken its snapshot and before it commits: the first row of the rows it
writes goes through a Python UDF that creates the file ``marker`` and
sleeps. The parent waits for the marker, commits with zorder meanwhile, and
so decides the order of the two commits. ``DELETE`` and ``UPDATE`` cannot
be paused so: below a Python UDF in their condition, Spark's
``input_file_name()`` names the wrong files, and Delta rewrites those (a
DELETE on a table of Delta's own then leaves matching rows; seen here with
Delta 4.4). Their condition instead spins the CPU, deterministically, on the
row ``spin_id`` (``spin``: the work, about ``(spin / 6000)^2`` seconds), and
the parent starts zorder a moment after sending them.

Test code only.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

COLUMNS = ["id", "p", "v", "a", "b"]
SCHEMA = "id BIGINT, p INT, v BIGINT, a BIGINT, b BIGINT"


def _say(message: dict[str, Any]) -> None:
    sys.stdout.write("RACE " + json.dumps(message, default=str) + "\n")
    sys.stdout.flush()


def _pause(value: int, marker: str, seconds: float) -> int:
    """The identity, but the first call (of any task) creates ``marker`` and sleeps."""
    if marker and not os.path.exists(marker):
        try:
            with open(marker, "x"):
                pass
        except FileExistsError:
            return value
        time.sleep(float(seconds))
    return value


def _session() -> Any:
    import pyspark
    from pyspark.sql.types import LongType

    from tests import delta_spark
    from tests.spark.jvm import QUICK_JVM_OPTIONS
    from zorder.spark import local_session

    conf, coordinate, reason = delta_spark.session_conf(pyspark.__version__)
    if coordinate is None:
        raise SystemExit(f"the race child needs Delta Spark: {reason}")
    with delta_spark.resolving():
        spark = local_session(
            app_name="zorder-race-child",
            conf={
                **conf,
                "spark.sql.shuffle.partitions": "2",
                "spark.driver.extraJavaOptions": QUICK_JVM_OPTIONS,
                "spark.ui.enabled": "false",
            },
        )
    spark.sparkContext.setLogLevel("ERROR")
    spark.udf.register("race_pause", _pause, LongType())
    return spark


def _frame(spark: Any, rows: list[list[int]], marker: str, seconds: float) -> Any:
    frame = spark.createDataFrame([tuple(r) for r in rows], SCHEMA)
    if marker:
        frame = frame.selectExpr(
            f"race_pause(id, '{marker}', {seconds}) AS id", *[c for c in COLUMNS if c != "id"]
        )
    return frame


def _spin(command: dict[str, Any]) -> str:
    """A condition that is true and takes a while on the row ``spin_id`` (a JVM expression:
    Delta refuses nondeterministic ones, and a Python UDF misleads its file tracking)."""
    if not command.get("spin"):
        return ""
    row, work = int(command["spin_id"]), int(command["spin"])
    inner = f"aggregate(sequence(1, {work}), 0L, (b, y) -> b + y)"
    outer = f"aggregate(sequence(1, CAST(id - {row} + {work} AS INT)), 0L, (a, x) -> a + {inner})"
    return f" AND (id <> {row} OR {outer} >= 0)"


def run(spark: Any, command: dict[str, Any]) -> Any:
    op, table, tag = command["op"], command["table"], command["tag"]
    marker, seconds = command.get("marker", ""), float(command.get("pause", 0))
    spark.conf.set("spark.databricks.delta.commitInfo.userMetadata", tag)
    name = f"delta.`{table}`"
    ids = ", ".join(str(int(i)) for i in command.get("ids", [])) or "NULL"
    if op == "create":
        writer = _frame(spark, command["rows"], "", 0).write.format("delta").partitionBy("p")
        for key, value in command.get("properties", {}).items():
            writer = writer.option(key, value)
        writer.save(table)
    elif op == "append":
        _frame(spark, command["rows"], marker, seconds).write.format("delta").mode("append").save(
            table
        )
    elif op == "delete":
        spark.sql(f"DELETE FROM {name} WHERE id IN ({ids}){_spin(command)}")
    elif op == "update":
        spark.sql(f"UPDATE {name} SET v = v + 1 WHERE id IN ({ids}){_spin(command)}")
    elif op == "merge":
        _frame(spark, command["rows"], marker, seconds).createOrReplaceTempView("race_source")
        spark.sql(
            f"MERGE INTO {name} AS t USING race_source AS s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET v = t.v + 1 "
            "WHEN NOT MATCHED THEN INSERT (id, p, v, a, b) VALUES (s.id, s.p, s.v, s.a, s.b)"
        )
    elif op == "replace":
        low, high = command["range"]
        _frame(spark, command["rows"], marker, seconds).write.format("delta").mode(
            "overwrite"
        ).option("replaceWhere", f"id >= {low} AND id < {high}").save(table)
    elif op == "optimize":
        where = f" WHERE {command['where']}" if command.get("where") else ""
        by = command.get("zorder_by")
        order = f" ZORDER BY ({', '.join(by)})" if by else ""
        done = spark.sql(f"OPTIMIZE {name}{where}{order}")
        metrics = done.collect()[0]["metrics"]
        return int(metrics["numFilesAdded"]) + int(metrics["numFilesRemoved"])  # 0: no commit
    elif op == "read":
        frame = spark.read.format("delta").load(table).select(*COLUMNS)
        return [list(r) for r in frame.collect()]
    elif op == "sql":
        return [list(r) for r in spark.sql(command["sql"]).collect()]
    else:
        raise ValueError(f"unknown op {op!r}")
    return None


def main() -> None:
    spark = _session()
    spark.sql("SELECT 1").collect()  # Delta's extension loads when the first query plans
    _say({"event": "ready", "pid": os.getpid()})
    for line in sys.stdin:
        if not line.strip():
            continue
        command = json.loads(line)
        started = time.time()
        try:
            result = run(spark, command)
        except Exception as error:  # the parent judges the error
            text = str(error)
            # pyspark's captured errors keep the JVM's as _origin, py4j's as java_exception.
            java = getattr(error, "_origin", None) or getattr(error, "java_exception", None)
            kind = java.getClass().getName() if java is not None else type(error).__name__
            _say(
                {
                    "event": "done",
                    "tag": command["tag"],
                    "ok": False,
                    "error": kind,
                    "message": text[:2000],
                    "started": started,
                    "ended": time.time(),
                }
            )
            continue
        _say(
            {
                "event": "done",
                "tag": command["tag"],
                "ok": True,
                "result": result,
                "started": started,
                "ended": time.time(),
            }
        )


if __name__ == "__main__":
    main()
