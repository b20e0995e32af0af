"""What a definition of Spark's meaning holds, and what each of its rules may ask.

Every Spark function, operator and cast a filter may hold is defined once, as a
:class:`Function` in the one table of :mod:`zorder.skipping.functions`: its
realisations side by side, as Spark's own ``Expression`` classes hold ``eval`` and
``doGenCode`` next to each other. The *fold* rule computes the exact Python value of a
constant call (what :func:`zorder.skipping.constants.constant` folds before a row is
read, as Spark's ``ConstantFolding`` does); the *SQL* rule writes a call that reads
columns as DuckDB SQL computing in Spark's types, NULLs and ANSI errors (what
:func:`zorder.skipping.translate.translate` answers); the *ANSI* rule says where the
call means the same with ANSI mode off (:mod:`zorder.skipping.ansi`). The rules take
their argument types from one set of Spark type names (:mod:`zorder.skipping.coercion`)
and their type rules (common types, decimal precision and scale) from the same functions.

A fold rule asks the folder (:class:`Folding`) to fold its arguments and answers an
:class:`~zorder.skipping.numbers.Operand`, or raises
:class:`~zorder.skipping.coercion.InexactError` where it does not compute exactly what
Spark computes (the call is then left as written: never a guess). A SQL rule asks the
translator (:class:`Translating`) to translate its arguments and answers a
:class:`~zorder.skipping.sql_values.Value`, or raises
:class:`~zorder.skipping.sql_values.RefusedError` naming what has no exact translation.
:class:`FoldContext` (the zone and the query's instant) and :class:`NotConstantError`
are re-exported by :mod:`zorder.skipping.constants`, where callers import them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from sqlglot import exp

from zorder.skipping.coercion import INTEGER_TYPES, InexactError
from zorder.skipping.nodes import TypedLiteral
from zorder.skipping.numbers import Operand
from zorder.skipping.sql_values import Value


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
    """What a fold rule asks of the folder (``_Folder`` of
    :mod:`~zorder.skipping.constants`)."""

    context: FoldContext
    zone: dt.tzinfo | None

    def fold(self, node: exp.Expression, *, root: bool = False) -> Operand:
        """``node`` folded to its value and Spark's type."""

    def args(self, node: exp.Expression, *names: str) -> list[Operand | None]:
        """The named arguments of ``node`` folded (None where absent)."""


class Translating(Protocol):
    """What a SQL rule asks of the translator
    (:class:`~zorder.skipping.translator.Translator`)."""

    context: FoldContext
    # Constant SQL that may raise, evaluated once before a row (Spark folds it, raising).
    constants: list[str]

    def value(self, node: exp.Expression) -> Value:
        """``node`` translated, in the type Spark gives it."""

    def constant(self, node: exp.Expression) -> TypedLiteral | None:
        """``node`` folded as Spark folds it (None for NULL); NotConstantError otherwise."""

    def boolean(self, node: exp.Expression) -> Value:
        """``node`` translated where Spark needs a boolean."""

    def condition(self, node: exp.Expression, predicate: bool) -> Value:
        """``node`` as a condition (a NULL literal is FALSE in ``predicate`` position)."""

    def cast(self, value: Value, target: str, *, safe: bool = False) -> Value:
        """``CAST(value AS target)`` as ANSI Spark computes it."""

    def integer(self, node: exp.Expression | None, what: str) -> Value:
        """``node`` where Spark takes an int (``what`` names the argument)."""

    def fixed_offset(self) -> dt.timedelta | None:
        """The session zone's offset when it never changes; None for a region."""

    def local(self, sql: str) -> str:
        """A TIMESTAMPTZ's wall-clock time in the session zone, as a TIMESTAMP."""

    def instant(self, sql: str) -> str:
        """A zone-less TIMESTAMP read in the session zone, as a TIMESTAMPTZ."""


@dataclass(frozen=True)
class Typed:
    """An operand that means the same with ANSI mode on and off: its type (None for an
    untyped NULL) and, for a constant, its value."""

    type: str | None
    value: Any = None
    constant: bool = False


class DiffersError(Exception):
    """The part of a filter whose meaning with ANSI mode off this package cannot vouch for."""

    def __init__(self, node: exp.Expression) -> None:
        super().__init__(node.sql(dialect="spark"))
        self.part = node.sql(dialect="spark")


class Classifying(Protocol):
    """What an ANSI rule asks of the classifier of :mod:`zorder.skipping.ansi`."""

    def operand(self, node: exp.Expression) -> Typed:
        """A value that means the same in both modes; DiffersError otherwise."""

    def typed(self, whole: exp.Expression, node: exp.Expression) -> str:
        """The type of operand ``node`` of ``whole`` (an untyped NULL differs)."""


FoldRule = Callable[[Folding, Any], Operand]
SqlRule = Callable[[Translating, Any], Value]
AnsiRule = Callable[[Classifying, Any], Typed]


@dataclass(frozen=True)
class Function:
    """Spark's meaning of one function, operator or cast: its value where every argument
    is constant (``fold``; None: never folded), its DuckDB SQL over columns (``sql``;
    None: refused unless constant), and where it means the same with ANSI mode off
    (``ansi``: its type there, DiffersError where it may mean something else; None: never
    vouched for). ``locates``: a refusal inside it names the call (the smallest boolean
    around what is refused)."""

    fold: FoldRule | None = None
    sql: SqlRule | None = None
    locates: bool = False
    ansi: AnsiRule | None = None


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
