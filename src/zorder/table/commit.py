"""Commits through deltalake's transaction API (never a hand-written log entry).

A run's files (described from their footers by :mod:`zorder.table.runs`)
are committed in one transaction: a new table, an append or overwrite (whose conflicts with
concurrent commits deltalake resolves by its own rules), or optimize's
rewrite, whose conflicts zorder checks here against every commit made since
the snapshot it read. Table properties go in a commit of their own.

Whether a failed run's files may be deleted is decided by the outcome of its
commit, never by where the error came from (:class:`CommitAttempt`): before
deltalake is asked to commit, nothing references them; once it returned, the
log does. An error from inside deltalake's call (a conflict, a storage error
after the log entry was written, a failing post-commit step, an interrupt)
leaves it open, and the log is read to find out. Files are kept whenever the
answer is yes or unknown: an orphan costs a vacuum, a committed file deleted
breaks the table in every reader.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import unquote

from deltalake import DeltaTable
from deltalake import Schema as DeltaSchema
from deltalake.exceptions import CommitFailedError
from deltalake.transaction import (
    AddAction,
    CommitProperties,
    RemoveAction,
    Transaction,
    create_table_with_add_actions,
)

from zorder.errors import (
    ConcurrentCommitError,
    InvalidArgumentError,
    UnsupportedTableError,
    ZorderError,
)
from zorder.table.actions import PartitionFilter, overwrite_filters, satisfies
from zorder.table.clustering import (
    COMMIT_METADATA_KEY,
    CommitClustering,
)
from zorder.table.runs import WrittenFile, delete_directory
from zorder.table.snapshot import DataFile, TableSnapshot, load_snapshot, open_storage

__all__ = [
    "CommitAttempt",
    "CommitMode",
    "commit_files",
    "guarded_run",
    "record_properties",
    "rewrite_scope",
]


_log = logging.getLogger(__name__)

_REWRITE_ATTEMPTS = 10


# How many of the newest commits to search for the one just made.
_HISTORY_SEARCH = 100


# The writer version from which a protocol lists its features (Delta's table features).
_FEATURES_WRITER_VERSION = 7


# "rewrite" is optimize's: files added and removed with dataChange = false.
CommitMode = Literal["create", "append", "overwrite", "rewrite"]


@dataclass
class CommitAttempt:
    """What is known of whether one commit reached the table's log.

    ``committed`` is False until deltalake is asked to commit (nothing in the
    log can reference the files yet), None while it is and whenever its
    outcome could not be found out, True once the log holds the commit;
    ``version`` is the version it became, when known.
    """

    committed: bool | None = False
    version: int | None = None


@contextlib.contextmanager
def guarded_run(
    uri: str, relative_dir: str, storage_options: Mapping[str, str] | None = None
) -> Iterator[CommitAttempt]:
    """The block that writes a run's files under ``relative_dir`` and commits them (give the
    attempt to :func:`commit_files`): on failure the directory is deleted only when the
    commit is known not to be in the log."""
    attempt = CommitAttempt()
    try:
        yield attempt
    except BaseException as error:
        if attempt.committed is False:
            delete_directory(uri, relative_dir, storage_options)
        elif attempt.committed:
            version = "?" if attempt.version is None else attempt.version
            error.add_note(
                f"version {version} of {uri}, committed before this error, holds this run's "
                f"files ({relative_dir}): they are kept"
            )
        else:
            error.add_note(
                f"whether the commit to {uri} was made is unknown: the run's files are kept in "
                f"{relative_dir} (a vacuum deletes them if no version references them)"
            )
        raise


# Given one version's actions: whether they are the commit looked for.
_Recognizer = Callable[[Sequence[Mapping[str, Any]]], bool]


@dataclass(frozen=True)
class _Watched:
    """One commit, watched: each deltalake call that may make it records its outcome in
    ``attempt``, read from the versions after ``since`` (all, for a new table) when the
    call raised."""

    attempt: CommitAttempt
    uri: str
    since: int | None
    ours: _Recognizer
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


def _adding(files: Sequence[WrittenFile], clustering: CommitClustering | None) -> _Recognizer:
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


def _setting(properties: Mapping[str, str]) -> _Recognizer:
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
    schema: DeltaSchema,
    files: Sequence[WrittenFile],
    *,
    mode: CommitMode,
    snapshot: TableSnapshot | None = None,
    removed: Sequence[DataFile] = (),
    clustering: CommitClustering | None = None,
    partition_by: Sequence[str] = (),
    storage_options: Mapping[str, str] | None = None,
    attempt: CommitAttempt | None = None,
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

    ``attempt`` (from :func:`guarded_run`) learns whether the commit was
    made, whatever is raised. An error deltalake raises after it wrote the
    commit is logged, not raised: the commit stands and its version is returned.
    """
    watched = _Watched(
        attempt if attempt is not None else CommitAttempt(),
        uri,
        snapshot.version if snapshot is not None else None,
        _adding(files, clustering),
        storage_options,
    )
    properties = _commit_properties(clustering)
    # An existing table keeps its own schema (column mapping's metadata included).
    delta_schema = snapshot.table.schema() if snapshot is not None else schema
    if mode == "create":
        options = dict(storage_options or {})
        with watched.call():
            create_table_with_add_actions(
                uri,
                delta_schema,
                _add_actions(files, data_change=True),
                mode="error",
                partition_by=list(partition_by) or None,
                storage_options=options,
                commit_properties=properties,
            )
        return watched.version(lambda: int(DeltaTable(uri, storage_options=options).version()))
    if snapshot is None:
        raise InvalidArgumentError(f"mode {mode!r} needs the snapshot it applies to")
    if mode == "rewrite" and any(f.has_vector for f in removed):
        return _commit_purge(
            uri, delta_schema, files, snapshot, removed, clustering, storage_options, watched
        )
    if mode == "rewrite":
        return _commit_rewrite(uri, delta_schema, files, snapshot, removed, clustering, watched)
    table = snapshot.table
    try:
        adds: list[AddAction | RemoveAction] = [*_add_actions(files, data_change=True)]
        with watched.call():
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
    return watched.version(lambda: _committed_version(table, clustering))


def _commit_purge(
    uri: str,
    delta_schema: DeltaSchema,
    files: Sequence[WrittenFile],
    snapshot: TableSnapshot,
    removed: Sequence[DataFile],
    clustering: CommitClustering | None,
    storage_options: Mapping[str, str] | None,
    watched: _Watched,
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
    filters = overwrite_filters(snapshot.partition_columns, {f.partition for f in removed})
    scope = {f.path for f in _files_matching(snapshot, filters)}
    if scope != {f.path for f in removed}:
        raise ZorderError(  # the caller must rewrite rewrite_scope(files), not less
            f"a rewrite of {uri} with deleted rows must replace every file of its partitions"
        )
    adds: list[AddAction | RemoveAction] = [*_add_actions(files, data_change=False)]
    try:
        with watched.call():
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
    version = watched.version(lambda: _committed_version(snapshot.table, clustering))
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
    watched: _Watched,
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
        latest = load_snapshot(uri, watched.storage_options)
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
                f"a concurrent commit to {uri} after version {snapshot.version} changed {what} "
                f"(now at version {latest.version}). Nothing was committed; the table is as the "
                "other writer left it. Run again on the new version."
            )
        try:
            with watched.call():
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
        # No retries: exactly the version after the one checked.
        return watched.version(latest.version + 1)
    raise ConcurrentCommitError(
        f"gave up committing to {uri} after {_REWRITE_ATTEMPTS} attempts: other writers kept "
        "committing first. Nothing was committed; run again."
    )


def record_properties(
    uri: str,
    properties: Mapping[str, str],
    *,
    storage_options: Mapping[str, str] | None = None,
) -> int | None:
    """Set the table's ``properties`` in a commit of their own; None when all already hold.

    A metadata change: Delta fails writers that started before it and commit
    after it, so it is made only when a value changes. Its outcome is found
    out as a run's commit's is (an error deltalake raises after writing the
    commit is logged, and the version returned).
    """
    table = DeltaTable(uri, storage_options=dict(storage_options or {}))
    current = table.metadata().configuration
    changed = {k: v for k, v in properties.items() if current.get(k) != v}
    if not changed or table.protocol().min_writer_version >= _FEATURES_WRITER_VERSION:
        # deltalake 1.6's set_table_properties adds features to such a protocol
        # (variantType among its reader features: older readers would refuse the
        # table). zorder changes no protocol; the spec is found in its commits.
        return None
    watched = _Watched(
        CommitAttempt(), uri, int(table.version()), _setting(changed), storage_options
    )
    try:
        with watched.call():
            table.alter.set_table_properties(changed, raise_if_not_exists=False)
    except CommitFailedError as error:
        raise ConcurrentCommitError(
            f"recording table properties {changed} on {uri} conflicts with a concurrent "
            f"commit: {error}. The data commit stands; run again to record them."
        ) from error

    def newest() -> int:
        table.update_incremental()
        return int(table.version())

    return watched.version(newest)


def rewrite_scope(snapshot: TableSnapshot, files: Sequence[DataFile]) -> tuple[DataFile, ...]:
    """What a rewrite of ``files`` must replace: ``files``, or, when one has deleted rows,
    every file of their partitions (see :func:`_commit_purge`)."""
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
