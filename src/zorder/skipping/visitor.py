"""One walk over a predicate tree, shared by every evaluator, rewriter and translator.

A :class:`PredicateVisitor` says what each kind of node means, given what
its children meant; :func:`visit` does the walking (children first, left
before right), so the And/Or/Not recursion is written once, here. An
evaluator (of statistics, of rows, a rewriter) must define every method: one
that forgets a kind of node cannot be instantiated (mypy reports it too),
rather than answering wrongly for that kind at run time. A
:class:`PredicateCollector`, which gathers something from the leaves (the
columns read, the literals compared with), overrides only the leaves it
gathers from: the others give :meth:`~PredicateCollector.empty`.

The walk is a fold: a method sees its children's results, never the
children themselves. Anything that needs to look down (pushing a NOT to the
leaves) folds to a richer result instead; see ``predicates.rewrite_not``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Generic, TypeVar

from zorder.skipping.nodes import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    Comparison,
    InList,
    IsNaN,
    IsNull,
    Not,
    NullComparison,
    Or,
    PartComparison,
    Predicate,
    StartsWith,
    Unknown,
)

__all__ = ["PredicateCollector", "PredicateVisitor", "visit"]

T = TypeVar("T")


class PredicateVisitor(ABC, Generic[T]):
    """What each kind of predicate node evaluates to, as a ``T``.

    Leaves get their node; ``visit_and``, ``visit_or`` and ``visit_not`` get
    their children's results.
    """

    @abstractmethod
    def visit_true(self) -> T: ...

    @abstractmethod
    def visit_false(self) -> T: ...

    @abstractmethod
    def visit_unknown(self, node: Unknown) -> T: ...

    @abstractmethod
    def visit_comparison(self, node: Comparison) -> T: ...

    @abstractmethod
    def visit_in_list(self, node: InList) -> T: ...

    @abstractmethod
    def visit_null_comparison(self, node: NullComparison) -> T: ...

    @abstractmethod
    def visit_is_null(self, node: IsNull) -> T: ...

    @abstractmethod
    def visit_is_nan(self, node: IsNaN) -> T: ...

    @abstractmethod
    def visit_starts_with(self, node: StartsWith) -> T: ...

    @abstractmethod
    def visit_part_comparison(self, node: PartComparison) -> T: ...

    @abstractmethod
    def visit_and(self, left: T, right: T) -> T: ...

    @abstractmethod
    def visit_or(self, left: T, right: T) -> T: ...

    @abstractmethod
    def visit_not(self, child: T) -> T: ...


class PredicateCollector(PredicateVisitor[T]):
    """What the leaves of a predicate hold, gathered: a leaf gives :meth:`empty` unless
    its method is overridden, AND and OR :meth:`combine` their children's, NOT passes
    its child's on."""

    @abstractmethod
    def empty(self) -> T:
        """What a leaf gathers nothing from gives."""

    @abstractmethod
    def combine(self, left: T, right: T) -> T:
        """Two children's gatherings as one."""

    def visit_true(self) -> T:
        return self.empty()

    def visit_false(self) -> T:
        return self.empty()

    def visit_unknown(self, node: Unknown) -> T:
        return self.empty()

    def visit_comparison(self, node: Comparison) -> T:
        return self.empty()

    def visit_in_list(self, node: InList) -> T:
        return self.empty()

    def visit_null_comparison(self, node: NullComparison) -> T:
        return self.empty()

    def visit_is_null(self, node: IsNull) -> T:
        return self.empty()

    def visit_is_nan(self, node: IsNaN) -> T:
        return self.empty()

    def visit_starts_with(self, node: StartsWith) -> T:
        return self.empty()

    def visit_part_comparison(self, node: PartComparison) -> T:
        return self.empty()

    def visit_and(self, left: T, right: T) -> T:
        return self.combine(left, right)

    def visit_or(self, left: T, right: T) -> T:
        return self.combine(left, right)

    def visit_not(self, child: T) -> T:
        return child


def visit(predicate: Predicate, visitor: PredicateVisitor[T]) -> T:
    """``predicate`` evaluated by ``visitor``: children first, the left one before the right.

    Raises TypeError for anything that is not a predicate node (a sqlglot
    expression, a Column, None), naming it.
    """
    match predicate:
        case And():
            left = visit(predicate.left, visitor)
            return visitor.visit_and(left, visit(predicate.right, visitor))
        case Or():
            left = visit(predicate.left, visitor)
            return visitor.visit_or(left, visit(predicate.right, visitor))
        case Not():
            return visitor.visit_not(visit(predicate.child, visitor))
        case AlwaysTrue():
            return visitor.visit_true()
        case AlwaysFalse():
            return visitor.visit_false()
        case Unknown():
            return visitor.visit_unknown(predicate)
        case Comparison():
            return visitor.visit_comparison(predicate)
        case InList():
            return visitor.visit_in_list(predicate)
        case NullComparison():
            return visitor.visit_null_comparison(predicate)
        case IsNull():
            return visitor.visit_is_null(predicate)
        case IsNaN():
            return visitor.visit_is_nan(predicate)
        case StartsWith():
            return visitor.visit_starts_with(predicate)
        case PartComparison():
            return visitor.visit_part_comparison(predicate)
    raise TypeError(
        f"cannot visit {predicate!r} ({type(predicate).__name__}): not a predicate node; "
        "build predicates with zorder.skipping.parse_predicate or the classes in "
        "zorder.skipping.predicates"
    )
