"""Another writer, in a process of its own: ``python -m tests.spark.writer_child KIND PATH ...``.

- ``append PATH DAY``: delta-rs appends three rows to one day (a blind append).
- ``append-ids PATH START``: delta-rs appends rows ``a, b, id`` for ids START..START+99.
- ``overwrite PATH DAY``: delta-rs replaces the rows of one day (a predicate overwrite).
- ``delete PATH DAY``: delta-rs deletes one day's rows.
- ``optimize PATH WHERE [ENGINE]``: zorder optimizes the partitions WHERE chooses with ENGINE
  (default ``auto``); a JVM of its own is started only when Spark runs.
- ``dv-delete PATH FILE:ROWS``: a DELETE of rows (comma-separated positions) of one data file
  as a deletion vector, as Delta Spark makes one (tests/delta_writer.py).
Prints the table version it committed.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def replacement(day: str) -> pa.Table:
    return pa.table({"a": [-1, -2, -3], "b": [0, 0, 0], "day": [day] * 3})


def main(argv: list[str]) -> None:
    kind, path, argument, *rest = argv
    if kind == "append-ids":
        ids = list(range(int(argument), int(argument) + 100))
        columns = {"a": [i * 7919 % 1000 for i in ids], "b": [i * 104729 % 997 for i in ids]}
        write_deltalake(path, pa.table({**columns, "id": ids}), mode="append")
    elif kind == "append":
        write_deltalake(path, replacement(argument), mode="append", partition_by=["day"])
    elif kind == "overwrite":
        write_deltalake(
            path, replacement(argument), mode="overwrite", predicate=f"day = '{argument}'"
        )
    elif kind == "delete":
        DeltaTable(path).delete(f"day = '{argument}'")
    elif kind == "dv-delete":
        from tests.delta_writer import delete_rows

        data_file, positions = argument.rsplit(":", 1)
        delete_rows(path, data_file, [int(p) for p in positions.split(",")])
    elif kind == "optimize":
        import zorder
        from zorder.plan.engines import check_engine
        from zorder.spark import local_session

        started: list[SparkSession] = []

        def session() -> SparkSession:
            spark = local_session(master="local[1]", app_name="zorder-writer-child")
            spark.sparkContext.setLogLevel("ERROR")
            started.append(spark)
            return spark

        engine = check_engine(rest[0] if rest else "auto")
        zorder.optimize(session, path, by=["b", "a"], where=argument, num_files=1, engine=engine)
        for spark in started:
            spark.stop()
    print(DeltaTable(path).version(), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
