"""What bloom filters are asked, and what their answers prove, against brute force.

The reference evaluates a predicate on every row of a small file under SQL's
three-valued logic, written out here node by node (Unknown counts as each
of TRUE, FALSE and NULL in turn). Whatever the absent values a filter
reports (any subset of the values truly absent: filters have false
positives), a file ruled out must have no row for which the predicate is TRUE.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from zorder.skipping import bind, parse_predicate
from zorder.skipping.blooms import bloom_lookups, excluded_by_blooms
from zorder.skipping.nodes import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    CompareOp,
    Comparison,
    InList,
    IsNaN,
    IsNull,
    Not,
    NullComparison,
    Or,
    Predicate,
    StartsWith,
    Unknown,
)
from zorder.skipping.predicates import Bound

COLUMNS = {"a": "int", "b": "string", "f": "double"}
DOMAINS: dict[str, list[Any]] = {
    "a": [0, 1, 2, 3],
    "b": ["x", "xy", "y"],
    "f": [0.0, 1.0, math.nan],
}
OPS: list[CompareOp] = ["=", "<=>", "!=", "<", "<=", ">", ">="]

Row = dict[str, Any]
Truth = bool | None


def leaves() -> st.SearchStrategy[Predicate]:
    columns = st.sampled_from(sorted(COLUMNS))
    comparison = columns.flatmap(
        lambda c: st.builds(
            Comparison,
            st.sampled_from(OPS),
            st.just(c),
            st.sampled_from(DOMAINS[c]),
            domain=st.sampled_from([None, None, None, "double"]),
        )
    )
    in_list = columns.flatmap(
        lambda c: st.builds(
            InList,
            st.just(c),
            st.lists(st.sampled_from(DOMAINS[c]), max_size=3).map(tuple),
            negated=st.booleans(),
            has_null=st.booleans(),
            domain=st.sampled_from([None, None, "double"]),
        )
    )
    return st.one_of(
        comparison,
        in_list,
        st.builds(AlwaysTrue),
        st.builds(AlwaysFalse),
        st.builds(Unknown),
        st.builds(NullComparison, st.sampled_from(OPS), columns),
        st.builds(IsNull, columns, st.booleans()),
        st.builds(IsNaN, st.just("f"), st.booleans()),
        st.builds(StartsWith, st.just("b"), st.sampled_from(["x", "y", ""]), st.booleans()),
    )


TREES = st.recursive(
    leaves(),
    lambda children: st.one_of(
        st.builds(And, children, children),
        st.builds(Or, children, children),
        st.builds(Not, children),
    ),
    max_leaves=8,
)
ROWS = st.lists(
    st.fixed_dictionaries({c: st.sampled_from([*values, None]) for c, values in DOMAINS.items()}),
    max_size=5,
)


def compare(op: str, x: Any, v: Any) -> bool:
    match op:
        case "=" | "<=>":
            return bool(x == v)
        case "!=":
            return bool(x != v)
        case "<":
            return bool(x < v)
        case "<=":
            return bool(x <= v)
        case ">":
            return bool(x > v)
    return bool(x >= v)


def truth(node: Predicate, row: Row, unknown: Truth) -> Truth:
    """Kleene's logic, one node at a time: None is SQL's NULL."""
    match node:
        case And():
            sides = (truth(node.left, row, unknown), truth(node.right, row, unknown))
            return False if False in sides else (None if None in sides else True)
        case Or():
            sides = (truth(node.left, row, unknown), truth(node.right, row, unknown))
            return True if True in sides else (None if None in sides else False)
        case Not():
            inner = truth(node.child, row, unknown)
            return None if inner is None else not inner
        case AlwaysTrue():
            return True
        case AlwaysFalse():
            return False
        case Unknown():
            return unknown
        case NullComparison():
            return None
        case IsNull():
            return (row[node.column] is None) != node.negated
        case IsNaN():
            x = row[node.column]
            return (x is not None and math.isnan(x)) != node.negated
        case StartsWith():
            x = row[node.column]
            return None if x is None else x.startswith(node.prefix) != node.negated
        case Comparison():
            x = row[node.column]
            if x is None:
                return False if node.op == "<=>" else None
            return compare(node.op, x, node.value)
        case InList():
            x = row[node.column]
            if x is None:
                return None
            if any(x == v for v in node.values):
                return not node.negated
            return None if node.has_null else node.negated
    raise AssertionError(node)


def truly_absent(rows: list[Row], column: str) -> set[Any]:
    return {v for v in DOMAINS[column] if not any(row[column] == v for row in rows)}


@given(tree=TREES, rows=ROWS, unknown=st.sampled_from([True, False, None]), data=st.data())
def test_a_file_ruled_out_has_no_row_the_predicate_keeps(
    tree: Predicate, rows: list[Row], unknown: Truth, data: st.DataObject
) -> None:
    bound = Bound(tree, COLUMNS)
    lookups = bloom_lookups(bound)
    # What filters report: some of the looked-up values no row holds (false positives).
    absent = {}
    for column, values in lookups.items():
        candidates = sorted(values & truly_absent(rows, column), key=repr)
        absent[column] = data.draw(st.sets(st.sampled_from(candidates))) if candidates else set()
    if excluded_by_blooms(bound, absent):
        assert not any(truth(tree, row, unknown) is True for row in rows)


@given(tree=TREES, rows=ROWS)
# An empty IN list on a column no filter answers for is never TRUE: the OR beside it still asks.
@example(tree=Or(Comparison("=", "a", 0), InList("f", ())), rows=[])
def test_the_lookups_are_every_value_that_can_matter(tree: Predicate, rows: list[Row]) -> None:
    bound = Bound(tree, COLUMNS)
    lookups = bloom_lookups(bound)
    assert set(lookups) <= {"a", "b"}  # a double's equality is no bit equality
    # Filters answer for the columns of types they can: every value they could prove absent.
    everything = {column: truly_absent(rows, column) for column in ("a", "b")}
    asked = {column: values & lookups.get(column, set()) for column, values in everything.items()}
    assert excluded_by_blooms(bound, everything) == excluded_by_blooms(bound, asked)


def bound_filter(text: str, columns: dict[str, str] | None = None) -> Bound:
    return bind(parse_predicate(text), columns or {**COLUMNS, "n": "bigint", "d": "decimal(5,2)"})


@pytest.mark.parametrize(
    ("text", "lookups"),
    [
        ("a = 1", {"a": {1}}),
        ("a <=> 1", {"a": {1}}),
        ("a IN (1, 2, NULL)", {"a": {1, 2}}),
        ("a = 1 AND b = 'x'", {"a": {1}, "b": {"x"}}),
        ("a = 1 OR b = 'x'", {"a": {1}, "b": {"x"}}),
        ("a = 1 AND b > 'x'", {"a": {1}}),
        ("a = 1 OR b > 'x'", {}),  # the OR's other side is never proven empty
        ("NOT (a != 1)", {"a": {1}}),  # NOTs pushed down first
        ("NOT (a = 1)", {}),
        ("NOT (a <=> 1)", {}),
        ("a NOT IN (1, 2)", {}),
        ("f = 1.0", {}),  # doubles: no bit equality
        ("a = 1.5", {"a": {Decimal("1.5")}}),  # exact: the hash decides (no INT32 is 1.5)
        ("n = 1e0", {}),  # compared as a double
        ("d = 1.5", {"d": {Decimal("1.50")}}),
        ("a = NULL OR b = 'x'", {"b": {"x"}}),  # x = NULL is never TRUE
        ("(a = 1 OR a = 2) AND (b = 'x' OR f > 0)", {"a": {1, 2}}),
    ],
)
def test_lookups_of_filters(text: str, lookups: dict[str, set[Any]]) -> None:
    assert bloom_lookups(bound_filter(text)) == lookups


@pytest.mark.parametrize(
    ("text", "absent", "excluded"),
    [
        ("a = 1", {"a": {1}}, True),
        ("a = 1", {"a": {2}}, False),
        ("a = 1", {}, False),
        ("a IN (1, 2)", {"a": {1}}, False),
        ("a IN (1, 2)", {"a": {1, 2}}, True),
        ("a IN (1, 2, NULL)", {"a": {1, 2}}, True),
        ("a = 1 AND b = 'x'", {"b": {"x"}}, True),
        ("a = 1 OR b = 'x'", {"b": {"x"}}, False),
        ("a = 1 OR b = 'x'", {"a": {1}, "b": {"x"}}, True),
        ("NOT (a != 1)", {"a": {1}}, True),
        ("NOT (a = 1)", {"a": {1}}, False),
        ("a <=> 1", {"a": {1}}, True),
        ("a != 1", {"a": {1}}, False),
        ("a = NULL", {}, True),
        ("a IS NULL AND a = 1", {"a": {1}}, True),
        ("a IS NULL OR a = 1", {"a": {1}}, False),
    ],
)
def test_exclusions_of_filters(text: str, absent: dict[str, set[Any]], excluded: bool) -> None:
    assert excluded_by_blooms(bound_filter(text), absent) is excluded


def test_only_the_columns_with_filters_ask() -> None:
    """An equality on a column without filters proves nothing: beside it in an OR the
    other side asks nothing either, and in an AND it is left out."""
    either = "b = 'x' OR a = 1"
    assert bloom_lookups(bound_filter(either), ["b"]) == {}
    assert bloom_lookups(bound_filter(either), ["b", "a"]) == {"b": {"x"}, "a": {1}}
    assert bloom_lookups(bound_filter("b = 'x' AND a = 1"), ["b"]) == {"b": {"x"}}
    assert bloom_lookups(bound_filter("a = 1"), []) == {}
