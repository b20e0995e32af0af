"""``to_arrow``: a filtered read of a Delta table in this process, without a JVM.

The same planning as :func:`zorder.read` (the snapshot through ``deltalake``,
partitions and files pruned by the statistics), then only the surviving
files read with pyarrow and their rows filtered with Spark's meaning: by
:mod:`zorder.skipping.rows` where the filter compares columns with literals
(exact, tested leaf by leaf), else by the filter translated to DuckDB SQL
(:mod:`zorder.skipping.translate`). What neither answers exactly is refused
before anything is read. For interactive lookups, notebooks and services;
Spark pipelines and joins keep using :func:`zorder.read`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from zorder.api.scanning import check_limit, check_where
from zorder.api.table import Table
from zorder.table import AsOf

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["to_arrow"]


def to_arrow(
    path: str,
    where: str | None = None,
    *,
    columns: Sequence[str] | None = None,
    limit: int | None = None,
    version: int | None = None,
    timestamp: AsOf | None = None,
    time_zone: str | None = None,
    storage_options: Mapping[str, str] | None = None,
    ansi: bool | None = None,
    spark: SparkSession | None = None,
) -> pa.Table:
    """The table's rows matching ``where`` (Spark SQL text), read in-process.

    The rows are exactly those ``zorder.read(spark, path, where)`` returns
    in a session whose ``spark.sql.ansi.enabled`` is ``ansi`` (default: the
    active session's, else on, Spark 4's default) and whose
    ``spark.sql.session.timeZone`` is ``time_zone`` (default: the active
    session's, else UTC), in which timestamps written without a zone are
    read. With ANSI mode off (``ansi=False``, Spark 3.5's default) a filter whose meaning differs
    between the two modes (a string compared with a number other than a plain
    integer, an IN list of strings and numbers, arithmetic that may overflow,
    a CAST that may fail, ...) then raises
    :class:`~zorder.errors.UnsupportedFilterError` naming the part, before
    any file is read. Besides columns against
    literals, the filter may compare columns with columns and hold arithmetic,
    casts, CASE/IF/COALESCE/NULLIF, string and date functions and
    LIKE/ILIKE/RLIKE (the list: :mod:`zorder.skipping.translate`). Where a
    row makes an ANSI session raise (an overflow, a division by zero, a
    string that does not cast), this raises
    :class:`~zorder.errors.FilterEvaluationError`. What has no exact
    in-process translation (non-deterministic functions, subqueries, decimal
    division, Java regular expressions beyond the common subset, ...) raises
    :class:`~zorder.errors.UnsupportedFilterError` naming it, before any
    file is read. ``columns`` picks and orders the
    columns (default: all, in the table's order); ``limit`` stops after
    that many rows (in file order); ``version`` and ``timestamp`` read an
    older version (see :func:`zorder.scan`). ``spark`` (else the active session, if any)
    resolves a catalog name and gives the default zone and ANSI mode; no row is read by
    Spark. The same as
    ``Table(path, storage_options=..., time_zone=..., ansi=...).scan(where,
    columns=..., version=..., timestamp=...).to_arrow(limit)``.
    """
    check_where(where)  # before the log is read
    check_limit(limit)
    handle = Table(
        path, storage_options=storage_options, spark=spark, time_zone=time_zone, ansi=ansi
    )
    return handle.scan(where, columns=columns, version=version, timestamp=timestamp).to_arrow(limit)
