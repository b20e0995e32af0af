"""A clustering column beyond Delta's first 32 gets no statistics: the run says so."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import zorder


def test_a_clustering_column_without_statistics_is_named_in_the_notes(tmp_path: Path) -> None:
    rows = pa.table(
        {f"c{i}": pa.array([(j * (2 * i + 3)) % 1000 for j in range(4000)]) for i in range(40)}
    )
    source = tmp_path / "in.parquet"
    pq.write_table(rows, source)
    beyond = zorder.write(
        str(source), str(tmp_path / "t"), by=["c39", "c1"], num_files=4, engine="arrow"
    )
    (note,) = [n for n in beyond.notes if "min/max statistics" in n]
    assert "'c39'" in note
    assert "delta.dataSkippingStatsColumns" in note
    # and the note is true: no file is skipped on c39, while c1 still skips
    assert zorder.explain(str(tmp_path / "t"), "c39 < 10").files_scanned == 4
    assert zorder.explain(str(tmp_path / "t"), "c1 < 10").files_scanned < 4
    within = zorder.write(
        str(source), str(tmp_path / "u"), by=["c1", "c2"], num_files=4, engine="arrow"
    )
    assert not [n for n in within.notes if "min/max statistics" in n]
