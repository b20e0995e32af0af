"""A snapshot's rows read by Spark: its files as plain Parquet, with the table's schema.

No Delta jars: the files come from the log (:mod:`zorder.table.delta.snapshot`),
partition values are added as typed literals, rows a deletion vector deletes
are anti-joined away by position, and a column-mapped table's physical
columns are read and renamed to their logical names.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
import uuid
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import unquote

import numpy as np
import numpy.typing as npt
import pyarrow as pa
from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, DataFrameReader, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    DataType,
    DoubleType,
    FloatType,
    LongType,
    MapType,
    StructField,
    StructType,
)

from zorder.columns import sql_identifier
from zorder.errors import BrokenTableError, SparkVersionError, UnsupportedTableError
from zorder.skipping.sql import sql_literal
from zorder.spark.compat import (
    TYPE_WIDENING_SPARK,
    arrow_frame,
    arrow_schema,
    metadata_column,
    spark_version,
)
from zorder.spark.storage import spark_paths, unescaped
from zorder.table import DataFile, TableSnapshot, by_partition
from zorder.table.delta.features import (
    ALLOWED_TYPE_CHANGES,
)

__all__ = [
    "read_files",
    "read_partitions",
    "schema_frame",
    "spark_schema",
    "stored_frame",
    "stored_schema",
]


# parquet-mr's own filters on footer bounds, column indexes and bloom filters, as per-read
# options (they reach the Hadoop configuration of that scan only). Other writers' double
# bounds may leave NaN out, so parquet-mr would drop NaN rows that `y > 1000` must keep.
_NAN_UNSAFE_FOOTER_FILTERS = {
    "parquet.filter.stats.enabled": "false",
    "parquet.filter.columnindex.enabled": "false",
    "parquet.filter.bloom.enabled": "false",
}
# parquet-mr's dictionary filter matches a float by Float.equals, for which -0.0 is not 0.0:
# a row group whose dictionary holds -0.0 is dropped for `f = 0`, which Spark's own
# comparison keeps (measured on Spark 4.1, any writer). Off for every table with floats.
_SIGNED_ZERO_UNSAFE_FILTERS = {"parquet.filter.dictionary.enabled": "false"}


def spark_schema(snapshot: TableSnapshot) -> StructType:
    """The table's schema as Spark types."""
    return _struct(snapshot.schema.json)


def stored_schema(snapshot: TableSnapshot) -> StructType:
    """The schema as the files hold it: physical names at every level under mapping."""
    if snapshot.schema.mapping is None:
        return spark_schema(snapshot)
    return _struct(snapshot.schema.mapping.physical_schema_json())


@functools.lru_cache(maxsize=64)
def _struct(schema_json: str) -> StructType:

    return StructType.fromJson(json.loads(schema_json))


def stored_frame(snapshot: TableSnapshot, df: DataFrame) -> DataFrame:
    """``df`` (the table's logical columns) with the names and nested names files hold;
    columns the table lacks (a run's file numbers) pass through as they are."""
    if snapshot.schema.mapping is None:
        return df

    stored = {f.name: f for f in stored_schema(snapshot).fields}
    columns = []
    for logical in spark_schema(snapshot).fields:
        target = stored[snapshot.schema.stored_name(logical.name)]  # in id mode with its field ids
        cast = F.col(sql_identifier(logical.name)).cast(target.dataType)
        columns.append(cast.alias(target.name, metadata=target.metadata))
    table_columns = {f.name for f in spark_schema(snapshot).fields}
    columns += [F.col(sql_identifier(c)) for c in df.columns if c not in table_columns]
    return df.select(*columns)


def stored_column(snapshot: TableSnapshot, field: StructField) -> Column:
    """``field`` of a frame read from files, under its logical name and type."""

    if snapshot.schema.mapping is None:
        return F.col(sql_identifier(field.name))
    stored = F.col(sql_identifier(snapshot.schema.stored_name(field.name)))
    return stored.cast(field.dataType).alias(field.name)


def empty_frame(spark: SparkSession, schema: StructType) -> DataFrame:
    """An empty DataFrame of ``schema``, made through Arrow: from a Python list Spark would
    start Python workers on the executors to read it, and they need none otherwise."""
    try:
        table = arrow_schema(schema).empty_table()
    except TypeError:  # a type Arrow cannot hold (pyspark's error is a TypeError)
        return spark.createDataFrame([], schema)
    return arrow_frame(spark, table, schema)


def schema_frame(snapshot: TableSnapshot, spark: SparkSession) -> DataFrame:
    """An empty DataFrame with the table's schema: to check names and types, lists no file."""
    return empty_frame(spark, spark_schema(snapshot))


def read_files(
    snapshot: TableSnapshot, spark: SparkSession, keep: npt.NDArray[np.bool_] | None
) -> DataFrame:
    """The rows of the files whose ``keep`` flag is set (all files for None).

    Spark pushes filters down to parquet-mr, which skips row groups and
    pages on the files' own footer bounds; where a double column's bounds
    may leave NaN out (files zorder does not vouch for), that skipping is
    turned off for this read, so the rows always answer as Spark defines.
    """
    _refuse_unknown_type_changes(snapshot, spark)
    files = snapshot.files_where(keep)
    if not files:
        return empty_frame(spark, spark_schema(snapshot))
    reader = _reader(snapshot, spark, keep)
    paths = _spark_uris(snapshot, spark, files)
    if not snapshot.partition_columns:
        frame = _parquet(snapshot, reader, files, paths)
        frame = _without_deleted_rows(snapshot, frame, files, paths)
        if snapshot.schema.mapping is None:
            return frame
        return frame.select(*[stored_column(snapshot, f) for f in spark_schema(snapshot).fields])
    return _union_of_partitions(snapshot, reader, by_partition(files), paths)


def read_partitions(
    snapshot: TableSnapshot,
    spark: SparkSession,
    keep: npt.NDArray[np.bool_],
    partitions: Sequence[tuple[Any, ...]],
    *,
    index_column: str,
) -> DataFrame:
    """The rows of the files whose ``keep`` flag is set, each with its partition's index.

    The long column ``index_column`` holds the index in ``partitions``
    (values as :attr:`DataFile.partition` gives them) of each row's
    partition: a partition key that costs no expression. Every kept file
    must lie in one of ``partitions``.
    """
    _refuse_unknown_type_changes(snapshot, spark)
    indices = {values: index for index, values in enumerate(partitions)}
    files = snapshot.files_where(keep)
    groups = by_partition(files)
    if not groups:
        schema = StructType(
            [*spark_schema(snapshot).fields, StructField(index_column, LongType(), False)]
        )
        return empty_frame(spark, schema)
    reader = _reader(snapshot, spark, keep)
    paths = _spark_uris(snapshot, spark, files)
    return _union_of_partitions(snapshot, reader, groups, paths, tags=(index_column, indices))


def _refuse_unknown_type_changes(snapshot: TableSnapshot, spark: SparkSession) -> None:
    """Refuse a table whose columns went through a type change Delta does not allow, or any
    type change where the session's Spark cannot read it.

    Older files keep a widened column's old type, and Spark's Parquet reader
    converts every change Delta allows as Spark's CAST does (Delta Spark
    relies on it alone) from Spark 4.0 on; any other change would fail inside
    the job, or be read as no Delta reader reads it.
    """
    widened, changes = snapshot.type_changes()
    if widened and spark_version(spark) < TYPE_WIDENING_SPARK:
        raise SparkVersionError(
            f"table {snapshot.uri} (version {snapshot.version}) has widened columns "
            f"({'; '.join(widened)}), whose older files Spark {spark.version}'s Parquet reader "
            f"cannot read: reading it with Spark needs Spark 4.0 or newer "
            f"(zorder.to_arrow reads it without Spark). Nothing was read"
        )
    if changes:
        raise UnsupportedTableError(
            f"table {snapshot.uri} (version {snapshot.version}) records type changes Delta's "
            f"type widening does not allow, which Delta Spark refuses to read too: "
            f"{'; '.join(changes)}. Delta allows {ALLOWED_TYPE_CHANGES}. Nothing was read"
        )


def _reader(
    snapshot: TableSnapshot, spark: SparkSession, keep: npt.NDArray[np.bool_] | None
) -> DataFrameReader:
    partitioned = {snapshot.schema.stored_name(c) for c in snapshot.partition_columns}

    data_schema = StructType(
        [f for f in stored_schema(snapshot).fields if f.name not in partitioned]
    )
    if snapshot.schema.mapping is not None and snapshot.schema.mapping.mode == "id":
        # Columns are found by the field ids the schema carries, as Delta requires in id
        # mode. Spark reads this setting from the session when the scan runs, not from the
        # reader's options (tried: a reader option is overridden), and the frame is lazy,
        # so it cannot be restored after the read; it stays on. It changes nothing for a
        # read whose schema carries no Parquet field ids, which Spark's schemas never do
        # unless their author put them there.
        spark.conf.set("spark.sql.parquet.fieldId.read.enabled", "true")
    reader = spark.read.schema(data_schema)
    if _holds_floats(spark_schema(snapshot)):
        reader = reader.options(**_SIGNED_ZERO_UNSAFE_FILTERS)
        trusted = snapshot.nan_free_bounds if keep is None else snapshot.nan_free_bounds[keep]
        if not trusted.all():
            reader = reader.options(**_NAN_UNSAFE_FOOTER_FILTERS)
    return reader


def _union_of_partitions(
    snapshot: TableSnapshot,
    reader: DataFrameReader,
    groups: Mapping[tuple[Any, ...], Sequence[DataFile]],
    paths: Mapping[str, str],
    *,
    tags: tuple[str, Mapping[tuple[Any, ...], int]] | None = None,
) -> DataFrame:
    # Partition values live in the log, not in the files: each partition's files
    # are read together and its values added as typed values. Not as bare literals:
    # Spark's optimizer would fold a filter's expression of one once per partition, and
    # so raise where its own short-circuit never evaluates it (`b IS NULL OR (b IS NULL AND
    # CAST(p AS BIGINT) = 1)` with p = 'a', an ANSI cast error). Guarded by a per-file
    # value it cannot fold, each is evaluated row by row, as a column of Delta's is.
    guard = f"__zorder_partition_guard_{uuid.uuid4().hex}"
    frames = []
    for values, members in groups.items():
        known = dict(zip(snapshot.partition_columns, values, strict=True))
        columns = [
            F.when(F.col(guard), _typed_literal(known[f.name], f.dataType)).alias(f.name)
            if f.name in known
            else stored_column(snapshot, f)
            for f in spark_schema(snapshot).fields
        ]
        if tags is not None:
            name, indices = tags
            columns.append(F.lit(indices[values]).cast("long").alias(name))
        frame = _parquet(snapshot, reader, members, paths)
        size = metadata_column(frame).getField("file_size")
        frame = frame.withColumn(guard, size >= 0)
        frames.append(_without_deleted_rows(snapshot, frame, members, paths).select(*columns))
    return functools.reduce(DataFrame.union, frames)


def _spark_uris(
    snapshot: TableSnapshot, spark: SparkSession, files: Sequence[DataFile]
) -> dict[str, str]:
    """Each file's URI as Spark names it (see :func:`spark_paths`), asked of the session once."""
    uris = spark_paths(spark, [snapshot.file_uri(f) for f in files])
    return {f.path: uri for f, uri in zip(files, uris, strict=True)}


def _parquet(
    snapshot: TableSnapshot,
    reader: DataFrameReader,
    files: Sequence[DataFile],
    paths: Mapping[str, str],
) -> DataFrame:
    """``files`` read by Spark at ``paths``; one storage lacks is named as the table's
    breakage."""
    try:
        return reader.parquet(*[paths[f.path] for f in files])
    except AnalysisException as error:
        if "PATH_NOT_FOUND" not in str(error):
            raise
        raise BrokenTableError(
            f"table {snapshot.uri} (version {snapshot.version}) names data files storage does not "
            f"hold: {error}"
        ) from error


def _without_deleted_rows(
    snapshot: TableSnapshot,
    frame: DataFrame,
    members: Sequence[DataFile],
    paths: Mapping[str, str],
) -> DataFrame:
    """``frame`` (the rows of ``members``, read from ``paths``) less the deleted rows.

    Each row's file and position come from Spark's own ``_metadata`` of the
    scan; the deleted positions (what the deletion vectors hold, no row
    data) travel to the executors as a broadcast table joined against
    them. Files are told apart by their whole path, in the very text
    ``_metadata.file_path`` gives it, so the join compares strings as they
    come, at no cost a row.
    """
    marked = [f for f in members if f.path in snapshot.deleted_positions]
    if not marked:
        return frame

    reported = _reported_paths(snapshot, frame, marked, paths)
    # Fresh names: no column of the table can be taken for them.
    tag = uuid.uuid4().hex
    path_column, position_column = f"__zorder_file_path_{tag}", f"__zorder_row_index_{tag}"
    positions = [snapshot.deleted_positions[f.path] for f in marked]
    deleted = pa.table(
        {
            path_column: pa.array(
                np.repeat(
                    np.array([reported[f.path] for f in marked], dtype=object),
                    [len(p) for p in positions],
                ),
                pa.string(),
            ),
            position_column: pa.array(np.concatenate(positions), pa.int64()),
        }
    )
    spark = frame.sparkSession
    metadata = metadata_column(frame)  # found even when a column is named so
    located = frame.select(
        "*",
        metadata.getField("file_path").alias(path_column),
        metadata.getField("row_index").alias(position_column),
    )
    kept = located.join(
        F.broadcast(arrow_frame(spark, deleted)), [path_column, position_column], "left_anti"
    )
    return kept.drop(path_column, position_column)


def _reported_paths(
    snapshot: TableSnapshot,
    frame: DataFrame,
    marked: Sequence[DataFile],
    paths: Mapping[str, str],
) -> dict[str, str]:
    """Each of ``marked`` (files of ``frame``'s scan, read from ``paths``) as the text its
    rows' ``_metadata.file_path`` holds.

    Spark lists the scan's files without running a job (``inputFiles``); each
    file of the log is found among them by its decoded path, and that entry
    is put in the form Spark 4.1 gives ``_metadata.file_path``. A file not
    found once and only once is refused: its deleted rows would come back.
    """
    listed: dict[str, list[str]] = {}
    for uri in frame.inputFiles():
        listed.setdefault(_path_key(_decoded_path(uri)), []).append(uri)
    reported = {}
    for data_file in marked:
        handed = unescaped(paths[data_file.path])
        found = listed.get(_path_key(_handed_path(handed)), [])
        if len(found) != 1:
            raise UnsupportedTableError(
                f"table {snapshot.uri} (version {snapshot.version}): Spark lists "
                f"{len(found)} files at {handed!r}, which has deleted rows; exactly one is "
                "needed to tell its rows apart. Nothing was read"
            )
        reported[data_file.path] = _metadata_file_path(found[0])
    return reported


# A URI's scheme and authority (java.net.URI's grammar); the rest is its path.
_URI_PREFIX = re.compile(r"^(?:([A-Za-z][A-Za-z0-9+.\-]*):)?(?://([^/?#]*))?")
# The ASCII characters java.net.URI leaves as they are in a path; any other is %XX-quoted.
_PATH_SAFE = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!~*'();:@&=+$,/"
)


def _handed_path(text: str) -> str:
    """The path of ``text`` (a path handed to Spark) as Hadoop's ``new Path(String)`` takes
    it: after a scheme (one only before the first slash) and an authority, not decoded."""
    colon, slash = text.find(":"), text.find("/")
    if colon > 0 and (slash == -1 or colon < slash):
        text = text[colon + 1 :]
    if text.startswith("//") and len(text) > 2:
        end = text.find("/", 2)
        text = "" if end == -1 else text[end:]
    return text


def _decoded_path(uri: str) -> str:
    """The path of ``uri`` (a URI string Spark made), percent-decoding undone."""
    prefix = _URI_PREFIX.match(uri)
    rest = uri[prefix.end() :] if prefix else uri
    return unquote(rest, errors="replace")


def _path_key(path: str) -> str:
    """``path`` with Hadoop's normalisation: no repeated or trailing slash."""
    collapsed = re.sub("/{2,}", "/", path)
    return collapsed.rstrip("/") if len(collapsed) > 1 else collapsed


def _metadata_file_path(uri: str) -> str:
    """The ``_metadata.file_path`` of a file Spark lists as ``uri`` (``inputFiles``).

    Spark 4.1 gives ``new Path(path.toString).toUri.toString``: the path
    decoded, then quoted again by java.net.URI (ASCII outside its path
    characters, and spaces and controls beyond ASCII, as %XX of UTF-8; other
    characters as they are), an empty authority dropped (``file:/x``, never
    ``file:///x``).
    """
    prefix = _URI_PREFIX.match(uri)
    scheme, authority = (prefix.group(1), prefix.group(2)) if prefix else (None, None)
    path = _path_key(_decoded_path(uri))
    quoted = "".join(_quoted(c) for c in path)
    head = f"{scheme}:" if scheme else ""
    if authority:
        head += f"//{authority}"
    return head + quoted


def _quoted(char: str) -> str:
    code = ord(char)
    if code < 0x80:
        return char if char in _PATH_SAFE else f"%{code:02X}"
    if 0x80 <= code <= 0x9F or unicodedata.category(char) in ("Zs", "Zl", "Zp"):
        return "".join(f"%{byte:02X}" for byte in char.encode("utf-8"))
    return char


def _typed_literal(value: Any, data_type: DataType) -> Column:
    """``value`` as a Spark literal of ``data_type`` (NULL too), exactly: never through a zone."""

    return F.expr(f"CAST({sql_literal(value)} AS {data_type.simpleString()})")


def _holds_floats(data_type: DataType) -> bool:
    """Whether ``data_type`` is or holds a float or double (Spark pushes nested fields down too)."""

    if isinstance(data_type, FloatType | DoubleType):
        return True
    if isinstance(data_type, StructType):
        return any(_holds_floats(f.dataType) for f in data_type.fields)
    if isinstance(data_type, ArrayType):
        return _holds_floats(data_type.elementType)
    if isinstance(data_type, MapType):
        return _holds_floats(data_type.keyType) or _holds_floats(data_type.valueType)
    return False
