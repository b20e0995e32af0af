"""``vacuum``: delete the files no table version within the retention references."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from zorder.table import MIN_VACUUM_RETENTION_HOURS, normalize_uri, vacuum_files

__all__ = ["VacuumResult", "vacuum"]


@dataclass(frozen=True)
class VacuumResult:
    """What a ``vacuum`` found (and, unless a dry run, deleted)."""

    table_uri: str
    files: tuple[str, ...]
    dry_run: bool
    retain_hours: float


def vacuum(
    path: str,
    *,
    retain_hours: float = MIN_VACUUM_RETENTION_HOURS,
    dry_run: bool = True,
    force: bool = False,
    storage_options: Mapping[str, str] | None = None,
) -> VacuumResult:
    """List (``dry_run``, the default) or delete files of the table at ``path`` that are unused.

    Unused: removed by a commit older than ``retain_hours``, or never committed
    at all (the files of a run that died before its commit) and older than
    ``retain_hours``. A retention below a week is refused unless ``force``,
    as in Delta's VACUUM, because older versions' readers may still need them.
    """
    uri = normalize_uri(path)
    files = vacuum_files(
        uri,
        retain_hours=retain_hours,
        dry_run=dry_run,
        force=force,
        storage_options=storage_options,
    )
    return VacuumResult(uri, tuple(sorted(files)), dry_run, retain_hours)
