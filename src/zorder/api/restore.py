"""``restore``: undo, as one new commit that makes the table what one of its versions was.

The work is :mod:`zorder.table.delta.restore`'s (deltalake's restore, checked first);
here are the result, the check of what was asked, and the call from the
table's newest version (:meth:`zorder.Table.restore`).
"""

from __future__ import annotations

from dataclasses import dataclass

from zorder.errors import InvalidArgumentError
from zorder.table.delta.restore import commit_restore, plan_restore
from zorder.table.delta.snapshot import TableSnapshot
from zorder.table.delta.versions import AsOf, check_version

__all__ = ["RestoreResult", "check_restore_target", "restore_snapshot"]


@dataclass(frozen=True)
class RestoreResult:
    """What :meth:`zorder.Table.restore` did.

    ``version`` is the new commit's, None when the table already was what
    ``restored_version`` was (nothing was committed). The files are counted as
    the commit added and removed them: a file that gets back or loses a
    deletion vector counts on both sides (the same data file, another logical
    file); no data file is written.
    """

    table_uri: str
    restored_version: int
    version: int | None
    files_added: int
    files_removed: int
    bytes_added: int
    bytes_removed: int


def check_restore_target(version: int | None, timestamp: AsOf | None) -> None:
    """Refuse anything but exactly one of ``version`` and ``timestamp``, before any read."""
    if (version is None) == (timestamp is None):
        given = "both" if version is not None else "neither"
        raise InvalidArgumentError(
            f"give the version to restore as version=N or timestamp=TIME, exactly one (got "
            f"{given}: version={version!r}, timestamp={timestamp!r})"
        )
    if version is not None:
        check_version(version)


def restore_snapshot(current: TableSnapshot, target: TableSnapshot) -> RestoreResult:
    """Restore version ``target`` onto ``current``, the table's newest version."""
    done = commit_restore(plan_restore(current, target))
    if done is None:
        return RestoreResult(current.uri, target.version, None, 0, 0, 0, 0)
    return RestoreResult(
        current.uri,
        target.version,
        done.version,
        done.files_added,
        done.files_removed,
        done.bytes_added,
        done.bytes_removed,
    )
