"""The in-process writer's Parquet files: statistics Spark's readers can trust."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from zorder.arrow.layout import FileRows
from zorder.arrow.writes import ParquetOptions, nan_leaves, write_files
from zorder.stats import stats_from_parquet
from zorder.table.storage import Storage


def test_a_floating_column_holding_nan_is_written_without_bounds(tmp_path: Path) -> None:
    rows = pa.table(
        {
            "x": [1.0, math.nan, 2.5, 0.5],
            "s": pa.array([{"y": 1.0}, {"y": 2.0}, {"y": math.nan}, {"y": 3.0}]),
            "n": [1, 2, 3, 4],
        }
    )
    assert nan_leaves(rows) == {"x", "s.y"}
    # File 0 holds rows 0 and 3 (no NaN), file 1 rows 1 and 2 (a NaN in x and in s.y).
    files = FileRows.of(np.array([0, 3, 1, 2]), np.array([0, 1, 1, 0]))
    written = write_files(
        rows,
        files,
        storage=Storage.of(tmp_path),
        directory="run",
        options=ParquetOptions(schema=rows.schema),
    )
    stats = []
    for relative in written:
        metadata = pq.read_metadata(tmp_path / relative)
        stats.append(stats_from_parquet(metadata, rows.schema, ["x", "n"]))
    assert stats[0].min_values["x"] == 0.5
    assert stats[0].max_values["x"] == 1.0
    # pyarrow would bound x by [2.5, 2.5], leaving its NaN out: no bounds instead.
    assert "x" not in stats[1].min_values
    assert "x" not in stats[1].max_values
    assert stats[1].min_values["n"] == 2
    assert stats[1].max_values["n"] == 3
    assert sorted(
        v for w in written for v in pq.read_table(tmp_path / w).column("n").to_pylist()
    ) == [1, 2, 3, 4]
