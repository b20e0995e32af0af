"""Spark's string functions and pattern matches: each defined once, its value and its SQL.

``concat`` (NULL when any argument is), ``upper``/``lower`` (Java's full case mapping;
folded for ASCII only, where Python's agrees), ``length`` (code points),
``substring``/``left``/``right`` (``UTF8String.substringSQL``: a position of 0 is 1, a
negative one counts from the end), ``trim``, ``lpad``/``rpad``, ``replace``,
``startswith``/``endswith``/``contains``, and LIKE, ILIKE and RLIKE with Java's patterns
(:mod:`zorder.skipping.patterns` writes them for RE2). Every argument is cast to a
string as Spark casts it (:mod:`zorder.skipping.casts`). For each function, the rule
that folds a constant call (``*_value``) stands next to the one that writes a call over
columns as DuckDB SQL (``*_sql``); :data:`FUNCTIONS` registers both in the one table of
:mod:`zorder.skipping.functions`.
"""

from __future__ import annotations

from sqlglot import exp

from zorder.skipping import casts
from zorder.skipping.coercion import InexactError
from zorder.skipping.numbers import Operand
from zorder.skipping.patterns import java_regex, like_regex
from zorder.skipping.rules import (
    INT_MAX,
    Classifying,
    DiffersError,
    Folding,
    Function,
    NotConstantError,
    Translating,
    Typed,
    int_arg,
)
from zorder.skipping.sql_values import RefusedError, Value, literal_sql


def _text(f: Folding, operand: Operand) -> str | None:
    """An argument of a string function, cast to a string as Spark casts it."""
    if operand.value is None:
        return None
    return casts.text_of(operand, f.zone)


def _string(t: Translating, node: exp.Expression) -> Value:
    value = t.value(node)
    if value.type == "null":
        return Value("CAST(NULL AS VARCHAR)", "string")
    return t.cast(value, "string")


def concat_value(f: Folding, node: exp.Expression) -> Operand:
    if node.args.get("coalesce"):  # NULLs skipped: not Spark's concat
        raise InexactError("concat that skips NULLs")
    parts = [node.this, node.expression] if isinstance(node, exp.DPipe) else list(node.expressions)
    texts = [_text(f, f.fold(p)) for p in parts]
    if any(t is None for t in texts):
        return Operand(None, "string")
    return Operand("".join(t for t in texts if t is not None), "string")


def concat_sql(t: Translating, node: exp.Concat | exp.DPipe) -> Value:
    parts = [node.this, node.expression] if isinstance(node, exp.DPipe) else node.expressions
    values = [_string(t, part) for part in parts]
    # Spark's concat is NULL when any argument is (DuckDB's || too; its concat skips them).
    sql = " || ".join(f"({v.sql})" for v in values)
    return Value(f"({sql})", "string", raises=any(v.raises for v in values))


def case_change_value(f: Folding, node: exp.Upper | exp.Lower) -> Operand:
    text = _text(f, f.fold(node.this))
    if text is None:
        return Operand(None, "string")
    if not text.isascii():  # Java's and Python's case mappings differ outside ASCII
        raise InexactError(f"the case of the non-ASCII {text!r}")
    return Operand(text.upper() if isinstance(node, exp.Upper) else text.lower(), "string")


def case_map_sql(t: Translating, node: exp.Upper | exp.Lower) -> Value:
    inner = _string(t, node.this)
    function = "zorder_upper" if isinstance(node, exp.Upper) else "zorder_lower"
    return Value(f"{function}({inner.sql})", "string", raises=inner.raises)


def length_value(f: Folding, node: exp.Length) -> Operand:
    operand = f.fold(node.this)
    if operand.type not in ("string", "void"):
        raise InexactError(f"length of a {operand.type}")
    text = _text(f, operand)
    return Operand(None if text is None else len(text), "int")


def length_sql(t: Translating, node: exp.Length) -> Value:
    inner = _string(t, node.this)  # code points, as Spark counts (and DuckDB's length)
    return Value(f"CAST(length({inner.sql}) AS INTEGER)", "int", raises=inner.raises)


def substring_value(f: Folding, node: exp.Substring) -> Operand:
    text_operand, start, length = f.args(node, "this", "start", "length")
    assert text_operand is not None
    text = _text(f, text_operand)
    position, count = int_arg(start, 1), int_arg(length, INT_MAX)
    if text is None or position is None or count is None:
        return Operand(None, "string")
    return Operand(_substring_of(text, position, count), "string")


def substring_sql(t: Translating, node: exp.Substring) -> Value:
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


def left_right_value(f: Folding, node: exp.Left | exp.Right) -> Operand:
    text = _text(f, f.fold(node.this))
    count = int_arg(f.fold(node.expression), 0)
    if text is None or count is None:
        return Operand(None, "string")
    if count <= 0:
        return Operand("", "string")
    if isinstance(node, exp.Left):
        return Operand(_substring_of(text, 1, count), "string")
    return Operand(_substring_of(text, -count, INT_MAX), "string")


def _substring_of(text: str, position: int, length: int) -> str:
    """UTF8String.substringSQL: 1-based, a negative position counts from the end."""
    size = len(text)
    start = position - 1 if position > 0 else (size + position if position < 0 else 0)
    end = min(max(start + length, -INT_MAX - 1), INT_MAX)
    start = max(start, 0)
    if start >= end:
        return ""
    return text[start:end]


def trim_value(f: Folding, node: exp.Trim) -> Operand:
    if node.args.get("expression") is not None or node.args.get("collation") is not None:
        # sqlglot gives ltrim(a, b) and TRIM(LEADING b FROM a) the same shape.
        raise InexactError("trim of other characters than spaces")
    text = _text(f, f.fold(node.this))
    if text is None:
        return Operand(None, "string")
    position = str(node.args.get("position") or "BOTH").upper()
    if position == "LEADING":
        return Operand(text.lstrip(" "), "string")
    if position == "TRAILING":
        return Operand(text.rstrip(" "), "string")
    return Operand(text.strip(" "), "string")


def pad_value(f: Folding, node: exp.Pad) -> Operand:
    text = _text(f, f.fold(node.this))
    width = int_arg(f.fold(node.expression), 0)
    fill_node = node.args.get("fill_pattern")
    fill = " " if fill_node is None else _text(f, f.fold(fill_node))
    if text is None or width is None or fill is None:
        return Operand(None, "string")
    return Operand(_pad(text, width, fill, left=bool(node.args.get("is_left"))), "string")


def _pad(text: str, width: int, fill: str, *, left: bool) -> str:
    spaces = width - len(text)
    if spaces <= 0 or not fill:
        return text[: max(width, 0)]
    padding = (fill * (spaces // len(fill) + 1))[:spaces]
    return padding + text if left else text + padding


def replace_value(f: Folding, node: exp.Replace) -> Operand:
    source, search, replacement = f.args(node, "this", "expression", "replacement")
    assert source is not None
    assert search is not None
    texts = [_text(f, o) if o is not None else "" for o in (source, search, replacement)]
    if any(t is None for t in texts):
        return Operand(None, "string")
    text, old, new = (str(t) for t in texts)
    return Operand(text.replace(old, new) if old else text, "string")


def _affix(t: Translating, node: exp.Expression, function: str) -> Value:
    left, right = _string(t, node.this), _string(t, node.expression)
    return Value(
        f"{function}({left.sql}, {right.sql})", "boolean", raises=left.raises or right.raises
    )


def starts_with_sql(t: Translating, node: exp.StartsWith) -> Value:
    return _affix(t, node, "starts_with")


def ends_with_sql(t: Translating, node: exp.EndsWith) -> Value:
    return _affix(t, node, "suffix")


def contains_sql(t: Translating, node: exp.Contains) -> Value:
    return _affix(t, node, "contains")


def _pattern(t: Translating, node: exp.Expression, what: str) -> str | None:
    try:
        literal = t.constant(node)
    except NotConstantError:
        raise RefusedError(f"{what} with a pattern that is not a literal") from None
    if literal is None:
        return None
    if not isinstance(literal.value, str):
        raise RefusedError(f"{what} with a {literal.type} pattern")
    return str(literal.value)


def like_sql(t: Translating, node: exp.Expression) -> Value:
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


def rlike_sql(t: Translating, node: exp.RegexpLike) -> Value:
    target = _string(t, node.this)
    pattern = _pattern(t, node.expression, "RLIKE")
    if pattern is None:
        return Value("CAST(NULL AS BOOLEAN)", "boolean")
    regex = java_regex(pattern)
    sql = f"regexp_matches({target.sql}, {literal_sql(regex, 'string')})"
    return Value(sql, "boolean", raises=target.raises)


# -- the same with ANSI mode off -----------------------------------------------------


def matching_ansi(c: Classifying, node: exp.Expression) -> Typed:
    """LIKE, ILIKE, RLIKE, startswith: a string against a string pattern means the same."""
    escape = node.args.get("escape")
    operands = [node.this, node.expression, *([escape] if escape is not None else [])]
    if any(c.operand(o).type not in ("string", None) for o in operands):
        raise DiffersError(node)
    return Typed("boolean")


def of_a_string_ansi(c: Classifying, node: exp.Upper | exp.Lower | exp.Length) -> Typed:
    """upper, lower and length of a string cannot raise: the same in both modes."""
    if c.operand(node.this).type != "string":
        raise DiffersError(node)
    return Typed("int" if isinstance(node, exp.Length) else "string")


_CONCAT = Function(concat_value, concat_sql)
_CASE = Function(case_change_value, case_map_sql, ansi=of_a_string_ansi)
_LIKE = Function(sql=like_sql, locates=True, ansi=matching_ansi)
FUNCTIONS: dict[type[exp.Expression] | str, Function] = {
    exp.Concat: _CONCAT,
    exp.DPipe: _CONCAT,
    exp.Upper: _CASE,
    exp.Lower: _CASE,
    exp.Length: Function(length_value, length_sql, ansi=of_a_string_ansi),
    exp.Substring: Function(substring_value, substring_sql),
    exp.Left: Function(left_right_value),
    exp.Right: Function(left_right_value),
    exp.Trim: Function(trim_value),
    exp.Pad: Function(pad_value),
    exp.Replace: Function(replace_value),
    exp.StartsWith: Function(sql=starts_with_sql, ansi=matching_ansi),
    exp.EndsWith: Function(sql=ends_with_sql),
    exp.Contains: Function(sql=contains_sql),
    exp.Like: _LIKE,
    exp.ILike: _LIKE,
    exp.Escape: Function(sql=like_sql, locates=True),
    exp.RegexpLike: Function(sql=rlike_sql, locates=True, ansi=matching_ansi),
}
