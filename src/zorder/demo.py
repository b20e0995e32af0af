"""The main job on built-in data: Databricks' network-connections experiment.

Generates random connections (src_ip, dst_ip as dotted IPv4 strings,
src_port, dst_port), writes them as Delta tables laid out linearly and along
the Z-order and Hilbert curves, and measures how much single-column equality
filters skip on each (Databricks' skipping effectiveness) against the
ceiling 1 - F^(-1/d).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pyarrow as pa
from deltalake import DeltaTable
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from zorder.api.read import skipping_effectiveness
from zorder.skipping.sql import sql_literal
from zorder.table import commit_files, describe_written_files, normalize_uri

__all__ = [
    "NETWORK_COLUMNS",
    "LayoutResult",
    "ceiling",
    "equality_effectiveness",
    "network_connections",
    "network_frame",
    "random_network_values",
    "write_as_written",
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


def network_frame(spark: SparkSession, rows: int, *, seed: int = 2018) -> DataFrame:
    """The same kind of connections generated inside Spark, for sizes the driver should not hold.

    Deterministic for a given ``rows`` and ``seed`` (a fixed number of input partitions).
    """

    def ip(offset: int) -> Column:
        octets = [(F.rand(seed + offset + i) * 256).cast("int") for i in range(4)]
        return F.concat_ws(".", *octets)

    return spark.range(rows, numPartitions=16).select(
        ip(100).alias("src_ip"),
        ip(200).alias("dst_ip"),
        (F.rand(seed + 300) * 65536).cast("int").alias("src_port"),
        (F.rand(seed + 301) * 65536).cast("int").alias("dst_port"),
    )


def random_network_values(rng: np.random.Generator, count: int) -> dict[str, list[object]]:
    """``count`` random values of each column's domain (most absent from any given table)."""

    def ips() -> list[object]:
        return [".".join(map(str, o)) for o in rng.integers(0, 256, (count, 4)).tolist()]

    def ports() -> list[object]:
        return [int(p) for p in rng.integers(0, 65536, count)]

    return {"src_ip": ips(), "dst_ip": ips(), "src_port": ports(), "dst_port": ports()}


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


def write_as_written(
    df: DataFrame, path: str | Path, files: int, *, mode: Literal["create", "overwrite"] = "create"
) -> None:
    """The table as a plain writer leaves it: rows spread at random over ``files`` files."""
    uri = normalize_uri(path)
    directory = f"plain-{uuid.uuid4().hex[:12]}"
    df.repartition(files).write.parquet(f"{uri}/{directory}")
    written = describe_written_files(uri, directory, df.schema, {})
    commit_files(uri, df.schema, written, mode=mode)
