"""The values a Spark filter translates to: DuckDB SQL with the Spark type it computes in.

Every handler of :mod:`zorder.skipping.translator` answers a :class:`Value` (its SQL, its
Spark type, whether it is a literal and whether some row may make it raise), and agrees with
the others on types through this module: Spark's type names as DuckDB types, the common type
two operands are brought to (ANSI widening, decimal precision and scale), literals as SQL,
and the constant conditions (TRUE, FALSE, NULL) Spark's optimizer simplifies before a row.
:class:`Translating` is what a handler may ask of the translator, so the handler families
live in modules of their own without importing the translator that dispatches to them.
"""

from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import dataclass
from typing import Any

from zorder.skipping.coercion import FLOAT_TYPES, INTEGER_TYPES, decimal_shape

INTEGER_ORDER = ("tinyint", "smallint", "int", "bigint")
_INTEGER_AS_DECIMAL = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 20}
MAX_PRECISION = 38
DUCK_TYPES = {
    "boolean": "BOOLEAN",
    "tinyint": "TINYINT",
    "smallint": "SMALLINT",
    "int": "INTEGER",
    "bigint": "BIGINT",
    "float": "FLOAT",
    "double": "DOUBLE",
    "string": "VARCHAR",
    "date": "DATE",
    "timestamp": "TIMESTAMPTZ",
    "timestamp_ntz": "TIMESTAMP",
}
# The kinds of interval literal the translator computes with, and what their SQL holds.
DAYS, MONTHS, MICROS = "interval day", "interval month", "interval micros"


class RefusedError(Exception):
    """What has no exact translation; :func:`translate` names where it stands."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what
        self.located = False


@dataclass(frozen=True)
class Value:
    """A translated expression: its SQL and the Spark type it computes in."""

    sql: str
    type: str  # Spark's type name, "null", or one of the interval kinds
    literal: Any = None  # the Python value, when the node is a literal (not NULL)
    is_literal: bool = False
    raises: bool = False  # some row may make it raise (it then needs lazy operators)
    # Spark's optimizer makes it FALSE, unevaluated, where it is the filter or an operand of
    # the filter's ANDs and ORs (its NULL is replaced by FALSE there).
    false_in_predicate: bool = False


def duck_type(type_name: str) -> str:
    shape = decimal_shape(type_name)
    if shape is not None:
        return f"DECIMAL({shape[0]},{shape[1]})"
    try:
        return DUCK_TYPES[type_name]
    except KeyError:
        raise RefusedError(f"a value of type {type_name}") from None


def is_numeric(type_name: str) -> bool:
    return type_name in INTEGER_TYPES or type_name in FLOAT_TYPES or type_name.startswith("decimal")


def as_decimal(value: Value) -> tuple[int, int]:
    """A decimal operand's shape; an integer literal's is its digits (fromLiteral)."""
    shape = decimal_shape(value.type)
    if shape is not None:
        return shape
    if value.is_literal and isinstance(value.literal, int):
        return max(len(str(abs(value.literal))), 1), 0
    return _INTEGER_AS_DECIMAL[value.type], 0


def bounded(precision: int, scale: int) -> str:
    """Spark's adjustPrecisionScale (precision loss allowed, its default)."""
    if precision <= MAX_PRECISION:
        return f"decimal({precision},{scale})"
    digits = precision - scale
    kept = max(MAX_PRECISION - digits, min(scale, 6))
    return f"decimal({MAX_PRECISION},{kept})"


def _wider_decimal(left: tuple[int, int], right: tuple[int, int]) -> str:
    scale = max(left[1], right[1])
    digits = max(left[0] - left[1], right[0] - right[1])
    if digits + scale <= MAX_PRECISION:
        return f"decimal({digits + scale},{scale})"
    return f"decimal({MAX_PRECISION},{max(0, MAX_PRECISION - digits)})"


_TEMPORAL = {
    frozenset({"date", "timestamp"}): "timestamp",
    frozenset({"date", "timestamp_ntz"}): "timestamp_ntz",
    frozenset({"timestamp", "timestamp_ntz"}): "timestamp",
}


def common_type(left: Value, right: Value, *, digits: bool) -> str | None:
    """The type Spark (ANSI) brings two operands to; ``digits`` types an integer literal
    met by a decimal by its digits, as comparisons and arithmetic do."""
    a, b = left.type, right.type
    if a == b:
        return a
    if a == "null":
        return b
    if b == "null":
        return a
    if is_numeric(a) and is_numeric(b):
        if a == "double" or b == "double" or a == "float" or b == "float":
            return "double"
        if a in INTEGER_TYPES and b in INTEGER_TYPES:
            return max(a, b, key=INTEGER_ORDER.index)
        if digits:
            return _wider_decimal(as_decimal(left), as_decimal(right))
        shapes = [decimal_shape(t) or (_INTEGER_AS_DECIMAL[t], 0) for t in (a, b)]
        return _wider_decimal(shapes[0], shapes[1])
    temporal = _TEMPORAL.get(frozenset({a, b}))
    if temporal is not None:
        return temporal
    for one, other in ((a, b), (b, a)):
        if one == "string":
            if other in INTEGER_TYPES:
                return "bigint"
            if other in ("date", "timestamp", "timestamp_ntz", "boolean"):
                return other
    return None


def literal_sql(value: Any, type_name: str) -> str:
    if type_name == "boolean":
        return "TRUE" if value else "FALSE"
    if type_name in INTEGER_TYPES:
        return f"CAST({int(value)} AS {duck_type(type_name)})"
    if type_name in FLOAT_TYPES:
        number = float(value)
        text = "nan" if number != number else repr(number)
        return f"CAST('{text}' AS {duck_type(type_name)})"
    if type_name.startswith("decimal"):
        return f"CAST('{decimal.Decimal(value)}' AS {duck_type(type_name)})"
    if type_name == "string":
        return "'" + str(value).replace("'", "''") + "'"
    if type_name == "date":
        if not 1 <= value.year <= 9999:
            raise RefusedError(f"the date {value} (outside years 1-9999)")
        return f"DATE '{value.isoformat()}'"
    if type_name == "timestamp":
        utc = value.astimezone(dt.UTC).replace(tzinfo=None)
        return f"TIMESTAMPTZ '{utc.isoformat(sep=' ', timespec='microseconds')}+00'"
    if type_name == "timestamp_ntz":
        return f"TIMESTAMP '{value.isoformat(sep=' ', timespec='microseconds')}'"
    raise RefusedError(f"a literal of type {type_name}")


UNKNOWN = object()
TRUE = Value("TRUE", "boolean", True, is_literal=True)
FALSE = Value("FALSE", "boolean", False, is_literal=True)
NULL = Value("NULL", "null", is_literal=True)


def is_null(value: Value) -> bool:
    return value.type == "null" and value.is_literal


def truth_of(value: Value) -> object:
    """True, False or None (NULL) for a constant condition; UNKNOWN otherwise."""
    if is_null(value):
        return None
    if value.is_literal and value.type == "boolean":
        return bool(value.literal)
    return UNKNOWN


def error_sql(message: str) -> str:
    return "error(" + literal_sql(message, "string") + ")"
