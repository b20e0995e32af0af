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
tree, and holds the casts, the string functions and the conditionals.

The functions of the clock (``current_date()``, ``current_timestamp()``,
``now()``) are read once per query, in the session's zone, as Spark reads
them; they need a :class:`FoldContext` that names both.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from sqlglot import exp

from zorder.skipping import datetimes
from zorder.skipping.coercion import (
    FLOAT_TYPES,
    INTEGER_TYPES,
    MAX_DECIMAL_PRECISION,
    ComputedLiteral,
    InexactError,
    cast_literal,
    decimal_shape,
    fit_decimal,
    number_literal,
    timestamp_text,
)
from zorder.skipping.nodes import TypedLiteral
from zorder.skipping.numbers import Operand, absolute, arithmetic, is_numeric, negate, to_double
from zorder.skipping.zones import SESSION_ZONE, datetimes_zone

__all__ = ["FoldContext", "NotConstantError", "constant", "spark_type_name"]


class NotConstantError(Exception):
    """The subexpression reads a column, or is not computed here exactly as Spark would."""


@dataclass(frozen=True)
class FoldContext:
    """What a constant may depend on besides its text: the session's zone and the query's
    instant (``now`` is zoned, UTC or not). ``None`` leaves what needs them unfolded.
    ``zone_name`` is the session's ``spark.sql.session.timeZone`` as set (what
    ``current_timezone()`` answers)."""

    zone: dt.tzinfo | None = None
    now: dt.datetime | None = None
    zone_name: str | None = None


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

_ARITHMETIC: dict[type[exp.Expression], str] = {
    exp.Add: "+",
    exp.Sub: "-",
    exp.Mul: "*",
    exp.Div: "/",
    exp.IntDiv: "div",
    exp.Mod: "%",
}
_COMPARISONS: dict[type[exp.Expression], Callable[[int], bool]] = {
    exp.EQ: lambda c: c == 0,
    exp.NEQ: lambda c: c != 0,
    exp.LT: lambda c: c < 0,
    exp.LTE: lambda c: c <= 0,
    exp.GT: lambda c: c > 0,
    exp.GTE: lambda c: c >= 0,
}
_NULL = Operand(None, "void")
_INT_MAX = (1 << 31) - 1


class _Folder:
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

    def _args(self, node: exp.Expression, *names: str) -> list[Operand | None]:
        return [None if node.args.get(n) is None else self.fold(node.args[n]) for n in names]

    # -- leaves --------------------------------------------------------------------------

    def paren(self, node: exp.Paren) -> Operand:
        return self.fold(node.this)

    def null(self, node: exp.Null) -> Operand:
        return _NULL

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

    # -- arithmetic ----------------------------------------------------------------------

    def binary(self, node: exp.Expression) -> Operand:
        op = _ARITHMETIC[type(node)]
        left, right = self.fold(node.this), self.fold(node.expression)
        temporal = ("date", "timestamp", "timestamp_ntz")
        if op in "+-" and (
            left.type in temporal
            or right.type in temporal
            or datetimes.is_interval(left.type)
            or datetimes.is_interval(right.type)
        ):
            if left.type == "void" or right.type == "void":
                return Operand(None, None)  # NULL, of a type Spark picks by the other side
            return datetimes.temporal_arithmetic(op, left, right, self.zone)
        return arithmetic(op, left, right)

    def pmod(self, left: Operand, right: Operand) -> Operand:
        return arithmetic("pmod", left, right)

    def abs_(self, node: exp.Abs) -> Operand:
        return absolute(self.fold(node.this))

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
            return self._text(inner)
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

    def _text(self, inner: Operand) -> str:
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

    # -- dates and times -----------------------------------------------------------------

    def date_add(self, node: exp.TsOrDsAdd) -> Operand:
        unit = node.args.get("unit")
        if unit is not None and str(unit.name).upper() != "DAY":
            raise InexactError(f"date_add by {unit.name}")
        start, days = self.fold(node.this), self.fold(node.expression)
        return datetimes.date_add(start, days, 1, self.zone)

    def add_months(self, node: exp.AddMonths) -> Operand:
        return datetimes.add_months(self.fold(node.this), self.fold(node.expression), self.zone)

    def to_date(self, node: exp.TsOrDsToDate) -> Operand:
        inner = self.fold(node.this)
        pattern = node.args.get("format")
        if pattern is not None:
            # sqlglot's spelling of 'yyyy-MM-dd': the one format read here (strictly).
            if not (isinstance(pattern, exp.Literal) and pattern.this == _YYYY_MM_DD):
                raise InexactError(f"to_date with the format {pattern.sql(dialect='spark')}")
            if inner.type not in ("string", "void"):
                raise InexactError(f"to_date of a {inner.type} with a format")
            if inner.value is not None and not _STRICT_DATE(str(inner.value)):
                raise InexactError(f"to_date({inner.value!r}, 'yyyy-MM-dd')")
        if inner.type == "void":
            return Operand(None, "date")
        return Operand(datetimes.to_date(inner, self.zone), "date")

    def last_day(self, node: exp.LastDay) -> Operand:
        if node.args.get("unit") is not None:
            raise InexactError("last_day with a unit")
        return datetimes.last_day(self.fold(node.this), self.zone)

    def next_day(self, node: exp.NextDay) -> Operand:
        return datetimes.next_day(self.fold(node.this), self.fold(node.expression), self.zone)

    def trunc(self, node: exp.DateTrunc) -> Operand:
        unit = node.args.get("unit")
        if not isinstance(unit, exp.Literal | exp.Var):
            raise InexactError("trunc to a unit that is not a literal")
        return datetimes.trunc_date(self.fold(node.this), str(unit.name), self.zone)

    def date_trunc(self, node: exp.TimestampTrunc) -> Operand:
        unit = node.args.get("unit")
        if not isinstance(unit, exp.Literal | exp.Var):
            raise InexactError("date_trunc to a unit that is not a literal")
        return datetimes.trunc_timestamp(self.fold(node.this), str(unit.name), self.zone)

    def make_date(self, year: Operand, month: Operand, day: Operand) -> Operand:
        return datetimes.make_date(year, month, day)

    def current_date(self, node: exp.Expression) -> Operand:
        if node.args.get("this") is not None:
            raise InexactError("current_date in a named zone")
        now, zone = self._now()
        return Operand(now.astimezone(zone).date(), "date")

    def current_timestamp(self, node: exp.Expression | None = None) -> Operand:
        now, zone = self._now()
        return Operand(now.astimezone(zone), "timestamp")

    def current_timezone(self, node: exp.Expression) -> Operand:
        if self.context.zone_name is None:
            raise InexactError("current_timezone() needs the session's zone as set")
        return Operand(self.context.zone_name, "string")

    def _now(self) -> tuple[dt.datetime, dt.tzinfo]:
        now, zone = self.context.now, self.zone
        if now is None or zone is None or now.utcoffset() is None:
            raise InexactError("the clock's functions need the query's instant and zone")
        return now, zone

    # -- strings -------------------------------------------------------------------------

    def _string(self, operand: Operand) -> str | None:
        """An argument of a string function, cast to a string as Spark casts it."""
        if operand.value is None:
            return None
        return self._text(operand)

    def concat(self, node: exp.Expression) -> Operand:
        if node.args.get("coalesce"):  # NULLs skipped: not Spark's concat
            raise InexactError("concat that skips NULLs")
        parts = (
            [node.this, node.expression] if isinstance(node, exp.DPipe) else list(node.expressions)
        )
        texts = [self._string(self.fold(p)) for p in parts]
        if any(t is None for t in texts):
            return Operand(None, "string")
        return Operand("".join(t for t in texts if t is not None), "string")

    def case_change(self, node: exp.Upper | exp.Lower) -> Operand:
        text = self._string(self.fold(node.this))
        if text is None:
            return Operand(None, "string")
        if not text.isascii():  # Java's and Python's case mappings differ outside ASCII
            raise InexactError(f"the case of the non-ASCII {text!r}")
        return Operand(text.upper() if isinstance(node, exp.Upper) else text.lower(), "string")

    def _int_arg(self, operand: Operand | None, default: int) -> int | None:
        if operand is None:
            return default
        if operand.type not in INTEGER_TYPES and operand.type != "void":
            raise InexactError(f"a {operand.type} where Spark wants an int")
        if operand.value is None:
            return None
        value = int(operand.value)
        if not -_INT_MAX - 1 <= value <= _INT_MAX:
            raise InexactError(f"{value} as an int: an error in ANSI Spark")
        return value

    def substring(self, node: exp.Substring) -> Operand:
        text_operand, start, length = self._args(node, "this", "start", "length")
        assert text_operand is not None
        text = self._string(text_operand)
        position, count = self._int_arg(start, 1), self._int_arg(length, _INT_MAX)
        if text is None or position is None or count is None:
            return Operand(None, "string")
        return Operand(_substring_sql(text, position, count), "string")

    def left_right(self, node: exp.Left | exp.Right) -> Operand:
        text = self._string(self.fold(node.this))
        count = self._int_arg(self.fold(node.expression), 0)
        if text is None or count is None:
            return Operand(None, "string")
        if count <= 0:
            return Operand("", "string")
        if isinstance(node, exp.Left):
            return Operand(_substring_sql(text, 1, count), "string")
        return Operand(_substring_sql(text, -count, _INT_MAX), "string")

    def trim(self, node: exp.Trim) -> Operand:
        if node.args.get("expression") is not None or node.args.get("collation") is not None:
            # sqlglot gives ltrim(a, b) and TRIM(LEADING b FROM a) the same shape.
            raise InexactError("trim of other characters than spaces")
        text = self._string(self.fold(node.this))
        if text is None:
            return Operand(None, "string")
        position = str(node.args.get("position") or "BOTH").upper()
        if position == "LEADING":
            return Operand(text.lstrip(" "), "string")
        if position == "TRAILING":
            return Operand(text.rstrip(" "), "string")
        return Operand(text.strip(" "), "string")

    def length(self, node: exp.Length) -> Operand:
        operand = self.fold(node.this)
        if operand.type not in ("string", "void"):
            raise InexactError(f"length of a {operand.type}")
        text = self._string(operand)
        return Operand(None if text is None else len(text), "int")

    def pad(self, node: exp.Pad) -> Operand:
        text = self._string(self.fold(node.this))
        width = self._int_arg(self.fold(node.expression), 0)
        fill_node = node.args.get("fill_pattern")
        fill = " " if fill_node is None else self._string(self.fold(fill_node))
        if text is None or width is None or fill is None:
            return Operand(None, "string")
        return Operand(_pad(text, width, fill, left=bool(node.args.get("is_left"))), "string")

    def replace(self, node: exp.Replace) -> Operand:
        source, search, replacement = self._args(node, "this", "expression", "replacement")
        assert source is not None
        assert search is not None
        texts = [self._string(o) if o is not None else "" for o in (source, search, replacement)]
        if any(t is None for t in texts):
            return Operand(None, "string")
        text, old, new = (str(t) for t in texts)
        return Operand(text.replace(old, new) if old else text, "string")

    # -- conditionals and comparisons ----------------------------------------------------

    def coalesce(self, node: exp.Coalesce) -> Operand:
        operands = [self.fold(node.this), *(self.fold(e) for e in node.expressions)]
        common = _common_type([o.type for o in operands])
        chosen = next((o for o in operands if o.value is not None), None)
        return _as_type(chosen, common)

    def nullif(self, node: exp.Nullif) -> Operand:
        first, second = self.fold(node.this), self.fold(node.expression)
        if first.type is None:
            raise InexactError("nullif of a NULL of unknown type")
        if _compare(first, second) == 0:
            return Operand(None, first.type)
        return Operand(first.value, first.type)

    def if_(self, node: exp.If) -> Operand:
        condition = self._condition(self.fold(node.this))
        yes = self.fold(node.args["true"])
        no = self.fold(node.args["false"]) if node.args.get("false") is not None else _NULL
        common = _common_type([yes.type, no.type])
        return _as_type(yes if condition else no, common)

    def case(self, node: exp.Case) -> Operand:
        subject = self.fold(node.this) if node.args.get("this") is not None else None
        branches = [(self.fold(i.this), self.fold(i.args["true"])) for i in node.args["ifs"]]
        default = self.fold(node.args["default"]) if node.args.get("default") else _NULL
        common = _common_type([v.type for _, v in branches] + [default.type])
        for test, value in branches:
            if subject is None and test.type == "void":  # measured: IF(NULL, ..) is not
                raise InexactError("CASE WHEN NULL: an error in Spark")
            matched = self._condition(test) if subject is None else _compare(subject, test) == 0
            if matched:
                return _as_type(value, common)
        return _as_type(default, common)

    def _condition(self, operand: Operand) -> bool:
        if operand.type not in ("boolean", "void"):
            raise InexactError(f"a {operand.type} as a condition")
        return operand.value is True

    def comparison(self, node: exp.Expression) -> Operand:
        left, right = self.fold(node.this), self.fold(node.expression)
        order = _compare(left, right)
        if order is None:
            return Operand(None, "boolean")
        return Operand(_COMPARISONS[type(node)](order), "boolean")

    def null_safe_eq(self, node: exp.NullSafeEQ) -> Operand:
        left, right = self.fold(node.this), self.fold(node.expression)
        if left.value is None or right.value is None:
            _common_type([left.type, right.type])  # Spark must accept the pair
            return Operand(left.value is None and right.value is None, "boolean")
        return Operand(_compare(left, right) == 0, "boolean")

    def is_null(self, node: exp.Is) -> Operand:
        if not isinstance(node.expression, exp.Null):
            raise InexactError(node.sql(dialect="spark"))
        return Operand(self.fold(node.this).value is None, "boolean")

    def not_(self, node: exp.Not) -> Operand:
        inner = self.fold(node.this)
        if inner.type not in ("boolean", "void"):
            raise InexactError(f"NOT of a {inner.type}")
        return Operand(None if inner.value is None else not inner.value, "boolean")

    def logic(self, node: exp.And | exp.Or) -> Operand:
        left, right = self.fold(node.this), self.fold(node.expression)
        if left.type not in ("boolean", "void") or right.type not in ("boolean", "void"):
            raise InexactError(f"{left.type} AND/OR {right.type}")
        a, b = left.value, right.value
        if isinstance(node, exp.And):
            value = (
                False if a is False or b is False else (None if a is None or b is None else True)
            )
        else:
            value = True if a is True or b is True else (None if a is None or b is None else False)
        return Operand(value, "boolean")

    def extreme(self, node: exp.Greatest | exp.Least) -> Operand:
        operands = [self.fold(node.this), *(self.fold(e) for e in node.expressions)]
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

    # -- rounding ------------------------------------------------------------------------

    def round_(self, node: exp.Round) -> Operand:
        operand = self.fold(node.this)
        places_node = node.args.get("decimals")
        places = self._int_arg(self.fold(places_node) if places_node else None, 0)
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
            low, high = -(1 << (_BITS[type_name] - 1)), (1 << (_BITS[type_name] - 1)) - 1
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

    def floor_ceil(self, node: exp.Floor | exp.Ceil) -> Operand:
        if node.args.get("decimals") is not None:
            raise InexactError("floor/ceil to a scale")
        operand = self.fold(node.this)
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

    # -- functions sqlglot does not know -------------------------------------------------

    def anonymous(self, node: exp.Anonymous) -> Operand:
        name = str(node.this).lower()
        if name == "now" and not node.expressions:
            return self.current_timestamp()
        operands = [self.fold(e) for e in node.expressions]
        if name == "pmod" and len(operands) == 2:
            return self.pmod(*operands)
        if name == "make_date" and len(operands) == 3:
            return self.make_date(*operands)
        raise NotConstantError(node.sql(dialect="spark"))


_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
_EXACT = decimal.Context(prec=200, Emax=10_000, Emin=-10_000, traps=[decimal.InvalidOperation])
_YYYY_MM_DD = "%Y-%mstrict-%dstrict"


def _STRICT_DATE(text: str) -> bool:  # noqa: N802
    return (
        len(text) == 10
        and text[4] == "-"
        and text[7] == "-"
        and (text[:4] + text[5:7] + text[8:]).isdigit()
    )


def _number(text: str) -> Operand:
    try:
        value, type_name = number_literal(text)
    except ValueError:  # the parser refuses such text before it gets here
        raise NotConstantError(text) from None
    if decimal_shape(type_name) is not None:  # an integer too wide for a bigint
        value = decimal.Decimal(value)
    return Operand(value, type_name, literal=True)


def _is_literal_int(node: exp.Expression) -> bool:
    inner = node.this if isinstance(node, exp.Neg) else node
    return isinstance(inner, exp.Literal) and not inner.is_string


def _substring_sql(text: str, position: int, length: int) -> str:
    """UTF8String.substringSQL: 1-based, a negative position counts from the end."""
    size = len(text)
    start = position - 1 if position > 0 else (size + position if position < 0 else 0)
    end = min(max(start + length, -_INT_MAX - 1), _INT_MAX)
    start = max(start, 0)
    if start >= end:
        return ""
    return text[start:end]


def _pad(text: str, width: int, fill: str, *, left: bool) -> str:
    spaces = width - len(text)
    if spaces <= 0 or not fill:
        return text[: max(width, 0)]
    padding = (fill * (spaces // len(fill) + 1))[:spaces]
    return padding + text if left else text + padding


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


_HANDLERS: dict[type[exp.Expression], Callable[[_Folder, Any], Operand]] = {
    exp.Paren: _Folder.paren,
    exp.Null: _Folder.null,
    exp.Boolean: _Folder.boolean,
    exp.Literal: _Folder.literal,
    exp.Neg: _Folder.neg,
    **dict.fromkeys(_ARITHMETIC, _Folder.binary),
    exp.Abs: _Folder.abs_,
    exp.Interval: _Folder.interval,
    exp.Cast: _Folder.cast,
    exp.TryCast: _Folder.cast,
    exp.TsOrDsAdd: _Folder.date_add,
    exp.AddMonths: _Folder.add_months,
    exp.TsOrDsToDate: _Folder.to_date,
    exp.LastDay: _Folder.last_day,
    exp.NextDay: _Folder.next_day,
    exp.DateTrunc: _Folder.trunc,
    exp.TimestampTrunc: _Folder.date_trunc,
    exp.CurrentDate: _Folder.current_date,
    exp.CurrentTimestamp: _Folder.current_timestamp,
    exp.CurrentTimezone: _Folder.current_timezone,
    exp.Concat: _Folder.concat,
    exp.DPipe: _Folder.concat,
    exp.Upper: _Folder.case_change,
    exp.Lower: _Folder.case_change,
    exp.Substring: _Folder.substring,
    exp.Left: _Folder.left_right,
    exp.Right: _Folder.left_right,
    exp.Trim: _Folder.trim,
    exp.Length: _Folder.length,
    exp.Pad: _Folder.pad,
    exp.Replace: _Folder.replace,
    exp.Coalesce: _Folder.coalesce,
    exp.Nullif: _Folder.nullif,
    exp.If: _Folder.if_,
    exp.Case: _Folder.case,
    **dict.fromkeys(_COMPARISONS, _Folder.comparison),
    exp.NullSafeEQ: _Folder.null_safe_eq,
    exp.Is: _Folder.is_null,
    exp.Not: _Folder.not_,
    exp.And: _Folder.logic,
    exp.Or: _Folder.logic,
    exp.Greatest: _Folder.extreme,
    exp.Least: _Folder.extreme,
    exp.Round: _Folder.round_,
    exp.Floor: _Folder.floor_ceil,
    exp.Ceil: _Folder.floor_ceil,
    exp.Anonymous: _Folder.anonymous,
}
