"""``read``, ``explain`` and ``skipping_effectiveness``: queries that touch only the files
that can hold matching rows.

Each is a :func:`zorder.scan` read one way: ``read`` by Spark, ``explain``
as its report. Same arguments, same order, same defaults; the filter is SQL
text or a PySpark Column, and the full filter is still applied to the rows,
so an answer always equals a full scan's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from zorder.api.scanning import (
    ScanReport,
    Where,
    open_scan,
    plan_scan,
    session_time_zone,
    table_storage_options,
)
from zorder.errors import InvalidArgumentError
from zorder.table import AsOf, load_snapshot, normalize_uri

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

    ``columns``, ``version`` and ``timestamp`` as for :func:`zorder.scan`.
    Spark filters the rows in its session's zone, so ``time_zone``, if
    given, must be that zone (``spark.sql.session.timeZone``).
    """
    zone = session_time_zone(spark)
    if time_zone is not None and time_zone != zone:
        raise InvalidArgumentError(
            f"time_zone={time_zone!r} differs from the session's zone {zone!r}, in which Spark "
            "filters the rows; set spark.sql.session.timeZone instead"
        )
    planned = open_scan(
        path,
        where,
        spark=spark,
        columns=columns,
        version=version,
        timestamp=timestamp,
        time_zone=time_zone,
        storage_options=storage_options,
    )
    return planned.to_spark(spark)


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
) -> ScanReport:
    """Files, rows and bytes a query with ``where`` scans, against the table's totals.

    Arguments as for :func:`zorder.scan`; ``spark`` resolves a Column filter
    and gives the default zone (else the active session does).
    """
    return open_scan(
        path,
        where,
        spark=spark,
        columns=columns,
        version=version,
        timestamp=timestamp,
        time_zone=time_zone,
        storage_options=storage_options,
    ).report


def skipping_effectiveness(
    path: str,
    filters: Sequence[str | Column],
    *,
    version: int | None = None,
    timestamp: AsOf | None = None,
    time_zone: str | None = None,
    storage_options: Mapping[str, str] | None = None,
    spark: SparkSession | None = None,
) -> float:
    """Databricks' measure: the mean over ``filters`` of rows skipped / rows total."""
    if not filters:
        raise InvalidArgumentError("skipping_effectiveness needs at least one filter")
    zone = time_zone if time_zone is not None else session_time_zone(spark)
    uri = normalize_uri(path)
    options = table_storage_options(uri, storage_options, spark)
    snapshot = load_snapshot(uri, options, version=version, timestamp=timestamp, time_zone=zone)
    fractions = []
    for where in filters:
        report = plan_scan(snapshot, where, spark=spark, time_zone=zone).report
        fractions.append(1 - report.rows_fraction if report.rows_total else 0.0)
    return sum(fractions) / len(fractions)
