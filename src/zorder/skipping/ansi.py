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

import math
import re
from collections.abc import Callable, Mapping

from sqlglot import exp

from zorder.errors import UnsupportedFilterError
from zorder.skipping.coercion import INTEGER_TYPES, decimal_shape
from zorder.skipping.constants import FoldContext, NotConstantError, constant
from zorder.skipping.functions import lookup
from zorder.skipping.predicates import resolve_column
from zorder.skipping.rules import DiffersError, Typed
from zorder.skipping.texts import (
    UnreadError,
    nearest_double,
    nearest_float,
    spark_boolean,
    spark_date,
    spark_double,
    spark_integer,
    spark_timestamp,
)

__all__ = [
    "ANSI_SETTING",
    "ansi_difference",
    "ansi_enabled",
    "as_ansi_off",
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


def as_ansi_off(
    node: exp.Expression, columns: Mapping[str, str], context: FoldContext | None = None
) -> exp.Expression:
    """The filter ``node`` (not changed) as a session with ANSI mode off reads it, spelled
    so that it means that with ANSI's rules, wherever this is known exactly: every
    comparison (and each bound of a BETWEEN) of a string literal with an operand of a
    date, timestamp, number or boolean type has the string cast as Spark with ANSI off
    casts it, measured on Spark 4.1 (``findCommonTypeForBinaryComparison``):

    - against a DATE, TIMESTAMP or TIMESTAMP_NTZ, to that type (the session's zone for a
      timestamp without one): written ``CAST('...' AS TIMESTAMP)``, which ANSI reads
      alike, where the string parses; NULL where Spark's parser finds no value (ANSI would
      raise): ``ts >= 'abc'`` is NULL for every row;
    - against an integral type, to that type, a fraction dropped (``i = '5.7'`` is
      ``i = 5``), NULL out of its range or malformed;
    - against a DOUBLE, to a double; against a FLOAT, to a float (ANSI casts both sides
      to double); against a DECIMAL, both sides to double (``n = '5.5'`` is
      ``CAST(n AS DOUBLE) = 5.5e0``);
    - against a BOOLEAN, to a boolean (``'t'``, ``'yes'``...; NULL otherwise).

    The rest is left as written, for :func:`ansi_difference` to vouch for or name: a
    string it does not read exactly (:mod:`zorder.skipping.texts`), an IN list (ANSI off
    compares it as strings), a string column against a number.
    """
    rewriter = _Rewriter(_Classifier(columns, context))
    return node.transform(rewriter.rewrite)


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


_COMPARED = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.NullSafeEQ, exp.NullSafeNEQ)


def _text(node: exp.Expression) -> str | None:
    while isinstance(node, exp.Paren):
        node = node.this
    return str(node.this) if isinstance(node, exp.Literal) and node.is_string else None


def _cast(node: exp.Expression, type_name: str) -> exp.Expression:
    return exp.Cast(this=node, to=exp.DataType.build(type_name, dialect="spark"))


def _double(value: float) -> exp.Expression:
    """A DOUBLE constant of ``value`` as the parser reads it back."""
    if math.isnan(value) or math.isinf(value):
        return _cast(exp.Literal.string(str(value).replace("inf", "Infinity")), "double")
    shown = repr(abs(value))
    number = exp.Literal.number(shown if "e" in shown else f"{shown}e0")
    return exp.Neg(this=number) if math.copysign(1.0, value) < 0 else number


class _Rewriter:
    """:func:`as_ansi_off`'s rewriting of one node (sqlglot's ``transform`` callback)."""

    def __init__(self, classifier: _Classifier) -> None:
        self.classifier = classifier

    def rewrite(self, node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Between) and (
            _text(node.args["low"]) is not None or _text(node.args["high"]) is not None
        ):
            low = exp.GTE(this=node.this.copy(), expression=node.args["low"].copy())
            high = exp.LTE(this=node.this.copy(), expression=node.args["high"].copy())
            return exp.Paren(this=exp.And(this=self.rewrite(low), expression=self.rewrite(high)))
        if isinstance(node, _COMPARED):
            return self.comparison(node)
        return node

    def comparison(self, node: exp.Expression) -> exp.Expression:
        left, right = _text(node.this), _text(node.expression)
        if (left is None) == (right is None):
            return node  # no string, or two: no coercion to read
        text, other_key, text_key = (
            (right, "this", "expression") if right is not None else (left, "expression", "this")
        )
        assert text is not None
        try:
            operand = self.classifier.operand(node.args[other_key])
            read = _read(text, operand.type)
        except (DiffersError, UnreadError):
            return node
        if read is None:
            return node
        other, value = read
        rewritten = node.copy()
        if other is not None:
            rewritten.set(other_key, other(rewritten.args[other_key]))
        rewritten.set(text_key, value)
        return rewritten


_Read = tuple[Callable[[exp.Expression], exp.Expression] | None, exp.Expression]


def _read(text: str, type_name: str | None) -> _Read | None:
    """What ANSI off compares the string ``text`` as against an operand of ``type_name``:
    a wrapper of that operand (None: as it is) and the string's value as a constant; None
    where no coercion is read here. UnreadError where the string is not read exactly."""
    if type_name is None or type_name == "string":
        return None
    if type_name in ("date", "timestamp", "timestamp_ntz"):
        parsed = spark_date(text) if type_name == "date" else spark_timestamp(text)
        value = exp.Null() if parsed is None else exp.Literal.string(text)
        return None, _cast(value, type_name)
    if type_name in INTEGER_TYPES:
        number = spark_integer(text, type_name)
        literal: exp.Expression = exp.Null() if number is None else exp.Literal.number(abs(number))
        if number is not None and number < 0:
            literal = exp.Neg(this=literal)
        return None, _cast(literal, type_name)
    if type_name == "boolean":
        truth = spark_boolean(text)
        return None, _cast(exp.Null(), "boolean") if truth is None else exp.Boolean(this=truth)
    if type_name in ("double", "float", *([type_name] if decimal_shape(type_name) else [])):
        exact = spark_double(text)
        if type_name == "float":  # compared as FLOAT with ANSI off: the string's float
            return None, _double(nearest_float(exact))
        double = _double(nearest_double(exact))
        if type_name == "double":
            return None, double
        return (lambda operand: _cast(operand, "double")), double
    return None
