"""What a reader can be told before it reads: the columns a filter reads, and SQL to push down.

Both work on a predicate bound by :func:`zorder.skipping.rows.exact_predicate`
(and are importable from there too). The SQL is only a prefilter: an engine
with late materialization (DuckDB) drops most rows with it while reading,
and :func:`zorder.skipping.rows.row_mask` still decides every row exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zorder.skipping.predicates import (
    INTEGER_TYPES,
    Bound,
    Comparison,
    InList,
    IsNaN,
    IsNull,
    NullComparison,
    PartComparison,
    StartsWith,
    Unknown,
)
from zorder.skipping.visitor import PredicateCollector, PredicateVisitor, visit

__all__ = ["prefilter_sql", "quoted_name", "referenced"]


class _Referenced(PredicateCollector[set[str]]):
    """The columns each node reads (a comparison with NULL reads none: NULL whatever the
    column holds)."""

    def empty(self) -> set[str]:
        return set()

    def combine(self, left: set[str], right: set[str]) -> set[str]:
        return left | right

    def visit_comparison(self, node: Comparison) -> set[str]:
        return {node.column}

    def visit_in_list(self, node: InList) -> set[str]:
        return {node.column}

    def visit_is_null(self, node: IsNull) -> set[str]:
        return {node.column}

    def visit_is_nan(self, node: IsNaN) -> set[str]:
        return {node.column}

    def visit_starts_with(self, node: StartsWith) -> set[str]:
        return {node.column}

    def visit_part_comparison(self, node: PartComparison) -> set[str]:
        return {node.column}


def referenced(predicate: Bound) -> set[str]:
    """The columns a bound predicate reads."""
    return visit(predicate.tree, _Referenced())


def _sql_value(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value) if -(2**63) <= value < 2**63 else None
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"  # standard SQL: no backslash escapes
    return None


def quoted_name(name: str) -> str:
    """A column name as standard SQL quotes it (DuckDB's too)."""
    return '"' + name.replace('"', '""') + '"'


class _Prefilter(PredicateVisitor[list[str]]):
    """The SQL of each top-level conjunct that any engine reads as Spark does.

    Only an AND keeps its children's conditions: under an OR or a NOT a
    condition no longer bounds the rows, so those fold to nothing.
    """

    def __init__(self, columns: Mapping[str, str], among: set[str] | None) -> None:
        self.columns = columns
        self.among = among

    def _values_sql(self, column: str, values: tuple[Any, ...]) -> list[str] | None:
        """The literals' SQL when every one has the column's own (integer or string) type."""
        if self.among is not None and column not in self.among:
            return None
        type_name = self.columns[column]
        if type_name not in INTEGER_TYPES and type_name != "string":
            return None
        wanted = int if type_name in INTEGER_TYPES else str
        if not values or not all(type(v) is wanted for v in values):
            return None
        texts = [_sql_value(v) for v in values]
        return None if any(t is None for t in texts) else [str(t) for t in texts]

    def visit_comparison(self, node: Comparison) -> list[str]:
        if node.domain is not None:
            return []  # Spark converts the column first: SQL on the stored values differs
        texts = self._values_sql(node.column, (node.value,))
        if texts is None:
            return []
        op = "=" if node.op == "<=>" else node.op  # x <=> v is TRUE exactly where x = v is
        return [f"{quoted_name(node.column)} {op} {texts[0]}"]

    def visit_in_list(self, node: InList) -> list[str]:
        texts = self._values_sql(node.column, node.values)
        if texts is None or node.negated or node.domain is not None:
            return []
        return [f"{quoted_name(node.column)} IN ({', '.join(texts)})"]

    def visit_true(self) -> list[str]:
        return []

    def visit_false(self) -> list[str]:
        return []

    def visit_unknown(self, node: Unknown) -> list[str]:
        return []

    def visit_null_comparison(self, node: NullComparison) -> list[str]:
        return []

    def visit_is_null(self, node: IsNull) -> list[str]:
        return []

    def visit_is_nan(self, node: IsNaN) -> list[str]:
        return []

    def visit_starts_with(self, node: StartsWith) -> list[str]:
        return []

    def visit_part_comparison(self, node: PartComparison) -> list[str]:
        return []

    def visit_and(self, left: list[str], right: list[str]) -> list[str]:
        return left + right

    def visit_or(self, left: list[str], right: list[str]) -> list[str]:
        return []

    def visit_not(self, child: list[str]) -> list[str]:
        return []


def prefilter_sql(
    predicate: Bound, columns: Mapping[str, str], *, among: set[str] | None = None
) -> str | None:
    """Standard SQL that every row satisfying ``predicate`` satisfies, or None.

    It lets an engine with late materialization (DuckDB) drop most rows while
    reading; :func:`row_mask` then decides exactly. Only the top-level
    conjuncts whose meaning no SQL engine changes are kept: integers and
    strings (by bytes) compared with literals of their own type. ``among``
    limits it to those columns (the ones stored in the files).
    """
    kept = visit(predicate.tree, _Prefilter(columns, among))
    return " AND ".join(kept) if kept else None
