"""Whether a filter means the same to Spark with ANSI mode on and with it off.

Everything else in this package answers with ANSI Spark's meaning (Spark
4.x's default). With ANSI off (Spark 3.5's default) Spark coerces types
otherwise (``int_col = '5.7'`` casts the string to an int and matches 5; a
decimal against a string compares as doubles; an IN list of strings and
numbers compares as strings) and answers NULL, or wraps around, where ANSI
raises (invalid casts, overflow, division by zero, ``to_date``...). Rather
than a second copy of every rule, this module names the parts of a filter
whose meaning is the same either way; what it cannot vouch for is
"mode-dependent", and under ANSI off the statistics read it as unknown and
the in-process evaluators refuse it. This module walks the filter (AND, OR,
NOT, columns, constants); whether a function, operator or cast means the same
is its ANSI rule, next to its fold and SQL rules in the one table of
:mod:`zorder.skipping.functions`.

Conservative by construction: columns, literals and constants that fold
without an ANSI error and hold no string coerced to another type;
comparisons, BETWEEN, IN, IS NULL, LIKE and the like between operands of
one type family (numbers, strings, booleans, dates and timestamps); a
string against an integral column only where it is a plain integer in the
column's range, against a date column only where it reads as the same date
either way; casts an ANSI session never refuses; a few functions that
cannot raise; AND, OR and NOT of those.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from sqlglot import exp

from zorder.errors import UnsupportedFilterError
from zorder.skipping.constants import FoldContext, NotConstantError, constant
from zorder.skipping.functions import lookup
from zorder.skipping.predicates import resolve_column
from zorder.skipping.rules import DiffersError, Typed

__all__ = [
    "ANSI_SETTING",
    "ansi_difference",
    "ansi_enabled",
    "check_same_in_ansi_modes",
    "mode_dependent_atoms",
    "reads_as_ansi",
]

ANSI_SETTING = "spark.sql.ansi.enabled"
"""The Spark setting that turns ANSI mode on: off by default before Spark 4.0, on since."""


def ansi_enabled(setting: str | None, spark_version: str) -> bool:
    """Whether a session whose :data:`ANSI_SETTING` is ``setting`` (None: not set) and
    whose ``spark.version`` is ``spark_version`` runs with ANSI mode on."""
    if setting is None or not setting.strip():
        major = re.match(r"\s*(\d+)", spark_version)
        return major is not None and int(major[1]) >= 4
    return setting.strip().lower() == "true"


def reads_as_ansi(setting: str | None, spark_version: str) -> bool:
    """Whether filters of such a session (see :func:`ansi_enabled`) mean what they mean to
    Spark 4.x with ANSI mode on, the meaning this package computes. A Spark 3.5 session
    with ANSI on does not: its common type of two decimals keeps the scale before the
    integral digits (Spark 4.0 turned that round, SPARK-45905), so it is read as one with
    ANSI off, where only what this module vouches for is read exactly.

    >>> reads_as_ansi(None, "4.1.0"), reads_as_ansi("true", "3.5.9"), reads_as_ansi(None, "3.5.9")
    (True, False, False)
    """
    major = re.match(r"\s*(\d+)", spark_version)
    return ansi_enabled(setting, spark_version) and major is not None and int(major[1]) >= 4


def ansi_difference(
    node: exp.Expression, columns: Mapping[str, str], context: FoldContext | None = None
) -> str | None:
    """None where the filter ``node`` (or a boolean part of one) means the same with ANSI
    on and off, against a table of ``columns`` (name -> Spark type); else the SQL of the
    first part whose meaning this module cannot vouch for.

    Raises :class:`~zorder.errors.ColumnNotFoundError` for a column the table lacks.
    """
    try:
        _Classifier(columns, context).boolean(node)
    except DiffersError as differs:
        return differs.part
    return None


def check_same_in_ansi_modes(
    node: exp.Expression, columns: Mapping[str, str], context: FoldContext | None = None
) -> None:
    """UnsupportedFilterError naming the part of the filter ``node`` whose meaning differs
    between ANSI mode on and off (see :func:`ansi_difference`); for an evaluator asked to
    answer as an ANSI-off session."""
    part = ansi_difference(node, columns, context)
    if part is not None:
        raise UnsupportedFilterError(
            f"cannot evaluate {part} with the meaning of Spark with ANSI mode off (Spark 3.5's "
            "default) outside Spark: its meaning differs from ANSI mode's. Read it with "
            "zorder.read(spark, path, where), answer with ANSI's meaning (ansi=True), or "
            "write it with operands of one type (a number against a numeric column, a "
            "DATE'...' literal against a date column, TRY_CAST for a cast that may fail)"
        )


def mode_dependent_atoms(
    columns: Mapping[str, str], context: FoldContext | None = None
) -> Callable[[exp.Expression], str | None]:
    """:func:`ansi_difference` against ``columns``, as the parser's hook for the atoms of a
    filter: skipping under ANSI off reads each atom it names as unknown."""
    return lambda node: ansi_difference(node, columns, context)


# Where a string literal inside a constant keeps its meaning: written as the value of a
# typed literal (DATE'...', INTERVAL '7' DAY) or cast explicitly.
_STRING_HOLDERS = (exp.Cast, exp.Interval)


class _Classifier:
    def __init__(self, columns: Mapping[str, str], context: FoldContext | None) -> None:
        self.columns = columns
        self.context = context

    def boolean(self, node: exp.Expression) -> None:
        """Returns where ``node`` means the same in both modes; raises DiffersError otherwise."""
        if isinstance(node, exp.Paren | exp.Not):
            return self.boolean(node.this)
        if isinstance(node, exp.And | exp.Or):
            self.boolean(node.this)
            return self.boolean(node.expression)
        if isinstance(node, exp.Boolean | exp.Null):
            return None
        if isinstance(node, exp.Column) and self.typed(node, node) == "boolean":
            return None
        if self.function(node).type == "boolean":  # a comparison, a match, a test
            return None
        raise DiffersError(node)

    def typed(self, whole: exp.Expression, node: exp.Expression) -> str:
        """The type of operand ``node`` of ``whole``; an untyped NULL differs (Spark types it
        from context, where the modes' coercions part)."""
        operand = self.operand(node)
        if operand.type is None:
            raise DiffersError(whole)
        return operand.type

    def operand(self, node: exp.Expression) -> Typed:
        """A value expression that means the same in both modes; DiffersError otherwise."""
        while isinstance(node, exp.Paren):
            node = node.this
        if isinstance(node, exp.Column):
            if node.table:
                raise DiffersError(node)
            return Typed(self.columns[resolve_column(str(node.name), self.columns)])
        folded = self.constant(node)
        if folded is not None:
            return folded
        return self.function(node)

    def constant(self, node: exp.Expression) -> Typed | None:
        """A constant that folds without an ANSI error folds to the same value with ANSI
        off, unless a string in it is coerced to another type (the modes coerce strings
        differently): None where ``node`` is not such a constant."""
        if next(node.find_all(exp.Column), None) is not None:
            return None
        try:
            literal = constant(node, self.context)
        except NotConstantError:
            return None
        for text in node.find_all(exp.Literal):
            if text.is_string and text is not node and not isinstance(text.parent, _STRING_HOLDERS):
                raise DiffersError(node)
        if literal is None:
            return Typed(None, constant=True)
        return Typed(literal.type, literal.value, constant=True)

    def function(self, node: exp.Expression) -> Typed:
        """A function of columns that means the same either way, by its ANSI rule in
        :mod:`zorder.skipping.functions`."""
        function = lookup(node)
        if function is None or function.ansi is None:
            raise DiffersError(node)
        return function.ansi(self, node)
