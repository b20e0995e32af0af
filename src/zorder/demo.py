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

from zorder.api.read import skipping_effectiveness
from zorder.skipping.sql import sql_literal
from zorder.table import normalize_uri

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
    """Per column, Databricks' skipping effectiveness of ``column = value`` filters."""
    return {
        column: skipping_effectiveness(
            str(path), [f"`{column}` = {sql_literal(v)}" for v in wanted]
        )
        for column, wanted in values.items()
        if wanted
    }


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
