"""Which files an incremental optimize reclusters: size-tiered runs, as in an LSM tree.

Every zorder run is a cube: its files cover the whole domain of the
clustering columns, each a box of it. A point lookup reads about
``F^(1 - 1/d)`` files of a cube of ``F`` files, so many small cubes skip
badly, and one cube rebuilt after every append costs the whole table each
time. The policy in between (size-tiered compaction, the scheme of LSM
trees and of Delta's liquid ZCubes):

- A run's **tier** is ``floor(log_fanout(run bytes / target file size))``:
  runs of fewer than ``fanout`` files are tier 0, up to ``fanout**2`` tier 1,
  and so on.
- Files no run of the current spec vouches for (blind appends by other
  writers, an older layout, another spec) are always reclustered. Together
  they count as one more run, of the tier of their bytes.
- Once a tier holds ``fanout`` runs, they are merged into one run of the
  next tier, which may fill that tier in turn; one optimize merges the whole
  cascade into one new run.
- Runs of a tier that is not full are left untouched.

Each byte is rewritten about once per tier it climbs, ``log_fanout`` of the
table's growth in all, and a partition holds at most ``fanout - 1`` runs of
each tier. Partitions are tiered each on their own: call this once per
partition.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from zorder.curves.kinds import ClusteringSpec
from zorder.errors import InvalidArgumentError
from zorder.table.clustering import Run
from zorder.table.delta.snapshot import DataFile, TableSnapshot

__all__ = [
    "DEFAULT_FANOUT",
    "RunSummary",
    "check_fanout",
    "files_to_optimize",
    "files_to_recluster",
    "runs_of",
    "runs_of_spec",
    "tier",
]

DEFAULT_FANOUT = 4


def check_fanout(fanout: int) -> int:
    if isinstance(fanout, bool) or not isinstance(fanout, int) or fanout < 2:
        raise InvalidArgumentError(
            f"fanout must be an int of at least 2 (runs of a tier merged at once), got {fanout!r}"
        )
    return fanout


def tier(size: int, *, target_file_size: int, fanout: int) -> int:
    """The tier of a run of ``size`` bytes: 0 below ``fanout`` files, then one a power."""
    files = size / max(1, target_file_size)
    if files < fanout:
        return 0
    level = int(math.log(files, fanout))
    # log can land a hair under an exact power: fanout**level files is tier level.
    return level + 1 if fanout ** (level + 1) <= files else level


@dataclass(frozen=True)
class RunSummary:
    """The files of one run within one partition (``run`` None: files of no run)."""

    run: Run | None
    files: tuple[DataFile, ...]

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def rows(self) -> int | None:
        counts = [f.num_records for f in self.files]
        return None if any(c is None for c in counts) else sum(c or 0 for c in counts)


def runs_of(files: Sequence[DataFile], runs: Sequence[Run | None]) -> list[RunSummary]:
    """``files`` grouped by run (``runs[i]`` is the run of ``files[i]``), in first-seen order."""
    groups: dict[Run | None, list[DataFile]] = {}
    for data_file, run in zip(files, runs, strict=True):
        groups.setdefault(run, []).append(data_file)
    return [RunSummary(run, tuple(members)) for run, members in groups.items()]


def files_to_recluster(
    files: Sequence[DataFile],
    runs: Sequence[Run | None],
    *,
    target_file_size: int,
    fanout: int = DEFAULT_FANOUT,
) -> tuple[DataFile, ...]:
    """The files of one partition an incremental optimize rewrites (none: nothing to do).

    ``runs[i]`` is the run of the current spec that wrote ``files[i]``, None
    when no such run vouches for it.
    """
    check_fanout(fanout)
    groups = runs_of(files, runs)
    loose = next((g for g in groups if g.run is None), None)
    sealed = [g for g in groups if g.run is not None]
    chosen: list[RunSummary] = []
    merged = loose.size if loose else 0  # the new run so far
    while True:
        counts: dict[int, list[RunSummary]] = {}
        for group in sealed:
            if group not in chosen:
                level = tier(group.size, target_file_size=target_file_size, fanout=fanout)
                counts.setdefault(level, []).append(group)
        if loose or chosen:  # the new run counts in its own tier
            level = tier(merged, target_file_size=target_file_size, fanout=fanout)
            counts.setdefault(level, []).append(RunSummary(None, ()))
        full = sorted(level for level, members in counts.items() if len(members) >= fanout)
        if not full:
            break
        chosen += [g for g in counts[full[0]] if g.run is not None]
        merged = sum(g.size for g in chosen) + (loose.size if loose else 0)
    rewrite = [*(loose.files if loose else ()), *(f for g in chosen for f in g.files)]
    return tuple(rewrite)


def runs_of_spec(snapshot: TableSnapshot, spec: ClusteringSpec) -> dict[str, Run | None]:
    """Each file's run if a run of ``spec`` wrote it (as its txn vouches), else None.

    A file with deleted rows belongs to no run: it needs a rewrite without them.
    """
    return {
        f.path: run
        if run is not None and run.fingerprint == spec.fingerprint and not f.has_vector
        else None
        for f, run in zip(snapshot.files, snapshot.runs, strict=True)
    }


def files_to_optimize(
    snapshot: TableSnapshot,
    spec: ClusteringSpec,
    partitions: Collection[tuple[Any, ...]],
    *,
    full: bool,
    target_file_size: int,
    fanout: int = DEFAULT_FANOUT,
) -> tuple[DataFile, ...]:
    """The files of ``partitions`` an optimize to ``spec`` rewrites: every one (``full``), or
    in each partition those :func:`files_to_recluster` picks."""
    runs = runs_of_spec(snapshot, spec)
    picked: list[DataFile] = []
    for partition, members in snapshot.files_by_partition().items():
        if partition not in partitions:
            continue
        if full:
            picked += members
        else:
            picked += files_to_recluster(
                members,
                [runs[f.path] for f in members],
                target_file_size=target_file_size,
                fanout=fanout,
            )
    return tuple(picked)
