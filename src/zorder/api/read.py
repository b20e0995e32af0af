"""``read``, ``explain`` and ``skipping_effectiveness``: queries that touch only the files
that can hold matching rows.

The snapshot is loaded through ``deltalake``; the predicate (SQL text, or a
PySpark Column turned into Spark's own SQL for it) is evaluated against each
file's statistics; Spark then scans the surviving files with its vectorized
Parquet reader, with the full predicate still applied to the rows, so the
answer always equals a full scan's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from zorder.errors import InvalidArgumentError, InvalidArgumentTypeError
from zorder.skipping import Mask, Predicate, bind, might_match_mask, parse_predicate
from zorder.table import DataFile, TableSnapshot, load_snapshot, normalize_uri

__all__ = [
    "ScanPlan",
    "ScanReport",
    "explain",
    "plan_scan",
    "read",
    "session_time_zone",
    "skipping_effectiveness",
]

if TYPE_CHECKING:
    # pyspark loads only where Spark runs: planning SQL text (explain, to_arrow) needs none.
    from pyspark.sql import Column, DataFrame, SparkSession

Where: TypeAlias = "str | Column | None"


@dataclass(frozen=True)
class ScanReport:
    """What a query scans of a table: partitions, files, rows and bytes, in total and kept."""

    table_uri: str
    version: int
    predicate: str
    files_total: int
    files_scanned: int
    rows_total: int
    rows_scanned: int
    bytes_total: int
    bytes_scanned: int
    partitions_total: int | None = None  # None for a table without partition columns
    partitions_scanned: int | None = None

    @property
    def rows_fraction(self) -> float:
        return self.rows_scanned / self.rows_total if self.rows_total else 0.0

    def summary(self) -> str:
        partitions = (
            f"{self.partitions_scanned} of {self.partitions_total} partitions, "
            if self.partitions_total is not None
            else ""
        )
        return (
            f"scanned {partitions}{self.files_scanned} of {self.files_total} files "
            f"({self.rows_fraction:.1%} of rows)"
        )


@dataclass(frozen=True)
class ScanPlan:
    snapshot: TableSnapshot
    keep: Mask  # per file of the snapshot: might it hold a matching row?
    kept: tuple[DataFile, ...]
    report: ScanReport


def _column_sql(where: Column, snapshot: TableSnapshot, spark: SparkSession) -> str:
    """Spark's own SQL for a Column filter, resolved and constant-folded against the table."""
    # The analyzed plan has the names resolved and the literals typed; it is
    # never executed.
    analyzed = snapshot.dataframe(spark).where(where)._jdf.queryExecution().analyzed()
    return str(analyzed.condition().sql())


def _predicate(
    where: Where, snapshot: TableSnapshot, spark: SparkSession | None
) -> tuple[str, Predicate]:
    if where is None:
        return "TRUE", parse_predicate("TRUE")
    if isinstance(where, str):
        return where, parse_predicate(where)
    from pyspark.sql import Column, SparkSession

    if isinstance(where, Column):
        session = spark or SparkSession.getActiveSession()
        if session is None:
            raise InvalidArgumentError(
                "a Column filter needs an active SparkSession; pass SQL text instead"
            )
        from zorder.spark.progress import is_connect

        if is_connect(session):
            # A Connect client holds no analyzed plan to turn the Column into SQL: no file
            # is skipped, and read() filters the rows with the Column itself.
            return str(where), parse_predicate("TRUE")
        text = _column_sql(where, snapshot, session)
    else:
        raise InvalidArgumentTypeError(
            f"where must be SQL text or a pyspark Column, got {type(where).__name__}"
        )
    return text, parse_predicate(text)


def session_time_zone(spark: SparkSession | None) -> str:
    """The zone Spark reads zone-less timestamp literals in; UTC when no session is active."""
    from pyspark.sql import SparkSession

    session = spark or SparkSession.getActiveSession()
    if session is None:
        return "UTC"
    return str(session.conf.get("spark.sql.session.timeZone", "UTC") or "UTC")


def plan_snapshot_scan(
    snapshot: TableSnapshot,
    where: Where,
    spark: SparkSession | None,
    *,
    time_zone: str | None = None,
) -> ScanPlan:
    """The files of ``snapshot`` that may hold rows matching ``where``.

    Zone-less timestamps are read in ``time_zone``, else in the session's.
    """
    zone = time_zone if time_zone is not None else session_time_zone(spark)
    snapshot = snapshot.in_time_zone(zone)
    text, predicate = _predicate(where, snapshot, spark)
    types = snapshot.column_types
    bound = bind(predicate, types, time_zone=zone)
    mask = might_match_mask(
        bound, snapshot.actions, types, nan_free_bounds=lambda: snapshot.nan_free_bounds
    )
    kept = snapshot.files_where(mask)
    partitioned = bool(snapshot.partition_columns)
    report = ScanReport(
        table_uri=snapshot.uri,
        version=snapshot.version,
        predicate=text,
        files_total=snapshot.actions.num_rows,
        files_scanned=len(kept),
        rows_total=snapshot.total_rows,
        rows_scanned=sum(f.num_records or 0 for f in kept),
        bytes_total=snapshot.total_bytes,
        bytes_scanned=sum(f.size for f in kept),
        partitions_total=len({f.partition for f in snapshot.files}) if partitioned else None,
        partitions_scanned=len({f.partition for f in kept}) if partitioned else None,
    )
    return ScanPlan(snapshot=snapshot, keep=mask, kept=kept, report=report)


def plan_scan(
    path: str,
    where: Where,
    *,
    spark: SparkSession | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> ScanPlan:
    """Load the snapshot and keep the files whose statistics allow a match."""
    return plan_snapshot_scan(load_snapshot(normalize_uri(path), storage_options), where, spark)


def read(
    spark: SparkSession,
    path: str,
    where: Where = None,
    *,
    storage_options: Mapping[str, str] | None = None,
) -> DataFrame:
    """The table's rows matching ``where`` (SQL text or Column); only files that may match."""
    plan = plan_scan(path, where, spark=spark, storage_options=storage_options)
    frame = plan.snapshot.read_files(spark, plan.keep)
    if where is None:
        return frame
    from pyspark.sql import functions as F

    return frame.where(F.expr(where) if isinstance(where, str) else where)


def explain(
    path: str,
    where: Where,
    *,
    spark: SparkSession | None = None,
    time_zone: str | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> ScanReport:
    """Files, rows and bytes a query with ``where`` scans, against the table's totals.

    Zone-less timestamps are read in ``time_zone``, else in the session's
    time zone (UTC without a session).
    """
    snapshot = load_snapshot(normalize_uri(path), storage_options)
    return plan_snapshot_scan(snapshot, where, spark, time_zone=time_zone).report


def skipping_effectiveness(
    path: str,
    filters: Sequence[str | Column],
    *,
    spark: SparkSession | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> float:
    """Databricks' measure: the mean over ``filters`` of rows skipped / rows total."""
    if not filters:
        raise InvalidArgumentError("skipping_effectiveness needs at least one filter")
    snapshot = load_snapshot(normalize_uri(path), storage_options)
    fractions = []
    for where in filters:
        report = plan_snapshot_scan(snapshot, where, spark).report
        fractions.append(1 - report.rows_fraction if report.rows_total else 0.0)
    return sum(fractions) / len(fractions)
