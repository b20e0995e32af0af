"""Constant string functions folded as Spark computes them: concat, upper, substring, trim.

Arguments are cast to strings as Spark casts them; ``substring``, ``left`` and
``right`` count positions as Spark's ``UTF8String`` does (a negative position from the
end), and what Java and Python compute differently (case mapping outside ASCII) is left
unfolded. Handlers of the folder of :mod:`zorder.skipping.constants`.
"""

from __future__ import annotations

from sqlglot import exp

from zorder.skipping.coercion import InexactError
from zorder.skipping.folding import INT_MAX, Folding, int_arg
from zorder.skipping.numbers import Operand


def _string(f: Folding, operand: Operand) -> str | None:
    """An argument of a string function, cast to a string as Spark casts it."""
    if operand.value is None:
        return None
    return f.text(operand)


def concat(f: Folding, node: exp.Expression) -> Operand:
    if node.args.get("coalesce"):  # NULLs skipped: not Spark's concat
        raise InexactError("concat that skips NULLs")
    parts = [node.this, node.expression] if isinstance(node, exp.DPipe) else list(node.expressions)
    texts = [_string(f, f.fold(p)) for p in parts]
    if any(t is None for t in texts):
        return Operand(None, "string")
    return Operand("".join(t for t in texts if t is not None), "string")


def case_change(f: Folding, node: exp.Upper | exp.Lower) -> Operand:
    text = _string(f, f.fold(node.this))
    if text is None:
        return Operand(None, "string")
    if not text.isascii():  # Java's and Python's case mappings differ outside ASCII
        raise InexactError(f"the case of the non-ASCII {text!r}")
    return Operand(text.upper() if isinstance(node, exp.Upper) else text.lower(), "string")


def substring(f: Folding, node: exp.Substring) -> Operand:
    text_operand, start, length = f.args(node, "this", "start", "length")
    assert text_operand is not None
    text = _string(f, text_operand)
    position, count = int_arg(start, 1), int_arg(length, INT_MAX)
    if text is None or position is None or count is None:
        return Operand(None, "string")
    return Operand(_substring_sql(text, position, count), "string")


def left_right(f: Folding, node: exp.Left | exp.Right) -> Operand:
    text = _string(f, f.fold(node.this))
    count = int_arg(f.fold(node.expression), 0)
    if text is None or count is None:
        return Operand(None, "string")
    if count <= 0:
        return Operand("", "string")
    if isinstance(node, exp.Left):
        return Operand(_substring_sql(text, 1, count), "string")
    return Operand(_substring_sql(text, -count, INT_MAX), "string")


def trim(f: Folding, node: exp.Trim) -> Operand:
    if node.args.get("expression") is not None or node.args.get("collation") is not None:
        # sqlglot gives ltrim(a, b) and TRIM(LEADING b FROM a) the same shape.
        raise InexactError("trim of other characters than spaces")
    text = _string(f, f.fold(node.this))
    if text is None:
        return Operand(None, "string")
    position = str(node.args.get("position") or "BOTH").upper()
    if position == "LEADING":
        return Operand(text.lstrip(" "), "string")
    if position == "TRAILING":
        return Operand(text.rstrip(" "), "string")
    return Operand(text.strip(" "), "string")


def length(f: Folding, node: exp.Length) -> Operand:
    operand = f.fold(node.this)
    if operand.type not in ("string", "void"):
        raise InexactError(f"length of a {operand.type}")
    text = _string(f, operand)
    return Operand(None if text is None else len(text), "int")


def pad(f: Folding, node: exp.Pad) -> Operand:
    text = _string(f, f.fold(node.this))
    width = int_arg(f.fold(node.expression), 0)
    fill_node = node.args.get("fill_pattern")
    fill = " " if fill_node is None else _string(f, f.fold(fill_node))
    if text is None or width is None or fill is None:
        return Operand(None, "string")
    return Operand(_pad(text, width, fill, left=bool(node.args.get("is_left"))), "string")


def replace(f: Folding, node: exp.Replace) -> Operand:
    source, search, replacement = f.args(node, "this", "expression", "replacement")
    assert source is not None
    assert search is not None
    texts = [_string(f, o) if o is not None else "" for o in (source, search, replacement)]
    if any(t is None for t in texts):
        return Operand(None, "string")
    text, old, new = (str(t) for t in texts)
    return Operand(text.replace(old, new) if old else text, "string")


def _substring_sql(text: str, position: int, length: int) -> str:
    """UTF8String.substringSQL: 1-based, a negative position counts from the end."""
    size = len(text)
    start = position - 1 if position > 0 else (size + position if position < 0 else 0)
    end = min(max(start + length, -INT_MAX - 1), INT_MAX)
    start = max(start, 0)
    if start >= end:
        return ""
    return text[start:end]


def _pad(text: str, width: int, fill: str, *, left: bool) -> str:
    spaces = width - len(text)
    if spaces <= 0 or not fill:
        return text[: max(width, 0)]
    padding = (fill * (spaces // len(fill) + 1))[:spaces]
    return padding + text if left else text + padding
