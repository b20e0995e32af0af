"""``describe``: what a table holds, file by file, and how it was clustered."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from zorder.errors import ColumnNotFoundError
from zorder.stats import action_stats_field
from zorder.table import (
    CommitClustering,
    Run,
    TableSnapshot,
    latest_clustering,
    load_snapshot,
    normalize_uri,
)

__all__ = ["FileDescription", "TableDescription", "describe"]

_DEFAULT_SHOWN = 4  # columns shown when the table records no clustering


@dataclass(frozen=True)
class FileDescription:
    """One data file: where it lies, which run wrote it, and its statistics."""

    path: str  # relative to the table root (decoded: as on storage)
    run: Run | None  # the zorder run whose directory holds it, if any
    partition: Mapping[str, Any]  # the table's partition columns and this file's values
    rows: int | None
    size: int
    min_values: Mapping[str, Any]  # of the described columns; absent where unknown
    max_values: Mapping[str, Any]

    @property
    def name(self) -> str:
        """The path within its run's directory (the whole path for other files)."""
        if self.run is None:
            return self.path
        return self.path.removeprefix(f"{self.run.directory}/")


@dataclass(frozen=True)
class TableDescription:
    """A table version: its files with the bounds of ``columns``, and its recorded clustering."""

    table_uri: str
    version: int
    clustering: CommitClustering | None  # the newest zorder commit still in the history
    columns: tuple[str, ...]
    files: tuple[FileDescription, ...]

    @property
    def rows(self) -> int:
        return sum(f.rows or 0 for f in self.files)

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)


def _shown_columns(
    snapshot: TableSnapshot, columns: Sequence[str] | None, clustering: CommitClustering | None
) -> tuple[str, ...]:
    names = [f.name for f in snapshot.schema.fields]
    if columns is None:
        if clustering is not None:
            return clustering.spec.columns
        with_stats = [n for n in names if action_stats_field(snapshot.actions, "min", n)]
        return tuple(with_stats[:_DEFAULT_SHOWN])
    by_lower = {n.lower(): n for n in names}
    resolved = []
    for wanted in columns:
        actual = by_lower.get(wanted.lower())
        if actual is None:
            raise ColumnNotFoundError(
                f"unknown column {wanted!r} to describe; table columns: {', '.join(names)}"
            )
        resolved.append(actual)
    return tuple(resolved)


def _values(snapshot: TableSnapshot, kind: str, column: str) -> list[Any]:
    field = action_stats_field(snapshot.actions, kind, column)
    return [None] * snapshot.actions.num_rows if field is None else field.to_pylist()


def describe(
    path: str,
    *,
    columns: Sequence[str] | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> TableDescription:
    """Every file of the table at ``path`` with its rows, size, run and bounds of ``columns``.

    ``columns`` defaults to the clustering columns the newest zorder commit
    recorded, else the first four columns with statistics. Only the log is
    read, never a data file.
    """
    uri = normalize_uri(path)
    snapshot = load_snapshot(uri, storage_options)
    clustering = latest_clustering(uri, storage_options)
    shown = _shown_columns(snapshot, columns, clustering)
    lows = {c: _values(snapshot, "min", c) for c in shown}
    highs = {c: _values(snapshot, "max", c) for c in shown}
    files = tuple(
        FileDescription(
            path=data_file.path,
            run=Run.of_path(data_file.path),
            partition=dict(zip(snapshot.partition_columns, data_file.partition, strict=True)),
            rows=data_file.num_records,
            size=data_file.size,
            min_values={c: lows[c][i] for c in shown if lows[c][i] is not None},
            max_values={c: highs[c][i] for c in shown if highs[c][i] is not None},
        )
        for i, data_file in enumerate(snapshot.files)
    )
    return TableDescription(uri, snapshot.version, clustering, shown, files)
