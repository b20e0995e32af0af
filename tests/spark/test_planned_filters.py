"""Filters as users write them: constants spelled as expressions skip like computed ones.

A Z-ordered table of 40 files (a date, a second date, an int, a decimal and a
string); each filter of the issue's list, in the spelling users write, must
keep exactly the files its hand-computed twin keeps, and read Spark's rows.
"""

from __future__ import annotations

import datetime as dt
import decimal
import random
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession

import zorder

# (as users write it, with its constants computed by hand)
SPELLED = [
    ("d >= date '2024-06-01' - interval '7' day", "d >= date '2024-05-25'"),
    ("d >= date_sub(date '2024-06-01', 7)", "d >= date '2024-05-25'"),
    ("d < date_add(date '2024-03-01', 10)", "d < date '2024-03-11'"),
    ("d < date '2024-01-31' + interval '1' month", "d < date '2024-02-29'"),
    ("d >= add_months(date '2024-03-31', -1)", "d >= date '2024-02-29'"),
    ("d = to_date('2024-04-02')", "d = date '2024-04-02'"),
    ("d < date '2024-03-01' + 30", "d < date '2024-03-31'"),
    ("x > 1000 + 500", "x > 1500"),
    ("x between 10 * 10 and 20 * 10", "x between 100 and 200"),
    ("price < 0.06 + 0.01", "price < 0.07"),
    (
        "d in (date '2024-03-01' + interval '2' day, make_date(2024, 5, 5))",
        "d in (date '2024-03-03', date '2024-05-05')",
    ),
    ("s = concat('K', '17')", "s = 'K17'"),
]


@pytest.fixture(scope="module")
def written(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, DataFrame]:
    """The table's path and its rows as Spark holds them (the reference)."""
    rng = random.Random(32)
    start = dt.date(2024, 1, 1)
    rows = []
    for _ in range(4000):
        # price follows x and s follows d, so filters on them skip on a (d, x) layout too.
        d = start + dt.timedelta(days=rng.randint(0, 180))
        x = rng.randint(0, 5000)
        second = start + dt.timedelta(days=rng.randint(0, 240))
        rows.append((d, second, x, decimal.Decimal(x).scaleb(-3), f"K{(d - start).days // 5}"))
    frame = spark.createDataFrame(rows, "d date, d2 date, x int, price decimal(12,2), s string")
    path = str(Path(tmp_path_factory.mktemp("planned")) / "t")
    zorder.write(frame, path, by=["d", "x"], num_files=40)
    return path, frame.cache()


def _kept(path: str, where: str) -> list[str]:
    return sorted(f.path for f in zorder.scan(path, where).files)


@pytest.mark.parametrize(("spelled", "computed"), SPELLED)
def test_spelled_constants_skip_as_computed_ones(
    spark: SparkSession, written: tuple[str, DataFrame], spelled: str, computed: str
) -> None:
    table, rows = written
    kept = _kept(table, computed)
    assert len(kept) < 40, f"{computed} skips nothing: the table does not test this filter"
    assert _kept(table, spelled) == kept
    expected = rows.where(computed).count()
    assert zorder.read(spark, table, spelled).count() == expected
    assert zorder.to_arrow(table, spelled).num_rows == expected


def test_the_clock_is_read_once_and_skips(
    spark: SparkSession, written: tuple[str, DataFrame]
) -> None:
    table, rows = written
    today = dt.date.today()
    offset = (today - dt.date(2024, 3, 1)).days
    where = f"d <= current_date() - {offset} AND d > current_date - {offset + 10}"
    report = zorder.explain(table, where)
    assert report.files_scanned < report.files_total
    assert "current_date" not in report.planned.lower()
    expected = rows.where(where).count()
    assert zorder.read(spark, table, where).count() == expected
