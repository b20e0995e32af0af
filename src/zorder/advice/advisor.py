"""Choose a clustering spec for a workload: simulate candidate layouts on a sample, keep the best.

The candidates, each judged by :class:`~zorder.advice.simulate.Simulation`
(the rows the workload's filters would scan):

- each filtered column alone (a sort by it), which also ranks the columns
  by how much they help on their own;
- Z-order with equal weights on the top 2, 3, 4 columns and on all of them
  (up to ``max_columns``), and Hilbert on the top 2 and 3;
- Z-order with unequal weights (learned bit allocation, Gao et al. 2023):
  starting from weights in proportion to each column's own help, a weight
  is doubled, halved or zeroed while the simulated figure improves;
- workload cuts (:mod:`zorder.advice.tree`) over the filtered columns.

Each kind's best layout is then judged with bloom filters
(:mod:`zorder.advice.blooms`) on the columns the workload looks up by
equality, kept where they pay; if the best layout with its filters has any,
workload cuts are grown once more for what the filters leave to them (each
filter weighted by the share of its scan they leave), beside the filters.
The advice is the layout, filters included, that scans the fewest rows.

The model's limits: the sample stands for the table (a few thousand rows a
file); every filter is one scan, weighted by how often it comes; a workload
whose parameters move (new dates, other keys) is served by its cuts only as
far as the new values fall near the old ones (quartile cuts keep lookups
working).
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from zorder.advice.blooms import (
    MAX_SHARE,
    MIN_GAIN,
    BloomChoice,
    BloomFigure,
    BloomJudge,
    TableSize,
)
from zorder.advice.simulate import SimulatedFiles, Simulation
from zorder.advice.tree import grow_cut_tree
from zorder.advice.workload import Workload, parsed_filters
from zorder.curves.cells import apportion
from zorder.curves.kinds import ClusteringSpec, SpaceFillingCurve
from zorder.curves.plan import RankedSample, fit_file_plan, rank_bits
from zorder.curves.ranks import RankFit, rank_fit
from zorder.errors import InvalidArgumentError
from zorder.skipping.pushdown import referenced

__all__ = ["Advice", "BloomFigure", "Candidate", "TableSize", "advise_sample"]

DEFAULT_MAX_COLUMNS = 8
_TOP = (2, 3, 4)
_HILBERT_TOP = (2, 3)
_WEIGHTED_COLUMNS = 5
_WEIGHT_ROUNDS = 3
# Leaves of workload cuts hold at least half a file's share of the sample.
_MIN_LEAF_SHARE = 0.5


@dataclass(frozen=True)
class Candidate:
    """One layout the advisor simulated, and the mean fraction of rows the workload would scan
    with the bloom filters its spec names (and without them)."""

    name: str
    spec: ClusteringSpec
    expected_scanned: float
    # The same layout without its spec's bloom filters (None while the advisor judges).
    scanned_without_blooms: float | None = None


@dataclass(frozen=True)
class Advice:
    """The layout advised for a workload, with the candidates it was chosen among."""

    spec: ClusteringSpec
    expected_scanned: float
    candidates: tuple[Candidate, ...]  # best first
    num_files: int
    sample_rows: int
    filters: int  # the workload's filters on the table (one per scan)
    statements: int
    left_out: int  # statements that never read the table
    seconds: float = field(default=0.0, compare=False)
    # The mean fraction of rows the workload scans on the table's files as they are now
    # (their statistics, exactly); None for a DataFrame, which has no files yet.
    current_scanned: float | None = None
    # The advised layout without its bloom filters (expected_scanned when it names none),
    # and the columns considered for filters on it, the chosen first.
    scanned_without_blooms: float | None = None
    blooms: tuple[BloomFigure, ...] = ()

    def summary(self) -> str:
        """The comparison as a table a person can read."""
        width = max(len("the table now"), *(len(c.name) for c in self.candidates))
        lines = [
            f"{self.filters} filters from {self.statements} statements"
            + (f" ({self.left_out} never read the table)" if self.left_out else "")
            + f", {self.sample_rows:,} sampled rows, {self.num_files} files, "
            f"{self.seconds:.1f} s",
            "",
            f"{'layout':<{width}}  rows scanned  without filters  spec",
        ]
        for c in self.candidates:
            mark = " <- advised" if c.spec == self.spec else ""
            lines.append(
                f"{c.name:<{width}}  {c.expected_scanned:12.3f}  {_without(c):>15}  "
                f"{c.spec.describe()}{mark}"
            )
        if self.current_scanned is not None:
            name = "the table now"
            lines.append(
                f"{name:<{width}}  {self.current_scanned:12.3f}  {'':>15}  (its files as they are)"
            )
        if self.blooms:
            lines += ["", BLOOM_RULE + ":", *(f"  {b.describe()}" for b in self.blooms)]
        return "\n".join(lines)


# The rule bloom filters are chosen by, in words.
BLOOM_RULE = (
    "bloom filters on the advised layout's lookup columns (chosen while one saves at least "
    f"{MIN_GAIN} of the rows scanned, net of the filters read, and weighs at most "
    f"{MAX_SHARE:.0%} of a file)"
)


def _without(candidate: Candidate) -> str:
    """The candidate's figure without its bloom filters, if it has any."""
    if not candidate.spec.bloom_filters or candidate.scanned_without_blooms is None:
        return ""
    return f"{candidate.scanned_without_blooms:.3f}"


def advise_sample(
    sample: pa.Table,
    types: Mapping[str, str],
    workload: Workload | Sequence[str],
    *,
    num_files: int,
    max_columns: int | None = None,
    time_zone: str = "UTC",
    partition_columns: Sequence[str] = (),
    table: TableSize | None = None,
) -> Advice:
    """The best layout of ``num_files`` files for the ``workload`` (read by
    :func:`~zorder.advice.workload.read_workload`, or its filters) over ``sample`` (columns
    as the table names them, ``types`` their Spark types), bloom filters included.

    With ``partition_columns`` (which the sample holds too), every file holds
    one partition, as a write lays a partitioned table out: each partition's
    sampled rows get their share of the files and are cut on their own; the
    partition columns are never clustering columns. ``types`` may name columns
    the sample lacks (types without statistics): filters on them keep every
    file, as on the table. ``table``: the rows and bytes the sample stands for
    (bloom filters are judged on them; by default the sample is the table).
    """
    started = time.perf_counter()
    if not isinstance(workload, Workload):
        workload = Workload(parsed_filters(list(workload), types, time_zone), len(workload), 0)
    filters = workload.filters
    if num_files < 1:
        raise InvalidArgumentError(f"num_files must be >= 1, got {num_files}")
    limit = DEFAULT_MAX_COLUMNS if max_columns is None else max_columns
    if limit < 1:
        raise InvalidArgumentError(f"max_columns must be >= 1, got {max_columns}")
    simulation = Simulation(sample, types, filters, time_zone=time_zone)
    search = _Search(simulation, num_files, partition_columns)
    top = _judge_candidates(search, _filtered_columns(simulation, partition_columns), limit)
    size = table if table is not None else TableSize(sample.num_rows, max(1, sample.nbytes))
    judged = _with_blooms(search, BloomJudge(simulation, size, exclude=partition_columns), top)
    best, choice = judged[0]
    return Advice(
        spec=best.spec,
        expected_scanned=best.expected_scanned,
        candidates=tuple(c for c, _ in judged),
        num_files=num_files,
        sample_rows=sample.num_rows,
        filters=len(filters),
        statements=workload.statements,
        left_out=workload.left_out,
        seconds=time.perf_counter() - started,
        scanned_without_blooms=best.scanned_without_blooms,
        blooms=choice.figures if choice is not None else (),
    )


def _filtered_columns(simulation: Simulation, partition_columns: Sequence[str]) -> list[str]:
    """The sample's columns some filter compares with a constant, partition columns aside."""
    filtered = [
        c
        for c in simulation.sample.column_names
        if c not in partition_columns
        and any(c in referenced(f.predicate) for f in simulation.filters)
    ]
    if not filtered:
        raise InvalidArgumentError(
            "no filter of the workload compares a column of the table with a constant that "
            "statistics can use; nothing to cluster for"
        )
    return filtered


def _judge_candidates(search: _Search, filtered: list[str], limit: int) -> list[str]:
    """Each kind of layout over the most helpful of the ``filtered`` columns, judged by
    ``search``: Z-order and Hilbert of the top few, weighted Z-order, and workload cuts.
    Returns those columns, most helpful first."""
    alone = {
        c: search.judge(f"{c} alone", ClusteringSpec((c,), "zorder", "rank")) for c in filtered
    }
    ranked = sorted(filtered, key=lambda c: alone[c])
    helpful = [c for c in ranked if alone[c] < 1.0] or ranked[:1]
    top = helpful[:limit]
    for k in _TOP:
        if k <= len(top):
            search.judge(f"zorder, top {k}", ClusteringSpec(tuple(top[:k]), "zorder", "rank"))
    if len(top) > max(_TOP):
        search.judge(f"zorder, all {len(top)}", ClusteringSpec(tuple(top), "zorder", "rank"))
    for k in _HILBERT_TOP:
        if k <= len(top):
            search.judge(f"hilbert, top {k}", ClusteringSpec(tuple(top[:k]), "hilbert", "rank"))
    search.weighted(top[:_WEIGHTED_COLUMNS], {c: 1.0 - alone[c] for c in top})
    grown = search.cuts(top, search.simulation)
    if grown is not None:
        search.judge("workload cuts", grown)
    return top


_BLOOM_CUTS = "workload cuts, beside bloom filters"


def _with_blooms(
    search: _Search, judge: BloomJudge, top: list[str]
) -> list[tuple[Candidate, BloomChoice | None]]:
    """Each kind's best layout with the bloom filters that pay on it, best first; and
    workload cuts grown again for what the best one's filters leave to the layout."""
    judged = sorted(
        (_bloomed(search, judge, name) for name in search.layouts),
        key=lambda j: j[0].expected_scanned,
    )
    best, choice = judged[0]
    if choice is not None and choice.blooms:
        base = search.layouts[best.name][1].scanned()
        left = np.divide(choice.scanned, base, out=np.ones_like(base), where=base > 0)
        grown = search.cuts(top, search.simulation.reweighted(left))
        if grown is not None:
            search.judge(_BLOOM_CUTS, grown)
        if _BLOOM_CUTS in search.layouts:
            judged.append(_bloomed(search, judge, _BLOOM_CUTS))
            judged.sort(key=lambda j: j[0].expected_scanned)
    return judged


def _bloomed(search: _Search, judge: BloomJudge, name: str) -> tuple[Candidate, BloomChoice | None]:
    """The best layout of kind ``name`` with the filters that pay on it."""
    candidate, layout = search.layouts[name]
    if not judge.columns:
        return dataclasses.replace(
            candidate, scanned_without_blooms=candidate.expected_scanned
        ), None
    choice = judge.choose(layout)
    spec = dataclasses.replace(candidate.spec, bloom_filters=choice.blooms)
    scanned = search.simulation.mean(choice.scanned)
    return Candidate(name, spec, scanned, candidate.expected_scanned), choice


class _Search:
    """Candidates judged once each (by spec), rank fits of each column made once per width."""

    def __init__(
        self, simulation: Simulation, num_files: int, partition_columns: Sequence[str] = ()
    ) -> None:
        self.simulation = simulation
        self.num_files = num_files
        self.judged: dict[ClusteringSpec, Candidate] = {}
        # The best layout of each kind (name), with its simulated files.
        self.layouts: dict[str, tuple[Candidate, SimulatedFiles]] = {}
        self._fits: dict[tuple[str, int], RankFit] = {}
        sample = simulation.sample
        if partition_columns:  # each partition's rows, and its share of the files
            keys = sample.select(list(partition_columns)).to_pylist()
            index: dict[tuple[object, ...], int] = {}
            of_row = np.array([index.setdefault(tuple(k.values()), len(index)) for k in keys])
            self.groups = [np.flatnonzero(of_row == g) for g in range(len(index))]
            masses = np.array([len(g) for g in self.groups], dtype=np.float64)
            self.files = (
                apportion(masses, num_files) if num_files >= len(masses) else [1] * len(masses)
            )
        else:
            self.groups = [np.arange(sample.num_rows)]
            self.files = [num_files]

    def judge(self, name: str, spec: ClusteringSpec) -> float:
        known = self.judged.get(spec)
        if known is None:
            layout = self._layout(spec)
            known = Candidate(name, spec, self.simulation.mean(layout.scanned()))
            self.judged[spec] = known
            held = self.layouts.get(name)
            if held is None or known.expected_scanned < held[0].expected_scanned:
                self.layouts[name] = (known, layout)
        return known.expected_scanned

    def with_blooms(self, spec: ClusteringSpec, judge: BloomJudge) -> float:
        """The workload's mean fraction scanned on ``spec``'s layout with its bloom filters."""
        return self.simulation.mean(judge.scanned(self._layout(spec), spec.bloom_filters))

    def cuts(self, columns: Sequence[str], simulation: Simulation) -> ClusteringSpec | None:
        """Workload cuts over ``columns`` grown for ``simulation``'s filters (None: no cut
        helps), leaves at least half a file's share of the sample."""
        rows = simulation.sample.num_rows
        min_rows = max(1, int(_MIN_LEAF_SHARE * rows / self.num_files))
        grown = grow_cut_tree(simulation, columns, leaves=self.num_files, min_rows=min_rows)
        if grown is None:
            return None
        tree, names = grown
        return ClusteringSpec(names, "zorder", "rank", cuts=tree)

    def _layout(self, spec: ClusteringSpec) -> SimulatedFiles:
        arrays = [self.simulation.sample.column(c).combine_chunks() for c in spec.columns]
        bits = rank_bits(len(arrays))
        curve: SpaceFillingCurve = "hilbert" if spec.curve == "hilbert" else "zorder"
        files = np.zeros(self.simulation.sample.num_rows, dtype=np.int64)
        first = 0
        for rows, count in zip(self.groups, self.files, strict=True):
            own = [a.take(pa.array(rows)) for a in arrays] if len(self.groups) > 1 else arrays
            if len(self.groups) > 1:
                fits = [rank_fit(a, bits) for a in own]
            else:
                fits = [self._fit(c, a, bits) for c, a in zip(spec.columns, own, strict=True)]
            ranked = RankedSample(
                tuple(f.buckets for f in fits),
                np.stack([f.sample_ids for f in fits], axis=1).astype(np.uint64),
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                plan = fit_file_plan(
                    own,
                    curve=curve,
                    bits=bits,
                    count=count,
                    weights=spec.weights,
                    cuts=spec.cuts,
                    ranked=ranked,
                )
            placed, _ = plan.place(own)
            files[rows] = first + placed
            first += plan.count
        return self.simulation.simulated(files)

    def _fit(self, column: str, array: pa.Array, bits: int) -> RankFit:
        fit = self._fits.get((column, bits))
        if fit is None:
            fit = self._fits[(column, bits)] = rank_fit(array, bits)
        return fit

    def weighted(self, columns: Sequence[str], help_alone: Mapping[str, float]) -> None:
        """Hill-climb on per-column weights from weights in proportion to each column's help."""
        if len(columns) < 2:
            return
        weights = [max(help_alone[c], 1e-3) for c in columns]
        weights = [w / max(weights) for w in weights]
        best = self._judge_weights(columns, weights)
        for _ in range(_WEIGHT_ROUNDS):
            improved = False
            for i in range(len(columns)):
                for factor in (2.0, 0.5, 0.0):
                    trial = list(weights)
                    trial[i] *= factor
                    if not any(w > 0 for w in trial):
                        continue
                    figure = self._judge_weights(columns, trial)
                    if figure < best - 1e-9:
                        best, weights, improved = figure, trial, True
            if not improved:
                break

    def _judge_weights(self, columns: Sequence[str], weights: Sequence[float]) -> float:
        kept = [(c, w) for c, w in zip(columns, weights, strict=True) if w > 0]
        top = max(w for _, w in kept)
        names = tuple(c for c, _ in kept)
        shares = tuple(round(w / top, 3) for _, w in kept)
        if len(names) == 1 or len(set(shares)) == 1:
            return self.judge(
                f"zorder, {len(names)} columns", ClusteringSpec(names, "zorder", "rank")
            )
        spec = ClusteringSpec(names, "zorder", "rank", weights=shares)
        return self.judge("zorder, weighted", spec)
