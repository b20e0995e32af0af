"""CAST and TRY_CAST as an ANSI Spark session computes them: each pair of types once.

A cast of a constant is computed here in Python (:func:`cast_value`, and
:func:`text_of`, how Spark writes a value as a string, which the string functions cast
their arguments with); a cast of a column is written as DuckDB SQL (:func:`cast_sql`,
and :func:`cast_to`, which every SQL rule brings its operands to a type with). DuckDB's
own casts mean something else in several places (it rounds a double to an integer where
Spark truncates, reads malformed strings otherwise, writes booleans and dates in its own
words, knows no session zone), so each pair of source and target type Spark allows is
spelled out, one function per family of target; every other pair is refused, named.
:func:`cast_may_raise` says which casts raise on some value in ANSI mode (read by
:mod:`zorder.skipping.ansi` too). A zone-less TIMESTAMP literal carries
:data:`~zorder.skipping.zones.SESSION_ZONE` until binding.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlglot import exp

from zorder.skipping import datetimes
from zorder.skipping.coercion import (
    FLOAT_TYPES,
    INTEGER_ORDER,
    INTEGER_TYPES,
    InexactError,
    cast_literal,
    decimal_shape,
    is_numeric,
    timestamp_text,
)
from zorder.skipping.numbers import Operand
from zorder.skipping.rules import (
    Classifying,
    DiffersError,
    Folding,
    Function,
    NotConstantError,
    Translating,
    Typed,
)
from zorder.skipping.sql_values import (
    RefusedError,
    Value,
    duck_type,
    error_sql,
    literal_sql,
)
from zorder.skipping.zones import SESSION_ZONE, datetimes_zone


def spark_type_name(data_type: exp.DataType) -> str | None:
    """Spark's name of a type as sqlglot parsed it (``decimal(10,0)`` for a bare DECIMAL);
    None for types binding does not compare (VARCHAR(n), nested types, intervals)."""
    if data_type.this == exp.DataType.Type.DECIMAL:
        params = [int(str(p.this.this)) for p in data_type.expressions]
        precision, scale = (*params, 10, 0)[:2] if len(params) != 1 else (params[0], 0)
        return f"decimal({precision},{scale})"
    return _TYPE_NAMES.get(data_type.this)


_TYPE_NAMES = {
    exp.DataType.Type.TINYINT: "tinyint",
    exp.DataType.Type.SMALLINT: "smallint",
    exp.DataType.Type.INT: "int",
    exp.DataType.Type.BIGINT: "bigint",
    exp.DataType.Type.FLOAT: "float",
    exp.DataType.Type.DOUBLE: "double",
    exp.DataType.Type.TEXT: "string",
    exp.DataType.Type.BOOLEAN: "boolean",
    exp.DataType.Type.DATE: "date",
    exp.DataType.Type.TIMESTAMP: "timestamp",
    exp.DataType.Type.TIMESTAMPLTZ: "timestamp",
    exp.DataType.Type.TIMESTAMPTZ: "timestamp",
    exp.DataType.Type.TIMESTAMPNTZ: "timestamp_ntz",
}


def cast_value(f: Folding, node: exp.Cast) -> Operand:
    inner = f.fold(node.this)
    target = spark_type_name(node.to)
    if target is None:
        raise NotConstantError(node.sql(dialect="spark"))
    if inner.value is None:
        return Operand(None, target)
    if inner.type in INTEGER_TYPES and inner.literal and target in ("bigint", "smallint"):
        # 5L and CAST(5 AS BIGINT) parse alike; Spark types only the first by its digits.
        return Operand(_cast(inner, target, f.zone), target, None)
    literal_text = isinstance(node.this, exp.Literal) and node.this.is_string
    if literal_text and target.startswith("decimal("):
        # 5BD and CAST('5' AS DECIMAL(1,0)) parse alike; Spark reads only the first as a
        # literal (which its DecimalPrecision folds a comparison with, see logic._beyond_long).
        return Operand(_cast(inner, target, f.zone), target, None)
    return Operand(_cast(inner, target, f.zone), target)


def _cast(inner: Operand, target: str, zone: dt.tzinfo | None) -> Any:
    source, value = inner.type, inner.value
    assert source is not None
    if source == target:
        return value
    if target == "string":
        return text_of(inner, zone)
    if target == "date" and source in ("timestamp", "timestamp_ntz"):
        return datetimes.to_date(inner, zone)
    if target in ("timestamp", "timestamp_ntz"):
        return _temporal(inner, target, zone)
    if datetimes.is_interval(source) or source in ("timestamp", "timestamp_ntz", "date"):
        raise InexactError(f"CAST of a {source} AS {target}")
    return cast_literal(value, source, target)


def _temporal(inner: Operand, target: str, zone: dt.tzinfo | None) -> dt.datetime:
    """A TIMESTAMP'..' or TIMESTAMP_NTZ'..' literal, or a cast of a string, a date or a
    timestamp to one; a zone-less TIMESTAMP carries :data:`SESSION_ZONE` until binding."""
    source, value = inner.type, inner.value
    if source == "date":
        midnight = dt.datetime(value.year, value.month, value.day)
        if target == "timestamp_ntz":
            return midnight
        instant = datetimes.to_timestamp(inner, zone) if zone else None
        return datetimes.zoned(instant, zone) if instant else midnight.replace(tzinfo=SESSION_ZONE)
    if source == "timestamp_ntz":  # the wall clock, read in the session's zone
        return value.replace(tzinfo=SESSION_ZONE)  # type: ignore[no-any-return]
    if source == "timestamp":  # the wall clock of the session's zone
        if zone is None:
            raise InexactError("a timestamp as timestamp_ntz needs the session's zone")
        wall = datetimes.to_timestamp(inner, zone)
        assert wall is not None
        return wall.astimezone(zone).replace(tzinfo=None)
    if source != "string":
        raise InexactError(f"CAST of a {source} AS {target}")
    parsed = timestamp_text(value)
    if target == "timestamp_ntz":  # a zone named in the string is dropped (Spark 4.1)
        return parsed.replace(tzinfo=None)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=SESSION_ZONE)


def text_of(inner: Operand, zone: dt.tzinfo | None) -> str:
    """``CAST(x AS STRING)`` as Spark writes ``x``."""
    source, value = inner.type, inner.value
    if source == "string":
        return str(value)
    if source == "boolean":
        return "true" if value else "false"
    if source in INTEGER_TYPES:
        return str(int(value))
    if source is not None and source.startswith("decimal("):
        if value == 0:
            value = abs(value)  # Java's BigDecimal has no negative zero
        elif value.adjusted() < -6:
            raise InexactError(f"{value} as a string (plain or scientific in Spark)")
        return format(value, "f")
    if source == "date":
        if value.year < 1000:
            raise InexactError(f"the date {value} as a string")
        return str(value.isoformat())
    if source in ("timestamp", "timestamp_ntz"):
        wall = value
        if source == "timestamp":
            instant = datetimes.to_timestamp(inner, zone)
            assert instant is not None
            wall = instant.astimezone(datetimes_zone(zone)).replace(tzinfo=None)
        if wall.year < 1000:
            raise InexactError(f"the timestamp {wall} as a string")
        text = wall.strftime("%Y-%m-%d %H:%M:%S")
        if wall.microsecond:
            text += f".{wall.microsecond:06d}".rstrip("0")
        return str(text)
    raise InexactError(f"a {source} as a string (Java's formatting)")


def cast_sql(t: Translating, node: exp.Cast) -> Value:
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


def _cast_sql(
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


def cast_to(t: Translating, value: Value, target: str, *, safe: bool = False) -> Value:
    """``CAST(value AS target)`` as ANSI Spark computes it (``safe``: TRY_CAST)."""
    source = value.type
    if source == target:
        return value
    duck = duck_type(target)
    if source == "null":
        return Value(f"CAST(NULL AS {duck})", target)
    if (
        value.is_literal
        and source not in ("timestamp",)
        and target
        not in (
            "timestamp",
            "timestamp_ntz",
        )
    ):
        try:
            converted = cast_literal(value.literal, source, target)
        except InexactError:
            pass
        else:
            return Value(literal_sql(converted, target), target, converted, True)
    sql = _cast_sql(t, value, source, target, duck, safe=safe)
    may_raise = value.raises or (not safe and cast_may_raise(source, target))
    if value.is_literal and may_raise:
        t.constants.append(sql)  # Spark folds it before reading a row, raising if it must
    return Value(sql, target, raises=may_raise)


def cast_ansi(c: Classifying, node: exp.Cast) -> Typed:
    """A cast an ANSI session never refuses (or a TRY_CAST) means the same with ANSI off."""
    target = spark_type_name(node.to)
    source = c.operand(node.this).type
    if target is None or source is None:
        raise DiffersError(node)
    if not node.args.get("safe") and cast_may_raise(source, target):
        raise DiffersError(node)
    return Typed(target)


_CAST = Function(cast_value, cast_sql, ansi=cast_ansi)
FUNCTIONS: dict[type[exp.Expression] | str, Function] = {exp.Cast: _CAST, exp.TryCast: _CAST}
