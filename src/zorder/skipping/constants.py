"""Constant subexpressions of a filter, evaluated once at planning as Spark evaluates them.

Spark folds every subexpression without a column reference before it plans
a scan (``ConstantFolding``); a filter means the same whether its constants
are spelled as expressions (``date '2024-06-01' - interval '7' day``) or
computed by hand. :func:`constant` gives the :class:`TypedLiteral` such a
subexpression stands for, with the type Spark gives it, or raises
:class:`NotConstantError`: for anything that reads a column, and for what
this module does not compute exactly as Spark does (the subexpression is
then left as written, and the file kept or the filter refused: never a
guess). Everything here follows Spark 4.1 with ANSI mode on (its default):
an expression Spark answers with an error (an overflow, a division by zero,
a malformed date) is not constant here either.

Numbers are computed in :mod:`zorder.skipping.numbers`, dates, timestamps
and intervals in :mod:`zorder.skipping.datetimes`; this module walks the
tree and holds the literals and the casts; the handlers of arithmetic,
dates, strings and logic are in the ``fold_*`` modules, what they share in
:mod:`zorder.skipping.folding`.

The functions of the clock (``current_date()``, ``current_timestamp()``,
``now()``) are read once per query, in the session's zone, as Spark reads
them; they need a :class:`FoldContext` that names both.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable
from typing import Any

from sqlglot import exp

from zorder.skipping import datetimes
from zorder.skipping import fold_dates as dates
from zorder.skipping import fold_logic as logic
from zorder.skipping import fold_numbers as numbers
from zorder.skipping import fold_strings as strings
from zorder.skipping.coercion import (
    INTEGER_TYPES,
    ComputedLiteral,
    InexactError,
    cast_literal,
    decimal_shape,
    number_literal,
    timestamp_text,
)
from zorder.skipping.folding import NULL, FoldContext, NotConstantError
from zorder.skipping.nodes import TypedLiteral
from zorder.skipping.numbers import Operand, negate
from zorder.skipping.zones import SESSION_ZONE, datetimes_zone

__all__ = ["FoldContext", "NotConstantError", "constant", "spark_type_name"]


def constant(node: exp.Expression, context: FoldContext | None = None) -> TypedLiteral | None:
    """The literal a constant subexpression stands for; ``None`` for SQL's NULL.

    Raises :class:`NotConstantError` for anything else.
    """
    try:
        result = _Folder(context or FoldContext()).fold(node, root=True)
    except InexactError as reason:
        raise NotConstantError(str(reason)) from None
    except (OverflowError, ValueError, ArithmeticError) as reason:  # never a guess
        raise NotConstantError(f"{node.sql(dialect='spark')}: {reason}") from None
    if result.value is None:
        return None
    assert result.type is not None
    value = result.value
    if isinstance(value, decimal.Decimal) and value == 0:
        value = abs(value)  # Java's BigDecimal has no negative zero
    if isinstance(value, dt.datetime) and value.tzinfo is not None and value.date() in _EDGE_DAYS:
        # Its instant may lie past Python's years, where Spark's still reach (a TIMESTAMP_NTZ
        # names no instant).
        raise NotConstantError(f"the timestamp {value} at the edge of the years 1 to 9999")
    if result.type in INTEGER_TYPES and not result.literal:
        # Spark's analyzer types an integer expression, unlike a literal, by its type alone.
        return ComputedLiteral(value, result.type, maybe_literal=result.literal is None)
    return TypedLiteral(value, result.type)


_EDGE_DAYS = (dt.date(1, 1, 1), dt.date(9999, 12, 31))


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


class _Folder:
    """The walk of a constant subexpression: each node to its handler (the literals and
    casts here, the other families in the ``fold_*`` modules), in the context's zone."""

    def __init__(self, context: FoldContext) -> None:
        self.context = context
        self.zone = context.zone

    def fold(self, node: exp.Expression, *, root: bool = False) -> Operand:
        handler = _HANDLERS.get(type(node))
        if handler is None:
            raise NotConstantError(node.sql(dialect="spark"))
        result = handler(self, node)
        if result.type is None and not root:
            # A NULL whose type Spark picks from context: what uses it may be an error there.
            raise InexactError(f"{node.sql(dialect='spark')} is a NULL of a type not known here")
        return result

    def args(self, node: exp.Expression, *names: str) -> list[Operand | None]:
        return [None if node.args.get(n) is None else self.fold(node.args[n]) for n in names]

    # -- leaves --------------------------------------------------------------------------

    def paren(self, node: exp.Paren) -> Operand:
        return self.fold(node.this)

    def null(self, node: exp.Null) -> Operand:
        return NULL

    def boolean(self, node: exp.Boolean) -> Operand:
        return Operand(bool(node.this), "boolean")

    def literal(self, node: exp.Literal) -> Operand:
        if node.is_string:
            return Operand(str(node.this), "string")
        return _number(str(node.this))

    def neg(self, node: exp.Neg) -> Operand:
        inner_node = node.this
        if isinstance(inner_node, exp.Literal) and not inner_node.is_string:
            # Spark's parser reads the sign into the literal: -2147483648 is an int.
            return _number("-" + str(inner_node.this))
        inner = self.fold(inner_node)
        if datetimes.is_interval(inner.type):
            return datetimes.negate_interval(inner)
        literal = None if inner.literal is None else False
        return negate(inner, literal=literal)

    def interval(self, node: exp.Interval) -> Operand:
        value, unit = node.this, node.args.get("unit")
        if not isinstance(value, exp.Literal) or unit is None:
            raise InexactError(f"the interval {node.sql(dialect='spark')}")
        if isinstance(unit, exp.IntervalSpan):
            return datetimes.interval_literal(
                str(value.this), str(unit.this.name), str(unit.expression.name)
            )
        return datetimes.interval_literal(str(value.this), str(unit.name))

    # -- casts ---------------------------------------------------------------------------

    def cast(self, node: exp.Cast) -> Operand:
        inner = self.fold(node.this)
        target = spark_type_name(node.to)
        if target is None:
            raise NotConstantError(node.sql(dialect="spark"))
        if inner.value is None:
            return Operand(None, target)
        if inner.type in INTEGER_TYPES and inner.literal and target in ("bigint", "smallint"):
            # 5L and CAST(5 AS BIGINT) parse alike; Spark types only the first by its digits.
            return Operand(self._cast(inner, target), target, None)
        return Operand(self._cast(inner, target), target)

    def _cast(self, inner: Operand, target: str) -> Any:
        source, value = inner.type, inner.value
        assert source is not None
        if source == target:
            return value
        if target == "string":
            return self.text(inner)
        if target == "date" and source in ("timestamp", "timestamp_ntz"):
            return datetimes.to_date(inner, self.zone)
        if target in ("timestamp", "timestamp_ntz"):
            return self._temporal_cast(inner, target)
        if datetimes.is_interval(source) or source in ("timestamp", "timestamp_ntz", "date"):
            raise InexactError(f"CAST of a {source} AS {target}")
        return cast_literal(value, source, target)

    def _temporal_cast(self, inner: Operand, target: str) -> dt.datetime:
        """A TIMESTAMP'..' or TIMESTAMP_NTZ'..' literal, or a cast of a string, a date or a
        timestamp to one; a zone-less TIMESTAMP carries :data:`SESSION_ZONE` until binding."""
        source, value = inner.type, inner.value
        if source == "date":
            midnight = dt.datetime(value.year, value.month, value.day)
            if target == "timestamp_ntz":
                return midnight
            instant = datetimes.to_timestamp(inner, self.zone) if self.zone else None
            return (
                datetimes.zoned(instant, self.zone)
                if instant
                else midnight.replace(tzinfo=SESSION_ZONE)
            )
        if source == "timestamp_ntz":  # the wall clock, read in the session's zone
            return value.replace(tzinfo=SESSION_ZONE)  # type: ignore[no-any-return]
        if source == "timestamp":  # the wall clock of the session's zone
            if self.zone is None:
                raise InexactError("a timestamp as timestamp_ntz needs the session's zone")
            wall = datetimes.to_timestamp(inner, self.zone)
            assert wall is not None
            return wall.astimezone(self.zone).replace(tzinfo=None)
        if source != "string":
            raise InexactError(f"CAST of a {source} AS {target}")
        parsed = timestamp_text(value)
        if target == "timestamp_ntz":
            if parsed.tzinfo is not None:
                raise InexactError(f"TIMESTAMP_NTZ of the zoned {value!r}")
            return parsed
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=SESSION_ZONE)

    def text(self, inner: Operand) -> str:
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
                instant = datetimes.to_timestamp(inner, self.zone)
                assert instant is not None
                wall = instant.astimezone(datetimes_zone(self.zone)).replace(tzinfo=None)
            if wall.year < 1000:
                raise InexactError(f"the timestamp {wall} as a string")
            text = wall.strftime("%Y-%m-%d %H:%M:%S")
            if wall.microsecond:
                text += f".{wall.microsecond:06d}".rstrip("0")
            return str(text)
        raise InexactError(f"a {source} as a string (Java's formatting)")

    # -- functions sqlglot does not know -------------------------------------------------

    def anonymous(self, node: exp.Anonymous) -> Operand:
        name = str(node.this).lower()
        if name == "now" and not node.expressions:
            return dates.current_timestamp(self)
        operands = [self.fold(e) for e in node.expressions]
        if name == "pmod" and len(operands) == 2:
            return numbers.pmod(*operands)
        if name == "make_date" and len(operands) == 3:
            return dates.make_date(*operands)
        raise NotConstantError(node.sql(dialect="spark"))


def _number(text: str) -> Operand:
    try:
        value, type_name = number_literal(text)
    except ValueError:  # the parser refuses such text before it gets here
        raise NotConstantError(text) from None
    if decimal_shape(type_name) is not None:  # an integer too wide for a bigint
        value = decimal.Decimal(value)
    return Operand(value, type_name, literal=True)


_HANDLERS: dict[type[exp.Expression], Callable[[_Folder, Any], Operand]] = {
    exp.Paren: _Folder.paren,
    exp.Null: _Folder.null,
    exp.Boolean: _Folder.boolean,
    exp.Literal: _Folder.literal,
    exp.Neg: _Folder.neg,
    **dict.fromkeys(numbers.ARITHMETIC, numbers.binary),
    exp.Abs: numbers.abs_,
    exp.Interval: _Folder.interval,
    exp.Cast: _Folder.cast,
    exp.TryCast: _Folder.cast,
    exp.TsOrDsAdd: dates.date_add,
    exp.AddMonths: dates.add_months,
    exp.TsOrDsToDate: dates.to_date,
    exp.LastDay: dates.last_day,
    exp.NextDay: dates.next_day,
    exp.DateTrunc: dates.trunc,
    exp.TimestampTrunc: dates.date_trunc,
    exp.CurrentDate: dates.current_date,
    exp.CurrentTimestamp: dates.current_timestamp,
    exp.CurrentTimezone: dates.current_timezone,
    exp.Concat: strings.concat,
    exp.DPipe: strings.concat,
    exp.Upper: strings.case_change,
    exp.Lower: strings.case_change,
    exp.Substring: strings.substring,
    exp.Left: strings.left_right,
    exp.Right: strings.left_right,
    exp.Trim: strings.trim,
    exp.Length: strings.length,
    exp.Pad: strings.pad,
    exp.Replace: strings.replace,
    exp.Coalesce: logic.coalesce,
    exp.Nullif: logic.nullif,
    exp.If: logic.if_,
    exp.Case: logic.case,
    **dict.fromkeys(logic.COMPARISONS, logic.comparison),
    exp.NullSafeEQ: logic.null_safe_eq,
    exp.Is: logic.is_null,
    exp.Not: logic.not_,
    exp.And: logic.and_or,
    exp.Or: logic.and_or,
    exp.Greatest: logic.extreme,
    exp.Least: logic.extreme,
    exp.Round: numbers.round_,
    exp.Floor: numbers.floor_ceil,
    exp.Ceil: numbers.floor_ceil,
    exp.Anonymous: _Folder.anonymous,
}
