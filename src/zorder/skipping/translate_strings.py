"""Spark's string functions and pattern matches as DuckDB SQL with Spark's meaning.

Java's case mapping, code-point lengths, ``substring``'s negative and zero positions,
NULL-propagating ``concat``, and LIKE, ILIKE and RLIKE with Java's patterns
(:mod:`zorder.skipping.translate_regex` writes them for RE2): each written so that
DuckDB answers what Spark answers. Handlers of :mod:`zorder.skipping.translator`; their
operands are cast to strings as Spark casts them.
"""

from __future__ import annotations

from sqlglot import exp

from zorder.skipping.constants import NotConstantError, constant
from zorder.skipping.translate_regex import java_regex, like_regex
from zorder.skipping.translate_types import RefusedError, Translating, Value, literal_sql


def _string(t: Translating, node: exp.Expression) -> Value:
    value = t.value(node)
    if value.type == "null":
        return Value("CAST(NULL AS VARCHAR)", "string")
    return t.cast(value, "string")


def _pattern(t: Translating, node: exp.Expression, what: str) -> str | None:
    try:
        literal = constant(node, t.context)
    except NotConstantError:
        raise RefusedError(f"{what} with a pattern that is not a literal") from None
    if literal is None:
        return None
    if not isinstance(literal.value, str):
        raise RefusedError(f"{what} with a {literal.type} pattern")
    return str(literal.value)


def like(t: Translating, node: exp.Expression) -> Value:
    escape = "\\"
    if isinstance(node, exp.Escape):
        escape_text = _pattern(t, node.expression, "ESCAPE")
        if escape_text is None or len(escape_text) != 1:
            raise RefusedError("an ESCAPE that is not one character")
        escape = escape_text
        node = node.this
    negated = bool(node.args.get("negate"))
    insensitive = isinstance(node, exp.ILike)
    what = "ILIKE" if insensitive else "LIKE"
    target = _string(t, node.this)
    pattern = _pattern(t, node.expression, what)
    if pattern is None:
        sql = "CAST(NULL AS BOOLEAN)"
    else:
        if insensitive:  # Spark: lower(x) LIKE lower(pattern), with Java's lower case
            pattern = pattern.lower()
            target = Value(f"zorder_lower({target.sql})", "string", raises=target.raises)
        regex = like_regex(pattern, escape)
        sql = f"regexp_full_match({target.sql}, {literal_sql(regex, 'string')})"
    if negated:
        sql = f"(NOT {sql})"
    return Value(sql, "boolean", raises=target.raises)


def rlike(t: Translating, node: exp.RegexpLike) -> Value:
    target = _string(t, node.this)
    pattern = _pattern(t, node.expression, "RLIKE")
    if pattern is None:
        return Value("CAST(NULL AS BOOLEAN)", "boolean")
    regex = java_regex(pattern)
    sql = f"regexp_matches({target.sql}, {literal_sql(regex, 'string')})"
    return Value(sql, "boolean", raises=target.raises)


def _affix(t: Translating, node: exp.Expression, function: str) -> Value:
    left, right = _string(t, node.this), _string(t, node.expression)
    return Value(
        f"{function}({left.sql}, {right.sql})", "boolean", raises=left.raises or right.raises
    )


def starts_with(t: Translating, node: exp.StartsWith) -> Value:
    return _affix(t, node, "starts_with")


def ends_with(t: Translating, node: exp.EndsWith) -> Value:
    return _affix(t, node, "suffix")


def contains(t: Translating, node: exp.Contains) -> Value:
    return _affix(t, node, "contains")


def case_map(t: Translating, node: exp.Upper | exp.Lower) -> Value:
    inner = _string(t, node.this)
    function = "zorder_upper" if isinstance(node, exp.Upper) else "zorder_lower"
    return Value(f"{function}({inner.sql})", "string", raises=inner.raises)


def length(t: Translating, node: exp.Length) -> Value:
    inner = _string(t, node.this)  # code points, as Spark counts (and DuckDB's length)
    return Value(f"CAST(length({inner.sql}) AS INTEGER)", "int", raises=inner.raises)


def substring(t: Translating, node: exp.Substring) -> Value:
    text = _string(t, node.this)
    start = t.integer(node.args.get("start"), "substring's position")
    given = node.args.get("length")
    length = (
        t.integer(given, "substring's length")
        if given is not None
        else Value("2147483647", "bigint")
    )
    # UTF8String.substringSQL: a position of 0 is 1, a negative one counts from the end.
    n = f"length({text.sql})"
    pos = f"CAST({start.sql} AS BIGINT)"
    begin = f"(CASE WHEN {pos} > 0 THEN {pos} - 1 WHEN {pos} < 0 THEN {n} + {pos} ELSE 0 END)"
    end = f"({begin} + CAST({length.sql} AS BIGINT))"
    first = f"greatest({begin}, 0)"
    sql = (
        f"(CASE WHEN {text.sql} IS NULL OR {pos} IS NULL OR {end} IS NULL THEN NULL "
        f"WHEN {first} >= {end} THEN '' "
        f"ELSE substring({text.sql}, {first} + 1, {end} - {first}) END)"
    )
    return Value(sql, "string", raises=text.raises or start.raises or length.raises)


def concat(t: Translating, node: exp.Concat | exp.DPipe) -> Value:
    parts = [node.this, node.expression] if isinstance(node, exp.DPipe) else node.expressions
    values = [_string(t, part) for part in parts]
    # Spark's concat is NULL when any argument is (DuckDB's || too; its concat skips them).
    sql = " || ".join(f"({v.sql})" for v in values)
    return Value(f"({sql})", "string", raises=any(v.raises for v in values))
