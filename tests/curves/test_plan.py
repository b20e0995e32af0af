"""The file plan on Arrow arrays: keys, files and packed longs equal the slow references."""

from __future__ import annotations

import datetime as dt
import decimal

import numpy as np
import pyarrow as pa
import pytest

from zorder.curves import encoding_for, hilbert_index, interleave_bits
from zorder.curves.cells import FileCells, reference_cell, reference_range
from zorder.curves.kinds import SpaceFillingCurve
from zorder.curves.plan import cell_key_packing, fit_file_plan, rank_bits
from zorder.curves.ranks import reference_bucket
from zorder.errors import InvalidArgumentError

ROWS = 300


def arrays(seed: int) -> dict[str, tuple[pa.Array, str]]:
    """Columns of several Spark types, with NULLs (and NaN in the double)."""
    rng = np.random.default_rng(seed)
    gone = rng.random(ROWS) < 0.05

    def with_nulls(values: list[object]) -> list[object]:
        return [None if g else v for v, g in zip(values, gone, strict=True)]

    doubles = rng.normal(size=ROWS)
    doubles[rng.random(ROWS) < 0.05] = np.nan
    return {
        "i": (pa.array(with_nulls(rng.integers(-50, 50, ROWS).tolist()), pa.int64()), "bigint"),
        "f": (pa.array(with_nulls(doubles.tolist()), pa.float64()), "double"),
        "dec": (
            pa.array(
                with_nulls(
                    [decimal.Decimal(int(v)).scaleb(-2) for v in rng.integers(0, 10**6, ROWS)]
                ),
                pa.decimal128(12, 2),
            ),
            "decimal(12,2)",
        ),
        "d": (
            pa.array(
                with_nulls(
                    [dt.date(2020, 1, 1) + dt.timedelta(int(v)) for v in rng.integers(0, 900, ROWS)]
                )
            ),
            "date",
        ),
        "s": (
            pa.array(with_nulls([f"user-{v:05d}" for v in rng.integers(0, 3000, ROWS)])),
            "string",
        ),
        "bin": (pa.array(with_nulls([bytes([v % 7, v % 5]) for v in range(ROWS)])), "binary"),
    }


@pytest.mark.parametrize("names", [["i", "f"], ["dec", "d", "s"], ["bin", "i", "f", "s"]])
@pytest.mark.parametrize("curve", ["zorder", "hilbert"])
@pytest.mark.parametrize("count", [1, 7, 40])
def test_the_plan_places_every_row_as_the_references_do(
    names: list[str], curve: SpaceFillingCurve, count: int
) -> None:
    columns = arrays(3)
    data = [columns[n][0] for n in names]
    bits = rank_bits(len(names))
    plan = fit_file_plan(data, curve=curve, bits=bits, count=count)
    files, keys = plan.place(data)
    packed = plan.packed(data)
    packing = cell_key_packing(len(names), bits, plan.count)
    combine = interleave_bits if curve == "zorder" else hilbert_index
    encodings = [encoding_for(columns[n][1]) for n in names]
    bounds = [b.boundaries.to_pylist() for b in plan.buckets]
    rows = list(zip(*(a.to_pylist() for a in data), strict=True))
    for index in range(0, ROWS, 7):
        ids = [
            int(b.ids[reference_bucket(value, bound, encoding)])
            for value, b, bound, encoding in zip(
                rows[index], plan.buckets, bounds, encodings, strict=True
            )
        ]
        key = combine(ids, bits)
        if isinstance(plan.files, FileCells):
            file = reference_cell(plan.files, ids)
        else:
            file = reference_range(plan.files, ids, key)
        assert (int(files[index]), int(keys[index])) == (file, key)
        assert int(packed[index]) == file << packing.cell_shift | key >> packing.dropped_bits
    assert set(files.tolist()) == set(range(plan.count))
    assert plan.count <= count


@pytest.mark.parametrize("curve", ["zorder", "hilbert"])
def test_keys_order_a_grid_quadrant_by_quadrant(curve: SpaceFillingCurve) -> None:
    # An 8 x 8 grid: along either curve the first quarter of the keys is one
    # 4 x 4 quadrant, and within it the first quarter is one 2 x 2 cell.
    x = pa.array([i % 8 for i in range(64)], pa.int64())
    y = pa.array([i // 8 for i in range(64)], pa.int64())
    plan = fit_file_plan([x, y], curve=curve, bits=4, count=1)
    _, keys = plan.place([x, y])
    order = np.argsort(keys, kind="stable")
    assert len(set(keys.tolist())) == 64
    xs, ys = x.to_numpy()[order], y.to_numpy()[order]
    for size, span in ((16, 4), (4, 2)):
        for start in range(0, 64, size):
            assert xs[start : start + size].max() - xs[start : start + size].min() == span - 1
            assert ys[start : start + size].max() - ys[start : start + size].min() == span - 1


def test_hilbert_takes_neither_weights_nor_cuts() -> None:
    x = pa.array(range(10), pa.int64())
    with pytest.raises(InvalidArgumentError, match="use curve='zorder'"):
        fit_file_plan([x, x], curve="hilbert", bits=10, count=2, weights=[1.0, 2.0])


def test_cell_key_packing_drops_key_bits_only_beyond_63() -> None:
    assert cell_key_packing(4, 10, 100) == cell_key_packing(4, 10, 1)
    assert cell_key_packing(4, 10, 100).cell_shift == 40
    assert cell_key_packing(6, 10, 8).dropped_bits == 0
    assert cell_key_packing(6, 10, 9).dropped_bits == 1
    with pytest.raises(ValueError, match="cell_count must be >= 1, got 0"):
        cell_key_packing(2, 10, 0)
