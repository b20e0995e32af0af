"""The in-process row filter keeps exactly the rows Spark's semantics keep, or refuses.

Random small tables and random predicates from the soundness fuzz: each
predicate, rendered as SQL, goes through the exact parse and bind of
``to_arrow`` and is evaluated on Arrow data; the reference interpreter of
the soundness fuzz (which shares no code with either) says which rows are
TRUE. Only constructs the evaluator cannot answer may be refused.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from hypothesis import given, settings

from tests.skipping.test_soundness import (
    ARROW_TYPES,
    TYPES,
    Node,
    predicates,
    render,
    rows_strategy,
    truth,
)
from zorder.errors import UnsupportedFilterError
from zorder.skipping.rows import exact_predicate, row_mask
from zorder.skipping.sql import parse_unfolded

ALL_ARROW_TYPES = {**ARROW_TYPES, "y": pa.binary()}


def may_be_refused(node: Node) -> bool:
    """Functions on columns, and comparisons of binary values, are left to Spark."""
    if node.kind == "opaque":
        return True
    if node.column == "y" and node.kind in ("cmp", "nullsafe", "between", "in", "notin"):
        return True
    return any(may_be_refused(child) for child in node.children)


def table_of(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.table(
        {c: pa.array([r.get(c) for r in rows], ALL_ARROW_TYPES[c]) for c in TYPES},
    )


@settings(max_examples=400, deadline=None)
@given(rows_strategy, predicates)
def test_rows_kept_are_the_reference_s(rows: list[dict[str, Any]], node: Node) -> None:
    sql = render(node)
    try:
        bound = exact_predicate(parse_unfolded(sql), TYPES)
    except UnsupportedFilterError:
        assert may_be_refused(node), sql
        return
    answers = row_mask(bound, table_of(rows), TYPES)
    kept = [i for i, answer in enumerate(answers.to_pylist()) if answer is True]
    assert kept == [i for i, row in enumerate(rows) if truth(node, row) is True], sql
