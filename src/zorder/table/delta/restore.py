"""Restore: one new commit that makes a table what one of its versions was.

deltalake's ``DeltaTable.restore`` makes the commit, by the algorithm of Delta
Spark's RESTORE (measured on deltalake 1.6.6; ``tests/api/test_restore.py``
keeps the checks): each logical file of the version, a path with its deletion
vector, that is not live now is added again (its add action as the version
has it, deletion vector and statistics included, ``dataChange = true``); each
live one the version lacks is removed with its deletion vector (a remove
without it would leave the file live, see :mod:`zorder.table.delta.conflicts`);
and the version's metadata action (schema, partition columns, table
properties: zorder's clustering spec and ``delta.targetFileSize`` among
them) is committed again, column mapping's physical names and field ids with
it. No data file is written. It commits as exactly the version after the one
it read, with no retries: a commit made meanwhile fails it, and nothing is
committed.

What it does not do is done here, before anything is committed
(:func:`plan_restore`):

- it looks for the version's data files but not for its deletion vectors'
  files, and would commit a version whose vectors a vacuum deleted: every
  vector of the version is read first, and a missing file, of either kind,
  is refused by name (:class:`~zorder.errors.MissingFilesError`);
- it removes files from an append-only table;
- it keeps the table's feature lists where Delta Spark merges both
  versions' (:func:`~zorder.table.delta.features.restore_gaps`);
- it refuses the newest version and commits even when nothing would change:
  a restore to what the table already is (the same logical files, the same
  metadata) commits nothing (:attr:`RestoreChange.changes_nothing`).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from deltalake.exceptions import CommitFailedError, DeltaError
from deltalake.transaction import CommitProperties

from zorder.errors import ConcurrentCommitError, MissingFilesError, UnsupportedTableError
from zorder.table.delta.features import Protocol, restore_gaps
from zorder.table.delta.outcome import CommitAttempt, Recognizer, Watched
from zorder.table.delta.snapshot import DataFile, TableSnapshot, has_scheme
from zorder.table.delta.versions import open_table
from zorder.table.storage import Storage

__all__ = [
    "RESTORE_METADATA_KEY",
    "RestoreChange",
    "RestoreCommit",
    "commit_restore",
    "plan_restore",
]

# The commitInfo key under which a restore's commit records its id (to recognize it).
RESTORE_METADATA_KEY = "zorderRestoreId"
_APPEND_ONLY = "delta.appendOnly"
# deltalake's words for a file it could not find: a deletion vector's, when the vectors
# are read (delta-kernel), and a data file's, when its restore looks for them.
_VECTOR_NOT_FOUND = re.compile(r"File not found: (\S+)")
_DATA_FILE_NOT_FOUND = re.compile(r"Find missing file (.+) when restore")
# How many missing files an error names.
_SHOWN = 5

# A logical file: its path, and the positions its deletion vector deletes (None: none).
_Key = tuple[str, bytes | None]


@dataclass(frozen=True)
class RestoreChange:
    """What restoring ``target`` onto ``current`` (the table's newest version) changes."""

    current: TableSnapshot
    target: TableSnapshot
    # The version's logical files that are not live now, and the live ones it lacks.
    added: tuple[DataFile, ...]
    removed: tuple[DataFile, ...]
    metadata_changed: bool  # schema, partition columns, properties, name or description

    @property
    def changes_nothing(self) -> bool:
        return not (self.added or self.removed or self.metadata_changed)


@dataclass(frozen=True)
class RestoreCommit:
    """What a restore's commit did, as its commit file says."""

    version: int
    files_added: int
    files_removed: int
    bytes_added: int
    bytes_removed: int


def plan_restore(current: TableSnapshot, target: TableSnapshot) -> RestoreChange:
    """What restoring ``target`` onto ``current`` (the newest version) changes, refused
    before anything is committed when it cannot be done exactly."""
    uri = current.uri
    if target.version > current.version:
        raise ConcurrentCommitError(
            f"version {target.version} of {uri} was committed after version {current.version}, "
            "which this restore read; nothing was committed. Run it again"
        )
    current.check_writable("restore")
    where = f"version {target.version} of {uri} cannot be restored onto version {current.version}"
    gaps = restore_gaps(
        Protocol.of(current.table.protocol()),
        Protocol.of(target.table.protocol()),
        target.configuration,
        target.schema.json,
    )
    if gaps:
        raise UnsupportedTableError(f"{where}: {'; '.join(gaps)}. Nothing was committed")
    before, after = _logical_files(current), _restorable_files(target, current.version)
    added = tuple(f for key, f in after.items() if key not in before)
    removed = tuple(f for key, f in before.items() if key not in after)
    if removed and str(current.configuration.get(_APPEND_ONLY) or "").lower() == "true":
        raise UnsupportedTableError(
            f"{where}: it would remove {len(removed)} file(s), and the table is append-only "
            f"({_APPEND_ONLY} = true). Nothing was committed"
        )
    missing = _missing(target, added)
    if missing:
        raise _missing_error(target, current.version, missing)
    return RestoreChange(current, target, added, removed, _metadata(current) != _metadata(target))


def _logical_files(snapshot: TableSnapshot) -> dict[_Key, DataFile]:
    """The version's files by logical file: path and deleted rows (every vector read)."""
    deleted = snapshot.deleted_positions
    return {
        (f.path, deleted[f.path].tobytes() if f.has_vector else None): f for f in snapshot.files
    }


def _restorable_files(target: TableSnapshot, onto: int) -> dict[_Key, DataFile]:
    """:func:`_logical_files` of the version to restore, a deletion vector's missing file
    refused by name."""
    try:
        return _logical_files(target)
    except UnsupportedTableError as error:
        found = _VECTOR_NOT_FOUND.search(str(error.__cause__ or ""))
        if found is None:
            raise
        path = found.group(1).removeprefix(f"{target.uri.rstrip('/')}/")
        raise _missing_error(target, onto, [path], "deletion vector") from error


def _missing(snapshot: TableSnapshot, files: Sequence[DataFile]) -> list[str]:
    """The paths of ``files`` (of ``snapshot``) storage does not hold."""
    import pyarrow.fs as pafs

    filesystem, root = snapshot.storage.filesystem()
    local = [f.path for f in files if not has_scheme(f.path)]
    infos = filesystem.get_file_info([f"{root.rstrip('/')}/{p}" for p in local]) if local else []
    missing = [
        p for p, info in zip(local, infos, strict=True) if info.type == pafs.FileType.NotFound
    ]
    for path in (f.path for f in files if has_scheme(f.path)):
        elsewhere, location = Storage.of(path, snapshot.storage.options).filesystem()
        if elsewhere.get_file_info(location).type == pafs.FileType.NotFound:
            missing.append(path)
    return missing


def _missing_error(
    target: TableSnapshot, onto: int, paths: Sequence[str], kind: str = "data"
) -> MissingFilesError:
    shown = ", ".join(repr(p) for p in paths[:_SHOWN])
    more = f" and {len(paths) - _SHOWN} more" if len(paths) > _SHOWN else ""
    return MissingFilesError(
        f"version {target.version} of {target.uri} cannot be restored onto version {onto}: "
        f"storage no longer "
        f"holds {len(paths)} of its {kind} file(s) ({shown}{more}); a vacuum deleted them, or "
        "someone did by hand. Nothing was committed; restore a newer version",
        paths=tuple(paths),
    )


def _metadata(snapshot: TableSnapshot) -> tuple[Any, ...]:
    metadata = snapshot.table.metadata()
    return (
        metadata.name,
        metadata.description,
        tuple(metadata.partition_columns),
        dict(metadata.configuration),
        json.loads(snapshot.schema.json),
    )


def commit_restore(change: RestoreChange) -> RestoreCommit | None:
    """Commit ``change`` (from :func:`plan_restore`) through deltalake's restore; None when
    it changes nothing (no commit is made)."""
    if change.changes_nothing:
        return None
    current, target = change.current, change.target
    storage, uri, token = current.storage, current.uri, uuid.uuid4().hex
    watched = Watched(CommitAttempt(), storage, current.version, _restoring(token))
    # A table of its own: deltalake moves the one it restores to the new version, and the
    # snapshot's must stay at the version it holds.
    table = open_table(storage, version=current.version)
    try:
        with watched.call():
            table.restore(
                target.version,
                ignore_missing_files=False,
                protocol_downgrade_allowed=False,
                commit_properties=CommitProperties(custom_metadata={RESTORE_METADATA_KEY: token}),
            )
    except CommitFailedError as error:
        if "Unsupported table features" in str(error):
            raise UnsupportedTableError(
                f"deltalake refused to commit to {uri}: {error}. Nothing was committed"
            ) from error
        raise ConcurrentCommitError(
            f"a concurrent commit to {uri} after version {current.version} came first ({error}); "
            f"nothing was committed. Restore version {target.version} again"
        ) from error
    except DeltaError as error:  # a file deleted since it was looked for (a vacuum meanwhile)
        found = _DATA_FILE_NOT_FOUND.search(str(error))
        if found is None:
            raise
        raise _missing_error(target, current.version, [found.group(1)]) from error
    return _committed(storage, watched.version(current.version + 1))


def _restoring(token: str) -> Recognizer:
    """Recognizes the restore commit that records ``token``."""

    def ours(actions: Sequence[Mapping[str, Any]]) -> bool:
        for action in actions:
            info = action.get("commitInfo")
            if isinstance(info, dict) and info.get(RESTORE_METADATA_KEY) == token:
                return True
        return False

    return ours


def _committed(storage: Storage, version: int) -> RestoreCommit:
    """What the commit of ``version`` added and removed, read from its commit file."""
    filesystem, root = storage.filesystem()
    with filesystem.open_input_stream(f"{root.rstrip('/')}/_delta_log/{version:020d}.json") as f:
        actions = [json.loads(line) for line in f.read().decode().splitlines() if line.strip()]
    adds = [a["add"] for a in actions if isinstance(a.get("add"), dict)]
    removes = [a["remove"] for a in actions if isinstance(a.get("remove"), dict)]
    return RestoreCommit(
        version,
        len(adds),
        len(removes),
        sum(int(a.get("size") or 0) for a in adds),
        sum(int(r.get("size") or 0) for r in removes),
    )
