"""A writer's own commits made idempotent: Delta's application transactions (``txn``).

A writer that may run a commit again (a streaming query replaying a
micro-batch after a crash, a retried job) names itself by an app id and
numbers its commits; each commit carries a ``txn`` action (app id,
version), and the log keeps the newest version per app id (PROTOCOL.md,
"Transaction Identifiers"). A commit whose version the table already
records for its app id, or a newer one, must add nothing: it was made
before. This is Delta Spark's ``txnAppId`` / ``txnVersion``, and delta-rs's
``CommitProperties(app_transactions=...)``.

The check and the commit are one step because delta-rs fails a commit
whose app id a commit since its snapshot recorded ("Concurrent
transaction"): of two writers racing the same (app id, version), one
commits and the other's commit fails, and reading the log then shows it
done (:class:`AlreadyRecordedError`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from zorder.errors import InvalidArgumentError, InvalidArgumentTypeError
from zorder.table.clustering import is_run_transaction

__all__ = ["AlreadyRecordedError", "AppTransaction"]

_MAX_VERSION = 2**63 - 1  # the log's version is a long


class RecordsTransactions(Protocol):
    """A loaded table that says which version it records for a writer's app id."""

    def transaction_version(self, app_id: str) -> int | None: ...


@dataclass(frozen=True)
class AppTransaction:
    """One commit of a writer: its app id, and its version (the batch id of a stream)."""

    app_id: str
    version: int

    @classmethod
    def of(cls, app_id: object, version: object) -> AppTransaction | None:
        """``txn_app_id`` and ``txn_version`` as given to a write, checked: both or neither
        (None)."""
        if app_id is None and version is None:
            return None
        if app_id is None or version is None:
            given, missing = (
                ("txn_app_id", "txn_version") if version is None else ("txn_version", "txn_app_id")
            )
            raise InvalidArgumentError(
                f"{given} was given without {missing}: an idempotent write needs both (the "
                "writer's id and this commit's number, e.g. a streaming query's id and the "
                "batch id)"
            )
        if not isinstance(app_id, str) or not app_id.strip():
            raise InvalidArgumentTypeError(f"txn_app_id must be a non-empty string, got {app_id!r}")
        if is_run_transaction(app_id):
            raise InvalidArgumentError(
                f"txn_app_id {app_id!r} is reserved: zorder records its own runs under app ids "
                "of that form; choose another"
            )
        if isinstance(version, bool) or not isinstance(version, int):
            raise InvalidArgumentTypeError(
                f"txn_version must be an int (0 or more), got {version!r}"
            )
        if not 0 <= version <= _MAX_VERSION:
            raise InvalidArgumentError(
                f"txn_version must be between 0 and {_MAX_VERSION}, got {version}"
            )
        return cls(app_id, version)

    def recorded(self, table: RecordsTransactions) -> int | None:
        """The version the loaded ``table`` (a snapshot, or deltalake's table) records for
        this app id, None if none."""
        return table.transaction_version(self.app_id)

    def done_in(self, table: RecordsTransactions) -> bool:
        """Whether the loaded ``table`` records this version for the app id, or a newer one:
        then this commit was made before and must add nothing."""
        recorded = self.recorded(table)
        return recorded is not None and recorded >= self.version

    def describe(self) -> str:
        return f"(txn_app_id={self.app_id!r}, txn_version={self.version})"


class AlreadyRecordedError(Exception):
    """The table records ``transaction`` (or a newer version of its app id): the commit was
    made before, by an earlier run or by a concurrent writer, and this one added nothing.

    Control flow, not a :class:`~zorder.errors.ZorderError`: ``write`` turns it into a
    result whose ``skipped`` is True, and only the table layer's own functions let it out."""

    def __init__(self, uri: str, transaction: AppTransaction, recorded: int | None) -> None:
        super().__init__(
            f"table {uri} records version {recorded} for app id {transaction.app_id!r}: the "
            f"commit {transaction.describe()} was made before; nothing was committed"
        )
        self.transaction = transaction
        self.recorded = recorded
