"""Spark's arithmetic and rounding: each operator defined once, its value and its SQL.

``+ - * / div %`` and ``pmod``, unary minus, ``abs``, ``round``, ``floor`` and
``ceil``, in Spark's result types (ANSI mode on): ``int * int`` stays an int and raises
on overflow, ``/`` divides doubles (decimals: Spark's result precision and scale),
``div`` answers a bigint, ``%`` keeps Java's sign, a zero divisor raises, and decimal
sums and products get Spark's precision and scale. A constant call is computed exactly
by :mod:`zorder.skipping.numbers` (the ``*_value`` rules); a call over columns is written
as DuckDB SQL that casts its operands to the result type (the ``*_sql`` rules), refusing
what DuckDB would round otherwise (decimal division, results above 38 digits). A sum or
difference with a date, timestamp or interval is :mod:`zorder.skipping.temporal`'s.
:data:`FUNCTIONS` registers both in the one table of :mod:`zorder.skipping.functions`.
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
    integer_range,
    is_numeric,
    number_literal,
)
from zorder.skipping.numbers import Operand, absolute, arithmetic, negate, result_precision
from zorder.skipping.rules import (
    Classifying,
    DiffersError,
    Folding,
    Function,
    NotConstantError,
    Translating,
    Typed,
    int_arg,
)
from zorder.skipping.sql_values import (
    DAYS,
    MICROS,
    MONTHS,
    NULL,
    RefusedError,
    Value,
    common_type,
    decimal_shapes_of,
    duck_type,
    error_sql,
    is_null,
    one_answer,
)
from zorder.skipping.temporal import datetime_arithmetic

ARITHMETIC: dict[type[exp.Expression], str] = {
    exp.Add: "+",
    exp.Sub: "-",
    exp.Mul: "*",
    exp.Div: "/",
    exp.IntDiv: "div",
    exp.Mod: "%",
}


def number_operand(text: str) -> Operand:
    """A number literal as written (its sign included), typed as Spark's parser types it."""
    try:
        value, type_name = number_literal(text)
    except ValueError:  # the parser refuses such text before it gets here
        raise NotConstantError(text) from None
    if decimal_shape(type_name) is not None:  # an integer too wide for a bigint
        value = decimal.Decimal(value)
    return Operand(value, type_name, literal=True)


def _numeric_pair(
    t: Translating, node: exp.Binary, verb: str, *, integral: bool = False
) -> tuple[Value, Value, str]:
    """The operands of ``node`` and the type Spark computes in ("null" where a NULL literal
    decides it); ``integral``: ``div``, which Spark refuses for floating-point operands."""
    left, right = t.value(node.this), t.value(node.expression)
    shown = node.sql(dialect="spark")
    for one, other in ((left, right), (right, left)):
        if one.type == "string" and other.type not in INTEGER_TYPES:
            # Spark brings a string to the other side's integral type as a bigint; with
            # anything else its rule is not reproduced here.
            raise RefusedError(f"{shown}: a string {verb} a {other.type}")
    # Spark checks the operands' types before NullPropagation: 1e0 div NULL and bo + NULL
    # are analysis errors, not NULL (the fold rule, numbers.arithmetic, refuses them too).
    for one, side in ((left, node.this), (right, node.expression)):
        if one.type not in ("null", "string") and not is_numeric(one.type):
            raise RefusedError(f"{shown}: arithmetic on a {one.type}")
        if integral and one.type in FLOAT_TYPES:
            raise RefusedError(f"{shown}: div of a {one.type} (an error in Spark)")
        if integral and one.type == "null" and not isinstance(_unparen(side), exp.Null):
            # A NULL computed from a typed operand (x + NULL): its type is lost here.
            raise RefusedError(f"{shown}: div of a NULL of a type not known here")
    if is_null(left) or is_null(right):  # NullPropagation: NULL, nothing evaluated
        return left, right, "null"
    if left.type == "string" or right.type == "string":
        return t.cast(left, "bigint"), t.cast(right, "bigint"), "bigint"
    if left.type == "null" and right.type == "null":
        return left, right, "null"
    common = common_type(left, right, digits=True)
    assert common is not None
    return left, right, common


def _unparen(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def arithmetic_value(f: Folding, node: exp.Expression) -> Operand:
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


def _decimal_result(op: str, a: Value, b: Value, shown: str) -> tuple[int, int]:
    """The precision and scale of ``a op b`` on decimals, as the folder computes them
    (:func:`~zorder.skipping.numbers.result_precision`), before Spark bounds them to 38."""
    answers = {
        result_precision(op, x, y) for x in decimal_shapes_of(a) for y in decimal_shapes_of(b)
    }
    return one_answer(answers, shown)  # type: ignore[no-any-return]


def add_sub_sql(t: Translating, node: exp.Add | exp.Sub) -> Value:
    left, right = t.value(node.this), t.value(node.expression)
    op = "+" if isinstance(node, exp.Add) else "-"
    temporal = datetime_arithmetic(t, node, left, right, op)
    if temporal is not None:
        return temporal
    a, b, common = _numeric_pair(t, node, "added to")
    if common == "null":
        return NULL
    if common.startswith("decimal"):
        shown = node.sql(dialect="spark")
        precision, scale = _decimal_result(op, a, b, shown)
        if precision > MAX_DECIMAL_PRECISION:
            raise RefusedError(f"{shown}: a decimal sum above 38 digits")
        result = f"decimal({precision},{scale})"
        x, y = t.cast(a, result), t.cast(b, result)
        sql = f"CAST(({x.sql}) {op} ({y.sql}) AS {duck_type(result)})"
        return Value(sql, result, raises=True)
    x, y = t.cast(a, common), t.cast(b, common)
    may_raise = common not in FLOAT_TYPES or x.raises or y.raises
    return Value(f"(({x.sql}) {op} ({y.sql}))", common, raises=may_raise)


def mul_sql(t: Translating, node: exp.Mul) -> Value:
    a, b, common = _numeric_pair(t, node, "multiplied by")
    if common == "null":
        return NULL
    if common.startswith("decimal"):
        shown = node.sql(dialect="spark")
        precision, scale = _decimal_result("*", a, b, shown)
        if precision > MAX_DECIMAL_PRECISION:
            raise RefusedError(f"{shown}: a decimal product above 38 digits (Spark rounds it)")
        result = f"decimal({precision},{scale})"
        (p1, s1), (p2, s2) = decimal_shapes_of(a)[0], decimal_shapes_of(b)[0]
        x = t.cast(a, f"decimal({p1},{s1})")
        y = t.cast(b, f"decimal({p2},{s2})")
        sql = f"CAST(({x.sql}) * ({y.sql}) AS {duck_type(result)})"
        return Value(sql, result, raises=x.raises or y.raises)
    x, y = t.cast(a, common), t.cast(b, common)
    may_raise = common not in FLOAT_TYPES or x.raises or y.raises
    return Value(f"(({x.sql}) * ({y.sql}))", common, raises=may_raise)


def div_sql(t: Translating, node: exp.Div) -> Value:
    a, b, common = _numeric_pair(t, node, "divided by")
    if common == "null":
        return NULL
    if common.startswith("decimal"):
        raise RefusedError(
            f"{node.sql(dialect='spark')}: decimal division (Spark rounds the exact "
            "quotient to its result scale)"
        )
    x, y = t.cast(a, "double"), t.cast(b, "double")
    sql = (
        f"(CASE WHEN ({y.sql}) = 0 THEN {error_sql('[DIVIDE_BY_ZERO] Division by zero')} "
        f"ELSE ({x.sql}) / ({y.sql}) END)"
    )
    return Value(sql, "double", raises=True)


def int_div_sql(t: Translating, node: exp.IntDiv) -> Value:
    a, b, common = _numeric_pair(t, node, "divided by", integral=True)
    if common == "null":
        return NULL
    if common not in INTEGER_TYPES:
        raise RefusedError(f"{node.sql(dialect='spark')}: div of a {common}")
    x, y = t.cast(a, "bigint"), t.cast(b, "bigint")
    sql = (
        f"(CASE WHEN ({y.sql}) = 0 THEN {error_sql('[DIVIDE_BY_ZERO] Division by zero')} "
        f"ELSE ({x.sql}) // ({y.sql}) END)"
    )
    return Value(sql, "bigint", raises=True)


def mod_sql(t: Translating, node: exp.Mod) -> Value:
    a, b, common = _numeric_pair(t, node, "divided by")
    if common == "null":
        return NULL
    if common.startswith("decimal"):
        raise RefusedError(f"{node.sql(dialect='spark')}: the remainder of decimals")
    x, y = t.cast(a, common), t.cast(b, common)
    zero = error_sql("[REMAINDER_BY_ZERO] Remainder by zero")
    # Java's % keeps the dividend's sign, as DuckDB's; MIN % -1 is 0 in Java.
    minus_one = f"WHEN ({y.sql}) = -1 THEN ({x.sql}) * 0 " if common in INTEGER_TYPES else ""
    sql = f"(CASE WHEN ({y.sql}) = 0 THEN {zero} {minus_one}ELSE ({x.sql}) % ({y.sql}) END)"
    return Value(sql, common, raises=True)


def pmod_value(f: Folding, node: exp.Anonymous) -> Operand:
    if len(node.expressions) != 2:
        raise NotConstantError(node.sql(dialect="spark"))
    left, right = (f.fold(e) for e in node.expressions)
    return arithmetic("pmod", left, right)


# -- signs and rounding ------------------------------------------------------------


def neg_value(f: Folding, node: exp.Neg) -> Operand:
    inner_node = node.this
    if isinstance(inner_node, exp.Literal) and not inner_node.is_string:
        # Spark's parser reads the sign into the literal: -2147483648 is an int.
        return number_operand("-" + str(inner_node.this))
    inner = f.fold(inner_node)
    if datetimes.is_interval(inner.type):
        return datetimes.negate_interval(inner)
    literal = None if inner.literal is None else False
    return negate(inner, literal=literal)


def neg_sql(t: Translating, node: exp.Neg) -> Value:
    inner = t.value(node.this)
    if inner.type == "null":
        return inner
    if inner.type in (DAYS, MONTHS, MICROS) and inner.is_literal:
        return Value(str(-inner.literal), inner.type, -inner.literal, True)
    if not is_numeric(inner.type):
        raise RefusedError(f"{node.sql(dialect='spark')}: minus a {inner.type}")
    return Value(f"(-({inner.sql}))", inner.type, raises=inner.type not in FLOAT_TYPES)


def abs_value(f: Folding, node: exp.Abs) -> Operand:
    return absolute(f.fold(node.this))


def abs_sql(t: Translating, node: exp.Abs) -> Value:
    inner = t.value(node.this)
    if inner.type == "null":
        return inner
    if not is_numeric(inner.type):
        raise RefusedError(f"{node.sql(dialect='spark')}: abs of a {inner.type}")
    return Value(f"abs({inner.sql})", inner.type, raises=inner.type not in FLOAT_TYPES)


def round_value(f: Folding, node: exp.Round) -> Operand:
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
        low, high = integer_range(type_name)
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


def floor_ceil_value(f: Folding, node: exp.Floor | exp.Ceil) -> Operand:
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


_EXACT = decimal.Context(prec=200, Emax=10_000, Emin=-10_000, traps=[decimal.InvalidOperation])


def _is_literal_int(node: exp.Expression) -> bool:
    inner = node.this if isinstance(node, exp.Neg) else node
    return isinstance(inner, exp.Literal) and not inner.is_string


def floating_ansi(c: Classifying, node: exp.Add | exp.Sub | exp.Mul) -> Typed:
    """Floating-point arithmetic neither raises nor wraps (integers and decimals do): the
    same in both modes."""
    sides = (c.operand(node.this).type, c.operand(node.expression).type)
    if all(side in FLOAT_TYPES for side in sides):
        return Typed("double")
    raise DiffersError(node)


FUNCTIONS: dict[type[exp.Expression] | str, Function] = {
    exp.Add: Function(arithmetic_value, add_sub_sql, ansi=floating_ansi),
    exp.Sub: Function(arithmetic_value, add_sub_sql, ansi=floating_ansi),
    exp.Mul: Function(arithmetic_value, mul_sql, ansi=floating_ansi),
    exp.Div: Function(arithmetic_value, div_sql),
    exp.IntDiv: Function(arithmetic_value, int_div_sql),
    exp.Mod: Function(arithmetic_value, mod_sql),
    "pmod": Function(pmod_value),
    exp.Neg: Function(neg_value, neg_sql),
    exp.Abs: Function(abs_value, abs_sql),
    exp.Round: Function(round_value),
    exp.Floor: Function(floor_ceil_value),
    exp.Ceil: Function(floor_ceil_value),
}
