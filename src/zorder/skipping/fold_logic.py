"""Constant conditionals and comparisons folded as Spark computes them.

COALESCE, NULLIF, IF, CASE, GREATEST and LEAST bring their branches to the one type
Spark widens them to; comparisons, NOT, AND and OR answer with SQL's three values. What
Spark orders otherwise than Python (NaN, zone-less timestamps, a string against another
type) is left unfolded. Handlers of the folder of :mod:`zorder.skipping.constants`.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from sqlglot import exp

from zorder.skipping.coercion import (
    FLOAT_TYPES,
    INTEGER_TYPES,
    MAX_DECIMAL_PRECISION,
    InexactError,
    decimal_shape,
    fit_decimal,
)
from zorder.skipping.folding import NULL, Folding
from zorder.skipping.numbers import Operand, is_numeric, to_double
from zorder.skipping.zones import SESSION_ZONE

COMPARISONS: dict[type[exp.Expression], Callable[[int], bool]] = {
    exp.EQ: lambda c: c == 0,
    exp.NEQ: lambda c: c != 0,
    exp.LT: lambda c: c < 0,
    exp.LTE: lambda c: c <= 0,
    exp.GT: lambda c: c > 0,
    exp.GTE: lambda c: c >= 0,
}


def coalesce(f: Folding, node: exp.Coalesce) -> Operand:
    operands = [f.fold(node.this), *(f.fold(e) for e in node.expressions)]
    common = _common_type([o.type for o in operands])
    chosen = next((o for o in operands if o.value is not None), None)
    return _as_type(chosen, common)


def nullif(f: Folding, node: exp.Nullif) -> Operand:
    first, second = f.fold(node.this), f.fold(node.expression)
    if first.type is None:
        raise InexactError("nullif of a NULL of unknown type")
    if _compare(first, second) == 0:
        return Operand(None, first.type)
    return Operand(first.value, first.type)


def if_(f: Folding, node: exp.If) -> Operand:
    condition = _condition(f.fold(node.this))
    yes = f.fold(node.args["true"])
    no = f.fold(node.args["false"]) if node.args.get("false") is not None else NULL
    common = _common_type([yes.type, no.type])
    return _as_type(yes if condition else no, common)


def case(f: Folding, node: exp.Case) -> Operand:
    subject = f.fold(node.this) if node.args.get("this") is not None else None
    branches = [(f.fold(i.this), f.fold(i.args["true"])) for i in node.args["ifs"]]
    default = f.fold(node.args["default"]) if node.args.get("default") else NULL
    common = _common_type([v.type for _, v in branches] + [default.type])
    for test, value in branches:
        if subject is None and test.type == "void":  # measured: IF(NULL, ..) is not
            raise InexactError("CASE WHEN NULL: an error in Spark")
        matched = _condition(test) if subject is None else _compare(subject, test) == 0
        if matched:
            return _as_type(value, common)
    return _as_type(default, common)


def _condition(operand: Operand) -> bool:
    if operand.type not in ("boolean", "void"):
        raise InexactError(f"a {operand.type} as a condition")
    return operand.value is True


def comparison(f: Folding, node: exp.Expression) -> Operand:
    left, right = f.fold(node.this), f.fold(node.expression)
    order = _compare(left, right)
    if order is None:
        return Operand(None, "boolean")
    return Operand(COMPARISONS[type(node)](order), "boolean")


def null_safe_eq(f: Folding, node: exp.NullSafeEQ) -> Operand:
    left, right = f.fold(node.this), f.fold(node.expression)
    if left.value is None or right.value is None:
        _common_type([left.type, right.type])  # Spark must accept the pair
        return Operand(left.value is None and right.value is None, "boolean")
    return Operand(_compare(left, right) == 0, "boolean")


def is_null(f: Folding, node: exp.Is) -> Operand:
    if not isinstance(node.expression, exp.Null):
        raise InexactError(node.sql(dialect="spark"))
    return Operand(f.fold(node.this).value is None, "boolean")


def not_(f: Folding, node: exp.Not) -> Operand:
    inner = f.fold(node.this)
    if inner.type not in ("boolean", "void"):
        raise InexactError(f"NOT of a {inner.type}")
    return Operand(None if inner.value is None else not inner.value, "boolean")


def and_or(f: Folding, node: exp.And | exp.Or) -> Operand:
    left, right = f.fold(node.this), f.fold(node.expression)
    if left.type not in ("boolean", "void") or right.type not in ("boolean", "void"):
        raise InexactError(f"{left.type} AND/OR {right.type}")
    a, b = left.value, right.value
    if isinstance(node, exp.And):
        value = False if a is False or b is False else (None if a is None or b is None else True)
    else:
        value = True if a is True or b is True else (None if a is None or b is None else False)
    return Operand(value, "boolean")


def extreme(f: Folding, node: exp.Greatest | exp.Least) -> Operand:
    operands = [f.fold(node.this), *(f.fold(e) for e in node.expressions)]
    if len(operands) < 2:
        raise InexactError("greatest/least of one argument: an error in Spark")
    common = _common_type([o.type for o in operands])
    values = [_as_type(o, common) for o in operands if o.value is not None]
    if not values:
        return Operand(None, common)
    pick = max if isinstance(node, exp.Greatest) else min
    if any(isinstance(v.value, float) and math.isnan(v.value) for v in values):
        raise InexactError("greatest/least with NaN")
    return pick(values, key=lambda v: _sort_key(v.value))


def _common_type(types: list[str | None]) -> str:
    """The type Spark widens the branches of COALESCE, IF, CASE, GREATEST to, where it is
    known here; InexactError otherwise."""
    known = [t for t in types if t != "void"]
    if any(t is None for t in known):
        raise InexactError("a NULL of unknown type among the branches")
    names = [t for t in known if t is not None]
    if not names:
        return "void"
    if all(t == names[0] for t in names):
        return names[0]
    if not all(is_numeric(t) for t in names):
        raise InexactError(f"the common type of {', '.join(names)}")
    if any(t in FLOAT_TYPES for t in names):
        if any(t == "float" for t in names):
            raise InexactError("a float among other numbers (its common type)")
        return "double"
    if all(t in INTEGER_TYPES for t in names):
        order = ("tinyint", "smallint", "int", "bigint")
        return max(names, key=order.index)
    integral = scale = 0
    for name in names:
        shape = decimal_shape(name) or (
            {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 20}[name],
            0,
        )
        integral, scale = max(integral, shape[0] - shape[1]), max(scale, shape[1])
    if integral + scale > MAX_DECIMAL_PRECISION:
        raise InexactError("the common decimal type needs more than 38 digits")
    return f"decimal({integral + scale},{scale})"


def _as_type(operand: Operand | None, common: str) -> Operand:
    if operand is None or operand.value is None:
        return Operand(None, common)
    if operand.type == common or common == "void":
        return Operand(operand.value, operand.type)
    assert operand.type is not None
    shape = decimal_shape(common)
    if shape is not None:
        return Operand(fit_decimal(operand.value, *shape), common)
    if common == "double":
        return Operand(to_double(operand.value, operand.type), common)
    return Operand(operand.value, common)  # a wider integer


def _sort_key(value: Any) -> Any:
    if isinstance(value, dt.datetime) and value.tzinfo is SESSION_ZONE:
        raise InexactError("zone-less timestamps compared (needs the session's zone)")
    if isinstance(value, decimal.Decimal | int) and not isinstance(value, bool):
        return Fraction(value)
    return value


def _compare(left: Operand, right: Operand) -> int | None:
    """Spark's comparison of two constants: -1, 0, 1, or None when either is NULL."""
    common = _common_type([left.type, right.type])
    if common == "string" and (left.type != right.type):
        raise InexactError("a string compared with another type")
    if left.value is None or right.value is None:
        return None
    a, b = _sort_key(_as_type(left, common).value), _sort_key(_as_type(right, common).value)
    if isinstance(a, float) and (math.isnan(a) or math.isnan(b)):
        raise InexactError("NaN compared (Spark orders NaN above every number)")
    return int(a > b) - int(a < b)
