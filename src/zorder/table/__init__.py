"""The table layer: a table's versions, files and commits, behind one seam per format.

The format's own part lives in a package of its own: :mod:`zorder.table.delta`, Delta
Lake through the ``deltalake`` package (the log is never hand-written), the one format
now; an Iceberg snapshot and committer (through ``pyiceberg``) are to sit beside it, in
a package of their own. What is the same for every format stays here:

- :mod:`~zorder.table.storage`: where a table lives and how each client reaches it.
- :mod:`~zorder.table.runs`: a run's files described from their footers, Spark's markers.
- :mod:`~zorder.table.clustering`: zorder's own records of a run (spec, run id, file
  numbers); :mod:`~zorder.table.tiering`: which files an incremental optimize rewrites;
  :mod:`~zorder.table.depths`: the clustering depth of a version's files;
  :mod:`~zorder.table.partition_filters`: which partitions a filter chooses.

The layers above import the names they share from this package (a snapshot, its
files, a commit request, storage); what is Delta's alone (column mapping, deletion
vectors, protocol features, the log's time travel) they import from
:mod:`zorder.table.delta`, by name. Spark reads a snapshot in :mod:`zorder.spark.scan`;
nothing here imports pyspark.
"""

from __future__ import annotations

from zorder.table.clustering import (
    COMMIT_METADATA_KEY,
    CommitClustering,
    Operation,
    Run,
    latest_clustering,
)
from zorder.table.delta.actions import delta_partition_value
from zorder.table.delta.commit import (
    CommitAttempt,
    CommitMode,
    CommitRequest,
    commit_files,
    guarded_run,
    record_properties,
)
from zorder.table.delta.conflicts import rewrite_scope
from zorder.table.delta.maintenance import (
    MIN_VACUUM_RETENTION_HOURS,
    Commit,
    history,
    vacuum_files,
)
from zorder.table.delta.schema import TableSchema
from zorder.table.delta.snapshot import (
    DataFile,
    TableSnapshot,
    by_partition,
    has_scheme,
    is_delta_table,
    load_snapshot,
    not_a_table,
)
from zorder.table.delta.versions import AsOf
from zorder.table.runs import (
    WrittenFile,
    delete_directory,
    describe_written_files,
    remove_writer_markers,
)
from zorder.table.storage import (
    Storage,
    UnsafeCommitWarning,
    normalize_uri,
    options_from_hadoop,
    parse_storage_options,
)

__all__ = [
    "COMMIT_METADATA_KEY",
    "MIN_VACUUM_RETENTION_HOURS",
    "AsOf",
    "Commit",
    "CommitAttempt",
    "CommitClustering",
    "CommitMode",
    "CommitRequest",
    "DataFile",
    "Operation",
    "Run",
    "Storage",
    "TableSchema",
    "TableSnapshot",
    "UnsafeCommitWarning",
    "WrittenFile",
    "by_partition",
    "commit_files",
    "delete_directory",
    "delta_partition_value",
    "describe_written_files",
    "guarded_run",
    "has_scheme",
    "history",
    "is_delta_table",
    "latest_clustering",
    "load_snapshot",
    "normalize_uri",
    "not_a_table",
    "options_from_hadoop",
    "parse_storage_options",
    "record_properties",
    "remove_writer_markers",
    "rewrite_scope",
    "vacuum_files",
]
