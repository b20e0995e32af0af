"""``describe``: what a table holds, file by file and run by run, and how it is clustered."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from zorder.columns import resolve_columns
from zorder.curves.kinds import ClusteringSpec
from zorder.stats import ColumnDepth, action_stats_field
from zorder.table import (
    CommitClustering,
    Run,
    TableSnapshot,
)
from zorder.table.depths import snapshot_depths

__all__ = [
    "ColumnDepth",
    "FileDescription",
    "RunDescription",
    "TableDescription",
    "describe_snapshot",
]

_DEFAULT_SHOWN = 4  # columns shown when the table records no clustering


@dataclass(frozen=True)
class FileDescription:
    """One data file: where it lies, which run wrote it, and its statistics."""

    path: str  # relative to the table root (decoded: as on storage)
    run: Run | None  # the zorder run that wrote it (its commit's txn vouches), if any
    partition: Mapping[str, Any]  # the table's partition columns and this file's values
    rows: int | None  # live rows: those its deletion vector deletes are not counted
    size: int
    min_values: Mapping[str, Any]  # of the described columns; absent where unknown
    max_values: Mapping[str, Any]
    deleted_rows: int = 0  # rows of the file its deletion vector deletes

    @property
    def name(self) -> str:
        """The path within its run's directory (the whole path for other files)."""
        if self.run is None:
            return self.path
        return self.path.removeprefix(f"{self.run.directory}/")


@dataclass(frozen=True)
class RunDescription:
    """The files one zorder run wrote into one partition: a cube of the table."""

    run: Run
    partition: Mapping[str, Any]
    files: int
    rows: int | None  # None when a file's statistics do not count its rows
    size: int
    current: bool  # clustered by the table's spec (else an older spec: unclustered now)
    deleted_rows: int = 0  # rows of its files that deletion vectors delete


@dataclass(frozen=True)
class TableDescription:
    """A table version: its clustering spec, runs and files (with the bounds of ``columns``),
    and how well it is clustered on each of ``columns`` (``depth``)."""

    table_uri: str
    version: int
    spec: ClusteringSpec | None  # the properties' spec, else the log's (TableSnapshot.logged_spec)
    target_file_size: int | None  # delta.targetFileSize, bytes
    clustering: CommitClustering | None  # the newest zorder commit still in the history
    columns: tuple[str, ...]
    files: tuple[FileDescription, ...]
    runs: tuple[RunDescription, ...]
    # Per column of ``columns``, in order: how the files' [min, max] ranges overlap, from
    # the statistics alone, partition by partition (see zorder.stats.depth).
    depth: tuple[ColumnDepth, ...] = ()

    @property
    def average_depth(self) -> dict[str, float]:
        """Each of ``columns``' average clustering depth (1.0: no two files share a value)."""
        return {d.column: d.average_depth for d in self.depth}

    @property
    def rows(self) -> int:
        return sum(f.rows or 0 for f in self.files)

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def deleted_rows(self) -> int:
        """Rows deletion vectors delete: still in the files, gone from the table."""
        return sum(f.deleted_rows for f in self.files)

    @property
    def unclustered(self) -> tuple[FileDescription, ...]:
        """What an incremental optimize clusters: files no run of the table's spec wrote, and
        files with deleted rows (rewritten without them)."""
        current = {r.run for r in self.runs if r.current}
        return tuple(
            f for f in self.files if f.run is None or f.run not in current or f.deleted_rows
        )

    @property
    def unclustered_fraction(self) -> float:
        """The share of the table's bytes that is not clustered by its spec."""
        return sum(f.size for f in self.unclustered) / self.size if self.size else 0.0


def _shown_columns(
    snapshot: TableSnapshot, columns: Sequence[str] | None, spec: ClusteringSpec | None
) -> tuple[str, ...]:
    names = list(snapshot.schema.column_types)
    if columns is None:
        if spec is not None:
            return spec.columns
        with_stats = [n for n in names if action_stats_field(snapshot.actions, "min", n)]
        return tuple(with_stats[:_DEFAULT_SHOWN])
    return tuple(resolve_columns(columns, names, context="to describe"))


def _values(snapshot: TableSnapshot, kind: str, column: str) -> list[Any]:
    field = action_stats_field(snapshot.actions, kind, column)
    return [None] * snapshot.actions.num_rows if field is None else field.to_pylist()


def describe_snapshot(
    snapshot: TableSnapshot, columns: Sequence[str] | None = None
) -> TableDescription:
    """What :meth:`zorder.Table.describe` says of one version of the table."""
    clustering = snapshot.latest_clustering
    # As an optimize resolves it: the properties', else the log's (a write's version
    # holds its rows; the properties follow in the next commit).
    spec = snapshot.recorded_spec or snapshot.logged_spec
    shown = _shown_columns(snapshot, columns, spec)
    lows = {c: _values(snapshot, "min", c) for c in shown}
    highs = {c: _values(snapshot, "max", c) for c in shown}
    files = tuple(
        FileDescription(
            path=data_file.path,
            run=run,
            partition=dict(zip(snapshot.partition_columns, data_file.partition, strict=True)),
            rows=data_file.num_records,
            size=data_file.size,
            deleted_rows=data_file.deleted,
            min_values={c: lows[c][i] for c in shown if lows[c][i] is not None},
            max_values={c: highs[c][i] for c in shown if highs[c][i] is not None},
        )
        for i, (data_file, run) in enumerate(zip(snapshot.files, snapshot.runs, strict=True))
    )
    return TableDescription(
        snapshot.uri,
        snapshot.version,
        spec,
        snapshot.recorded_target_file_size,
        clustering,
        shown,
        files,
        _runs(files, spec),
        snapshot_depths(snapshot, shown),
    )


def _runs(
    files: Sequence[FileDescription], spec: ClusteringSpec | None
) -> tuple[RunDescription, ...]:
    groups: dict[tuple[Run, tuple[tuple[str, Any], ...]], list[FileDescription]] = {}
    for f in files:
        if f.run is not None:
            groups.setdefault((f.run, tuple(f.partition.items())), []).append(f)
    described = []
    for (run, partition), members in groups.items():
        counts = [f.rows for f in members]
        described.append(
            RunDescription(
                run=run,
                partition=dict(partition),
                files=len(members),
                rows=None if None in counts else sum(c or 0 for c in counts),
                size=sum(f.size for f in members),
                current=spec is not None and run.fingerprint == spec.fingerprint,
                deleted_rows=sum(f.deleted_rows for f in members),
            )
        )
    return tuple(described)
