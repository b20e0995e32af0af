"""Delta tables through the ``deltalake`` package: the log is never hand-written.

- :mod:`~zorder.table.snapshot`: a pinned version, from the log alone (no data read);
  :mod:`~zorder.table.versions` chooses it (time travel);
  :mod:`~zorder.table.actions` reads its add actions, :mod:`~zorder.table.vectors` its
  deletion vectors; :mod:`~zorder.table.schema` holds its schema's forms.
- :mod:`~zorder.table.runs`: a run's files described from their footers, Spark's markers.
- :mod:`~zorder.table.commit`: committing them; :mod:`~zorder.table.conflicts`: a rewrite
  checked against the commits since its snapshot; :mod:`~zorder.table.outcome`: whether
  a commit reached the log.
- :mod:`~zorder.table.evolution`: new nullable columns added before an append's data
  (``schema_mode="merge"``), in a commit of their own.
- :mod:`~zorder.table.maintenance`: vacuum, the newest clustering commit;
  :mod:`~zorder.table.restore`: a restore, checked, then committed by deltalake.
- :mod:`~zorder.table.clustering`, :mod:`~zorder.table.tiering`,
  :mod:`~zorder.table.features`, :mod:`~zorder.table.mapping`,
  :mod:`~zorder.table.timestamps`: pure rules over the log's contents.

Spark reads a snapshot in :mod:`zorder.spark.scan`; nothing here imports pyspark.
"""

from __future__ import annotations

from zorder.table.actions import delta_partition_value
from zorder.table.clustering import (
    COMMIT_METADATA_KEY,
    CommitClustering,
    Operation,
    Run,
    latest_clustering,
)
from zorder.table.commit import (
    CommitAttempt,
    CommitMode,
    CommitRequest,
    commit_files,
    guarded_run,
    record_properties,
)
from zorder.table.conflicts import rewrite_scope
from zorder.table.maintenance import (
    MIN_VACUUM_RETENTION_HOURS,
    Commit,
    history,
    vacuum_files,
)
from zorder.table.runs import (
    WrittenFile,
    delete_directory,
    describe_written_files,
    remove_writer_markers,
)
from zorder.table.schema import TableSchema
from zorder.table.snapshot import (
    DataFile,
    TableSnapshot,
    is_delta_table,
    load_snapshot,
    not_a_table,
)
from zorder.table.storage import (
    Storage,
    UnsafeCommitWarning,
    normalize_uri,
    options_from_hadoop,
    parse_storage_options,
)
from zorder.table.versions import AsOf

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
    "commit_files",
    "delete_directory",
    "delta_partition_value",
    "describe_written_files",
    "guarded_run",
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
