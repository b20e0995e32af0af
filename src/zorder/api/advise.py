"""``advise``: the clustering spec that makes a workload's own filters skip the most rows.

Spark samples the columns the workload filters on (one pass, only the
sampled rows reach the driver); :mod:`zorder.advice` simulates candidate
layouts on the sample with the evaluator :func:`zorder.explain` uses, with
the bloom filters that pay on each (judged against the table's rows and
bytes), and returns the best as a spec that ``zorder.write(..., by=advice.spec)``
and ``zorder.optimize(..., by=advice.spec)`` accept and record in the table,
filters included.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from zorder.advice.advisor import Advice, Candidate, TableSize, advise_sample
from zorder.advice.workload import Workload, read_workload
from zorder.api.context import Context
from zorder.api.scanning import plan_scan
from zorder.columns import resolve_column
from zorder.curves.clustering import ClusteringColumn
from zorder.curves.encodings import SUPPORTED_TYPES, canonical_type_name
from zorder.errors import InvalidArgumentError, ZorderError
from zorder.plan.jobs import file_count
from zorder.sizes import DEFAULT_TARGET_FILE_SIZE
from zorder.skipping.sql import ParsedFilter
from zorder.spark.keys import (
    DEFAULT_SAMPLE_SEED,
    sample_columns,
    sample_size_for,
)
from zorder.spark.writes import estimated_bytes
from zorder.table import TableSnapshot
from zorder.table.clustering import recorded_target_file_size

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["Advice", "AdviceOptions", "Candidate", "advise_frame", "advise_snapshot"]

# Advice simulates every candidate's files on the sample and counts what each query
# reads: a one-off whose estimates want more rows than cutting files does.
ADVICE_SAMPLE_SIZE = 100_000


@dataclass(frozen=True, kw_only=True)
class AdviceOptions:
    """What :func:`zorder.advise` is asked for besides the data and the workload."""

    num_files: int | None = None
    max_columns: int | None = None
    sample_size: int | None = None
    seed: int | None = None


def advise_frame(
    df: DataFrame, workload: str | Path | Sequence[str], options: AdviceOptions
) -> Advice:
    """:func:`zorder.advise` of a DataFrame, in its session's zone."""
    return _advise(_Source(df), workload, options, Context.of_session(df.sparkSession))[0]


def advise_snapshot(
    spark: SparkSession,
    snapshot: TableSnapshot,
    workload: str | Path | Sequence[str],
    options: AdviceOptions,
    context: Context,
) -> Advice:
    """:meth:`zorder.Table.advise`: the rows sampled are those of ``snapshot``, the version
    whose partitions, file size and row count are described; the workload read in
    ``context``'s zone and ANSI meaning."""
    frame = plan_scan(snapshot, None, context).to_spark(spark)
    source = _Source(
        frame,
        partition_columns=tuple(snapshot.partition_columns),
        target=recorded_target_file_size(snapshot.configuration) or DEFAULT_TARGET_FILE_SIZE,
        rows=snapshot.total_rows,
        bytes=snapshot.total_bytes,
    )
    advice, parsed = _advise(source, workload, options, context)
    now = [_scanned_now(snapshot, f, context) for f in parsed.filters]
    return dataclasses.replace(advice, current_scanned=sum(now) / len(now) if now else None)


def _scanned_now(snapshot: TableSnapshot, parsed: ParsedFilter, context: Context) -> float:
    """The fraction of the table's rows ``parsed`` scans in its files as they are."""
    try:
        plan = plan_scan(snapshot, parsed.text, context, parsed=parsed)
    except ZorderError:
        return 1.0  # a filter skipping cannot read keeps every file, as in the simulation
    report = plan.report
    if report.rows_total:
        return report.rows_scanned / report.rows_total
    return report.files_scanned / report.files_total if report.files_total else 1.0


def _advise(
    source_of: _Source,
    workload: str | Path | Sequence[str],
    options: AdviceOptions,
    context: Context,
) -> tuple[Advice, Workload]:
    """The advice, and the workload as read (parsed once, in ``context``'s zone)."""
    num_files, max_columns = options.num_files, options.max_columns
    sample_size, seed = options.sample_size, options.seed
    _check_counts(num_files=num_files, max_columns=max_columns, sample_size=sample_size)
    frame = source_of.frame
    partition_columns = source_of.partition_columns
    types = {f.name: str(f.dataType.simpleString()) for f in frame.schema.fields}
    parsed = read_workload(workload, types, time_zone=context.time_zone, now=context.clock())
    wanted = _filtered_columns(parsed.filters, types)
    # Columns of other types (maps, arrays, structs) have no statistics to simulate: filters
    # on them keep every file, in the simulation as on the table.
    columns = [
        ClusteringColumn(c, _canonical(types[c]))
        for c in types
        if c in wanted or c in partition_columns
    ]
    clusterable = [c for c in columns if c.type_name in SUPPORTED_TYPES]
    estimate = estimated_bytes(frame) if num_files is None or source_of.bytes is None else 0
    count = num_files if num_files is not None else file_count(None, source_of.target, estimate)
    table = TableSize(
        rows=source_of.rows if source_of.rows is not None else frame.count(),
        bytes=source_of.bytes if source_of.bytes is not None else estimate,
    )
    size = (
        sample_size if sample_size is not None else max(ADVICE_SAMPLE_SIZE, sample_size_for(count))
    )
    sample = sample_columns(
        frame,
        clusterable,
        sample_size=size,
        seed=DEFAULT_SAMPLE_SEED if seed is None else seed,
        rows=table.rows,
    )
    advice = advise_sample(
        sample,
        {name: _canonical(type_name) for name, type_name in types.items()},
        parsed,
        num_files=count,
        max_columns=max_columns,
        time_zone=context.time_zone,
        partition_columns=partition_columns,
        table=table,
    )
    return advice, parsed


def _check_counts(
    *, num_files: int | None, max_columns: int | None, sample_size: int | None
) -> None:
    for name, given in (
        ("num_files", num_files),
        ("max_columns", max_columns),
        ("sample_size", sample_size),
    ):
        if given is not None and (
            isinstance(given, bool) or not isinstance(given, int) or given < 1
        ):
            raise InvalidArgumentError(f"{name} must be a positive int (or None), got {given!r}")


@dataclass(frozen=True)
class _Source:
    """What is sampled, and what the table says of it: partitions, file size, rows, bytes."""

    frame: DataFrame
    partition_columns: tuple[str, ...] = ()
    target: int = DEFAULT_TARGET_FILE_SIZE
    rows: int | None = None
    bytes: int | None = None


def _filtered_columns(filters: Sequence[ParsedFilter], types: Mapping[str, str]) -> set[str]:
    """The table's columns the ``filters`` name (in the table's spelling)."""
    wanted = set()
    for parsed in filters:
        for name in parsed.columns:
            try:
                wanted.add(resolve_column(name, list(types), kind="column"))
            except InvalidArgumentError:
                continue  # Spark will say so on the real query; the advisor cannot use it
    return wanted


def _canonical(type_name: str) -> str:
    try:
        return canonical_type_name(type_name)
    except InvalidArgumentError:
        return type_name  # statistics leave it alone; it is never a clustering column
