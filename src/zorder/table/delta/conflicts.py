"""A rewrite checked against the commits made since the snapshot it was planned on.

optimize's commit may replace the files it read only while they are live
and as read, under the schema read (:func:`check_rewritable`); a purge of
deleted rows replaces every file of their partitions, exactly the files
its partition filter selects (:func:`rewrite_scope`, :func:`purge_filters`),
and no more nor fewer afterwards (:func:`check_purged`). Commits
themselves are in :mod:`zorder.table.delta.commit`; whether one reached the log
in :mod:`zorder.table.delta.outcome`.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence

from zorder.errors import ConcurrentCommitError, InternalError, UnsupportedTableError
from zorder.table.delta.actions import PartitionFilter, overwrite_filters, satisfies
from zorder.table.delta.snapshot import DataFile, TableSnapshot, load_snapshot
from zorder.table.storage import Storage

__all__ = [
    "append_still_fits",
    "check_purgeable",
    "check_purged",
    "check_rewritable",
    "purge_filters",
    "rewrite_scope",
]


def append_still_fits(snapshot: TableSnapshot, latest: TableSnapshot) -> bool:
    """Whether files written for ``snapshot`` may be appended, as they are, to ``latest``.

    A blind append reads no rows: what others committed meanwhile (deletes,
    updates, merges, rewrites) cannot make its rows wrong, as Delta's own
    blind appends are let through them. What it depends on is what the files
    were written for: the schema, the partition columns, the table's
    configuration (constraints, column mapping, its properties) and protocol.
    A change to any of them fails it, as Delta fails it (``MetadataChangedException``).
    """
    return (
        json.loads(latest.schema.json) == json.loads(snapshot.schema.json)
        and latest.partition_columns == snapshot.partition_columns
        and dict(latest.configuration) == dict(snapshot.configuration)
        and latest.table.protocol() == snapshot.table.protocol()
    )


def check_rewritable(
    snapshot: TableSnapshot, latest: TableSnapshot, removed: Sequence[DataFile]
) -> None:
    """Refuse a rewrite of ``removed`` (files of ``snapshot``) onto ``latest`` when a commit
    in between removed or changed one of them, or changed the schema."""
    live = {f.path for f in latest.files}
    # A file that gained a deletion vector meanwhile is another logical file
    # (path, vector): a remove of the old one would leave the new one live.
    gone = [f.path for f in removed if f.path not in live or f.path in latest.deleted_positions]
    if gone or json.loads(latest.schema.json) != json.loads(snapshot.schema.json):
        what = (
            f"{len(gone)} of the {len(removed)} files it rewrote (e.g. {gone[0]!r})"
            if gone
            else "the table's schema"
        )
        raise ConcurrentCommitError(
            f"a concurrent commit to {snapshot.uri} after version {snapshot.version} changed "
            f"{what} (now at version {latest.version}). Nothing was committed; the table is "
            "as the other writer left it. Run again on the new version."
        )


def purge_filters(
    snapshot: TableSnapshot, removed: Sequence[DataFile]
) -> list[PartitionFilter] | None:
    """The partition filter of the overwrite that removes ``removed`` with their deletion
    vectors: it must select exactly them (see :func:`rewrite_scope`)."""
    _refuse_purge(snapshot)
    filters = overwrite_filters(snapshot.partition_columns, {f.partition for f in removed})
    scope = {f.path for f in _files_matching(snapshot, filters)}
    if scope != {f.path for f in removed}:
        raise InternalError(  # the caller must rewrite rewrite_scope(files), not less
            f"a rewrite of {snapshot.uri} with deleted rows must replace every file of its "
            "partitions"
        )
    return filters


def check_purgeable(
    snapshot: TableSnapshot,
    latest: TableSnapshot,
    removed: Sequence[DataFile],
    filters: Sequence[PartitionFilter] | None,
) -> None:
    """Refuse a purge of ``removed`` (files of ``snapshot``) onto ``latest`` unless the files
    its partition filter selects there are exactly ``removed``, as read (no vector changed,
    none removed, none added), under the schema read.

    Its overwrite removes what the filter selects in the version it is made
    on: a file another writer removed meanwhile (Delta's OPTIMIZE) would
    leave that writer's copy of its rows live beside this run's, and a file
    appended meanwhile would be removed unread.
    """
    now = set(_files_matching(latest, filters))
    read = set(removed)
    if now == read and json.loads(latest.schema.json) == json.loads(snapshot.schema.json):
        return
    changed = sorted(f.path for f in read - now)
    added = sorted(f.path for f in now - read)
    what = (
        f"removed or changed {len(changed)} of the {len(read)} files it rewrote (e.g. "
        f"{changed[0]!r})"
        if changed
        else f"added {len(added)} file(s) to the partitions it rewrote (e.g. {added[0]!r})"
        if added
        else "changed the table's schema"
    )
    raise ConcurrentCommitError(
        f"a concurrent commit to {snapshot.uri} after version {snapshot.version} {what} (now "
        f"at version {latest.version}). Nothing was committed; the table is as the other "
        "writer left it. Run again on the new version."
    )


def check_purged(storage: Storage, version: int, removed: Sequence[DataFile]) -> None:
    """Refuse (loudly) a purge committed as ``version`` of the table at ``storage`` that kept
    a file of ``removed``."""
    # The overwrite chose its removes by the partition filter; had delta-rs chosen fewer
    # than the files read here, their rows would now be live twice.
    uri = storage.uri
    committed = load_snapshot(storage, version=version)
    left = sorted({f.path for f in removed} & {f.path for f in committed.files})
    if left:
        raise InternalError(
            f"version {version} of {uri} keeps {len(left)} file(s) this optimize rewrote "
            f"(e.g. {left[0]!r}): their rows are there twice. Restore version {version - 1} "
            f"(zorder restore {uri} --version {version - 1}) and report this as a bug"
        )


def rewrite_scope(snapshot: TableSnapshot, files: Sequence[DataFile]) -> tuple[DataFile, ...]:
    """What a rewrite of ``files`` must replace: ``files``, or, when one has deleted rows,
    every file of their partitions (see :func:`zorder.table.delta.commit.commit_files`)."""
    if not any(f.has_vector for f in files):
        return tuple(files)
    _refuse_purge(snapshot)
    filters = overwrite_filters(snapshot.partition_columns, {f.partition for f in files})
    scope = _files_matching(snapshot, filters)
    missing = {f.path for f in files} - {f.path for f in scope}
    if missing:
        raise UnsupportedTableError(
            f"table {snapshot.uri} (version {snapshot.version}): the partition filter {filters} "
            f"does not select {sorted(missing)[0]!r}, which the rewrite needs to replace"
        )
    return scope


def _files_matching(
    snapshot: TableSnapshot, filters: Sequence[PartitionFilter] | None
) -> tuple[DataFile, ...]:
    """The files delta-rs selects with ``filters`` (as its overwrite does), checked by ours."""
    if filters is None:
        return snapshot.files
    by_uri = {snapshot.file_uri(f): f for f in snapshot.files}
    listed = snapshot.table.file_uris(file_pruning_predicate=list(filters))
    with warnings.catch_warnings():  # the overwrite chooses its removes this older way
        warnings.simplefilter("ignore", DeprecationWarning)
        legacy = snapshot.table.file_uris(partition_filters=list(filters))
    selected = tuple(by_uri[uri] for uri in listed if uri in by_uri)
    columns = snapshot.partition_columns
    ours = tuple(f for f in snapshot.files if satisfies(f.partition, columns, filters))
    agreed = set(selected) == set(ours) and set(legacy) == set(listed)
    if len(selected) != len(listed) or not agreed:
        raise UnsupportedTableError(
            f"table {snapshot.uri} (version {snapshot.version}): delta-rs and zorder disagree on "
            f"which files the partition filter {list(filters)} selects; nothing was written"
        )
    return selected


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
