"""What a filter may contain: a predicate over the table's columns, nothing that reaches outside.

The Spark path hands a filter's text to Spark as is (``F.expr``), so whatever
Spark's SQL can do, a filter could: read a file through a subquery over
``text.`/etc/passwd```, call any Java method through ``reflect``, run a UDF,
stall a query. :func:`check_filter` refuses, by name and before Spark sees the
text, every construct that is not a predicate over the row: subqueries,
table references, parameter markers, ``${...}`` variable substitution,
functions that are not Spark built-ins (UDFs, qualified names), and the
built-ins that are not functions of the row (aggregates, window functions,
generators, table-valued functions, non-deterministic ones, reflection, and
those that read files named in their arguments).

Function names are judged as written, from the token stream sqlglot parsed
(sqlglot maps names onto its own classes: ``random()`` becomes ``Rand``,
``max_by`` ``ArgMax``), against Spark's own list
(:mod:`zorder.skipping.spark_functions`, generated from Spark). The structure
(subqueries, tables, windows) is judged on the parsed tree. sqlglot's lexer
agrees with Spark's on where strings, quoted names and comments begin and
end (both escape with backslashes, both nest ``/* */``), or sees more code
than Spark (Spark continues a ``--`` comment over a backslash-newline), never
less, as far as measured; the one text transform Spark makes before lexing,
``${...}`` substitution, is refused outright. On a classic session the Spark
path checks Spark's own parse of the text as well (:mod:`zorder.spark.guard`).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import NoReturn

from sqlglot import Token, TokenType, exp
from sqlglot.dialects.dialect import Dialect

from zorder.errors import ForbiddenFilterError
from zorder.skipping import spark_functions as spark

__all__ = ["ACCEPTED", "check_filter", "forbidden_call", "refuse", "spark_rendered"]

ACCEPTED = (
    "a filter must be a predicate over the table's columns: columns, literals, operators, "
    "CASE, CAST, lambdas in higher-order functions, and Spark's built-in deterministic scalar "
    "functions called by their plain names"
)

REFLECTION = frozenset({"reflect", "java_method", "try_reflect"})
"""Call any static Java method in the driver and executors."""

READS_FILES = frozenset(
    {
        # A descriptor file path or an avroSchemaUrl option is read by the function itself.
        "from_protobuf",
        "to_protobuf",
        "from_avro",
        "to_avro",
        "schema_of_avro",
        # XML options name an XSD file to read (rowValidationXSDPath).
        "from_xml",
        "schema_of_xml",
    }
)

_QUANTIFIERS = frozenset({"any", "some", "all"})
"""``x = ANY (...)``, ``s LIKE ALL (...)``: syntax after an operator, aggregates elsewhere."""

_BEFORE_QUANTIFIER = frozenset(
    {
        TokenType.EQ,
        TokenType.NEQ,
        TokenType.LT,
        TokenType.LTE,
        TokenType.GT,
        TokenType.GTE,
        TokenType.NULLSAFE_EQ,
        TokenType.LIKE,
        TokenType.ILIKE,
        TokenType.RLIKE,
    }
)

_SYNTAX = frozenset(
    {
        "and", "or", "not", "in", "is", "like", "ilike", "rlike", "regexp", "between", "case",
        "when", "then", "else", "escape", "from", "for", "distinct", "interval", "over",
        "within", "as", "on", "using", "values", "select", "table", "lateral", "with", "try_cast",
        "timestampadd", "timestampdiff", "timediff",
    }
)  # fmt: skip
"""Unquoted words a parenthesis may follow without a call (``x IN (1, 2)``, ``NOT (a)``);
what they open is judged on the tree (a ``SELECT`` there is a subquery). ``TRY_CAST`` and
``TIMESTAMPADD(unit, ...)`` and its kin are Spark grammar, not listed functions."""

_VARIABLE = re.compile(r"\$\{")


_RENDERED: ContextVar[bool] = ContextVar("zorder_filter_rendered_by_spark", default=False)


@contextlib.contextmanager
def spark_rendered() -> Iterator[None]:
    """Parse, within the block, SQL that Spark rendered from a Column filter: unchecked.

    A Column is built by the caller's code, not read from text, and Spark filters
    the rows with the Column itself, never with this text; the text only plans
    skipping (a Column may call the caller's own UDFs, and that is the caller's to do).
    """
    token = _RENDERED.set(True)
    try:
        yield
    finally:
        _RENDERED.reset(token)


def check_filter(tree: exp.Expression, text: str) -> None:
    """Raise :class:`~zorder.errors.ForbiddenFilterError` if ``text`` (parsed as ``tree``)
    holds anything but a predicate over the row (see the module's docstring)."""
    if _RENDERED.get():
        return
    if _VARIABLE.search(text):
        refuse(
            text,
            "${...} variable substitution",
            "Spark replaces ${...} with a configuration value or an environment variable before "
            "it parses the text (write '$' || '{' for the characters)",
        )
    _check_tree(tree, text, _structure)
    _check_calls(text)  # before the tree's classes: it names a function as written
    _check_tree(tree, text, _aggregation)


def _check_tree(
    tree: exp.Expression, text: str, judge: Callable[[exp.Expression], str | None]
) -> None:
    for node in tree.walk():
        assert isinstance(node, exp.Expression)
        construct = judge(node)
        if construct is not None:
            refuse(text, construct)


def _structure(node: exp.Expression) -> str | None:
    """The name of the construct ``node`` opens, if it reaches outside the row."""
    if isinstance(node, exp.Exists) and isinstance(node.this, exp.Query | exp.Values):
        return "an EXISTS subquery"
    if isinstance(node, exp.In) and node.args.get("query") is not None:
        return "an IN (SELECT ...) subquery"
    if isinstance(node, exp.Subquery | exp.Query | exp.Values | exp.Lateral):
        return "a subquery"
    if isinstance(node, exp.Table | exp.From | exp.Join):
        table = node.find(exp.Table)
        return f"a table reference ({table.sql(dialect='spark')})" if table else "a table reference"
    if isinstance(node, exp.Block):
        return "more than one statement"
    if isinstance(node, exp.Placeholder | exp.Parameter):
        return f"the parameter marker {node.sql(dialect='spark')}"
    return None


def _aggregation(node: exp.Expression) -> str | None:
    """Aggregates and windows the names let through (written as syntax, like ``OVER``)."""
    if isinstance(node, exp.Window):
        return f"the window function {_function_name(node.this)} (OVER ...)"
    if isinstance(node, exp.AggFunc):
        return f"the aggregate function {_function_name(node)}"
    return None


def _function_name(node: exp.Expression) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.name)
    if isinstance(node, exp.Func):
        return str(node.sql_name()).lower()
    return node.sql(dialect="spark")


def _check_calls(text: str) -> None:
    """Every name written before an opening parenthesis must be a callable Spark built-in."""
    tokens = Dialect.get_or_raise("spark").tokenize(text)
    for index, token in enumerate(tokens[:-1]):
        if tokens[index + 1].token_type != TokenType.L_PAREN:
            continue
        before = tokens[index - 1] if index else None
        name = _call_name(token, before)
        if name is None:
            continue
        if before is not None and before.token_type == TokenType.DOT:
            refuse(text, f"the qualified function name {_qualified(tokens, index)}")
        problem = forbidden_call(name)
        if problem is not None:
            refuse(text, problem)


def _qualified(tokens: list[Token], index: int) -> str:
    """The dotted name ending at ``tokens[index]``, as written (``db.myudf``)."""
    parts = [str(tokens[index].text)]
    while index >= 2 and tokens[index - 1].token_type == TokenType.DOT:
        index -= 2
        parts.insert(0, str(tokens[index].text))
    return ".".join(parts)


def _call_name(token: Token, before: Token | None) -> str | None:
    """The function name ``token`` is, followed by a parenthesis; None if it is syntax."""
    if token.token_type == TokenType.IDENTIFIER:  # `abs`(x): quoted, still a call
        return str(token.text).lower()
    if before is not None and before.token_type in (TokenType.ALIAS, TokenType.DCOLON):
        return None  # CAST(x AS DECIMAL(10, 2)), x::DECIMAL(10, 2): a type's parameters
    name = str(token.text).lower()
    if name in _SYNTAX:
        return None
    if name in _QUANTIFIERS and before is not None and before.token_type in _BEFORE_QUANTIFIER:
        return None
    if token.token_type == TokenType.VAR or re.fullmatch(r"[a-z_][a-z0-9_]*", name):
        return name
    return None  # an operator or punctuation: ( after it is grouping


def forbidden_call(name: str) -> str | None:
    """What calling ``name`` in a filter is, if it may not be called; None if it may."""
    kinds = (
        (REFLECTION, "the reflection function"),
        (spark.AGGREGATE, "the aggregate function"),
        (spark.WINDOW, "the window function"),
        (spark.GENERATOR, "the generator function"),
        (spark.TABLE_VALUED, "the table-valued function"),
        (spark.NONDETERMINISTIC, "the non-deterministic function"),
        (READS_FILES, "the file-reading function"),
    )
    for names, kind in kinds:
        if name in names:
            return f"{kind} {name}"
    if name == "identifier":
        return "the IDENTIFIER clause (a name chosen at run time)"
    if name not in spark.BUILTIN:
        return f"the function {name}, which is not a Spark built-in (a UDF, or unknown)"
    return None


def refuse(text: str, construct: str, why: str | None = None) -> NoReturn:
    """Raise the :class:`~zorder.errors.ForbiddenFilterError` naming ``construct`` in ``text``."""
    shown = repr(text) if len(text) <= 200 else repr(text[:200]) + "..."
    because = f" ({why})" if why else ""
    raise ForbiddenFilterError(
        f"filter {shown} is refused: it holds {construct}{because}; {ACCEPTED}",
        text=text,
        construct=construct,
    )
