"""Scans that probe bloom filters: files dropped only where no row can match, Spark's rows.

A table clustered by one column carries bloom filters on columns of every
type a filter answers for. Generated filters (equalities, IN lists, <=>,
AND, OR, NOT, over values the table holds and values it does not) are
planned by ``zorder.scan``: every file with a matching row, as Spark counts
them file by file, must be kept, and ``read`` and ``to_arrow`` must return
Spark's own count over every file.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import hashlib
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import zorder
from zorder.arrow.blooms import clear_cache
from zorder.errors import UnsupportedFilterError

pytestmark = pytest.mark.spark

BLOOMS = ["sid", "n", "amount", "day", "at", "raw"]
ROWS = 3_000


def frame(spark: SparkSession) -> DataFrame:
    return spark.range(ROWS).selectExpr(
        "CAST(id % 50 AS INT) AS k",
        "md5(CAST(id AS STRING)) AS sid",
        "id * 1000003 AS n",
        "CAST(id / 7 AS DECIMAL(12, 2)) AS amount",
        "date_add(DATE'2026-01-01', CAST(id % 400 AS INT)) AS day",
        "TIMESTAMP'2026-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id * 37) AS at",
        "unhex(md5(CAST(id % 900 AS STRING))) AS raw",
    )


@pytest.fixture(scope="module")
def table(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("blooms") / "t")
    zorder.write(frame(spark), path, by=["k"], num_files=12, bloom_filters=BLOOMS)
    return path


def literal(column: str, i: int) -> str:
    """Row ``i``'s value of ``column`` as SQL; past the rows, values no row has (or that
    the statistics rule out, or that widen the comparison past what a filter answers)."""
    present = i < ROWS
    if column == "sid":
        return f"'{md5(i)}'"
    if column == "n":
        return str(i * 1000003 if present else i * 1000003 + 1)
    if column == "amount":
        value = decimal.Decimal(i) / 7 if present else decimal.Decimal(i - ROWS) * 13 / 100
        return str(value.quantize(decimal.Decimal("0.01"), rounding=decimal.ROUND_HALF_UP))
    if column == "day":
        return f"DATE'{dt.date(2026, 1, 1) + dt.timedelta(days=i % 400 if present else i)}'"
    if column == "at":
        seconds = i * 37 if present else i * 37 + 1
        return f"TIMESTAMP'{dt.datetime(2026, 1, 1) + dt.timedelta(seconds=seconds)}'"
    return f"X'{md5(i % 900 if present else i)}'"


def md5(number: int) -> str:
    return hashlib.md5(str(number).encode()).hexdigest()


Tree = tuple[Any, ...]
rows = st.integers(min_value=0, max_value=ROWS + 500)
leaves: st.SearchStrategy[Tree] = st.one_of(
    st.tuples(st.just("="), st.sampled_from(BLOOMS), rows),
    st.tuples(st.just("<=>"), st.sampled_from(BLOOMS), rows),
    st.tuples(st.just("in"), st.sampled_from(BLOOMS), st.lists(rows, min_size=1, max_size=4)),
    st.tuples(st.just("k"), rows),
    st.tuples(st.just("n >"), rows),
)
trees: st.SearchStrategy[Tree] = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.tuples(st.sampled_from(["AND", "OR"]), inner, inner),
        st.tuples(st.just("NOT"), inner),
    ),
    max_leaves=4,
)


def sql(tree: Tree) -> str:
    kind = tree[0]
    if kind in ("=", "<=>"):
        return f"{tree[1]} {kind} {literal(tree[1], tree[2])}"
    if kind == "in":
        return f"{tree[1]} IN ({', '.join(literal(tree[1], i) for i in tree[2])})"
    if kind == "k":
        return f"k = {tree[1] % 50}"
    if kind == "n >":
        return f"n > {tree[1] * 1000003}"
    if kind == "NOT":
        return f"NOT ({sql(tree[1])})"
    return f"({sql(tree[1])}) {kind} ({sql(tree[2])})"


def matching_files(spark: SparkSession, path: str, where: str) -> dict[str, int]:
    """Spark's count of the filter's rows in each file of the table (none: no entry)."""
    uris = DeltaTable(path).file_uris()
    counted = (
        spark.read.parquet(*uris)
        .where(where)
        .groupBy(F.input_file_name().alias("file"))
        .count()
        .collect()
    )
    return {str(row["file"]).removeprefix("file://"): int(row["count"]) for row in counted}


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(tree=trees)
def test_probing_keeps_every_file_with_a_match_and_reads_sparks_rows(
    spark: SparkSession, table: str, tree: Tree
) -> None:
    where = sql(tree)
    expected = matching_files(spark, table, where)
    scan = zorder.scan(table, where)
    kept = {str(Path(table) / f.path) for f in scan.files}
    assert set(expected) <= kept, f"{where}: a file with a match was dropped"
    assert zorder.read(spark, table, where).count() == sum(expected.values())
    with contextlib.suppress(UnsupportedFilterError):  # a refusal (binary, in process) is fine
        assert scan.to_arrow().num_rows == sum(expected.values())


@pytest.mark.compat
def test_lookups_keep_about_the_files_that_hold_them(spark: SparkSession, table: str) -> None:
    clear_cache()
    # The columns whose values k does not decide: a file's day and raw follow its k, so
    # the statistics rule files out on them first.
    for column in ("sid", "n", "amount", "at"):
        where = f"{column} = {literal(column, 1234)}"
        report = zorder.explain(table, where)
        holding = len(matching_files(spark, table, where))
        assert report.bloom is not None
        # The clustering column k says nothing of these: min/max keep every file...
        assert report.files_scanned + report.files_bloom_skipped == 12
        # ...and the filters (1% false positives) leave about those holding the value.
        assert holding <= report.files_scanned <= holding + 2, (column, report.summary())
    cached = zorder.explain(table, f"sid = {literal('sid', 1234)}")
    assert cached.bloom is not None
    assert cached.bloom.requests == 0  # every filter came from the process's cache
    assert "statistics ruled out 0 files, bloom filters" in cached.summary()


def test_nothing_is_probed_where_it_cannot_help(spark: SparkSession, table: str) -> None:
    for where in ("k = 3", "n > 5", f"sid = {literal('sid', 3)} OR k = 3", "sid IS NULL"):
        report = zorder.explain(table, where)
        assert report.bloom is None, where
        assert report.files_bloom_skipped == 0


def test_a_table_without_filters_in_its_spec_is_not_probed(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "plain")
    zorder.write(frame(spark), path, by=["k"], num_files=4)
    report = zorder.explain(path, f"sid = {literal('sid', 5)}")
    assert report.bloom is None
    assert report.files_scanned == 4
