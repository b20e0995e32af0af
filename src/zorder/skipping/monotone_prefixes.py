"""Monotone rewrites of a string prefix: ``substring(c, 1, k)`` and ``left(c, k)`` compared.

Strings order by code point (UTF-8 bytes), so the first ``k`` characters of ``c``
compared with a constant are comparisons of ``c`` itself with the constant cut to ``k``
characters, and :class:`~zorder.skipping.nodes.StartsWith`, whose bytes agree with
Spark's characters since a UTF-8 prefix ends on a character boundary.
"""

from __future__ import annotations

from sqlglot import exp

from zorder.skipping.monotone_steps import (
    SMALL_INTEGERS,
    Constant,
    NotHandledError,
    column_name,
    integer_arg,
)
from zorder.skipping.nodes import (
    And,
    CompareOp,
    Comparison,
    IsNull,
    Not,
    Or,
    Predicate,
    StartsWith,
    TypedLiteral,
)


def _prefix_length(side: exp.Expression, constant: Constant) -> tuple[str, int] | None:
    if isinstance(side, exp.Substring):
        column = column_name(side.this)
        start, length = side.args.get("start"), side.args.get("length")
        if column is None or start is None or length is None:
            return None
        if integer_arg(start, constant, SMALL_INTEGERS) not in (0, 1):
            raise NotHandledError
        return column, integer_arg(length, constant, SMALL_INTEGERS)
    if isinstance(side, exp.Left):
        column = column_name(side.this)
        if column is None:
            return None
        return column, integer_arg(side.expression, constant, SMALL_INTEGERS)
    return None


def rewrite_prefix(
    op: CompareOp, side: exp.Expression, value: TypedLiteral, constant: Constant
) -> Predicate | None:
    found = _prefix_length(side, constant)
    if found is None:
        return None
    column, k = found
    if k < 1 or value.type != "string" or not isinstance(value.value, str):
        raise NotHandledError
    return _prefix_steps(op, column, value.value, k)


def _prefix_steps(op: CompareOp, column: str, text: str, k: int) -> Predicate:
    """``left(c, k) op text``, for a string column (a CAST(c AS STRING) in each comparison
    keeps any other type Unknown, as StartsWith is)."""

    def cmp(comparison: CompareOp, literal: str) -> Comparison:
        return Comparison(comparison, column, TypedLiteral(literal, "string"), cast="string")

    if len(text) < k:  # a shorter string is a prefix of c only when it is c: ordered alike
        return cmp(op, text)
    cut = text[:k]
    # left(c, k) <= cut: c <= cut or c starts with cut (else c differs first past cut)
    at_most = Or(cmp("<=", cut), StartsWith(column, cut))
    if len(text) == k:
        equal: Predicate = StartsWith(column, text)
        ordered: dict[str, Predicate] = {"<": cmp("<", text), ">=": cmp(">=", text), "<=": at_most}
    else:  # no k-character prefix is text: left(c, k) < text exactly when <= cut
        equal = And(cmp("=", text), cmp("!=", text))  # FALSE, or NULL for a NULL c
        ordered = {"<": at_most, "<=": at_most, ">=": Not(at_most)}
    if op in ordered:
        return ordered[op]
    match op:
        case ">":
            return Not(at_most)
        case "=":
            return equal
        case "!=":
            return Not(equal)
    return And(IsNull(column, negated=True), equal)  # <=>
