"""Time travel on tables deltalake wrote: versions whose log was cleaned up, commit times
read from the commit files."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

import zorder


def test_a_version_whose_log_was_cleaned_up_is_named(tmp_path: Path) -> None:
    uri = str(tmp_path / "cleaned")
    for start in range(0, 40, 10):
        write_deltalake(
            uri, pa.table({"id": pa.array(range(start, start + 10), pa.int64())}), mode="append"
        )
    table = DeltaTable(uri)
    table.create_checkpoint()  # at version 3
    for version in (0, 1):  # as log cleanup leaves it: commits before the checkpoint gone
        os.remove(Path(uri) / "_delta_log" / f"{version:020d}.json")
    with pytest.raises(zorder.errors.VersionNotFoundError, match="holds versions 2 to 3"):
        zorder.to_arrow(uri, version=0)
    assert zorder.to_arrow(uri, version=3).num_rows == 40
    assert zorder.scan(uri).report.version == 3


def test_commit_times_come_from_the_commit_files_not_the_history(tmp_path: Path) -> None:
    # A commit without commitInfo (the protocol allows it) shifts deltalake's history
    # versions; a clock that went back makes two commit times out of order.
    uri = str(tmp_path / "t")
    for value in range(4):
        write_deltalake(uri, pa.table({"v": pa.array([value], pa.int64())}), mode="append")
    log = Path(uri) / "_delta_log"
    second = log / f"{2:020d}.json"
    kept = [line for line in second.read_text().splitlines() if '"commitInfo"' not in line]
    second.write_text("\n".join(kept) + "\n")
    base = 1_700_000_000
    for version, seconds in enumerate([base, base + 1000, base + 2000, base + 1500]):
        os.utime(log / f"{version:020d}.json", (seconds, seconds))

    def at(seconds: float) -> int:
        instant = dt.datetime.fromtimestamp(seconds, dt.UTC)
        return zorder.scan(uri, timestamp=instant).report.version

    assert at(base + 500) == 0
    assert at(base + 1500) == 1
    assert at(base + 2000) == 2
    assert at(base + 2000.001) == 3  # committed "before" 2: it counts as 1 ms after it
    rows = zorder.to_arrow(uri, timestamp=dt.datetime.fromtimestamp(base + 1999, dt.UTC))
    assert sorted(rows.column("v").to_pylist()) == [0, 1]
    with pytest.raises(zorder.errors.VersionNotFoundError, match="after the newest commit"):
        at(base + 2001)
    with pytest.raises(zorder.errors.VersionNotFoundError, match="before the oldest commit"):
        at(base - 1)
