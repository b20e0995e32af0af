"""The values a Spark filter translates to: DuckDB SQL with the Spark type it computes in.

Every SQL rule of :mod:`zorder.skipping.functions` answers a :class:`Value` (its SQL, its
Spark type, whether it is a literal and whether some row may make it raise), and agrees with
the others on types through this module: Spark's type names as DuckDB types, the common type
two operands are brought to (ANSI widening, decimal precision and scale), literals as SQL,
and the constant conditions (TRUE, FALSE, NULL) Spark's optimizer simplifies before a row.
"""

from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import dataclass
from typing import Any

from zorder.skipping.coercion import (
    FLOAT_TYPES,
    INTEGER_TYPES,
    decimal_shape,
    decimal_shapes,
    is_numeric,
    wider_decimal,
    wider_type,
)

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
    # A constant's kind as Spark's analyzer types it against a decimal, as the folder's
    # Operand.literal says: written as a literal (its digits), computed (its type), or either.
    written: bool | None = True
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


def decimal_shapes_of(value: Value) -> list[tuple[int, int]]:
    """The decimal types Spark may see a number as where it meets a decimal (an integer
    literal as written: its digits), as the folder's arithmetic sees its operands."""
    if value.is_literal:
        return decimal_shapes(value.type, value.literal, value.written)
    return decimal_shapes(value.type, None, False)


def one_answer(answers: set[Any], shown: str) -> Any:
    """The one answer whichever way Spark's analyzer types an integer constant; refused
    where the ways part (``5L`` and ``CAST(5 AS BIGINT)`` parse alike)."""
    if len(answers) != 1:
        raise RefusedError(
            f"{shown}: whether an integer is a literal changes the decimal type Spark "
            "computes in (write the literal without a cast)"
        )
    return answers.pop()


def _scale(type_name: str) -> int:
    shape = decimal_shape(type_name)
    assert shape is not None
    return shape[1]


def common_type(left: Value, right: Value, *, digits: bool) -> str | None:
    """The type Spark (ANSI) brings two operands to (:func:`~zorder.skipping.coercion.
    wider_type`, as binding does); ``digits`` types an integer literal met by a decimal by
    its digits, as comparisons and arithmetic do."""
    a, b = left.type, right.type
    if a == b:
        return a
    if a == "null":
        return b
    if b == "null":
        return a
    decimals = decimal_shape(a) is not None or decimal_shape(b) is not None
    exact = is_numeric(a) and is_numeric(b) and not {a, b} & FLOAT_TYPES
    if digits and decimals and exact:
        shapes = [(x, y) for x in decimal_shapes_of(left) for y in decimal_shapes_of(right)]
        wider = [wider_decimal(x, y) for x, y in shapes]
        scale = max(shape[1] for pair in shapes for shape in pair)
        if all(_scale(w) >= scale for w in wider):
            return wider[0]  # every way holds both sides exactly: they compare alike
        return str(one_answer(set(wider), f"a {a} with a {b}"))
    if {a, b} == {"string", "boolean"}:
        return "boolean"  # ANSI's string promotion (binding leaves a boolean column to Spark)
    return wider_type(a, b)


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
