"""A pinned version of a Delta table, from its log alone: files, statistics, schema.

Metadata only: nothing here reads a data file or imports pyspark. The
schema's forms are in :mod:`zorder.table.delta.schema`; the engines read a
snapshot's files elsewhere (:mod:`zorder.spark.scan`,
:mod:`zorder.arrow.files`); commits are in :mod:`zorder.table.delta.commit`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlparse

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
from deltalake import DeltaTable
from deltalake.exceptions import DeltaError, DeltaProtocolError
from deltalake.exceptions import TableNotFoundError as DeltalakeTableNotFoundError

from zorder.columns import match_column
from zorder.curves.kinds import ClusteringSpec
from zorder.errors import (
    BrokenTableError,
    InternalError,
    NotADeltaTableError,
    TableNotFoundError,
    UnsupportedTableError,
    ZorderError,
)
from zorder.skipping.zones import is_utc, session_zone
from zorder.stats import STATS_COLUMNS
from zorder.table.clustering import (
    SPEC_TRANSACTION,
    CommitClustering,
    Run,
    latest_clustering,
    read_spec_file,
    recorded_spec,
    recorded_target_file_size,
    trusted_runs,
)
from zorder.table.delta.actions import (
    delta_partition_value,
    logical_statistics,
    partition_tuples,
    with_partition_statistics,
    with_partition_values,
)
from zorder.table.delta.features import (
    Protocol,
    WriteOperation,
    type_changes,
    unreadable,
    unsupported_type_changes,
    unwritable,
)
from zorder.table.delta.mapping import ColumnMapping
from zorder.table.delta.schema import TableSchema
from zorder.table.delta.timestamps import instant, is_zoned, wall_clocks_in_zone
from zorder.table.delta.vectors import deleted_positions
from zorder.table.delta.versions import AsOf, log_is_whole, open_table
from zorder.table.storage import Storage, normalize_uri

__all__ = [
    "DataFile",
    "TableSnapshot",
    "by_partition",
    "has_scheme",
    "is_delta_table",
    "load_snapshot",
    "normalize_uri",
    "not_a_table",
]


def is_delta_table(storage: Storage) -> bool:
    """Whether a Delta log is at ``storage``; False for a file, where deltalake raises."""
    try:
        return bool(DeltaTable.is_deltatable(storage.uri, storage.delta_options))
    except OSError:
        if storage.scheme == "" and not os.path.isdir(storage.uri):
            return False  # a regular file (or nothing): no log can be in it
        raise


# A folder of these (at its top, or in Hive-style key=value folders) is Parquet data.
_PARQUET_SUFFIXES = (".parquet", ".parq")
_PARTITION_FOLDERS_LOOKED_INTO = 3


def not_a_table(storage: Storage, *, then: str = "") -> NotADeltaTableError:
    """The error for a location that holds no Delta table, saying what is there instead:
    nothing, a file, a folder of Parquet files (which ``zorder write`` makes a table of),
    a folder without ``_delta_log``, or a log with no readable commit. ``then`` ends it
    ("; nothing to optimize"). Where nothing of a table is there (no such path, a folder
    without ``_delta_log`` or Parquet files) it is a :class:`TableNotFoundError`."""
    found, missing = _found_instead(storage)
    error = TableNotFoundError if missing else NotADeltaTableError
    return error(f"not a Delta table: {storage.uri} ({found}){then}")


def _found_instead(storage: Storage) -> tuple[str, bool]:
    """What is at the table's location instead, and whether that is nothing of a table."""
    import pyarrow.fs as pafs

    try:
        filesystem, root = storage.filesystem()
        kind = filesystem.get_file_info(root).type
        if kind == pafs.FileType.NotFound:
            return "no such path", True
        if kind != pafs.FileType.Directory:
            return "a file, not a table's folder", False
        listed = filesystem.get_file_info(pafs.FileSelector(root, recursive=False))
        if any(f.base_name == "_delta_log" for f in listed):
            return "its _delta_log holds no readable commit", False
        if _holds_parquet(filesystem, listed):
            return (
                "a folder of Parquet files, not a Delta table: make one of it with "
                f"`zorder write {storage.uri} DEST --by COLUMNS` (zorder.write in Python)"
            ), False
    except (OSError, ZorderError):
        return "no readable _delta_log found", False  # what is there cannot be listed
    return "the folder exists but holds no _delta_log", True


def _holds_parquet(filesystem: Any, listed: Sequence[Any]) -> bool:
    """Whether ``listed`` (a folder's entries) holds Parquet files, or Hive-style partition
    folders (``day=...``) that do (a few looked into)."""
    import pyarrow.fs as pafs

    visible = [f for f in listed if not f.base_name.startswith(("_", "."))]
    if any(f.base_name.lower().endswith(_PARQUET_SUFFIXES) for f in visible):
        return True
    folders = [f for f in visible if f.type == pafs.FileType.Directory and "=" in f.base_name]
    for folder in folders[:_PARTITION_FOLDERS_LOOKED_INTO]:
        inside = filesystem.get_file_info(pafs.FileSelector(folder.path, recursive=False))
        if _holds_parquet(filesystem, inside):
            return True
    return False


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
    # The add action's modificationTime (ms since the epoch; 0 if the log has none): with
    # the path and size, what tells a file from another written at its path later.
    modified: int = 0


def has_scheme(path: str) -> bool:
    scheme = urlparse(path).scheme
    return len(scheme) > 1  # a drive letter is no scheme


@dataclass(frozen=True)
class TableSnapshot:
    """A version of a table, pinned: what optimize reads and conflict-checks against."""

    storage: Storage  # where the table lives, and the filesystem that reaches it
    table: DeltaTable
    version: int
    configuration: Mapping[str, str | None]
    partition_columns: tuple[str, ...]
    schema: TableSchema  # its forms: Delta's, Arrow's, the files', Spark's type names
    actions: pa.Table  # get_add_actions(flatten=False): path, size_bytes, num_records, min, ...
    # The zone zone-less timestamp partition values were read in (in_time_zone); None: as
    # deltalake reads them, in UTC.
    time_zone: str | None = None

    @property
    def uri(self) -> str:
        return self.storage.uri

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
        modified = (
            actions.column("modification_time").to_pylist()
            if "modification_time" in actions.column_names
            else [None] * actions.num_rows
        )
        partitions = partition_tuples(actions, self.partition_columns)
        deleted = self.deleted_positions
        files = []
        for path, size, count, values, time in zip(
            actions.column("path").to_pylist(),
            actions.column("size_bytes").to_pylist(),
            records,
            partitions,
            modified,
            strict=True,
        ):
            decoded = unquote(path)
            gone = len(deleted[decoded]) if decoded in deleted else 0
            live = None if count is None else count - gone
            files.append(
                DataFile(decoded, int(size), live, values, gone, decoded in deleted, int(time or 0))
            )
        return tuple(files)

    def in_time_zone(self, time_zone: str) -> TableSnapshot:
        """This snapshot with zone-less timestamp partition values read in ``time_zone``.

        Delta Spark writes a ``timestamp`` partition value as wall-clock text
        (``2021-09-08 11:11:11``) and reads it in the session's zone; ISO-8601
        text with a zone (``...T18:11:11Z``) means that instant everywhere.
        deltalake reads both in UTC. Only reads take the zone: a rewrite keeps
        each partition's text as the log has it.
        """
        if self.time_zone is not None:
            if self.time_zone == time_zone:
                return self
            # Its values were moved from deltalake's readings already: moving them again
            # would misplace them. Read in another zone from the snapshot as loaded.
            raise InternalError(
                f"snapshot of {self.uri} is read in {self.time_zone} already, not {time_zone}"
            )
        columns = self._timestamp_partitions
        if not columns or is_utc(time_zone):
            return self
        zone = session_zone(time_zone)
        raw = self.table.partitions()
        moves = {}
        for column in columns:
            texts = {str(t) for entry in raw if (t := entry.get(column)) is not None}
            moved, clashes = wall_clocks_in_zone(texts, zone)
            if clashes:
                raise UnsupportedTableError(
                    f"table {self.uri} column {column}: partition values with and without a "
                    f"zone both read as {min(clashes)} in deltalake, so zorder cannot tell "
                    "which files hold which; read it in UTC"
                )
            moves[column] = moved
        actions = with_partition_values(self.actions, self.partition_columns, moves)
        in_zone = dataclasses.replace(self, actions=actions, time_zone=time_zone)
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

    @property
    def _timestamp_partitions(self) -> list[str]:
        types = self.schema.column_types
        return [c for c in self.partition_columns if types.get(c) == "timestamp"]

    @functools.cached_property
    def _timestamp_texts(self) -> dict[str, list[str]]:
        """Each timestamp partition column's distinct texts in the log."""
        columns = self._timestamp_partitions
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
            self.schema.json,
            operation,
        )
        if reasons:
            raise UnsupportedTableError(
                f"zorder cannot {operation} table {self.uri} (version {self.version}): "
                f"{'; '.join(reasons)}. Nothing was written"
            )

    def type_changes(self) -> tuple[list[str], list[str]]:
        """The type changes the table's columns went through (``column: from -> to``), and
        the reasons of those Delta's type widening does not allow; empty where it records
        none."""
        protocol = Protocol.of(self.table.protocol())
        return (
            type_changes(protocol, self.schema.json),
            unsupported_type_changes(protocol, self.schema.json),
        )

    def transaction_version(self, app_id: str) -> int | None:
        """The version the table records for the writer ``app_id`` (its ``txn``), if any."""
        return self.table.transaction_version(app_id)

    @functools.cached_property
    def deleted_positions(self) -> Mapping[str, npt.NDArray[np.int64]]:
        """Per file with a deletion vector (by its decoded path): its deleted rows' positions
        (see :func:`zorder.table.delta.vectors.deleted_positions`)."""
        return deleted_positions(self.table, self.actions, self.uri, self.version)

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
        """Per file: the zorder run that wrote it, None for any other file (see
        :func:`zorder.table.clustering.trusted_runs`: a directory name alone is not trusted)."""
        paths = self.actions.column("path").to_pylist()
        return trusted_runs([str(p) for p in paths], self.table.transaction_version)

    @property
    def recorded_spec(self) -> ClusteringSpec | None:
        """The clustering spec the table's properties record, if any."""
        return recorded_spec(self.configuration)

    @functools.cached_property
    def clustering_spec(self) -> ClusteringSpec | None:
        """The table's spec as reads see it: the one its properties record, else
        :attr:`logged_spec` where zorder has written (its runs hold files, or it kept a
        spec); a table zorder never wrote is not walked back for one. A table on Delta's
        table-features protocol keeps no properties from zorder (see
        :func:`~zorder.table.record_properties`)."""
        recorded = self.recorded_spec
        if recorded is not None:
            return recorded
        paths = self.actions.column("path").to_pylist()
        # The paths first: they are in memory, the txn may be a read of the log.
        if any(Run.of_path(str(p)) for p in paths) or self.kept_fingerprint is not None:
            return self.logged_spec
        return None

    @functools.cached_property
    def logged_spec(self) -> ClusteringSpec | None:
        """What a table whose properties record no spec goes by: the newest zorder commit's
        still in the log (a restore's undoing seen), else, once the log's cleanup removed
        its first commits, the spec zorder kept (:attr:`kept_spec`). With every commit
        still there, none records a spec: a restore undid them, and took the spec back."""
        latest = self.latest_clustering
        if latest is not None:
            return latest.spec
        if self.kept_fingerprint is None or log_is_whole(self.storage):
            return None
        return self.kept_spec

    @functools.cached_property
    def kept_fingerprint(self) -> str | None:
        """The fingerprint the ``zorder.spec`` txn names (see :mod:`zorder.table.clustering`),
        None without one."""
        version = self.table.transaction_version(SPEC_TRANSACTION)
        return f"{version:08x}" if version is not None and 0 <= version < 16**8 else None

    @functools.cached_property
    def kept_spec(self) -> ClusteringSpec | None:
        """The spec zorder kept outside the log, from its file; None without one. It
        outlasts the commits that recorded it."""
        fingerprint = self.kept_fingerprint
        return read_spec_file(self.storage, fingerprint) if fingerprint is not None else None

    @functools.cached_property
    def latest_clustering(self) -> CommitClustering | None:
        """What the newest zorder commit up to this version recorded (its spec is the
        table's when the properties record none); read from the log once per snapshot."""
        return latest_clustering(self.storage, at_version=self.version)

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
        if has_scheme(data_file.path):
            return data_file.path
        return f"{self.uri.rstrip('/')}/{data_file.path}"

    @property
    def stored_configuration(self) -> Mapping[str, str | None]:
        """The configuration, with ``delta.dataSkippingStatsColumns`` naming the columns as
        files name them (the property lists logical names)."""
        listed = self.configuration.get(STATS_COLUMNS)
        if self.schema.mapping is None or not listed:
            return self.configuration
        stored = []
        for name in listed.split(","):
            logical = match_column(name.strip().strip("`"), self.schema.column_types)
            if logical is not None:
                stored.append(self.schema.stored_name(logical))
        return {**self.configuration, STATS_COLUMNS: ",".join(stored)}

    def files_by_partition(self) -> dict[tuple[Any, ...], list[DataFile]]:
        """The files of each partition (one group of all files when unpartitioned)."""
        return by_partition(self.files)


def by_partition(files: Sequence[DataFile]) -> dict[tuple[Any, ...], list[DataFile]]:
    groups: dict[tuple[Any, ...], list[DataFile]] = {}
    for data_file in files:
        groups.setdefault(data_file.partition, []).append(data_file)
    return groups


def load_snapshot(
    storage: Storage,
    *,
    version: int | None = None,
    timestamp: AsOf | None = None,
    time_zone: str = "UTC",
) -> TableSnapshot:
    """Pin the table's newest version, or the one asked for (see :func:`open_table`), and
    list its files with their statistics."""
    uri = storage.uri
    asked = f"version {version}" if version is not None else f"as of {timestamp}"
    where = f"table {uri} ({asked if version is not None or timestamp else 'latest version'})"
    try:
        table = open_table(storage, version=version, timestamp=timestamp, time_zone=time_zone)
        metadata = table.metadata()
        _refuse_unreadable(uri, table, metadata.configuration)
        # Not pa.table(): it imports pandas (0.2 s) to ask whether this is a DataFrame.
        actions = pa.RecordBatchReader.from_stream(table.get_add_actions(flatten=False)).read_all()
    except DeltaError as error:  # DeltaProtocolError and TableNotFoundError among them
        # Asked only now, so that loading a table reads its log once.
        if isinstance(error, DeltalakeTableNotFoundError) or not is_delta_table(storage):
            raise not_a_table(storage) from error
        raise _log_error(where, error) from error
    partition_columns = tuple(metadata.partition_columns)
    schema = TableSchema.of(table.schema(), metadata.configuration)
    if schema.mapping_mode != "none":
        actions = logical_statistics(actions, ColumnMapping.of(schema.json))
    actions = with_partition_statistics(actions, partition_columns)
    return TableSnapshot(
        storage=storage,
        table=table,
        version=table.version(),
        configuration=dict(metadata.configuration),
        partition_columns=partition_columns,
        schema=schema,
        actions=actions,
    )


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
