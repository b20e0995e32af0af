"""The vectorized evaluator agrees with the per-file reference on every file."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.skipping.test_soundness import (
    _EDGE_CASES,
    TYPES,
    Node,
    leaves,
    predicates,
    render,
    rows_strategy,
    summarize,
)
from zorder.skipping import FileSummary, Outcome, bind, evaluate, parse_predicate
from zorder.skipping.vectorized import might_match_mask

ARROW_TYPES = {
    "n": pa.int64(),
    "x": pa.float64(),
    "s": pa.string(),
    "d": pa.date32(),
    "t": pa.timestamp("us", tz="UTC"),
}


def actions_table(summaries: list[FileSummary]) -> pa.Table:
    """Shaped like deltalake's get_add_actions(flatten=False)."""

    def struct(kind: str, types: dict[str, pa.DataType]) -> pa.StructArray:
        values = [getattr(s, kind) for s in summaries]
        arrays = [pa.array([v.get(c) for v in values], types[c]) for c in types]
        return pa.StructArray.from_arrays(arrays, names=list(types))

    return pa.table(
        {
            "path": [s.path for s in summaries],
            "size_bytes": pa.array([100] * len(summaries), pa.int64()),
            "num_records": pa.array([s.num_records for s in summaries], pa.int64()),
            "null_count": struct("null_count", dict.fromkeys(ARROW_TYPES, pa.int64())),
            "min": struct("min_values", ARROW_TYPES),
            "max": struct("max_values", ARROW_TYPES),
        }
    )


def check(rows: list[dict[str, Any]], node: Node, files: int, style: str) -> None:
    chunks = [c for c in (rows[i::files] for i in range(files)) if c]
    prefix = "zorder-" if style == "zorder" else ""
    summaries = [summarize(c, style, f"{prefix}f{i}") for i, c in enumerate(chunks)]
    bound = bind(parse_predicate(render(node)), TYPES)
    expected = [evaluate(bound, s, TYPES) is Outcome.ROWS_MIGHT_MATCH for s in summaries]
    assert list(might_match_mask(bound, actions_table(summaries), TYPES)) == expected, render(node)


@settings(max_examples=600)
@given(rows_strategy, predicates, st.integers(1, 6), st.sampled_from(["zorder", "plain", "bare"]))
def test_vectorized_equals_per_file(
    rows: list[dict[str, Any]], node: Node, files: int, style: str
) -> None:
    check(rows, node, files, style)


@example(*_EDGE_CASES[0], 1, "plain")
@example(*_EDGE_CASES[0], 1, "zorder")
@example(*_EDGE_CASES[1], 1, "plain")
@example(*_EDGE_CASES[1], 1, "zorder")
@example(*_EDGE_CASES[2], 1, "plain")
@example(*_EDGE_CASES[2], 1, "zorder")
@example(*_EDGE_CASES[3], 1, "plain")
@example(*_EDGE_CASES[3], 1, "zorder")
@example(*_EDGE_CASES[4], 1, "plain")
@example(*_EDGE_CASES[4], 1, "zorder")
@example(*_EDGE_CASES[5], 1, "plain")
@example(*_EDGE_CASES[5], 1, "zorder")
@example(*_EDGE_CASES[6], 1, "plain")
@example(*_EDGE_CASES[6], 1, "zorder")
@example(*_EDGE_CASES[7], 1, "plain")
@example(*_EDGE_CASES[7], 1, "zorder")
@settings(max_examples=600)
@given(rows_strategy, leaves(), st.integers(1, 6), st.sampled_from(["zorder", "plain"]))
def test_vectorized_leaves_equal_per_file(
    rows: list[dict[str, Any]], node: Node, files: int, style: str
) -> None:
    check(rows, node, files, style)
