"""A PySpark Column filter as Spark analyzed it: its SQL, and the parts skipping may use.

Spark filters the rows with the Column itself; zorder only skips files. So
what zorder needs from a Column is the conjuncts it can read with Spark's
meaning. A conjunct that holds a user-defined function (a Python or Scala
UDF, whose name may even shadow a built-in one), or anything
nondeterministic, says nothing zorder may rely on: it is left out of the
skipping, which only keeps more files. The conjuncts are read from the
analyzed plan of the filter over an empty DataFrame of the table's schema
(classic sessions only; the plan is never executed).
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import Column, SparkSession

from zorder.spark.scan import schema_frame
from zorder.table import TableSnapshot

__all__ = ["ColumnFilter", "column_filter"]

# Catalyst's user-defined function nodes end with these (PythonUDF, ScalaUDF, HiveGenericUDF,
# HiveSimpleUDF, ScalaUDAF, ...).
_USER_DEFINED = ("UDF", "UDAF", "UDTF")


class ColumnFilter:
    """Spark's SQL for the whole filter, and for each conjunct skipping may read."""

    def __init__(self, sql: str, conjuncts: tuple[str, ...]) -> None:
        self.sql = sql
        self.conjuncts = conjuncts


def column_filter(where: Column, snapshot: TableSnapshot, spark: SparkSession) -> ColumnFilter:
    """``where`` resolved and constant-folded against the table, split into conjuncts; those
    with a user-defined function or a nondeterministic part are left out."""
    frame = schema_frame(snapshot, spark).where(where)
    condition = frame._jdf.queryExecution().analyzed().condition()
    kept = tuple(str(c.sql()) for c in _conjuncts(condition) if _readable(c))
    return ColumnFilter(str(condition.sql()), kept)


def _conjuncts(expression: Any) -> list[Any]:
    if expression.getClass().getSimpleName() == "And":
        return [*_conjuncts(expression.left()), *_conjuncts(expression.right())]
    return [expression]


def _readable(expression: Any) -> bool:
    """No node of ``expression`` is a user-defined function, and it is deterministic."""
    if not expression.deterministic():
        return False
    pending = [expression]
    while pending:
        node = pending.pop()
        if node.getClass().getSimpleName().endswith(_USER_DEFINED):
            return False
        children = node.children()
        pending.extend(children.apply(i) for i in range(children.size()))
    return True
