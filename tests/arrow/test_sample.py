"""The in-process sample of an optimize's files: uniform, without replacement, exact in size."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from deltalake import write_deltalake

from zorder.arrow.sample import (
    IN_PROCESS_SAMPLE_BYTES,
    IN_PROCESS_SAMPLE_FILES,
    IN_PROCESS_SAMPLE_ROWS,
    sample_files,
    samples_in_process,
)
from zorder.table import Storage, load_snapshot
from zorder.table.delta.snapshot import TableSnapshot

FILE_ROWS = (100, 300, 600)


def three_files(path: Path) -> TableSnapshot:
    """One table, three appends of FILE_ROWS rows with ids counting up."""
    start = 0
    for rows in FILE_ROWS:
        ids = np.arange(start, start + rows)
        write_deltalake(
            str(path), pa.table({"id": ids, "s": [f"v{i}" for i in ids]}), mode="append"
        )
        start += rows
    return load_snapshot(Storage.of(str(path)))


def test_a_sample_has_its_size_and_no_row_twice(tmp_path: Path) -> None:
    snapshot = three_files(tmp_path / "t")
    (sample,) = sample_files(snapshot, [snapshot.files], ["id", "s"], [250], seed=3)
    ids = sample.column("id").to_pylist()
    assert len(ids) == 250
    assert len(set(ids)) == 250
    assert set(ids) <= set(range(sum(FILE_ROWS)))
    assert sample.column("s").to_pylist() == [f"v{i}" for i in ids]  # the rows stay whole
    again = sample_files(snapshot, [snapshot.files], ["id", "s"], [250], seed=3)[0]
    assert again.equals(sample)  # one seed, one sample
    other = sample_files(snapshot, [snapshot.files], ["id", "s"], [250], seed=4)[0]
    assert not other.equals(sample)


def test_a_sample_larger_than_the_rows_is_every_row(tmp_path: Path) -> None:
    snapshot = three_files(tmp_path / "t")
    (sample,) = sample_files(snapshot, [snapshot.files], ["id"], [10**6], seed=0)
    assert sorted(sample.column("id").to_pylist()) == list(range(sum(FILE_ROWS)))


def test_every_row_is_as_likely_to_be_drawn(tmp_path: Path) -> None:
    """Over many seeds, each file gives its share and each row is drawn about as often
    as any other (a sample of 10%: binomial counts, bounds at over 4 standard deviations)."""
    snapshot = three_files(tmp_path / "t")
    draws = 400
    per_row: Counter[int] = Counter()
    per_file = np.zeros(len(FILE_ROWS))
    bounds = np.cumsum((0, *FILE_ROWS))
    for seed in range(draws):
        (sample,) = sample_files(snapshot, [snapshot.files], ["id"], [100], seed=seed)
        ids = np.array(sample.column("id").to_pylist())
        per_row.update(ids.tolist())
        per_file += np.histogram(ids, bins=bounds)[0]
    expected = np.array(FILE_ROWS) / sum(FILE_ROWS) * 100
    assert np.abs(per_file / draws - expected).max() < 1.0
    counts = np.array([per_row[i] for i in range(sum(FILE_ROWS))])
    assert counts.min() >= 12  # mean 40, sd 6
    assert counts.max() <= 72


def test_groups_are_sampled_apart(tmp_path: Path) -> None:
    snapshot = three_files(tmp_path / "t")
    first = next(f for f in snapshot.files if f.num_records == FILE_ROWS[0])  # ids 0 to 99
    rest = [f for f in snapshot.files if f is not first]
    small, large = sample_files(snapshot, [[first], rest], ["id"], [1000, 50], seed=1)
    assert sorted(small.column("id").to_pylist()) == list(range(FILE_ROWS[0]))
    drawn = large.column("id").to_pylist()
    assert len(drawn) == 50
    assert min(drawn) >= FILE_ROWS[0]


def test_long_strings_are_cut_as_rank_buckets_see_them(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    long = "é" * 300
    write_deltalake(path, pa.table({"s": [long, "short"], "b": [b"\x01" * 300, b""]}))
    snapshot = load_snapshot(Storage.of(path))
    (sample,) = sample_files(snapshot, [snapshot.files], ["s", "b"], [10], seed=0)
    assert sorted(sample.column("s").to_pylist()) == sorted(["é" * 256, "short"])
    assert sorted(sample.column("b").to_pylist()) == [b"", b"\x01" * 256]


def test_only_a_small_rewrite_whose_rows_the_log_counts_is_sampled_here(tmp_path: Path) -> None:
    snapshot = three_files(tmp_path / "t")
    assert samples_in_process(snapshot.files)
    assert not samples_in_process(())
    first = snapshot.files[0]
    assert not samples_in_process([dataclasses.replace(first, num_records=None)])
    many = dataclasses.replace(first, num_records=IN_PROCESS_SAMPLE_ROWS + 1)
    assert not samples_in_process([many])
    huge = dataclasses.replace(first, size=IN_PROCESS_SAMPLE_BYTES + 1)
    assert not samples_in_process([huge])
    assert not samples_in_process([first] * (IN_PROCESS_SAMPLE_FILES + 1))
    assert samples_in_process([first] * IN_PROCESS_SAMPLE_FILES)
    # A vector that deletes more rows than the file holds: a broken log, left to Spark.
    assert not samples_in_process([dataclasses.replace(first, num_records=-2)])


DATA = Path(__file__).resolve().parents[1] / "data"


def test_deleted_rows_are_never_drawn(kernel: Any) -> None:
    """A Databricks table whose deletion vector deletes 2 of its 10 rows (values 0 to 9)."""
    snapshot = load_snapshot(Storage.of(str(DATA / "table-with-dv-small")))
    assert any(f.has_vector for f in snapshot.files)
    (sample,) = sample_files(snapshot, [snapshot.files], ["value"], [100], seed=0)
    (some,) = sample_files(snapshot, [snapshot.files], ["value"], [5], seed=0)
    # The same rows without the vector, as DuckDB's Delta reader (the kernel) reads them.
    scanned = kernel.sql(f"SELECT value FROM delta_scan('{DATA / 'table-with-dv-small'}')")
    live = sorted(r[0] for r in scanned.fetchall())
    assert len(live) == 8
    assert sorted(sample.column("value").to_pylist()) == live
    assert len(some) == 5
    assert set(some.column("value").to_pylist()) <= set(live)
