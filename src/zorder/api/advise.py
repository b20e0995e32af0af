"""``advise``: the clustering spec that makes a workload's own filters skip the most rows.

Spark samples the columns the workload filters on (one pass, only the
sampled rows reach the driver); :mod:`zorder.advice` simulates candidate
layouts on the sample with the evaluator :func:`zorder.explain` uses, and
returns the best as a spec that ``zorder.write(..., by=advice.spec)`` and
``zorder.optimize(..., by=advice.spec)`` accept and record in the table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from zorder.advice.advisor import Advice, Candidate, advise_sample
from zorder.advice.workload import read_workload
from zorder.api.jobs import file_count
from zorder.api.scanning import required_session, session_time_zone
from zorder.api.table import Table
from zorder.columns import resolve_column
from zorder.curves.encodings import SUPPORTED_TYPES, canonical_type_name
from zorder.errors import InvalidArgumentError, InvalidArgumentTypeError
from zorder.sizes import DEFAULT_TARGET_FILE_SIZE
from zorder.skipping.sql import referenced_columns
from zorder.spark.keys import (
    DEFAULT_SAMPLE_SEED,
    ClusteringColumn,
    sample_columns,
    sample_size_for,
)
from zorder.spark.writes import estimated_bytes
from zorder.table.clustering import recorded_target_file_size

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["Advice", "Candidate", "advise"]

# Advice simulates every candidate's files on the sample and counts what each query
# reads: a one-off whose estimates want more rows than cutting files does.
ADVICE_SAMPLE_SIZE = 100_000


def advise(
    source: str | DataFrame,
    workload: str | Path | Sequence[str],
    *,
    spark: SparkSession | None = None,
    num_files: int | None = None,
    max_columns: int | None = None,
    sample_size: int | None = None,
    seed: int = DEFAULT_SAMPLE_SEED,
    storage_options: Mapping[str, str] | None = None,
) -> Advice:
    """The layout that lets ``workload`` skip the most rows of ``source``.

    ``source`` is a Delta table's path or a DataFrame; ``workload`` a sequence
    of SQL filters or queries (the ``WHERE`` conjuncts on the table's columns
    are taken, see :mod:`zorder.advice.workload`), or a path to a ``.sql``
    file of ``;``-separated statements. ``num_files`` is the file count to
    plan for (default: what a write or optimize of the data would make with
    the table's ``delta.targetFileSize``, else 128 MB a file); ``max_columns``
    caps the clustering columns (default 8). ``sample_size`` rows are sampled
    (default 1,000 a file, at least 100,000, more than a write samples).

    Returns :class:`Advice`: ``spec`` (pass it as ``by=``), ``expected_scanned``
    (the mean fraction of rows the workload would scan), the ``candidates``
    compared and ``summary()``.
    """
    _check_counts(num_files=num_files, max_columns=max_columns, sample_size=sample_size)
    source_of = _sampled_source(source, spark, storage_options)
    frame = source_of.frame
    partition_columns = source_of.partition_columns
    types = {f.name: str(f.dataType.simpleString()) for f in frame.schema.fields}
    parsed = read_workload(workload, types)
    wanted = _filtered_columns(parsed.filters, types)
    # Columns of other types (maps, arrays, structs) have no statistics to simulate: filters
    # on them keep every file, in the simulation as on the table.
    columns = [
        ClusteringColumn(c, _canonical(types[c]))
        for c in types
        if c in wanted or c in partition_columns
    ]
    clusterable = [c for c in columns if c.type_name in SUPPORTED_TYPES]
    count = num_files
    if count is None:
        count = file_count(None, source_of.target, estimated_bytes(frame))
    size = (
        sample_size if sample_size is not None else max(ADVICE_SAMPLE_SIZE, sample_size_for(count))
    )
    sample = sample_columns(frame, clusterable, sample_size=size, seed=seed, rows=source_of.rows)
    return advise_sample(
        sample,
        {name: _canonical(type_name) for name, type_name in types.items()},
        parsed,
        num_files=count,
        max_columns=max_columns,
        time_zone=session_time_zone(frame.sparkSession),
        partition_columns=partition_columns,
    )


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
    """What is sampled, and what the table says of it: partitions, file size, row count."""

    frame: DataFrame
    partition_columns: tuple[str, ...] = ()
    target: int = DEFAULT_TARGET_FILE_SIZE
    rows: int | None = None


def _sampled_source(
    source: str | DataFrame, spark: SparkSession | None, storage_options: Mapping[str, str] | None
) -> _Source:
    from pyspark.sql import DataFrame

    if isinstance(source, DataFrame):
        return _Source(source)
    if not isinstance(source, str):
        raise InvalidArgumentTypeError(
            f"source must be a Delta table path or a DataFrame, got {type(source).__name__}"
        )
    session = required_session(spark, "advise, which samples the table with Spark,")
    # One handle, one version: the rows sampled are those of the version described.
    pinned = Table(source, storage_options=storage_options, spark=session).snapshot()
    snapshot = pinned.table_snapshot
    return _Source(
        pinned.scan().to_spark(session),
        partition_columns=tuple(snapshot.partition_columns),
        target=recorded_target_file_size(snapshot.configuration) or DEFAULT_TARGET_FILE_SIZE,
        rows=snapshot.total_rows,
    )


def _filtered_columns(filters: Sequence[str], types: Mapping[str, str]) -> set[str]:
    """The table's columns the ``filters`` name (in the table's spelling)."""
    wanted = set()
    for text in filters:
        for name in referenced_columns(text):
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
