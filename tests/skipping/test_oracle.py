"""The evaluator agrees with the slow per-file oracle on every file, for every type."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.skipping.oracle import Outcome, evaluate
from tests.skipping.test_soundness import (
    _EDGE_CASES,
    TYPES,
    Node,
    files_of,
    kept,
    leaves,
    predicates,
    render,
    rows_strategy,
)
from zorder.skipping import bind, parse_predicate


def check(rows: list[dict[str, Any]], node: Node, files: int, style: str) -> None:
    summaries = files_of(rows, files, style)
    sql = render(node)
    bound = bind(parse_predicate(sql), TYPES)
    expected = [evaluate(bound.tree, s, TYPES) is Outcome.ROWS_MIGHT_MATCH for s in summaries]
    assert kept(sql, summaries) == expected, sql


@settings(max_examples=3 * settings().max_examples)
@given(rows_strategy, predicates, st.integers(1, 6), st.sampled_from(["zorder", "plain", "bare"]))
def test_evaluator_equals_oracle(
    rows: list[dict[str, Any]], node: Node, files: int, style: str
) -> None:
    check(rows, node, files, style)


def _edge_cases(test: Any) -> Any:
    for rows, node in _EDGE_CASES:
        for style in ("plain", "zorder"):
            test = example(rows, node, 1, style)(test)
    return test


@_edge_cases
@settings(max_examples=3 * settings().max_examples)
@given(rows_strategy, leaves(), st.integers(1, 6), st.sampled_from(["zorder", "plain"]))
def test_evaluator_leaves_equal_oracle(
    rows: list[dict[str, Any]], node: Node, files: int, style: str
) -> None:
    check(rows, node, files, style)
