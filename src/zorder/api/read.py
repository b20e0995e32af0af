"""``read``, ``explain`` and ``skipping_effectiveness``: queries that touch only the files
that can hold matching rows.

Each is a :meth:`zorder.Table.scan` read one way: ``read`` by Spark,
``explain`` as its report; each function makes the handle and calls it.
Same arguments, same order, same defaults; the filter is SQL text or a
PySpark Column, and the full filter is still applied to the rows, so an
answer always equals a full scan's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from zorder.api.scanning import ScanReport, Where
from zorder.api.table import Table
from zorder.errors import InvalidArgumentError
from zorder.table import AsOf

__all__ = ["explain", "read", "skipping_effectiveness"]

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession


def read(
    spark: SparkSession,
    path: str,
    where: Where = None,
    *,
    columns: Sequence[str] | None = None,
    version: int | None = None,
    timestamp: AsOf | None = None,
    time_zone: str | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> DataFrame:
    """The table's rows matching ``where`` (SQL text or Column); only files that may match.

    ``Table(path, storage_options=..., spark=spark, time_zone=...).read(where,
    columns=..., version=..., timestamp=...)`` (see :meth:`zorder.Table.read`).
    ``columns``, ``version`` and ``timestamp`` as for :func:`zorder.scan`; a
    zone-less ``timestamp`` is read in ``time_zone`` (default: the session's).
    Spark filters the rows in its session's zone: a ``time_zone`` that differs
    from it picks the version only, and the files are chosen in the session's
    zone, as the rows are.
    """
    return Table(path, storage_options=storage_options, spark=spark, time_zone=time_zone).read(
        where, columns=columns, version=version, timestamp=timestamp
    )


def explain(
    path: str,
    where: Where = None,
    *,
    columns: Sequence[str] | None = None,
    version: int | None = None,
    timestamp: AsOf | None = None,
    time_zone: str | None = None,
    storage_options: Mapping[str, str] | None = None,
    spark: SparkSession | None = None,
    ansi: bool | None = None,
) -> ScanReport:
    """Files, rows and bytes a query with ``where`` scans, against the table's totals.

    ``Table(path, storage_options=..., spark=spark, time_zone=..., ansi=...).scan(where,
    ...).report``: arguments as for :func:`zorder.scan`; ``spark`` resolves a
    Column filter and gives the default zone and ANSI mode (else the active session does).
    """
    handle = Table(
        path, storage_options=storage_options, spark=spark, time_zone=time_zone, ansi=ansi
    )
    return handle.scan(where, columns=columns, version=version, timestamp=timestamp).report


def skipping_effectiveness(
    path: str,
    filters: Sequence[str | Column],
    *,
    version: int | None = None,
    timestamp: AsOf | None = None,
    time_zone: str | None = None,
    storage_options: Mapping[str, str] | None = None,
    spark: SparkSession | None = None,
    ansi: bool | None = None,
) -> float:
    """Databricks' measure: the mean over ``filters`` of rows skipped / rows total.

    Each filter is a scan of one ``Table(path, ...).snapshot(version=...,
    timestamp=...)``: the log is read once. ``ansi`` as for :func:`zorder.scan`.
    """
    if not filters:
        raise InvalidArgumentError("skipping_effectiveness needs at least one filter")
    handle = Table(
        path, storage_options=storage_options, spark=spark, time_zone=time_zone, ansi=ansi
    )
    snapshot = handle.snapshot(version=version, timestamp=timestamp)
    fractions = []
    for where in filters:
        report = snapshot.scan(where).report
        fractions.append(1 - report.rows_fraction if report.rows_total else 0.0)
    return sum(fractions) / len(fractions)
