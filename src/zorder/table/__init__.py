"""Delta log access through the ``deltalake`` package (never hand-written)."""

from __future__ import annotations

from zorder.table.clustering import (
    COMMIT_METADATA_KEY,
    CommitClustering,
    Operation,
    Run,
)
from zorder.table.delta import (
    MIN_VACUUM_RETENTION_HOURS,
    CommitMode,
    DataFile,
    TableSnapshot,
    WrittenFile,
    commit_files,
    delete_directory,
    delta_partition_value,
    describe_written_files,
    file_statistics,
    is_delta_table,
    latest_clustering,
    load_snapshot,
    normalize_uri,
    record_properties,
    remove_writer_markers,
    vacuum_files,
)

__all__ = [
    "COMMIT_METADATA_KEY",
    "MIN_VACUUM_RETENTION_HOURS",
    "CommitClustering",
    "CommitMode",
    "DataFile",
    "Operation",
    "Run",
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
    "record_properties",
    "remove_writer_markers",
    "vacuum_files",
]
