"""The main job on built-in data: Databricks' network-connections experiment.

Generates random connections (src_ip, dst_ip as dotted IPv4 strings,
src_port, dst_port), writes them as Delta tables laid out linearly and along
the Z-order and Hilbert curves, and measures how much single-column equality
filters skip on each (Databricks' skipping effectiveness) against the
ceiling 1 - F^(-1/d).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
from deltalake import DeltaTable

from zorder.table import load_snapshot, normalize_uri

__all__ = [
    "NETWORK_COLUMNS",
    "LayoutResult",
    "ceiling",
    "equality_effectiveness",
    "network_connections",
]

NETWORK_COLUMNS = ("src_ip", "dst_ip", "src_port", "dst_port")


def network_connections(rows: int, *, seed: int = 2018) -> pa.Table:
    """Random connections: uniform IPv4 addresses (as strings) and ports."""
    rng = np.random.default_rng(seed)

    def ips() -> list[str]:
        return [".".join(map(str, octets)) for octets in rng.integers(0, 256, (rows, 4)).tolist()]

    return pa.table(
        {
            "src_ip": ips(),
            "dst_ip": ips(),
            "src_port": rng.integers(0, 65536, rows).astype(np.int32),
            "dst_port": rng.integers(0, 65536, rows).astype(np.int32),
        }
    )


def ceiling(files: int, dims: int) -> float:
    """Best mean skipping of single-column equality filters: 1 - F^(-1/d)."""
    return 1 - files ** (-1 / dims) if files and dims else 0.0


def equality_effectiveness(
    path: str | Path, values: Mapping[str, Sequence[object]]
) -> dict[str, float]:
    """Per column, the mean fraction of rows skipped by ``column = value`` filters.

    A file is scanned unless its statistics show the value outside its
    [min, max]; a file without statistics for the column is scanned.
    """
    uri = normalize_uri(path)
    actions = pa.table(load_snapshot(uri).table.get_add_actions(flatten=True))
    records = actions.column("num_records").to_pylist()
    total = sum(records)
    result = {}
    for column, wanted in values.items():
        lows = _stat(actions, f"min.{column}")
        highs = _stat(actions, f"max.{column}")
        skipped = []
        for value in wanted:
            scanned = sum(
                n
                for n, low, high in zip(records, lows, highs, strict=True)
                if low is None or high is None or low <= value <= high  # type: ignore[operator]
            )
            skipped.append(1 - scanned / total if total else 0.0)
        result[column] = float(np.mean(skipped)) if skipped else 0.0
    return result


def _stat(actions: pa.Table, name: str) -> list[object]:
    if name in actions.column_names:
        return list(actions.column(name).to_pylist())
    return [None] * actions.num_rows


@dataclass(frozen=True)
class LayoutResult:
    """Skipping effectiveness of one layout of a table."""

    layout: str
    files: int
    per_column: Mapping[str, float]

    @property
    def mean(self) -> float:
        return float(np.mean(list(self.per_column.values())))

    @property
    def ceiling(self) -> float:
        return ceiling(self.files, len(self.per_column))


def file_count(path: str | Path) -> int:
    return len(DeltaTable(normalize_uri(path)).file_uris())
