"""``vacuum``: delete the files no table version within the retention references."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from zorder.errors import InvalidArgumentError
from zorder.table import TableSnapshot, vacuum_files
from zorder.table.delta.retention import RETENTION_PROPERTY, Retention, table_retention

__all__ = ["VacuumResult", "check_retain_hours", "vacuum_snapshot"]


@dataclass(frozen=True)
class VacuumResult:
    """What a ``vacuum`` found (and, unless a dry run, deleted).

    ``retention_from`` says where ``retain_hours`` came from: the caller's
    ``"argument"``, the table's ``delta.deletedFileRetentionDuration``
    (``"table"``), or Delta's ``"default"`` of one week when the table sets none.
    """

    table_uri: str
    files: tuple[str, ...]
    dry_run: bool
    retain_hours: float
    retention_from: Literal["argument", "table", "default"] = "argument"


# Ten thousand years: longer keeps every file, and is past what a timedelta holds.
MAX_RETAIN_HOURS = 24 * 366 * 10_000


def check_retain_hours(retain_hours: float | None) -> None:
    """Refuse a retention that is not a number of hours from 0 to
    :data:`MAX_RETAIN_HOURS`, before the log is read."""
    if retain_hours is None:
        return
    if isinstance(retain_hours, bool) or not isinstance(retain_hours, int | float):
        raise InvalidArgumentError(f"retain_hours must be a number of hours, got {retain_hours!r}")
    if not 0 <= retain_hours <= MAX_RETAIN_HOURS:  # NaN fails both
        raise InvalidArgumentError(
            f"retain_hours must be from 0 to {MAX_RETAIN_HOURS:,} (ten thousand years), "
            f"got {retain_hours!r}"
        )


def vacuum_snapshot(
    snapshot: TableSnapshot, *, retain_hours: float | None, dry_run: bool, force: bool
) -> VacuumResult:
    """:meth:`zorder.Table.vacuum` on the table's newest version, ``snapshot``."""
    check_retain_hours(retain_hours)
    retention, floor = _retention(snapshot.configuration, retain_hours, force)
    files = vacuum_files(
        snapshot, retain_hours=retention.hours, dry_run=dry_run, force=force, floor_hours=floor
    )
    return VacuumResult(
        snapshot.uri, tuple(sorted(files)), dry_run, retention.hours, retention.source
    )


def _retention(
    configuration: Mapping[str, str | None], retain_hours: float | None, force: bool
) -> tuple[Retention, float]:
    """The retention to vacuum with, and the floor below which only ``force`` vacuums.

    The floor is what the table keeps: its ``delta.deletedFileRetentionDuration``,
    or Delta's week when it sets none (as Delta's VACUUM checks). deltalake
    enforces the table's retention too, but as an error of its own (and reads
    a property it cannot parse as a week); checked here, it is a
    :class:`~zorder.errors.ZorderError` that names the property.
    """
    if retain_hours is not None and force:
        return Retention(retain_hours, "argument", f"{retain_hours:g} hours"), 0.0
    try:
        kept = table_retention(configuration)
    except InvalidArgumentError as error:
        raise InvalidArgumentError(
            f"{error}; set the property to such an interval, or pass retain_hours "
            "(CLI: --retain-hours) with force=True (CLI: --force)"
        ) from None
    if retain_hours is None:
        return kept, kept.hours
    if retain_hours < kept.hours:
        what = (
            f"the {kept.hours:g} hours the table keeps ({RETENTION_PROPERTY} = {kept.text!r})"
            if kept.source == "table"
            else f"the safe minimum of {kept.hours:g} hours (Delta's default; the table sets "
            f"no {RETENTION_PROPERTY})"
        )
        raise InvalidArgumentError(
            f"retain_hours={retain_hours:g} is below {what}: readers of older versions and "
            "writers still running may need those files; pass force=True (CLI: --force) to "
            "vacuum anyway"
        )
    return Retention(retain_hours, "argument", f"{retain_hours:g} hours"), kept.hours
