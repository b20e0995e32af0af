"""Maintenance of a table's storage and history: vacuum, the newest clustering commit,
the statistics of its files.
"""

from __future__ import annotations

import json
import math
import posixpath
from collections.abc import Mapping

import pyarrow as pa
from deltalake import DeltaTable

from zorder.errors import (
    InvalidArgumentError,
)
from zorder.table.clustering import (
    COMMIT_METADATA_KEY,
    CommitClustering,
)
from zorder.table.features import (
    DELETION_VECTORS,
)
from zorder.table.retention import DEFAULT_RETENTION_HOURS
from zorder.table.snapshot import TableSnapshot, load_snapshot

__all__ = ["MIN_VACUUM_RETENTION_HOURS", "file_statistics", "latest_clustering", "vacuum_files"]


# Delta's default delta.deletedFileRetentionDuration: a reader or writer that
# started within this window may still need files an older version referenced.
MIN_VACUUM_RETENTION_HOURS = int(DEFAULT_RETENTION_HOURS)


# Reader features whose data plain Parquet reads would get wrong.
# Delta writers name a deletion vector's file deletion_vector_<uuid>.bin (PROTOCOL.md).
_DELETION_VECTOR_FILE_PREFIX = "deletion_vector_"


def file_statistics(uri: str, storage_options: Mapping[str, str] | None = None) -> pa.Table:
    """One row per data file: path, size_bytes, num_records, min.<c>, max.<c>, null_count.<c>."""
    table = load_snapshot(uri, storage_options).table
    return pa.RecordBatchReader.from_stream(table.get_add_actions(flatten=True)).read_all()


def latest_clustering(
    uri: str,
    storage_options: Mapping[str, str] | None = None,
    *,
    at_version: int | None = None,
) -> CommitClustering | None:
    """What the newest zorder commit still in the history (up to ``at_version``) recorded."""
    table = DeltaTable(uri, storage_options=dict(storage_options or {}))
    for commit in table.history():
        if at_version is not None and int(commit.get("version", -1)) > at_version:
            continue
        raw = commit.get(COMMIT_METADATA_KEY)
        if raw:
            parsed = json.loads(raw) if isinstance(raw, str) else raw
            return CommitClustering.from_metadata(parsed)
    return None


def vacuum_files(
    snapshot: TableSnapshot,
    *,
    retain_hours: float,
    dry_run: bool,
    force: bool = False,
    floor_hours: float = MIN_VACUUM_RETENTION_HOURS,
) -> list[str]:
    """Files under ``snapshot``'s table that no version within ``retain_hours`` references.

    Both files removed by commits older than the retention and files never
    committed (left by a run that died before its commit) count; names that
    start with ``_`` or ``.`` (the log itself) never do. Deletes them unless
    ``dry_run``. Below ``floor_hours`` (what the table's own
    ``delta.deletedFileRetentionDuration`` keeps; by default
    :data:`MIN_VACUUM_RETENTION_HOURS`, Delta's week) only with ``force``,
    because a reader of an older version or a writer still running could need them.
    """
    if retain_hours < 0:
        raise InvalidArgumentError(f"retain_hours must be >= 0, got {retain_hours}")
    if retain_hours < floor_hours and not force:
        raise InvalidArgumentError(
            f"retain_hours={retain_hours:g} is below the safe minimum of "
            f"{floor_hours:g} hours: readers of older versions and writers still "
            "running may need those files; pass force=True (CLI: --force) to vacuum anyway"
        )
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
        filesystem, root = snapshot.storage
        for relative in unused:
            filesystem.delete_file(f"{root.rstrip('/')}/{relative}")
    return unused
