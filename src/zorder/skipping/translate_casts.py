"""CAST and TRY_CAST as an ANSI Spark session computes them, written as DuckDB SQL.

DuckDB's casts mean something else in several places (it rounds a double to an integer
where Spark truncates, reads malformed strings otherwise, writes booleans and dates in
its own words, knows no session zone), so each pair of source and target type Spark
allows is spelled out here, one function per family of target; every other pair is
refused, named. :meth:`zorder.skipping.translator.Translator.cast` decides whether a
cast is folded, and whether it may raise; this module writes the SQL of the others.
"""

from __future__ import annotations

from sqlglot import exp

from zorder.skipping.coercion import FLOAT_TYPES, INTEGER_TYPES, decimal_shape
from zorder.skipping.constants import spark_type_name
from zorder.skipping.translate_types import (
    INTEGER_ORDER,
    RefusedError,
    Translating,
    Value,
    error_sql,
    is_numeric,
)


def cast_node(t: Translating, node: exp.Cast) -> Value:
    """``CAST(x AS type)`` or ``TRY_CAST(x AS type)``."""
    target = spark_type_name(node.to)
    if target is None:
        raise RefusedError(f"{node.sql(dialect='spark')} (a cast to {node.to.sql('spark')})")
    inner = t.value(node.this)
    return t.cast(inner, target, safe=bool(node.args.get("safe")))


def cast_may_raise(source: str, target: str) -> bool:
    """Whether an ANSI CAST from ``source`` to ``target`` raises on some value."""
    widening = (
        source in INTEGER_TYPES
        and target in INTEGER_TYPES
        and INTEGER_ORDER.index(source) <= INTEGER_ORDER.index(target)
    )
    return not (widening or (target in ("double", "string", "boolean") and source != "string"))


def cast_sql(
    t: Translating, value: Value, source: str, target: str, duck: str, *, safe: bool
) -> str:
    """The SQL of ``value`` (a ``source``) cast to ``target`` (``duck`` in DuckDB)."""
    sql = value.sql
    written = _to_number(sql, source, target, duck, safe=safe)
    if written is None:
        written = _to_text(sql, source, target, safe=safe)
    if written is None:
        written = _to_datetime(t, sql, source, target)
    if written is None:
        raise RefusedError(f"CAST of a {source} AS {target}")
    return written


def _to_number(sql: str, source: str, target: str, duck: str, *, safe: bool) -> str | None:
    cast = "TRY_CAST" if safe else "CAST"
    numeric_source = is_numeric(source) or source == "boolean"
    if target in INTEGER_TYPES:
        if source in INTEGER_TYPES or source == "boolean":
            return f"{cast}({sql} AS {duck})"
        if source in FLOAT_TYPES or source.startswith("decimal"):
            return f"{cast}(trunc({sql}) AS {duck})"  # Spark truncates; DuckDB rounds
        if source == "string":
            wellformed = f"regexp_full_match({sql}, '[ ]*[+-]?[0-9]+[ ]*')"
            bad = "NULL" if safe else _cast_error(sql, target)
            return (
                f"CASE WHEN {sql} IS NULL THEN NULL WHEN {wellformed} "
                f"THEN {cast}(trim({sql}) AS {duck}) ELSE {bad} END"
            )
    if target == "double" and (numeric_source):
        shape = decimal_shape(source)
        if shape is not None and shape[0] > 15:
            raise RefusedError(
                f"a {source} converted to DOUBLE (above 15 digits DuckDB does not round "
                "as Java does)"
            )
        return f"CAST({sql} AS DOUBLE)"
    if target == "float" and (source in INTEGER_TYPES or source == "boolean"):
        return f"CAST({sql} AS FLOAT)"
    if target.startswith("decimal") and (source in INTEGER_TYPES or source.startswith("decimal")):
        return f"{cast}({sql} AS {duck})"  # overflow raises; HALF_UP rounding, as Spark
    return None


def _to_text(sql: str, source: str, target: str, *, safe: bool) -> str | None:
    if target == "boolean" and (source in INTEGER_TYPES or source.startswith("decimal")):
        return f"({sql} <> 0)"
    if target == "boolean" and source == "string":
        trimmed = f"lower(trim({sql}))"
        bad = "NULL" if safe else error_sql("cannot cast a string to boolean: malformed")
        return (
            f"CASE WHEN {sql} IS NULL THEN NULL "
            f"WHEN {trimmed} IN ('t', 'true', 'y', 'yes', '1') THEN TRUE "
            f"WHEN {trimmed} IN ('f', 'false', 'n', 'no', '0') THEN FALSE ELSE {bad} END"
        )
    if target == "string":
        if source in INTEGER_TYPES:
            return f"CAST({sql} AS VARCHAR)"
        if source == "boolean":
            return f"CASE WHEN {sql} THEN 'true' WHEN NOT {sql} THEN 'false' END"
        if source == "date":
            return f"strftime({sql}, '%Y-%m-%d')"
    return None


def _to_datetime(t: Translating, sql: str, source: str, target: str) -> str | None:
    if target == "date":
        if source == "timestamp":
            return f"CAST({t.local(sql)} AS DATE)"
        if source == "timestamp_ntz":
            return f"CAST({sql} AS DATE)"
    if target == "timestamp_ntz":
        if source == "date":
            return f"CAST({sql} AS TIMESTAMP)"
        if source == "timestamp":
            return t.local(sql)
    if target == "timestamp":
        if source == "date":
            return t.instant(f"CAST({sql} AS TIMESTAMP)")
        if source == "timestamp_ntz":
            return t.instant(sql)
    return None


def _cast_error(sql: str, target: str) -> str:
    """An error naming the value, as Spark's CAST_INVALID_INPUT does."""
    quote = "''"
    return (
        f"error('[CAST_INVALID_INPUT] The value {quote}' || ({sql}) || '{quote} of the type "
        f"STRING cannot be cast to {target.upper()} because it is malformed')"
    )
