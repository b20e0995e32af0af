"""The clock in a filter, read once: ``current_date()`` and its kin pinned to literals.

Spark reads the clock once per query (``ComputeCurrentTime``), so every
``current_date()`` in a query means the same day. zorder plans a read before
Spark runs it: if each side read its own clock, a plan made at 23:59:59.999
could skip a file that Spark, at midnight, would need. :func:`pin_clock`
replaces each call in the text by the literal of one instant, so the plan,
Spark and the in-process reader all see that instant, and constant folding
then treats it as any other literal.

The text is edited token by token (sqlglot's Spark tokenizer): a name in
backquotes, in a string, or after a dot is never touched, and a bare
``current_date`` (Spark's spelling without parentheses) stays a column
reference when the table has a column of that name, as in Spark.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable

from sqlglot.dialects.spark import Spark
from sqlglot.errors import TokenError
from sqlglot.tokenizer_core import Token, TokenType

from zorder.errors import InvalidArgumentError
from zorder.skipping.constants import FoldContext
from zorder.skipping.sql import ParsedFilter, parse_filter
from zorder.skipping.zones import session_zone

__all__ = ["in_zone", "parse_with_clock", "pin_clock"]

# Spark's functions of the query's instant, by the literal that stands for each.
_DATE = frozenset({"current_date", "curdate"})
_INSTANT = frozenset({"current_timestamp", "now"})
_LOCAL = frozenset({"localtimestamp"})
_CLOCK = _DATE | _INSTANT | _LOCAL
# Spark resolves these without parentheses too (LiteralFunctionResolution), unless a
# column has the name.
_BARE = frozenset({"current_date", "current_timestamp", "localtimestamp"})


def pin_clock(text: str, *, now: dt.datetime, zone: dt.tzinfo, columns: Iterable[str] = ()) -> str:
    """``text`` with every call of the clock replaced by the literal of ``now``.

    ``now`` is the query's instant (zoned); ``zone`` the session's, in which
    ``current_date()`` and ``localtimestamp()`` read it. ``columns`` are the
    table's column names. Text the tokenizer refuses is returned as is (the
    parser reports it).
    """
    try:
        tokens = Spark().tokenize(text)
    except TokenError:
        return text
    names = {c.lower() for c in columns}
    pieces: list[str] = []
    done = 0
    index = 0
    while index < len(tokens):
        token = tokens[index]
        name = token.text.lower()
        called = _is_call(tokens, index)
        if (
            token.token_type != TokenType.IDENTIFIER
            and name in _CLOCK
            and not (index > 0 and tokens[index - 1].token_type == TokenType.DOT)
            and (called or (name in _BARE and name not in names))
        ):
            end = tokens[index + 2].end if called else token.end
            pieces.append(text[done : token.start])
            pieces.append(_literal(name, now, zone))
            done = end + 1
            index += 3 if called else 1
            continue
        index += 1
    pieces.append(text[done:])
    return "".join(pieces)


def _is_call(tokens: list[Token], index: int) -> bool:
    return (
        index + 2 < len(tokens)
        and tokens[index + 1].token_type == TokenType.L_PAREN
        and tokens[index + 2].token_type == TokenType.R_PAREN
    )


def _literal(name: str, now: dt.datetime, zone: dt.tzinfo) -> str:
    local = now.astimezone(zone)
    if name in _DATE:
        return f"(DATE'{local.date().isoformat()}')"
    if name in _LOCAL:
        naive = local.replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")
        return f"(TIMESTAMP_NTZ'{naive}')"
    utc = now.astimezone(dt.UTC).replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")
    return f"(TIMESTAMP'{utc}+00:00')"


def parse_with_clock(
    text: str, *, columns: Iterable[str], time_zone: str, now: dt.datetime | None = None
) -> ParsedFilter:
    """A filter's text with its clock pinned to ``now`` (default: this instant), parsed
    once; its trees fold constants in the session zone ``time_zone``. The parsed
    filter's ``text`` is the pinned text, for every engine that reads the rows.

    A zone Python does not know leaves the text as it is and what depends on
    the zone unfolded.
    """
    try:
        zone = session_zone(time_zone)
    except InvalidArgumentError:
        return parse_filter(text)
    now = now if now is not None else dt.datetime.now(dt.UTC)
    pinned = pin_clock(text, now=now, zone=zone, columns=columns)
    context = FoldContext(zone=zone, now=now, zone_name=time_zone)
    return dataclasses.replace(parse_filter(pinned, context=context), given=text)


def in_zone(parsed: ParsedFilter, *, columns: Iterable[str], time_zone: str) -> ParsedFilter:
    """``parsed`` for a session in ``time_zone``: its clock pinned to the same instant.

    The tree is kept (its constants fold in the new zone) unless the pinned text differs
    in that zone (``current_date()`` may be another day there): only then is the text
    parsed again.
    """
    try:
        zone = session_zone(time_zone)
    except InvalidArgumentError:  # as parse_with_clock: the text as given, nothing pinned
        if parsed.given is None:
            return dataclasses.replace(parsed, context=None)
        return parse_filter(parsed.given)
    now = parsed.context.now if parsed.context is not None else None
    moved = FoldContext(zone=zone, now=now, zone_name=time_zone)
    if parsed.given is not None and now is not None:
        pinned = pin_clock(parsed.given, now=now, zone=zone, columns=columns)
        if pinned != parsed.text:
            return dataclasses.replace(parse_filter(pinned, context=moved), given=parsed.given)
    return dataclasses.replace(parsed, context=moved)
