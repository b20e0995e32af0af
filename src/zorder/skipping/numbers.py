"""Spark's arithmetic on numeric constants: result types and values, ANSI mode on.

Measured on Spark 4.1 (ANSI, ``allowPrecisionLoss`` true), among others:
``1 / 2`` is the double 0.5 (integers divide as doubles); ``1.0 / 3`` is
decimal(7,6) 0.333333; ``0.06 + 0.01`` is decimal(3,2) 0.07; ``1 div 2`` is a
bigint; ``7 % -3`` is 1 (the dividend's sign); ``1.5F + 1.5F`` stays a float
while ``1.5F + 1`` is a double. An integer *literal* meets a decimal as the
decimal of its digits (``1 + 0.5`` is decimal(3,1)), any other integer as
decimal(10,0) for an int (``1.5 + (1 + 1)`` is decimal(12,1)); a tinyint
literal as decimal(3,0) (``DecimalType.fromLiteral`` has no case for bytes).
Overflow, division and remainder by zero are errors in ANSI Spark: here
:class:`~zorder.skipping.coercion.InexactError`, as is anything computed
here in a way Spark might round differently.
"""

from __future__ import annotations

import decimal
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from zorder.skipping.coercion import (
    FLOAT_TYPES,
    INTEGER_ORDER,
    INTEGER_TYPES,
    MAX_DECIMAL_PRECISION,
    InexactError,
    convert,
    decimal_shape,
    decimal_shapes,
    fit_decimal,
    integer_range,
    is_numeric,
)
from zorder.skipping.nodes import TypedLiteral

__all__ = [
    "Operand",
    "absolute",
    "arithmetic",
    "decimal_result",
    "negate",
    "result_precision",
    "to_double",
]

_INTEGER_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
_MINIMUM_ADJUSTED_SCALE = 6
_EXACT = decimal.Context(prec=400, Emax=10_000, Emin=-10_000, traps=[decimal.InvalidOperation])


@dataclass(frozen=True)
class Operand:
    """A constant while it is folded: its value (None for NULL), Spark's type (``void`` for
    an untyped NULL, None where the type of a NULL is not known here) and whether Spark's
    analyzer sees it as a literal (None: the text does not say, as ``5L`` and
    ``CAST(5 AS BIGINT)`` parse alike)."""

    value: Any
    type: str | None
    literal: bool | None = False


def _checked(value: int, type_name: str) -> int:
    low, high = integer_range(type_name)
    if not low <= value <= high:
        raise InexactError(f"{type_name} overflow ({value}): an error in ANSI Spark")
    return value


def to_double(value: Any, type_name: str) -> float:
    """A number's double as Spark casts it (InexactError where that is not known exactly)."""
    if type_name in FLOAT_TYPES:
        return float(value)
    result = convert(TypedLiteral(value, type_name), "double")
    assert isinstance(result, float)
    return result


def negate(operand: Operand, *, literal: bool | None) -> Operand:
    """Unary minus; ``literal`` says whether Spark's parser makes the result a literal."""
    value, type_name = operand.value, operand.type
    if not is_numeric(type_name) or type_name is None:
        raise InexactError(f"-({type_name})")
    if value is None:
        return Operand(None, type_name)
    if type_name in INTEGER_TYPES:
        return Operand(_checked(-value, type_name), type_name, literal)
    if isinstance(value, decimal.Decimal):
        return Operand(value.copy_negate(), type_name, literal)
    return Operand(-value, type_name, literal)


def absolute(operand: Operand) -> Operand:
    value, type_name = operand.value, operand.type
    if not is_numeric(type_name) or type_name is None:
        raise InexactError(f"abs({type_name})")
    if value is None:
        return Operand(None, type_name)
    if type_name in INTEGER_TYPES:
        return Operand(_checked(abs(value), type_name), type_name)
    if isinstance(value, decimal.Decimal):
        return Operand(value.copy_abs(), type_name)
    return Operand(abs(value), type_name)


def arithmetic(op: str, left: Operand, right: Operand) -> Operand:
    """``left op right`` for ``op`` among ``+ - * / div % pmod``, as ANSI Spark."""
    if left.type == "void" and right.type == "void":
        # Both NULL: Spark types the NULLs as doubles (bigint for div), and the answer is NULL.
        return Operand(None, "bigint" if op == "div" else "double")
    if left.type == "void":
        left = Operand(None, right.type)
    elif right.type == "void":
        right = Operand(None, left.type)
    if left.type is None or right.type is None:
        if left.value is None or right.value is None:
            return Operand(None, None)
        raise InexactError("an operand of unknown type")
    if not (is_numeric(left.type) and is_numeric(right.type)):
        raise InexactError(f"{left.type} {op} {right.type}")
    if left.type in FLOAT_TYPES or right.type in FLOAT_TYPES:
        return _floating(op, left, right)
    if left.type in INTEGER_TYPES and right.type in INTEGER_TYPES:
        return _integral(op, left, right)
    return _decimal(op, left, right)


# --------------------------------------------------------------------------------------
# Floating point


def _floating(op: str, left: Operand, right: Operand) -> Operand:
    if op == "div":
        raise InexactError("div of a floating-point number: an error in Spark")
    single = left.type == "float" and right.type == "float" and op != "/"
    type_name = "float" if single else "double"
    if left.value is None or right.value is None:
        return Operand(None, type_name)
    assert left.type is not None
    assert right.type is not None
    a, b = to_double(left.value, left.type), to_double(right.value, right.type)
    if op in ("/", "%", "pmod") and b == 0:
        raise InexactError("division by zero: an error in ANSI Spark")
    kind = np.float32 if single else np.float64
    x, y = kind(a), kind(b)
    with np.errstate(all="ignore"):
        if op == "+":
            result = x + y
        elif op == "-":
            result = x - y
        elif op == "*":
            result = x * y
        elif op == "/":
            result = x / y
        else:
            result = np.fmod(x, y)  # Java's %: the dividend's sign, as C's fmod
            if op == "pmod" and result < 0:
                result = np.fmod(kind(result + y), y)
    return Operand(float(result), type_name)


# --------------------------------------------------------------------------------------
# Integers


def _java_remainder(a: int, b: int) -> int:
    remainder = abs(a) % abs(b)
    return -remainder if a < 0 else remainder


def _wrap(value: int, type_name: str) -> int:
    bits = _INTEGER_BITS[type_name]
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _integral(op: str, left: Operand, right: Operand) -> Operand:
    assert left.type is not None
    assert right.type is not None
    if op == "/":
        if left.value is None or right.value is None:
            return Operand(None, "double")
        a, b = float(left.value), float(right.value)  # Java's long-to-double: nearest, even
        if b == 0:
            raise InexactError("division by zero: an error in ANSI Spark")
        return Operand(a / b, "double")
    wider = max(left.type, right.type, key=INTEGER_ORDER.index)
    type_name = "bigint" if op == "div" else wider
    if left.value is None or right.value is None:
        return Operand(None, type_name)
    a, b = int(left.value), int(right.value)
    if op in ("div", "%", "pmod") and b == 0:
        raise InexactError("division by zero: an error in ANSI Spark")
    if op == "+":
        return Operand(_checked(a + b, type_name), type_name)
    if op == "-":
        return Operand(_checked(a - b, type_name), type_name)
    if op == "*":
        return Operand(_checked(a * b, type_name), type_name)
    if op == "div":
        quotient = abs(a) // abs(b)
        return Operand(_checked(quotient if (a < 0) == (b < 0) else -quotient, "bigint"), "bigint")
    remainder = _java_remainder(a, b)
    if op == "pmod" and remainder < 0:
        # Spark adds without an overflow check: Java's int arithmetic wraps.
        remainder = _java_remainder(_wrap(remainder + b, type_name), b)
    return Operand(remainder, type_name)


# --------------------------------------------------------------------------------------
# Decimals


def _adjust(precision: int, scale: int) -> tuple[int, int]:
    """DecimalType.adjustPrecisionScale (allowPrecisionLoss)."""
    if precision <= MAX_DECIMAL_PRECISION:
        return precision, scale
    integral = precision - scale
    minimum = min(scale, _MINIMUM_ADJUSTED_SCALE)
    return MAX_DECIMAL_PRECISION, max(MAX_DECIMAL_PRECISION - integral, minimum)


def result_precision(op: str, left: tuple[int, int], right: tuple[int, int]) -> tuple[int, int]:
    """The precision and scale of ``left op right`` on decimals of these shapes, before
    Spark bounds them to 38 digits (DecimalPrecision); the SQL rules refuse what it bounds."""
    (p1, s1), (p2, s2) = left, right
    if op in ("+", "-"):
        scale = max(s1, s2)
        return max(p1 - s1, p2 - s2) + scale + 1, scale
    if op == "*":
        return p1 + p2 + 1, s1 + s2
    if op == "/":
        scale = max(_MINIMUM_ADJUSTED_SCALE, s1 + p2 + 1)
        return p1 - s1 + s2 + scale, scale
    scale = max(s1, s2)  # % and pmod
    return min(p1 - s1, p2 - s2) + scale, scale


def decimal_result(op: str, left: tuple[int, int], right: tuple[int, int]) -> str:
    """Spark's decimal type of ``left op right`` on decimals of these shapes."""
    return "decimal({},{})".format(*_adjust(*result_precision(op, left, right)))


def _shapes(operand: Operand) -> list[tuple[int, int]]:
    """The decimal types Spark may see ``operand`` as (two when the text leaves it open
    whether it is a literal)."""
    assert operand.type is not None
    return decimal_shapes(operand.type, operand.value, operand.literal)


def _decimal(op: str, left: Operand, right: Operand) -> Operand:
    answers = {
        _decimal_with(op, left, l_shape, right, r_shape)
        for l_shape in _shapes(left)
        for r_shape in _shapes(right)
    }
    if len(answers) != 1:
        raise InexactError(
            "whether an integer is a literal changes the decimal result's type: "
            "write the literal without a cast"
        )
    value, type_name = answers.pop()
    return Operand(value, type_name)


def _round(value: Fraction, scale: int) -> decimal.Decimal:
    """``value`` rounded half up to ``scale`` digits, exactly."""
    scaled = value * Fraction(10) ** scale
    whole = math.floor(abs(scaled) + Fraction(1, 2))
    return decimal.Decimal(whole if scaled >= 0 else -whole).scaleb(-scale, context=_EXACT)


def _significant(value: Fraction, digits: int) -> Fraction:
    """``value`` rounded half up to ``digits`` significant digits (Java's MathContext)."""
    if value == 0:
        return value
    size = abs(value)
    exponent = len(str(size.numerator)) - len(str(size.denominator))
    while Fraction(10) ** exponent > size:
        exponent -= 1
    while Fraction(10) ** (exponent + 1) <= size:
        exponent += 1
    return Fraction(_round(value, digits - 1 - exponent))


def _decimal_with(
    op: str, left: Operand, l_shape: tuple[int, int], right: Operand, r_shape: tuple[int, int]
) -> tuple[decimal.Decimal | int | None, str]:
    type_name = "bigint" if op == "div" else decimal_result(op, l_shape, r_shape)
    if left.value is None or right.value is None:
        return None, type_name
    a, b = Fraction(left.value), Fraction(right.value)
    if op in ("/", "div", "%", "pmod") and b == 0:
        raise InexactError("division by zero: an error in ANSI Spark")
    if op == "div":
        quotient = abs(a) // abs(b)
        return _checked(quotient if (a < 0) == (b < 0) else -quotient, "bigint"), type_name
    shape = decimal_shape(type_name)
    assert shape is not None
    precision, scale = shape
    exact: Fraction
    if op == "+":
        exact = a + b
    elif op == "-":
        exact = a - b
    elif op == "*":
        exact = a * b
    elif op == "/":
        exact = a / b
    else:
        exact = a - b * math.trunc(a / b)
        if op == "pmod" and exact < 0:
            exact = exact + b
            exact = exact - b * math.trunc(exact / b)
    result = _round(exact, scale)
    # Spark may round a product or quotient once before rounding it to the result's scale
    # (MathContext of 38 digits, a scale of 39): where that changes the answer, refuse.
    if op in ("*", "/"):
        for early in (
            _significant(exact, 38),
            _significant(exact, 39),
            Fraction(_round(exact, 39)),
        ):
            if _round(early, scale) != result:
                raise InexactError(f"{left.value} {op} {right.value} rounds two ways in Spark")
    try:
        return fit_decimal(result, precision, scale), type_name
    except InexactError:
        raise InexactError(f"{exact} overflows {type_name}: an error in ANSI Spark") from None
