"""The advisor on samples: workloads read as users write them, simulation sound, choices right."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from zorder.advice.advisor import advise_sample
from zorder.advice.blooms import BloomJudge, TableSize
from zorder.advice.simulate import Simulation, file_statistics
from zorder.advice.tree import grow_cut_tree
from zorder.advice.workload import read_workload
from zorder.errors import FilterParseError, InvalidArgumentError
from zorder.skipping import might_match_mask
from zorder.skipping.rows import exact_predicate, row_mask
from zorder.skipping.sql import parse_unfolded

COLUMNS = ["day", "key", "kind"]
TYPES = {"day": "date", "key": "bigint", "kind": "string"}
DAY0 = dt.date(2024, 1, 1)


def table(rows: int = 20_000, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table(
        {
            "day": pa.array([DAY0 + dt.timedelta(int(d)) for d in rng.integers(0, 366, rows)]),
            "key": pa.array(rng.integers(0, 1_000_000, rows), pa.int64()),
            "kind": pa.array(rng.choice(["a", "b", "c", "d"], rows).tolist()),
        }
    )


def workload(seed: int, count: int = 60) -> list[str]:
    """Monthly ranges, key lookups and one kind: the three shapes of a real workload."""
    rng = np.random.default_rng(seed)
    filters = []
    for i in range(count):
        if i % 3 == 0:
            month = int(rng.integers(1, 12))
            filters.append(
                f"day >= date '2024-{month:02d}-01' AND day < date '2024-{month + 1:02d}-01'"
            )
        elif i % 3 == 1:
            filters.append(f"key = {int(rng.integers(0, 1_000_000))}")
        else:
            filters.append("kind = 'c'")
    return filters


def test_queries_give_the_filters_that_reach_the_table(tmp_path: Path) -> None:
    names = ["l_orderkey", "l_shipdate", "l_quantity", "l_partkey"]
    read = read_workload(
        [
            "select sum(l_quantity) from lineitem l join orders o on l.l_orderkey = o.o_orderkey "
            "where o.o_orderdate > date '1995-01-01' and l.l_shipdate > date '1995-03-15' "
            "and l_quantity < (select avg(l_quantity) from lineitem where l_partkey = 5)",
            "l_quantity between 1 and 10",
            "select * from part where p_size = 5",
            "select count(*) from lineitem where l_orderkey = o_orderkey",
        ],
        names,
    )
    assert read.texts == (
        "(l_shipdate > CAST('1995-03-15' AS DATE))",
        "(l_partkey = 5)",
        "l_quantity between 1 and 10",
        "TRUE",
    )
    assert (read.statements, read.left_out) == (4, 1)
    path = tmp_path / "w.sql"
    path.write_text("select * from lineitem where l_partkey = 7;\n-- a comment\nl_quantity > 3;")
    assert read_workload(str(path), names).texts == ("(l_partkey = 7)", "l_quantity > 3")
    with pytest.raises(InvalidArgumentError, match="wrap one filter in a list"):
        read_workload("l_quantity > 3", names)
    with pytest.raises(InvalidArgumentError, match="does not exist"):
        read_workload(str(tmp_path / "missing.sql"), names)
    with pytest.raises(FilterParseError, match="does not parse"):
        read_workload(["select from where ("], names)
    with pytest.raises(InvalidArgumentError, match="no filter on the table's columns"):
        read_workload(["select * from part where p_size = 5"], names)


def test_the_simulation_never_drops_a_file_holding_a_match() -> None:
    sample = table(3_000)
    filters = [*workload(1, 30), "kind IN ('b', 'x') OR day = date '2024-07-04'", "key IS NULL"]
    simulation = Simulation(sample, TYPES, filters)
    files = np.random.default_rng(2).integers(0, 25, sample.num_rows)
    order = np.argsort(sample.column("day").to_numpy(), kind="stable")
    files[order] = np.arange(sample.num_rows) * 25 // sample.num_rows  # sorted by day
    stats, rows = file_statistics(sample, files)
    assert rows.sum() == sample.num_rows
    present = np.unique(files)
    for planned in simulation.filters:
        kept = might_match_mask(planned.predicate, stats, TYPES)
        matches = row_mask(exact_predicate(parse_unfolded(planned.text), TYPES), sample, TYPES)
        matched = np.asarray(matches.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)
        for position, file in enumerate(present):
            if matched[files == file].any():
                assert kept[position], (planned.text, file)
    scanned = simulation.scanned(files)
    assert ((scanned >= 0) & (scanned <= 1)).all()


def test_cuts_fall_on_the_workload_boundaries() -> None:
    sample = table(8_000)
    simulation = Simulation(sample, TYPES, ["day < date '2024-07-01'", "day >= date '2024-07-01'"])
    grown = grow_cut_tree(simulation, COLUMNS, leaves=2, min_rows=100)
    assert grown is not None
    tree, columns = grown
    assert columns == ("day",)
    assert tree.value[0] == dt.date(2024, 7, 1)


def test_the_advice_beats_equal_weights_on_a_draw_it_did_not_see() -> None:
    sample = table()
    advice = advise_sample(sample, TYPES, workload(1), num_files=24)
    names = {c.name for c in advice.candidates}
    assert {"day alone", "zorder, top 2", "workload cuts"} <= names
    assert advice.expected_scanned == min(c.expected_scanned for c in advice.candidates)
    assert "<- advised" in advice.summary()
    judge = Simulation(sample, TYPES, workload(2))
    from zorder.advice.advisor import _Search

    search = _Search(judge, 24)
    equal = next(c for c in advice.candidates if c.name == "zorder, top 3").spec
    blooms = BloomJudge(judge, TableSize(sample.num_rows, sample.nbytes))
    assert search.with_blooms(advice.spec, blooms) < 0.85 * search.with_blooms(equal, blooms)


def test_partitions_are_laid_out_on_their_own() -> None:
    sample = table(6_000).append_column(
        "region", pa.array(np.where(np.arange(6_000) % 3 == 0, "eu", "us").tolist())
    )
    types = {**TYPES, "region": "string"}
    advice = advise_sample(
        sample,
        types,
        [*workload(3, 30), "region = 'eu'"],
        num_files=12,
        partition_columns=["region"],
    )
    assert "region" not in advice.spec.columns
    assert all("region" not in c.spec.columns for c in advice.candidates)


def test_bad_requests_are_refused_before_any_work() -> None:
    sample = table(500)
    with pytest.raises(InvalidArgumentError, match="num_files must be >= 1"):
        advise_sample(sample, TYPES, ["key = 1"], num_files=0)
    with pytest.raises(InvalidArgumentError, match="nothing to cluster for"):
        advise_sample(sample, TYPES, ["TRUE"], num_files=4)
