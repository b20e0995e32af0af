"""The one walk over predicate trees, and the rewriters and translators built on it."""

from __future__ import annotations

from typing import get_args

import pytest

from zorder.skipping.predicates import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    Bound,
    Comparison,
    InList,
    IsNaN,
    IsNull,
    Not,
    NullComparison,
    Or,
    PartComparison,
    Predicate,
    StartsWith,
    Unknown,
    rewrite_not,
)
from zorder.skipping.rows import prefilter_sql, referenced
from zorder.skipping.visitor import PredicateCollector, PredicateVisitor, visit


class Render(PredicateVisitor[str]):
    """Each node as text, and the leaves in the order the walk met them."""

    def __init__(self) -> None:
        self.met: list[str] = []

    def _leaf(self, text: str) -> str:
        self.met.append(text)
        return text

    def visit_true(self) -> str:
        return self._leaf("TRUE")

    def visit_false(self) -> str:
        return self._leaf("FALSE")

    def visit_unknown(self, node: Unknown) -> str:
        return self._leaf(f"?{node.reason}")

    def visit_comparison(self, node: Comparison) -> str:
        return self._leaf(f"{node.column} {node.op} {node.value!r}")

    def visit_in_list(self, node: InList) -> str:
        return self._leaf(f"{node.column} {'NOT IN' if node.negated else 'IN'} {node.values}")

    def visit_null_comparison(self, node: NullComparison) -> str:
        return self._leaf(f"{node.column} {node.op} NULL")

    def visit_is_null(self, node: IsNull) -> str:
        return self._leaf(f"{node.column} IS {'NOT ' if node.negated else ''}NULL")

    def visit_is_nan(self, node: IsNaN) -> str:
        return self._leaf(f"{'NOT ' if node.negated else ''}isnan({node.column})")

    def visit_starts_with(self, node: StartsWith) -> str:
        return self._leaf(f"{node.column} LIKE '{node.prefix}%'")

    def visit_part_comparison(self, node: PartComparison) -> str:
        return self._leaf(f"{node.part}({node.column}) {node.op} {node.value!r}")

    def visit_and(self, left: str, right: str) -> str:
        return f"({left} AND {right})"

    def visit_or(self, left: str, right: str) -> str:
        return f"({left} OR {right})"

    def visit_not(self, child: str) -> str:
        return f"NOT {child}"


def test_every_kind_of_node_reaches_its_method_children_first_left_to_right() -> None:
    tree = And(
        Or(Comparison("<", "a", 1), Not(InList("b", (1, 2)))),
        Or(
            And(IsNull("c", negated=True), IsNaN("d")),
            Or(
                StartsWith("e", "p"),
                And(
                    AlwaysTrue(),
                    Or(
                        AlwaysFalse(),
                        Or(
                            Unknown("udf"),
                            Or(NullComparison("=", "f"), PartComparison("hour", "=", "g", 3)),
                        ),
                    ),
                ),
            ),
        ),
    )
    render = Render()
    assert visit(tree, render) == (
        "((a < 1 OR NOT b IN (1, 2)) AND ((c IS NOT NULL AND isnan(d)) OR "
        "(e LIKE 'p%' OR (TRUE AND (FALSE OR (?udf OR (f = NULL OR hour(g) = 3)))))))"
    )
    assert render.met == [
        "a < 1",
        "b IN (1, 2)",
        "c IS NOT NULL",
        "isnan(d)",
        "e LIKE 'p%'",
        "TRUE",
        "FALSE",
        "?udf",
        "f = NULL",
        "hour(g) = 3",
    ]


def test_there_is_one_method_per_kind_of_node() -> None:
    assert len(PredicateVisitor.__abstractmethods__) == len(get_args(Predicate)) == 13


def test_a_visitor_that_forgets_a_kind_of_node_cannot_be_made() -> None:
    methods = {
        name: lambda self, *children: "x"
        for name in PredicateVisitor.__abstractmethods__
        if name != "visit_is_nan"
    }
    forgetful = type("Forgetful", (PredicateVisitor,), methods)
    with pytest.raises(TypeError, match=r"abstract method.*visit_is_nan"):
        forgetful()


@pytest.mark.parametrize("thing", [None, "a = 1", ("a", "=", 1)])
def test_visiting_what_is_not_a_predicate_names_it(thing: object) -> None:
    with pytest.raises(TypeError, match=r"cannot visit .* not a predicate node"):
        visit(thing, Render())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("tree", "rewritten"),
    [
        (Not(Not(Comparison("<=>", "a", 1))), Comparison("<=>", "a", 1)),
        (Not(Comparison("<=>", "a", 1)), Unknown("NOT <=>")),
        (Not(Unknown("udf")), Unknown("udf")),
        (Not(Not(Not(AlwaysTrue()))), AlwaysFalse()),
        (
            Not(And(Comparison("<", "a", 1), IsNull("b"))),
            Or(Comparison(">=", "a", 1), IsNull("b", negated=True)),
        ),
        (
            Not(Or(InList("a", (1,)), And(StartsWith("s", "p"), Not(IsNaN("x"))))),
            And(InList("a", (1,), negated=True), Or(StartsWith("s", "p", True), IsNaN("x"))),
        ),
        (Not(Or(AlwaysFalse(), Comparison("=", "a", 1))), Comparison("!=", "a", 1)),
        (Not(And(AlwaysFalse(), Comparison("=", "a", 1))), AlwaysTrue()),
    ],
)
def test_rewrite_not_pushes_every_not_to_the_leaves(tree: Predicate, rewritten: Predicate) -> None:
    assert rewrite_not(tree) == rewritten


def test_referenced_and_prefilter_sql() -> None:
    tree = And(
        And(Comparison("<=>", "n", 3), InList("s", ("a", "it's"))),
        And(Or(Comparison("=", "n", 1), IsNull("m")), Not(Comparison("=", "x", 1.5))),
    )
    types = {"n": "bigint", "s": "string", "m": "int", "x": "double"}
    bound = Bound(tree, types)
    assert referenced(bound) == {"n", "s", "m", "x"}
    assert prefilter_sql(bound, types) == """"n" = 3 AND "s" IN ('a', 'it''s')"""
    assert prefilter_sql(bound, types, among={"s"}) == """"s" IN ('a', 'it''s')"""
    either = Or(Comparison("=", "n", 1), Comparison("=", "n", 2))
    assert prefilter_sql(Bound(either, types), types) is None


class _Compared(PredicateCollector[list[str]]):
    """Only comparisons gathered: every other leaf gives nothing."""

    def empty(self) -> list[str]:
        return []

    def combine(self, left: list[str], right: list[str]) -> list[str]:
        return left + right

    def visit_comparison(self, node: Comparison) -> list[str]:
        return [node.column]


def test_a_collector_overrides_only_the_leaves_it_gathers_from() -> None:
    tree = Or(
        And(Comparison("=", "a", 1), Not(IsNull("b"))),
        Not(And(Comparison("<", "c", 2), InList("d", (1, 2)))),
    )
    assert visit(tree, _Compared()) == ["a", "c"]
    assert visit(AlwaysTrue(), _Compared()) == []
