"""Data and checks shared by the Spark tests."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import random
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable
from pyspark.sql import DataFrame, SparkSession

from zorder.spark.compat import ARROW_UDF_SPARK, PYSPARK_VERSION

ALL_TYPES_SCHEMA = (
    "b boolean, i8 tinyint, i16 smallint, i32 int, i64 bigint, f32 float, f64 double, "
    "dec decimal(12,3), wide decimal(38,0), d date, ts timestamp, ntz timestamp_ntz, "
    "s string, bin binary"
)
PREFIX = "shared-prefix-of-thirty-chars-"
# Keys computed in Python run as Arrow UDFs, which pyspark has from 4.1 on (direct keys).
needs_arrow_udf = pytest.mark.skipif(
    PYSPARK_VERSION < ARROW_UDF_SPARK, reason="Arrow UDFs (direct keys) need pyspark 4.1+"
)


def random_row(rng: random.Random) -> tuple[Any, ...]:
    def maybe(value: Any) -> Any:
        return None if rng.random() < 0.1 else value

    special = [math.nan, math.inf, -math.inf, -0.0, 0.0]
    return (
        maybe(rng.random() < 0.5),
        maybe(rng.randint(-128, 127)),
        maybe(rng.randint(-(2**15), 2**15 - 1)),
        maybe(rng.randint(-(2**31), 2**31 - 1)),
        maybe(rng.choice([rng.randint(-(2**63), 2**63 - 1), rng.randint(-5, 5)])),
        maybe(rng.choice([*special, rng.uniform(-1e6, 1e6)])),
        maybe(rng.choice([*special, rng.uniform(-1e300, 1e300), rng.gauss(0, 1)])),
        maybe(decimal.Decimal(rng.randint(-(10**12) + 1, 10**12 - 1)).scaleb(-3)),
        maybe(decimal.Decimal(rng.randint(-(10**38) + 1, 10**38 - 1))),
        maybe(dt.date(1, 1, 1) + dt.timedelta(days=rng.randint(0, 3_652_058))),
        maybe(
            dt.datetime(1900, 1, 1, tzinfo=dt.UTC)
            + dt.timedelta(microseconds=rng.randint(0, 200 * 365 * 86_400 * 10**6))
        ),
        maybe(dt.datetime(2000, 1, 1) + dt.timedelta(microseconds=rng.randint(-(10**15), 10**15))),
        maybe(
            rng.choice(
                [
                    PREFIX + str(rng.randint(0, 10**6)),
                    "".join(rng.choice("aé中😀\u0301z") for _ in range(rng.randint(0, 40))),
                    "",
                ]
            )
        ),
        maybe(bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 12)))),
    )


def all_types_frame(spark: SparkSession, rows: int, seed: int = 7) -> DataFrame:
    rng = random.Random(seed)
    return spark.createDataFrame([random_row(rng) for _ in range(rows)], ALL_TYPES_SCHEMA)


def canonical(value: Any) -> Any:
    """Hashable, NaN-equal form of a value for multiset comparison."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, float) and value == 0:
        return 0.0
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.UTC).replace(tzinfo=None)
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    return value


def row_multiset(rows: Any) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(canonical(v) for v in row) for row in rows)


def spark_rows(df: DataFrame) -> Counter[tuple[Any, ...]]:
    return row_multiset(tuple(r) for r in df.collect())


def delta_rows(path: str | Path, columns: list[str]) -> Counter[tuple[Any, ...]]:
    table = DeltaTable(str(path)).to_pyarrow_table()
    return row_multiset(zip(*[table.column(c).to_pylist() for c in columns], strict=True))


def logged_stats(path: str | Path) -> dict[str, dict[str, Any]]:
    """Stats JSON of every live file, read back from the log's commit files."""
    live: dict[str, dict[str, Any]] = {}
    for commit in sorted((Path(path) / "_delta_log").glob("*.json")):
        for line in commit.read_text().splitlines():
            action = json.loads(line)
            if "add" in action:
                add = action["add"]
                stats = add.get("stats")
                live[add["path"]] = json.loads(stats, parse_float=decimal.Decimal) if stats else {}
            elif "remove" in action:
                live.pop(action["remove"]["path"], None)
    return live


def assert_stats_bound_files(path: str | Path) -> int:
    """Every live file's min/max/nullCount/numRecords holds for its rows; returns files checked."""
    checked = 0
    for relative, stats in logged_stats(path).items():
        data = pq.read_table(Path(path) / relative)
        assert stats["numRecords"] == data.num_rows, relative
        for name, nulls in stats.get("nullCount", {}).items():
            assert data.column(name).null_count == nulls, (relative, name)
        for side in ("minValues", "maxValues"):
            for name, bound in stats.get(side, {}).items():
                for value in data.column(name).to_pylist():
                    if value is None:
                        continue
                    ok = within(value, bound, lower=side == "minValues")
                    assert ok, (relative, name, side, bound, value)
        checked += 1
    return checked


def within(value: Any, bound: Any, *, lower: bool) -> bool:
    """Does a Delta JSON bound hold for ``value`` (lower: bound <= value)?"""
    a: Any  # the two sides compared, of the value's type
    b: Any
    if isinstance(value, float):
        assert not math.isnan(value), "a NaN must never sit under a bound"
        a, b = (float(bound), value) if lower else (value, float(bound))
    elif isinstance(value, str):
        a, b = (bound.encode(), value.encode()) if lower else (value.encode(), bound.encode())
    elif isinstance(value, dt.datetime):
        parsed = dt.datetime.fromisoformat(bound.replace("Z", "+00:00"))
        if value.tzinfo is None:
            parsed = parsed.replace(tzinfo=None)
        a, b = (parsed, value) if lower else (value, parsed)
    elif isinstance(value, dt.date):
        a, b = (
            (dt.date.fromisoformat(bound), value)
            if lower
            else (value, dt.date.fromisoformat(bound))
        )
    elif isinstance(value, decimal.Decimal):
        exact = decimal.Decimal(str(bound))
        a, b = (exact, value) if lower else (value, exact)
    else:
        a, b = (bound, value) if lower else (value, bound)
    return bool(a <= b)


# Other Delta readers, which apply deletion vectors: DuckDB's delta_scan (the Delta
# kernel, through the `kernel` fixture's connection) and delta-rs's DataFusion scan.


def connect_kernel() -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the Delta extension (the Delta kernel's reader), loaded offline
    from the ``duckdb-extension-delta`` wheel."""
    import duckdb_extension_delta

    connection = duckdb.connect()
    package = Path(duckdb_extension_delta.__file__).parent
    connection.load_extension(str(next(package.glob("extensions/*/delta.duckdb_extension"))))
    return connection


def kernel_rows(
    kernel: duckdb.DuckDBPyConnection, path: str, columns: list[str], where: str = "TRUE"
) -> Counter[tuple[Any, ...]]:
    select = ", ".join(f'"{c}"' for c in columns)
    return row_multiset(
        kernel.sql(f"SELECT {select} FROM delta_scan('{path}') WHERE {where}").fetchall()
    )


def delta_rs_rows(path: str, columns: list[str]) -> Counter[tuple[Any, ...]]:
    table = pa.RecordBatchReader.from_stream(DeltaTable(path).scan(columns=columns)).read_all()
    return row_multiset(zip(*[table.column(c).to_pylist() for c in columns], strict=True))


def arrow_rows(table: pa.Table, columns: list[str]) -> Counter[tuple[Any, ...]]:
    return row_multiset(zip(*[table.column(c).to_pylist() for c in columns], strict=True))
