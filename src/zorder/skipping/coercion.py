"""Spark's type coercion of a column compared with literals, in one place.

Spark never compares two values of different types: it first finds their
common type (``findWiderTypeForTwo``, ``DecimalPrecision``, the ANSI rules
for strings) and casts both sides to it. Binding (:mod:`zorder.skipping.predicates`)
asks this module three things, for file skipping and the row evaluator alike:

- the type Spark gives a literal as written (:func:`literal_type`, :func:`number_literal`);
- the type a column and literals are compared in (:func:`comparison_type`);
- each literal's value in that type (:func:`convert`), and the value of an
  explicit ``CAST`` of a literal (:func:`cast_literal`).

Where the answer depends on settings this module cannot see (ANSI mode off,
``castDatetimeToString``), or on an arithmetic detail it does not reproduce
bit for bit, it answers :class:`InexactError` with the reason, and the caller
keeps the file or refuses the filter: never a guess. Measured against Spark
4.1 in ANSI mode (its default), among others: a bigint against ``1e0``
compares as double, against ``1.5`` as decimal(21,1); a float against an
integer as double; a string literal against an integer column is cast to
bigint (``'5.5'`` is an error); decimal(38,10) against a 32-digit integer
compares as decimal(38,6), rounding both sides half up.

Decimal arithmetic here never uses Python's default 28-digit context.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from zorder.skipping.nodes import TypedLiteral
from zorder.skipping.texts import UnreadError, spark_date, spark_timestamp

__all__ = [
    "FLOAT_TYPES",
    "INTEGER_ORDER",
    "INTEGER_TYPES",
    "MAX_DECIMAL_PRECISION",
    "ComputedLiteral",
    "InexactError",
    "as_decimal",
    "cast_literal",
    "comparison_type",
    "convert",
    "date_text",
    "decimal_shape",
    "decimal_shapes",
    "fit_decimal",
    "integer_range",
    "is_numeric",
    "literal_type",
    "number_literal",
    "same_as_text",
    "timestamp_text",
    "wider_decimal",
    "wider_type",
]

INTEGER_TYPES = frozenset({"tinyint", "smallint", "int", "bigint"})
FLOAT_TYPES = frozenset({"float", "double"})
MAX_DECIMAL_PRECISION = 38

INTEGER_ORDER = ("tinyint", "smallint", "int", "bigint")
_INTEGER_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
# The decimal type Spark casts an integral type to (DecimalType.forType): bigint is (20,0).
_INTEGER_AS_DECIMAL = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 20}
_EXACT = decimal.Context(prec=200, Emax=10_000, Emin=-10_000, traps=[decimal.InvalidOperation])
_SIGNED_INTEGER = re.compile(r"[+-]?\d+")
_DECIMAL_TEXT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_SPECIAL_DOUBLES = {"nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"}


@dataclass(frozen=True)
class ComputedLiteral(TypedLiteral):
    """A constant computed from an expression (``1 + 1``), which Spark's analyzer sees as an
    expression, not a literal: against a decimal an integer one is typed as its type's
    decimal (int: decimal(10,0)), not as its digits. ``maybe_literal``: the text leaves it
    open (sqlglot parses ``5L`` and ``CAST(5 AS BIGINT)`` alike); both are then tried."""

    maybe_literal: bool = False


class InexactError(Exception):
    """This module cannot say exactly what Spark makes of the literal; ``str(self)`` says why."""


class MalformedLiteralError(InexactError):
    """A string no Spark reads as the type it is cast to (a month 13, a day 32): with ANSI
    mode on Spark raises CAST_INVALID_INPUT, off it reads NULL. ``spark_error`` words it as
    Spark does; where the mode is not known, it is inexact like any other."""

    def __init__(self, text: str, type_name: str) -> None:
        super().__init__(f"the string {text!r} is not a {type_name}")
        self.spark_error = (
            f'[CAST_INVALID_INPUT] The value {text!r} of the type "STRING" cannot be cast to '
            f'"{type_name.upper()}" because it is malformed (as an ANSI Spark session raises; '
            "try_cast, or a session with ANSI mode off, reads it as NULL)"
        )


def decimal_shape(type_name: str) -> tuple[int, int] | None:
    """(precision, scale) of ``decimal(p,s)``; None for any other type."""
    if not type_name.startswith("decimal("):
        return None
    precision, scale = type_name[len("decimal(") : -1].split(",")
    return int(precision), int(scale)


def _decimal_type(precision: int, scale: int) -> str:
    return f"decimal({precision},{scale})"


def is_numeric(type_name: str | None) -> bool:
    """Whether ``type_name`` is one of Spark's numeric types."""
    return type_name is not None and (
        type_name in INTEGER_TYPES or type_name in FLOAT_TYPES or type_name.startswith("decimal(")
    )


def integer_range(type_name: str) -> tuple[int, int]:
    bits = _INTEGER_BITS[type_name]
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def _digits(value: decimal.Decimal) -> tuple[int, int]:
    """(precision, scale) of ``value`` as Java's BigDecimal counts them (scale >= 0)."""
    _, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    scale = max(-exponent, 0)
    significant = len(digits) if exponent <= 0 else len(digits) + exponent
    return max(significant, scale, 1), scale


def number_literal(text: str) -> tuple[Any, str]:
    """The value and Spark type of an unsigned number literal as written, without a suffix.

    ``12`` is an int, ``3000000000`` a bigint, wider integers decimal(p,0);
    ``1.50`` is decimal(3,2); ``1e3`` a double. Raises ValueError (with
    Spark's reason) for what Spark's parser refuses: more than 38 digits, a
    double out of range.
    """
    if any(c in text for c in "eE"):
        value = float(text)
        if math.isinf(value):
            raise ValueError(f"the number {text} does not fit a DOUBLE")
        return value, "double"
    number = decimal.Decimal(text)
    precision, scale = _digits(number)
    if precision > MAX_DECIMAL_PRECISION:
        raise ValueError(
            f"the number {text} has {precision} digits; Spark's decimals hold at most "
            f"{MAX_DECIMAL_PRECISION}"
        )
    if "." in text:
        return number, _decimal_type(precision, scale)
    integer = int(number)
    for name in ("int", "bigint"):
        low, high = integer_range(name)
        if low <= integer <= high:
            return integer, name
    return integer, _decimal_type(precision, 0)


def literal_type(value: Any) -> str:
    """The Spark type of a plain Python value used as a literal (as pyspark's ``lit`` types it)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        for name in ("int", "bigint"):
            low, high = integer_range(name)
            if low <= value <= high:
                return name
        return _decimal_type(min(len(str(abs(value))), MAX_DECIMAL_PRECISION), 0)
    if isinstance(value, float):
        return "double"
    if isinstance(value, decimal.Decimal):
        return _decimal_type(*_digits(value)) if value.is_finite() else "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bytes):
        return "binary"
    if isinstance(value, dt.datetime):
        # A zone-less datetime stands for TIMESTAMP_NTZ; the session-zone marker is zoned.
        return "timestamp" if value.tzinfo is not None else "timestamp_ntz"
    if isinstance(value, dt.date):
        return "date"
    return "unknown"


def as_decimal(type_name: str) -> tuple[int, int] | None:
    """(precision, scale) of a decimal type, or of the decimal an integer type widens to."""
    if type_name in INTEGER_TYPES:
        return _INTEGER_AS_DECIMAL[type_name], 0
    return decimal_shape(type_name)


def decimal_shapes(type_name: str, value: Any, literal: bool | None) -> list[tuple[int, int]]:
    """The decimal types Spark may see a number of ``type_name`` as, where it meets a
    decimal: an integer literal as written (``literal``) as the decimal of its digits
    (``DecimalType.fromLiteral``, which has no case for a tinyint), any other integer as its
    type's (an int: decimal(10,0)); two where the text leaves open whether it is a literal
    (``literal`` None: sqlglot parses ``5L`` and ``CAST(5 AS BIGINT)`` alike)."""
    shape = decimal_shape(type_name)
    if shape is not None:
        return [shape]
    as_type = (_INTEGER_AS_DECIMAL[type_name], 0)
    if type_name == "tinyint" or value is None or literal is False:
        return [as_type]
    digits = (max(len(str(abs(int(value)))), 1), 0)
    return [digits] if literal else [digits, as_type]


def wider_decimal(left: tuple[int, int], right: tuple[int, int]) -> str:
    """DecimalPrecision.widerDecimalType, keeping integral digits when 38 are exceeded."""
    scale = max(left[1], right[1])
    integral = max(left[0] - left[1], right[0] - right[1])
    if integral + scale <= MAX_DECIMAL_PRECISION:
        return _decimal_type(integral + scale, scale)
    return _decimal_type(MAX_DECIMAL_PRECISION, max(0, MAX_DECIMAL_PRECISION - integral))


_TEMPORAL_COMMON = {
    frozenset({"date", "timestamp"}): "timestamp",
    frozenset({"date", "timestamp_ntz"}): "timestamp_ntz",
    frozenset({"timestamp", "timestamp_ntz"}): "timestamp",
}
# A string literal against these is cast to the type shown (ANSI's string promotion).
_STRING_TARGETS = {
    **dict.fromkeys(INTEGER_TYPES, "bigint"),
    "date": "date",
    "timestamp": "timestamp",
    "timestamp_ntz": "timestamp_ntz",
}


def wider_type(left: str, right: str) -> str | None:
    """The type Spark (ANSI) brings two types to where they meet (a comparison, an IN list,
    the branches of a conditional); None where Spark does not bring them together here."""
    if left == right:
        return left
    if is_numeric(left) and is_numeric(right):
        if left in FLOAT_TYPES or right in FLOAT_TYPES:
            return "double"  # float vs float is caught above; everything else meets in double
        if left in INTEGER_TYPES and right in INTEGER_TYPES:
            return max(left, right, key=INTEGER_ORDER.index)
        left_shape, right_shape = as_decimal(left), as_decimal(right)
        assert left_shape is not None
        assert right_shape is not None
        return wider_decimal(left_shape, right_shape)
    temporal = _TEMPORAL_COMMON.get(frozenset({left, right}))
    if temporal is not None:
        return temporal
    if left == "string":
        return _STRING_TARGETS.get(right)
    if right == "string":
        return _STRING_TARGETS.get(left)
    return None


def comparison_type(column_type: str, literals: Iterable[Any], *, in_list: bool = False) -> str:
    """The type Spark compares a ``column_type`` column with ``literals`` in.

    ``literals`` are values; a :class:`~zorder.skipping.nodes.TypedLiteral` brings its own
    type. Against a decimal, Spark types an integer literal of a comparison by its digits
    (``DecimalType.fromLiteral``: ``c = 5`` is decimal(1,0), measured on Spark 4.1). An
    ``IN`` list is widened over every item, left to right (``InConversion``); there the
    integer's own type and its digits are both tried, and where one of them would round,
    :class:`InexactError`.
    """
    values = list(literals)
    types = [_type_of(v) for v in values]
    digits = [_digits_type(v, t) for v, t in zip(values, types, strict=True)]
    if not in_list:
        common = _fold(column_type, types, digits)
        if common is None:
            raise InexactError(f"Spark does not compare {column_type} with {', '.join(types)}")
        if any(isinstance(v, ComputedLiteral) and v.maybe_literal for v in values):
            as_expressions = [
                t if isinstance(v, ComputedLiteral) else d
                for v, t, d in zip(values, types, digits, strict=True)
            ]
            alternative = _fold(column_type, types, as_expressions)
            every = [column_type, *types]
            if alternative != common and not (
                alternative is not None
                and _keeps_scale(common, every)
                and _keeps_scale(alternative, every)
            ):
                raise InexactError(
                    f"Spark's common type of {column_type} and {', '.join(types)} depends on "
                    "whether the integer is written as a literal (5L) or a cast"
                )
        return common
    wide, narrow = _fold(column_type, types, None), _fold(column_type, types, digits)
    if (
        wide is None
        or narrow is None
        or (wide != narrow and not _keeps_scale(wide, [column_type, *types]))
    ):
        shown = ", ".join(types)
        raise InexactError(f"Spark's common type of {column_type} and {shown} is not known here")
    return wide


def _digits_type(value: Any, type_name: str) -> str:
    """An integer literal's type as ``DecimalType.fromLiteral`` gives it: its digits (not
    for a tinyint, which it has no case for, nor for a computed integer)."""
    if isinstance(value, ComputedLiteral) and not value.maybe_literal:
        return type_name
    raw = value.value if isinstance(getattr(value, "type", None), str) else value
    if (
        type_name in ("smallint", "int", "bigint")
        and isinstance(raw, int)
        and not isinstance(raw, bool)
    ):
        return _decimal_type(max(len(str(abs(raw))), 1), 0)
    return type_name


def _keeps_scale(common: str, types: list[str]) -> bool:
    """Whether ``common`` holds every one of ``types`` without rounding (then the two ways
    of typing an integer literal compare alike)."""
    shape = decimal_shape(common)
    if shape is None:
        return True
    return all(shape[1] >= (decimal_shape(t) or (0, 0))[1] for t in types)


def _type_of(value: Any) -> str:
    declared = getattr(value, "type", None)
    return declared if isinstance(declared, str) else literal_type(value)


def _fold(column_type: str, types: list[str], digits: list[str] | None) -> str | None:
    """Spark's common type, pairwise from the column's; with ``digits``, an integer literal
    meets a decimal as the decimal of its digits."""
    common: str | None = column_type
    for index, name in enumerate(types):
        if common is None:
            return None
        if digits is not None and decimal_shape(common) is not None:
            name = digits[index]
        common = wider_type(common, name)
    return common


# --------------------------------------------------------------------------------------
# Values


def _double_of_decimal(value: decimal.Decimal) -> float:
    """A decimal's double, when Spark's two ways of computing it (BigDecimal's correctly
    rounded one, and the unscaled long divided by a power of ten) agree."""
    exact = float(value)
    precision, scale = _digits(value)
    if precision <= 18:
        unscaled = int(value.scaleb(scale, context=_EXACT))
        if float(unscaled) / float(10**scale) != exact:
            raise InexactError(f"the double nearest {value} is computed two ways by Spark")
    return exact


def _float32(value: Fraction | decimal.Decimal | int | float) -> float:
    """The FLOAT nearest ``value`` (correctly rounded), as a Python float; InexactError where
    rounding through a double gives another (Spark's paths differ there)."""
    exact = Fraction(value)
    through_double = float(np.float32(float(exact)))
    candidates = [
        float(np.nextafter(np.float32(through_double), np.float32(-np.inf))),
        through_double,
        float(np.nextafter(np.float32(through_double), np.float32(np.inf))),
    ]
    finite = [c for c in candidates if math.isfinite(c)]
    nearest = min(finite, key=lambda c: abs(Fraction(c) - exact))
    if nearest != through_double:
        raise InexactError(f"the FLOAT nearest {value} is computed two ways by Spark")
    return nearest


def _to_decimal(value: int | decimal.Decimal, precision: int, scale: int) -> decimal.Decimal:
    rounded = decimal.Decimal(value).quantize(
        decimal.Decimal(1).scaleb(-scale), rounding=decimal.ROUND_HALF_UP, context=_EXACT
    )
    if rounded.adjusted() >= precision - scale and rounded != 0:
        raise InexactError(
            f"{value} does not fit decimal({precision},{scale}): an overflow in Spark"
        )
    return rounded


def fit_decimal(value: int | decimal.Decimal, precision: int, scale: int) -> decimal.Decimal:
    """``value`` as a decimal(precision, scale), rounded half up as Spark's casts round;
    InexactError where it overflows (an error in ANSI Spark)."""
    return _to_decimal(value, precision, scale)


def _integer_text(text: str, type_name: str) -> int:
    if not _SIGNED_INTEGER.fullmatch(text):
        raise InexactError(f"the string {text!r} as {type_name} (write an integer: '42')")
    number = int(text)
    low, high = integer_range(type_name)
    if not low <= number <= high:
        raise InexactError(f"the string {text!r} is out of {type_name}'s range: an error in Spark")
    return number


def _date_text(text: str) -> dt.date:
    try:
        day = spark_date(text)
    except UnreadError as unread:
        raise InexactError(f"{unread} as a date") from None
    if day is None:
        raise MalformedLiteralError(text, "date")
    return day


def date_text(text: str) -> dt.date | None:
    """The date Spark reads ``text`` as alike with ANSI on and off; None where the modes
    may part (ANSI raises where ANSI off answers NULL) or the form is not one read here."""
    try:
        return _date_text(text)
    except InexactError:
        return None


_CANONICAL = {
    **dict.fromkeys(INTEGER_TYPES, re.compile(r"-?[1-9]\d*|0")),
    "date": re.compile(r"\d{4}-\d{2}-\d{2}"),
}


def same_as_text(text: str, column_type: str) -> bool:
    """Whether ``text`` in an IN list against a ``column_type`` column matches the same
    rows when compared as a string (Spark with ANSI off widens such a list to strings:
    ``d IN ('2024-1-1')`` then matches nothing) as when cast (ANSI: it matches a date)."""
    pattern = _CANONICAL.get(column_type)
    if pattern is None or pattern.fullmatch(text) is None:
        return False
    # '2024-02-30' matches nothing as text, and ANSI raises on it: a real date only.
    return column_type != "date" or date_text(text) is not None


def timestamp_text(text: str) -> dt.datetime:
    """A timestamp string as Spark reads it (:func:`~zorder.skipping.texts.spark_timestamp`):
    zoned when it names a zone, else naive (the caller knows which zone, if any, it is in).
    :class:`MalformedLiteralError` where Spark reads none, InexactError where that is not
    known here."""
    try:
        parsed = spark_timestamp(text)
    except UnreadError as unread:
        raise InexactError(str(unread)) from None
    if parsed is None:
        raise MalformedLiteralError(text, "timestamp")
    return parsed


def convert(value: Any, target: str) -> Any:
    """A literal's value in the comparison type ``target`` (a number or a date; temporal
    values with zones stay with the caller). Raises :class:`InexactError`."""
    declared = _type_of(value)
    raw = getattr(value, "value", value) if declared == getattr(value, "type", None) else value
    return _convert(raw, declared, target)


def _convert(raw: Any, source: str, target: str) -> Any:
    if source == target:
        return raw
    if target in INTEGER_TYPES:
        if source in INTEGER_TYPES and isinstance(raw, int):
            return raw
        if source == "string" and isinstance(raw, str):
            return _integer_text(raw, target)
    elif target == "double":
        if source in INTEGER_TYPES and isinstance(raw, int):
            return float(raw)
        if source == "float" and isinstance(raw, float):
            return raw
        if source.startswith("decimal") and isinstance(raw, decimal.Decimal):
            return _double_of_decimal(raw)
    elif (shape := decimal_shape(target)) is not None:
        if isinstance(raw, int | decimal.Decimal) and not isinstance(raw, bool):
            return _to_decimal(raw, *shape)
    elif target == "date" and source == "string" and isinstance(raw, str):
        return _date_text(raw)
    raise InexactError(f"the {source} literal {raw!r} as {target}")


def cast_literal(raw: Any, source: str, target: str) -> Any:
    """``CAST(literal AS target)`` (also Spark's typed suffixes ``5L``, ``1.5F``, ``5BD``)
    as ANSI Spark computes it, for the casts it computes exactly; :class:`InexactError` for
    the rest, and where ANSI Spark raises (``CAST('5.7' AS INT)``, an overflow) or ANSI
    off would answer differently."""
    if source == target:
        return raw
    if target in INTEGER_TYPES:
        if source in INTEGER_TYPES or source.startswith("decimal"):
            number = int(raw)  # ANSI casts decimals to integers toward zero
            low, high = integer_range(target)
            if low <= number <= high:
                return number
            raise InexactError(f"{raw} is out of {target}'s range: an error in Spark")
        if source == "string":
            return _integer_text(raw, target)
    if target == "double":
        if source == "string":
            if not (_DECIMAL_TEXT.fullmatch(raw) or raw.lower() in _SPECIAL_DOUBLES):
                raise InexactError(f"the string {raw!r} as a double")
            return float(raw)  # correctly rounded, as Java's parseDouble
        return _convert(raw, source, target)
    if target == "float" and (source in INTEGER_TYPES or source.startswith("decimal")):
        return _float32(raw)
    if (shape := decimal_shape(target)) is not None:
        if source == "string":
            try:
                parsed = decimal.Decimal(raw)
            except decimal.InvalidOperation:
                raise InexactError(f"the string {raw!r} is not a decimal") from None
            if not parsed.is_finite() or raw != raw.strip():
                raise InexactError(f"the string {raw!r} as a decimal")
            return _to_decimal(parsed, *shape)
        if source in INTEGER_TYPES or source.startswith("decimal"):
            return _to_decimal(raw, *shape)
    if target == "string" and source == "string":
        return raw
    if target == "date" and source == "string":
        return _date_text(raw)
    raise InexactError(f"CAST of the {source} {raw!r} AS {target}")
