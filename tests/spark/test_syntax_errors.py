"""Mistakes in a filter, named as Spark names them: a syntax error at the token Spark names,
and a malformed date or timestamp literal as Spark's CAST_INVALID_INPUT, before any read."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake
from pyspark.sql import SparkSession

import zorder
from zorder.errors import FilterEvaluationError, FilterParseError
from zorder.skipping.sql import parse_filter

pytestmark = pytest.mark.spark

TYPOS = [
    "ip = 10.1.2.3",  # the quotes forgotten
    "day = ",
    "(a = 1",
    "a = 1 2",
    "a = = 1",
    "a >< 1",
]


@pytest.mark.parametrize("where", TYPOS)
def test_a_typo_is_the_syntax_error_spark_reports(spark: SparkSession, where: str) -> None:
    frame = spark.range(1).selectExpr("id AS a", "'x' AS day", "'1' AS ip")
    frame.createOrReplaceTempView("typos")
    with pytest.raises(Exception, match="PARSE_SYNTAX_ERROR") as spark_error:
        spark.sql(f"SELECT * FROM typos WHERE {where}").collect()
    spark_near = re.search(
        r"Syntax error at or near (end of input|'[^']*')", str(spark_error.value)
    )
    assert spark_near is not None
    with pytest.raises(FilterParseError, match="syntax error in filter") as ours:
        parse_filter(where)
    assert f"at or near {spark_near.group(1)}" in str(ours.value)


@pytest.mark.parametrize(
    ("where", "type_name"),
    [
        ("ts > '2026-13-01'", "TIMESTAMP"),
        ("ts <= '2026-02-30 10:00:00'", "TIMESTAMP"),
        ("d = '2026-04-31'", "DATE"),
    ],
)
def test_a_malformed_date_is_spark_s_cast_invalid_input_in_process(
    spark: SparkSession, ansi_on: None, tmp_path: Path, where: str, type_name: str
) -> None:
    """With ANSI's meaning Spark raises CAST_INVALID_INPUT for the literal; to_arrow names the
    same error in process instead of sending the user to Spark."""
    path = str(tmp_path / "t")
    write_deltalake(
        path,
        pa.table(
            {
                "ts": pa.array([dt.datetime(2026, 1, 1, tzinfo=dt.UTC)], pa.timestamp("us", "UTC")),
                "d": pa.array([dt.date(2026, 1, 1)]),
            }
        ),
    )
    with pytest.raises(Exception, match="CAST_INVALID_INPUT"):
        zorder.read(spark, path, where).collect()
    with pytest.raises(FilterEvaluationError, match=f'CAST_INVALID_INPUT.*"{type_name}"'):
        zorder.to_arrow(path, where, ansi=True)
