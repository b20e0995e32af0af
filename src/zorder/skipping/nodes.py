"""The nodes of a predicate tree: frozen dataclasses, one per kind.

They live apart from :mod:`zorder.skipping.predicates` (construction,
binding) so that :mod:`zorder.skipping.visitor`, which every walk over the
tree builds on, can import them without a cycle. Import them from
``predicates`` as before; this module is their definition only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

__all__ = [
    "AlwaysFalse",
    "AlwaysTrue",
    "And",
    "CompareOp",
    "Comparison",
    "InList",
    "IsNaN",
    "IsNull",
    "Not",
    "NullComparison",
    "Or",
    "PartComparison",
    "Predicate",
    "StartsWith",
    "TypedLiteral",
    "Unknown",
]

CompareOp = Literal["=", "<=>", "!=", "<", "<=", ">", ">="]


@dataclass(frozen=True)
class AlwaysTrue:
    pass


@dataclass(frozen=True)
class AlwaysFalse:
    pass


@dataclass(frozen=True)
class Unknown:
    """Statistics cannot decide this: might match, and so might its negation."""

    reason: str = ""


@dataclass(frozen=True)
class TypedLiteral:
    """A literal as Spark types it: ``5`` is an int, ``5L`` a bigint, ``1.5`` a
    decimal(2,1), ``1e0`` and ``5D`` doubles (see :mod:`zorder.skipping.coercion`).

    Only unbound trees hold them; binding turns each into a plain value of
    the type the comparison is made in.
    """

    value: Any  # int, Decimal, float (a FLOAT's too), str, bool, bytes, date, datetime
    type: str  # Spark's type name: int, bigint, decimal(2,1), double, string, date, ...


@dataclass(frozen=True)
class Comparison:
    op: CompareOp
    column: str
    value: Any  # unbound: a TypedLiteral (or a plain value); bound: in the comparison's type
    cast: str | None = None  # unbound only: CAST(column AS cast) in the text
    # Bound only: the type Spark converts the column to before comparing ("double", or a
    # decimal of smaller scale), or None when the column's own values are compared.
    domain: str | None = None


@dataclass(frozen=True)
class InList:
    column: str
    values: tuple[Any, ...]  # non-null values, as in Comparison
    negated: bool = False
    has_null: bool = False  # NULL among the listed values
    cast: str | None = None  # unbound only, as in Comparison
    domain: str | None = None  # bound only, as in Comparison


@dataclass(frozen=True)
class NullComparison:
    """``column op NULL`` (``x = NULL``, ``x < NULL``, a NULL bound of BETWEEN): NULL for
    every row. Never TRUE, and neither is its negation (NOT NULL is NULL), which is why it
    is a node of its own rather than FALSE: ``NOT (x = NULL)`` keeps no row, ``NOT FALSE``
    every one. ``x <=> NULL`` is :class:`IsNull` instead."""

    op: CompareOp
    column: str


@dataclass(frozen=True)
class IsNull:
    column: str
    negated: bool = False


@dataclass(frozen=True)
class IsNaN:
    column: str
    negated: bool = False


@dataclass(frozen=True)
class StartsWith:
    column: str
    prefix: str
    negated: bool = False


@dataclass(frozen=True)
class PartComparison:
    """``part(column) op value``: a part of a date or timestamp column's value on the wall
    clock (``hour``, ``dayofweek``...; :mod:`zorder.skipping.parts`) compared with a number.
    Not monotone in the column: statistics bound it only over a file whose range the
    part is monotone on."""

    part: str
    op: CompareOp
    column: str
    value: Any  # unbound: a TypedLiteral; bound: an int or a Decimal
    zone: Any = None  # bound only: the session's tzinfo, for a timestamp column


@dataclass(frozen=True)
class And:
    left: Predicate
    right: Predicate


@dataclass(frozen=True)
class Or:
    left: Predicate
    right: Predicate


@dataclass(frozen=True)
class Not:
    child: Predicate


Predicate: TypeAlias = (
    AlwaysTrue
    | AlwaysFalse
    | Unknown
    | Comparison
    | InList
    | NullComparison
    | IsNull
    | IsNaN
    | StartsWith
    | PartComparison
    | And
    | Or
    | Not
)
