"""What constant folding rests on, shared by the folder and its handler families.

:func:`zorder.skipping.constants.constant` folds a subexpression with a folder that
dispatches each node to a handler; the handlers of numbers, dates, strings and logic
live in the ``fold_*`` modules. They share what is here: the :class:`FoldContext` a
constant may depend on, :class:`NotConstantError` for what is not folded, the
:class:`Folding` protocol (what a handler may ask of the folder) and the int argument
Spark's functions take. Both names of the context and the error are re-exported by
:mod:`zorder.skipping.constants`, where callers import them.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Protocol

from sqlglot import exp

from zorder.skipping.coercion import INTEGER_TYPES, InexactError
from zorder.skipping.numbers import Operand


class NotConstantError(Exception):
    """The subexpression reads a column, or is not computed here exactly as Spark would."""


@dataclass(frozen=True)
class FoldContext:
    """What a constant may depend on besides its text: the session's zone and the query's
    instant (``now`` is zoned, UTC or not). ``None`` leaves what needs them unfolded.
    ``zone_name`` is the session's ``spark.sql.session.timeZone`` as set (what
    ``current_timezone()`` answers)."""

    zone: dt.tzinfo | None = None
    now: dt.datetime | None = None
    zone_name: str | None = None


class Folding(Protocol):
    """What a handler family asks of the folder (``_Folder`` of
    :mod:`~zorder.skipping.constants`)."""

    context: FoldContext
    zone: dt.tzinfo | None

    def fold(self, node: exp.Expression, *, root: bool = False) -> Operand:
        """``node`` folded to its value and Spark's type."""

    def args(self, node: exp.Expression, *names: str) -> list[Operand | None]:
        """The named arguments of ``node`` folded (None where absent)."""

    def text(self, inner: Operand) -> str:
        """``CAST(x AS STRING)`` as Spark writes ``x``."""


NULL = Operand(None, "void")
INT_MAX = (1 << 31) - 1


def int_arg(operand: Operand | None, default: int) -> int | None:
    """An int argument of a Spark function (``default`` where absent); None for NULL."""
    if operand is None:
        return default
    if operand.type not in INTEGER_TYPES and operand.type != "void":
        raise InexactError(f"a {operand.type} where Spark wants an int")
    if operand.value is None:
        return None
    value = int(operand.value)
    if not -INT_MAX - 1 <= value <= INT_MAX:
        raise InexactError(f"{value} as an int: an error in ANSI Spark")
    return value
