"""Delta tables through the ``deltalake`` package: snapshots, files, commits.

The log is only ever written through deltalake's transaction API, so every
commit is atomic and conflict-checked by delta-rs. Spark reads a snapshot's
files as plain Parquet with the table's schema (no Delta jars needed).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import decimal
import functools
import json
import math
import os
import posixpath
import time
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote, urlparse

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from deltalake import DeltaTable
from deltalake import Schema as DeltaSchema
from deltalake.exceptions import CommitFailedError, DeltaError, DeltaProtocolError
from deltalake.transaction import (
    AddAction,
    CommitProperties,
    RemoveAction,
    Transaction,
    create_table_with_add_actions,
)

from zorder.curves.encodings import canonical_type_name
from zorder.curves.kinds import ClusteringSpec
from zorder.errors import (
    BrokenTableError,
    ConcurrentCommitError,
    InvalidArgumentError,
    InvalidArgumentTypeError,
    NotADeltaTableError,
    UnsupportedTableError,
    ZorderError,
)
from zorder.skipping.predicates import is_utc
from zorder.skipping.rows import quoted_name, session_zone
from zorder.skipping.sql import sql_literal
from zorder.stats import (
    STATS_COLUMNS,
    FileStats,
    action_stats_field,
    indexed_columns,
    stats_from_parquet,
)
from zorder.table.clustering import (
    COMMIT_METADATA_KEY,
    CommitClustering,
    Run,
    recorded_spec,
    recorded_target_file_size,
)
from zorder.table.features import (
    COLUMN_MAPPING_MODE,
    DELETION_VECTORS,
    Protocol,
    WriteOperation,
    unreadable,
    unwritable,
)
from zorder.table.mapping import ColumnMapping
from zorder.table.timestamps import instant, is_zoned, iso_text, wall_clocks_in_zone

__all__ = [
    "MIN_VACUUM_RETENTION_HOURS",
    "CommitMode",
    "DataFile",
    "TableSnapshot",
    "WrittenFile",
    "commit_files",
    "delete_directory",
    "delta_partition_value",
    "describe_written_files",
    "file_statistics",
    "is_delta_table",
    "latest_clustering",
    "load_snapshot",
    "normalize_uri",
    "remove_writer_markers",
    "vacuum_files",
]

# Delta's default delta.deletedFileRetentionDuration: a reader or writer that
# started within this window may still need files an older version referenced.
MIN_VACUUM_RETENTION_HOURS = 168


_REWRITE_ATTEMPTS = 10
# How many of the newest commits to search for the one just made.
_HISTORY_SEARCH = 100

# The writer version from which a protocol lists its features (Delta's table features).
_FEATURES_WRITER_VERSION = 7

# "rewrite" is optimize's: files added and removed with dataChange = false.
CommitMode = Literal["create", "append", "overwrite", "rewrite"]


# parquet-mr's own filters on footer bounds, column indexes and bloom filters, as per-read
# options (they reach the Hadoop configuration of that scan only). Other writers' double
# bounds may leave NaN out, so parquet-mr would drop NaN rows that `y > 1000` must keep.
_NAN_UNSAFE_FOOTER_FILTERS = {
    "parquet.filter.stats.enabled": "false",
    "parquet.filter.columnindex.enabled": "false",
    "parquet.filter.bloom.enabled": "false",
}

# Reader features whose data plain Parquet reads would get wrong.
# Delta writers name a deletion vector's file deletion_vector_<uuid>.bin (PROTOCOL.md).
_DELETION_VECTOR_FILE_PREFIX = "deletion_vector_"


def normalize_uri(path: str | os.PathLike[str]) -> str:
    """Absolute local path, or the URI unchanged when it has a scheme (s3://, abfss://, ...)."""
    text = os.fspath(path)
    scheme = urlparse(text).scheme
    if scheme and len(scheme) > 1 and scheme != "file":
        return text.rstrip("/")
    if scheme == "file":
        text = urlparse(text).path
    return os.path.abspath(text)


def is_delta_table(uri: str, storage_options: Mapping[str, str] | None = None) -> bool:
    return bool(DeltaTable.is_deltatable(uri, dict(storage_options or {})))


@dataclass(frozen=True)
class DataFile:
    """One data file of a table, as its add action describes it."""

    # Relative to the table root (or absolute), decoded: the name on storage. The log
    # holds it percent-encoded; deltalake encodes the paths of the actions it commits.
    path: str
    size: int
    # Live rows: the file's numRecords less the rows its deletion vector deletes.
    num_records: int | None
    partition: tuple[Any, ...] = ()  # values of the table's partition columns, in order
    deleted: int = 0  # rows of the file its deletion vector deletes
    # Whether the log gives the file a deletion vector (one may delete no row): a rewrite
    # must then remove the file with its vector (see rewrite_scope).
    has_vector: bool = False


def _has_scheme(path: str) -> bool:
    scheme = urlparse(path).scheme
    return len(scheme) > 1  # a drive letter is no scheme


if TYPE_CHECKING:
    # pyspark loads only on the paths that use Spark: a lookup (zorder.to_arrow,
    # `zorder query`) reads tables without it.
    from pyspark.sql import Column, DataFrame, DataFrameReader, SparkSession
    from pyspark.sql.types import DataType, StructField, StructType


@dataclass(frozen=True)
class TableSnapshot:
    """A version of a table, pinned: what optimize reads and conflict-checks against."""

    uri: str
    table: DeltaTable
    version: int
    configuration: Mapping[str, str | None]
    partition_columns: tuple[str, ...]
    actions: pa.Table  # get_add_actions(flatten=False): path, size_bytes, num_records, min, ...

    @functools.cached_property
    def files(self) -> tuple[DataFile, ...]:
        return self.files_where(None)

    def files_where(
        self, keep: Sequence[bool] | npt.NDArray[np.bool_] | None
    ) -> tuple[DataFile, ...]:
        """The data files, or those whose ``keep`` flag is set (made only for them)."""
        actions = self.actions
        if keep is not None:
            actions = actions.filter(pa.array(np.asarray(keep, dtype=bool)))
        records = (
            actions.column("num_records").to_pylist()
            if "num_records" in actions.column_names
            else [None] * actions.num_rows
        )
        partitions = _partition_tuples(actions, self.partition_columns)
        deleted = self.deleted_positions
        files = []
        for path, size, count, values in zip(
            actions.column("path").to_pylist(),
            actions.column("size_bytes").to_pylist(),
            records,
            partitions,
            strict=True,
        ):
            decoded = unquote(path)
            gone = len(deleted[decoded]) if decoded in deleted else 0
            live = None if count is None else count - gone
            files.append(DataFile(decoded, int(size), live, values, gone, decoded in deleted))
        return tuple(files)

    def in_time_zone(self, time_zone: str) -> TableSnapshot:
        """This snapshot with zone-less timestamp partition values read in ``time_zone``.

        Delta Spark writes a ``timestamp`` partition value as wall-clock text
        (``2021-09-08 11:11:11``) and reads it in the session's zone; ISO-8601
        text with a zone (``...T18:11:11Z``) means that instant everywhere.
        deltalake reads both in UTC. Only reads take the zone: a rewrite keeps
        each partition's text as the log has it.
        """
        columns = [c for c in self.partition_columns if self.column_types.get(c) == "timestamp"]
        if not columns or is_utc(time_zone):
            return self
        zone = session_zone(time_zone)
        raw = self.table.partitions()
        partition = self.actions.column("partition").combine_chunks()
        fields = {
            partition.type.field(i).name: partition.field(i)
            for i in range(partition.type.num_fields)
        }
        for column in columns:
            texts = {str(t) for entry in raw if (t := entry.get(column)) is not None}
            moved, clashes = wall_clocks_in_zone(texts, zone)
            if clashes:
                raise UnsupportedTableError(
                    f"table {self.uri} column {column}: partition values with and without a "
                    f"zone both read as {min(clashes)} in deltalake, so zorder cannot tell "
                    "which files hold which; read it in UTC"
                )
            values = fields[column]
            fields[column] = pa.array(
                [moved.get(v, v) if v is not None else None for v in values.to_pylist()],
                values.type,
            )
        struct = pa.StructArray.from_arrays(list(fields.values()), names=list(fields))
        actions = self.actions.set_column(
            self.actions.column_names.index("partition"), "partition", struct
        )
        actions = _with_partition_statistics(actions, self.partition_columns)
        in_zone = dataclasses.replace(self, actions=actions)
        if "deleted_positions" in self.__dict__:  # read once: the same files, the same vectors
            in_zone.__dict__["deleted_positions"] = self.deleted_positions
        return in_zone

    def partition_text(self, column: str, value: Any, *, time_zone: str | None) -> str | None:
        """``value`` of partition column ``column`` as text for the log.

        A timestamp goes as the log already writes it where a partition of
        that instant exists (its text says in which zone it is read): the
        instant ``value`` is in a session of ``time_zone``, or, for None, as
        deltalake reads the text (values an optimize took from the log).
        Anything else as :func:`delta_partition_value` writes it.
        """
        if isinstance(value, dt.datetime) and self._timestamp_texts.get(column):
            zone = dt.UTC if time_zone is None else session_zone(time_zone)
            texts = [
                t
                for t in self._timestamp_texts[column]
                if instant(t, zone) == value.astimezone(dt.UTC)
            ]
            if len({is_zoned(t) for t in texts}) > 1:
                raise UnsupportedTableError(
                    f"table {self.uri}: partition {column} = {value} is written both with and "
                    f"without a zone ({sorted(texts)}), which mean different instants in "
                    "sessions outside UTC; zorder will not merge them"
                )
            if texts:
                return min(texts)
        return delta_partition_value(value)

    @functools.cached_property
    def _timestamp_texts(self) -> dict[str, list[str]]:
        """Each timestamp partition column's distinct texts in the log."""
        columns = [c for c in self.partition_columns if self.column_types.get(c) == "timestamp"]
        if not columns:
            return {}
        texts: dict[str, set[str]] = {c: set() for c in columns}
        for entry in self.table.partitions():
            for column in columns:
                if entry.get(column) is not None:
                    texts[column].add(str(entry[column]).strip())
        return {c: sorted(t) for c, t in texts.items()}

    def check_writable(self, operation: WriteOperation) -> None:
        """Refuse ``operation`` on this table, before anything is written, if zorder would
        not honour one of the table's features."""
        reasons = unwritable(
            Protocol.of(self.table.protocol()),
            self.configuration,
            self.table.schema().to_json(),
            operation,
        )
        if reasons:
            raise UnsupportedTableError(
                f"zorder cannot {operation} table {self.uri} (version {self.version}): "
                f"{'; '.join(reasons)}. Nothing was written"
            )

    def rewrite_scope(self, files: Sequence[DataFile]) -> tuple[DataFile, ...]:
        """What a rewrite of ``files`` must replace: ``files``, or, when one has deleted rows,
        every file of their partitions (see :func:`_commit_purge`)."""
        if not any(f.has_vector for f in files):
            return tuple(files)
        _refuse_purge(self)
        filters = _overwrite_filters(self.partition_columns, {f.partition for f in files})
        scope = self.files_matching(filters)
        missing = {f.path for f in files} - {f.path for f in scope}
        if missing:
            raise UnsupportedTableError(
                f"table {self.uri} (version {self.version}): the partition filter {filters} "
                f"does not select {sorted(missing)[0]!r}, which the rewrite needs to replace"
            )
        return scope

    def files_matching(self, filters: Sequence[PartitionFilter] | None) -> tuple[DataFile, ...]:
        """The files delta-rs selects with ``filters`` (as its overwrite does), checked by ours."""
        if filters is None:
            return self.files
        by_uri = {self.file_uri(f): f for f in self.files}
        listed = self.table.file_uris(file_pruning_predicate=list(filters))
        with warnings.catch_warnings():  # the overwrite chooses its removes this older way
            warnings.simplefilter("ignore", DeprecationWarning)
            legacy = self.table.file_uris(partition_filters=list(filters))
        selected = tuple(by_uri[uri] for uri in listed if uri in by_uri)
        ours = tuple(f for f in self.files if _satisfies(f, self.partition_columns, filters))
        agreed = set(selected) == set(ours) and set(legacy) == set(listed)
        if len(selected) != len(listed) or not agreed:
            raise UnsupportedTableError(
                f"table {self.uri} (version {self.version}): delta-rs and zorder disagree on "
                f"which files the partition filter {list(filters)} selects; nothing was written"
            )
        return selected

    @functools.cached_property
    def deleted_positions(self) -> Mapping[str, npt.NDArray[np.int64]]:
        """Per file with a deletion vector (by its decoded path): its deleted rows' positions.

        deltalake reads the vectors (inline, relative and absolute storage
        alike) into keep masks; only tables with the ``deletionVectors``
        reader feature can hold any.
        """
        if DELETION_VECTORS not in (self.table.protocol().reader_features or ()):
            return {}
        try:
            vectors = pa.RecordBatchReader.from_stream(self.table.deletion_vectors()).read_all()
        except DeltaError as error:
            raise UnsupportedTableError(
                f"table {self.uri} (version {self.version}): its deletion vectors cannot be "
                f"read ({error}); nothing was read"
            ) from error
        if vectors.num_rows == 0:
            return {}
        masks = vectors.column("selection_vector").combine_chunks()
        kept = masks.values.to_numpy(zero_copy_only=False)
        bounds = masks.offsets.to_numpy()
        root = self.table.table_uri.rstrip("/") + "/"
        paths = {unquote(str(p)) for p in self.actions.column("path").to_pylist()}
        deleted: dict[str, npt.NDArray[np.int64]] = {}
        for index, uri in enumerate(vectors.column("filepath").to_pylist()):
            path = unquote(uri[len(root) :] if uri.startswith(root) else uri)
            if path not in paths:
                raise UnsupportedTableError(
                    f"table {self.uri} (version {self.version}): deltalake gives a deletion "
                    f"vector for {uri}, which is no data file of the version; nothing was read"
                )
            mask = kept[bounds[index] : bounds[index + 1]]
            deleted[path] = np.flatnonzero(~mask).astype(np.int64)
        return deleted

    @functools.cached_property
    def nan_free_bounds(self) -> npt.NDArray[np.bool_]:
        """Per file: are its double bounds left out whenever it holds NaN?

        True only for files of a run whose commit recorded the run's ``txn``
        (see :mod:`zorder.table.clustering`): zorder writes them with Spark,
        whose Parquet statistics count NaN, and then leaves such a column
        unbounded. Other writers (pyarrow's among them) leave NaN out of their
        bounds, so nothing is assumed of their files, wherever they lie.
        """
        return np.array([run is not None for run in self.runs], dtype=bool)

    @functools.cached_property
    def runs(self) -> tuple[Run | None, ...]:
        """Per file: the zorder run that wrote it, None for any other file.

        A file belongs to a run when it lies in the run's directory and the
        run's commit recorded the run's ``txn``; a directory name alone is
        not trusted.
        """
        paths = self.actions.column("path").to_pylist()
        runs = [Run.of_path(str(path)) for path in paths]
        trusted = {
            run: self.table.transaction_version(run.transaction_id) == run.transaction_version
            for run in set(runs)
            if run is not None
        }
        return tuple(run if run is not None and trusted[run] else None for run in runs)

    @property
    def recorded_spec(self) -> ClusteringSpec | None:
        """The clustering spec the table's properties record, if any."""
        return recorded_spec(self.configuration)

    @property
    def recorded_target_file_size(self) -> int | None:
        """``delta.targetFileSize`` in bytes, if the table sets it."""
        return recorded_target_file_size(self.configuration)

    @property
    def total_bytes(self) -> int:
        total = pc.sum(self.actions.column("size_bytes")).as_py()
        return int(total or 0)

    @property
    def total_rows(self) -> int:
        """Live rows of the files whose statistics count them."""
        return sum(f.num_records or 0 for f in self.files)

    @property
    def counted_rows(self) -> int | None:
        """Live rows in the snapshot when every file's statistics count them, else None."""
        counts = [f.num_records for f in self.files]
        return None if None in counts else sum(c or 0 for c in counts)

    def file_uri(self, data_file: DataFile) -> str:
        if _has_scheme(data_file.path):
            return data_file.path
        return f"{self.uri.rstrip('/')}/{data_file.path}"

    @functools.cached_property
    def schema(self) -> StructType:
        """The table's schema as Spark types."""
        from pyspark.sql.types import StructType

        return StructType.fromJson(json.loads(self.table.schema().to_json()))

    @functools.cached_property
    def column_types(self) -> dict[str, str]:
        """Each top-level column's Spark type name (``bigint``, ``decimal(12,3)``, ...).

        Read from the Delta schema itself, so that planning a read needs no
        pyspark. A nested column's type is named by its kind (``struct``...).
        """
        types = {}
        for entry in json.loads(self.table.schema().to_json())["fields"]:
            kind = entry["type"]
            name = kind if isinstance(kind, str) else str(kind.get("type", "nested"))
            try:
                types[entry["name"]] = canonical_type_name(name)
            except ValueError:
                types[entry["name"]] = name  # binary, nested: comparisons stay Unknown
        return types

    @functools.cached_property
    def mapping(self) -> ColumnMapping | None:
        """The table's column mapping (``name`` or ``id`` mode), None without one."""
        mode = str(self.configuration.get(COLUMN_MAPPING_MODE) or "none")
        if mode not in ("name", "id"):
            return None
        return ColumnMapping.of(self.table.schema().to_json(), "id" if mode == "id" else "name")

    def stored_name(self, column: str) -> str:
        """The name files, statistics and partition values give the top-level ``column``."""
        return column if self.mapping is None else self.mapping.physical[column]

    @functools.cached_property
    def stored_schema(self) -> StructType:
        """The schema as the files hold it: physical names at every level under mapping."""
        if self.mapping is None:
            return self.schema
        from pyspark.sql.types import StructType

        return StructType.fromJson(json.loads(self.mapping.physical_schema_json()))

    @property
    def stored_configuration(self) -> Mapping[str, str | None]:
        """The configuration, with ``delta.dataSkippingStatsColumns`` naming the columns as
        files name them (the property lists logical names)."""
        listed = self.configuration.get(STATS_COLUMNS)
        if self.mapping is None or not listed:
            return self.configuration
        by_lower = {name.lower(): name for name in self.column_types}
        stored = []
        for name in listed.split(","):
            logical = by_lower.get(name.strip().strip("`").lower())
            if logical is not None:
                stored.append(self.stored_name(logical))
        return {**self.configuration, STATS_COLUMNS: ",".join(stored)}

    @functools.cached_property
    def stored_arrow_schema(self) -> pa.Schema:
        """:attr:`stored_schema` in Arrow types."""
        if self.mapping is None:
            return self.arrow_schema
        return pa.schema(DeltaSchema.from_json(self.mapping.physical_schema_json()).to_arrow())

    def stored_frame(self, df: DataFrame) -> DataFrame:
        """``df`` (the table's logical columns) with the names and nested names files hold."""
        if self.mapping is None:
            return df
        from pyspark.sql import functions as F

        stored = {f.name: f for f in self.stored_schema.fields}
        columns = []
        for logical in self.schema.fields:
            target = stored[self.stored_name(logical.name)]  # in id mode with its field ids
            cast = F.col(f"`{logical.name}`").cast(target.dataType)
            columns.append(cast.alias(target.name, metadata=target.metadata))
        return df.select(*columns)

    def _stored_column(self, field: StructField) -> Column:
        """``field`` of a frame read from files, under its logical name and type."""
        from pyspark.sql import functions as F

        if self.mapping is None:
            return F.col(f"`{field.name}`")
        stored = F.col(f"`{self.stored_name(field.name)}`")
        return stored.cast(field.dataType).alias(field.name)

    @functools.cached_property
    def arrow_schema(self) -> pa.Schema:
        """The table's schema in Arrow types, as Delta readers give them."""
        return pa.schema(self.table.schema().to_arrow())

    @functools.cached_property
    def _storage(self) -> tuple[pafs.FileSystem, str]:
        return _filesystem(self.uri)

    def read_arrow(self, data_file: DataFile, columns: Sequence[str]) -> pa.Table:
        """``columns`` of one file's rows, in the table's Arrow types, read in-process.

        As Spark reads the file: a column the file lacks is NULL throughout,
        and partition columns hold the log's values for the file.
        """
        if _has_scheme(data_file.path):
            filesystem, location = pafs.FileSystem.from_uri(data_file.path)
        else:
            filesystem, root = self._storage
            location = f"{root.rstrip('/')}/{data_file.path}"
        partition = dict(zip(self.partition_columns, data_file.partition, strict=True))
        try:
            source = filesystem.open_input_file(location)
        except FileNotFoundError as error:
            raise BrokenTableError(
                f"table {self.uri} (version {self.version}) names the data file "
                f"{data_file.path!r}, which storage does not hold"
            ) from error
        with source:
            # INT96 (older Spark writers') as microseconds: nanoseconds overflow past 2262.
            parquet = pq.ParquetFile(source, coerce_int96_timestamp_unit="us")
            wanted = [c for c in columns if c not in partition]
            if self.mapping is None:
                present = set(parquet.schema_arrow.names)
                names = {c: c for c in wanted if c in present}
            else:
                try:
                    names = self.mapping.stored_columns(parquet.schema_arrow, wanted)
                except ValueError as error:
                    raise BrokenTableError(
                        f"table {self.uri} (version {self.version}), file {data_file.path!r}: "
                        f"{error}"
                    ) from error
            stored = list(names)
            read = parquet.read(columns=[names[c] for c in stored], use_threads=False)
        rows = read.num_rows if stored else parquet.metadata.num_rows
        if self.mapping is not None and stored:
            # To the physical type first: nested fields added or dropped since the file
            # was written are matched by name; then the logical names, by position.
            physical, logical = self.stored_arrow_schema, self.arrow_schema
            read = pa.table(
                {
                    c: self.mapping.logical_array(
                        read.column(i).cast(physical.field(self.stored_name(c)).type),
                        logical.field(c).type,
                    )
                    for i, c in enumerate(stored)
                }
            )
        table = self._in_table_types(read, columns, partition, rows)
        deleted = self.deleted_positions.get(data_file.path)
        if deleted is None:
            return table
        keep = np.ones(rows, dtype=bool)
        keep[deleted[deleted < rows]] = False
        return table.filter(pa.array(keep))

    def _in_table_types(
        self, stored: pa.Table, columns: Sequence[str], partition: Mapping[str, Any], rows: int
    ) -> pa.Table:
        """``columns`` of ``rows`` rows, as Spark reads them from files, in the table's types.

        A partition column holds the log's value, a column of ``stored`` is
        cast, and a column the files lack is NULL throughout.
        """
        schema = self.arrow_schema
        arrays = []
        for name in columns:
            target = schema.field(name).type
            if name in partition:
                arrays.append(pa.repeat(pa.scalar(partition[name], target), rows))
            elif name in stored.column_names:
                arrays.append(stored.column(name).cast(target, safe=False))
            else:
                arrays.append(pa.nulls(rows, target))
        return pa.Table.from_arrays(arrays, schema=pa.schema([schema.field(c) for c in columns]))

    def read_arrow_where(
        self, files: Sequence[DataFile], columns: Sequence[str], where: str
    ) -> pa.Table | None:
        """``columns`` of the rows of local ``files`` that satisfy the SQL ``where``, or None.

        DuckDB reads them: it evaluates ``where`` on the columns it names
        first and decodes the other columns only for the rows that pass, which
        a lookup among long strings gains most from. ``where`` must mean the
        same to DuckDB as to Spark and name only stored (not partition)
        columns; the caller filters the result exactly afterwards. None when
        DuckDB cannot do it here (remote storage, a column no file holds):
        then read the files with :meth:`read_arrow`.
        """
        if _has_scheme(self.uri) or any(_has_scheme(f.path) for f in files):
            return None
        if self.mapping is not None:  # the prefilter names logical columns
            return None
        import duckdb

        partitioned = set(self.partition_columns)
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
        connection = duckdb.connect()
        parts = []
        try:
            for values, members in _by_partition(files).items():
                partition = dict(zip(self.partition_columns, values, strict=True))
                whole = [f for f in members if f.path not in self.deleted_positions]
                found = []
                if whole:
                    paths = [f"{self.uri.rstrip('/')}/{f.path}" for f in whole]
                    found.append(connection.execute(query, [paths]).to_arrow_table())
                for f in members:
                    if f.path in self.deleted_positions:
                        path = f"{self.uri.rstrip('/')}/{f.path}"
                        rows = connection.execute(positioned, [[path]]).to_arrow_table()
                        gone = pc.is_in(
                            rows.column("file_row_number"), pa.array(self.deleted_positions[f.path])
                        )
                        found.append(rows.filter(pc.invert(gone)).drop_columns(["file_row_number"]))
                for table in found:
                    parts.append(self._in_table_types(table, columns, partition, table.num_rows))
        except duckdb.Error:
            return None
        finally:
            connection.close()
        return pa.concat_tables(parts) if parts else None

    def schema_frame(self, spark: SparkSession) -> DataFrame:
        """An empty DataFrame with the table's schema: to check names and types, lists no file."""
        return spark.createDataFrame([], self.schema)

    def dataframe(self, spark: SparkSession) -> DataFrame:
        """The snapshot's rows: its files read by Spark's Parquet reader, with the table schema."""
        return self.read_files(spark, None)

    def files_by_partition(self) -> dict[tuple[Any, ...], list[DataFile]]:
        """The files of each partition (one group of all files when unpartitioned)."""
        return _by_partition(self.files)

    def read_files(self, spark: SparkSession, keep: npt.NDArray[np.bool_] | None) -> DataFrame:
        """The rows of the files whose ``keep`` flag is set (all files for None).

        Spark pushes filters down to parquet-mr, which skips row groups and
        pages on the files' own footer bounds; where a double column's bounds
        may leave NaN out (files zorder does not vouch for), that skipping is
        turned off for this read, so the rows always answer as Spark defines.
        """
        files = self.files_where(keep)
        if not files:
            return spark.createDataFrame([], self.schema)
        reader = self._reader(spark, keep)
        if not self.partition_columns:
            frame = self._without_deleted_rows(self._parquet(reader, files), files)
            if self.mapping is None:
                return frame
            return frame.select(*[self._stored_column(f) for f in self.schema.fields])
        return self._union_of_partitions(reader, _by_partition(files))

    def read_partitions(
        self,
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
        indices = {values: index for index, values in enumerate(partitions)}
        groups = _by_partition(self.files_where(keep))
        if not groups:
            from pyspark.sql.types import LongType, StructField, StructType

            schema = StructType([*self.schema.fields, StructField(index_column, LongType(), False)])
            return spark.createDataFrame([], schema)
        return self._union_of_partitions(
            self._reader(spark, keep), groups, tags=(index_column, indices)
        )

    def _reader(self, spark: SparkSession, keep: npt.NDArray[np.bool_] | None) -> DataFrameReader:
        partitioned = {self.stored_name(c) for c in self.partition_columns}
        from pyspark.sql.types import StructType

        data_schema = StructType(
            [f for f in self.stored_schema.fields if f.name not in partitioned]
        )
        if self.mapping is not None and self.mapping.mode == "id":
            # Columns are found by the field ids the schema carries, as Delta requires in id
            # mode (a session setting; it changes nothing for schemas without ids).
            spark.conf.set("spark.sql.parquet.fieldId.read.enabled", "true")
        reader = spark.read.schema(data_schema)
        if _holds_floats(self.schema):
            trusted = self.nan_free_bounds if keep is None else self.nan_free_bounds[keep]
            if not trusted.all():
                reader = reader.options(**_NAN_UNSAFE_FOOTER_FILTERS)
        return reader

    def _union_of_partitions(
        self,
        reader: DataFrameReader,
        groups: Mapping[tuple[Any, ...], Sequence[DataFile]],
        *,
        tags: tuple[str, Mapping[tuple[Any, ...], int]] | None = None,
    ) -> DataFrame:
        # Partition values live in the log, not in the files: each partition's files
        # are read together and its values added as typed literals.
        from pyspark.sql import DataFrame
        from pyspark.sql import functions as F

        frames = []
        for values, members in groups.items():
            known = dict(zip(self.partition_columns, values, strict=True))
            columns = [
                _typed_literal(known[f.name], f.dataType).alias(f.name)
                if f.name in known
                else self._stored_column(f)
                for f in self.schema.fields
            ]
            if tags is not None:
                name, indices = tags
                columns.append(F.lit(indices[values]).cast("long").alias(name))
            frame = self._parquet(reader, members)
            frames.append(self._without_deleted_rows(frame, members).select(*columns))
        return functools.reduce(DataFrame.union, frames)

    def _parquet(self, reader: DataFrameReader, files: Sequence[DataFile]) -> DataFrame:
        """``files`` read by Spark; one storage lacks is named as the table's breakage."""
        from pyspark.errors import AnalysisException

        try:
            return reader.parquet(*[self.file_uri(f) for f in files])
        except AnalysisException as error:
            if "PATH_NOT_FOUND" not in str(error):
                raise
            raise BrokenTableError(
                f"table {self.uri} (version {self.version}) names data files storage does not "
                f"hold: {error}"
            ) from error

    def _without_deleted_rows(self, frame: DataFrame, members: Sequence[DataFile]) -> DataFrame:
        """``frame`` (the rows of ``members``, files of one partition) less the deleted rows.

        Each row's file and position come from Spark's own ``_metadata`` of the
        scan; the deleted positions (what the deletion vectors hold, no row
        data) travel to the executors as a broadcast table joined against
        them. Files are told apart by name: within one partition's directory
        Delta writers name their files uniquely; where two do not, the read
        is refused rather than risk deleting the wrong rows.
        """
        marked = [f for f in members if f.path in self.deleted_positions]
        if not marked:
            return frame
        from pyspark.sql import functions as F

        names = [posixpath.basename(f.path) for f in marked]
        shared = Counter(posixpath.basename(f.path) for f in members)
        clash = next((n for n in names if shared[n] > 1), None)
        if clash is not None:
            raise UnsupportedTableError(
                f"table {self.uri} (version {self.version}): files of one partition share the "
                f"name {clash!r} and one has deleted rows, which zorder cannot tell apart by name"
            )
        name_column, position_column = "__zorder_file_name", "__zorder_row_index"
        positions = [self.deleted_positions[f.path] for f in marked]
        deleted = pa.table(
            {
                name_column: pa.array(
                    np.repeat(np.array(names, dtype=object), [len(p) for p in positions]),
                    pa.string(),
                ),
                position_column: pa.array(np.concatenate(positions), pa.int64()),
            }
        )
        spark = frame.sparkSession
        located = frame.select(
            "*",
            F.col("_metadata.file_name").alias(name_column),
            F.col("_metadata.row_index").alias(position_column),
        )
        kept = located.join(
            F.broadcast(spark.createDataFrame(deleted)), [name_column, position_column], "left_anti"
        )
        return kept.drop(name_column, position_column)


def _satisfies(
    data_file: DataFile, columns: Sequence[str], filters: Sequence[PartitionFilter]
) -> bool:
    values = dict(zip(columns, data_file.partition, strict=True))
    for column, operator, expected in filters:
        text = delta_partition_value(values[column])
        if operator == "=" and text != (expected or None):
            return False
        if operator == "in" and text not in expected:
            return False
    return True


def _by_partition(files: Sequence[DataFile]) -> dict[tuple[Any, ...], list[DataFile]]:
    groups: dict[tuple[Any, ...], list[DataFile]] = {}
    for data_file in files:
        groups.setdefault(data_file.partition, []).append(data_file)
    return groups


def _typed_literal(value: Any, data_type: DataType) -> Column:
    """``value`` as a Spark literal of ``data_type`` (NULL too), exactly: never through a zone."""
    from pyspark.sql import functions as F

    return F.expr(f"CAST({sql_literal(value)} AS {data_type.simpleString()})")


def _partition_tuples(actions: pa.Table, columns: Sequence[str]) -> list[tuple[Any, ...]]:
    """Each file's values of ``columns``, typed as deltalake parsed them from the log."""
    if not columns:
        return [()] * actions.num_rows
    values = [action_stats_field(actions, "partition", c) for c in columns]
    if any(v is None for v in values):
        raise UnsupportedTableError(
            f"the log lists no values of partition columns {list(columns)} for its files"
        )
    return list(zip(*(v.to_pylist() for v in values if v is not None), strict=True))


def _with_partition_statistics(actions: pa.Table, columns: Sequence[str]) -> pa.Table:
    """``actions`` with each partition column's value as its exact min, max and null count.

    A partition value is the value of every row of its files, so the one
    evaluator prunes partitions by the same rules that skip files.
    """
    if not columns or actions.num_rows == 0:
        return actions
    rows = actions.column("num_records") if "num_records" in actions.column_names else None
    for kind in ("min", "max", "null_count"):
        names: list[str] = []
        fields: list[pa.Array] = []
        if kind in actions.column_names and pa.types.is_struct(actions.column(kind).type):
            struct_type = actions.column(kind).type
            for index in range(struct_type.num_fields):
                name = struct_type.field(index).name
                if name not in columns:
                    field = action_stats_field(actions, kind, name)
                    assert field is not None
                    names.append(name)
                    fields.append(field)
        for column in columns:
            values = action_stats_field(actions, "partition", column)
            assert values is not None
            if kind == "null_count":
                counts = rows.combine_chunks() if rows is not None else pa.nulls(len(values))
                zero = pa.scalar(0, pa.int64())
                values = pc.if_else(values.is_null(), counts.cast(pa.int64()), zero)
            names.append(column)
            fields.append(values)
        struct = pa.StructArray.from_arrays(fields, names=names)
        if kind in actions.column_names:
            actions = actions.set_column(actions.column_names.index(kind), kind, struct)
        else:
            actions = actions.append_column(kind, struct)
    return actions


def _holds_floats(data_type: DataType) -> bool:
    """Whether ``data_type`` is or holds a float or double (Spark pushes nested fields down too)."""
    from pyspark.sql.types import ArrayType, DoubleType, FloatType, MapType, StructType

    if isinstance(data_type, FloatType | DoubleType):
        return True
    if isinstance(data_type, StructType):
        return any(_holds_floats(f.dataType) for f in data_type.fields)
    if isinstance(data_type, ArrayType):
        return _holds_floats(data_type.elementType)
    if isinstance(data_type, MapType):
        return _holds_floats(data_type.keyType) or _holds_floats(data_type.valueType)
    return False


def load_snapshot(
    uri: str, storage_options: Mapping[str, str] | None = None, *, version: int | None = None
) -> TableSnapshot:
    """Pin the table's current (or given) version and list its files with their stats."""
    if not is_delta_table(uri, storage_options):
        raise NotADeltaTableError(f"not a Delta table: {uri} (no readable _delta_log found)")
    where = f"table {uri} ({f'version {version}' if version is not None else 'latest version'})"
    try:
        table = DeltaTable(uri, version=version, storage_options=dict(storage_options or {}))
        metadata = table.metadata()
        _refuse_unreadable(uri, table, metadata.configuration)
        actions = pa.table(table.get_add_actions(flatten=False))
    except DeltaError as error:  # DeltaProtocolError and TableNotFoundError among them
        raise _log_error(where, error) from error
    partition_columns = tuple(metadata.partition_columns)
    if str(metadata.configuration.get(COLUMN_MAPPING_MODE) or "none") != "none":
        actions = _logical_statistics(actions, ColumnMapping.of(table.schema().to_json()))
    actions = _with_partition_statistics(actions, partition_columns)
    return TableSnapshot(
        uri=uri,
        table=table,
        version=table.version(),
        configuration=dict(metadata.configuration),
        partition_columns=partition_columns,
        actions=actions,
    )


def _logical_statistics(actions: pa.Table, mapping: ColumnMapping) -> pa.Table:
    """``actions`` with min, max and null_count keyed by logical names, as readers ask."""
    for kind in ("min", "max", "null_count"):
        if kind not in actions.column_names or not pa.types.is_struct(actions.column(kind).type):
            continue
        index = actions.column_names.index(kind)
        logical = mapping.logical_statistics(actions.column(kind).combine_chunks())
        actions = (
            actions.remove_column(index)
            if logical is None
            else actions.set_column(index, kind, logical)
        )
    return actions


def _log_error(where: str, error: DeltaError) -> ZorderError:
    """A deltalake error on loading a table as zorder's own: what is wrong, named."""
    text = str(error)
    if isinstance(error, DeltaProtocolError) or "unsupported" in text.lower():
        return UnsupportedTableError(f"{where} cannot be read: {text}; nothing was read")
    return BrokenTableError(f"{where}: its log cannot be read ({text}); nothing was read")


def _refuse_unreadable(uri: str, table: DeltaTable, configuration: Mapping[str, Any]) -> None:
    """Refuse a table that zorder would read wrong, before any row is read."""
    reasons = unreadable(Protocol.of(table.protocol()), configuration)
    if reasons:
        raise UnsupportedTableError(
            f"table {uri} (version {table.version()}) uses Delta features zorder cannot yet "
            f"read or write exactly: {'; '.join(reasons)}. Nothing was read or written"
        )


def _filesystem(uri: str) -> tuple[pafs.FileSystem, str]:
    filesystem, root = pafs.FileSystem.from_uri(uri)
    return filesystem, root


@dataclass(frozen=True)
class WrittenFile:
    """A Parquet file Spark wrote for this run, with its footer statistics."""

    path: str  # relative to the table root
    size: int
    stats: FileStats
    # The partition it belongs to, as Delta writes values in the log (None for null).
    partition_values: Mapping[str, str | None] = field(default_factory=dict)


def delta_partition_value(value: Any) -> str | None:
    """``value`` as the text Delta's log holds for a partition value; None for null.

    Timestamps as ISO-8601 UTC text (``timestamp``: its instant in every
    session) or as written (``timestamp_ntz``), to the microsecond; an empty
    string is null in Delta, as in Hive.
    """
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:  # its instant, whatever zone a reader's session is in
            return iso_text(value)
        return value.isoformat(sep=" ", timespec="microseconds")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, int | str):
        return str(value)
    raise InvalidArgumentTypeError(f"no Delta partition value for {type(value).__name__} {value!r}")


def describe_written_files(
    uri: str,
    relative_dir: str,
    schema: StructType,
    configuration: Mapping[str, str | None],
) -> list[WrittenFile]:
    """List the Parquet files under ``relative_dir`` and read each footer's statistics.

    Only footers travel to the driver. Files without rows (Spark writes one
    for an empty input) are left out.
    """
    filesystem, root = _filesystem(uri)
    directory = f"{root.rstrip('/')}/{relative_dir}"
    infos = filesystem.get_file_info(pafs.FileSelector(directory, recursive=True))
    names = [field.name for field in schema.fields]
    written = []
    for info in sorted(infos, key=lambda i: i.path):
        base = info.base_name
        if info.type != pafs.FileType.File or not base.endswith(".parquet") or base[0] in "._":
            continue
        with filesystem.open_input_file(info.path) as handle:
            metadata = pq.read_metadata(handle)
        if metadata.num_rows == 0:
            continue
        arrow_schema = metadata.schema.to_arrow_schema()
        wanted = indexed_columns(
            pa.schema([arrow_schema.field(n) for n in names if n in arrow_schema.names]),
            configuration,
        )
        stats = stats_from_parquet(metadata, arrow_schema, wanted)
        relative = info.path[len(root.rstrip("/")) + 1 :]
        written.append(WrittenFile(path=relative, size=int(info.size or 0), stats=stats))
    return written


def remove_writer_markers(uri: str, relative_dir: str) -> None:
    """Drop the ``_SUCCESS`` and ``.crc`` files Spark's writer leaves next to the data.

    No Delta reader wants them, and as files the log never references they
    would show up in every vacuum of the table.
    """
    filesystem, root = _filesystem(uri)
    selector = pafs.FileSelector(f"{root}/{relative_dir}", recursive=True)
    for info in filesystem.get_file_info(selector):
        if info.type == pafs.FileType.File and info.base_name.startswith(("_", ".")):
            with contextlib.suppress(OSError):
                filesystem.delete_file(info.path)


def delete_directory(uri: str, relative_dir: str) -> None:
    """Best-effort removal of a run's directory (its files were never committed)."""
    filesystem, root = _filesystem(uri)
    with contextlib.suppress(OSError):
        filesystem.delete_dir(f"{root.rstrip('/')}/{relative_dir}")


def _add_actions(files: Sequence[WrittenFile], *, data_change: bool) -> list[AddAction]:
    now = int(time.time() * 1000)
    return [
        AddAction(
            path=f.path,
            size=f.size,
            partition_values=dict(f.partition_values),
            modification_time=now,
            data_change=data_change,
            stats=f.stats.to_json(),
        )
        for f in files
    ]


def _commit_properties(
    clustering: CommitClustering | None, *, max_commit_retries: int | None = None
) -> CommitProperties:
    if clustering is None:
        return CommitProperties(max_commit_retries=max_commit_retries)
    run = clustering.run
    return CommitProperties(
        custom_metadata={COMMIT_METADATA_KEY: json.dumps(clustering.to_metadata())},
        max_commit_retries=max_commit_retries,
        app_transactions=[Transaction(run.transaction_id, run.transaction_version)],
    )


def commit_files(
    uri: str,
    schema: StructType,
    files: Sequence[WrittenFile],
    *,
    mode: CommitMode,
    snapshot: TableSnapshot | None = None,
    removed: Sequence[DataFile] = (),
    clustering: CommitClustering | None = None,
    partition_by: Sequence[str] = (),
    storage_options: Mapping[str, str] | None = None,
) -> int:
    """Commit ``files`` in one transaction; returns the new table version.

    - ``create``: a new table whose first version holds the files.
    - ``append`` / ``overwrite``: a data change on ``snapshot``'s table
      (overwrite removes every file of the version it replaces).
    - ``rewrite``: optimize's commit, adding ``files`` and removing
      ``removed`` with ``dataChange = false``, checked by delta-rs against
      everything committed since ``snapshot``.

    ``partition_by`` names a new table's partition columns (appends and
    rewrites use the table's own). ``clustering`` (a zorder run's files) goes into the commit as
    ``commitInfo.zorder`` and as the run's ``txn`` action.
    """
    properties = _commit_properties(clustering)
    # An existing table keeps its own schema (column mapping's metadata included).
    delta_schema = (
        snapshot.table.schema() if snapshot is not None else DeltaSchema.from_json(schema.json())
    )
    if mode == "create":
        create_table_with_add_actions(
            uri,
            delta_schema,
            _add_actions(files, data_change=True),
            mode="error",
            partition_by=list(partition_by) or None,
            storage_options=dict(storage_options or {}),
            commit_properties=properties,
        )
        return int(DeltaTable(uri, storage_options=dict(storage_options or {})).version())
    if snapshot is None:
        raise InvalidArgumentError(f"mode {mode!r} needs the snapshot it applies to")
    if mode == "rewrite" and any(f.has_vector for f in removed):
        return _commit_purge(
            uri, delta_schema, files, snapshot, removed, clustering, storage_options
        )
    if mode == "rewrite":
        return _commit_rewrite(
            uri, delta_schema, files, snapshot, removed, clustering, storage_options
        )
    table = snapshot.table
    try:
        adds: list[AddAction | RemoveAction] = [*_add_actions(files, data_change=True)]
        table.create_write_transaction(
            adds,
            mode=mode,
            schema=delta_schema,
            partition_by=list(snapshot.partition_columns) or None,
            commit_properties=properties,
        )
    except CommitFailedError as error:
        _refuse_unsupported(uri, error)
        raise ConcurrentCommitError(
            f"the commit to {uri} conflicts with a concurrent commit made after version "
            f"{snapshot.version}: {error}. Nothing was committed; run again on the new version."
        ) from error
    return _committed_version(table, clustering)


def _commit_purge(
    uri: str,
    delta_schema: DeltaSchema,
    files: Sequence[WrittenFile],
    snapshot: TableSnapshot,
    removed: Sequence[DataFile],
    clustering: CommitClustering | None,
    storage_options: Mapping[str, str] | None,
) -> int:
    """A rewrite that removes files with deletion vectors: every file of their partitions.

    deltalake's ``RemoveAction`` carries no deletion vector, and a remove
    without it leaves the logical file (path, vector) live: its rows would
    be read twice. An overwrite of the partitions, made from ``snapshot``,
    removes each of its files with its vector. delta-rs checks it against
    what was committed meanwhile: blind appends stay, and a commit that
    removed or changed a file read here (a DELETE's new vector, another
    optimize) fails it. The removes say ``dataChange = true`` (deltalake sets
    it), the adds ``false``.
    """
    _refuse_purge(snapshot)
    filters = _overwrite_filters(snapshot.partition_columns, {f.partition for f in removed})
    scope = {f.path for f in snapshot.files_matching(filters)}
    if scope != {f.path for f in removed}:
        raise ZorderError(  # the caller must rewrite rewrite_scope(files), not less
            f"a rewrite of {uri} with deleted rows must replace every file of its partitions"
        )
    adds: list[AddAction | RemoveAction] = [*_add_actions(files, data_change=False)]
    try:
        snapshot.table.create_write_transaction(
            adds,
            mode="overwrite",
            schema=delta_schema,
            partition_by=list(snapshot.partition_columns) or None,
            partition_filters=filters,
            commit_properties=_commit_properties(clustering),
        )
    except CommitFailedError as error:
        _refuse_unsupported(uri, error)
        raise ConcurrentCommitError(
            f"a concurrent commit to {uri} after version {snapshot.version} removed or "
            f"changed files this optimize rewrote ({error}). Nothing was committed; the table is "
            "as the other writer left it. Run again on the new version."
        ) from error
    version = _committed_version(snapshot.table, clustering)
    # The overwrite chose its removes by the partition filter; had delta-rs chosen fewer
    # than the files read here, their rows would now be live twice. Say so, loudly.
    committed = load_snapshot(uri, storage_options, version=version)
    left = sorted({f.path for f in removed} & {f.path for f in committed.files})
    if left:
        raise ZorderError(
            f"version {version} of {uri} keeps {len(left)} file(s) this optimize rewrote "
            f"(e.g. {left[0]!r}): their rows are there twice. Restore version {version - 1} "
            "(RESTORE TABLE ... TO VERSION AS OF) and report this as a bug"
        )
    return version


def _refuse_unsupported(uri: str, error: CommitFailedError) -> None:
    """deltalake's refusal of a table feature is no conflict: raise it as what it is."""
    if "Unsupported table features" in str(error):
        raise UnsupportedTableError(
            f"deltalake refused to commit to {uri}: {error}. Nothing was committed"
        ) from error


# Table properties under which a rewrite may not say dataChange = true (its removes do).
_NO_DATA_CHANGE_REWRITES = {
    "delta.appendOnly": "the table is append-only",
    "delta.enableChangeDataFeed": "the change data feed would report the rows as changed",
}


def _refuse_purge(snapshot: TableSnapshot) -> None:
    for key, why in _NO_DATA_CHANGE_REWRITES.items():
        if str(snapshot.configuration.get(key) or "").lower() == "true":
            raise UnsupportedTableError(
                f"table {snapshot.uri} (version {snapshot.version}) has files with deleted rows, "
                f"which zorder can only rewrite as a data change, and {key} is true: {why}. "
                "Nothing was written; purge the deleted rows with Delta's REORG TABLE ... "
                "APPLY (PURGE) first, or optimize partitions without deleted rows (where=...)"
            )


PartitionFilter = tuple[str, str, str | list[str]]


def _overwrite_filters(
    columns: Sequence[str], partitions: set[tuple[Any, ...]]
) -> list[PartitionFilter] | None:
    """A conjunction of partition filters that holds for every partition of ``partitions``.

    It may hold for others too (a column whose values mix NULL and others is
    left out, and the values of several columns combine): the files it
    selects are the rewrite's scope. None: the whole table.
    """
    filters: list[PartitionFilter] = []
    for index, column in enumerate(columns):
        values = {delta_partition_value(values[index]) for values in partitions}
        if values == {None}:
            filters.append((column, "=", ""))  # delta-rs: "" matches a NULL partition value
        elif None not in values:
            filters.append((column, "in", sorted(v for v in values if v is not None)))
    return filters or None


def _committed_version(table: DeltaTable, clustering: CommitClustering | None) -> int:
    """The version this process's commit on ``table`` became (later ones may exist)."""
    table.update_incremental()
    if clustering is not None:
        for commit in table.history(_HISTORY_SEARCH):
            raw = commit.get(COMMIT_METADATA_KEY)
            recorded = json.loads(raw) if isinstance(raw, str) else raw
            if isinstance(recorded, dict) and recorded.get("runId") == clustering.run.id:
                return int(commit["version"])
    return int(table.version())


def _commit_rewrite(
    uri: str,
    delta_schema: DeltaSchema,
    files: Sequence[WrittenFile],
    snapshot: TableSnapshot,
    removed: Sequence[DataFile],
    clustering: CommitClustering | None,
    storage_options: Mapping[str, str] | None,
) -> int:
    """Optimize's commit, with optimistic concurrency checked here, not by delta-rs.

    delta-rs treats a transaction of adds and removes in mode "append" as a
    blind append and lets it through whatever was committed meanwhile, so two
    optimize runs could both remove the same files and both add their copies
    of the rows. Instead: read the newest version V, check that every file
    this run removes is still live in it and the schema is the one read, and
    commit as exactly V + 1 (no retries inside delta-rs); if another writer
    took V + 1 first, check again on the newer version.
    """
    now = int(time.time() * 1000)
    actions: list[AddAction | RemoveAction] = [*_add_actions(files, data_change=False)]
    actions += [
        RemoveAction(path=f.path, data_change=False, deletion_timestamp=now, size=f.size)
        for f in removed
    ]
    exact = _commit_properties(clustering, max_commit_retries=0)
    for _ in range(_REWRITE_ATTEMPTS):
        latest = load_snapshot(uri, storage_options)
        live = {f.path for f in latest.files}
        # A file that gained a deletion vector meanwhile is another logical file
        # (path, vector): a remove of the old one would leave the new one live.
        gone = [f.path for f in removed if f.path not in live or f.path in latest.deleted_positions]
        if gone or latest.schema != snapshot.schema:
            what = (
                f"{len(gone)} of the {len(removed)} files it rewrote (e.g. {gone[0]!r})"
                if gone
                else "the table's schema"
            )
            raise ConcurrentCommitError(
                f"a concurrent commit to {uri} after version {snapshot.version} changed {what} "
                f"(now at version {latest.version}). Nothing was committed; the table is as the "
                "other writer left it. Run again on the new version."
            )
        try:
            latest.table.create_write_transaction(
                actions,
                mode="append",
                schema=delta_schema,
                partition_by=list(snapshot.partition_columns) or None,
                commit_properties=exact,
            )
        except CommitFailedError as error:
            _refuse_unsupported(uri, error)
            continue  # another commit took version V + 1 first: check against it
        return latest.version + 1  # no retries: exactly the version after the one checked
    raise ConcurrentCommitError(
        f"gave up committing to {uri} after {_REWRITE_ATTEMPTS} attempts: other writers kept "
        "committing first. Nothing was committed; run again."
    )


def file_statistics(uri: str, storage_options: Mapping[str, str] | None = None) -> pa.Table:
    """One row per data file: path, size_bytes, num_records, min.<c>, max.<c>, null_count.<c>."""
    table = load_snapshot(uri, storage_options).table
    return pa.table(table.get_add_actions(flatten=True))


def record_properties(
    uri: str,
    properties: Mapping[str, str],
    *,
    storage_options: Mapping[str, str] | None = None,
) -> int | None:
    """Set the table's ``properties`` in a commit of their own; None when all already hold.

    A metadata change: Delta fails writers that started before it and commit
    after it, so it is made only when a value changes.
    """
    table = DeltaTable(uri, storage_options=dict(storage_options or {}))
    current = table.metadata().configuration
    changed = {k: v for k, v in properties.items() if current.get(k) != v}
    if not changed or table.protocol().min_writer_version >= _FEATURES_WRITER_VERSION:
        # deltalake 1.6's set_table_properties adds features to such a protocol
        # (variantType among its reader features: older readers would refuse the
        # table). zorder changes no protocol; the spec is found in its commits.
        return None
    try:
        table.alter.set_table_properties(changed, raise_if_not_exists=False)
    except CommitFailedError as error:
        raise ConcurrentCommitError(
            f"recording table properties {changed} on {uri} conflicts with a concurrent "
            f"commit: {error}. The data commit stands; run again to record them."
        ) from error
    table.update_incremental()
    return int(table.version())


def latest_clustering(
    uri: str, storage_options: Mapping[str, str] | None = None
) -> CommitClustering | None:
    """What the newest zorder commit still in the history recorded, if any."""
    table = DeltaTable(uri, storage_options=dict(storage_options or {}))
    for commit in table.history():
        raw = commit.get(COMMIT_METADATA_KEY)
        if raw:
            parsed = json.loads(raw) if isinstance(raw, str) else raw
            return CommitClustering.from_metadata(parsed)
    return None


def vacuum_files(
    uri: str,
    *,
    retain_hours: float,
    dry_run: bool,
    force: bool = False,
    storage_options: Mapping[str, str] | None = None,
) -> list[str]:
    """Files under the table that no version within ``retain_hours`` references.

    Both files removed by commits older than the retention and files never
    committed (left by a run that died before its commit) count; names that
    start with ``_`` or ``.`` (the log itself) never do. Deletes them unless
    ``dry_run``. Below :data:`MIN_VACUUM_RETENTION_HOURS` (or the table's own
    ``delta.deletedFileRetentionDuration``) only with ``force``, because a
    reader of an older version or a writer still running could need them.
    """
    if retain_hours < 0:
        raise InvalidArgumentError(f"retain_hours must be >= 0, got {retain_hours}")
    if retain_hours < MIN_VACUUM_RETENTION_HOURS and not force:
        raise InvalidArgumentError(
            f"retain_hours={retain_hours:g} is below the safe minimum of "
            f"{MIN_VACUUM_RETENTION_HOURS} hours: readers of older versions and writers still "
            "running may need those files; pass force=True (CLI: --force) to vacuum anyway"
        )
    snapshot = load_snapshot(uri, storage_options)
    snapshot.check_writable("vacuum")
    table = snapshot.table
    hours = math.ceil(retain_hours)
    if DELETION_VECTORS not in (table.protocol().reader_features or ()):
        return [
            str(path)
            for path in table.vacuum(
                retention_hours=hours,
                dry_run=dry_run,
                enforce_retention_duration=not force,
                full=True,
            )
        ]
    # deltalake 1.6's full vacuum counts a live deletion vector's file as unreferenced
    # (deleting it would bring the deleted rows back): no deletion vector file is
    # vacuumed here, and the rest is deleted file by file.
    unused = [
        str(path)
        for path in table.vacuum(
            retention_hours=hours, dry_run=True, enforce_retention_duration=not force, full=True
        )
        if not posixpath.basename(str(path)).startswith(_DELETION_VECTOR_FILE_PREFIX)
    ]
    if not dry_run:
        filesystem, root = snapshot._storage
        for relative in unused:
            filesystem.delete_file(f"{root.rstrip('/')}/{relative}")
    return unused
