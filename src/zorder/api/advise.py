"""``advise``: the clustering spec that makes a workload's own filters skip the most rows.

Spark samples the columns the workload filters on (one pass, only the
sampled rows reach the driver); :mod:`zorder.advice` simulates candidate
layouts on the sample with the evaluator :func:`zorder.explain` uses, and
returns the best as a spec that ``zorder.write(..., by=advice.spec)`` and
``zorder.optimize(..., by=advice.spec)`` accept and record in the table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from zorder.advice.advisor import Advice, Candidate, advise_sample
from zorder.advice.workload import read_workload
from zorder.api.jobs import file_count
from zorder.api.read import read
from zorder.api.scanning import session_time_zone, table_storage_options
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
from zorder.table import load_snapshot, normalize_uri
from zorder.table.clustering import recorded_target_file_size

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["Advice", "Candidate", "advise"]


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
    (default 1,000 a file, at least 100,000).

    Returns :class:`Advice`: ``spec`` (pass it as ``by=``), ``expected_scanned``
    (the mean fraction of rows the workload would scan), the ``candidates``
    compared and ``summary()``.
    """
    from pyspark.sql import DataFrame, SparkSession

    for name, given in (("num_files", num_files), ("max_columns", max_columns)):
        if given is not None and (
            isinstance(given, bool) or not isinstance(given, int) or given < 1
        ):
            raise InvalidArgumentError(f"{name} must be a positive int (or None), got {given!r}")
    if sample_size is not None and (not isinstance(sample_size, int) or sample_size < 1):
        raise InvalidArgumentError(
            f"sample_size must be a positive int (or None), got {sample_size!r}"
        )
    partition_columns: tuple[str, ...] = ()
    target = DEFAULT_TARGET_FILE_SIZE
    rows: int | None = None
    if isinstance(source, DataFrame):
        frame = source
        session = frame.sparkSession
    elif isinstance(source, str):
        active = spark or SparkSession.getActiveSession()
        if active is None:
            raise InvalidArgumentError(
                "advise samples a table with Spark: pass spark= or start a SparkSession"
            )
        session = active
        uri = normalize_uri(source)
        snapshot = load_snapshot(uri, table_storage_options(uri, storage_options, session))
        partition_columns = tuple(snapshot.partition_columns)
        target = recorded_target_file_size(snapshot.configuration) or target
        rows = snapshot.total_rows
        frame = read(session, source, storage_options=storage_options)
    else:
        raise InvalidArgumentTypeError(
            f"source must be a Delta table path or a DataFrame, got {type(source).__name__}"
        )
    types = {f.name: str(f.dataType.simpleString()) for f in frame.schema.fields}
    parsed = read_workload(workload, types)
    wanted = set()
    for text in parsed.filters:
        for name in referenced_columns(text):
            try:
                wanted.add(resolve_column(name, list(types), kind="column"))
            except InvalidArgumentError:
                continue  # Spark will say so on the real query; the advisor cannot use it
    # Columns of other types (maps, arrays, structs) have no statistics to simulate: filters
    # on them keep every file, in the simulation as on the table.
    columns = [
        ClusteringColumn(c, _canonical(types[c]))
        for c in types
        if c in wanted or c in partition_columns
    ]
    clusterable = [c for c in columns if c.type_name in SUPPORTED_TYPES]
    count = num_files if num_files is not None else file_count(None, target, estimated_bytes(frame))
    size = sample_size if sample_size is not None else sample_size_for(count)
    sample = sample_columns(frame, clusterable, sample_size=size, seed=seed, rows=rows)
    return advise_sample(
        sample,
        {name: _canonical(type_name) for name, type_name in types.items()},
        parsed,
        num_files=count,
        max_columns=max_columns,
        time_zone=session_time_zone(session),
        partition_columns=partition_columns,
    )


def _canonical(type_name: str) -> str:
    try:
        return canonical_type_name(type_name)
    except InvalidArgumentError:
        return type_name  # statistics leave it alone; it is never a clustering column
