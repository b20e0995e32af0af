"""Spark's logic and comparisons: each defined once, its value, its SQL and its ANSI-off meaning.

AND, OR, NOT and IS answer with SQL's three values; comparisons, IN, BETWEEN and
``<=>`` bring their operands to the type Spark compares them in. The common type of
operands and branches, and the order of two constants, are here too, for the
conditionals (:mod:`zorder.skipping.conditionals`) as well.

Spark decides a good deal of a filter's logic before it reads a row: it folds constant
calls (the ``*_value`` rules; what Spark orders otherwise than Python, NaN, zone-less
timestamps, a string against another type, is left unfolded), simplifies constant
operands of AND and OR, propagates NULL through comparisons and unwraps casts compared
with literals their type cannot hold; and it evaluates the right side of AND and OR only
where the left does not decide. The ``*_sql`` rules write these rules out as DuckDB SQL,
so the SQL raises, and answers, only where Spark does; the ``*_ansi`` rules say where a
comparison means the same with ANSI mode off (ANSI off coerces a string against a number,
a decimal against a string, an IN list of strings and numbers otherwise).
:data:`FUNCTIONS` registers them in the one table of :mod:`zorder.skipping.functions`.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
import struct
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from sqlglot import exp

from zorder.skipping.coercion import (
    INTEGER_TYPES,
    MAX_DECIMAL_PRECISION,
    InexactError,
    as_decimal,
    date_text,
    decimal_shape,
    fit_decimal,
    integer_range,
    is_numeric,
    same_as_text,
    wider_type,
)
from zorder.skipping.numbers import Operand, to_double
from zorder.skipping.rules import (
    Classifying,
    DiffersError,
    Folding,
    Function,
    Translating,
    Typed,
)
from zorder.skipping.sql_values import (
    DAYS,
    FALSE,
    MICROS,
    MONTHS,
    TRUE,
    UNKNOWN,
    RefusedError,
    Value,
    common_type,
    is_null,
    truth_of,
)
from zorder.skipping.sql_values import NULL as NULL_SQL
from zorder.skipping.zones import SESSION_ZONE

COMPARISONS: dict[type[exp.Expression], str] = {
    exp.EQ: "=",
    exp.NullSafeEQ: "IS NOT DISTINCT FROM",
    exp.NEQ: "<>",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
}


_HOLDS: dict[str, Callable[[int], bool]] = {
    "=": lambda c: c == 0,
    "<>": lambda c: c != 0,
    "<": lambda c: c < 0,
    "<=": lambda c: c <= 0,
    ">": lambda c: c > 0,
    ">=": lambda c: c >= 0,
}


# -- the common type of branches and operands --------------------------------------


def common_of(types: list[str | None]) -> str:
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
    if "float" in names:
        raise InexactError("a float among other numbers (its common type)")
    common = names[0]
    for name in names[1:]:  # the translator's rule too (sql_values.common_type)
        widened = wider_type(common, name)
        assert widened is not None
        common = widened
    shapes = [as_decimal(name) for name in names]
    if decimal_shape(common) is not None and any(shape is not None for shape in shapes):
        exact = [shape for shape in shapes if shape is not None]
        digits = max(p - s for p, s in exact) + max(s for _, s in exact)
        if digits > MAX_DECIMAL_PRECISION:  # Spark would round the scale: not folded
            raise InexactError("the common decimal type needs more than 38 digits")
    return common


def as_type(operand: Operand | None, common: str) -> Operand:
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


def sort_key(value: Any) -> Any:
    if isinstance(value, dt.datetime) and value.tzinfo is SESSION_ZONE:
        raise InexactError("zone-less timestamps compared (needs the session's zone)")
    if isinstance(value, decimal.Decimal | int) and not isinstance(value, bool):
        return Fraction(value)
    return value


def order_of(left: Operand, right: Operand) -> int | None:
    """Spark's comparison of two constants: -1, 0, 1, or None when either is NULL."""
    common = common_of([left.type, right.type])
    if common == "string" and (left.type != right.type):
        raise InexactError("a string compared with another type")
    if left.value is None or right.value is None:
        return None
    a, b = sort_key(as_type(left, common).value), sort_key(as_type(right, common).value)
    if isinstance(a, float) and (math.isnan(a) or math.isnan(b)):
        raise InexactError("NaN compared (Spark orders NaN above every number)")
    return int(a > b) - int(a < b)


def _pair(t: Translating, left: Value, right: Value, shown: str) -> tuple[Value, Value, str]:
    common = common_type(left, right, digits=True)
    if common is None:
        raise RefusedError(f"{shown}: Spark does not compare a {left.type} with a {right.type}")
    if common == "null":
        common = "boolean"
    return t.cast(left, common), t.cast(right, common), common


# -- AND, OR, NOT, IS --------------------------------------------------------------


def and_or_value(f: Folding, node: exp.And | exp.Or) -> Operand:
    left, right = f.fold(node.this), f.fold(node.expression)
    if left.type not in ("boolean", "void") or right.type not in ("boolean", "void"):
        raise InexactError(f"{left.type} AND/OR {right.type}")
    a, b = left.value, right.value
    if isinstance(node, exp.And):
        value = False if a is False or b is False else (None if a is None or b is None else True)
    else:
        value = True if a is True or b is True else (None if a is None or b is None else False)
    return Operand(value, "boolean")


def and_sql(t: Translating, node: exp.And) -> Value:
    return junction(t, node, predicate=False)


def or_sql(t: Translating, node: exp.Or) -> Value:
    return junction(t, node, predicate=False)


def junction(t: Translating, node: exp.And | exp.Or, predicate: bool) -> Value:
    is_and = isinstance(node, exp.And)
    left = t.condition(node.this, predicate)
    right = t.condition(node.expression, predicate)
    # Spark's BooleanSimplification, before any row: x AND FALSE is FALSE, x OR TRUE is
    # TRUE, whatever x would do (raise included); TRUE AND x is x.
    absorbing, neutral = (False, True) if is_and else (True, False)
    truths = (truth_of(left), truth_of(right))
    if absorbing in truths:
        return FALSE if is_and else TRUE
    if truths[0] is neutral:
        return right
    if truths[1] is neutral:
        return left
    if truths == (None, None):
        return NULL_SQL
    raises = left.raises or right.raises
    word = "AND" if is_and else "OR"
    if right.raises:  # Spark skips the right side where the left decides
        decided = "FALSE" if is_and else "TRUE"
        sql = (
            f"CASE WHEN ({left.sql}) IS {decided} THEN {decided} "
            f"ELSE ({left.sql}) {word} ({right.sql}) END"
        )
    else:
        sql = f"(({left.sql}) {word} ({right.sql}))"
    return Value(sql, "boolean", raises=raises)


def not_value(f: Folding, node: exp.Not) -> Operand:
    inner = f.fold(node.this)
    if inner.type not in ("boolean", "void"):
        raise InexactError(f"NOT of a {inner.type}")
    return Operand(None if inner.value is None else not inner.value, "boolean")


def not_sql(t: Translating, node: exp.Not) -> Value:
    inner = t.boolean(node.this)
    truth = truth_of(inner)
    if truth is not UNKNOWN:
        return NULL_SQL if truth is None else (FALSE if truth else TRUE)
    return Value(f"(NOT ({inner.sql}))", "boolean", raises=inner.raises)


def is_value(f: Folding, node: exp.Is) -> Operand:
    if not isinstance(node.expression, exp.Null):
        raise InexactError(node.sql(dialect="spark"))
    return Operand(f.fold(node.this).value is None, "boolean")


def is_sql(t: Translating, node: exp.Is) -> Value:
    inner = t.value(node.this)
    target = node.expression
    if isinstance(target, exp.Null):
        return Value(f"(({inner.sql}) IS NULL)", "boolean", raises=inner.raises)
    if isinstance(target, exp.Boolean):
        inner = t.boolean(node.this)
        word = "TRUE" if target.this else "FALSE"
        return Value(f"(({inner.sql}) IS {word})", "boolean", raises=inner.raises)
    raise RefusedError(node.sql(dialect="spark"))


# -- comparisons -------------------------------------------------------------------


def comparison_value(f: Folding, node: exp.Expression) -> Operand:
    left, right = f.fold(node.this), f.fold(node.expression)
    order = order_of(left, right)
    if order is None:
        return Operand(None, "boolean")
    return Operand(_HOLDS[COMPARISONS[type(node)]](order), "boolean")


def compare_sql(t: Translating, node: exp.Expression) -> Value:
    op = COMPARISONS[type(node)]
    left, right = t.value(node.this), t.value(node.expression)
    return compare_values(t, op, left, right, node.sql(dialect="spark"))


def compare_values(t: Translating, op: str, left: Value, right: Value, shown: str) -> Value:
    if "DISTINCT" not in op and (is_null(left) or is_null(right)):
        return NULL_SQL  # NullPropagation: the other side is never evaluated
    decided = unwrapped(op, left, right)
    if decided is not None:
        return decided
    if left.type in (DAYS, MONTHS, MICROS) or right.type in (DAYS, MONTHS, MICROS):
        if left.type != right.type:
            raise RefusedError(f"{shown}: an interval compared with a {right.type}")
        a, b = left, right
    else:
        a, b, _ = _pair(t, left, right, shown)
    sql = f"(({a.sql}) {op} ({b.sql}))"
    return Value(sql, "boolean", raises=a.raises or b.raises)


_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "<>": "<>"}


def unwrapped(op: str, left: Value, right: Value) -> Value | None:
    """Spark's UnwrapCastInBinaryComparison, where it decides the comparison before a row:
    an integral expression against a literal its type cannot hold (``CAST(m AS BIGINT) =
    1.5``, ``i > 1e10``) is FALSE (or TRUE) wherever the expression is not NULL, and FALSE
    unevaluated in predicate position; None where the rule does not decide it."""
    for target, literal, flipped in ((left, right, False), (right, left, True)):
        if target.is_literal or not literal.is_literal or target.type not in INTEGER_TYPES:
            continue
        if not is_numeric(literal.type) or op not in _FLIPPED:
            continue
        value = literal.literal
        if isinstance(value, float) and math.isnan(value):
            return None
        direction = _FLIPPED[op] if flipped else op
        decided = _beyond_long(direction, literal)
        if decided is not None:
            return decided
        if literal.type in ("float", "double") and target.type == "bigint":
            # Compared as DOUBLE, which does not hold every BIGINT: not an up-cast, so the
            # rule does not apply and Spark casts each row (measured: CAST(f AS BIGINT) =
            # 1e30 raises on an infinite f).
            return None
        low, high = integer_range(target.type)
        above = value > high
        below = value < low
        if isinstance(value, float):
            fractional = not (above or below) and not value.is_integer()
        else:
            number = decimal.Decimal(value)
            fractional = number != number.to_integral_value()
        if above or below:
            truth = {
                "=": False,
                "<>": True,
                "<": above,
                "<=": above,
                ">": below,
                ">=": below,
            }[direction]
        elif fractional and direction in ("=", "<>"):
            truth = direction == "<>"
        else:
            return None
        word = "TRUE" if truth else "FALSE"
        sql = f"(CASE WHEN ({target.sql}) IS NULL THEN NULL ELSE {word} END)"
        return Value(sql, "boolean", raises=target.raises, false_in_predicate=not truth)
    return None


_LONG_LOW, _LONG_HIGH = -(2**63), 2**63 - 1


def _beyond_long(direction: str, literal: Value) -> Value | None:
    """Spark's DecimalPrecision, before any row: an integral expression ``<``, ``<=``,
    ``>``, ``>=`` a decimal literal beyond BIGINT's range is the constant TRUE or FALSE,
    NULL rows included (measured on 3.5.9 and 4.1.4: ``NOT (l > 9223372036854775808)``
    keeps the rows whose l is NULL). A decimal Spark computes (not written as a literal)
    is left to UnwrapCastInBinaryComparison, which keeps NULL; None where the rule does
    not apply."""
    if not literal.type.startswith("decimal(") or direction not in ("<", "<=", ">", ">="):
        return None
    number = decimal.Decimal(literal.literal)
    if _LONG_LOW <= number <= _LONG_HIGH:
        return None
    if literal.written is None:
        raise RefusedError(
            f"{literal.sql} compared with an integer: Spark makes the comparison a constant "
            "where the decimal is written as a literal, and keeps NULL where it computes it"
        )
    if not literal.written:
        return None
    truth = direction in ("<", "<=") if number > _LONG_HIGH else direction in (">", ">=")
    return TRUE if truth else FALSE


def null_safe_eq_value(f: Folding, node: exp.NullSafeEQ) -> Operand:
    left, right = f.fold(node.this), f.fold(node.expression)
    if left.value is None or right.value is None:
        common_of([left.type, right.type])  # Spark must accept the pair
        return Operand(left.value is None and right.value is None, "boolean")
    return Operand(order_of(left, right) == 0, "boolean")


def distinct_sql(t: Translating, node: exp.NullSafeNEQ) -> Value:
    left, right = t.value(node.this), t.value(node.expression)
    return compare_values(t, "IS DISTINCT FROM", left, right, node.sql(dialect="spark"))


def between_sql(t: Translating, node: exp.Between) -> Value:
    if node.args.get("symmetric"):
        raise RefusedError("BETWEEN SYMMETRIC")
    shown = node.sql(dialect="spark")
    target = t.value(node.this)
    low = compare_values(t, ">=", target, t.value(node.args["low"]), shown)
    high = compare_values(t, "<=", target, t.value(node.args["high"]), shown)
    if high.raises:
        sql = f"CASE WHEN ({low.sql}) IS FALSE THEN FALSE ELSE ({low.sql}) AND ({high.sql}) END"
    else:
        sql = f"(({low.sql}) AND ({high.sql}))"
    return Value(sql, "boolean", raises=low.raises or high.raises)


def in_sql(t: Translating, node: exp.In) -> Value:
    shown = node.sql(dialect="spark")
    if node.args.get("query") is not None or node.args.get("unnest") is not None:
        raise RefusedError(f"a subquery ({shown})")
    target = t.value(node.this)
    items = [t.value(item) for item in node.expressions]
    common = target.type
    for item in items:
        widened = common_type(Value("", common), item, digits=False)
        if widened is None:
            raise RefusedError(f"{shown}: Spark does not compare a {common} with a {item.type}")
        common = widened
    if common == "null":
        return Value("CAST(NULL AS BOOLEAN)", "boolean")
    cast = [t.cast(v, common) for v in [target, *items]]
    sql = f"(({cast[0].sql}) IN ({', '.join(v.sql for v in cast[1:])}))"
    return Value(sql, "boolean", raises=any(v.raises for v in cast))


# -- the same with ANSI mode off -----------------------------------------------------
# ANSI off coerces a comparison's operands otherwise (a string against a number, a decimal
# against a string, an IN list of strings and numbers): a comparison is vouched for only
# between operands of one type family, or a constant string ANSI off reads alike.

NUMERIC = "numeric"
_BOOLEAN = Typed("boolean")


def family(type_name: str) -> str:
    """The family of types ANSI off compares alike: numbers, date-times, or the type."""
    if is_numeric(type_name):
        return NUMERIC
    if type_name in ("date", "timestamp", "timestamp_ntz"):
        return "datetime"
    return type_name


def _meets_alike(
    c: Classifying, whole: exp.Expression, left: exp.Expression, right: exp.Expression
) -> None:
    first, second = c.operand(left), c.operand(right)
    if first.type is None or second.type is None:
        return  # NULL compared: NULL in both modes
    if not (_compatible(first, second) and _compatible(second, first)):
        raise DiffersError(whole)


def compare_ansi(c: Classifying, node: exp.Expression) -> Typed:
    _meets_alike(c, node, node.this, node.expression)
    return _BOOLEAN


def between_ansi(c: Classifying, node: exp.Between) -> Typed:
    _meets_alike(c, node, node.this, node.args["low"])
    _meets_alike(c, node, node.this, node.args["high"])
    return _BOOLEAN


def in_ansi(c: Classifying, node: exp.In) -> Typed:
    if node.args.get("query") is not None or node.args.get("unnest") is not None:
        raise DiffersError(node)
    target = c.operand(node.this)
    listed = [c.operand(value) for value in node.expressions]
    typed = [value for value in listed if value.type is not None]
    if target.type is None or not typed:
        return _BOOLEAN
    if any(value.type == "string" for value in typed) and target.type != "string":
        # ANSI off widens the whole list, and the column, to strings.
        if not all(_same_text(value, target.type) for value in typed):
            raise DiffersError(node)
        return _BOOLEAN
    if any(family(value.type or "") != family(target.type) for value in typed):
        raise DiffersError(node)
    # A list is widened to one type over all its items and the column.
    every = [target, *typed]
    if not all(_float_exact(a, b) for a in every for b in every):
        raise DiffersError(node)
    if not _decimals_fit(*(value.type or "" for value in every)):
        raise DiffersError(node)
    return _BOOLEAN


def is_ansi(c: Classifying, node: exp.Is) -> Typed:
    if not isinstance(node.expression, exp.Null):
        raise DiffersError(node)
    c.operand(node.this)
    return _BOOLEAN


_PLAIN_INTEGER = re.compile(r"-?\d+")


def _compatible(operand: Typed, other: Typed) -> bool:
    """Whether ``operand`` meets ``other`` (in a comparison) the same way in both modes."""
    assert operand.type is not None
    assert other.type is not None
    if family(operand.type) == family(other.type):
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


def _float_exact(operand: Typed, other: Typed) -> bool:
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


def _same_text(value: Typed, column_type: str) -> bool:
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


_COMPARE = Function(comparison_value, compare_sql, locates=True, ansi=compare_ansi)
FUNCTIONS: dict[type[exp.Expression] | str, Function] = {
    exp.And: Function(and_or_value, and_sql),
    exp.Or: Function(and_or_value, or_sql),
    exp.Not: Function(not_value, not_sql),
    exp.Is: Function(is_value, is_sql, locates=True, ansi=is_ansi),
    **{node: _COMPARE for node in COMPARISONS if node is not exp.NullSafeEQ},
    exp.NullSafeEQ: Function(null_safe_eq_value, compare_sql, locates=True, ansi=compare_ansi),
    exp.NullSafeNEQ: Function(sql=distinct_sql, locates=True, ansi=compare_ansi),
    exp.Between: Function(sql=between_sql, locates=True, ansi=between_ansi),
    exp.In: Function(sql=in_sql, locates=True, ansi=in_ansi),
}
