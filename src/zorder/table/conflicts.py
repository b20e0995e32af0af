"""A commit checked against the commits made since the snapshot it was planned on.

Two questions are answered from the versions after the snapshot: whether
one of them is ours (:class:`Watched`: a deltalake call that raised may
have committed all the same), and whether a rewrite may still replace the
files it read: they are live and as read (:func:`check_rewritable`), and a
purge of deleted rows replaces exactly the files its partition filter
selects (:func:`rewrite_scope`, :func:`purge_filters`, :func:`check_purged`).
Commits themselves are in :mod:`zorder.table.commit`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from zorder.errors import ConcurrentCommitError, UnsupportedTableError, ZorderError
from zorder.table.actions import PartitionFilter, overwrite_filters, satisfies
from zorder.table.clustering import CommitClustering
from zorder.table.runs import WrittenFile
from zorder.table.snapshot import DataFile, TableSnapshot, load_snapshot, open_storage

if TYPE_CHECKING:
    from zorder.table.commit import CommitAttempt

__all__ = [
    "Recognizer",
    "Watched",
    "adding",
    "check_purged",
    "check_rewritable",
    "purge_filters",
    "rewrite_scope",
    "setting",
]

_log = logging.getLogger(__name__)

# Given one version's actions: whether they are the commit looked for.
Recognizer = Callable[[Sequence[Mapping[str, Any]]], bool]


@dataclass(frozen=True)
class Watched:
    """One commit, watched: each deltalake call that may make it records its outcome in
    ``attempt``, read from the versions after ``since`` (all, for a new table) when the
    call raised."""

    attempt: CommitAttempt
    uri: str
    since: int | None
    ours: Recognizer
    storage_options: Mapping[str, str] | None

    @contextlib.contextmanager
    def call(self) -> Iterator[None]:
        """Around the call. It returned: committed. It raised: if the log holds the commit, it
        stands (an error is logged and swallowed, the caller going on as after the commit;
        an interrupt is raised on); if not, nothing was committed; if the log cannot be
        read, the outcome stays unknown. Either of the last two raises the call's error."""
        attempt = self.attempt
        attempt.committed = None
        try:
            yield
        except BaseException as error:
            unknown = False
            try:
                found = self.find()
            except Exception as unreadable:
                unknown = True
                error.add_note(f"the log of {self.uri} could not be read ({unreadable})")
            if unknown:
                raise
            if found is None:
                attempt.committed = False
                raise
            attempt.committed, attempt.version = True, found
            if not isinstance(error, Exception):
                raise
            _log.warning(
                "deltalake raised %s (%s) after it committed version %d of %s; the commit stands",
                type(error).__name__,
                error,
                found,
                self.uri,
            )
            return
        attempt.committed = True

    def find(self) -> int | None:
        """The first version after ``since`` that is the commit; None when none in the log
        is. Raises when the log cannot be read."""
        import pyarrow.fs as pafs

        filesystem, root = open_storage(self.uri, self.storage_options)
        version = 0 if self.since is None else self.since + 1
        while True:
            path = f"{root.rstrip('/')}/_delta_log/{version:020d}.json"
            if filesystem.get_file_info(path).type == pafs.FileType.NotFound:
                return None  # versions are consecutive: there is none after it either
            with filesystem.open_input_stream(path) as stream:
                lines = stream.read().decode().splitlines()
            if self.ours([json.loads(line) for line in lines if line.strip()]):
                return version
            version += 1

    def version(self, read: Callable[[], int] | int) -> int:
        """The version the commit became: as found in the log after an error, else ``read``
        (or what it reads)."""
        found = self.attempt.version
        if found is None:
            found = read if isinstance(read, int) else read()
        self.attempt.version = found
        return found


def adding(files: Sequence[WrittenFile], clustering: CommitClustering | None) -> Recognizer:
    """Recognizes the commit that adds any of ``files`` or records the run's ``txn``."""
    paths = {f.path for f in files}
    transaction = clustering.run.transaction_id if clustering is not None else None

    def ours(actions: Sequence[Mapping[str, Any]]) -> bool:
        for action in actions:
            add, txn = action.get("add"), action.get("txn")
            if isinstance(add, dict) and unquote(str(add.get("path"))) in paths:
                return True
            if transaction and isinstance(txn, dict) and txn.get("appId") == transaction:
                return True
        return False

    return ours


def setting(properties: Mapping[str, str]) -> Recognizer:
    """Recognizes the commit whose metadata sets ``properties``."""

    def ours(actions: Sequence[Mapping[str, Any]]) -> bool:
        for action in actions:
            metadata = action.get("metaData")
            if isinstance(metadata, dict):
                configuration = metadata.get("configuration") or {}
                if all(configuration.get(k) == v for k, v in properties.items()):
                    return True
        return False

    return ours


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
        raise ZorderError(  # the caller must rewrite rewrite_scope(files), not less
            f"a rewrite of {snapshot.uri} with deleted rows must replace every file of its "
            "partitions"
        )
    return filters


def check_purged(
    uri: str,
    storage_options: Mapping[str, str] | None,
    version: int,
    removed: Sequence[DataFile],
) -> None:
    """Refuse (loudly) a purge committed as ``version`` of ``uri`` that kept a file of
    ``removed``."""
    # The overwrite chose its removes by the partition filter; had delta-rs chosen fewer
    # than the files read here, their rows would now be live twice.
    committed = load_snapshot(uri, storage_options, version=version)
    left = sorted({f.path for f in removed} & {f.path for f in committed.files})
    if left:
        raise ZorderError(
            f"version {version} of {uri} keeps {len(left)} file(s) this optimize rewrote "
            f"(e.g. {left[0]!r}): their rows are there twice. Restore version {version - 1} "
            "(RESTORE TABLE ... TO VERSION AS OF) and report this as a bug"
        )


def rewrite_scope(snapshot: TableSnapshot, files: Sequence[DataFile]) -> tuple[DataFile, ...]:
    """What a rewrite of ``files`` must replace: ``files``, or, when one has deleted rows,
    every file of their partitions (see :func:`zorder.table.commit.commit_files`)."""
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
