"""What Spark raises while it evaluates a user's filter on data, as zorder's error.

Spark computes a filter in ANSI mode: ``dst_port = 'abc'`` on an int column
is a cast of 'abc' to int, which fails on the first row it meets
(``CAST_INVALID_INPUT``), as a division by zero or an overflow does. That is
the user's filter meeting the user's data, not a bug: it is reported as a
:class:`~zorder.errors.FilterEvaluationError` naming the filter and Spark's
own words, as the in-process engine reports the same filter.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from zorder.errors import FilterEvaluationError

__all__ = ["filter_failures"]

# Spark's error conditions (their first part) for a value a filter's expression cannot
# compute: a cast, arithmetic, an index, a date out of range.
_DATA_CONDITIONS = frozenset(
    {
        "CAST_INVALID_INPUT",
        "CAST_OVERFLOW",
        "CAST_OVERFLOW_IN_TABLE_INSERT",
        "DIVIDE_BY_ZERO",
        "INTERVAL_DIVIDED_BY_ZERO",
        "ARITHMETIC_OVERFLOW",
        "NUMERIC_VALUE_OUT_OF_RANGE",
        "INVALID_ARRAY_INDEX",
        "INVALID_ARRAY_INDEX_IN_ELEMENT_AT",
        "DATETIME_OVERFLOW",
        "DATETIME_FIELD_OUT_OF_BOUNDS",
        "INVALID_FRACTION_OF_SECOND",
        "CANNOT_PARSE_TIMESTAMP",
        "INVALID_REGEXP_REPLACE",
        "INVALID_PARAMETER_VALUE",
    }
)


@contextmanager
def filter_failures(where: str) -> Iterator[None]:
    """Spark's failures to compute ``where`` on a row, raised meanwhile, as
    :class:`FilterEvaluationError`; anything else as it was."""
    from pyspark.errors import PySparkException

    try:
        yield
    except PySparkException as error:
        condition = (error.getCondition() or "").split(".")[0]
        if condition not in _DATA_CONDITIONS:
            raise
        said = str(error).strip().splitlines()
        raise FilterEvaluationError(
            f"Spark cannot evaluate the filter {where!r} on the table's rows: "
            f"{said[0] if said else condition}"
        ) from None
