"""Bloom filters in the advice: the lookups they serve on a layout, and what they save.

A Parquet bloom filter proves a value absent from a file's row group, so a
lookup (``id = v``, ``id <=> v``, ``id IN (...)``, also under AND and OR)
skips files whose bounds straddle ``v``: what a curve cannot do for a column
it does not cluster by, or clusters weakly. :class:`BloomJudge` judges the
filters a layout could carry on the advisor's sample and simulated files
(:class:`~zorder.advice.simulate.SimulatedFiles`).

The model. A file the statistics keep is still scanned when it holds a
looked-up value, or else with probability fpp (a false positive): in
expectation ``h + (1 - h) fpp``, ``h`` the chance it holds the value. Values
and leaves combine as independent events, as the scan probes them
(:mod:`zorder.skipping.blooms`): an IN list or an OR keeps a file unless every
part is excluded, an AND only when every part keeps it; NOT and anything but
an equality on the column's own values keep every file. ``h`` is the
table's, not the sample's: a looked-up id is usually absent from the sample
although the table holds it.

- *Rows holding the value in the table* (``c``): empirical Bayes on the
  sample's counts, sampling rate ``s``. A value seen ``k`` times has
  ``(k + 1) n[k+1] / (n[k] s)`` rows (Robbins' estimate for Poisson counts,
  ``n[k]`` the values seen ``k`` times) where at least 16 values were seen
  ``k`` and ``k + 1`` times, ``k / s`` elsewhere; a value the sample lacks
  has Good-Turing's missing mass ``n[1] / n`` of the table's rows spread
  over Chao1's ``n[1] (n[1] - 1) / (2 (n[2] + 1))`` unseen values. Never
  below one row: a lookup asks for a value that is there.
- *Where they lie*: as the layout places the column's values around it.
  Each file whose sampled range of the column covers the value gets a share
  ``p`` in proportion to its density there (its sampled rows over the
  fraction of the column's sampled values its range spans): a column the
  layout sorts by has one such file, one it ignores has every file, each by
  its size, and Z-order cells something between.
- *Together or apart*: rows of one value land together more often than
  independent placement says when the layout clusters a column correlated
  with it (an order's lineitems ship within weeks of each other). ``rho``,
  the excess share of the sample's same-value row pairs that share a file
  over what the shares give, makes the ``c`` rows ``c / (1 + rho (c - 1))``
  independent clumps, and ``h = 1 - (1 - p) ** clumps``.

A file has a row group per 128 MiB (Parquet's default), each carrying a
filter on the column (zorder's writes turn dictionary encoding off for such
columns: Parquet's writers give no filter to a chunk they dictionary-encode
throughout); a value the file lacks keeps it unless every row group's filter
excludes it, so with probability ``1 - (1 - fpp) ** row_groups``.

The cost. A file's filters are what zorder's write makes: each sized for
:data:`~zorder.curves.kinds.BLOOM_ROWS_SLACK` times a row group's rows at the rate
(:func:`~zorder.curves.kinds.bloom_filter_bytes`): the size Parquet's writer
was measured to write, however many distinct values a file holds. A lookup reads the filter of
every file the statistics keep before any row: those bytes are charged
against the rows saved, both as fractions of the table (rows scanned stand
for bytes read).

The rule. Columns are added one at a time, the one saving most first, while
one saves at least :data:`MIN_GAIN` of the workload's mean fraction of rows
scanned, net of the filters read (less is within the sample's noise, and not
worth a rewrite), and its filter is at most :data:`MAX_SHARE` of a file's
bytes (the storage and each probe stay small beside the data). A column the
layout clusters well gains nothing (its lookups keep few files already).
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from zorder.advice.simulate import SimulatedFiles, Simulation
from zorder.curves.kinds import (
    BLOOM_ROWS_SLACK,
    DEFAULT_BLOOM_FPP,
    PARQUET_ROW_GROUP_BYTES,
    BloomColumn,
    bloom_filter_bytes,
    bloom_filter_type,
)
from zorder.skipping import Bound
from zorder.skipping.blooms import bloom_lookups
from zorder.skipping.nodes import And, Or, Predicate
from zorder.skipping.predicates import rewrite_not

__all__ = [
    "MAX_SHARE",
    "MIN_GAIN",
    "BloomChoice",
    "BloomFigure",
    "BloomJudge",
    "TableSize",
]

# A column's filters must save at least this much of the workload's mean fraction of rows
# scanned, net of the filters read, and weigh at most this share of a file's bytes.
MIN_GAIN = 0.005
MAX_SHARE = 0.10
# Robbins' estimate where at least this many values were seen k and k + 1 times.
_ROBBINS_SUPPORT = 16
# rho from at most this many values seen twice or more (and cells of values x files), and
# only when their sampled rows make at least this many pairs.
_PAIRED_VALUES = 1_000
_PAIRED_CELLS = 2_000_000
_MIN_PAIRS = 30

# Per file: the probability a lookup leaf keeps it; None: it keeps every file.
_Kept: TypeAlias = npt.NDArray[np.float64] | None


@dataclass(frozen=True)
class TableSize:
    """The table the sample stands for: its rows and bytes."""

    rows: int
    bytes: int


@dataclass(frozen=True)
class BloomFigure:
    """One column considered for bloom filters on a layout, and what the simulation says."""

    column: str
    fpp: float
    chosen: bool
    scanned_before: float  # the workload's mean fraction scanned with the columns chosen before
    scanned_after: float  # and with this column's filters too
    probe: float  # its filters' bytes a query reads on average, as a fraction of the table's
    filter_bytes: int  # one file's filters (one a row group)
    file_bytes: int  # one file: the table's bytes over the files

    @property
    def gain(self) -> float:
        """The rows saved net of the filters read, as a fraction of the table."""
        return self.scanned_before - self.scanned_after - self.probe

    @property
    def share(self) -> float:
        """The filter's bytes over a file's."""
        return self.filter_bytes / max(1, self.file_bytes)

    def describe(self) -> str:
        """``l_orderkey: 0.464 -> 0.434 rows scanned, filters read 0.0015, 64 KiB a file (4.2%
        of it): chosen``."""
        if self.chosen:
            verdict = "chosen"
        elif self.share > MAX_SHARE:
            verdict = f"not chosen: over {MAX_SHARE:.0%} of a file"
        else:
            verdict = f"not chosen: saves {self.gain:.3f} net, under {MIN_GAIN}"
        return (
            f"{BloomColumn(self.column, self.fpp).describe()}: {self.scanned_before:.3f} -> "
            f"{self.scanned_after:.3f} rows scanned, filters read {self.probe:.4f}, "
            f"{_kib(self.filter_bytes)} a file ({self.share:.1%} of it): {verdict}"
        )


@dataclass(frozen=True)
class BloomChoice:
    """The filters chosen for a layout: the columns, each distinct filter's fraction of rows
    scanned with them, and every column's figures (the chosen first, in order)."""

    blooms: tuple[BloomColumn, ...]
    scanned: npt.NDArray[np.float64]
    figures: tuple[BloomFigure, ...]


class _Values:
    """One column's sampled values: sorted distinct values, each row's code in them, and the
    table's rows expected to hold a value seen k times."""

    def __init__(self, array: pa.Array, table_rows: int) -> None:
        distinct = pc.unique(array.drop_null())
        distinct = distinct.take(pc.sort_indices(distinct))
        self.known: list[Any] = distinct.to_pylist()
        codes = pc.fill_null(pc.index_in(array, value_set=distinct), -1)
        self.codes = np.asarray(codes.to_numpy(zero_copy_only=False), dtype=np.int64)
        self.counts = np.bincount(self.codes[self.codes >= 0], minlength=len(self.known))
        self.cumulative = np.concatenate([[0], np.cumsum(self.counts)])
        # The rows in code order (NULLs last): code j's are cumulative[j] .. cumulative[j + 1].
        last = np.where(self.codes >= 0, self.codes, len(self.known))
        self.by_code = np.argsort(last, kind="stable")
        rate = len(array) / max(len(array), table_rows)
        seen = np.bincount(self.counts, minlength=3).astype(np.float64)  # n[k]
        expected = np.arange(len(seen) + 1, dtype=np.float64) / rate  # k / s
        if rate >= 1:  # the sample is the table: its counts are exact
            self.expected = expected
            return
        singles, doubles = seen[1], seen[2]
        unseen = singles * (singles - 1) / (2 * (doubles + 1))  # Chao1
        if unseen > 0:
            expected[0] = (singles / rate) / unseen
        for k in range(1, len(seen) - 1):
            if min(seen[k], seen[k + 1]) >= _ROBBINS_SUPPORT:
                expected[k] = (k + 1) * seen[k + 1] / (seen[k] * rate)
        # At least the rows sampled, and one row: a lookup asks for a value that is there.
        self.expected = np.maximum(expected, np.maximum(np.arange(len(expected)), 1.0))

    def locate(self, value: Any) -> tuple[int, bool] | None:
        """Where ``value`` falls among the sampled values (its code, or where it would go)
        and whether the sample holds it; None for a value of another kind."""
        try:
            index = bisect.bisect_left(self.known, value)
        except TypeError:
            return None
        return index, index < len(self.known) and self.known[index] == value

    def rows_holding(self, index: int, present: bool) -> float:
        """The table's rows expected to hold the value at ``index`` (see :meth:`locate`)."""
        seen = int(self.counts[index]) if present else 0
        return float(self.expected[min(seen, len(self.expected) - 1)])

    def sampled(self, index: int, present: bool) -> npt.NDArray[np.intp]:
        """The sampled rows holding the value at ``index``."""
        if not present:
            return np.zeros(0, dtype=np.intp)
        return self.by_code[self.cumulative[index] : self.cumulative[index + 1]]


class _Placement:
    """Where a layout puts one column's values: each file's sampled range of codes, its
    density over the column's sampled distribution, and the clumping ``rho``."""

    def __init__(self, values: _Values, layout: SimulatedFiles) -> None:
        self.values = values
        self.files = layout.files
        count = len(layout.rows)
        present = values.codes >= 0
        codes, files = values.codes[present], layout.files[present]
        self.low = np.full(count, len(values.known), dtype=np.int64)
        self.high = np.full(count, -1, dtype=np.int64)
        np.minimum.at(self.low, files, codes)
        np.maximum.at(self.high, files, codes)
        rows = np.bincount(files, minlength=count).astype(np.float64)
        spans = np.zeros(count)
        some = self.high >= self.low
        total = max(1, int(values.cumulative[-1]))
        spans[some] = (
            values.cumulative[self.high[some] + 1] - values.cumulative[self.low[some]]
        ) / total
        self.density = np.where(some, rows / np.maximum(spans, 1 / total), 0.0)
        self.rho = self._together(codes, files)

    def shares(
        self, index: npt.NDArray[np.int64], present: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.float64]:
        """Per value (row) and file: the share of the value's rows the file gets."""
        index, present = index[:, None], present[:, None]
        covers = np.where(
            present,
            (self.low <= index) & (self.high >= index),
            (self.low < index) & (self.high >= index),
        )
        weights = np.where(covers, self.density, 0.0)
        totals = weights.sum(axis=1, keepdims=True)
        shares = np.divide(weights, totals, out=np.zeros_like(weights), where=totals > 0)
        return np.asarray(shares, dtype=np.float64)

    def holds(self, value: Any) -> npt.NDArray[np.float64] | None:
        """Per file: the chance it holds ``value`` in the table; None if it cannot be told."""
        located = self.values.locate(value)
        if located is None:
            return None
        index, present = located
        shares = self.shares(np.array([index]), np.array([present]))[0]
        rows = self.values.rows_holding(index, present)
        sampled = self.values.sampled(index, present)
        clumps = rows / max(1.0, 1 + self.rho * (rows - 1))
        # The files of its sampled rows hold it; the clumps of the rows the sample lacks fall
        # by the shares.
        unseen = clumps * max(0.0, rows - len(sampled)) / rows if rows > 0 else 0.0
        held = 1 - (1 - shares) ** unseen
        held[self.files[sampled]] = 1.0
        return np.asarray(held, dtype=np.float64)

    def _together(self, codes: npt.NDArray[np.int64], files: npt.NDArray[np.intp]) -> float:
        """The excess share of same-value pairs of sampled rows that share a file."""
        count = len(self.density)
        repeated = np.flatnonzero(self.values.counts >= 2)
        limit = max(1, min(_PAIRED_VALUES, _PAIRED_CELLS // max(1, count)))
        if len(repeated) > limit:
            repeated = repeated[np.linspace(0, len(repeated) - 1, limit).astype(np.int64)]
        seen = self.values.counts[repeated].astype(np.float64)
        pairs = seen * (seen - 1) / 2
        if pairs.sum() < _MIN_PAIRS:
            return 0.0
        mine = np.isin(codes, repeated)
        cells = np.unique(codes[mine] * count + files[mine], return_counts=True)[1]
        observed = float((cells * (cells - 1) / 2).sum() / pairs.sum())
        shares = self.shares(repeated, np.ones(len(repeated), dtype=bool))
        independent = float((pairs * (shares**2).sum(axis=1)).sum() / pairs.sum())
        if independent >= 1 - 1e-9:
            return 0.0
        return max(0.0, (observed - independent) / (1 - independent))


class BloomJudge:
    """The workload's lookups on the columns that could carry filters, and the sample's
    values of each, made once; :meth:`choose` judges a layout."""

    def __init__(
        self,
        simulation: Simulation,
        table: TableSize,
        *,
        exclude: Sequence[str] = (),
        fpp: float = DEFAULT_BLOOM_FPP,
    ) -> None:
        self.simulation = simulation
        self.table = table
        self.fpp = fpp
        self.trees = [rewrite_not(f.predicate.tree) for f in simulation.filters]
        # Per distinct filter: the values it asks each column's filters for.
        self.asked = [bloom_lookups(f.predicate) for f in simulation.filters]
        sample = simulation.sample
        self.columns = [
            c
            for c in sample.column_names
            if c not in exclude
            and bloom_filter_type(simulation.types.get(c, ""))
            and any(c in asked for asked in self.asked)
        ]
        self.values = {
            c: _Values(sample.column(c).combine_chunks(), table.rows) for c in self.columns
        }

    def choose(self, layout: SimulatedFiles) -> BloomChoice:
        """The columns whose filters pay on ``layout``, added greedily by :data:`MIN_GAIN` and
        :data:`MAX_SHARE`, and the figures of every column considered."""
        trial = _Trial(self, layout)
        chosen: list[str] = []
        current = layout.scanned()
        figures: list[BloomFigure] = []
        remaining = list(self.columns)
        while remaining:
            tried = {c: trial.scanned(dict.fromkeys([*chosen, c], self.fpp)) for c in remaining}
            judged = {c: trial.figure(c, current, scanned) for c, scanned in tried.items()}
            paying = [c for c in remaining if _pays(judged[c])]
            if not paying:
                figures += [judged[c] for c in remaining]
                break
            best = max(paying, key=lambda c: judged[c].gain)
            chosen.append(best)
            figures.append(dataclasses.replace(judged[best], chosen=True))
            current = tried[best]
            remaining.remove(best)
        blooms = tuple(BloomColumn(c, self.fpp) for c in chosen)
        return BloomChoice(blooms, current, tuple(figures))

    def scanned(
        self, layout: SimulatedFiles, blooms: Sequence[BloomColumn]
    ) -> npt.NDArray[np.float64]:
        """Each distinct filter's fraction of rows scanned on ``layout`` with ``blooms``."""
        return _Trial(self, layout).scanned({b.column: b.fpp for b in blooms})

    def row_groups(self, files: int) -> int:
        """The row groups of each of ``files`` files."""
        return max(1, math.ceil(self.table.bytes / max(1, files) / PARQUET_ROW_GROUP_BYTES))

    def filter_bytes(self, files: int) -> int:
        """One file's filters (one a row group), as a write of ``files`` files sizes them."""
        groups = self.row_groups(files)
        rows = BLOOM_ROWS_SLACK * -(-self.table.rows // (max(1, files) * groups))
        return groups * bloom_filter_bytes(rows, self.fpp)


def _pays(figure: BloomFigure) -> bool:
    return figure.gain >= MIN_GAIN and figure.share <= MAX_SHARE


class _Trial:
    """One layout's figures with filters on some of the judge's columns (placements and each
    value's per-file chances made once)."""

    def __init__(self, judge: BloomJudge, layout: SimulatedFiles) -> None:
        self.judge = judge
        self.layout = layout
        self.placements: dict[str, _Placement] = {}
        self.held: dict[tuple[str, Any], npt.NDArray[np.float64] | None] = {}
        self.file_bytes = max(1, judge.table.bytes // max(1, len(layout.rows)))
        self.groups = judge.row_groups(len(layout.rows))

    def scanned(self, rates: Mapping[str, float]) -> npt.NDArray[np.float64]:
        """Each distinct filter's fraction of rows scanned with filters on the columns of
        ``rates`` (each at its false-positive rate)."""
        rows = self.layout.rows.astype(np.float64)
        out = self.layout.scanned().copy()
        for i, tree in enumerate(self.judge.trees):
            if not any(c in self.judge.asked[i] for c in rates):
                continue
            kept = _kept(tree, lambda node: self._leaf(node, rates))
            if kept is not None:
                out[i] = float((self.layout.kept[i] * kept) @ rows) / rows.sum()
        return out

    def figure(
        self, column: str, before: npt.NDArray[np.float64], after: npt.NDArray[np.float64]
    ) -> BloomFigure:
        """``column``'s figures: the workload's mean before and after, and its filters' cost."""
        simulation, layout = self.judge.simulation, self.layout
        count = len(layout.rows)
        size = self.judge.filter_bytes(count)
        probes = np.array([column in asked for asked in self.judge.asked])
        read = probes * layout.kept.sum(axis=1) / count * (size / self.file_bytes)
        return BloomFigure(
            column=column,
            fpp=self.judge.fpp,
            chosen=False,
            scanned_before=simulation.mean(before),
            scanned_after=simulation.mean(after),
            probe=simulation.mean(read),
            filter_bytes=size,
            file_bytes=self.file_bytes,
        )

    def _leaf(self, node: Predicate, rates: Mapping[str, float]) -> _Kept:
        """Per file: the chance the filters keep it for the leaf ``node``, as the scan asks
        them (:func:`~zorder.skipping.blooms.bloom_lookups`)."""
        asked = bloom_lookups(Bound(node, self.judge.simulation.types))
        if not asked:  # asks nothing (or is never TRUE: the statistics drop the file)
            return None
        ((column, values),) = asked.items()
        if column not in rates or column not in self.judge.values:
            return None
        excluded = np.ones(len(self.layout.rows))
        for value in values:
            held = self._holds(column, value)
            if held is None:
                return None
            excluded *= (1 - held) * (1 - rates[column]) ** self.groups
        return 1 - excluded

    def _holds(self, column: str, value: Any) -> npt.NDArray[np.float64] | None:
        key = (column, value)
        if key not in self.held:
            placement = self.placements.get(column)
            if placement is None:
                placement = _Placement(self.judge.values[column], self.layout)
                self.placements[column] = placement
            self.held[key] = placement.holds(value)
        return self.held[key]


def _kept(tree: Predicate, leaf: Callable[[Predicate], _Kept]) -> _Kept:
    """Per file: the chance the filters keep it for ``tree`` (None: they keep every file),
    AND and OR combining their sides' as independent events."""
    if isinstance(tree, And | Or):
        left, right = _kept(tree.left, leaf), _kept(tree.right, leaf)
        if isinstance(tree, And):
            return right if left is None else left if right is None else left * right
        return None if left is None or right is None else 1 - (1 - left) * (1 - right)
    return leaf(tree)


def _kib(size: int) -> str:
    return f"{size / 1024:,.0f} KiB" if size >= 1024 else f"{size} B"
