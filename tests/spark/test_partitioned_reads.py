"""Partitioned tables written by others read exactly: values from the log, paths decoded.

Partition values live in the log, not in the Parquet files; paths in the log
are percent-encoded, on storage they are not. A read must equal the table's
contents, whoever wrote it, and filters on partition columns prune partitions.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import zorder
from tests.spark.helpers import row_multiset
from zorder.spark.compat import arrow_frame, collect_arrow

pytestmark = pytest.mark.spark


def rows_of(table: pa.Table, columns: list[str]) -> Counter[tuple[Any, ...]]:
    return row_multiset(zip(*(table.column(c).to_pylist() for c in columns), strict=True))


def test_partition_values_come_back_and_prune(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "days")
    for day in ("2026-11-01", "2026-11-02"):
        write_deltalake(
            path,
            pa.table({"n": list(range(1000)), "day": [day] * 1000}),
            partition_by=["day"],
            mode="append",
        )
    everything = zorder.read(spark, path)
    assert everything.columns == ["n", "day"]
    assert everything.where("day IS NULL").count() == 0
    assert zorder.read(spark, path, "day = '2026-11-02'").count() == 1000
    report = zorder.explain(path, "day = '2026-11-02' AND n < 10")
    assert (report.partitions_scanned, report.partitions_total) == (1, 2)
    assert (report.files_scanned, report.files_total) == (1, 2)
    assert report.summary().startswith("scanned 1 of 2 partitions, 1 of 2 files")
    assert zorder.read(spark, path, "day = '2026-11-02' AND n < 10").count() == 10
    by_column = (F.col("day") == "2026-11-01") & (F.col("n") >= 990)
    assert zorder.read(spark, path, by_column).count() == 10
    assert zorder.explain(path, by_column, spark=spark).files_scanned == 1


ODD = ["x y/z=é", "100%", "a=b", "semi;colon", "tab\\there", "日本語", "[brackets]", "{*?}"]


def test_odd_partition_values_read_exactly(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "odd")
    values = [*ODD, None, ""]
    data = pa.table({"n": list(range(len(values) * 3)), "p": [v for v in values for _ in range(3)]})
    write_deltalake(path, data, partition_by=["p"])
    got = collect_arrow(zorder.read(spark, path))
    # Delta reads an empty partition value as NULL, as deltalake does.
    assert rows_of(got, ["n", "p"]) == rows_of(DeltaTable(path).to_pyarrow_table(), ["n", "p"])
    assert sum(v is None for v in got.column("p").to_pylist()) == 6
    for value in ODD:
        literal = "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
        assert zorder.read(spark, path, f"p = {literal}").count() == 3, value
        assert zorder.explain(path, f"p = {literal}").files_scanned == 1, value
    assert zorder.read(spark, path, "p IS NULL").count() == 6
    assert zorder.explain(path, "p IS NULL").files_scanned == 2
    assert zorder.read(spark, path, "p = ''").count() == 0


def test_typed_partition_values_read_as_the_table_types(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "typed")
    utc = dt.UTC
    data = pa.table(
        {
            "n": pa.array([1, 2, 3, 4], pa.int64()),
            "b": pa.array([1, -2, None, 4], pa.int8()),
            "s": pa.array([100, None, -3, 4], pa.int16()),
            "i": pa.array([7, 7, None, -1], pa.int32()),
            "d": pa.array([dt.date(2026, 11, 1), None, dt.date(1970, 1, 1), dt.date(2026, 1, 2)]),
            "t": pa.array(
                [
                    dt.datetime(2026, 11, 1, 12, 30, 1, 500, tzinfo=utc),
                    None,
                    None,
                    dt.datetime(1999, 12, 31, 23, 59, 59, tzinfo=utc),
                ],
                pa.timestamp("us", tz="UTC"),
            ),
            "f": pa.array([True, False, None, True]),
            "m": pa.array(
                # Not negative: write_deltalake 1.6 logs -3.50 as '-3.-50' and fails.
                [decimal.Decimal("1.25"), None, decimal.Decimal("3.50"), decimal.Decimal("0.00")],
                pa.decimal128(5, 2),
            ),
        }
    )
    partitions = ["b", "s", "i", "d", "t", "f", "m"]
    write_deltalake(path, data, partition_by=partitions)
    frame = zorder.read(spark, path)
    table_fields = {f.name: f.dataType.simpleString() for f in frame.schema.fields}
    assert table_fields == {
        "n": "bigint",
        "b": "tinyint",
        "s": "smallint",
        "i": "int",
        "d": "date",
        "t": "timestamp",
        "f": "boolean",
        "m": "decimal(5,2)",
    }
    expected = DeltaTable(path).to_pyarrow_table()
    columns = ["n", *partitions]
    assert rows_of(collect_arrow(frame), columns) == rows_of(expected, columns)
    cases = {
        "d = DATE'2026-11-01'": 1,
        "t > TIMESTAMP'2000-01-01 00:00:00+00:00'": 1,
        "f = false": 1,
        "m > 3": 1,
        "i = 7 AND b > 0": 1,
        "b IS NULL": 1,
    }
    for where, count in cases.items():
        assert zorder.read(spark, path, where).count() == count, where
        assert zorder.explain(path, where).files_scanned == count, where


# ---------------------------------------------------------------- fuzzed filters

FUZZ_PARTS: dict[str, list[str | None] | list[dt.date | None]] = {
    "region": ["eu west", "us/east", "a=b", "100%", "日本", None],
    "day": [dt.date(2026, 11, 1), dt.date(2026, 11, 2), None],
}


def _fuzz_batch(rng: Any, size: int) -> pa.Table:
    return pa.table(
        {
            "n": pa.array([rng.randrange(-50, 50) for _ in range(size)], pa.int64()),
            "x": pa.array(
                [rng.choice([math.nan, None, -1.5, 0.0, 2.5, rng.random()]) for _ in range(size)],
                pa.float64(),
            ),
            "s": [rng.choice(["alpha", "beta", "", None, "zeta"]) for _ in range(size)],
            "region": [rng.choice(FUZZ_PARTS["region"]) for _ in range(size)],
            "day": pa.array([rng.choice(FUZZ_PARTS["day"]) for _ in range(size)]),
        }
    )


@pytest.fixture(scope="module", params=["delta-rs", "zorder"])
def fuzz_table(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, spark: SparkSession
) -> str:
    """A table partitioned by a string and a date, written in several appends.

    "delta-rs": four appends by ``write_deltalake``. "zorder": two appends by
    delta-rs, two clustered appends by ``zorder.write`` (by a double column
    with NaN among others), then an optimize of one region: files of both
    writers and of three zorder runs, NaN-safe bounds and not.
    """
    import random

    rng = random.Random(11)
    path = str(tmp_path_factory.mktemp("fuzz") / "t")
    for batch in range(4):
        data = _fuzz_batch(rng, 300)
        if request.param == "zorder" and batch >= 2:
            frame = arrow_frame(spark, data)
            zorder.write(frame, path, by=["x", "n"], mode="append", num_files=6)
        else:
            write_deltalake(path, data, partition_by=["region", "day"], mode="append")
    if request.param == "zorder":
        metrics = zorder.optimize(spark, path, by=["s", "x"], where="region = 'us/east'")
        assert metrics.files_added > 0
    return path


def _literal(value: Any) -> str:
    from zorder.skipping.sql import sql_literal

    if isinstance(value, float) and math.isnan(value):
        return "CAST('NaN' AS DOUBLE)"
    return sql_literal(value)


_VALUES: dict[str, list[Any]] = {
    "n": [-50, -1, 0, 7, 49, 50],
    "x": [math.nan, -1.5, 0.0, 0.5, 2.5],
    "s": ["alpha", "beta", "", "zeta", "z"],
    "region": [v for v in FUZZ_PARTS["region"] if v is not None] + ["eu"],
    "day": [d for d in FUZZ_PARTS["day"] if d is not None] + [dt.date(2026, 10, 31)],
}


@st.composite
def fuzz_leaves(draw: st.DrawFn) -> str:
    column = draw(st.sampled_from(list(_VALUES)))
    kind = draw(st.sampled_from(["cmp", "cmp", "in", "null", "notnull", "like"]))
    if kind == "null":
        return f"`{column}` IS NULL"
    if kind == "notnull":
        return f"`{column}` IS NOT NULL"
    if kind == "like" and column in ("s", "region"):
        prefix = draw(st.sampled_from(["a", "eu", "us", "", "日"]))
        return f"`{column}` LIKE {_literal(prefix + '%')}"
    if kind == "in":
        items = draw(st.lists(st.sampled_from(_VALUES[column]), min_size=1, max_size=3))
        return f"`{column}` IN ({', '.join(_literal(v) for v in items)})"
    op = draw(st.sampled_from(["=", "!=", "<", "<=", ">", ">="]))
    return f"`{column}` {op} {_literal(draw(st.sampled_from(_VALUES[column])))}"


fuzz_filters = st.recursive(
    fuzz_leaves(),
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["AND", "OR"]), inner).map(
            lambda t: f"({t[0]}) {t[1]} ({t[2]})"
        ),
        inner.map(lambda f: f"NOT ({f})"),
    ),
    max_leaves=4,
)


@settings(max_examples=30, deadline=None)
@given(where=fuzz_filters)
# NaN in the in-process optimize's files: pyarrow's bounds leave NaN out (found by this test).
@example(where="NOT (`x` <= 2.5e0)")
def test_fuzzed_filters_equal_a_deltalake_full_scan(
    spark: SparkSession, fuzz_table: str, where: str
) -> None:
    columns = ["n", "x", "s", "region", "day"]
    everything = DeltaTable(fuzz_table).to_pyarrow_table().select(columns)
    expected = collect_arrow(arrow_frame(spark, everything).where(where))  # Arrow: NaN stays NaN
    got = collect_arrow(zorder.read(spark, fuzz_table, where).select(*columns))
    assert rows_of(got, columns) == rows_of(expected, columns), where
