"""Generated filters, checked against Spark itself: a refusal is allowed, a wrong count never.

Each filter is drawn over every type Delta stores, in the spellings Spark's
parser accepts (``1e0``, ``5D``, ``5BD``, ``5L``, ``5S``, ``5Y``, ``1.5F``,
casts, unary minus, strings Spark casts, typed DATE/TIMESTAMP literals),
with every operator, NULLs, NOT and AND/OR nesting, and values at the edges
(2^53, 38-digit decimals, LIKE metacharacters, NaN), and functions of one column
that skipping reads on the column (``year(t)``, ``CAST(t AS DATE)``,
``date_trunc``, ``l + 1``, ``left(s, 2)``, ...). For each one:

- Spark's answer: the count of the table's rows matching it, and the files
  that hold them (the table's files read one by one, cached once);
- ``zorder.read`` must give the same count (so no file holding a match was
  skipped), or raise where Spark raised;
- ``zorder.scan``'s kept files (what ``explain`` reports) must include every
  file holding a match;
- ``to_arrow`` must give the same count, or refuse with a ZorderError.

Every generated test runs twice: in a session with ANSI mode on (Spark 4.x's
default) and with it off (Spark 3.5's), Spark's answer in that mode the
oracle, and ``to_arrow`` asked for that mode's meaning (``ansi=``). The
filters include spellings whose meaning differs between the modes (strings
Spark casts otherwise, IN lists of strings and numbers, arithmetic that
overflows, casts that fail, division by zero): with ANSI off skipping must
keep what they might match and ``to_arrow(ansi=False)`` answer Spark's rows or
refuse. Strings against dates and timestamps (valid ones around New York's DST
changes, with ``T``, spaces and zones, and ones Spark does not parse) run in a
session zone of America/New_York.

``ZORDER_FUZZ_EXAMPLES`` sets how many filters each table gets (the long
profile: thousands); ``make test`` runs a quick one.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import math
import os
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    ByteType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

import zorder
from zorder.api.cluster import chosen_here
from zorder.api.context import Context
from zorder.columns import match_column
from zorder.errors import FilterEvaluationError, UnsupportedFilterError, ZorderError
from zorder.skipping.ansi import ANSI_SETTING
from zorder.skipping.rows import exact_predicate
from zorder.skipping.sql import parse_filter, parse_unfolded, referenced_columns
from zorder.spark.compat import PYSPARK_VERSION
from zorder.spark.guard import check_spark_parse
from zorder.spark.scan import read_files
from zorder.spark.settings import session_ansi
from zorder.spark.writes import chosen_by_spark
from zorder.table import Storage, TableSnapshot, load_snapshot

pytestmark = pytest.mark.spark

EXAMPLES = int(os.environ.get("ZORDER_FUZZ_EXAMPLES", "25"))
# Each mode's outcomes (ANSI on or off, what happened), written to the file
# ZORDER_FUZZ_REPORT names, if any, when the module ends.
OUTCOMES: Counter[tuple[bool, str]] = Counter()
FILE_INDEX = "__fuzz_file"

SCHEMA = StructType(
    [
        StructField("b", ByteType()),
        StructField("sm", ShortType()),
        StructField("i", IntegerType()),
        StructField("l", LongType()),
        StructField("f", FloatType()),
        StructField("x", DoubleType()),
        StructField("m", DecimalType(38, 10)),
        StructField("n", DecimalType(6, 2)),
        StructField("s", StringType()),
        StructField("d", DateType()),
        StructField("t", TimestampType()),
        StructField("tn", TimestampNTZType()),
        StructField("bo", BooleanType()),
        StructField("p", StringType()),
    ]
)
TWO_53 = 2**53
INTEGRAL_RANGES = {
    "b": (-128, 127),
    "sm": (-(2**15), 2**15 - 1),
    "i": (-(2**31), 2**31 - 1),
    "l": (-(2**63), 2**63 - 1),
}
BIG_DECIMALS = [
    decimal.Decimal("9999999999999999999999999999.9999999999"),
    decimal.Decimal("-9999999999999999999999999999.9999999999"),
    decimal.Decimal("-1234567890123456789.0123456789"),
    decimal.Decimal("0.1234567890"),
    decimal.Decimal("12345678901234567890123456.5000000000"),
]
STRINGS = ["k000", "k0001", "k00", "k1", "a%b", "a_b", "a\\b", "", "é", "中文", "z" * 40]


def _values(rng: random.Random) -> dict[str, Any]:
    def maybe(value: Any) -> Any:
        return None if rng.random() < 0.08 else value

    near = [TWO_53 - 1, TWO_53, TWO_53 + 1, -TWO_53 - 1]
    return {
        "b": maybe(rng.choice([-128, 127, 0, rng.randint(-128, 127)])),
        "sm": maybe(rng.randint(-(2**15), 2**15 - 1)),
        "i": maybe(rng.choice([-(2**31), 2**31 - 1, 16_777_217, rng.randint(-1000, 1000)])),
        "l": maybe(rng.choice([*near, 2**63 - 1, -(2**63), rng.randint(-(10**6), 10**6)])),
        "f": maybe(rng.choice([1.1, -0.0, math.nan, math.inf, 16_777_216.0, rng.uniform(-9, 9)])),
        "x": maybe(
            rng.choice([0.1, 1e300, -math.inf, math.nan, -0.0, float(TWO_53), rng.gauss(0, 9)])
        ),
        "m": maybe(
            rng.choice([*BIG_DECIMALS, decimal.Decimal(rng.randint(-(10**9), 10**9)).scaleb(-4)])
        ),
        "n": maybe(decimal.Decimal(rng.randint(-99_999, 99_999)).scaleb(-2)),
        "s": maybe(rng.choice([*STRINGS, f"k{rng.randint(0, 999):03d}"])),
        "d": maybe(dt.date(2024, 1, 1) + dt.timedelta(days=rng.randint(-400, 400))),
        "t": maybe(
            dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
            + dt.timedelta(seconds=rng.randint(-(10**7), 10**7), microseconds=rng.randint(0, 999))
        ),
        "tn": maybe(dt.datetime(2024, 3, 10, 2, 30) + dt.timedelta(hours=rng.randint(-500, 500))),
        "bo": maybe(rng.random() < 0.5),
        "p": rng.choice(["a", "b", "c d", "e%f"]),
    }


ROWS = [_values(random.Random(seed)) for seed in range(900)]


@dataclass(frozen=True)
class Fuzzed:
    """A table zorder wrote, and Spark's view of its rows, file by file."""

    path: str
    rows: DataFrame  # every row, with the index of the file holding it
    files: list[str]  # the log's paths, by index


def _fuzzed(spark: SparkSession, path: Path, partition_by: list[str] | None) -> Fuzzed:
    source = spark.createDataFrame([tuple(r[f.name] for f in SCHEMA) for r in ROWS], SCHEMA)
    zorder.write(source, str(path), by=["l", "s", "m"], num_files=12, partition_by=partition_by)
    snapshot = load_snapshot(Storage.of(path))
    count = len(snapshot.files)
    frames = []
    for index in range(count):
        keep = np.zeros(count, dtype=bool)
        keep[index] = True
        frames.append(read_files(snapshot, spark, keep).withColumn(FILE_INDEX, F.lit(index)))
    rows = frames[0]
    for frame in frames[1:]:
        rows = rows.unionByName(frame)
    rows = rows.cache()
    # The file-by-file view is the source's rows exactly (else it could not judge).
    assert rows.drop(FILE_INDEX).exceptAll(source).count() == 0
    assert source.exceptAll(rows.drop(FILE_INDEX)).count() == 0
    return Fuzzed(str(path), rows, [f.path for f in snapshot.files])


@pytest.fixture(scope="module", autouse=True)
def _report_outcomes() -> Iterator[None]:
    yield
    report = os.environ.get("ZORDER_FUZZ_REPORT")
    if report:
        lines = [f"{'ansi' if a else 'ansi_off'} {what}: {n}" for (a, what), n in OUTCOMES.items()]
        Path(report).write_text("\n".join(sorted(lines)) + "\n")


@pytest.fixture(scope="module", autouse=True)
def _no_cache_pruning(spark: SparkSession) -> Iterator[None]:
    """Spark's answer comes from cached rows, and Spark 4.1 prunes cached batches wrongly
    for NaN (a cached float NaN does not match ``f = CAST('NaN' AS DOUBLE)``; uncached it
    does): the oracle reads every batch."""
    key = "spark.sql.inMemoryColumnarStorage.partitionPruning"
    previous = spark.conf.get(key, None)
    spark.conf.set(key, "false")
    yield
    if previous is None:
        spark.conf.unset(key)
    else:
        spark.conf.set(key, previous)


@contextlib.contextmanager
def ansi_mode(spark: SparkSession, enabled: bool) -> Iterator[None]:
    """The shared session with ANSI mode ``enabled`` for the block, as it was after."""
    previous = spark.conf.get(ANSI_SETTING)
    assert previous is not None  # set by default
    spark.conf.set(ANSI_SETTING, "true" if enabled else "false")
    try:
        yield
    finally:
        spark.conf.set(ANSI_SETTING, previous)


@pytest.fixture(params=[True, False], ids=["ansi", "ansi_off"])
def ansi(request: pytest.FixtureRequest, spark: SparkSession) -> Iterator[bool]:
    """Each test once with ANSI mode on and once with it off."""
    with ansi_mode(spark, request.param):
        yield request.param


@pytest.fixture
def ansi_on(spark: SparkSession) -> Iterator[None]:
    """ANSI mode on, whatever the session's default (off on Spark 3.5)."""
    with ansi_mode(spark, True):
        yield


@pytest.fixture(scope="module")
def unpartitioned(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Fuzzed:
    return _fuzzed(spark, tmp_path_factory.mktemp("fuzz") / "flat", None)


@pytest.fixture(scope="module")
def partitioned(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Fuzzed:
    return _fuzzed(spark, tmp_path_factory.mktemp("fuzz") / "by p", ["p"])


# ---------------------------------------------------------------------------------------
# Literals as users spell them


def _quoted(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _integer_spellings(v: int) -> list[str]:
    spellings = [str(v), f"{v}D", f"{v}BD", f"{v}.0", f"{v}e0", _quoted(str(v))]
    if -(2**63) <= v < 2**63:
        spellings += [f"{v}L", f"CAST({v} AS BIGINT)"]
    if -(2**15) <= v < 2**15:
        spellings.append(f"{v}S")
    if -128 <= v < 128:
        spellings.append(f"{v}Y")
    if -(2**31) <= v < 2**31:
        spellings.append(f"CAST({_quoted(str(v))} AS INT)")
    return spellings


def _decimal_spellings(v: decimal.Decimal) -> list[str]:
    text = format(v, "f")
    return [
        text if v >= 0 else f"-{format(-v, 'f')}",
        f"{text}BD",
        f"{text}D",
        f"CAST({_quoted(text)} AS DECIMAL(38,10))",
        f"CAST({_quoted(text)} AS DECIMAL(6,1))",
        f"{text}F",
        _quoted(text),
    ]


def _double_spellings(v: float) -> list[str]:
    if math.isnan(v) or math.isinf(v):
        word = "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
        return [f"CAST('{word}' AS DOUBLE)", f"CAST('{word}' AS FLOAT)"]
    return [f"{v!r}D", f"{v:.17e}", repr(v) if "e" in repr(v) else f"{v!r}", f"{v!r}F"]


def _date_spellings(v: dt.date) -> list[str]:
    text = v.isoformat()
    return [
        f"DATE'{text}'",
        _quoted(text),
        f"TIMESTAMP'{text} 00:00:00'",
        f"CAST({_quoted(text)} AS DATE)",
        _quoted(f"{text} 10:00"),
        _quoted(f"{v.year}-{v.month}-{v.day}"),
    ]


def _timestamp_spellings(v: dt.datetime) -> list[str]:
    if v.tzinfo is not None:
        v = v.astimezone(dt.UTC).replace(tzinfo=None)
    text = v.isoformat(sep=" ")
    return [
        f"TIMESTAMP'{text}'",
        f"TIMESTAMP'{text}+00:00'",
        _quoted(text),
        f"TIMESTAMP_NTZ'{text}'",
        f"DATE'{v.date().isoformat()}'",
    ]


def _spellings(value: Any) -> list[str]:
    if isinstance(value, bool):
        return ["TRUE" if value else "FALSE", _quoted(str(value).lower())]
    if isinstance(value, int):
        return _integer_spellings(value)
    if isinstance(value, decimal.Decimal):
        return _decimal_spellings(value)
    if isinstance(value, float):
        return _double_spellings(value)
    if isinstance(value, dt.datetime):
        return _timestamp_spellings(value)
    if isinstance(value, dt.date):
        return _date_spellings(value)
    if isinstance(value, str):
        return [_quoted(value)]
    raise AssertionError(value)


EXTRA_VALUES: dict[str, list[Any]] = {
    "b": [128, -129, 5, 1],
    "sm": [40_000, 3],
    "i": [16_777_216, 2**31, 5],
    "l": [TWO_53, TWO_53 + 1, 2**63, 12_345_678_901_234_567_890_123_456_789_012],
    "f": [1.1, 16_777_216.0, 1.5],
    "x": [0.1, float(TWO_53 + 2), math.nan],
    "m": [*BIG_DECIMALS, decimal.Decimal("0.1234567890123456789012345678901234567")],
    "n": [decimal.Decimal("1.005"), decimal.Decimal("-999.99"), 5],
    "s": ["k000", "k0", "a%", "a\\", "zzzz"],
    "d": [dt.date(2024, 1, 1), dt.date(2023, 12, 31)],
    "t": [dt.datetime(2024, 1, 1, tzinfo=dt.UTC)],
    "tn": [dt.datetime(2024, 3, 10, 2, 30)],
    "bo": [True, False],
    "p": ["a", "c d", "e%f"],
}
COLUMNS = [f.name for f in SCHEMA]


@st.composite
def literals(draw: st.DrawFn, column: str) -> str:
    if draw(st.integers(0, 19)) == 0:
        return "NULL"
    pool = [r[column] for r in ROWS[:60] if r[column] is not None] + EXTRA_VALUES[column]
    if draw(st.integers(0, 5)) == 0:  # a value of another column's type
        other = draw(st.sampled_from(COLUMNS))
        pool = [r[other] for r in ROWS[:20] if r[other] is not None]
    value = draw(st.sampled_from(pool))
    return draw(st.sampled_from(_spellings(value)))


COMPARISONS = ["=", "==", "<=>", "!=", "<>", "<", "<=", ">", ">="]


@st.composite
def leaves(draw: st.DrawFn) -> str:
    column = draw(st.sampled_from(COLUMNS))
    name = draw(st.sampled_from([column, column.upper(), f"`{column}`"]))
    kind = draw(st.integers(0, 16))
    if kind >= 15:
        return draw(mode_leaves())
    if kind >= 12:
        return draw(function_leaves())
    lit = literals(column)
    if kind <= 3:
        op, value = draw(st.sampled_from(COMPARISONS)), draw(lit)
        return f"{value} {op} {name}" if draw(st.booleans()) else f"{name} {op} {value}"
    if kind == 4:
        negated = draw(st.sampled_from(["", "NOT "]))
        return f"{name} {negated}BETWEEN {draw(lit)} AND {draw(lit)}"
    if kind == 5:
        negated = draw(st.sampled_from(["", "NOT "]))
        items = draw(st.lists(lit, min_size=1, max_size=4))
        return f"{name} {negated}IN ({', '.join(items)})"
    if kind == 6:
        return f"{name} IS {draw(st.sampled_from(['', 'NOT ']))}NULL"
    if kind == 7:
        negated = draw(st.sampled_from(["", "NOT "]))
        return f"{name} IS {negated}DISTINCT FROM {draw(lit)}"
    if kind == 8:
        value = draw(st.sampled_from([*STRINGS, "k0", "a"]))
        pattern = draw(st.sampled_from([value, value + "%", value[:2] + "_%", "%" + value]))
        operator = draw(st.sampled_from(["LIKE", "NOT LIKE", "ILIKE", "NOT ILIKE", "RLIKE"]))
        target = draw(st.sampled_from(["s", "s", "p", "i"]))
        return f"{target} {operator} {_quoted(pattern)}"
    if kind == 9:
        return f"{draw(st.sampled_from(['', 'NOT ']))}isnan({draw(st.sampled_from(['x', 'f']))})"
    if kind == 10:
        cast = draw(st.sampled_from(["BIGINT", "DOUBLE", "DECIMAL(38,2)", "STRING", "DATE"]))
        op = draw(st.sampled_from(COMPARISONS))
        return f"CAST({name} AS {cast}) {op} {draw(lit)}"
    return draw(st.sampled_from(["TRUE", "FALSE", "NOT TRUE", f"{name} = NULL"]))


DAY_UNITS = ["YEAR", "yy", "QUARTER", "MONTH", "mm", "mon", "WEEK", "DAY", "dd", "HOUR", "x"]
MONTH_STARTS = [dt.date(2023, m, 1) for m in (1, 3, 12)] + [dt.date(2024, m, 1) for m in (1, 4, 7)]


@st.composite
def day_literals(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 24)) == 0:
        return "NULL"
    pool = [r["d"] for r in ROWS[:40] if r["d"] is not None] + MONTH_STARTS
    value = draw(st.sampled_from(pool))
    return draw(st.sampled_from(_spellings(value)))


@st.composite
def function_leaves(draw: st.DrawFn) -> str:
    """A function of one column compared with a constant: the forms file skipping reads
    on the column itself (skipping/monotone.py), and some it must leave alone."""
    op = draw(st.sampled_from(COMPARISONS))
    kind = draw(st.integers(0, 4))
    if kind == 0:  # days of dates and timestamps
        c = draw(st.sampled_from(["d", "t", "tn", "t", "d", "s"]))
        n = draw(st.sampled_from([0, 1, -2, 31]))
        unit = draw(st.sampled_from(DAY_UNITS))
        side = draw(
            st.sampled_from(
                [
                    f"CAST({c} AS DATE)",
                    f"to_date({c})",
                    f"date({c})",
                    f"date_trunc('{unit}', {c})",
                    f"trunc({c}, '{unit}')",
                    f"date_add({c}, {n})",
                    f"date_sub({c}, {n})",
                    f"{c} + INTERVAL '{n}' DAY",
                    f"{c} - INTERVAL {n} DAYS",
                ]
            )
        )
        value = draw(day_literals())
    elif kind == 1:  # years, and months or quarters under a year
        c = draw(st.sampled_from(["d", "t", "tn"]))
        year = draw(st.sampled_from(["2023", "2024", "2025", "2024L", "2024.5", "'2024'"]))
        if draw(st.booleans()):
            return f"year({c}) {op} {year}"
        field = draw(st.sampled_from(["month", "quarter"]))
        number = draw(st.sampled_from(["1", "2", "3", "4", "12", "0", "13", "2.5"]))
        terms = [f"year({c}) {draw(st.sampled_from(['=', '<=>']))} {year}"]
        terms.append(f"{field}({c}) {op} {number}")
        return " AND ".join(terms if draw(st.booleans()) else terms[::-1])
    elif kind == 2:  # sums with constants
        c = draw(st.sampled_from(["b", "sm", "i", "l", "n", "m", "x", "f"]))
        k = draw(st.sampled_from(["1", "-5", "0.5", "1000", "2.25BD", "1L", "1Y", "1e0"]))
        side = draw(st.sampled_from([f"{c} + {k}", f"{k} + {c}", f"{c} - {k}", f"{k} - {c}"]))
        value = draw(literals(c))
    else:  # prefixes of strings
        c = draw(st.sampled_from(["s", "s", "p", "i"]))
        n = draw(st.sampled_from([1, 2, 3, 4, 0]))
        side = draw(st.sampled_from([f"substring({c}, 1, {n})", f"substr({c}, 0, {n})"]))
        side = draw(st.sampled_from([side, f"left({c}, {n})"]))
        text = draw(st.sampled_from([*STRINGS, "k0", "k00", "k000", "a", "中", "é"]))
        value = _quoted(draw(st.sampled_from([text, text[:n], text + "0"])))
    return f"{value} {op} {side}" if draw(st.booleans()) else f"{side} {op} {value}"


NUMBERS = ["b", "sm", "i", "l", "n", "m", "x", "f"]
FLOATS_AND_INTEGERS = [
    "i = 16777217F",
    "l = 9007199254740993F",
    "l IN (1, 1.5F)",
    "f = 16777217",
    "f IN (16777217, 1)",
    "sm < 1.5F",
]
NUMBER_TEXTS = [
    *["5.7", "-0.5", " 5 ", "1e2", "abc", "300", "2147483648", "0", "-128", "1.0", "5"],
    *[".5", "+5", "5.", "-5.9", "0.1", "NaN", "-Infinity", "1.10", "16777217"],
]
LIST_ITEMS = ["'5'", "5", "'05'", "5.0", "'k000'", "'2024-01-01'", "DATE'2024-01-01'", "1", "NULL"]
EDGES = [
    ("b", "127Y"),
    ("sm", "32767S"),
    ("i", "2147483647"),
    ("l", "9223372036854775807L"),
    ("n", "9999.99"),
    ("m", "9999999999999999999999999999.9999999999BD"),
]
CAST_TARGETS = {
    "INT": "1",
    "TINYINT": "0",
    "BIGINT": "1",
    "DECIMAL(6,2)": "0",
    "DATE": "DATE'2024-01-01'",
    "BOOLEAN": "TRUE",
    "TIMESTAMP": "TIMESTAMP'2024-01-01 00:00:00'",
}
RAISING = [
    "i / 0 IS NULL",
    "l % 0 IS NULL",
    "x / 0 > 1",
    "n / 0 IS NULL",
    "i div 0 IS NULL",
    "i / (l - l) IS NULL",
    "to_date(s) IS NULL",
    "to_date(p, 'yyyy-MM-dd') IS NULL",
    "make_date(2024, 2, b) IS NULL",
    "element_at(array(1, 2), i) IS NULL",
    "abs(i) < 0",
    "-l < 0",
    "d = 'abc'",
    "d > '2024-1-1'",
    "t > '2024-01-01'",
    "tn <= '2024-03-10 02:30:00'",
    "t < 'abc'",
    "bo = 'yes'",
    "s = 5",
    "s > 1.5",
    *FLOATS_AND_INTEGERS,
]


@st.composite
def mode_leaves(draw: st.DrawFn) -> str:
    """Spellings whose meaning differs with ANSI mode off: strings Spark casts another way,
    IN lists widened to strings, arithmetic that overflows, casts that fail, functions and
    divisions that raise with ANSI on and answer NULL with it off."""
    op = draw(st.sampled_from(COMPARISONS))
    kind = draw(st.integers(0, 4))
    if kind == 0:  # a string against a number: cast to the column's type, or to a double
        column, text = draw(st.sampled_from(NUMBERS)), draw(st.sampled_from(NUMBER_TEXTS))
        return f"{column} {op} {_quoted(text)}"
    if kind == 1:
        column = draw(st.sampled_from(["b", "i", "l", "n", "s", "d"]))
        items = draw(st.lists(st.sampled_from(LIST_ITEMS), min_size=1, max_size=4))
        negated = draw(st.sampled_from(["", "NOT "]))
        return f"{column} {negated}IN ({', '.join(items)})"
    if kind == 2:  # wraps around (integers) or is NULL (decimals) with ANSI off
        column, edge = draw(st.sampled_from(EDGES))
        operation = draw(st.sampled_from(["+", "-", "*"]))
        return f"{column} {operation} {edge} {op} 0"
    if kind == 3:
        column = draw(st.sampled_from(["s", "x", "f", "l", "m", "t", "p", "i"]))
        target = draw(st.sampled_from(sorted(CAST_TARGETS)))
        compared = draw(st.sampled_from([f"{op} {CAST_TARGETS[target]}", "IS NULL"]))
        return f"CAST({column} AS {target}) {compared}"
    return draw(st.sampled_from(RAISING))


@st.composite
def filters(draw: st.DrawFn, depth: int = 2) -> str:
    """A leaf, or AND / OR / NOT of smaller filters (as written: with and without
    parentheses, so Spark's precedence of AND over OR is exercised too)."""
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        return draw(leaves())
    left, right = draw(filters(depth - 1)), draw(filters(depth - 1))
    shapes = [
        f"({left}) AND ({right})",
        f"({left}) OR ({right})",
        f"{left} AND {right} OR {left}",
        f"NOT ({left})",
    ]
    return draw(st.sampled_from(shapes))


# ---------------------------------------------------------------------------------------
# Spark's answer, and zorder's


def _spark_answer(fuzzed: Fuzzed, where: str) -> dict[int, int] | Exception:
    """Matching rows per file index, by Spark over every file; or Spark's error."""
    try:
        counts = fuzzed.rows.where(where).groupBy(FILE_INDEX).count().collect()
    except Exception as error:  # Spark's refusal is the answer: an AnalysisException, an ANSI error
        return error
    return {int(row[0]): int(row[1]) for row in counts}


def _check(spark: SparkSession, fuzzed: Fuzzed, where: str, ansi: bool = True) -> None:
    """zorder against Spark, both with the meaning of the session's ANSI mode ``ansi``.

    zorder reads a Spark 3.5 session with ANSI on as one with it off (``session_ansi``):
    ``meaning`` is the mode whose meaning zorder answers with there."""
    meaning = session_ansi(spark)
    assert meaning == (ansi and PYSPARK_VERSION >= (4, 0))
    zone = spark.conf.get("spark.sql.session.timeZone") or "UTC"
    expected = _spark_answer(fuzzed, where)
    if isinstance(expected, Exception):
        # zorder.read hands the filter to Spark, which raises, unless every file with a row
        # that makes it raise (s = 5: an ANSI cast of each s) was skipped, as in Delta.
        OUTCOMES[ansi, "spark raised"] += 1
        try:
            answered = zorder.to_arrow(fuzzed.path, where, ansi=meaning, time_zone=zone)
        except ZorderError:
            return
        # Skipping may leave out every file whose rows raise (as Delta's does): Spark reading
        # the kept files then answers too, and must answer the same.
        try:
            read = zorder.read(spark, fuzzed.path, where).count()
        except Exception as error:
            message = f"to_arrow answered {where!r}; Spark on the same files raises: {error}"
            raise AssertionError(message) from None
        assert read == answered.num_rows, where
        return
    total = sum(expected.values())
    OUTCOMES[ansi, "checked"] += 1
    assert zorder.read(spark, fuzzed.path, where).count() == total, where
    planned = zorder.Table(fuzzed.path, spark=spark).scan(where)
    assert planned.ansi is meaning
    kept = {f.path for f in planned.files}
    holding = {fuzzed.files[index] for index in expected}
    assert holding <= kept, f"{where!r}: files holding matches were skipped: {holding - kept}"
    try:
        rows = planned.to_arrow().num_rows
    except UnsupportedFilterError:
        OUTCOMES[ansi, "refused"] += 1
        return
    except FilterEvaluationError:
        # Spark's optimizer may drop a part that raises on some row (x AND FALSE); the
        # in-process evaluation does not: a refusal, never a wrong count. With ANSI off
        # nothing raises: what would had to be refused as mode-dependent first.
        if not ansi:
            raise
        OUTCOMES[ansi, "raised"] += 1
        return
    assert rows == total, where
    # Without a session, to_arrow answers in the mode it is asked for.
    answered = zorder.to_arrow(fuzzed.path, where, ansi=meaning, time_zone=zone)
    assert answered.num_rows == total, where
    OUTCOMES[ansi, "answered"] += 1


FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=EXAMPLES <= 100,  # the quick profile is the same filters every run
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.mark.compat
@FUZZ
@given(where=filters())
def test_generated_filters_agree_with_spark_unpartitioned(
    spark: SparkSession, unpartitioned: Fuzzed, ansi: bool, where: str
) -> None:
    _check(spark, unpartitioned, where, ansi)


@FUZZ
@given(where=filters())
def test_generated_filters_agree_with_spark_partitioned(
    spark: SparkSession, partitioned: Fuzzed, ansi: bool, where: str
) -> None:
    _check(spark, partitioned, where, ansi)


@st.composite
def function_filters(draw: st.DrawFn) -> str:
    """A function leaf alone, under NOT, or beside another leaf: the same checks, with
    every example reading a function of a column."""
    left = draw(function_leaves())
    right = draw(st.one_of(function_leaves(), leaves()))
    shapes = [left, f"NOT ({left})", f"({left}) AND ({right})", f"({left}) OR ({right})"]
    return draw(st.sampled_from([*shapes, f"NOT (({left}) AND ({right}))"]))


@FUZZ
@given(where=function_filters())
def test_generated_function_filters_agree_with_spark(
    spark: SparkSession, unpartitioned: Fuzzed, ansi: bool, where: str
) -> None:
    _check(spark, unpartitioned, where, ansi)


@st.composite
def mode_filters(draw: st.DrawFn) -> str:
    """A spelling whose meaning differs between the ANSI modes, alone, under NOT, or beside
    another leaf: every example one the classifier must catch with ANSI off."""
    left = draw(mode_leaves())
    right = draw(st.one_of(mode_leaves(), leaves()))
    shapes = [left, f"NOT ({left})", f"({left}) AND ({right})", f"({left}) OR ({right})"]
    return draw(st.sampled_from(shapes))


@pytest.mark.compat
@FUZZ
@given(where=mode_filters())
def test_mode_dependent_filters_agree_with_spark(
    spark: SparkSession, unpartitioned: Fuzzed, ansi: bool, where: str
) -> None:
    _check(spark, unpartitioned, where, ansi)


# ---------------------------------------------------------------------------------------
# Strings against dates and timestamps, in a session zone with DST (issue 57)

DST_ZONE = "America/New_York"
# Wall-clock times around New York's DST changes in the table's range (2023-11-05 01:00-02:00
# happens twice, 2024-03-10 02:00-03:00 never), and others the rows hold.
TEMPORAL_TEXTS = [
    "2023-11-05 01:30:00",
    "2023-11-05 01:00",
    "2023-11-05 02:00:00",
    "2024-03-10 02:30:00",
    "2024-03-10 03:00:00",
    "2024-03-10 01:59:59.999999",
    "2024-01-01 00:00:00",
    "2023-12-15 12:34:56.5",
    "2024-02-29",
    "2024-1-5",
    "2024-03-10",
    "2023-11-05",
]
TEMPORAL_SPELLINGS = [
    "{}",
    "{} ",  # trailing space: trimmed
    " {}",
    "{}Z",
    "{}-05:00",
    "{}+01:00",
    "{} America/New_York",
    "{} UTC",
]
UNPARSEABLE = [
    "abc",
    "2024-02-30",
    "2024-03-10 24:00:00",
    "2024-13-01",
    "2024-03-10T",
    "2024-03-10 10:00:00 x",
    "2024-03-10 10:00Z",
    "",
]


@st.composite
def temporal_texts(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 5)) == 0:
        return _quoted(draw(st.sampled_from(UNPARSEABLE)))
    text = draw(st.sampled_from(TEMPORAL_TEXTS))
    if draw(st.booleans()):
        text = text.replace(" ", "T", 1)
    if ":" in text:
        text = draw(st.sampled_from(TEMPORAL_SPELLINGS)).format(text)
    return _quoted(text)


@st.composite
def temporal_string_leaves(draw: st.DrawFn) -> str:
    """A date, timestamp or timestamp_ntz column against strings Spark casts to its type."""
    column = draw(st.sampled_from(["t", "t", "tn", "d", "CAST(t AS DATE)"]))
    text = temporal_texts()
    kind = draw(st.integers(0, 5))
    if kind <= 2:
        op = draw(st.sampled_from(COMPARISONS))
        return f"{column} {op} {draw(text)}" if kind else f"{draw(text)} {op} {column}"
    if kind == 3:
        return f"{column} >= {draw(text)} AND {column} < {draw(text)}"
    if kind == 4:
        negated = draw(st.sampled_from(["", "NOT "]))
        return f"{column} {negated}BETWEEN {draw(text)} AND {draw(text)}"
    items = draw(st.lists(text, min_size=1, max_size=3))
    return f"{column} IN ({', '.join(items)})"


@st.composite
def temporal_string_filters(draw: st.DrawFn) -> str:
    left = draw(temporal_string_leaves())
    right = draw(st.one_of(temporal_string_leaves(), leaves()))
    shapes = [left, f"NOT ({left})", f"({left}) AND ({right})", f"({left}) OR ({right})"]
    return draw(st.sampled_from(shapes))


@contextlib.contextmanager
def session_zone(spark: SparkSession, zone: str) -> Iterator[None]:
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        yield
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous or "UTC")


@pytest.mark.compat
@FUZZ
@given(where=temporal_string_filters())
def test_temporal_string_filters_agree_with_spark(
    spark: SparkSession, unpartitioned: Fuzzed, ansi: bool, where: str
) -> None:
    with session_zone(spark, DST_ZONE):
        _check(spark, unpartitioned, where, ansi)


# ---------------------------------------------------------------------------------------
# The reproductions of issue 31, each with Spark's count as the oracle

REGRESSIONS = [
    # ANSI off compares an IN list with a string as strings: an impossible date matches
    # nothing there (ANSI raises); to_arrow(ansi=False) had answered with ANSI's error.
    "d IN ('2024-02-30')",
    "d IN ('2024-02-28', '2023-02-29')",
    "s NOT LIKE 'k000%'",
    "NOT (s LIKE 'k000%')",
    "m = -9999999999999999999999999999.9999999999",
    "m = 9999999999999999999999999999.9999999999",
    "m = -1234567890123456789.0123456789",
    "m = 0.1234567890123456789012345678901234567",
    "m < 12345678901234567890123456789012",
    "l = 9007199254740992e0",
    "l = 9007199254740993BD",
    "l = 9007199254740993L",
    "l = 9007199254740993D",
    "l IN (9007199254740992, 1.5, 2e0)",
    "l IN (9007199254740993, 1.5)",
    "i = 16777216F",
    "f = 1.1",
    "f = 1.1F",
    "i = '5'",
    "i = ' 5 '",
    "d IN ('2024-1-1')",
    "d = '2024-01-01 10:00'",
    "s IS DISTINCT FROM 'k000'",
    "i LIKE '5'",
    "f = 0",
    "x = 0.0",
    "x IN (0, 1)",
    "f = CAST('NaN' AS DOUBLE)",
]
FUNCTION_REGRESSIONS = [
    "year(t) = 2024 AND month(t) = 3",
    "NOT (year(d) = 2024 AND quarter(d) <=> 2)",
    "CAST(t AS DATE) = DATE'2024-01-01'",
    "date_trunc('MONTH', tn) >= '2024-02-01'",
    "trunc(d, 'WEEK') = DATE'2024-01-01'",
    "date_sub(t, 3) < DATE'2024-01-01'",
    "d + INTERVAL '1' DAY <=> DATE'2024-01-02'",
    "n + 1.5 >= 0",
    "NOT (substring(s, 1, 2) = 'k0')",
    "left(s, 1) > 'k'",
    "l + 1 > 0",
    # Not unwrapped by Spark (BIGINT to DOUBLE is no up-cast): an infinite f raises.
    "CAST(f AS BIGINT) = CAST('Infinity' AS DOUBLE)",
    "CAST(f AS BIGINT) = 1e30",
    "CAST(f AS INT) = 3000000000",
    "l + 1 = -128",  # its file skipped: Spark on the kept files answers as to_arrow does
    "b = -128Y",  # one literal in Spark's grammar, not -CAST(128 AS TINYINT)
    "sm = -32768S OR l = -9223372036854775808L",
]
# A LIKE pattern Spark rejects ('a\\b' in SQL is the pattern a\b: its escape before b; 'a\\'
# ends with it) where Spark's optimizer folds the match away unread and answers, in both
# modes: NULL AND x is FALSE in a filter, NOT (NULL OR x) is NULL AND NOT x, a comparison
# with NULL is NULL, CASE WHEN NULL takes the ELSE; the RLIKE (an unclosed group) alike.
FOLDED_PATTERNS = [
    "(b = NULL) AND (s LIKE 'a\\\\b')",
    "(s LIKE 'a\\\\b') AND (b = NULL)",
    "(b = NULL) AND (s LIKE 'a\\\\')",
    "(b = NULL) AND (s LIKE 'a/b' ESCAPE '/')",
    "NOT ((b = NULL) OR (s LIKE 'a\\\\b'))",
    "(s LIKE 'a\\\\b') = NULL",
    "CASE WHEN b = NULL THEN s LIKE 'a\\\\b' ELSE TRUE END",
    "(b = NULL) AND (s RLIKE '(')",
]
REFUSED_BY_SPARK = [
    "i = CAST('5.7' AS INT)",
    "i = '5.7'",
    "l = 12345678901234567890123456789012345678901",
    "i = 1e400",
    "b = 300Y",
    "naïve = 1",
    "CAST(b AS DATE) = NULL",
    "CAST(b AS DATE) <=> NULL",
    # The same patterns where the LIKE stays (INVALID_FORMAT.ESC_IN_THE_MIDDLE, ESC_AT_THE_END).
    "s LIKE 'a\\\\b'",
    "s LIKE 'a\\\\'",
    "(b = NULL) OR (s LIKE 'a\\\\b')",
    "NOT ((b = NULL) AND (s LIKE 'a\\\\b'))",
    "(b = NULL) AND ('x' LIKE 'a\\\\b')",  # the constant LIKE folds first, and raises
]


@pytest.mark.compat
@pytest.mark.parametrize(
    "where", REGRESSIONS + FUNCTION_REGRESSIONS + FOLDED_PATTERNS + REFUSED_BY_SPARK
)
def test_issue_reproductions_agree_with_spark(
    spark: SparkSession, unpartitioned: Fuzzed, ansi: bool, where: str
) -> None:
    _check(spark, unpartitioned, where, ansi)


# A comparison with NULL is NULL for every row, and so is NOT of it: NOT (i = NULL) keeps no
# row, where NOT FALSE would keep every one; under NOT a BETWEEN with a NULL bound still keeps
# the rows its other bound rules out.
NULL_COMPARISONS = [
    "NOT (i = NULL)",
    "NOT (i BETWEEN NULL AND 1)",
    "NOT (i BETWEEN 1 AND NULL)",
    "NOT (s NOT BETWEEN NULL AND 'k')",
    "i = NULL OR l > 1",
    "NOT (i = NULL OR l > 1)",
    "NOT (i = NULL AND l > 1)",
    "i = NULL AND FALSE",
    "NOT (i = NULL AND FALSE)",
    "NOT (NOT (s < NULL))",
    "NOT (x != NULL) OR s IS NULL",
    "d >= NULL OR NOT (t <= NULL)",
    "NOT (i = 1 + NULL)",
    "NOT (m > NULL) OR bo = TRUE",
    "NULL = i OR NOT (NULL < tn)",
    "NOT (i IS DISTINCT FROM NULL)",
]


@pytest.mark.parametrize("where", NULL_COMPARISONS)
def test_comparisons_with_null_agree_with_spark(
    spark: SparkSession, unpartitioned: Fuzzed, ansi: bool, where: str
) -> None:
    """Answered exactly in process (no refusal), by skipping and by the row evaluator."""
    _check(spark, unpartitioned, where, ansi)
    expected = _spark_answer(unpartitioned, where)
    assert not isinstance(expected, Exception), expected
    planned = zorder.scan(unpartitioned.path, where)
    types = planned.snapshot.schema.column_types
    exact_predicate(parse_unfolded(where), types)  # the exact evaluator answers, no refusal
    assert planned.to_arrow().num_rows == sum(expected.values()), where


PARTITION_REGRESSIONS = [
    # Spark's short-circuit never casts p = 'a'; a partition value folded as a constant did.
    "(b IS NULL) OR ((b IS NULL) AND (p IS DISTINCT FROM -128))",
    "p = 'c d'",
    "p IN ('a', 'e%f')",
    "NOT (p LIKE 'e%')",
    "f = 0",
]


@pytest.mark.parametrize("where", PARTITION_REGRESSIONS)
def test_partitioned_reproductions_agree_with_spark(
    spark: SparkSession, partitioned: Fuzzed, ansi: bool, where: str
) -> None:
    _check(spark, partitioned, where, ansi)


@pytest.mark.parametrize("where", REFUSED_BY_SPARK)
@pytest.mark.usefixtures("ansi_on")
def test_spark_refuses_what_is_listed_as_refused(unpartitioned: Fuzzed, where: str) -> None:
    assert isinstance(_spark_answer(unpartitioned, where), Exception)


# ---------------------------------------------------------------------------------------
# Partitions chosen by optimize's `where` in process, against Spark's choice

PARTITIONED_BY = [c for c in COLUMNS if c not in ("f", "x")]  # Delta partitions no floats


@pytest.fixture(scope="module")
def every_partition(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> tuple[TableSnapshot, list[tuple[Any, ...]]]:
    """A table partitioned by every column Delta partitions by, one row (and partition) each
    of the first rows, and its partitions' values as the log gives them."""
    source = spark.createDataFrame([tuple(r[f.name] for f in SCHEMA) for r in ROWS[:40]], SCHEMA)
    path = str(tmp_path_factory.mktemp("fuzz") / "every partition")
    zorder.write(source.withColumn("v", F.lit(1)), path, by=["v"], partition_by=PARTITIONED_BY)
    snapshot = load_snapshot(Storage.of(path))
    partitions = list(snapshot.files_by_partition())
    assert len(partitions) == 40
    return snapshot, partitions


def _check_chosen(
    spark: SparkSession, every: tuple[TableSnapshot, list[tuple[Any, ...]]], where: str
) -> None:
    snapshot, partitions = every
    try:
        check_spark_parse(spark, where)
    except ZorderError:
        return  # chosen_by_spark refuses it before choosing
    try:
        expected: set[tuple[Any, ...]] | Exception = chosen_by_spark(
            spark, snapshot, partitions, where
        )
    except Exception as error:  # Spark's refusal is the answer: an AnalysisException, an ANSI error
        expected = error
    chosen = chosen_here(snapshot, partitions, parse_filter(where), Context.of_session(spark))
    if chosen is None:
        return  # refused: Spark decides
    assert not isinstance(expected, Exception), f"{where!r} chosen in process; Spark: {expected}"
    assert chosen == expected, where


def _names_partitions_only(where: str) -> bool:
    try:
        referenced = referenced_columns(where)
    except ZorderError:  # does not parse: refused before any partition is chosen
        return False
    return all(match_column(c, PARTITIONED_BY) for c in referenced)


@pytest.mark.compat
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=EXAMPLES <= 100,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.filter_too_much,
    ],
)
@given(where=st.one_of(filters(), function_filters()).filter(_names_partitions_only))
@pytest.mark.usefixtures("ansi")
def test_partitions_chosen_in_process_agree_with_spark(
    spark: SparkSession, every_partition: tuple[TableSnapshot, list[tuple[Any, ...]]], where: str
) -> None:
    _check_chosen(spark, every_partition, where)


@pytest.mark.parametrize(
    "where",
    [
        *filter(_names_partitions_only, REGRESSIONS + REFUSED_BY_SPARK + NULL_COMPARISONS),
        "i = 'abc'",  # Spark's ANSI cast fails: never answered in process
        "d = 'abc'",  # the long profile's find: the in-process choice raised instead
        "S >= 'k' AND `d` < '2024-01-01'",
        "TRUE",
        "bo",
    ],
)
@pytest.mark.usefixtures("ansi")
def test_partition_choice_reproductions_agree_with_spark(
    spark: SparkSession, every_partition: tuple[TableSnapshot, list[tuple[Any, ...]]], where: str
) -> None:
    _check_chosen(spark, every_partition, where)
