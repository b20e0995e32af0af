"""Which filters mean the same to Spark with ANSI mode on and off (skipping/ansi.py).

The differential fuzzer (tests/spark/test_filter_fuzz.py) checks the classifier's
verdicts against Spark in both modes; these pin the verdicts themselves, and how
skipping and the evaluators use them.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zorder.errors import ColumnNotFoundError, UnsupportedFilterError
from zorder.skipping.ansi import ansi_difference, ansi_enabled, as_ansi_off, reads_as_ansi
from zorder.skipping.predicates import AlwaysTrue, And, Comparison, Or, Unknown, bind
from zorder.skipping.sql import parse_filter

COLUMNS = {
    "b": "tinyint",
    "i": "int",
    "l": "bigint",
    "x": "double",
    "f": "float",
    "n": "decimal(6,2)",
    "s": "string",
    "d": "date",
    "t": "timestamp",
    "bo": "boolean",
    "m": "decimal(38,10)",
}

SAME = [
    "i = 5",
    "i > 1.5",
    "x = 1",
    "l IN (1, 2, NULL)",
    "i = '5'",
    "i = '-0'",
    "i IN ('5', '6')",
    "d = '2024-01-01'",
    "d = '2024-01-01 10:00'",
    "d IN ('2024-01-01')",
    "d > DATE'2024-01-01' - INTERVAL '7' DAY",
    "t >= TIMESTAMP'2024-01-01 00:00:00'",
    "d < t",
    "s LIKE 'k0%'",
    "s NOT LIKE 'k0%'",
    "s RLIKE 'a+'",
    "startswith(s, 'k')",
    "lower(s) = 'k'",
    "length(s) > 2",
    "year(d) = 2024 AND month(d) = 3",
    "CAST(i AS BIGINT) = 1",
    "CAST(i AS STRING) = '1'",
    "TRY_CAST(s AS INT) = 1",
    "i = CAST('5' AS INT)",
    "i IS NULL",
    "s IS NOT NULL",
    "bo",
    "NOT bo OR i <=> NULL",
    "i = NULL",
    "isnan(x)",
    "x + f > 1e0",
    "f = 16777216",
    "f IN (1, 2.5, 3e0)",
    "b = 1.5F",
    "f = n",
    "i BETWEEN 1 AND 10",
    "i IS DISTINCT FROM 3",
    "m = 1.5",
    "m < 1234567890123456789012345678",
    "m IN (1, 2.5)",
    "n = i",
    "m = l",
    "TRUE",
    # A function's ANSI rule answers in any position: a cast that never raises as a
    # condition, a comparison as an operand.
    "CAST(i AS BOOLEAN)",
    "(i = l) = TRUE",
]
DIFFERENT = {
    "i = '5.7'": "i = '5.7'",
    "b = '300'": "b = '300'",
    "i = '+5'": "i = '+5'",
    "n = '1.5'": "n = '1.5'",
    "x = '1.5'": "x = '1.5'",
    "s = 5": "s = 5",
    "i IN ('5', 6)": "i IN ('5', 6)",
    "i IN ('05')": "i IN ('05')",
    "i IN ('2147483648')": "i IN ('2147483648')",
    "s IN ('a', 5)": "s IN ('a', 5)",
    "d = 'abc'": "d = 'abc'",
    "t > '2024-01-01'": "t > '2024-01-01'",
    "bo = 'true'": "bo = 'true'",
    "i + 1 > 5": "i + 1",
    "i = 2147483647 + 1": "2147483647 + 1",
    "i / 0 IS NULL": "i / 0",
    "i = 1 / 0": "1 / 0",
    "CAST(s AS INT) = 1": "CAST(s AS INT)",
    "CAST(x AS INT) = 1": "CAST(x AS INT)",
    "to_date(s) IS NULL": "TO_DATE(s)",
    "year(s) = 2024": "TO_DATE(s)",  # sqlglot's spelling of year's implicit cast
    "abs(i) > 0": "ABS(i)",
    "i = 1 + '1'": "1 + '1'",
    "x + 1.5 > 0": "x + 1.5",
    "i > 0 AND s = 5": "s = 5",
    "i = 16777216F": "i = CAST(16777216 AS FLOAT)",  # ANSI off compares them as floats
    "f = 16777217": "f = 16777217",
    "f = i": "f = i",
    "l IN (1, 2.5F)": "l IN (1, CAST(2.5 AS FLOAT))",
    # Wider than 38 digits together: Spark 3.5 overflows, Spark 4.x rounds the scale.
    "m < 12345678901234567890123456789012": "m < 12345678901234567890123456789012",
    "m = 0.1234567890123456789012345678901234567": "m = 0.1234567890123456789012345678901234567",
    "i IN (1, 0.12345678901234567890123456789012345)": (
        "i IN (1, 0.12345678901234567890123456789012345)"
    ),
}


@pytest.mark.parametrize("where", SAME)
def test_the_same_in_both_modes(where: str) -> None:
    assert ansi_difference(parse_filter(where).tree, COLUMNS) is None


@pytest.mark.parametrize(("where", "part"), DIFFERENT.items())
def test_mode_dependent_parts_are_named(where: str, part: str) -> None:
    assert ansi_difference(parse_filter(where).tree, COLUMNS) == part


def test_an_unknown_column_is_named_as_binding_names_it() -> None:
    with pytest.raises(ColumnNotFoundError, match="nope"):
        ansi_difference(parse_filter("nope = '5'").tree, COLUMNS)


@pytest.mark.parametrize(
    ("setting", "version", "enabled"),
    [
        (None, "3.5.9", False),
        (None, "4.0.1", True),
        (None, "4.1.4", True),
        ("", "3.5.1", False),
        ("true", "3.5.9", True),
        ("TRUE", "3.5.9", True),
        ("false", "4.1.4", False),
        (" false ", "4.1.4", False),
    ],
)
def test_the_sessions_mode(setting: str | None, version: str, enabled: bool) -> None:
    assert ansi_enabled(setting, version) is enabled
    # Spark 3.5 with ANSI on is read as ANSI off: its decimal comparisons are not 4.x's.
    assert reads_as_ansi(setting, version) is (enabled and not version.startswith("3."))


_L1 = Comparison("=", "l", 1)


def _planned(where: str, *, ansi: bool) -> object:
    parsed = parse_filter(where)
    return bind(parsed.predicate(ansi_off=None if ansi else COLUMNS), COLUMNS).tree


def test_with_ansi_off_skipping_reads_a_mode_dependent_atom_as_unknown() -> None:
    assert not isinstance(_planned("i = '5.5' OR l = 1", ansi=True), AlwaysTrue | Unknown)
    off = _planned("i = '5' || '.7' OR l = 1", ansi=False)
    assert off == Or(Unknown("'5' || '.7' means another thing with ANSI mode off"), _L1), off
    kept = _planned("i = '5' || '.7' AND l = 1", ansi=False)
    assert kept == And(off.left, _L1), kept  # the other side still skips
    both = _planned("i = 5 OR l = 1", ansi=False)
    assert both == Or(Comparison("=", "i", 5), _L1)


def test_with_ansi_off_a_chain_with_a_mode_dependent_term_is_read_term_by_term() -> None:
    tree = _planned("year(d) = 2024 AND month(d) = 3 AND s = 5", ansi=False)
    assert "ANSI" in str(tree)
    assert "Unknown" in repr(tree)


def test_an_evaluator_answering_with_ansi_off_refuses_by_name() -> None:
    parsed = parse_filter("l = 1 AND s = 5")
    with pytest.raises(UnsupportedFilterError, match=r"s = 5.*ANSI mode off"):
        parsed.check_ansi_off(COLUMNS)
    with pytest.raises(UnsupportedFilterError, match=r"s = 5.*ANSI mode off"):
        parsed.for_ansi_off(COLUMNS)
    parse_filter("l = 1 AND i = '5'").check_ansi_off(COLUMNS)  # the same: no refusal
    parse_filter("l = 1 AND i = '5.7'").check_ansi_off(COLUMNS)  # read as ANSI off casts it


# AND, OR and NOT of atoms: the same exactly when every atom is.
ATOMS = st.sampled_from([(w, True) for w in SAME[:20]] + [(w, False) for w in DIFFERENT][:12])


@st.composite
def composed(draw: st.DrawFn, depth: int = 3) -> tuple[str, bool]:
    if depth == 0 or draw(st.booleans()):
        return draw(ATOMS)
    (left, left_same), (right, right_same) = draw(composed(depth - 1)), draw(composed(depth - 1))
    shape = draw(st.sampled_from(["({}) AND ({})", "({}) OR ({})", "NOT ({}) OR NOT ({})"]))
    return shape.format(left, right), left_same and right_same


@given(composed())
def test_a_composition_is_the_same_exactly_when_each_atom_is(case: tuple[str, bool]) -> None:
    where, same = case
    assert (ansi_difference(parse_filter(where).tree, COLUMNS) is None) is same, where


# What Spark 4.1 with ANSI off makes of a string compared with another type (its analyzed
# plans: ``ts >= cast('..' as timestamp)``, ``cast(n as double) = cast('5.5' as double)``,
# ``i = cast('5.7' as int)``; BETWEEN as two comparisons), and how it is spelled for ANSI.
AS_ANSI_OFF = {
    "t >= '2026-11-02 10:00:00' AND t < '2026-11-03'": (
        "t >= CAST('2026-11-02 10:00:00' AS TIMESTAMP) AND t < CAST('2026-11-03' AS TIMESTAMP)"
    ),
    "'2026-11-02T10:00' <= t": "CAST('2026-11-02T10:00' AS TIMESTAMP) <= t",
    "t = 'abc'": "t = CAST(NULL AS TIMESTAMP)",
    "t = '2026-11-02 24:00:00'": "t = CAST(NULL AS TIMESTAMP)",
    "t BETWEEN '2026-11-03' AND 'abc'": (
        "(t >= CAST('2026-11-03' AS TIMESTAMP) AND t <= CAST(NULL AS TIMESTAMP))"
    ),
    "NOT d BETWEEN '2026-11-3' AND DATE'2026-12-01'": (
        "NOT (d >= CAST('2026-11-3' AS DATE) AND d <= CAST('2026-12-01' AS DATE))"
    ),
    "d = '2026-11-02 anything'": "d = CAST('2026-11-02 anything' AS DATE)",
    "d = '2026-11-31'": "d = CAST(NULL AS DATE)",
    "i = '5.7'": "i = CAST(5 AS INT)",
    "'-5.9' < i": "CAST(-5 AS INT) < i",
    "b = '300'": "b = CAST(NULL AS TINYINT)",
    "l <=> 'abc'": "l IS NOT DISTINCT FROM CAST(NULL AS BIGINT)",
    "x = ' 5.5 '": "x = 5.5e0",
    "x = '-Infinity'": "x = CAST('-Infinity' AS DOUBLE)",
    "f = '0.1'": "f = 0.10000000149011612e0",
    "n > '5.49'": "CAST(n AS DOUBLE) > 5.49e0",
    "bo = 'yes'": "bo = TRUE",
    "bo = 'maybe'": "bo = CAST(NULL AS BOOLEAN)",
}
# Left as written: not read exactly here (still named), or not coerced.
LEFT_AS_WRITTEN = {
    "t = 'T10:00'": "t = 'T10:00'",  # today's date, in Spark
    "i IN ('5.0')": "i IN ('5.0')",  # compared as strings with ANSI off
    "x = '0x10'": "x = '0x10'",  # which spellings Java reads is not pinned down
    "s = 5": "s = 5",  # the string column cast to INT with ANSI off's parser
    "s = '5'": None,  # two strings: no coercion
}


@pytest.mark.parametrize(("where", "spelled"), AS_ANSI_OFF.items())
def test_strings_are_cast_as_ansi_off_casts_them(where: str, spelled: str) -> None:
    tree = as_ansi_off(parse_filter(where).tree, COLUMNS)
    assert tree.sql(dialect="spark") == spelled
    assert ansi_difference(tree, COLUMNS) is None, where


@pytest.mark.parametrize(("where", "part"), LEFT_AS_WRITTEN.items())
def test_what_is_not_read_exactly_is_left_as_written(where: str, part: str | None) -> None:
    tree = as_ansi_off(parse_filter(where).tree, COLUMNS)
    assert tree == parse_filter(where).tree
    assert ansi_difference(tree, COLUMNS) == part


def test_with_ansi_off_a_timestamp_string_skips_as_a_timestamp_literal() -> None:
    strings = _planned("t >= '2026-11-02 10:00:00' AND t < '2026-11-03'", ansi=False)
    typed = _planned("t >= TIMESTAMP'2026-11-02 10:00:00' AND t < TIMESTAMP'2026-11-03'", ansi=True)
    assert strings == typed, strings
    assert "Unknown" not in repr(strings)
