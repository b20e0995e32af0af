"""The Spark side of a clustering run: sizing the input, laying partitions out, writing files.

What the run writes goes into its own directory under the table root
(:attr:`zorder.table.Run.directory`); :mod:`zorder.table.delta.commit` then reads
the footers and commits the files. Classic sessions and Spark Connect take
the same path except where noted: a Connect client holds no JVM handles.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlparse

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import LongType, StructField, StructType

from zorder.curves.kinds import (
    BLOOM_ROWS_SLACK,
    BloomColumn,
    bloom_filter_bytes,
    rows_per_row_group,
)
from zorder.curves.partitions import logged_partitions
from zorder.errors import InvalidArgumentError
from zorder.spark.committer import COMMIT_PROTOCOL, COMMIT_PROTOCOL_SETTING, FILE_COLUMN_OPTION
from zorder.spark.compat import arrow_frame, arrow_schema, collect_arrow
from zorder.spark.failures import filter_failures
from zorder.spark.guard import check_spark_parse
from zorder.spark.layout import LaidOut
from zorder.spark.progress import is_connect
from zorder.spark.scan import spark_schema, stored_frame, stored_schema
from zorder.table import TableSnapshot
from zorder.table.clustering import file_number

__all__ = [
    "LOCAL_WRITE_OPTIONS",
    "bloom_filter_bytes",
    "bloom_filter_options",
    "chosen_by_spark",
    "estimated_bytes",
    "file_number",
    "logged_partitions",
    "planned_bytes",
    "rows_per_row_group",
    "write_run",
]

_log = logging.getLogger(__name__)

# Key UDFs compute a batch in about 0.2 us a row, so Spark's default of 10,000
# rows a batch leaves the per-batch round trip a large share of the time; 50,000
# measured fastest (benchmarks/product.py). Strings reach the UDFs cut to 256
# characters, which bounds a batch's size.
_ARROW_BATCH_ROWS = "50000"


def planned_bytes(df: DataFrame) -> int | None:
    """Spark's estimate of the input size from the optimized plan's statistics (no job), or
    None: unknown, or a Connect client, which cannot reach the plan."""
    if is_connect(df.sparkSession):
        return None
    try:
        stats = df._jdf.queryExecution().optimizedPlan().stats()
        size = int(str(stats.sizeInBytes()))  # a Scala BigInt, which py4j may give as an int
    except Exception as error:  # a plan whose statistics cannot be computed
        _log.info("no size estimate from Spark's plan (%s)", error)
        return None
    return size if 0 < size < 1 << 50 else None


def estimated_bytes(df: DataFrame) -> int:
    """:func:`planned_bytes`, else rows x a sampled row width (a count and a small job)."""
    size = planned_bytes(df)
    if size is not None:
        return size
    rows = df.count()
    sample = collect_arrow(df.limit(1000))
    return int(rows * sample.nbytes / max(1, sample.num_rows))


# Into a local directory, Hadoop's default LocalFileSystem writes a checksum file
# beside each file (which remove_writer_markers deletes again) and, without
# Hadoop's native library (pyspark ships none), sets every file's permissions by
# running chmod in a child process. Its raw filesystem writes no checksum files,
# so half the processes: 0.2 s of a 2 s partitioned optimize of 75 files
# (benchmarks/partitions.py). Writer options reach only this write's Hadoop
# configuration; the cache of filesystems, keyed by scheme alone, would
# otherwise give the session's own.
LOCAL_WRITE_OPTIONS = {
    "fs.file.impl": "org.apache.hadoop.fs.RawLocalFileSystem",
    "fs.file.impl.disable.cache": "true",
}

_EXCLUDED_RULES = "spark.sql.optimizer.excludedRules"
_ELIMINATE_SORTS = "org.apache.spark.sql.catalyst.optimizer.EliminateSorts"


@contextmanager
def _write_settings(spark: SparkSession, *, files_by_column: bool) -> Iterator[None]:
    """Settings for the clustering write, restored afterwards.

    Parquet as Delta readers expect it (INT64 microsecond timestamps, not
    INT96; dates and timestamps as they are, in the proleptic Gregorian
    calendar the Delta protocol stores, where Spark 3.5 would refuse ancient
    values by default; the field ids of a column-mapped table's schema written); larger
    Arrow batches for the key UDFs unless the session chose a size itself;
    zorder's commit protocol when tasks write several files by a file column
    (and the key sort kept: :func:`zorder.spark.layout.in_files`).
    """
    wanted = {
        "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
        "spark.sql.parquet.fieldId.write.enabled": "true",
        "spark.sql.parquet.datetimeRebaseModeInWrite": "CORRECTED",
        "spark.sql.parquet.int96RebaseModeInWrite": "CORRECTED",
    }
    if files_by_column:
        wanted[COMMIT_PROTOCOL_SETTING] = COMMIT_PROTOCOL
        # The rows come sorted by key, and the writer sorts them by file again (stably, and
        # cheaply: they are grouped already); Spark's optimizer would drop the key sort as
        # redundant under the writer's.
        excluded = [r for r in (spark.conf.get(_EXCLUDED_RULES, None) or "").split(",") if r]
        wanted[_EXCLUDED_RULES] = ",".join(dict.fromkeys([*excluded, _ELIMINATE_SORTS]))
    batch_rows = "spark.sql.execution.arrow.maxRecordsPerBatch"
    if spark.conf.get(batch_rows, None) is None:
        wanted[batch_rows] = _ARROW_BATCH_ROWS
    previous: dict[str, str | None] = {key: spark.conf.get(key, None) for key in wanted}
    for key, value in wanted.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, old in previous.items():
            if old is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, old)


# Parquet's bound on one bloom filter (parquet-java's own, 128 MiB) and its default cap.
_BLOOM_MAX_BYTES = 128 << 20
_BLOOM_DEFAULT_MAX_BYTES = 1 << 20


def bloom_filter_options(
    blooms: Sequence[BloomColumn], stored: Mapping[str, str], rows_per_file: int | None
) -> dict[str, str]:
    """The Parquet writer options that give each file one bloom filter per row group on the
    columns of ``blooms`` (``stored``: the name each has in the files).

    Each filter is sized for every row of the largest file distinct, twice over
    (``rows_per_file`` planned; the cells are cut at sampled quantiles, so a file may
    hold more), at the column's rate: an id column's values are nearly all distinct in a
    file. (parquet-java's adaptive filters, which pick the smallest of several candidate
    sizes that holds the values written, size nothing once a distinct count is given,
    and chose the same size for an id here.) Parquet's 1 MiB default when the rows are
    unknown. Dictionary encoding is off for these columns:
    Parquet's writer writes no filter for a chunk it dictionary-encodes throughout, which
    it does whenever a file's values fit one dictionary page (10,000 ids of 32 characters
    do); for an id column that costs about 2% of its bytes (measured on md5 ids repeated
    four times, snappy-compressed).
    """
    if not blooms:
        return {}
    rows = BLOOM_ROWS_SLACK * rows_per_file if rows_per_file else None
    top = _BLOOM_DEFAULT_MAX_BYTES
    if rows is not None:
        top = min(_BLOOM_MAX_BYTES, bloom_filter_bytes(rows, min(b.fpp for b in blooms)))
    options = {"parquet.bloom.filter.max.bytes": str(top)}
    for bloom in blooms:
        name = stored.get(bloom.column, bloom.column)
        # The option's key reads a dot as a nested field's path, and Hadoop trims it.
        if "." in name or name != name.strip():
            raise InvalidArgumentError(
                f"bloom filter column {bloom.column!r} is stored as {name!r}, which Parquet's "
                "writer options cannot name (a dot reads as a nested field's path, blanks "
                "around it are trimmed): rename the column (or use column mapping) to give "
                "it a bloom filter"
            )
        options[f"parquet.bloom.filter.enabled#{name}"] = "true"
        options[f"parquet.enable.dictionary#{name}"] = "false"
        options[f"parquet.bloom.filter.fpp#{name}"] = repr(bloom.fpp)
        if rows:
            options[f"parquet.bloom.filter.expected.ndv#{name}"] = str(rows)
    return options


def write_run(
    laid_out: LaidOut,
    location: str,
    *,
    snapshot: TableSnapshot | None,
    partition_by: Sequence[str],
    blooms: Sequence[BloomColumn] = (),
    rows_per_file: int | None = None,
) -> list[str]:
    """Write ``laid_out`` as Parquet under ``location``; returns the columns the files hold,
    in the table's order (Delta's ``dataSkippingNumIndexedCols`` counts the table's first).

    Into an existing table the files hold its own (under column mapping,
    physical) names. Each file goes into its partition's directory, named
    after its number in the run: unique within the run. ``blooms``: the columns whose
    files carry bloom filters, sized for ``rows_per_file`` (:func:`bloom_filter_options`).
    """
    frame = laid_out.frame
    if snapshot is not None:
        frame = stored_frame(snapshot, frame)
    partitions = [snapshot.schema.stored_name(c) if snapshot else c for c in partition_by]
    file_column = laid_out.file_column
    with _write_settings(frame.sparkSession, files_by_column=file_column is not None):
        writer = frame.write.mode("error")  # "error": the one spelling Spark Connect accepts too
        if urlparse(location).scheme in ("", "file"):
            writer = writer.options(**LOCAL_WRITE_OPTIONS)
        stored = {
            b.column: snapshot.schema.stored_name(b.column) if snapshot else b.column
            for b in blooms
        }
        writer = writer.options(**bloom_filter_options(blooms, stored, rows_per_file))
        if file_column is not None:  # the last directory, which the commit protocol takes out
            writer = writer.option(FILE_COLUMN_OPTION, file_column)
            partitions = [*partitions, file_column]
        if partitions:
            writer = writer.partitionBy(*partitions)
        writer.parquet(location)
    if snapshot is None:  # a new table: the DataFrame's order is the table's
        return list(laid_out.rows.columns)
    return [f.name for f in stored_schema(snapshot).fields]


def chosen_by_spark(
    spark: SparkSession, snapshot: TableSnapshot, partitions: Sequence[tuple[Any, ...]], where: str
) -> set[tuple[Any, ...]]:
    """The partitions whose values satisfy ``where`` (checked by
    :func:`~zorder.table.partition_filters.check_partition_where`), as Spark itself
    evaluates it on a small DataFrame of the partitions' values: one job. For a ``where``
    the exact in-process evaluator refuses (:func:`~zorder.arrow.engine.chosen_here`
    decides the rest, in the run's zone and ANSI meaning)."""
    check_spark_parse(spark, where)
    columns = snapshot.partition_columns
    index = f"__zorder_partition_{uuid.uuid4().hex}"
    fields = {f.name: f for f in spark_schema(snapshot).fields}
    schema = StructType([StructField(index, LongType(), False), *[fields[c] for c in columns]])
    # Through Arrow, so that no Python worker parses the rows (executors need no Python).
    names = [f.name for f in schema.fields]
    rows = [dict(zip(names, (i, *values), strict=True)) for i, values in enumerate(partitions)]
    table = pa.Table.from_pylist(rows, schema=arrow_schema(schema))
    with filter_failures(where):
        kept = collect_arrow(arrow_frame(spark, table, schema).where(where).select(index))
    return {partitions[i] for i in kept.column(0).to_pylist()}
