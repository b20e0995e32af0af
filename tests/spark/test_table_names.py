"""Tables by name (issue 58, item 6): a catalog identifier resolved through the session.

The session is the tests' own, with Delta's extension and catalog; the names live in a
database created here at a temporary location, so managed locations fall under it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession

import zorder
from tests.spark.helpers import spark_rows

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def database(delta: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("catalog")
    delta.sql(f"CREATE DATABASE zorder_names LOCATION '{root}'")
    try:
        yield "zorder_names"
    finally:
        delta.sql("DROP DATABASE zorder_names CASCADE")


def rows(spark: SparkSession, start: int, count: int) -> DataFrame:
    return spark.range(start, start + count).selectExpr(
        "id", "CAST(pmod(id * 7919, 1000) AS INT) AS a", "CAST(pmod(id * 31, 1000) AS INT) AS b"
    )


def test_a_name_is_created_read_appended_and_optimized(delta: SparkSession, database: str) -> None:
    name = f"{database}.events"
    first = zorder.write(rows(delta, 0, 2000), name, by=["a", "b"], num_files=4)
    assert first.files_added == 4
    detail = {str(r[0]): str(r[1]) for r in delta.sql(f"DESCRIBE TABLE EXTENDED {name}").collect()}
    assert detail["Provider"].lower() == "delta"
    assert detail["Location"].rstrip("/").endswith("/events")  # where a managed table goes
    assert spark_rows(delta.table(name)) == spark_rows(rows(delta, 0, 2000))

    zorder.write(rows(delta, 2000, 500), name, mode="append")
    expected = spark_rows(rows(delta, 0, 2500))
    assert spark_rows(delta.table(name)) == expected
    assert spark_rows(zorder.read(delta, name)) == expected
    where = "a < 100 AND b < 100"
    assert spark_rows(zorder.read(delta, name, where)) == spark_rows(delta.table(name).where(where))
    report = zorder.explain(name, where, spark=delta)
    assert report.files_scanned < report.files_total
    zorder.optimize(delta, name)
    assert spark_rows(delta.table(name)) == expected
    assert zorder.describe(name).spec is not None  # the active session resolves it
    assert zorder.Table(name, spark=delta).name == name
    assert zorder.to_arrow(name, where).num_rows == delta.table(name).where(where).count()


def test_a_new_name_at_a_location_is_an_external_table(
    delta: SparkSession, database: str, tmp_path: Path
) -> None:
    name = f"{database}.outside"
    zorder.write(rows(delta, 0, 300), name, by=["a"], location=str(tmp_path / "t"))
    detail = {str(r[0]): str(r[1]) for r in delta.sql(f"DESCRIBE TABLE EXTENDED {name}").collect()}
    assert detail["Type"].upper() == "EXTERNAL"
    assert detail["Location"].rstrip("/").endswith(str(tmp_path / "t"))
    assert delta.table(name).count() == 300


def test_names_that_are_no_delta_table_are_refused_clearly(
    delta: SparkSession, database: str, tmp_path: Path
) -> None:
    with pytest.raises(zorder.errors.TableNotFoundError, match="has no table named"):
        zorder.read(delta, f"{database}.missing")
    delta.sql(f"CREATE TABLE {database}.plain (a INT) USING parquet")
    with pytest.raises(zorder.errors.UnsupportedTableError, match="parquet table"):
        zorder.explain(f"{database}.plain", "a = 1", spark=delta)
    with pytest.raises(zorder.errors.InvalidArgumentError, match="location= is for a new table"):
        zorder.write(rows(delta, 0, 10), str(tmp_path / "p"), by=["a"], location="elsewhere")
