"""Type-widened tables read through Spark exactly as Delta Spark reads them.

Delta's type widening leaves older files in the old type. Delta Spark checks
that every recorded change is one Delta allows and lets Spark's Parquet
reader convert the older files' values (Spark 4.1 does, for every such
change, as its CAST does); a change Delta does not allow is refused by name.
Each table here holds files of the old type written by deltalake and by
Spark (Delta Spark's encodings), with values at the old type's extremes, and
files of the new type written after the change. The oracles: the rows the
test wrote, converted exactly in Python, filtered by Spark from memory; and
DuckDB's delta_scan (the Delta kernel). deltalake neither reads nor writes
such tables, so zorder refuses to optimize them.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import re
import shutil
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pytest
from deltalake import write_deltalake
from pyspark.sql import Row, SparkSession

import zorder
from tests.delta_writer import latest_schema, widen_columns, widen_nested
from tests.spark.helpers import arrow_rows, canonical, kernel_rows, row_multiset
from zorder.errors import UnsupportedTableError

pytestmark = pytest.mark.spark

D = decimal.Decimal
FLOAT_MAX = 3.4028234663852886e38  # the largest float, exactly
FLOAT_TINY = 1.401298464324817e-45  # the smallest float above zero
ARROW = {
    "byte": pa.int8(),
    "short": pa.int16(),
    "integer": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "date": pa.date32(),
}
SPARK = {"byte": "tinyint", "short": "smallint", "integer": "int", "long": "bigint"}


@dataclass(frozen=True)
class Widening:
    """A change of column ``c``: its old values (the old type's extremes), new values, and a
    filter on the column that sets the extremes apart."""

    old: str
    new: str
    before: list[Any]
    after: list[Any]
    where: str

    @property
    def id(self) -> str:
        return f"{self.old}->{self.new}"


def ints(bits: int) -> list[Any]:
    return [-(2 ** (bits - 1)), 2 ** (bits - 1) - 1, 0, -1, None]


WIDENINGS = [
    Widening("byte", "short", ints(8), [-(2**15), 2**15 - 1], "c <= -128 OR c = 127"),
    Widening("byte", "integer", ints(8), [-(2**31), 2**31 - 1], "c < -127 OR c > 126"),
    Widening("byte", "long", ints(8), [-(2**63), 2**63 - 1], "c <= -128 OR c > 2147483647"),
    Widening("short", "integer", ints(16), [-(2**31), 2**31 - 1], "c <= -32768 OR c = 32767"),
    Widening("short", "long", ints(16), [-(2**63)], "c < -32767 OR c >= 32767"),
    Widening(
        "integer", "long", ints(32), [-(2**63), 2**63 - 1], "c > 2147483646 OR c < -2147483648"
    ),
    Widening(
        "float",
        "double",
        [FLOAT_MAX, -FLOAT_MAX, FLOAT_TINY, math.nan, math.inf, -math.inf, -0.0, 0.1, None],
        [1.7976931348623157e308, 0.1, math.nan],
        "c > 3.0E38 OR c = 0.10000000149011612 OR c BETWEEN 0 AND 1.0E-44",
    ),
    Widening("byte", "double", ints(8), [0.5], "c <= -128 OR c BETWEEN 0.25 AND 127"),
    Widening("short", "double", ints(16), [1e300], "c >= 32767 OR c = -32768"),
    Widening("integer", "double", ints(32), [-1e300, 0.5], "c >= 2147483647 OR c < -2147483647"),
    Widening(
        "date",
        "timestamp_ntz",
        [dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(1582, 10, 4), dt.date(1970, 1, 1), None],
        [dt.datetime(9999, 12, 31, 23, 59, 59, 999999), dt.datetime(1, 1, 1, 0, 0, 0, 1)],
        "c <= TIMESTAMP_NTZ'0001-01-01 00:00:00' OR c >= TIMESTAMP_NTZ'9999-12-31 00:00:00' "
        "OR c = TIMESTAMP_NTZ'1582-10-04 00:00:00'",
    ),
    Widening(  # an INT32 decimal to a wider scale
        "decimal(5,2)",
        "decimal(7,4)",
        [D("-999.99"), D("999.99"), D("0.01"), None],
        [D("-999.9999"), D("999.9999")],
        "c >= 999.99 OR c <= -999.99 OR c = 0.01",
    ),
    Widening(  # INT32 to INT64
        "decimal(9,2)",
        "decimal(18,2)",
        [D("-9999999.99"), D("9999999.99"), None],
        [D("9999999999999999.99")],
        "c >= 9999999.99 OR c < -9999999.98",
    ),
    Widening(  # INT64 to a fixed-length binary
        "decimal(18,3)",
        "decimal(38,20)",
        [D("-999999999999999.999"), D("999999999999999.999"), D("0.001")],
        [D("999999999999999999.99999999999999999999")],
        "c >= 999999999999999.999 OR c = 0.001",
    ),
    Widening("byte", "decimal(10,0)", ints(8), [D("9999999999")], "c <= -128 OR c = 127"),
    Widening("short", "decimal(12,2)", ints(16), [D("-0.01")], "c <= -32768 OR c >= 32767"),
    Widening(
        "integer",
        "decimal(10,0)",
        ints(32),
        [D("-9999999999")],
        "c >= 2147483647 OR c < -2147483647",
    ),
    Widening(
        "integer", "decimal(38,28)", ints(32), [D("0.5")], "c = 2147483647 OR c <= -2147483648"
    ),
    Widening(
        "long",
        "decimal(20,0)",
        ints(64),
        [D("99999999999999999999")],
        "c >= 9223372036854775807 OR c = -9223372036854775808",
    ),
    Widening(
        "long",
        "decimal(38,18)",
        ints(64),
        [D("-0.000000000000000001")],
        "c > 9223372036854775806 OR c < -9223372036854775807",
    ),
]


def arrow_type(name: str) -> pa.DataType:
    if name.startswith("decimal("):
        precision, scale = name[len("decimal(") : -1].split(",")
        return pa.decimal128(int(precision), int(scale))
    return ARROW[name]


def converted(value: Any, new: str) -> Any:
    """Old ``value`` in the type ``new``, exactly (as Spark's CAST makes it)."""
    if value is None:
        return None
    if isinstance(value, float) and new == "double":
        return float(np.float32(value))  # the float the old files hold, exactly
    if new == "double":
        return float(value)
    if new == "timestamp_ntz":
        return dt.datetime.combine(value, dt.time())
    if new.startswith("decimal("):
        return D(value)
    return value


def spark_file(
    spark: SparkSession,
    table: Path,
    rows: list[tuple[Any, ...]],
    ddl: str,
    *,
    partition: dict[str, str] | None = None,
) -> None:
    """``rows`` written by Spark's Parquet writer (the encodings Delta Spark's files have)
    and committed as a blind append, as Delta Spark commits one."""
    scratch = table.parent / f"scratch-{uuid.uuid4().hex}"
    spark.createDataFrame(rows, ddl).coalesce(1).write.parquet(str(scratch))
    values = partition or {}
    directory = "".join(f"{k}={v}/" for k, v in values.items())
    relative = f"{directory}part-00000-{uuid.uuid4()}.c000.snappy.parquet"
    (table / relative).parent.mkdir(parents=True, exist_ok=True)
    shutil.move(next(scratch.glob("part-*.parquet")), table / relative)
    shutil.rmtree(scratch)
    add = {
        "path": relative,
        "partitionValues": values,
        "size": (table / relative).stat().st_size,
        "modificationTime": int(time.time() * 1000),
        "dataChange": True,
        "stats": json.dumps({"numRecords": len(rows)}),
    }
    log = table / "_delta_log"
    version = max(int(p.stem) for p in log.glob("*.json")) + 1
    info = {"timestamp": add["modificationTime"], "operation": "WRITE"}
    with open(log / f"{version:020d}.json", "x") as out:
        out.write(json.dumps({"commitInfo": info}) + "\n" + json.dumps({"add": add}) + "\n")


def spark_type(name: str) -> str:
    return SPARK.get(name, name)


@pytest.mark.parametrize("widening", WIDENINGS, ids=[w.id for w in WIDENINGS])
def test_every_widening_delta_allows_reads_exactly(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path, widening: Widening
) -> None:
    table = tmp_path / "t"
    path = str(table)
    old, new = widening.old, widening.new
    before = list(enumerate(widening.before))
    write_deltalake(
        path,
        pa.table(
            {
                "id": pa.array([i for i, _ in before], pa.int64()),
                "c": pa.array([v for _, v in before], arrow_type(old)),
            }
        ),
    )
    offset = len(before)
    spark_file(spark, table, [(offset + i, v) for i, v in before], f"id long, c {spark_type(old)}")
    widen_columns(table, {"c": new})
    offset *= 2
    after = [(offset + i, v) for i, v in enumerate(widening.after)]
    spark_file(spark, table, after, f"id long, c {spark_type(new)}")

    rows = [(i, converted(v, new)) for i, v in before]
    rows += [(len(before) + i, converted(v, new)) for i, v in before] + after
    remembered = spark.createDataFrame(rows, f"id long, c {spark_type(new)}")
    expected = row_multiset(rows)
    columns = ["id", "c"]
    assert kernel_rows(kernel, path, columns) == expected
    assert row_multiset(zorder.read(spark, path).select(*columns).collect()) == expected
    assert arrow_rows(zorder.to_arrow(path), columns) == expected
    wanted = row_multiset(remembered.where(widening.where).collect())
    assert 0 < sum(wanted.values()) < len(rows)
    read = zorder.read(spark, path, widening.where).select(*columns)
    assert row_multiset(read.collect()) == wanted, widening.where
    assert arrow_rows(zorder.to_arrow(path, widening.where), columns) == wanted


def test_a_chain_of_widenings_over_partitions(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    # byte, then short, then long: three physical types in one read, over two partitions.
    table = tmp_path / "t"
    path = str(table)
    write_deltalake(
        path,
        pa.table(
            {
                "id": pa.array(range(8), pa.int64()),
                "c": pa.array([-128, 127, 0, None, -1, 1, 100, -100], pa.int8()),
                "p": ["x", "y"] * 4,
            }
        ),
        partition_by=["p"],
    )
    widen_columns(table, {"c": "short"})
    for part in ("x", "y"):
        rows = [(10 + i, v) for i, v in enumerate([-(2**15), 2**15 - 1, 7])]
        spark_file(spark, table, rows, "id long, c smallint", partition={"p": part})
    widen_columns(table, {"c": "long"})
    spark_file(
        spark, table, [(20, -(2**63)), (21, 2**63 - 1)], "id long, c bigint", partition={"p": "y"}
    )
    (recorded,) = [f for f in latest_schema(table)["fields"] if f["name"] == "c"]
    assert recorded["metadata"]["delta.typeChanges"] == [
        {"fromType": "byte", "toType": "short"},
        {"fromType": "short", "toType": "long"},
    ]
    columns = ["id", "c", "p"]
    expected = kernel_rows(kernel, path, columns)
    assert sum(expected.values()) == 16
    assert row_multiset(zorder.read(spark, path).select(*columns).collect()) == expected
    assert arrow_rows(zorder.to_arrow(path), columns) == expected
    where = "c >= 127 OR c <= -32768 OR (p = 'x' AND c = 7)"
    wanted = kernel_rows(kernel, path, columns, where)
    assert row_multiset(zorder.read(spark, path, where).select(*columns).collect()) == wanted
    with pytest.raises(UnsupportedTableError, match="typeWidening"):
        zorder.optimize(spark, path, by=["c"], full=True)


def plain(value: Any) -> Any:
    """A hashable form of a nested value: structs and maps as sorted pairs, lists as tuples."""
    if isinstance(value, Row):  # a struct (a row itself is given as a tuple)
        value = value.asDict()
    if isinstance(value, dict):
        return tuple(sorted(((plain(k), plain(v)) for k, v in value.items()), key=repr))
    if isinstance(value, list | tuple):
        return tuple(plain(v) for v in value)
    return canonical(value)


def changed(old: str, new: str, path: str | None = None) -> dict[str, str]:
    return {"fromType": old, "toType": new} | ({"fieldPath": path} if path else {})


def test_nested_fields_widened_read_exactly(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    # Struct fields (their own typeChanges), array elements and map keys and values (the
    # column's, by fieldPath), an array of structs.
    table = tmp_path / "t"
    path = str(table)
    old: list[dict[str, Any]] = [
        {
            "s": {"a": -128, "f": FLOAT_MAX, "d": dt.date(1, 1, 1)},
            "l": [-(2**31), 2**31 - 1],
            "m": {1.25: D("-999.99"), -FLOAT_MAX: None},
            "ls": [{"x": -32768}, None],
        },
        {
            "s": {"a": 127, "f": None, "d": dt.date(9999, 12, 31)},
            "l": None,
            "m": {-3.5: D("999.99")},
            "ls": [{"x": 32767}],
        },
        {"s": None, "l": [None, 0], "m": None, "ls": None},
    ]
    arrow_schema = pa.schema(
        [
            ("id", pa.int64()),
            ("s", pa.struct([("a", pa.int8()), ("f", pa.float32()), ("d", pa.date32())])),
            ("l", pa.list_(pa.int32())),
            ("m", pa.map_(pa.float32(), pa.decimal128(5, 2))),
            ("ls", pa.list_(pa.struct([("x", pa.int16())]))),
        ]
    )
    rows = [
        {"id": i} | r | {"m": None if r["m"] is None else list(r["m"].items())}
        for i, r in enumerate(old)
    ]
    write_deltalake(path, pa.Table.from_pylist(rows, arrow_schema))

    def field(name: str, kind: Any, *changes: dict[str, str]) -> dict[str, Any]:
        metadata = {"delta.typeChanges": list(changes)} if changes else {}
        return {"name": name, "type": kind, "nullable": True, "metadata": metadata}

    struct = {
        "type": "struct",
        "fields": [
            field("a", "decimal(12,1)", changed("byte", "decimal(12,1)")),
            field("f", "double", changed("float", "double")),
            field("d", "timestamp_ntz", changed("date", "timestamp_ntz")),
        ],
    }
    widen_nested(table, "s", struct, [])
    widen_nested(
        table,
        "l",
        {"type": "array", "elementType": "long", "containsNull": True},
        [changed("integer", "long", "element")],
    )
    widen_nested(
        table,
        "m",
        {
            "type": "map",
            "keyType": "double",
            "valueType": "decimal(10,4)",
            "valueContainsNull": True,
        },
        [changed("float", "double", "key"), changed("decimal(5,2)", "decimal(10,4)", "value")],
    )
    element = {"type": "struct", "fields": [field("x", "long", changed("short", "long"))]}
    widen_nested(table, "ls", {"type": "array", "elementType": element, "containsNull": True}, [])
    ddl = (
        "id long, s struct<a: decimal(12,1), f: double, d: timestamp_ntz>, l array<bigint>, "
        "m map<double, decimal(10,4)>, ls array<struct<x: bigint>>"
    )
    new = [
        (
            10,
            (D("99999999999.9"), 1e300, dt.datetime(2026, 1, 1, 12)),
            [2**63 - 1],
            {1e300: D("999999.9999")},
            [(-(2**63),)],
        )
    ]
    spark_file(spark, table, new, ddl)

    # The rows written, in the new types (exactly: each old value fits its new type).
    memory = [
        (
            i,
            None
            if r["s"] is None
            else {
                "a": D(r["s"]["a"]),
                "f": r["s"]["f"],
                "d": dt.datetime.combine(r["s"]["d"], dt.time()),
            },
            r["l"],
            r["m"],
            r["ls"],
        )
        for i, r in enumerate(old)
    ]
    memory += [
        (i, dict(zip("afd", s, strict=True)), lst, m, [{"x": x} for (x,) in ls])
        for i, s, lst, m, ls in new
    ]
    expected = Counter(plain(row) for row in memory)
    columns = ["id", "s", "l", "m", "ls"]
    read = zorder.read(spark, path).select(*columns).collect()
    assert Counter(plain(tuple(r)) for r in read) == expected
    select = ", ".join(columns)
    duck = kernel.sql(f"SELECT {select} FROM delta_scan('{path}')").fetchall()
    assert Counter(plain(r) for r in duck) == expected
    where = (
        "s.a <= -128 OR ls[0].x = 32767 OR m[CAST(-3.5 AS DOUBLE)] = 999.99 "
        "OR s.f >= 1E300 OR l[1] = 0"
    )
    wanted = spark.createDataFrame(memory, ddl).where(where).collect()
    assert sorted(r.id for r in wanted) == [0, 1, 2, 10]
    read = zorder.read(spark, path, where).select(*columns).collect()
    assert Counter(plain(tuple(r)) for r in read) == Counter(plain(tuple(r)) for r in wanted)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("byte", "decimal(4,1)"),  # every byte fits, yet Delta asks ten integer digits
        ("short", "decimal(9,0)"),
        ("long", "decimal(19,0)"),
        ("long", "double"),
        ("integer", "float"),
        ("double", "float"),
        ("date", "timestamp"),
    ],
)
def test_a_change_delta_does_not_allow_is_refused_by_name(
    spark: SparkSession, tmp_path: Path, old: str, new: str
) -> None:
    path = str(tmp_path / "t")
    values: list[int] | list[float] | list[dt.date]
    values = [1, 2] if old not in ("double", "date") else [1.5, 2.5]
    if old == "date":
        values = [dt.date(2026, 1, 1), dt.date(2026, 1, 2)]
    write_deltalake(path, pa.table({"c": pa.array(values, arrow_type(old)), "n": [1, 2]}))
    widen_columns(path, {"c": new})
    message = rf"column 'c' changed from {old} to {re.escape(new)}.*Delta allows"
    with pytest.raises(UnsupportedTableError, match=message):
        zorder.read(spark, path)
    with pytest.raises(UnsupportedTableError, match=message):
        zorder.read(spark, path, "n = 1")
