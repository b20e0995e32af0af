"""Time travel: which version of a table a read asks for, by number or by time.

As Delta Spark's ``versionAsOf`` and ``timestampAsOf``: a timestamp picks
the newest version committed at or before it, and a timestamp before the
first commit still in the log, or after the newest commit, is an error,
not silently the nearest version. A commit's time is, as Delta Spark takes
it, its commit file's modification time, made strictly increasing (a commit
no later than the one before it counts as 1 ms after it); on a table with
in-commit timestamps, from the version that enabled them on, the
``inCommitTimestamp`` its ``commitInfo`` records.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from deltalake import DeltaTable
from deltalake.exceptions import DeltaError

from zorder.errors import InvalidArgumentError, InvalidArgumentTypeError, VersionNotFoundError
from zorder.skipping.zones import session_zone
from zorder.table.storage import Storage

__all__ = [
    "RESTORE_OPERATION",
    "AsOf",
    "check_version",
    "commit_infos",
    "has_commit_after",
    "log_is_whole",
    "open_table",
    "restored_version",
]

if TYPE_CHECKING:  # loaded where used: a lookup reads no footer and lists no directory
    import pyarrow.fs as pafs

AsOf = dt.datetime | dt.date | str

_COMMIT_FILE = re.compile(r"(\d{20})\.json")
_IN_COMMIT_TIMESTAMPS = "delta.enableInCommitTimestamps"
RESTORE_OPERATION = "RESTORE"  # commitInfo.operation of a restore, Delta Spark's and delta-rs's
_ENABLED_AT = "delta.inCommitTimestampEnablementVersion"


def open_table(
    storage: Storage,
    *,
    version: int | None = None,
    timestamp: AsOf | None = None,
    time_zone: str = "UTC",
) -> DeltaTable:
    """The table at ``storage`` as of ``version`` or ``timestamp`` (the newest without either).

    A zone-less ``timestamp`` (text or datetime) is read in ``time_zone``.
    Raises :class:`~zorder.errors.VersionNotFoundError` naming the versions
    the log holds when the one asked for is not among them.
    """
    uri = storage.uri
    if version is not None and timestamp is not None:
        raise InvalidArgumentError(
            f"give version or timestamp, not both (got version={version!r}, "
            f"timestamp={timestamp!r})"
        )
    if version is not None:
        check_version(version)
    instant = None if timestamp is None else _instant(timestamp, time_zone)
    if version is None and instant is None:
        return _delta_table(storage)
    if instant is not None:
        newest = _delta_table(storage)
        version = _version_at(uri, instant, _commit_times(storage, newest))
        if version == newest.version():
            return newest
    assert version is not None
    try:
        return _delta_table(storage, version)
    except DeltaError as error:
        # Only now is the newest version read: to say which versions there are.
        if version > _delta_table(storage).version():
            raise VersionNotFoundError(
                f"table {uri} has no version {version} yet: {_held(storage)}"
            ) from error
        raise VersionNotFoundError(
            f"version {version} of table {uri} cannot be read ({error}); its log may have "
            f"been cleaned up: {_held(storage)}"
        ) from error


def check_version(version: object) -> None:
    """Refuse a ``version`` that is no int >= 0 (before the log is read)."""
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise InvalidArgumentError(f"version must be an int >= 0, got {version!r}")


def _delta_table(storage: Storage, version: int | None = None) -> DeltaTable:
    return DeltaTable(storage.uri, version=version, storage_options=storage.delta_options)


def _instant(value: Any, time_zone: str) -> dt.datetime:
    """``value`` as an aware datetime; zone-less text or datetimes are in ``time_zone``."""
    if isinstance(value, str):
        try:
            parsed = dt.datetime.fromisoformat(value.strip().replace(" ", "T", 1))
        except ValueError as error:
            raise InvalidArgumentError(
                f"timestamp {value!r} is not ISO-8601 text; accepted: '2026-11-24', "
                "'2026-11-24 13:45:00', '2026-11-24T13:45:00+01:00', or a datetime"
            ) from error
        value = parsed
    elif isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        value = dt.datetime.combine(value, dt.time())
    if not isinstance(value, dt.datetime):
        raise InvalidArgumentTypeError(
            f"timestamp must be a datetime, a date or ISO-8601 text, got {type(value).__name__}"
        )
    if value.tzinfo is None:
        value = value.replace(tzinfo=session_zone(time_zone))
    moment: dt.datetime = value.astimezone(dt.UTC)
    return moment


def has_commit_after(storage: Storage, version: int) -> bool:
    """Whether the log holds a commit after ``version``: one look for the next commit file,
    not a read of the log. Commits are numbered without gaps (PROTOCOL.md), so the next
    one is there exactly when a newer version is; one made after the look is what a
    commit's check of what landed since meets anyway."""
    import pyarrow.fs as pafs

    filesystem, root = storage.filesystem()
    found = filesystem.get_file_info(f"{root.rstrip('/')}/_delta_log/{version + 1:020d}.json")
    return bool(found.type != pafs.FileType.NotFound)


def _commit_files(storage: Storage) -> tuple[pafs.FileSystem, dict[int, pafs.FileInfo]]:
    import pyarrow.fs as pafs

    filesystem, root = storage.filesystem()
    selector = pafs.FileSelector(f"{root.rstrip('/')}/_delta_log", allow_not_found=True)
    commits = {}
    for info in filesystem.get_file_info(selector):
        match = _COMMIT_FILE.fullmatch(info.base_name)
        if match is not None and info.type == pafs.FileType.File:
            commits[int(match.group(1))] = info
    return filesystem, commits


def _commit_times(storage: Storage, table: DeltaTable) -> list[tuple[int, dt.datetime]]:
    """(version, commit time) of every commit still in the log, oldest first."""
    filesystem, commits = _commit_files(storage)
    configuration = table.metadata().configuration
    in_commit = str(configuration.get(_IN_COMMIT_TIMESTAMPS) or "").lower() == "true"
    enabled_at = int(configuration.get(_ENABLED_AT) or 0) if in_commit else None
    times: list[tuple[int, dt.datetime]] = []
    for version in sorted(commits):
        info = commits[version]
        if enabled_at is not None and version >= enabled_at:
            moment = _in_commit_timestamp(filesystem, info.path)
        else:
            moment = info.mtime if isinstance(info.mtime, dt.datetime) else None
        if moment is None:
            raise VersionNotFoundError(f"table {storage.uri}: no commit time for version {version}")
        moment = moment.replace(microsecond=moment.microsecond // 1000 * 1000)  # ms, as Delta
        if times and moment <= times[-1][1]:  # strictly increasing, as Delta makes them
            moment = times[-1][1] + dt.timedelta(milliseconds=1)
        times.append((version, moment.astimezone(dt.UTC)))
    return times


def _in_commit_timestamp(filesystem: pafs.FileSystem, path: str) -> dt.datetime | None:
    info = _commit_info(filesystem, path)
    if isinstance(info.get("inCommitTimestamp"), int):
        return dt.datetime.fromtimestamp(info["inCommitTimestamp"] / 1000, dt.UTC)
    return None


def _commit_info(filesystem: pafs.FileSystem, path: str) -> dict[str, Any]:
    """The ``commitInfo`` action of the commit file at ``path`` ({} when it has none)."""
    with filesystem.open_input_stream(path) as stream:
        for line in stream.read().decode().splitlines():
            info = json.loads(line).get("commitInfo") if line.strip() else None
            if isinstance(info, dict):
                return info
    return {}


def commit_infos(
    storage: Storage, *, up_to: int | None = None, after: int | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(version, ``commitInfo``) of the commits the log still holds, newest first: those at
    or below ``up_to`` and above ``after``, read one commit file at a time, on demand.

    Read from the commit files, not through ``DeltaTable.history``: deltalake 1.6's
    history of a table loaded at a version older than the newest reads the newest
    commits and numbers them down from the loaded version (measured on 1.6.6), so a
    pinned snapshot, or one a commit landed after, would see other commits' runs.
    """
    filesystem, commits = _commit_files(storage)
    for version in sorted(commits, reverse=True):
        if (up_to is not None and version > up_to) or (after is not None and version <= after):
            continue
        yield version, _commit_info(filesystem, commits[version].path)


def log_is_whole(storage: Storage) -> bool:
    """Whether the log still holds the table's first commit (version 0): no cleanup of
    expired commits has removed any (``delta.logRetentionDuration``)."""
    _, commits = _commit_files(storage)
    return 0 in commits


def restored_version(info: dict[str, Any]) -> int | None:
    """The version a restore's ``commitInfo`` says it restored; None for another commit, or
    a restore that recorded only a timestamp (Delta Spark's ``TIMESTAMP AS OF``)."""
    if info.get("operation") != RESTORE_OPERATION:
        return None
    parameters = info.get("operationParameters")
    version = parameters.get("version") if isinstance(parameters, dict) else None
    try:
        return int(version) if isinstance(version, int | str) else None
    except ValueError:
        return None


def _version_at(uri: str, instant: dt.datetime, history: list[tuple[int, dt.datetime]]) -> int:
    """The newest version committed at or before ``instant``."""
    if not history:
        raise VersionNotFoundError(f"table {uri}: its log records no commit times")
    first_version, first = history[0]
    last_version, last = history[-1]
    if instant > last:
        raise VersionNotFoundError(
            f"timestamp {instant.isoformat()} is after the newest commit of table {uri} "
            f"(version {last_version} at {last.isoformat()}); use a time at or before it"
        )
    at_or_before = [v for v, time in history if time <= instant]
    if not at_or_before:
        raise VersionNotFoundError(
            f"timestamp {instant.isoformat()} is before the oldest commit still in the log of "
            f"table {uri} (version {first_version} at {first.isoformat()})"
        )
    return max(at_or_before)


def _held(storage: Storage) -> str:
    versions = sorted(_commit_files(storage)[1])
    if not versions:
        return "its log holds no commit files"
    return f"its log holds versions {versions[0]} to {versions[-1]}"
