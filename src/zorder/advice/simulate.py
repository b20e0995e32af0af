"""A layout judged on a sample: the rows each of the workload's filters would scan.

Each sampled row is placed in its file by the same file plan a write fits
(:mod:`zorder.curves.plan`); each file's statistics are the minimum, maximum
and null count of its sampled rows, strings cut as Delta's statistics cut
them; each filter is planned as :func:`zorder.explain` plans it (clock
pinned, constants folded, bound with Spark's coercion) and evaluated against
those statistics by the same evaluator. A file's rows count in full when the
filter might match it.

A sample's files are narrower than the table's (fewer rows reach each
file's extremes), so the figures lean a little to the optimistic side,
equally for every layout compared.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from zorder.advice.workload import parsed_filters
from zorder.skipping import Bound, bind, might_match_mask
from zorder.skipping.sql import ParsedFilter
from zorder.stats import STRING_PREFIX_LENGTH
from zorder.stats.delta import truncate_max_string, truncate_min_string

__all__ = ["PlannedFilter", "SimulatedFiles", "Simulation", "file_statistics"]


@dataclass(frozen=True)
class PlannedFilter:
    """One distinct filter of the workload: its text, bound predicate and how often it comes."""

    text: str
    predicate: Bound
    count: int


@dataclass(frozen=True)
class SimulatedFiles:
    """A layout's files on the sample: each sampled row's file, each file's sampled rows, and
    the files each distinct filter's statistics keep."""

    files: npt.NDArray[np.intp]  # per sampled row: its file, 0 .. len(rows) - 1
    rows: npt.NDArray[np.int64]  # per file (the non-empty ones, in file order)
    kept: npt.NDArray[np.bool_]  # distinct filters x files

    def scanned(self) -> npt.NDArray[np.float64]:
        """Fraction of the sample each distinct filter scans."""
        return np.asarray(self.kept @ self.rows, dtype=np.float64) / float(self.rows.sum())


class Simulation:
    """The workload's filters, planned once, against a sample of the table."""

    def __init__(
        self,
        sample: pa.Table,
        types: Mapping[str, str],
        filters: Sequence[ParsedFilter | str],
        *,
        time_zone: str = "UTC",
    ) -> None:
        self.sample = sample
        self.types = dict(types)
        texts = [f for f in filters if isinstance(f, str)]
        given = iter(parsed_filters(texts, types, time_zone))  # text: parsed here, once
        counts: dict[str, tuple[ParsedFilter, int]] = {}
        for one in filters:
            parsed = next(given) if isinstance(one, str) else one
            held, count = counts.get(parsed.text, (parsed, 0))
            counts[parsed.text] = (held, count + 1)
        planned = []
        for text, (parsed, count) in counts.items():
            bound = bind(parsed.predicate(), self.types, time_zone=time_zone)
            planned.append(PlannedFilter(text, bound, count))
        self.filters: tuple[PlannedFilter, ...] = tuple(planned)
        self.weights = np.array([f.count for f in planned], dtype=np.float64)
        self.weights /= self.weights.sum()
        self.columns = [c for c in sample.column_names if c in self.types]

    def scanned(self, files: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        """Fraction of the sample each distinct filter scans when rows lie in ``files``."""
        return self.simulated(files).scanned()

    def simulated(self, files: npt.NDArray[np.int64]) -> SimulatedFiles:
        """The files rows lying in ``files`` make, and what each distinct filter keeps."""
        stats, rows = file_statistics(self.sample.select(self.columns), files)
        kept = np.empty((len(self.filters), len(rows)), dtype=bool)
        for i, planned in enumerate(self.filters):
            kept[i] = might_match_mask(
                planned.predicate, stats, self.types, nan_free_bounds=lambda: _all(len(rows))
            )
        positions = np.unique(np.asarray(files), return_inverse=True)[1]
        return SimulatedFiles(positions.astype(np.intp), rows, kept)

    def reweighted(self, factors: npt.NDArray[np.float64]) -> Simulation:
        """This simulation with each distinct filter's weight multiplied by its factor."""
        weights = self.weights * factors
        other = copy.copy(self)
        other.weights = weights / weights.sum() if weights.sum() > 0 else self.weights
        return other

    def mean(self, scanned: npt.NDArray[np.float64]) -> float:
        """The workload's mean of per-filter figures, each filter as often as it comes."""
        return float(np.dot(self.weights, scanned))


def _all(n: int) -> npt.NDArray[np.bool_]:
    return np.ones(n, dtype=bool)


def file_statistics(
    sample: pa.Table, files: npt.NDArray[np.int64]
) -> tuple[pa.Table, npt.NDArray[np.int64]]:
    """Per non-empty file in file order, Delta-style statistics of the sampled rows placed in
    it (the add-actions table the evaluator reads), and each file's row count."""
    keyed = sample.append_column("__file", pa.array(np.asarray(files, dtype=np.int64)))
    names = sample.column_names
    # A file holding NaN has no upper bound on that column (zorder writes none; Arrow's max
    # would leave NaN out): mark such files, and drop their maxima below.
    floats = [n for n in names if pa.types.is_floating(sample.schema.field(n).type)]
    for name in floats:
        keyed = keyed.append_column(
            f"__nan_{name}", pc.fill_null(pc.is_nan(sample.column(name)), False)
        )
    only_null = pc.CountOptions(mode="only_null")
    aggregates: list[tuple[str, str] | tuple[str, str, pc.FunctionOptions]] = []
    aggregates += [(name, "min") for name in names]
    aggregates += [(name, "max") for name in names]
    aggregates += [(name, "count", only_null) for name in names]
    aggregates += [(f"__nan_{name}", "any") for name in floats]
    grouped = keyed.group_by("__file").aggregate([*aggregates, ("__file", "count")])
    grouped = grouped.sort_by("__file")  # groups come in order of first sight
    rows = np.asarray(grouped.column("__file_count").to_numpy(), dtype=np.int64)
    minima, maxima, nulls = [], [], []
    for name in sample.column_names:
        low, high = grouped.column(f"{name}_min"), grouped.column(f"{name}_max")
        if pa.types.is_string(low.type) or pa.types.is_large_string(low.type):
            low, high = _cut_strings(low, high)
        if name in floats:
            holds_nan = grouped.column(f"__nan_{name}_any")
            high = pc.if_else(holds_nan, pa.scalar(None, high.type), high)
        minima.append(low.combine_chunks())
        maxima.append(high.combine_chunks())
        nulls.append(grouped.column(f"{name}_count").combine_chunks().cast(pa.int64()))
    stats = pa.table(
        {
            "num_records": pa.array(rows, pa.int64()),
            "min": pa.StructArray.from_arrays(minima, names=names),
            "max": pa.StructArray.from_arrays(maxima, names=names),
            "null_count": pa.StructArray.from_arrays(nulls, names=names),
        }
    )
    return stats, rows


def _cut_strings(
    low: pa.ChunkedArray, high: pa.ChunkedArray
) -> tuple[pa.ChunkedArray, pa.ChunkedArray]:
    """String bounds cut as Delta's statistics cut them (a prefix below, a successor above)."""
    lows = [None if v is None else truncate_min_string(v) for v in low.to_pylist()]
    highs = [
        None if v is None else (v if len(v) <= STRING_PREFIX_LENGTH else truncate_max_string(v))
        for v in high.to_pylist()
    ]
    return pa.chunked_array([pa.array(lows, low.type)]), pa.chunked_array(
        [pa.array(highs, high.type)]
    )
