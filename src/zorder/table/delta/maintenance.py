"""Maintenance of a table's storage and history: vacuum, and the commits the log holds."""

from __future__ import annotations

import datetime as dt
import math
import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pyarrow.fs as pafs

from zorder.errors import (
    InvalidArgumentError,
)
from zorder.table.clustering import (
    USER_METADATA_KEY,
    CommitClustering,
    commit_clustering,
    latest_clustering,
)
from zorder.table.delta.features import (
    DELETION_VECTORS,
)
from zorder.table.delta.retention import DEFAULT_RETENTION_HOURS
from zorder.table.delta.snapshot import TableSnapshot
from zorder.table.delta.versions import commit_infos
from zorder.table.storage import Storage

__all__ = [
    "MIN_VACUUM_RETENTION_HOURS",
    "Commit",
    "history",
    "latest_clustering",
    "vacuum_files",
    "vacuum_hidden",
]


# Delta's default delta.deletedFileRetentionDuration: a reader or writer that
# started within this window may still need files an older version referenced.
MIN_VACUUM_RETENTION_HOURS = int(DEFAULT_RETENTION_HOURS)


# Delta writers name a deletion vector's file deletion_vector_<uuid>.bin (PROTOCOL.md).
_DELETION_VECTOR_FILE_PREFIX = "deletion_vector_"

# Delta Spark's VACUUM lists no file or directory whose name starts with these...
_HIDDEN_PREFIXES = ("_", ".")
# ...but for these, which hold data tied to the table's files (bloom filter indexes,
# the change data feed), vacuumed along with them.
_DELTA_OWNED_PREFIXES = ("_delta_index", "_change_data")
_DELTA_LOG = "_delta_log"
# UniForm keeps Iceberg's metadata files in <table>/metadata, unknown to the Delta log.
_ICEBERG_METADATA_DIR = "metadata"
_UNIVERSAL_FORMATS = "delta.universalFormat.enabledFormats"


@dataclass(frozen=True)
class Commit:
    """One commit of the table's history: its version, time, Delta operation, the zorder
    run it added, if any, and its ``userMetadata`` (zorder's: what the run did)."""

    version: int
    timestamp: dt.datetime | None
    operation: str
    clustering: CommitClustering | None = None
    user_metadata: str | None = None


def history(
    storage: Storage, *, limit: int | None = None, up_to: int | None = None
) -> tuple[Commit, ...]:
    """The commits the log still holds (up to version ``up_to``), newest first (``limit`` of
    them at most). A commit's time is its ``inCommitTimestamp`` where it records one, else
    its ``timestamp``."""
    commits: list[Commit] = []
    for version, info in commit_infos(storage, up_to=up_to):
        if limit is not None and len(commits) >= limit:
            break
        millis = info.get("inCommitTimestamp", info.get("timestamp"))
        when = dt.datetime.fromtimestamp(millis / 1000, dt.UTC) if isinstance(millis, int) else None
        operation, note = str(info.get("operation", "")), info.get(USER_METADATA_KEY)
        text = note if isinstance(note, str) else None
        commits.append(Commit(version, when, operation, commit_clustering(info), text))
    return tuple(commits)


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
    committed (left by a run that died before its commit) count. What Delta
    Spark's VACUUM never touches never counts either: a file or directory
    whose name :func:`vacuum_hidden` hides, at any depth (the log itself among
    them), and anything in a directory that holds a ``_delta_log`` of its own
    (a table nested in this one). On a table with deletion vectors, no
    deletion vector's file counts. Deletes them unless ``dry_run``: the same
    listing either way. Below ``floor_hours`` (what the table's own
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
    # deltalake's full vacuum only lists here, never deletes: it hides a name starting
    # with "_" or "." only at the table's top level (a nested table's _delta_log would
    # go) and counts a live deletion vector's file as unreferenced (deleting it would
    # bring the deleted rows back).
    listed = table.vacuum(
        retention_hours=math.ceil(retain_hours),
        dry_run=True,
        enforce_retention_duration=not force,
        full=True,
    )
    filesystem, root = snapshot.storage.filesystem()
    root = root.rstrip("/")
    unused = _vacuumable(snapshot, [str(path) for path in listed], filesystem, root)
    if not dry_run:
        for relative in unused:
            try:
                filesystem.delete_file(f"{root}/{relative}")
            except FileNotFoundError:
                continue  # gone already: another vacuum of the table ran meanwhile
    return unused


def vacuum_hidden(name: str, partition_columns: Sequence[str], *, iceberg: bool = False) -> bool:
    """Whether Delta Spark's VACUUM passes over a file or directory named ``name``.

    As its ``DeltaTableUtils.isHiddenDirectory``: a name starting with ``_`` or
    ``.`` is hidden, but not ``_delta_index*`` and ``_change_data*`` (data Delta
    ties to the table's files) nor ``<partition column>=...`` (a partition's
    directory, ``_p=1`` for a column ``_p``); with Iceberg UniForm on (``iceberg``),
    ``metadata`` (Iceberg's own files) is hidden too.
    """
    if iceberg and name == _ICEBERG_METADATA_DIR:
        return True
    if not name.startswith(_HIDDEN_PREFIXES) or name.startswith(_DELTA_OWNED_PREFIXES):
        return False
    return not any(name.startswith(f"{column}=") for column in partition_columns)


def _vacuumable(
    snapshot: TableSnapshot, listed: Sequence[str], filesystem: pafs.FileSystem, root: str
) -> list[str]:
    """The files of deltalake's vacuum ``listed`` (relative to ``root``) that Delta Spark's
    VACUUM would delete too, and that are there to delete; no deletion vector's file.

    deltalake lists the expired removes of the log whether their files are still
    there or not (one vacuum deleted them, the next lists them again), and
    anything its listing sees under ``root``: it is the storage, as
    :func:`_visible_files` sees it, that says what may go.
    """
    formats = snapshot.configuration.get(_UNIVERSAL_FORMATS) or ""
    iceberg = "iceberg" in {f.strip().lower() for f in formats.split(",")}
    columns = snapshot.partition_columns
    there = _visible_files(
        filesystem, root, lambda name: vacuum_hidden(name, columns, iceberg=iceberg)
    )
    vectors = DELETION_VECTORS in (snapshot.table.protocol().reader_features or ())
    return [
        relative
        for relative in listed
        if relative in there
        and not (vectors and posixpath.basename(relative).startswith(_DELETION_VECTOR_FILE_PREFIX))
    ]


def _visible_files(
    filesystem: pafs.FileSystem, root: str, hidden: Callable[[str], bool]
) -> set[str]:
    """The files under ``root`` (relative to it) Delta Spark's VACUUM would see: none
    under a name ``hidden`` hides, at any depth.

    Nor any in a directory that holds a ``_delta_log``: a table kept in this one's
    directory. Delta Spark's VACUUM deletes its data files as unreferenced (its log
    is hidden); nothing of it is deleted here.
    """
    selector = pafs.FileSelector(root, recursive=True, allow_not_found=True)
    files: list[list[str]] = []
    tables: set[str] = set()
    for info in filesystem.get_file_info(selector):
        parts = info.path[len(root) + 1 :].split("/")
        tables.update("/".join(parts[:i]) for i, p in enumerate(parts) if i and p == _DELTA_LOG)
        if info.type == pafs.FileType.File and not any(hidden(p) for p in parts):
            files.append(parts)
    return {
        "/".join(parts)
        for parts in files
        if not any("/".join(parts[:i]) in tables for i in range(1, len(parts)))
    }
