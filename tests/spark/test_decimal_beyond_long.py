"""An integral column ordered against a decimal beyond BIGINT's range, against Spark.

Spark's analyzer (DecimalPrecision) makes ``l > 9223372036854775808`` the constant
FALSE, NULL rows included, where the decimal is written as a literal; a decimal it
computes (``-(9223372036854775809)``, a CAST) goes through UnwrapCastInBinaryComparison,
which keeps NULL. ``+9223372036854775808`` is an expression too (UnaryPositive) and
``…BD`` a literal, which sqlglot's parse does not tell apart from a CAST (refused).
The long fuzz profile found ``to_arrow`` dropping the NULL rows of
``NOT (l > 9223372036854775808)``. Every answer here is Spark's, or a refusal; a
file whose ``l`` is all NULL is never skipped wrongly.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

import zorder
from zorder.errors import ZorderError

pytestmark = [pytest.mark.spark, pytest.mark.compat]

LITERALS = [
    "9223372036854775808",
    "+9223372036854775808",  # UnaryPositive: an expression, not a literal
    "9223372036854775808BD",  # a literal (sqlglot reads it as a CAST: refused)
    "-9223372036854775809",
    "9223372036854775808.5",
    "-(9223372036854775809)",
    "CAST(9223372036854775808 AS DECIMAL(20,0))",
    "3000000000",
]
FORMS = ["NOT ({})", "({}) IS NULL", "{}", "NOT (TRUE AND ({}))"]


@pytest.mark.parametrize("ansi", [True, False], ids=["ansi", "ansi_off"])
def test_answers_are_sparks(spark: SparkSession, tmp_path: Path, ansi: bool) -> None:
    rows = [(1, 1, "a"), (None, None, "b"), (5, 5, "c"), (None, 3, "d")]
    df = spark.createDataFrame(rows, "l bigint, i int, s string")
    path = str(tmp_path / "t")
    # Clustered by l: its NULLs sort first, into a file of their own.
    zorder.write(df.coalesce(1), path, by=["l"], num_files=3, engine="spark")
    assert any(f.rows and "l" not in f.min_values for f in zorder.describe(path).files)
    previous = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", str(ansi).lower())
    answered = 0
    try:
        for column, op, literal, form in itertools.product(
            ["l", "i"], ["<", ">="], LITERALS, FORMS
        ):
            where = form.format(f"{column} {op} {literal}")
            try:
                expected = df.where(where).count()
            except Exception:  # Spark's refusal: nothing to compare
                continue
            assert zorder.read(spark, path, where).count() == expected, where
            try:
                got = zorder.to_arrow(path, where, ansi=ansi).num_rows
            except ZorderError:
                continue  # a refusal is allowed
            assert got == expected, where
            answered += 1
    finally:
        spark.conf.set("spark.sql.ansi.enabled", str(previous))
    assert answered > 50  # refusals stay the exception
