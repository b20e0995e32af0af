"""The translator of a Spark filter to DuckDB SQL: the tree walked, each node to its handler.

:func:`zorder.skipping.translate.translate` hands the parsed filter to a
:class:`Translator`, which folds the constant subtrees as Spark does, resolves the
columns, reads intervals, casts between types and decides what is a condition; every
other node goes, through the dispatch table at the end of this module, to its family's
handler: logic and comparisons, strings, numbers, conditionals, dates and times, casts
(the ``translate_*`` modules). Nodes outside the table are refused, named.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from typing import Any

from sqlglot import exp

from zorder.errors import ColumnNotFoundError
from zorder.skipping import translate_casts as casts
from zorder.skipping import translate_conditionals as conditionals
from zorder.skipping import translate_dates as dates
from zorder.skipping import translate_logic as logic
from zorder.skipping import translate_numbers as numbers
from zorder.skipping import translate_strings as strings
from zorder.skipping.coercion import InexactError, cast_literal, decimal_shape
from zorder.skipping.constants import FoldContext, NotConstantError, constant
from zorder.skipping.pushdown import quoted_name
from zorder.skipping.translate_types import (
    DAYS,
    DUCK_TYPES,
    FALSE,
    MICROS,
    MONTHS,
    RefusedError,
    Value,
    duck_type,
    literal_sql,
    truth_of,
)
from zorder.skipping.zones import SESSION_ZONE, is_utc, session_zone

_NONDETERMINISTIC = (
    "rand",
    "randn",
    "random",
    "uuid",
    "shuffle",
    "monotonically_increasing_id",
    "spark_partition_id",
    "input_file_name",
    "current_user",
    "randstr",
    "uniform",
    "try_reflect",
    "reflect",
)


_INTERVAL_UNITS = {
    "YEAR": (MONTHS, 12),
    "MONTH": (MONTHS, 1),
    "WEEK": (DAYS, 7),
    "DAY": (DAYS, 1),
    "HOUR": (MICROS, 3_600_000_000),
    "MINUTE": (MICROS, 60_000_000),
    "SECOND": (MICROS, 1_000_000),
}


class Translator:
    """One filter's translation: the table's columns, the session zone, and what the
    translated SQL reads (``read``) and must evaluate before a row (``constants``)."""

    def __init__(self, columns: Mapping[str, str], time_zone: str, context: FoldContext) -> None:
        self.columns = columns
        self.time_zone = time_zone
        self.zone = session_zone(time_zone)
        self.context = context
        self.read: set[str] = set()
        self.constants: list[str] = []
        self._lowered = {name.lower(): name for name in columns}

    # -- zones ---------------------------------------------------------------------------

    def fixed_offset(self) -> dt.timedelta | None:
        """The session zone's offset when it never changes (UTC, +05:30); None for a region."""
        if is_utc(self.time_zone):
            return dt.timedelta(0)
        if isinstance(self.zone, dt.timezone):
            return self.zone.utcoffset(None)
        return None

    def local(self, sql: str) -> str:
        """A TIMESTAMPTZ's wall-clock time in the session zone, as a TIMESTAMP."""
        offset = self.fixed_offset()
        if offset is None:
            return f"timezone('{self.time_zone.strip()}', {sql})"
        shift = int(offset.total_seconds())
        local = f"timezone('UTC', {sql})"
        return local if shift == 0 else f"({local} + INTERVAL ({shift}) SECOND)"

    def instant(self, sql: str) -> str:
        """A zone-less TIMESTAMP read in the session zone, as a TIMESTAMPTZ."""
        offset = self.fixed_offset()
        if offset is None:
            return f"zorder_instant({sql}, '{self.time_zone.strip()}')"
        shift = int(offset.total_seconds())
        shifted = sql if shift == 0 else f"({sql} - INTERVAL ({shift}) SECOND)"
        return f"timezone('UTC', {shifted})"

    # -- entry -----------------------------------------------------------------------------

    def value(self, node: exp.Expression) -> Value:
        while isinstance(node, exp.Paren):
            node = node.this
        if not isinstance(node, exp.Column | exp.Interval) and node.find(exp.Column) is None:
            folded = self._folded(node)
            if folded is not None:
                return folded
        method = _DISPATCH.get(type(node))
        try:
            return self._other(node) if method is None else method(self, node)
        except RefusedError as refused:
            if not refused.located and method in _LOCATING:
                refused.what = f"{refused.what} in {node.sql(dialect='spark')}"
                refused.located = True
            raise

    def _folded(self, node: exp.Expression) -> Value | None:
        if self._nondeterministic(node) is not None:
            return None
        try:
            literal = constant(node, self.context)
        except NotConstantError:
            return None
        if literal is None:
            return Value("NULL", "null", is_literal=True)
        value, type_name = literal.value, literal.type
        if isinstance(value, dt.datetime) and value.tzinfo is SESSION_ZONE:
            value = value.replace(tzinfo=self.zone, fold=0)
        if type_name not in DUCK_TYPES and decimal_shape(type_name) is None:
            return None
        return Value(literal_sql(value, type_name), type_name, value, is_literal=True)

    @staticmethod
    def _nondeterministic(node: exp.Expression) -> str | None:
        for inner in node.walk():
            assert isinstance(inner, exp.Expression)
            name = _function_name(inner)
            if name in _NONDETERMINISTIC:
                return name
        return None

    def _other(self, node: exp.Expression) -> Value:
        name = _function_name(node)
        shown = node.sql(dialect="spark")
        if name in _NONDETERMINISTIC:
            raise RefusedError(f"the non-deterministic function {name} ({shown})")
        if isinstance(node, exp.Subquery | exp.Select | exp.Exists):
            raise RefusedError(f"a subquery ({shown})")
        if isinstance(node, exp.Anonymous):
            handler = _ANONYMOUS.get(name)
            if handler is not None:
                return handler(self, node)
            raise RefusedError(f"the function {name} ({shown})")
        raise RefusedError(f"{shown} (no exact in-process translation of {type(node).__name__})")

    # -- leaves ----------------------------------------------------------------------------

    def column(self, node: exp.Column) -> Value:
        if node.table:
            raise RefusedError(f"the qualified name {node.sql(dialect='spark')}")
        name = str(node.name)
        resolved = name if name in self.columns else self._lowered.get(name.lower())
        if resolved is None:
            raise ColumnNotFoundError(
                f"unknown column {name!r} in the filter; the table's columns: "
                f"{', '.join(self.columns)}"
            )
        type_name = self.columns[resolved]
        if type_name not in DUCK_TYPES and decimal_shape(type_name) is None:
            raise RefusedError(f"the {type_name} column {resolved}")
        self.read.add(resolved)
        return Value(quoted_name(resolved), type_name)

    def interval(self, node: exp.Interval) -> Value:
        unit = node.args.get("unit")
        text = node.this
        if not isinstance(unit, exp.Var) or not isinstance(text, exp.Literal):
            raise RefusedError(f"the interval {node.sql(dialect='spark')} (only one unit)")
        kind = _INTERVAL_UNITS.get(str(unit.this).upper().rstrip("S"))
        raw = str(text.this).strip()
        if kind is None or not re.fullmatch(r"[+-]?\d{1,9}", raw):
            raise RefusedError(f"the interval {node.sql(dialect='spark')}")
        amount = int(raw) * kind[1]
        return Value(str(amount), kind[0], amount, is_literal=True)

    # -- casts -----------------------------------------------------------------------------

    def cast(self, value: Value, target: str, *, safe: bool = False) -> Value:
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
        sql = casts.cast_sql(self, value, source, target, duck, safe=safe)
        may_raise = value.raises or (not safe and casts.cast_may_raise(source, target))
        if value.is_literal and may_raise:
            self.constants.append(sql)  # Spark folds it before reading a row, raising if it must
        return Value(sql, target, raises=may_raise)

    def boolean(self, node: exp.Expression) -> Value:
        value = self.value(node)
        if value.type == "null":
            return value if value.is_literal else Value("CAST(NULL AS BOOLEAN)", "boolean")
        if value.type != "boolean":
            raise RefusedError(f"{node.sql(dialect='spark')} used as a condition is a {value.type}")
        return value

    def condition(self, node: exp.Expression, predicate: bool) -> Value:
        """``node`` as a condition; in ``predicate`` position (the filter itself and the
        operands of its ANDs and ORs) a NULL literal is FALSE, as Spark's optimizer makes it
        (ReplaceNullWithFalseInPredicate) before it evaluates a row."""
        while isinstance(node, exp.Paren):
            node = node.this
        if isinstance(node, exp.And | exp.Or):
            return logic.junction(self, node, predicate)
        value = self.boolean(node)
        if predicate and (truth_of(value) is None or value.false_in_predicate):
            return FALSE
        return value

    def integer(self, node: exp.Expression | None, what: str) -> Value:
        """``node`` where Spark takes an int (``what`` names the argument)."""
        if node is None:
            raise RefusedError(f"{what} missing")
        value = self.value(node)
        if value.type == "null":
            return Value("CAST(NULL AS INTEGER)", "int")
        if value.type not in ("tinyint", "smallint", "int"):
            raise RefusedError(f"{what} of type {value.type} (Spark takes an int)")
        return value


def _function_name(node: exp.Expression) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    if isinstance(node, exp.Func):
        return str(node.sql_name()).lower()
    return ""


_DISPATCH: dict[type[exp.Expression], Callable[[Translator, Any], Value]] = {
    exp.Column: Translator.column,
    exp.Interval: Translator.interval,
    exp.And: logic.and_,
    exp.Or: logic.or_,
    exp.Not: logic.not_,
    exp.Is: logic.is_,
    **dict.fromkeys(logic.COMPARISONS, logic.compare),
    exp.NullSafeNEQ: logic.distinct,
    exp.Between: logic.between,
    exp.In: logic.in_,
    exp.Like: strings.like,
    exp.ILike: strings.like,
    exp.Escape: strings.like,
    exp.RegexpLike: strings.rlike,
    exp.StartsWith: strings.starts_with,
    exp.EndsWith: strings.ends_with,
    exp.Contains: strings.contains,
    exp.Upper: strings.case_map,
    exp.Lower: strings.case_map,
    exp.Length: strings.length,
    exp.Substring: strings.substring,
    exp.Concat: strings.concat,
    exp.DPipe: strings.concat,
    exp.Add: numbers.add_sub,
    exp.Sub: numbers.add_sub,
    exp.Mul: numbers.mul,
    exp.Div: numbers.div,
    exp.IntDiv: numbers.int_div,
    exp.Mod: numbers.mod,
    exp.Neg: numbers.neg,
    exp.Abs: numbers.abs_,
    exp.Coalesce: conditionals.coalesce,
    exp.If: conditionals.if_,
    exp.Case: conditionals.case,
    exp.Nullif: conditionals.nullif,
    exp.IsNan: conditionals.is_nan,
    exp.TsOrDsToDate: dates.to_date,
    **dict.fromkeys(dates.DATE_PARTS, dates.date_part),
    **dict.fromkeys(dates.TIME_PARTS, dates.time_part),
    exp.DateDiff: dates.date_diff,
    exp.TsOrDsAdd: dates.date_add,
    exp.AddMonths: dates.add_months,
    exp.Cast: casts.cast_node,
    exp.TryCast: casts.cast_node,
}
_ANONYMOUS: dict[str, Callable[[Translator, exp.Anonymous], Value]] = {
    "isnull": conditionals.is_null_function,
    "isnotnull": conditionals.is_null_function,
}
# The nodes whose SQL names where a refusal stands (the smallest boolean around it).
_LOCATING = {
    logic.compare,
    logic.distinct,
    logic.between,
    logic.in_,
    strings.like,
    strings.rlike,
    logic.is_,
}
