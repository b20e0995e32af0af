"""What a filter's tokens tell that its sqlglot tree no longer does, checked as Spark's lexer
would: the units of an interval, and the typed literals at the negative edge of their type
(``-128Y`` is one literal in Spark's grammar). :mod:`zorder.skipping.sql` calls these once
per parse.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokenizer_core import Token, TokenType

from zorder.errors import FilterParseError
from zorder.skipping.coercion import number_literal
from zorder.skipping.constants import spark_type_name

__all__ = ["check_interval_units", "negative_edge_literals", "shown", "unary_plus_literals"]


# The units Spark's parser reads after an interval's value; sqlglot also reads 'd', 'h',
# 'm' ... as units (and folding would compute them), where Spark refuses the text.
_INTERVAL_UNITS = frozenset(
    f"{unit}{plural}"
    for unit in (
        *("year", "month", "week", "day", "hour", "minute", "second"),
        *("millisecond", "microsecond"),
    )
    for plural in ("", "s")
)


def check_interval_units(tokens: list[Token], text: str) -> None:
    for index, token in enumerate(tokens):
        if token.token_type != TokenType.INTERVAL:
            continue
        at = index + 1
        while at + 1 < len(tokens):
            if tokens[at].token_type in (TokenType.DASH, TokenType.PLUS):
                at += 1
            if tokens[at].token_type not in (TokenType.STRING, TokenType.NUMBER):
                break
            unit = tokens[at + 1] if at + 1 < len(tokens) else None
            if unit is None or unit.token_type != TokenType.VAR:
                break
            if unit.text.lower() not in _INTERVAL_UNITS:
                raise FilterParseError(
                    f"cannot parse filter {shown(text)}: {unit.text!r} is not an interval "
                    f"unit Spark reads; write one of {', '.join(sorted(_INTERVAL_UNITS)[::2])}",
                    text=text,
                )
            at += 2


_SUFFIX_TYPES = {
    TokenType.TINYINT: "tinyint",
    TokenType.SMALLINT: "smallint",
    TokenType.BIGINT: "bigint",
}
_EDGES = {"tinyint": 2**7, "smallint": 2**15, "bigint": 2**63}


def negative_edge_literals(tree: exp.Expression, tokens: list[Token], text: str) -> exp.Expression:
    """``tree`` with ``-128Y``, ``-32768S`` and ``-9223372036854775808L`` read as Spark reads
    them: one literal (its grammar takes the minus sign with the digits).

    sqlglot parses ``-128Y`` as ``-CAST(128 AS TINYINT)``, whose cast overflows; only the
    text tells the two apart. Where it holds both spellings of one edge, they cannot be
    told apart in the tree, and the filter is refused.
    """
    suffixed: dict[tuple[str, int], int] = {}
    for index in range(len(tokens) - 3):
        dash, number, marker, kind = tokens[index : index + 4]
        if (
            dash.token_type == TokenType.DASH
            and number.token_type == TokenType.NUMBER
            and marker.token_type == TokenType.DCOLON
            and kind.token_type in _SUFFIX_TYPES
            and number.text.isdigit()
        ):
            key = (_SUFFIX_TYPES[kind.token_type], int(number.text))
            suffixed[key] = suffixed.get(key, 0) + 1
    if not suffixed:
        return tree
    edges: dict[tuple[str, int], list[exp.Neg]] = {}
    for node in tree.find_all(exp.Neg):
        inner = node.this
        if not (isinstance(inner, exp.Cast) and isinstance(inner.this, exp.Literal)):
            continue
        kind_of, digits = spark_type_name(inner.to), str(inner.this.this)
        if kind_of in _EDGES and not inner.this.is_string and digits == str(_EDGES[kind_of]):
            edges.setdefault((kind_of, _EDGES[kind_of]), []).append(node)
    for key, nodes in edges.items():
        if suffixed.get(key, 0) != len(nodes):
            raise FilterParseError(
                f"cannot plan filter {shown(text)}: it holds -{key[1]} both as a typed "
                f"literal and as a negated CAST of {key[1]}, which read alike here; write "
                f"CAST(-{key[1]} AS {key[0].upper()}) for the literal",
                text=text,
            )
        for node in nodes:
            edge = exp.Cast(this=exp.Literal.number(f"-{key[1]}"), to=node.this.to.copy())
            if node is tree:
                tree = edge
            else:
                node.replace(edge)
    return tree


# Tokens after which a + is a sign, not an addition: the start, an opening, a separator,
# an operator or a keyword that takes an operand. Anything else (an operand's end) makes
# it an addition, the reading that changes nothing here.
_BEFORE_SIGN = frozenset(
    {
        TokenType.L_PAREN,
        TokenType.COMMA,
        *(TokenType.EQ, TokenType.NEQ, TokenType.NULLSAFE_EQ),
        *(TokenType.LT, TokenType.LTE, TokenType.GT, TokenType.GTE),
        *(TokenType.PLUS, TokenType.DASH, TokenType.STAR, TokenType.SLASH, TokenType.MOD),
        *(TokenType.AND, TokenType.OR, TokenType.NOT),
        *(TokenType.CASE, TokenType.WHEN, TokenType.THEN, TokenType.ELSE),
        *(TokenType.BETWEEN, TokenType.IN, TokenType.IS),
    }
)


def unary_plus_literals(tree: exp.Expression, tokens: list[Token]) -> exp.Expression:
    """``tree`` with each number written after a unary ``+`` read as Spark reads it: an
    expression of the number's type (``UnaryPositive``), not a literal.

    sqlglot drops the sign, so ``+9223372036854775808`` would be the literal Spark's
    analyzer folds a comparison with (DecimalPrecision) and ``+5`` one typed by its
    digits against a decimal. Each such number becomes a CAST to its own type, which
    folds as a computed constant.
    """
    signed = {
        number.start
        for previous, sign, number in zip([None, *tokens], tokens, tokens[1:], strict=False)
        if sign.token_type == TokenType.PLUS
        and number.token_type == TokenType.NUMBER
        and (previous is None or previous.token_type in _BEFORE_SIGN)
    }
    if not signed:
        return tree
    for literal in list(tree.find_all(exp.Literal)):
        if literal.is_string or literal.meta.get("start") not in signed:
            continue
        try:
            _, type_name = number_literal(str(literal.this))
        except ValueError:
            continue  # the folder refuses it as it stands
        computed = exp.Cast(this=literal.copy(), to=exp.DataType.build(type_name, dialect="spark"))
        if literal is tree:
            return computed
        literal.replace(computed)
    return tree


def shown(text: str) -> str:
    return repr(text) if len(text) <= 200 else repr(text[:200]) + f"... ({len(text)} characters)"
