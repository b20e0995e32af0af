"""A snapshot's rows read in this process, without a JVM: pyarrow file by file, or DuckDB
with a prefilter.

As Spark reads the files: a column a file lacks is NULL throughout,
partition columns hold the log's values, deleted rows are left out, and a
column-mapped table's physical columns are relabelled.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import logging
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from zorder.errors import BrokenTableError, FilterEvaluationError
from zorder.skipping.rows import quoted_name
from zorder.skipping.translate import Translation
from zorder.skipping.zones import session_zone
from zorder.table import DataFile, TableSnapshot, by_partition, has_scheme
from zorder.table.storage import Storage

_log = logging.getLogger(__name__)

if TYPE_CHECKING:
    import duckdb

__all__ = [
    "LegacyCalendarError",
    "check_constants",
    "in_table_types",
    "legacy_calendar",
    "read_file",
    "read_in_order",
    "read_where",
    "translated_mask",
]

_DUCKDB_GLOB = "*?["
# Files read at once: enough to overlap storage latency, few enough that a
# LIMIT stops reading soon after it is met.
_READERS = 8


def read_file(
    snapshot: TableSnapshot,
    data_file: DataFile,
    columns: Sequence[str],
    *,
    refuse_legacy_calendar: bool = False,
) -> pa.Table:
    """``columns`` of one file's rows, in the table's Arrow types, read in-process.

    As Spark reads the file: a column the file lacks is NULL throughout,
    and partition columns hold the log's values for the file.
    ``refuse_legacy_calendar``: raise LegacyCalendarError for a file whose dates and
    timestamps Spark reads in its legacy hybrid calendar (:func:`legacy_calendar`),
    which this read does not rebase.
    """
    import pyarrow.parquet as pq

    if has_scheme(data_file.path):  # an absolute path, reached with the table's options
        filesystem, location = Storage.of(data_file.path, snapshot.storage.options).filesystem()
    else:
        filesystem, root = snapshot.storage.filesystem()
        location = f"{root.rstrip('/')}/{data_file.path}"
    partition = dict(zip(snapshot.partition_columns, data_file.partition, strict=True))
    try:
        source = filesystem.open_input_file(location)
    except FileNotFoundError as error:
        raise BrokenTableError(
            f"table {snapshot.uri} (version {snapshot.version}) names the data file "
            f"{data_file.path!r}, which storage does not hold"
        ) from error
    with source:
        # INT96 (older Spark writers') as microseconds: nanoseconds overflow past 2262.
        parquet = pq.ParquetFile(source, coerce_int96_timestamp_unit="us")
        if refuse_legacy_calendar and legacy_calendar(parquet.metadata):
            raise LegacyCalendarError(
                "Spark reads this file's dates and timestamps in its legacy hybrid calendar"
            )
        wanted = [c for c in columns if c not in partition]
        if snapshot.schema.mapping is None:
            present = set(parquet.schema_arrow.names)
            names = {c: c for c in wanted if c in present}
        else:
            try:
                names = snapshot.schema.mapping.stored_columns(parquet.schema_arrow, wanted)
            except ValueError as error:
                raise BrokenTableError(
                    f"table {snapshot.uri} (version {snapshot.version}), file {data_file.path!r}: "
                    f"{error}"
                ) from error
        stored = list(names)
        read = parquet.read(columns=[names[c] for c in stored], use_threads=False)
    rows = read.num_rows if stored else parquet.metadata.num_rows
    if snapshot.schema.mapping is not None and stored:
        # To the physical type first: nested fields added or dropped since the file
        # was written are matched by name; then the logical names, by position.
        physical, logical = snapshot.schema.stored_arrow, snapshot.schema.arrow
        read = pa.Table.from_pydict(
            {
                c: snapshot.schema.mapping.logical_array(
                    read.column(i).cast(physical.field(snapshot.schema.stored_name(c)).type),
                    logical.field(c).type,
                )
                for i, c in enumerate(stored)
            }
        )
    table = in_table_types(snapshot, read, columns, partition, rows)
    deleted = snapshot.deleted_positions.get(data_file.path)
    if deleted is None:
        return table
    keep = np.ones(rows, dtype=bool)
    keep[deleted[deleted < rows]] = False
    return table.filter(pa.array(keep))


# What Spark (3.0 and newer) writes into a file whose dates or timestamps it wrote in
# its legacy hybrid Julian/Gregorian calendar; older Spark wrote them so throughout.
_LEGACY_DATETIME = b"org.apache.spark.legacyDateTime"
_LEGACY_INT96 = b"org.apache.spark.legacyINT96"
_SPARK_VERSION_KEY = b"org.apache.spark.version"
_DATETIME_TYPES = ("DATE", "TIMESTAMP", "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS")


class LegacyCalendarError(ValueError):
    """A file whose dates or timestamps Spark reads in its legacy calendar (not rebased
    here): :func:`read_file`'s refusal, when asked for."""


def legacy_calendar(metadata: Any) -> bool:
    """Whether Spark may read the dates or timestamps of the file of ``metadata`` (pyarrow's
    FileMetaData) in its legacy hybrid calendar, as Spark decides it
    (``DataSourceUtils``): dates and timestamps written by Spark before 3.0, INT96
    timestamps by Spark before 3.1, or either marked so by a later Spark; INT96 from another
    writer (which Spark rebases or refuses by a setting). A file without such columns
    is never one (Databricks marks every file)."""
    schema = metadata.schema
    kinds = [schema.column(i) for i in range(len(schema))]
    int96 = any(c.physical_type == "INT96" for c in kinds)
    datetimes = any(
        c.physical_type != "INT96"
        and (
            str(c.logical_type.type) in _DATETIME_TYPES or str(c.converted_type) in _DATETIME_TYPES
        )
        for c in kinds
    )
    if not (int96 or datetimes):
        return False
    pairs = metadata.metadata or {}
    version = pairs.get(_SPARK_VERSION_KEY)
    if version is None:
        return int96
    written = tuple(int(p) for p in re.findall(rb"\d+", version)[:2]) or (0,)
    if datetimes and (written < (3, 0) or _LEGACY_DATETIME in pairs):
        return True
    return int96 and (written < (3, 1) or _LEGACY_INT96 in pairs)


def read_in_order(
    read: Callable[[DataFile], pa.Table], files: Sequence[DataFile]
) -> Iterator[pa.Table]:
    """``read`` of each file, a few at a time on threads, yielded in the files' order.

    Stopping the iteration cancels the reads not yet started.
    """
    if not files:
        return
    with ThreadPoolExecutor(max_workers=min(_READERS, len(files))) as pool:
        pending: list[Future[pa.Table]] = []
        position = 0
        try:
            while position < len(files) or pending:
                while position < len(files) and len(pending) < _READERS:
                    pending.append(pool.submit(read, files[position]))
                    position += 1
                yield pending.pop(0).result()
        finally:
            for future in pending:
                future.cancel()


def in_table_types(
    snapshot: TableSnapshot,
    stored: pa.Table,
    columns: Sequence[str],
    partition: Mapping[str, Any],
    rows: int,
) -> pa.Table:
    """``columns`` of ``rows`` rows, as Spark reads them from files, in the table's types.

    A partition column holds the log's value, a column of ``stored`` is
    cast, and a column the files lack is NULL throughout.
    """
    schema = snapshot.schema.arrow
    arrays = []
    for name in columns:
        target = schema.field(name).type
        if name in partition:
            arrays.append(pa.repeat(pa.scalar(partition[name], target), rows))
        elif name in stored.column_names:
            arrays.append(stored.column(name).cast(target, safe=False))
        else:
            arrays.append(pa.nulls(rows, target))
    if not arrays:  # no column, still ``rows`` rows: a deletion vector's mask spans them
        return pa.table({"rows": pa.nulls(rows)}).select([])
    return pa.Table.from_arrays(arrays, schema=pa.schema([schema.field(c) for c in columns]))


def read_where(
    snapshot: TableSnapshot, files: Sequence[DataFile], columns: Sequence[str], where: str
) -> pa.Table | None:
    """``columns`` of the rows of local ``files`` that satisfy the SQL ``where``, or None.

    DuckDB reads them: it evaluates ``where`` on the columns it names
    first and decodes the other columns only for the rows that pass, which
    a lookup among long strings gains most from. ``where`` must mean the
    same to DuckDB as to Spark and name only stored (not partition)
    columns; the caller filters the result exactly afterwards. None when
    DuckDB cannot do it here (remote storage, a path it would read as a glob
    pattern, a column no file holds): then read the files with :func:`read_file`.
    """
    if has_scheme(snapshot.uri) or any(has_scheme(f.path) for f in files):
        return None
    # DuckDB takes a path with these for a glob pattern, with no escape: 't?x/f.parquet'
    # would read 'tAx/f.parquet' too.
    if any(c in snapshot.uri for c in _DUCKDB_GLOB) or any(
        c in f.path for f in files for c in _DUCKDB_GLOB
    ):
        return None
    if snapshot.schema.mapping is not None:  # the prefilter names logical columns
        return None
    import duckdb

    partitioned = set(snapshot.partition_columns)
    stored = [c for c in columns if c not in partitioned]
    select = ", ".join(quoted_name(c) for c in stored) or "1"
    query = (
        f"SELECT {select} FROM read_parquet(?, union_by_name = true, "
        f"hive_partitioning = false) WHERE {where}"
    )
    # A file with deleted rows is read alone, with each row's position in the file.
    positioned = (
        f"SELECT {select}, file_row_number FROM read_parquet(?, union_by_name = true, "
        f"hive_partitioning = false, file_row_number = true) WHERE {where}"
    )
    connection = _duckdb().cursor()  # its own connection to the one in-memory database
    parts = []
    try:
        for values, members in by_partition(files).items():
            partition = dict(zip(snapshot.partition_columns, values, strict=True))
            whole = [f for f in members if f.path not in snapshot.deleted_positions]
            found = []
            if whole:
                paths = [f"{snapshot.uri.rstrip('/')}/{f.path}" for f in whole]
                found.append(connection.sql(query, params=[paths]).to_arrow_table())
            for f in members:
                if f.path in snapshot.deleted_positions:
                    path = f"{snapshot.uri.rstrip('/')}/{f.path}"
                    rows = connection.sql(positioned, params=[[path]]).to_arrow_table()
                    gone = pc.is_in(
                        rows.column("file_row_number"), pa.array(snapshot.deleted_positions[f.path])
                    )
                    found.append(rows.filter(pc.invert(gone)).drop_columns(["file_row_number"]))
            for table in found:
                parts.append(in_table_types(snapshot, table, columns, partition, table.num_rows))
    except duckdb.Error as error:
        # pyarrow then reads the same files file by file: the same rows, more slowly.
        _log.info("DuckDB could not prefilter %s (%s); reading with pyarrow", snapshot.uri, error)
        return None
    finally:
        connection.close()
    return pa.concat_tables(parts) if parts else None


@functools.cache
def _duckdb() -> duckdb.DuckDBPyConnection:
    """One in-memory DuckDB database for the process: opening one costs about 8 ms, a lookup's
    share; each read takes a cursor of its own (a connection of its own, safe on its thread)."""
    import duckdb

    return duckdb.connect()


# ---------------------------------------------------------------------------------------
# Filters translated to DuckDB SQL (zorder.skipping.translate), evaluated over Arrow rows


def translated_mask(translation: Translation, table: pa.Table) -> pa.ChunkedArray:
    """Each row's value of ``translation`` over ``table`` (its columns by name): TRUE,
    FALSE or NULL. Raises :class:`~zorder.errors.FilterEvaluationError` where Spark
    raises for a row."""
    check_constants(translation)
    connection = _connection().cursor()
    try:
        connection.execute("SET TimeZone = 'UTC'")
        # The optimizer rewrites x + c > 0 as x > -c, which no longer overflows where Spark
        # raises: the expression is evaluated as written.
        connection.execute("PRAGMA disable_optimizer")
        rows = table.select(sorted(translation.columns))
        if not translation.columns:  # a filter of constants: still one answer per row
            rows = pa.table({"zorder_row": pa.nulls(table.num_rows, pa.bool_())})
        connection.register("zorder_rows", rows)
        query = f"SELECT ({translation.sql}) AS keep FROM zorder_rows"
        with _raising_as_spark(f"filter {translation.text!r} raises on a row"):
            result = connection.sql(query).to_arrow_table()
    finally:
        connection.close()
    keep = result.column("keep")
    if keep.num_chunks == 0 or keep.length() != table.num_rows:
        return pa.chunked_array([pa.repeat(pa.scalar(None, pa.bool_()), table.num_rows)])
    return keep.cast(pa.bool_())


# ---------------------------------------------------------------------------------------
# DuckDB, with the functions whose meaning is Java's


def _case_mapped(values: pa.Array, ascii_mapping: Any, full_mapping: Any) -> pa.Array:
    """Java's full case mapping (Python's: 'ß' upper is 'SS'), once per distinct value;
    ASCII text (Arrow's mapping is the same there) stays vectorized."""
    if pc.all(pc.fill_null(pc.string_is_ascii(values), True)).as_py() is not False:
        return ascii_mapping(values)
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    encoded = values.dictionary_encode()
    mapped = pa.array([full_mapping(v) for v in encoded.dictionary.to_pylist()], pa.string())
    return mapped.take(encoded.indices)


def _java_upper(values: pa.Array) -> pa.Array:
    return _case_mapped(values, pc.utf8_upper, str.upper)


def _java_lower(values: pa.Array) -> pa.Array:
    return _case_mapped(values, pc.utf8_lower, str.lower)


def _local_to_instant(values: pa.Array, zones: pa.Array) -> pa.Array:
    """Zone-less timestamps read in a zone as Java's ``atZone`` reads them (a gap shifted
    forward, the earlier offset in an overlap), as UTC instants."""
    distinct = pc.unique(zones.drop_null()).to_pylist()
    if len(distinct) == 1:
        try:  # one zone and no local time in a gap: Arrow's assume_timezone is Java's
            zoned = pc.assume_timezone(
                values, timezone=_arrow_zone(distinct[0]), ambiguous="earliest", nonexistent="raise"
            )
            return zoned.cast(pa.timestamp("us", tz="UTC"))
        except (pa.ArrowInvalid, ValueError):
            pass  # a gap (Java shifts by its length) or a zone Arrow does not name: per row
    names = zones.to_pylist()
    out: list[dt.datetime | None] = []
    for local, name in zip(values.to_pylist(), names, strict=True):
        if local is None:
            out.append(None)
            continue
        zoned = local.replace(tzinfo=session_zone(name), fold=0)
        out.append(zoned.astimezone(dt.UTC))
    return pa.array(out, pa.timestamp("us", tz="UTC"))


def _arrow_zone(name: str) -> str:
    """A session zone as Arrow names it (region names as they are; offsets as +hh:mm)."""
    zone = session_zone(name)
    if isinstance(zone, dt.timezone):
        offset = zone.utcoffset(None)
        sign = "-" if offset < dt.timedelta(0) else "+"
        minutes = abs(int(offset.total_seconds())) // 60
        return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"
    return str(zone)


_REGISTERING = threading.Lock()


def _connection() -> duckdb.DuckDBPyConnection:
    """:func:`_registered`, once: files are filtered on several threads at a time."""
    with _REGISTERING:
        return _registered()


@functools.cache
def _registered() -> duckdb.DuckDBPyConnection:
    """The process's DuckDB database (:func:`_duckdb`) with the functions whose meaning is
    Java's registered once; each evaluation takes a cursor of its own."""
    from duckdb import sqltypes

    connection = _duckdb()
    for name, function in (("zorder_upper", _java_upper), ("zorder_lower", _java_lower)):
        connection.create_function(  # type: ignore[call-overload]
            name, function, [sqltypes.VARCHAR], sqltypes.VARCHAR, type="arrow"
        )
    connection.create_function(  # type: ignore[call-overload]
        "zorder_instant",
        _local_to_instant,
        [sqltypes.TIMESTAMP, sqltypes.VARCHAR],
        sqltypes.TIMESTAMP_TZ,
        type="arrow",
    )
    return connection


def check_constants(translation: Translation) -> None:
    """FilterEvaluationError where a constant of ``translation`` raises (a malformed cast)."""
    connection = _connection().cursor()
    try:
        connection.execute("SET TimeZone = 'UTC'")
        with _raising_as_spark("a constant of the filter raises"):
            for sql in translation.constants:
                connection.execute(f"SELECT {sql}").fetchall()
    finally:
        connection.close()


@contextlib.contextmanager
def _raising_as_spark(what: str) -> Iterator[None]:
    """DuckDB's errors of a value (an overflow, a malformed cast, the translation's own
    error()) as :class:`~zorder.errors.FilterEvaluationError`: where ANSI Spark raises."""
    import duckdb

    try:
        yield
    except (
        duckdb.OutOfRangeException,
        duckdb.ConversionException,
        duckdb.InvalidInputException,
    ) as error:
        message = str(error).split("\n")[0]
        raise FilterEvaluationError(f"{what}, as an ANSI Spark session raises: {message}") from None
