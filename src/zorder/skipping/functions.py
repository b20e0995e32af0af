"""The one table of Spark's meaning: every function, operator and cast a filter may hold.

Each entry is a :class:`~zorder.skipping.rules.Function`, keyed by the sqlglot node it
parses to (or, for a function sqlglot does not know, its lower-case name): its value where
its arguments are constant, its DuckDB SQL where they read columns, and whether it means
the same with ANSI mode off, defined side by side in the module of its concern:

- :mod:`zorder.skipping.logic`: AND, OR, NOT, IS, comparisons, IN, BETWEEN;
- :mod:`zorder.skipping.conditionals`: COALESCE, NULLIF, IF, CASE, GREATEST, LEAST and
  the NULL and NaN tests;
- :mod:`zorder.skipping.arithmetic`: ``+ - * / div % pmod``, minus, ``abs`` and rounding;
- :mod:`zorder.skipping.strings`: the string functions and LIKE, ILIKE, RLIKE;
- :mod:`zorder.skipping.temporal`: dates, timestamps, intervals and the clock;
- :mod:`zorder.skipping.casts`: CAST and TRY_CAST.

The folder (:func:`zorder.skipping.constants.constant`), the translator
(:func:`zorder.skipping.translate.translate`) and the ANSI classifier
(:func:`zorder.skipping.ansi.ansi_difference`) all dispatch through :func:`lookup`; a node
without an entry, or without the rule asked for, is not folded, is refused (named) or is
read as mode-dependent. No node is defined by two modules (checked as the table is built).
"""

from __future__ import annotations

from sqlglot import exp

from zorder.skipping import arithmetic, casts, conditionals, logic, strings, temporal
from zorder.skipping.rules import Function

__all__ = ["REGISTRY", "lookup"]


def _registry() -> dict[type[exp.Expression] | str, Function]:
    table: dict[type[exp.Expression] | str, Function] = {}
    for family in (logic, conditionals, arithmetic, strings, temporal, casts):
        twice = table.keys() & family.FUNCTIONS.keys()
        assert not twice, f"{family.__name__} defines {twice} again"
        table.update(family.FUNCTIONS)
    return table


REGISTRY = _registry()


def lookup(node: exp.Expression) -> Function | None:
    """Spark's meaning of ``node``'s function, operator or cast; None where it has none here."""
    if isinstance(node, exp.Anonymous):
        return REGISTRY.get(str(node.this).lower())
    return REGISTRY.get(type(node))
