"""What a bound predicate asks of Parquet bloom filters, and what their answers prove.

A bloom filter answers one question about a file's column: might a row hold
a value equal to ``v``? Its "no" is a proof, its "maybe" proves nothing. So
only equalities on a column's own values can ask it (``x = v``, ``x <=> v``
with ``v`` not NULL, ``x IN (...)``; binding leaves those with ``domain``
None), and a file is ruled out only when the predicate can be TRUE for none
of its rows. Under SQL's three-valued logic a row is kept only when the
predicate is TRUE, and:

- ``x = v``, ``x <=> v``: TRUE only for a row holding ``v``; ``x IN (a, b,
  NULL)`` only for one holding ``a`` or ``b``: never, when those are absent;
- ``p AND q`` is TRUE only when both are: never, when either never is;
- ``p OR q`` is TRUE when either is: never, only when both never are;
- FALSE and ``x = NULL`` are never TRUE;
- anything else may be TRUE: NOT (``NOT (x = v)`` holds for every row without
  ``v``), inequalities, NOT IN, IS NULL, prefixes, Unknown.

NOTs are pushed to the leaves first (:func:`~zorder.skipping.predicates.rewrite_not`),
so ``NOT (x != v)`` asks about ``v`` too; a NOT left standing asks and proves nothing.
Pure: the filters are read by :mod:`zorder.arrow.blooms`, the hashes made by
:mod:`zorder.stats.bloom`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Set
from typing import Any, TypeAlias

from zorder.skipping.nodes import (
    Comparison,
    InList,
    IsNaN,
    IsNull,
    NullComparison,
    PartComparison,
    StartsWith,
    Unknown,
)
from zorder.skipping.predicates import Bound, rewrite_not
from zorder.skipping.visitor import PredicateVisitor, visit
from zorder.stats.bloom import probed_type

__all__ = ["bloom_lookups", "excluded_by_blooms"]

_EQUALITIES = ("=", "<=>")


def bloom_lookups(bound: Bound, probed: Collection[str] | None = None) -> dict[str, frozenset[Any]]:
    """Each column's values whose absence from a file could rule it out by the rules above.

    Only values that can matter: columns whose type a filter answers for
    (:func:`~zorder.stats.bloom.probed_type`), among ``probed`` when given (the columns
    that have filters: an equality on another proves nothing), and none under a NOT or
    beside a part of an OR that nothing proves never TRUE (``x = 5 OR y > 3`` asks
    nothing).
    """
    columns = bound.columns
    if probed is not None:
        columns = {c: t for c, t in columns.items() if c in probed}
    collected = visit(rewrite_not(bound.tree), _Lookups(columns))
    return {column: frozenset(values) for column, values in (collected or {}).items()}


def excluded_by_blooms(bound: Bound, absent: Mapping[str, Set[Any]]) -> bool:
    """Is the predicate TRUE for no row of a file whose ``absent`` values (per column:
    values its bloom filters prove no row holds) are as given?

    False (keep the file) whenever that does not follow; see the module's rules.
    """
    return visit(rewrite_not(bound.tree), _Excluded(absent))


def _asks(node: Comparison | InList) -> bool:
    """Is ``node`` an equality on the column's own values that a filter can answer?"""
    if node.domain is not None:
        return False
    if isinstance(node, Comparison):
        return node.op in _EQUALITIES and node.value is not None
    return not node.negated


# What a subtree must ask; None: no answer proves it TRUE for no row.
_Asked: TypeAlias = dict[str, set[Any]] | None


class _Lookups(PredicateVisitor[_Asked]):
    """What each subtree must ask to be proven TRUE for no row; None when nothing can."""

    def __init__(self, columns: Mapping[str, str]) -> None:
        self.columns = columns

    def _leaf(self, node: Comparison | InList, values: tuple[Any, ...]) -> _Asked:
        if _asks(node) and not values:  # IN () (or IN (NULL)): never TRUE, whatever the type
            return {}
        if not _asks(node) or not probed_type(self.columns.get(node.column, "")):
            return None
        return {node.column: set(values)}

    def visit_true(self) -> _Asked:
        return None

    def visit_false(self) -> _Asked:
        return {}  # never TRUE: nothing to ask

    def visit_unknown(self, node: Unknown) -> _Asked:
        return None

    def visit_comparison(self, node: Comparison) -> _Asked:
        return self._leaf(node, (node.value,))

    def visit_in_list(self, node: InList) -> _Asked:
        return self._leaf(node, node.values)

    def visit_null_comparison(self, node: NullComparison) -> _Asked:
        return {}

    def visit_is_null(self, node: IsNull) -> _Asked:
        return None

    def visit_is_nan(self, node: IsNaN) -> _Asked:
        return None

    def visit_starts_with(self, node: StartsWith) -> _Asked:
        return None

    def visit_part_comparison(self, node: PartComparison) -> _Asked:
        return None

    def visit_and(self, left: _Asked, right: _Asked) -> _Asked:
        if left is None or right is None:
            return right if left is None else left
        return _merged(left, right)

    def visit_or(self, left: _Asked, right: _Asked) -> _Asked:
        return None if left is None or right is None else _merged(left, right)

    def visit_not(self, child: _Asked) -> _Asked:
        return None


def _merged(left: dict[str, set[Any]], right: dict[str, set[Any]]) -> dict[str, set[Any]]:
    merged = {column: set(values) for column, values in left.items()}
    for column, values in right.items():
        merged.setdefault(column, set()).update(values)
    return merged


class _Excluded(PredicateVisitor[bool]):
    """True where the subtree is TRUE for no row of the file."""

    def __init__(self, absent: Mapping[str, Set[Any]]) -> None:
        self.absent = absent

    def _absent(self, column: str, values: tuple[Any, ...]) -> bool:
        known = self.absent.get(column, frozenset())
        return all(value in known for value in values)

    def visit_true(self) -> bool:
        return False

    def visit_false(self) -> bool:
        return True

    def visit_unknown(self, node: Unknown) -> bool:
        return False

    def visit_comparison(self, node: Comparison) -> bool:
        return _asks(node) and self._absent(node.column, (node.value,))

    def visit_in_list(self, node: InList) -> bool:
        # IN (NULL) alone is NULL for every row: never TRUE either.
        return _asks(node) and self._absent(node.column, node.values)

    def visit_null_comparison(self, node: NullComparison) -> bool:
        return True  # NULL for every row

    def visit_is_null(self, node: IsNull) -> bool:
        return False

    def visit_is_nan(self, node: IsNaN) -> bool:
        return False

    def visit_starts_with(self, node: StartsWith) -> bool:
        return False

    def visit_part_comparison(self, node: PartComparison) -> bool:
        return False

    def visit_and(self, left: bool, right: bool) -> bool:
        return left or right

    def visit_or(self, left: bool, right: bool) -> bool:
        return left and right

    def visit_not(self, child: bool) -> bool:
        return False
