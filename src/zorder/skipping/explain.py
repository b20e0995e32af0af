"""A bound predicate as Spark SQL text: the filter as skipping planned it.

``explain`` shows it so a user can see why a file was kept: constants
folded (``d >= DATE'2024-05-25'`` for ``d >= date '2024-06-01' - interval
'7' day``), literals in the type Spark compares in, functions of a column
turned into ranges of it, and each part statistics cannot decide marked
with the reason.
"""

from __future__ import annotations

from zorder.columns import sql_identifier
from zorder.skipping.nodes import (
    And,
    Comparison,
    InList,
    IsNaN,
    IsNull,
    NullComparison,
    Or,
    PartComparison,
    StartsWith,
    Unknown,
)
from zorder.skipping.predicates import Bound, rewrite_not
from zorder.skipping.sql import sql_literal
from zorder.skipping.visitor import PredicateVisitor, visit

__all__ = ["planned_sql"]


def _operand(column: str, domain: str | None) -> str:
    return (
        sql_identifier(column)
        if domain is None
        else f"CAST({sql_identifier(column)} AS {domain.upper()})"
    )


# The unit of the wall clock a part is monotone within (parts.py's rule).
_WITHIN = {"hour": "day", "minute": "hour", "second": "minute", "day": "month"}
_WITHIN |= {"dayofweek": "week", "weekday": "week"}


class _Planned(PredicateVisitor[str]):
    def visit_true(self) -> str:
        return "TRUE"

    def visit_false(self) -> str:
        return "FALSE"

    def visit_unknown(self, node: Unknown) -> str:
        return f"[kept by statistics: {node.reason or 'not decidable'}]"

    def visit_comparison(self, node: Comparison) -> str:
        return f"{_operand(node.column, node.domain)} {node.op} {sql_literal(node.value)}"

    def visit_in_list(self, node: InList) -> str:
        listed = [sql_literal(v) for v in node.values] + (["NULL"] if node.has_null else [])
        negation = "NOT " if node.negated else ""
        return f"{_operand(node.column, node.domain)} {negation}IN ({', '.join(listed)})"

    def visit_null_comparison(self, node: NullComparison) -> str:
        return f"{sql_identifier(node.column)} {node.op} NULL"

    def visit_is_null(self, node: IsNull) -> str:
        return f"{sql_identifier(node.column)} IS {'NOT ' if node.negated else ''}NULL"

    def visit_is_nan(self, node: IsNaN) -> str:
        return f"{'NOT ' if node.negated else ''}isnan({sql_identifier(node.column)})"

    def visit_starts_with(self, node: StartsWith) -> str:
        call = f"startswith({sql_identifier(node.column)}, {sql_literal(node.prefix)})"
        return f"NOT {call}" if node.negated else call

    def visit_part_comparison(self, node: PartComparison) -> str:
        call = f"{node.part}({sql_identifier(node.column)})"
        within = _WITHIN.get(node.part, "year")
        return (
            f"{call} {node.op} {sql_literal(node.value)} [bounded per file: only on files "
            f"whose {sql_identifier(node.column)} lies within one {within} of the wall clock"
            f"{' with one UTC offset' if node.part in ('hour', 'minute', 'second') else ''}]"
        )

    def visit_and(self, left: str, right: str) -> str:
        return f"({left} AND {right})"

    def visit_or(self, left: str, right: str) -> str:
        return f"({left} OR {right})"

    def visit_not(self, child: str) -> str:
        return f"NOT {child}"


def planned_sql(predicate: Bound) -> str:
    """``predicate`` as statistics evaluate it (its NOTs pushed to the leaves), as Spark SQL,
    its undecidable parts named in brackets."""
    tree = rewrite_not(predicate.tree)
    text = visit(tree, _Planned())
    return text[1:-1] if isinstance(tree, And | Or) else text
