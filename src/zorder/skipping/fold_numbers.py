"""Constant arithmetic and rounding folded as Spark computes it: + - * / div %, abs, round.

The numbers themselves are computed in :mod:`zorder.skipping.numbers` (Spark's result
types, overflow, decimal precision); this module reads the tree's arithmetic, sends a
sum or difference with a date, timestamp or interval to :mod:`zorder.skipping.datetimes`,
and rounds (``round``, ``floor``, ``ceil``) with Spark's result types. Handlers of the
folder of :mod:`zorder.skipping.constants`.
"""

from __future__ import annotations

import decimal
import math
from fractions import Fraction

from sqlglot import exp

from zorder.skipping import datetimes
from zorder.skipping.coercion import (
    FLOAT_TYPES,
    INTEGER_TYPES,
    MAX_DECIMAL_PRECISION,
    InexactError,
    decimal_shape,
    fit_decimal,
)
from zorder.skipping.folding import Folding, int_arg
from zorder.skipping.numbers import Operand, absolute, arithmetic

ARITHMETIC: dict[type[exp.Expression], str] = {
    exp.Add: "+",
    exp.Sub: "-",
    exp.Mul: "*",
    exp.Div: "/",
    exp.IntDiv: "div",
    exp.Mod: "%",
}


def binary(f: Folding, node: exp.Expression) -> Operand:
    op = ARITHMETIC[type(node)]
    left, right = f.fold(node.this), f.fold(node.expression)
    temporal = ("date", "timestamp", "timestamp_ntz")
    if op in "+-" and (
        left.type in temporal
        or right.type in temporal
        or datetimes.is_interval(left.type)
        or datetimes.is_interval(right.type)
    ):
        if left.type == "void" or right.type == "void":
            return Operand(None, None)  # NULL, of a type Spark picks by the other side
        return datetimes.temporal_arithmetic(op, left, right, f.zone)
    return arithmetic(op, left, right)


def pmod(left: Operand, right: Operand) -> Operand:
    return arithmetic("pmod", left, right)


def abs_(f: Folding, node: exp.Abs) -> Operand:
    return absolute(f.fold(node.this))


def round_(f: Folding, node: exp.Round) -> Operand:
    operand = f.fold(node.this)
    places_node = node.args.get("decimals")
    places = int_arg(f.fold(places_node) if places_node else None, 0)
    if places is None or (places_node is not None and not _is_literal_int(places_node)):
        raise InexactError("round to a scale that is not an integer literal")
    type_name = operand.type
    if type_name in INTEGER_TYPES:
        if operand.value is None or places >= 0:
            return Operand(operand.value, type_name)
        unit = 10**-places
        value = int(operand.value)
        rounded = (abs(value) + unit // 2) // unit * unit
        rounded = rounded if value >= 0 else -rounded
        low, high = -(1 << (_BITS[type_name] - 1)), (1 << (_BITS[type_name] - 1)) - 1
        if not low <= rounded <= high:
            raise InexactError("round overflows")
        return Operand(rounded, type_name)
    shape = decimal_shape(type_name or "")
    if shape is None:
        raise InexactError(f"round of a {type_name} (Java's double formatting)")
    precision, scale = shape
    integral = precision - scale + 1
    if places < 0:
        target = (min(max(integral, -places + 1), MAX_DECIMAL_PRECISION), 0)
    else:
        new_scale = min(scale, places)
        target = (min(integral + new_scale, MAX_DECIMAL_PRECISION), new_scale)
    result_type = "decimal({},{})".format(*target)
    if operand.value is None:
        return Operand(None, result_type)
    unit = decimal.Decimal(1).scaleb(-places)
    rounded = operand.value.quantize(unit, rounding=decimal.ROUND_HALF_UP, context=_EXACT)
    return Operand(fit_decimal(rounded, *target), result_type)


def floor_ceil(f: Folding, node: exp.Floor | exp.Ceil) -> Operand:
    if node.args.get("decimals") is not None:
        raise InexactError("floor/ceil to a scale")
    operand = f.fold(node.this)
    type_name = operand.type
    up = isinstance(node, exp.Ceil)
    if type_name in INTEGER_TYPES:
        return Operand(operand.value, "bigint")
    if type_name in FLOAT_TYPES:
        if operand.value is None:
            return Operand(None, "bigint")
        value = float(operand.value)
        if not math.isfinite(value) or abs(value) >= 2.0**63:
            raise InexactError(f"floor/ceil of {value} (Java's saturating conversion)")
        return Operand(math.ceil(value) if up else math.floor(value), "bigint")
    shape = decimal_shape(type_name or "")
    if shape is None:
        raise InexactError(f"floor/ceil of a {type_name}")
    precision, scale = shape
    if scale == 0:
        return Operand(operand.value, type_name)
    result_type = f"decimal({min(precision - scale + 1, MAX_DECIMAL_PRECISION)},0)"
    if operand.value is None:
        return Operand(None, result_type)
    exact = Fraction(operand.value)
    return Operand(decimal.Decimal(math.ceil(exact) if up else math.floor(exact)), result_type)


_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
_EXACT = decimal.Context(prec=200, Emax=10_000, Emin=-10_000, traps=[decimal.InvalidOperation])


def _is_literal_int(node: exp.Expression) -> bool:
    inner = node.this if isinstance(node, exp.Neg) else node
    return isinstance(inner, exp.Literal) and not inner.is_string
