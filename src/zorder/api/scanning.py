"""``scan``: a planned read of a Delta table, as a value.

A :class:`Scan` is one version of the table (time travel by ``version`` or
``timestamp``), a filter (SQL text, or a PySpark Column turned into Spark's
own SQL for it), the columns wanted and the zone zone-less timestamps are
read in; planning evaluates the filter against each file's statistics and
keeps the files that may hold a match. The plan is then read by Spark
(:meth:`Scan.to_spark`) or in this process (:meth:`Scan.to_arrow`), with
the full filter applied to the rows, so the answer always equals a full
scan's; :attr:`Scan.report` says what was skipped. A scan is planned by
:meth:`zorder.Table.scan` (or a snapshot's ``scan``), through
:func:`plan_scan`; ``zorder.scan``, ``read``, ``to_arrow`` and ``explain``
are that, one call each.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

import numpy as np

from zorder.api.context import Context
from zorder.arrow import read_rows
from zorder.arrow.blooms import ProbeCost, probe_blooms
from zorder.columns import match_column, resolve_column, sql_identifier
from zorder.errors import (
    FilterParseError,
    InvalidArgumentError,
    InvalidArgumentTypeError,
    UnsupportedFilterError,
    UnsupportedTableError,
)
from zorder.skipping import Bound, Mask, ParsedFilter, bind, might_match_mask, parse_filter
from zorder.skipping.blooms import bloom_lookups, excluded_by_blooms
from zorder.skipping.clock import in_zone, parse_with_clock
from zorder.skipping.constants import FoldContext
from zorder.skipping.explain import planned_sql
from zorder.skipping.guard import spark_rendered
from zorder.skipping.zones import session_zone
from zorder.spark.settings import required_session
from zorder.table import DataFile, TableSnapshot

__all__ = [
    "Scan",
    "ScanReport",
    "Where",
    "plan_scan",
]

if TYPE_CHECKING:
    # pyspark loads only where Spark runs: planning SQL text (explain, to_arrow) needs none.
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame, SparkSession

Where: TypeAlias = "str | Column | None"


@dataclass(frozen=True)
class ScanReport:
    """What a query scans of a table: partitions, files, rows and bytes, in total and kept."""

    table_uri: str
    version: int
    predicate: str  # as given (SQL text, or Spark's SQL for a Column)
    files_total: int
    files_scanned: int
    rows_total: int
    rows_scanned: int
    bytes_total: int
    bytes_scanned: int
    partitions_total: int | None = None  # None for a table without partition columns
    partitions_scanned: int | None = None
    # The filter as skipping planned it: constants folded, literals in the type Spark
    # compares in, and each part statistics cannot decide named (zorder.skipping.explain).
    planned: str = "TRUE"
    # Files the statistics kept that the files' bloom filters ruled out (files_scanned is
    # after both), and what probing them cost; None when nothing was probed.
    files_bloom_skipped: int = 0
    bloom: ProbeCost | None = None

    @property
    def rows_fraction(self) -> float:
        return self.rows_scanned / self.rows_total if self.rows_total else 0.0

    def summary(self, *, blooms: bool = True) -> str:
        """``scanned 3 of 10 partitions, 7 of 100 files (7.0% of rows)``, then what the bloom
        filters ruled out, if they were probed (and ``blooms``)."""
        partitions = (
            f"{self.partitions_scanned} of {self.partitions_total} partitions, "
            if self.partitions_total is not None
            else ""
        )
        text = (
            f"scanned {partitions}{self.files_scanned} of {self.files_total} files "
            f"({self.rows_fraction:.1%} of rows)"
        )
        probed = self.bloom_summary()
        return f"{text}; {probed}" if blooms and probed else text

    def bloom_summary(self) -> str | None:
        """What the bloom filters ruled out and what probing them cost; None: not probed."""
        if self.bloom is None:
            return None
        cost = self.bloom
        kept = self.files_scanned + self.files_bloom_skipped
        unreadable = f", {cost.files_unreadable} unreadable" if cost.files_unreadable else ""
        return (
            f"statistics ruled out {self.files_total - kept} files, bloom filters "
            f"{self.files_bloom_skipped} of the {kept} left ({cost.files_probed} files "
            f"probed{unreadable}, {cost.requests} requests, {cost.bytes_read / 2**20:.1f} MiB "
            f"read, {cost.seconds * 1000:.0f} ms)"
        )


@dataclass(frozen=True, eq=False, kw_only=True)
class Scan:
    """A read of one version of a table, planned: which files may hold matching rows."""

    snapshot: TableSnapshot  # in the scan's zone (timestamp partition values read in it)
    source: TableSnapshot  # as loaded: what a plan in another zone starts from
    where: Where  # as given
    columns: tuple[str, ...] | None  # resolved to the table's names; None: all
    # The zone and ANSI meaning it was planned with (its clock's instant is in ``parsed``).
    context: Context
    keep: Mask  # per file of the snapshot: might it hold a matching row?
    files: tuple[DataFile, ...]  # the files kept
    report: ScanReport
    # The rows' filter: SQL text as planned (its clock pinned to the planning instant,
    # see zorder.skipping.clock), or the Column as given.
    row_filter: Where
    # The filter parsed once (SQL given: its clock pinned; a Column: Spark's SQL for it;
    # none: TRUE), which every engine reads, and its tree bound for statistics.
    parsed: ParsedFilter
    bound: Bound

    @property
    def time_zone(self) -> str:
        """The zone zone-less timestamps were read in."""
        return self.context.time_zone

    @property
    def ansi(self) -> bool:
        """Whose meaning the filter has: a session's with ANSI mode on (True), or off, read
        with ANSI's rules where that is exact (skipping/ansi.py); skipping reads what is not
        as unknown and to_arrow refuses it."""
        return self.context.ansi

    def explain(self) -> ScanReport:
        """Files, rows and bytes this scan reads, against the table's totals."""
        return self.report

    @property
    def filter_columns(self) -> tuple[str, ...]:
        """The table's columns the filter names, in the table's spelling and order."""
        names = self.parsed.columns
        meant = {match_column(name, self.snapshot.schema.column_types) for name in names}
        return tuple(c for c in self.snapshot.schema.column_types if c in meant)

    def to_arrow(self, limit: int | None = None) -> pa.Table:
        """The matching rows, read in this process without a JVM (see :func:`zorder.to_arrow`).

        ``limit`` stops after that many rows (in file order).
        """
        check_where(self.where)
        check_limit(limit)
        # The filter as planned, parsed once: its clock already pinned to the plan's instant.
        parsed = self.parsed
        if not self.ansi:  # the evaluators answer with ANSI's rules: ANSI off's read as them
            parsed = parsed.for_ansi_off(
                self.snapshot.schema.column_types, cast_strings=not self.context.legacy_ansi
            )
        return read_rows(
            self.snapshot,
            self.files,
            parsed,
            columns=self.columns,
            time_zone=self.time_zone,
            limit=limit,
        )

    def to_spark(self, spark: SparkSession) -> DataFrame:
        """The matching rows as a Spark DataFrame; only the kept files are read.

        Spark evaluates the filter on the rows in its session's zone: a scan
        planned in another zone is planned again in the session's first, from
        the same version (``source``), so the files kept and the rows filtered
        read zone-less timestamps alike and the answer is Spark's own.
        """
        session = Context.of_session(spark, self.context.storage)
        if not session.reads_like(self.context):
            again = plan_scan(
                self.source,
                self.where,
                session,
                columns=self.columns,
                parsed=self.parsed if isinstance(self.where, str) else None,
            )
            return again.to_spark(spark)
        from pyspark.sql import functions as F

        from zorder.spark.guard import check_spark_parse
        from zorder.spark.scan import read_files

        if isinstance(self.row_filter, str):
            check_spark_parse(spark, self.row_filter)  # before read_files: nothing reaches Spark
        frame = read_files(self.snapshot, spark, self.keep)
        if self.row_filter is not None:
            condition = self.row_filter
            frame = frame.where(F.expr(condition) if isinstance(condition, str) else condition)
        if self.columns is not None:
            frame = frame.select(*[F.col(sql_identifier(c)) for c in self.columns])
        return frame


def plan_scan(
    snapshot: TableSnapshot,
    where: Where,
    context: Context,
    *,
    columns: Sequence[str] | None = None,
    parsed: ParsedFilter | None = None,
) -> Scan:
    """The files of ``snapshot`` that may hold rows matching ``where``.

    Zone-less timestamps are read in ``context``'s zone and the filter has its ANSI
    meaning; a SQL filter's clock reads ``context``'s. ``parsed``, SQL ``where`` as an
    earlier plan parsed it, is planned again in this zone, its clock at the same instant.
    """
    zone, ansi = context.time_zone, context.ansi
    source, snapshot = snapshot, snapshot.in_time_zone(zone)
    types = snapshot.schema.column_types
    picked = None if columns is None else tuple(_resolved_columns(columns, types))
    if parsed is not None and isinstance(where, str):
        parsed = in_zone(parsed, columns=snapshot.schema.column_types, time_zone=zone)
        text = parsed.text
    else:
        text, parsed = _predicate(where, snapshot, context)
    predicate = parsed.predicate(
        ansi_off=None if ansi else types, cast_strings=not context.legacy_ansi
    )
    bound = bind(predicate, types, time_zone=zone)
    mask = might_match_mask(
        bound, snapshot.actions, types, nan_free_bounds=lambda: snapshot.nan_free_bounds
    )
    mask, bloom_skipped, cost = bloom_pruned(snapshot, bound, mask)
    kept = snapshot.files_where(mask)
    partitioned = bool(snapshot.partition_columns)
    report = ScanReport(
        table_uri=snapshot.uri,
        version=snapshot.version,
        predicate=text,
        planned=planned_sql(bound),
        files_total=snapshot.actions.num_rows,
        files_scanned=len(kept),
        rows_total=snapshot.total_rows,
        rows_scanned=sum(f.num_records or 0 for f in kept),
        bytes_total=snapshot.total_bytes,
        bytes_scanned=sum(f.size for f in kept),
        partitions_total=len({f.partition for f in snapshot.files}) if partitioned else None,
        partitions_scanned=len({f.partition for f in kept}) if partitioned else None,
        files_bloom_skipped=bloom_skipped,
        bloom=cost,
    )
    return Scan(
        snapshot=snapshot,
        source=source,
        where=where,
        columns=picked,
        context=context,
        keep=mask,
        files=kept,
        report=report,
        row_filter=text if isinstance(where, str) else where,
        parsed=parsed,
        bound=bound,
    )


def bloom_pruned(
    snapshot: TableSnapshot, bound: Bound, mask: Mask
) -> tuple[Mask, int, ProbeCost | None]:
    """``mask`` less the files whose bloom filters prove the filter TRUE for none of their
    rows; the files so ruled out, and the probe's cost (None: nothing was probed).

    Only the columns the table's spec gives bloom filters are probed (a table without
    them pays nothing), and only in the files the statistics kept, for the values of the
    filter's equalities (:func:`~zorder.skipping.blooms.bloom_lookups`).
    """
    if not np.any(mask) or not bloom_lookups(bound):
        return mask, 0, None  # no lookup a filter could answer: the spec is not looked for
    try:
        spec = snapshot.clustering_spec
    except UnsupportedTableError:
        return mask, 0, None  # properties that do not parse: clustering says so, not a read
    columns = [b.column for b in spec.bloom_filters] if spec is not None else []
    lookups = bloom_lookups(bound, columns) if columns else {}
    wanted = [c for c in columns if lookups.get(c)]
    kept = np.flatnonzero(mask)
    if not wanted or not len(kept):
        return mask, 0, None
    probe = probe_blooms(snapshot, snapshot.files_where(mask), wanted, lookups)
    ruled_out = [
        index
        for index, absent in zip(kept, probe.absent, strict=True)
        if absent and excluded_by_blooms(bound, absent)
    ]
    pruned = mask.copy()
    pruned[ruled_out] = False
    return pruned, len(ruled_out), probe.cost


def check_where(where: object) -> None:
    """A filter the in-process engine can take: SQL text, or none."""
    if where is not None and not isinstance(where, str):
        raise InvalidArgumentTypeError(
            f"to_arrow takes the filter as SQL text, got {type(where).__name__}; "
            "a pyspark Column needs Spark: use zorder.read(spark, path, where)"
        )


def check_limit(limit: object) -> None:
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise InvalidArgumentError(f"limit must be an int >= 0 or None, got {limit!r}")


def _resolved_columns(columns: Sequence[str], types: Mapping[str, str]) -> list[str]:
    if isinstance(columns, str) or not all(isinstance(c, str) for c in columns):
        raise InvalidArgumentTypeError(f"columns must be a list of column names, got {columns!r}")
    if not columns:
        raise InvalidArgumentError("columns must name at least one column (or be None for all)")
    return [resolve_column(c, types) for c in columns]


def _predicate(where: Where, snapshot: TableSnapshot, context: Context) -> tuple[str, ParsedFilter]:
    """The filter's SQL text (SQL given with its clock pinned to now; a Column's as Spark
    writes it) and what the scan plans with: that text parsed, once, its constants folding
    in the session's zone."""
    if where is None:
        return "TRUE", parse_filter("TRUE")
    if isinstance(where, str):
        types = snapshot.schema.column_types
        parsed = parse_with_clock(
            where, columns=types, time_zone=context.time_zone, now=context.clock()
        )
        return parsed.text, parsed
    try:
        zone: dt.tzinfo | None = session_zone(context.time_zone)
    except InvalidArgumentError:
        zone = None  # a zone Python does not know: what depends on it stays unfolded
    from pyspark.sql import Column

    if not isinstance(where, Column):
        raise InvalidArgumentTypeError(
            f"where must be SQL text or a pyspark Column, got {type(where).__name__}"
        )
    session = required_session(context.spark, "a Column filter (or pass SQL text instead)")
    from zorder.spark.progress import is_connect

    if is_connect(session):
        # A Connect client holds no analyzed plan to turn the Column into SQL: no file
        # is skipped, and the rows are filtered with the Column itself.
        return str(where), parse_filter("TRUE")
    from zorder.spark.filters import column_filter

    analyzed = column_filter(where, snapshot, session)
    # Spark filters the rows with the Column; skipping reads the conjuncts it can read with
    # Spark's meaning, and leaves out any it cannot parse (keeping more files, never fewer).
    # Spark reads the Column's clock itself: it stays unfolded (no instant in the context).
    folding = FoldContext(zone=zone, zone_name=context.time_zone)

    def conjunction(conjuncts: Sequence[str]) -> ParsedFilter:
        text = " AND ".join(f"({c})" for c in conjuncts) or "TRUE"
        return parse_filter(text, context=folding)

    with spark_rendered():  # the caller's code built it; Spark filters with the Column
        try:
            return analyzed.sql, conjunction(analyzed.conjuncts)  # usually all of them read
        except (FilterParseError, UnsupportedFilterError):
            pass
        readable = []
        for conjunct in analyzed.conjuncts:
            try:
                conjunction([conjunct])
            except (FilterParseError, UnsupportedFilterError):
                continue
            readable.append(conjunct)
        return analyzed.sql, conjunction(readable)
