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
the in-process evaluators refuse it.

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
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from zorder.errors import UnsupportedFilterError
from zorder.skipping.casts import cast_may_raise
from zorder.skipping.coercion import (
    FLOAT_TYPES,
    INTEGER_TYPES,
    as_decimal,
    date_text,
    integer_range,
    same_as_text,
)
from zorder.skipping.constants import FoldContext, NotConstantError, constant, spark_type_name
from zorder.skipping.monotone import COMPARISONS
from zorder.skipping.predicates import resolve_column

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
    except _DiffersError as differs:
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


class _DiffersError(Exception):
    def __init__(self, node: exp.Expression) -> None:
        super().__init__(node.sql(dialect="spark"))
        self.part = node.sql(dialect="spark")


@dataclass(frozen=True)
class _Typed:
    """An operand that means the same in both modes: its type (None for an untyped NULL)
    and, for a constant, its value."""

    type: str | None
    value: Any = None
    constant: bool = False


_NUMERIC = "numeric"
_DATETIME = ("date", "timestamp", "timestamp_ntz")
# Functions of one operand that cannot raise, by the operand type they need and the
# type they give.
_STRING_FUNCTIONS: dict[type[exp.Expression], str] = {
    exp.Lower: "string",
    exp.Upper: "string",
    exp.Length: "int",
}
_DATE_PARTS = (
    exp.Year,
    exp.Month,
    exp.Quarter,
    exp.Day,
    exp.DayOfMonth,
    exp.DayOfWeek,
    exp.DayOfYear,
)
# Where a string literal inside a constant keeps its meaning: written as the value of a
# typed literal (DATE'...', INTERVAL '7' DAY) or cast explicitly.
_STRING_HOLDERS = (exp.Cast, exp.Interval)


def _family(type_name: str) -> str:
    if type_name in INTEGER_TYPES or type_name in FLOAT_TYPES or type_name.startswith("decimal"):
        return _NUMERIC
    if type_name in _DATETIME:
        return "datetime"
    return type_name


class _Classifier:
    def __init__(self, columns: Mapping[str, str], context: FoldContext | None) -> None:
        self.columns = columns
        self.context = context

    def boolean(self, node: exp.Expression) -> None:
        """Returns where ``node`` means the same in both modes; raises _DiffersError otherwise."""
        if isinstance(node, exp.Paren | exp.Not):
            return self.boolean(node.this)
        if isinstance(node, exp.And | exp.Or):
            self.boolean(node.this)
            return self.boolean(node.expression)
        if isinstance(node, exp.Boolean | exp.Null):
            return None
        if type(node) in COMPARISONS or isinstance(node, exp.NullSafeNEQ):
            return self.compare(node, node.this, node.expression)
        if isinstance(node, exp.Between):
            self.compare(node, node.this, node.args["low"])
            return self.compare(node, node.this, node.args["high"])
        if isinstance(node, exp.In):
            return self.in_list(node)
        if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
            self.operand(node.this)
            return None
        if isinstance(node, exp.Like | exp.ILike | exp.RegexpLike | exp.StartsWith):
            return self.matching(node)
        if isinstance(node, exp.IsNan):
            if _family(self.typed(node, node.this)) != _NUMERIC:
                raise _DiffersError(node)
            return None
        if isinstance(node, exp.Column) and self.typed(node, node) == "boolean":
            return None
        raise _DiffersError(node)

    def typed(self, whole: exp.Expression, node: exp.Expression) -> str:
        """The type of operand ``node`` of ``whole``; an untyped NULL differs (Spark types it
        from context, where the modes' coercions part)."""
        operand = self.operand(node)
        if operand.type is None:
            raise _DiffersError(whole)
        return operand.type

    def compare(self, whole: exp.Expression, left: exp.Expression, right: exp.Expression) -> None:
        first, second = self.operand(left), self.operand(right)
        if first.type is None or second.type is None:
            return  # NULL compared: NULL in both modes
        if not (_compatible(first, second) and _compatible(second, first)):
            raise _DiffersError(whole)

    def in_list(self, node: exp.In) -> None:
        if node.args.get("query") is not None or node.args.get("unnest") is not None:
            raise _DiffersError(node)
        target = self.operand(node.this)
        listed = [self.operand(value) for value in node.expressions]
        typed = [value for value in listed if value.type is not None]
        if target.type is None or not typed:
            return
        if any(value.type == "string" for value in typed) and target.type != "string":
            # ANSI off widens the whole list, and the column, to strings.
            if not all(_same_text(value, target.type) for value in typed):
                raise _DiffersError(node)
            return
        if any(_family(value.type or "") != _family(target.type) for value in typed):
            raise _DiffersError(node)
        # A list is widened to one type over all its items and the column.
        every = [target, *typed]
        if not all(_float_exact(a, b) for a in every for b in every):
            raise _DiffersError(node)
        if not _decimals_fit(*(value.type or "" for value in every)):
            raise _DiffersError(node)

    def matching(self, node: exp.Expression) -> None:
        """LIKE, ILIKE, RLIKE, startswith: a string against a string pattern."""
        escape = node.args.get("escape")
        operands = [node.this, node.expression, *([escape] if escape is not None else [])]
        if any(self.operand(o).type not in ("string", None) for o in operands):
            raise _DiffersError(node)

    def operand(self, node: exp.Expression) -> _Typed:
        """A value expression that means the same in both modes; _DiffersError otherwise."""
        while isinstance(node, exp.Paren):
            node = node.this
        if isinstance(node, exp.Column):
            if node.table:
                raise _DiffersError(node)
            return _Typed(self.columns[resolve_column(str(node.name), self.columns)])
        folded = self.constant(node)
        if folded is not None:
            return folded
        return self.function(node)

    def constant(self, node: exp.Expression) -> _Typed | None:
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
                raise _DiffersError(node)
        if literal is None:
            return _Typed(None, constant=True)
        return _Typed(literal.type, literal.value, constant=True)

    def function(self, node: exp.Expression) -> _Typed:
        """A cast or function of columns that cannot raise, so means the same either way."""
        if isinstance(node, exp.Cast):
            target = spark_type_name(node.to)
            source = self.operand(node.this).type
            if target is None or source is None:
                raise _DiffersError(node)
            if not node.args.get("safe") and cast_may_raise(source, target):
                raise _DiffersError(node)
            return _Typed(target)
        if isinstance(node, exp.TsOrDsToDate) and not node.args.get("format"):
            if self.operand(node.this).type not in _DATETIME:
                raise _DiffersError(node)  # a string: an error with ANSI on, NULL with it off
            return _Typed("date")
        if isinstance(node, _DATE_PARTS):
            if self.operand(node.this).type not in _DATETIME:
                raise _DiffersError(node)
            return _Typed("int")
        if type(node) in _STRING_FUNCTIONS:
            if self.operand(node.this).type != "string":
                raise _DiffersError(node)
            return _Typed(_STRING_FUNCTIONS[type(node)])
        if isinstance(node, exp.Add | exp.Sub | exp.Mul):
            # Floating-point arithmetic neither raises nor wraps (integers and decimals do).
            sides = (self.operand(node.this).type, self.operand(node.expression).type)
            if all(side in FLOAT_TYPES for side in sides):
                return _Typed("double")
        raise _DiffersError(node)


_PLAIN_INTEGER = re.compile(r"-?\d+")


def _compatible(operand: _Typed, other: _Typed) -> bool:
    """Whether ``operand`` meets ``other`` (in a comparison) the same way in both modes."""
    assert operand.type is not None
    assert other.type is not None
    if _family(operand.type) == _family(other.type):
        return _float_exact(operand, other) and _decimals_fit(operand.type, other.type)
    if operand.type != "string" or not operand.constant:
        return other.type == "string" and other.constant  # judged from the other side
    text = operand.value
    if other.type in INTEGER_TYPES and _PLAIN_INTEGER.fullmatch(text):
        low, high = integer_range(other.type)
        return low <= int(text) <= high  # ANSI off casts to the column's own type
    if other.type == "date":
        return date_text(text) is not None
    return False


def _float_exact(operand: _Typed, other: _Typed) -> bool:
    """A FLOAT meets an int or a bigint as a FLOAT with ANSI off, as a DOUBLE with it on:
    the same only where the integer is a constant a float holds exactly (a tinyint's or a
    smallint's values always are)."""
    for floating, integral in ((operand, other), (other, operand)):
        if floating.type == "float" and integral.type in ("int", "bigint"):
            return integral.constant and _in_float(integral.value)
    return True


def _decimals_fit(*types: str) -> bool:
    """Whether decimals (and integers beside them) meet in a common decimal type that holds
    every operand's integral digits and scale, 38 digits at most.

    Past that, Spark 3.5 keeps the scale and overflows (an error with ANSI on, NULL with
    it off: ``m < 12345678901234567890123456789012`` on a decimal(38,10) matches nothing),
    while Spark 4.x keeps the integral digits and rounds the scale (SPARK-45905).

    >>> _decimals_fit("decimal(38,10)", "decimal(32,0)"), _decimals_fit("decimal(12,2)", "int")
    (False, True)
    """
    digits = [as_decimal(name) for name in types]
    if any(shape is None for shape in digits):
        return True  # a float or a double: the comparison is of doubles
    shapes = [shape for shape in digits if shape is not None]
    integral = max(precision - scale for precision, scale in shapes)
    return integral + max(scale for _, scale in shapes) <= 38


def _in_float(value: int) -> bool:
    try:
        return bool(struct.unpack("f", struct.pack("f", value))[0] == value)
    except (OverflowError, struct.error):
        return False


def _same_text(value: _Typed, column_type: str) -> bool:
    """A value of an IN list widened to strings with ANSI off, against a ``column_type``:
    does it match the same rows as ANSI's cast?"""
    if value.type != "string" or not value.constant:
        return False
    if not same_as_text(value.value, column_type):
        return False
    if column_type in INTEGER_TYPES:
        low, high = integer_range(column_type)
        return low <= int(value.value) <= high
    return True
