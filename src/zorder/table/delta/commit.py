"""Commits through deltalake's transaction API (never a hand-written log entry).

A run's files (described from their footers by :mod:`zorder.table.runs`)
are committed in one transaction, as a :class:`CommitRequest` asks: a new
table, an append or overwrite (whose conflicts with concurrent commits
deltalake resolves by its own rules), or optimize's rewrite, which zorder
checks against every commit made since the snapshot it read
(:mod:`zorder.table.delta.conflicts`). Table properties go in a commit of their own.

Whether a failed run's files may be deleted is decided by the outcome of its
commit, never by where the error came from (:class:`CommitAttempt`): before
deltalake is asked to commit, nothing references them; once it returned, the
log does. An error from inside deltalake's call (a conflict, a storage error
after the log entry was written, a failing post-commit step, an interrupt)
leaves it open, and the log is read to find out (:mod:`zorder.table.delta.outcome`).
Files are kept whenever the answer is yes or unknown: an orphan costs a
vacuum, a committed file deleted breaks the table in every reader.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from deltalake import Schema as DeltaSchema
from deltalake.exceptions import CommitFailedError, TableNotFoundError
from deltalake.transaction import (
    AddAction,
    CommitProperties,
    RemoveAction,
    Transaction,
    create_table_with_add_actions,
)

from zorder.errors import ConcurrentCommitError, InvalidArgumentError, UnsupportedTableError
from zorder.table.clustering import (
    SPEC_TRANSACTION,
    CommitClustering,
    commit_clustering,
    write_spec_file,
)
from zorder.table.delta.actions import PartitionFilter
from zorder.table.delta.conflicts import (
    append_still_fits,
    check_purgeable,
    check_purged,
    check_rewritable,
    purge_filters,
)
from zorder.table.delta.outcome import CommitAttempt, Watched, adding, setting
from zorder.table.delta.snapshot import DataFile, TableSnapshot, load_snapshot
from zorder.table.delta.transactions import AlreadyRecordedError, AppTransaction
from zorder.table.delta.versions import commit_infos, open_table
from zorder.table.runs import WrittenFile, delete_directory
from zorder.table.storage import Storage

__all__ = [
    "CommitAttempt",
    "CommitMode",
    "CommitRequest",
    "commit_files",
    "guarded_run",
    "record_properties",
]

_REWRITE_ATTEMPTS = 10


# The writer version from which a protocol lists its features (Delta's table features).
_FEATURES_WRITER_VERSION = 7


# "rewrite" is optimize's: files added and removed with dataChange = false.
CommitMode = Literal["create", "append", "overwrite", "rewrite"]


@contextlib.contextmanager
def guarded_run(storage: Storage, relative_dir: str) -> Iterator[CommitAttempt]:
    """The block that writes a run's files under ``relative_dir`` and commits them (give the
    attempt to :func:`commit_files`): on failure the directory is deleted only when the
    commit is known not to be in the log."""
    attempt, uri = CommitAttempt(), storage.uri
    try:
        yield attempt
    except BaseException as error:
        if attempt.committed is False:
            delete_directory(storage, relative_dir)
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
    request: CommitRequest, *, max_commit_retries: int | None = None, blind_append: bool = False
) -> CommitProperties:
    """The run's ``commitInfo`` keys (``zorder``, ``userMetadata``, its
    ``operationParameters``) and ``txn``, and the writer's own ``txn`` if any.

    An append says it is blind (``isBlindAppend``, as Delta Spark's appends
    do): it read no rows, so Delta Spark's DELETE, UPDATE and MERGE running
    meanwhile under ``WriteSerializable`` isolation, its default, need not
    fail on it. Left out, Delta takes it for a write that read the table.

    Each ``txn`` says when it was made (``lastUpdated``, as Delta Spark writes
    it), so that a table's ``delta.setTransactionRetentionDuration`` can expire it.
    """
    clustering, metadata, transactions = request.clustering, None, []
    now = int(time.time() * 1000)
    if clustering is not None:
        run = clustering.run
        metadata = clustering.commit_metadata(
            files_added=len(request.files),
            bytes_added=sum(f.size for f in request.files),
            rows=sum(f.stats.num_records for f in request.files),
            files_removed=len(request.removed),
            bytes_removed=sum(f.size for f in request.removed),
        )
        transactions.append(Transaction(run.transaction_id, run.transaction_version, now))
        # The table's spec from now on, kept where the log's cleanup does not reach.
        transactions.append(Transaction(SPEC_TRANSACTION, run.transaction_version, now))
    if request.transaction is not None:
        app = request.transaction
        transactions.append(Transaction(app.app_id, app.version, now))
    custom: dict[str, object] | None = dict(metadata) if metadata is not None else None
    if blind_append:
        custom = {**(custom or {}), "isBlindAppend": True}
    return CommitProperties(
        custom_metadata=custom,
        max_commit_retries=max_commit_retries,
        app_transactions=transactions or None,
    )


@dataclass(frozen=True, kw_only=True)
class CommitRequest:
    """One commit of a run's ``files``, as asked: onto which table, adding and removing what.

    - ``create``: a new table whose first version holds the files.
    - ``append`` / ``overwrite``: a data change on ``snapshot``'s table
      (overwrite removes every file of the version it replaces).
    - ``rewrite``: optimize's commit, adding ``files`` and removing
      ``removed`` (files of ``snapshot``) with ``dataChange = false``,
      checked against everything committed since ``snapshot``.

    ``schema`` and ``partition_by`` are a new table's (appends and rewrites
    keep the table's own, column mapping's metadata included).
    ``clustering`` (a zorder run's files) goes into the commit as
    ``commitInfo.zorder`` and as the run's ``txn`` action; ``transaction``
    (a create, append or overwrite) as the writer's own ``txn``, which makes
    the commit fail with :class:`~zorder.table.delta.transactions.AlreadyRecordedError`
    when the table records it by then.
    """

    storage: Storage  # the table's location, and how to reach it
    mode: CommitMode
    files: Sequence[WrittenFile]
    schema: DeltaSchema
    snapshot: TableSnapshot | None = None
    removed: Sequence[DataFile] = ()
    clustering: CommitClustering | None = None
    partition_by: Sequence[str] = ()
    transaction: AppTransaction | None = None

    @property
    def uri(self) -> str:
        return self.storage.uri

    @property
    def delta_schema(self) -> DeltaSchema:
        """The schema committed: an existing table keeps its own."""
        return self.snapshot.schema.delta if self.snapshot is not None else self.schema


def commit_files(request: CommitRequest, attempt: CommitAttempt | None = None) -> int:
    """Commit ``request.files`` in one transaction as ``request`` asks; returns the new
    table version.

    ``attempt`` (from :func:`guarded_run`) learns whether the commit was
    made, whatever is raised. An error deltalake raises after it wrote the
    commit is logged, not raised: the commit stands and its version is returned.
    """
    snapshot = request.snapshot
    if request.clustering is not None:
        write_spec_file(request.storage, request.clustering.spec)
    watched = Watched(
        attempt if attempt is not None else CommitAttempt(),
        request.storage,
        snapshot.version if snapshot is not None else None,
        adding(request.files, request.clustering),
    )
    if request.mode == "create":
        return _commit_create(request, watched)
    if snapshot is None:
        raise InvalidArgumentError(f"mode {request.mode!r} needs the snapshot it applies to")
    if request.transaction is not None and request.mode == "rewrite":
        raise InvalidArgumentError("a rewrite changes no data: it takes no writer's transaction")
    if request.mode == "rewrite" and any(f.has_vector for f in request.removed):
        return _commit_purge(request, snapshot, watched)
    if request.mode == "rewrite":
        return _commit_rewrite(request, snapshot, watched)
    return _commit_data(request, snapshot, watched)


def _commit_create(request: CommitRequest, watched: Watched) -> int:
    try:
        with watched.call():
            create_table_with_add_actions(
                request.uri,
                request.delta_schema,
                _add_actions(request.files, data_change=True),
                mode="error",
                partition_by=list(request.partition_by) or None,
                storage_options=request.storage.delta_options,
                commit_properties=_commit_properties(request),
            )
    except Exception:
        if watched.attempt.committed is False:
            _refuse_done(request)  # another writer made the table, with this very commit?
        raise
    return watched.version(lambda: _committed_version(request.storage, -1, request.clustering))


def _commit_data(request: CommitRequest, snapshot: TableSnapshot, watched: Watched) -> int:
    """An append or overwrite, whose conflicts delta-rs resolves by its own rules.

    delta-rs counts every file of the snapshot as read by an append, so a
    concurrent DELETE, UPDATE, MERGE or OPTIMIZE that removed any file fails
    it. A blind append read none of them: it is committed again on the newer
    version, as Delta Spark's are, while the table's schema, partitioning,
    configuration and protocol are still those its files were written for
    (:func:`~zorder.table.delta.conflicts.append_still_fits`).
    """
    table, mode = snapshot.table, request.mode
    adds: list[AddAction | RemoveAction] = [*_add_actions(request.files, data_change=True)]
    attempts = 0
    while True:
        attempts += 1
        try:
            with watched.call():
                table.create_write_transaction(
                    adds,
                    mode=mode,
                    schema=request.delta_schema,
                    partition_by=list(snapshot.partition_columns) or None,
                    commit_properties=_commit_properties(request, blind_append=mode == "append"),
                )
        except CommitFailedError as error:
            _refuse_unsupported(request.uri, error)
            _refuse_done(request)
            if mode == "append" and attempts < _REWRITE_ATTEMPTS:
                latest = load_snapshot(request.storage)
                if append_still_fits(snapshot, latest):
                    table = latest.table  # the same files, on the newer version
                    continue
            raise ConcurrentCommitError(
                f"the commit to {request.uri} conflicts with a concurrent commit made after "
                f"version {snapshot.version}: {error}. Nothing was committed; run again on the "
                "new version."
            ) from error
        return watched.version(
            lambda: _committed_version(request.storage, snapshot.version, request.clustering)
        )


def _commit_purge(request: CommitRequest, snapshot: TableSnapshot, watched: Watched) -> int:
    """A rewrite that removes files with deletion vectors: every file of their partitions.

    deltalake's ``RemoveAction`` carries no deletion vector, and a remove
    without it leaves the logical file (path, vector) live: its rows would
    be read twice. An overwrite of the partitions removes each of its files
    with its vector. delta-rs does not know what the rewrite read, so its
    own check lets through a commit that removed those files meanwhile
    (Delta Spark's OPTIMIZE: both copies of the rows would stay live). As in
    :func:`_commit_rewrite`, the check is made here: on the newest version V
    the filter must select exactly the files read
    (:func:`~zorder.table.delta.conflicts.check_purgeable`), and the overwrite is
    made on V and committed as exactly V + 1. The removes say
    ``dataChange = true`` (deltalake sets it), the adds ``false``.
    """
    removed = request.removed
    filters = purge_filters(snapshot, removed)
    adds: list[AddAction | RemoveAction] = [*_add_actions(request.files, data_change=False)]
    version = _commit_as_next(
        request,
        snapshot,
        watched,
        adds,
        check=lambda latest: check_purgeable(snapshot, latest, removed, filters),
        mode="overwrite",
        partition_filters=filters,
    )
    check_purged(request.storage, version, removed)
    return version


def _refuse_unsupported(uri: str, error: CommitFailedError) -> None:
    """deltalake's refusal of a table feature is no conflict: raise it as what it is."""
    if "Unsupported table features" in str(error):
        raise UnsupportedTableError(
            f"deltalake refused to commit to {uri}: {error}. Nothing was committed"
        ) from error


def _refuse_done(request: CommitRequest) -> None:
    """After a commit failed: raise AlreadyRecordedError when the newest version records the
    request's transaction (a concurrent writer made this very commit first)."""
    transaction = request.transaction
    if transaction is None:
        return
    try:
        newest = open_table(request.storage)
    except TableNotFoundError:
        return  # no table to record it (the failure is raised as it is)
    if transaction.done_in(newest):
        raise AlreadyRecordedError(request.uri, transaction, transaction.recorded(newest))


def _committed_version(storage: Storage, since: int, clustering: CommitClustering | None) -> int:
    """The version this process's commit became (later ones may exist): the commit after
    ``since`` that records this run, else the newest."""
    if clustering is not None:
        for version, info in commit_infos(storage, after=since):
            found = commit_clustering(info)
            if found is not None and found.run.id == clustering.run.id:
                return version
    return int(open_table(storage).version())


def _commit_rewrite(request: CommitRequest, snapshot: TableSnapshot, watched: Watched) -> int:
    """Optimize's commit, with optimistic concurrency checked here, not by delta-rs.

    delta-rs treats a transaction of adds and removes in mode "append" as a
    blind append and lets it through whatever was committed meanwhile, so two
    optimize runs could both remove the same files and both add their copies
    of the rows. Instead: read the newest version V, check that every file
    this run removes is still live in it and the schema is the one read, and
    commit as exactly V + 1 (no retries inside delta-rs); if another writer
    took V + 1 first, check again on the newer version.
    """
    removed = request.removed
    now = int(time.time() * 1000)
    actions: list[AddAction | RemoveAction] = [*_add_actions(request.files, data_change=False)]
    actions += [
        RemoveAction(path=f.path, data_change=False, deletion_timestamp=now, size=f.size)
        for f in removed
    ]
    return _commit_as_next(
        request,
        snapshot,
        watched,
        actions,
        check=lambda latest: check_rewritable(snapshot, latest, removed),
        mode="append",
    )


def _commit_as_next(
    request: CommitRequest,
    snapshot: TableSnapshot,
    watched: Watched,
    actions: list[AddAction | RemoveAction],
    *,
    check: Callable[[TableSnapshot], None],
    mode: Literal["append", "overwrite"],
    partition_filters: list[PartitionFilter] | None = None,
) -> int:
    """Commit ``actions`` onto the newest version V as exactly V + 1, once ``check(V)`` has
    passed (it raises :class:`ConcurrentCommitError` otherwise); when another writer took
    V + 1 first, check again on the newer version. No retries inside delta-rs, whose own
    check does not know what the run read."""
    exact = _commit_properties(request, max_commit_retries=0)
    for _ in range(_REWRITE_ATTEMPTS):
        latest = load_snapshot(request.storage)
        check(latest)
        try:
            with watched.call():
                latest.table.create_write_transaction(
                    actions,
                    mode=mode,
                    schema=request.delta_schema,
                    partition_by=list(snapshot.partition_columns) or None,
                    partition_filters=partition_filters,
                    commit_properties=exact,
                )
        except CommitFailedError as error:
            _refuse_unsupported(request.uri, error)
            continue  # another commit took version V + 1 first: check against it
        return watched.version(latest.version + 1)
    raise ConcurrentCommitError(
        f"gave up committing to {request.uri} after {_REWRITE_ATTEMPTS} attempts: other "
        "writers kept committing first. Nothing was committed; run again."
    )


def record_properties(
    storage: Storage,
    properties: Mapping[str, str],
    *,
    known: Mapping[str, str | None] | None = None,
) -> int | None:
    """Set the table's ``properties`` in a commit of their own; None when all already hold,
    in the configuration ``known`` (a snapshot's; then the log is not read) or the newest.

    A metadata change: Delta fails writers that started before it and commit
    after it, so it is made only when a value changes. Its outcome is found
    out as a run's commit's is (an error deltalake raises after writing the
    commit is logged, and the version returned).
    """
    if known is not None and all(known.get(k) == v for k, v in properties.items()):
        return None  # nothing to record (another writer's change since is its to keep)
    uri, table = storage.uri, open_table(storage)
    current = table.metadata().configuration
    changed = {k: v for k, v in properties.items() if current.get(k) != v}
    if not changed or table.protocol().min_writer_version >= _FEATURES_WRITER_VERSION:
        # deltalake 1.6's set_table_properties adds features to such a protocol
        # (variantType among its reader features: older readers would refuse the
        # table). zorder changes no protocol; the spec is found in its commits.
        return None
    watched = Watched(CommitAttempt(), storage, int(table.version()), setting(changed))
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
