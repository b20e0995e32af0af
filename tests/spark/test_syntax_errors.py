"""A filter that does not parse is a syntax error at the token Spark names, before any read."""

from __future__ import annotations

import re

import pytest
from pyspark.sql import SparkSession

from zorder.errors import FilterParseError
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


@pytest.mark.parametrize("where", ["a = 'x", "a = `x", 's = "x'])
def test_an_open_quote_is_a_syntax_error(where: str) -> None:
    with pytest.raises(FilterParseError, match="is not closed"):
        parse_filter(where)
