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
    "Or",
    "Predicate",
    "StartsWith",
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
class Comparison:
    op: CompareOp
    column: str
    value: Any  # after binding: in the column's domain; never None
    cast: str | None = None  # unbound only: CAST(column AS cast) in the text


@dataclass(frozen=True)
class InList:
    column: str
    values: tuple[Any, ...]  # non-null values
    negated: bool = False
    has_null: bool = False  # NULL among the listed values
    cast: str | None = None  # unbound only, as in Comparison


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
    | IsNull
    | IsNaN
    | StartsWith
    | And
    | Or
    | Not
)
