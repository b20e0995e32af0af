"""Bloom filters in the advice: the model of the files a lookup keeps, against tables laid out.

The model (:mod:`zorder.advice.blooms`) sees a sample and its simulated
files; the reference lays the whole table out by the same file plan and
counts, for each looked-up value, the files that really hold it.
"""

from __future__ import annotations

import datetime as dt
import warnings
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zorder.advice.advisor import BLOOM_RULE, advise_sample
from zorder.advice.blooms import MAX_SHARE, BloomJudge, TableSize, _Placement, _Values
from zorder.advice.simulate import SimulatedFiles, Simulation
from zorder.curves.kinds import BloomColumn, ClusteringSpec, bloom_filter_bytes
from zorder.curves.plan import fit_file_plan, rank_bits, rank_sample

TYPES = {"order": "bigint", "day": "int", "part": "bigint", "kind": "string", "score": "double"}
FILES = 24


def orders(count: int = 30_000, seed: int = 0) -> pa.Table:
    """Lineitem-like rows: 1 to 7 a sparse order key, shipped within four months of the
    order's date (so an order's rows lie close in ``day``), about 30 a part."""
    rng = np.random.default_rng(seed)
    lines = rng.integers(1, 8, count)
    order = np.repeat(np.arange(count, dtype=np.int64) * 4 + 1, lines)
    day = np.repeat(rng.integers(0, 2_000, count), lines) + rng.integers(1, 122, len(order))
    rows = len(order)
    return pa.table(
        {
            "order": pa.array(order, pa.int64()),
            "day": pa.array(day.astype(np.int32), pa.int32()),
            "part": pa.array(rng.integers(1, rows // 30, rows), pa.int64()),
            "kind": pa.array(rng.choice(["a", "b", "c"], rows).tolist()),
            "score": pa.array(rng.random(rows)),
        }
    )


def sampled(table: pa.Table, rows: int, seed: int = 1) -> pa.Table:
    keep = np.sort(np.random.default_rng(seed).choice(table.num_rows, rows, replace=False))
    return table.take(pa.array(keep))


def laid_out(spec: ClusteringSpec, sample: pa.Table, *tables: pa.Table) -> list[np.ndarray]:
    """Each table's rows' files under the plan a write fits on ``sample``."""
    bits = rank_bits(len(spec.columns))
    arrays = [sample.column(c).combine_chunks() for c in spec.columns]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        plan = fit_file_plan(
            arrays, curve="zorder", bits=bits, count=FILES, ranked=rank_sample(arrays, bits=bits)
        )
    return [plan.place([t.column(c).combine_chunks() for c in spec.columns])[0] for t in tables]


def placement(
    sample: pa.Table, files: np.ndarray, rows: int, column: str
) -> tuple[_Placement, SimulatedFiles]:
    simulation = Simulation(sample, TYPES, [f"{column} = 1"])
    layout = simulation.simulated(files)
    return _Placement(_Values(sample.column(column).combine_chunks(), rows), layout), layout


@pytest.mark.parametrize(
    ("by", "column", "tolerance"),
    [
        ("day", "order", 0.2),  # unclustered, but an order's rows ship close together: clumps
        ("order", "order", 0.1),  # clustered: one file (two at a boundary)
        ("day", "part", 0.1),  # ~30 rows a part, independent of the layout: spread
        ("part", "part", 0.1),
        ("kind", "order", 0.2),  # within a kind, rows keep the input's order: by order
    ],
)
def test_the_files_holding_a_looked_up_value_match_a_table_laid_out(
    by: str, column: str, tolerance: float
) -> None:
    table = orders()
    sample = sampled(table, 12_000)
    spec = ClusteringSpec((by,), "zorder", "rank")
    files, placed = laid_out(spec, sample, table, sample)
    model, _ = placement(sample, placed, table.num_rows, column)
    values = table.column(column).to_numpy()
    drawn = np.random.default_rng(2).choice(np.unique(values), 300, replace=False)
    if column == "order":  # most looked-up orders are not in the sample
        assert len(set(drawn.tolist()) - set(sample.column(column).to_pylist())) > 200
    exact, expected = [], []
    for value in drawn.tolist():
        exact.append(len(np.unique(files[values == value])))
        held = model.holds(value)
        assert held is not None
        assert ((held >= 0) & (held <= 1)).all()
        expected.append(float(held.sum()))
    assert np.mean(expected) == pytest.approx(np.mean(exact), rel=tolerance)
    if by == column:
        assert np.mean(exact) < 1.2


def test_rows_holding_a_value_by_its_sampled_count() -> None:
    rng = np.random.default_rng(3)
    five = pa.array(np.repeat(np.arange(20_000), 5)[rng.permutation(100_000)][:10_000])
    counted = _Values(five, 100_000)
    assert counted.rows_holding(0, False) == pytest.approx(5, rel=0.15)  # absent from the sample
    once = int(np.flatnonzero(counted.counts == 1)[0])
    assert counted.rows_holding(once, True) == pytest.approx(5, rel=0.15)  # not 1 / 10%
    unique = _Values(pa.array(rng.permutation(100_000)[:10_000]), 100_000)
    assert unique.rows_holding(0, False) == 1.0  # an id: one row, never less
    assert _Values(pa.array([1, 1, 2]), 3).rows_holding(0, False) == 0.0  # the whole table


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    files=st.integers(1, 9),
    fpp=st.sampled_from([0.5, 0.01, 0.001]),
)
def test_with_the_sample_as_the_table_the_model_is_the_exact_expectation(
    seed: int, files: int, fpp: float
) -> None:
    """Every file's holdings are known, so each filter's expected rows scanned is exact: a
    file min/max keeps is scanned if it holds a value, else with probability fpp per value."""
    rng = np.random.default_rng(seed)
    rows = 300
    table = pa.table(
        {
            "order": pa.array(rng.integers(0, 60, rows), pa.int64()),
            "part": pa.array(rng.integers(0, 8, rows), pa.int64()),
            "day": pa.array(rng.integers(0, 50, rows).astype(np.int32), pa.int32()),
        }
    )
    placed = rng.integers(0, files, rows)
    looked = [int(v) for v in rng.integers(-5, 65, 4)]
    filters = [
        f"order = {looked[0]}",
        f"order IN ({looked[1]}, {looked[2]})",
        f"order = {looked[0]} OR order <=> {looked[3]}",
        f"order = {looked[1]} AND part = 3",
        f"(order = {looked[2]} OR day > 40) AND day < 45",
        f"NOT (order != {looked[3]})",
        f"order != {looked[0]}",
    ]
    simulation = Simulation(table, TYPES, filters)
    layout = simulation.simulated(placed)
    judge = BloomJudge(simulation, TableSize(rows, 10**6))
    both = judge.scanned(layout, [BloomColumn("order", fpp), BloomColumn("part", fpp)])
    only = judge.scanned(layout, [BloomColumn("order", fpp)])
    values = {c: table.column(c).to_numpy() for c in ("order", "part")}

    def kept(column: str, *wanted: int) -> npt.NDArray[np.float64]:
        """Per file: the chance it is kept for ``column IN wanted`` (exact holdings; a value
        listed twice is one probe, whose answer is the same)."""
        excluded = np.ones(len(layout.rows))
        for value in set(wanted):
            holds = np.array(
                [
                    (values[column][layout.files == f] == value).any()
                    for f in range(len(layout.rows))
                ]
            )
            excluded *= np.where(holds, 0.0, 1 - fpp)
        return 1 - excluded

    ones = np.ones(len(layout.rows))
    a, b, c, d = looked
    by_filter = [
        kept("order", a),
        kept("order", b, c),
        1 - (1 - kept("order", a)) * (1 - kept("order", d)),
        kept("order", b) * kept("part", 3),
        ones,  # the OR's other side asks nothing
        kept("order", d),
        ones,
    ]
    weights = layout.rows.astype(np.float64)
    for i, chance in enumerate(by_filter):
        exact = float((layout.kept[i] * chance) @ weights / weights.sum())
        assert both[i] == pytest.approx(exact, abs=1e-12), filters[i]
    assert only[3] == pytest.approx(
        float((layout.kept[3] * kept("order", b)) @ weights / weights.sum()), abs=1e-12
    )
    assert (both <= layout.scanned() + 1e-12).all()


def lookups(table: pa.Table, count: int, seed: int) -> list[str]:
    """Order lookups, month-long ranges of ``day`` and one kind, in turn."""
    rng = np.random.default_rng(seed)
    keys = table.column("order").to_numpy()
    filters: list[str] = []
    for i in range(count):
        if i % 3 == 0:
            filters.append(f"order = {int(rng.choice(keys))}")
        elif i % 3 == 1:
            first = int(rng.integers(0, 2_000))
            filters.append(f"day BETWEEN {first} AND {first + 30}")
        else:
            filters.append(f"kind = 'b' AND score = {float(rng.random())}")
    return filters


def test_the_advice_puts_filters_on_the_ids_looked_up_and_says_why() -> None:
    table = orders()
    sample = sampled(table, 12_000)
    size = TableSize(table.num_rows, 40 * table.num_rows)
    advice = advise_sample(sample, TYPES, lookups(table, 90, 4), num_files=FILES, table=size)
    assert advice.spec.bloom_filters == (BloomColumn("order"),)
    assert advice.scanned_without_blooms is not None
    assert advice.expected_scanned < advice.scanned_without_blooms - 0.05
    assert advice.expected_scanned == min(c.expected_scanned for c in advice.candidates)
    figures = {b.column: b for b in advice.blooms}
    assert set(figures) == {"order", "kind"}  # a double is never hashed for Spark's equality
    assert figures["order"].chosen
    assert advice.blooms[0].column == "order"
    assert not figures["kind"].chosen  # three kinds: every file holds each
    assert figures["order"].share <= MAX_SHARE
    sorted_by_order = next(c for c in advice.candidates if c.name == "order alone")
    assert not sorted_by_order.spec.bloom_filters  # its lookups keep a file or two already
    text = advice.summary()
    assert BLOOM_RULE in text
    assert "order: " in text
    assert ": chosen" in text
    assert "bloom filters on order <- advised" in text

    # Files too small for their filters: none is chosen, and the figures say why.
    small = advise_sample(
        sample,
        TYPES,
        lookups(table, 90, 4),
        num_files=FILES,
        table=TableSize(table.num_rows, 10**5),
    )
    assert not small.spec.bloom_filters
    assert any("over 10% of a file" in b.describe() for b in small.blooms)
    assert small.scanned_without_blooms == small.expected_scanned


def test_the_advised_layout_with_its_filters_holds_on_a_draw_it_did_not_see() -> None:
    """Judged on the whole table laid out by the advised plan, lookups of other keys."""
    table = orders(seed=5)
    sample = sampled(table, 12_000, seed=6)
    size = TableSize(table.num_rows, 40 * table.num_rows)
    advice = advise_sample(sample, TYPES, lookups(table, 90, 7), num_files=FILES, table=size)
    spec = advice.spec
    assert spec.bloom_filters
    unseen = [f for f in lookups(table, 90, 8) if f.startswith("order")]
    files, placed = _advised_files(advice.spec, sample, table)
    simulation = Simulation(sample, TYPES, unseen)
    judge = BloomJudge(simulation, size)
    modelled = simulation.mean(judge.scanned(simulation.simulated(placed), spec.bloom_filters))
    keys = table.column("order").to_numpy()
    per_file = np.bincount(files, minlength=FILES)
    exact = []
    for text in unseen:
        value = int(text.split("=")[1])
        holds = np.unique(files[keys == value])
        kept = _straddling(files, keys, value)
        missed = np.setdiff1d(kept, holds)
        exact.append((per_file[holds].sum() + 0.01 * per_file[missed].sum()) / table.num_rows)
    assert modelled == pytest.approx(float(np.mean(exact)), abs=0.03)
    assert float(np.mean(exact)) < 0.15


def _advised_files(
    spec: ClusteringSpec, sample: pa.Table, table: pa.Table
) -> tuple[np.ndarray, np.ndarray]:
    from zorder.advice.advisor import _Search

    search = _Search(Simulation(sample, TYPES, ["order = 1"]), FILES)
    placed = search._layout(spec).files
    bits = rank_bits(len(spec.columns))
    arrays = [sample.column(c).combine_chunks() for c in spec.columns]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        plan = fit_file_plan(
            arrays,
            curve="zorder",
            bits=bits,
            count=FILES,
            weights=spec.weights,
            cuts=spec.cuts,
            ranked=rank_sample(arrays, bits=bits),
        )
    files = plan.place([table.column(c).combine_chunks() for c in spec.columns])[0]
    return np.unique(files, return_inverse=True)[1], placed


def _straddling(files: np.ndarray, keys: np.ndarray, value: Any) -> np.ndarray:
    """The files whose order bounds straddle ``value``."""
    count = int(files.max()) + 1
    low = np.full(count, np.iinfo(np.int64).max)
    high = np.full(count, np.iinfo(np.int64).min)
    np.minimum.at(low, files, keys)
    np.maximum.at(high, files, keys)
    return np.flatnonzero((low <= value) & (high >= value))


def test_partition_columns_and_other_types_get_no_filters() -> None:
    sample = orders(3_000).append_column(
        "shipped", pa.array([dt.date(2024, 1, 1 + i % 28) for i in range(orders(3_000).num_rows)])
    )
    types = {**TYPES, "shipped": "date"}
    simulation = Simulation(
        sample, types, ["kind = 'a'", "score = 0.5", "shipped = date '2024-01-03'"]
    )
    judge = BloomJudge(simulation, TableSize(sample.num_rows, 10**8), exclude=["kind"])
    assert judge.columns == ["shipped"]


def test_files_of_several_row_groups_carry_a_filter_each() -> None:
    """Files of 300 MiB: three row groups, each with its filter sized for its own rows, and
    each a chance to miss a value the file lacks."""
    table = pa.table({"order": pa.array(np.arange(0, 200, 2), pa.int64())})
    simulation = Simulation(table, TYPES, ["order = 51", "order = 50"])
    layout = simulation.simulated(np.arange(table.num_rows) % 2)  # both files span every key
    judge = BloomJudge(simulation, TableSize(table.num_rows, 2 * 300 * 2**20))
    assert judge.row_groups(2) == 3
    assert judge.filter_bytes(2) == 3 * bloom_filter_bytes(2 * 17, 0.01)
    absent, present = judge.scanned(layout, [BloomColumn("order", 0.01)])
    assert absent == pytest.approx(1 - 0.99**3)
    assert present == pytest.approx(0.5 + 0.5 * (1 - 0.99**3))
