"""Spark's LIKE patterns and Java's regular expressions as RE2 patterns, for DuckDB.

DuckDB matches with RE2, Spark with ``java.util.regex``: the two read most simple
patterns alike but not all (Java's ``.`` and ``$`` know more line terminators, ``\\s``
and classes differ, RE2 has no lookaround or possessive quantifiers). The translator's
LIKE, ILIKE and RLIKE (:mod:`zorder.skipping.strings`) write their pattern
through this module, which spells out Java's meaning where RE2's differs and refuses,
naming it, every construct whose meanings differ or are not checked.

A pattern Spark rejects (a LIKE escape before another character than ``_``, ``%`` or
itself, an unclosed group) is refused too, not raised as Spark's error: Spark raises
only where its optimizer keeps the match, and answers where it folds it away unread
(``NULL AND s LIKE 'a\\b'``, ``CASE WHEN NULL THEN ..``, ``(s LIKE 'a\\b') = NULL``: no
row), which the translation does not decide as Spark does in every case.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from zorder.skipping.sql_values import RefusedError

# Why a pattern Spark rejects is refused rather than raised (the module's docstring).
_REJECTED = "Spark rejects it unless its optimizer folds the match away"


def like_regex(pattern: str, escape: str) -> str:
    """Spark's LIKE pattern as an RE2 pattern matching the whole string (Spark's
    ``escapeLikeRegex``: the escape may precede only ``_``, ``%`` or itself; a pattern
    Spark rejects is refused, named, as the module says why)."""
    out = ["(?s)"]
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == escape:
            if index + 1 >= len(pattern):
                raise RefusedError(
                    f"the LIKE pattern {pattern!r}, which ends with its escape character "
                    f"{escape!r} ({_REJECTED})"
                )
            following = pattern[index + 1]
            if following not in ("_", "%", escape):
                raise RefusedError(
                    f"the LIKE pattern {pattern!r}, whose escape character {escape!r} "
                    f"precedes {following!r}, not _, % or itself ({_REJECTED})"
                )
            out.append(re.escape(following))
            index += 2
            continue
        out.append(".*" if char == "%" else "." if char == "_" else re.escape(char))
        index += 1
    return "".join(out)


_REGEX_PLAIN = set(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-,;:'\"=<>!@#%&/~`"
)
_REGEX_ESCAPES = set(".^$*+?()[]{}|\\-/")
# Java's '.' stops at every line terminator; RE2's only at \n.
_JAVA_DOT = r"[^\n\r\x{85}\x{2028}\x{2029}]"
# Java's '$' (no MULTILINE) also matches before a final line terminator.
_JAVA_END = r"(?:\r\n|[\n\r\x{85}\x{2028}\x{2029}])?\z"


def java_regex(pattern: str) -> str:
    """A Java regular expression as the RE2 pattern matching the same strings, for the
    constructs both read alike; UnsupportedFilterError naming any other construct."""
    refuse = _refusal(pattern)
    out: list[str] = []
    index = 0
    depth = 0
    previous_quantifiable = False
    while index < len(pattern):
        char = pattern[index]
        if char in "*+?{":
            index, text = _quantifier(pattern, index, previous_quantifiable, refuse)
        elif char in "()":
            index, text, depth = _group(pattern, index, depth, refuse)
        else:
            index, text = _atom(pattern, index, refuse)
        out.append(text)
        previous_quantifiable = char not in "*+?{(^$|"
    if depth:
        raise refuse("an unclosed group")
    return "".join(out)


def _refusal(pattern: str) -> Callable[[str], Exception]:
    def refuse(what: str) -> Exception:
        return RefusedError(
            f"the regular expression {pattern!r}: {what} (Java's and DuckDB's (RE2) "
            "meanings differ or are not checked)"
        )

    return refuse


def _quantifier(
    pattern: str, index: int, after_atom: bool, refuse: Callable[[str], Exception]
) -> tuple[int, str]:
    """A repetition (``*``, ``+``, ``?``, ``{n,m}``) with its lazy mark; possessive refused."""
    char = pattern[index]
    if char == "{":
        match = re.match(r"\{(\d{1,3})(,(\d{0,3}))?\}", pattern[index:])
        if match is None or not after_atom:
            raise refuse("a brace that is not a simple {n}, {n,} or {n,m} repetition")
        text = match.group(0)
    else:
        if not after_atom:
            raise refuse(f"the quantifier {char} after nothing to repeat")
        text = char
    index += len(text)
    if index < len(pattern) and pattern[index] == "+":
        raise refuse("a possessive quantifier")
    if index < len(pattern) and pattern[index] == "?":
        return index + 1, text + "?"
    return index, text


def _group(
    pattern: str, index: int, depth: int, refuse: Callable[[str], Exception]
) -> tuple[int, str, int]:
    """A group's opening or closing parenthesis, and the depth of groups after it."""
    if pattern[index] == ")":
        if depth == 0:
            raise refuse("an unbalanced parenthesis")
        return index + 1, ")", depth - 1
    if pattern.startswith("(?:", index):
        return index + 3, "(?:", depth + 1
    if pattern.startswith("(?", index):
        raise refuse("a group with flags, a lookaround or a named group")
    return index + 1, "(", depth + 1


def _atom(pattern: str, index: int, refuse: Callable[[str], Exception]) -> tuple[int, str]:
    """One character, escape, class or anchor."""
    char = pattern[index]
    if char == "\\":
        if index + 1 >= len(pattern):
            raise refuse("a trailing backslash")
        following = pattern[index + 1]
        if following in "dDwW" or following in _REGEX_ESCAPES:
            return index + 2, "\\" + following
        raise refuse(f"the escape \\{following}")
    if char == "[":
        return _java_class(pattern, index, refuse)
    if char == ".":
        return index + 1, _JAVA_DOT
    if char in "^|":
        return index + 1, char
    if char == "$":
        return index + 1, _JAVA_END
    if char in _REGEX_PLAIN or ord(char) > 127:
        return index + 1, re.escape(char) if char in "-&~#" else char
    raise refuse(f"the character {char!r}")


def _java_class(pattern: str, start: int, refuse: Callable[[str], Exception]) -> tuple[int, str]:
    """A simple character class ``[...]`` (ranges, negation, escaped punctuation)."""
    index = start + 1
    out = ["["]
    if index < len(pattern) and pattern[index] == "^":
        out.append("^")
        index += 1
    first = True
    while index < len(pattern):
        char = pattern[index]
        if char == "]" and not first:
            out.append("]")
            return index + 1, "".join(out)
        if char == "[" or pattern.startswith("&&", index):
            raise refuse("a nested class or a class intersection")
        if char == "\\":
            following = pattern[index + 1 : index + 2]
            if following and (following in _REGEX_ESCAPES or following in "dw"):
                out.append("\\" + following)
                index += 2
                first = False
                continue
            raise refuse(f"the escape \\{following} in a class")
        if char == "]":
            raise refuse("an empty class")
        out.append(char if char.isalnum() or char in "-_ " or ord(char) > 127 else "\\" + char)
        index += 1
        first = False
    raise refuse("an unclosed class")
