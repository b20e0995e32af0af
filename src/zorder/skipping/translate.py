"""A Spark SQL filter translated to a DuckDB boolean expression with Spark's meaning.

The exact row evaluator (:mod:`zorder.skipping.rows`) answers a column
compared with literals; everything else a deterministic filter may hold
(columns against columns, arithmetic, functions, CASE, casts) is answered
here: the parsed tree is typed as Spark types it (an ANSI session, Spark
4.1's default) and written as DuckDB SQL that computes in those types,
with explicit casts, so DuckDB evaluates it over the Arrow rows with
Spark's answer. Where DuckDB's own function means something else (integer
division, casts of malformed strings, Java's case mapping, regular
expressions, zones), the SQL spells Spark's meaning out, or the construct is
refused with :class:`~zorder.errors.UnsupportedFilterError` naming it.

Translated, each in Spark's types (``int * int`` stays an int and raises on overflow;
``/`` divides doubles; ``div`` bigints; decimal sums and products get Spark's result
precision and scale): comparisons (NaN equal to NaN and above everything, -0.0 = 0.0,
strings by UTF-8 bytes, a string against an integral as a bigint, a date against a
timestamp at midnight in the session zone), IN, BETWEEN, IS [NOT] DISTINCT FROM,
IS [NOT] NULL/TRUE/FALSE, ``+ - * / div %``, unary minus, abs, coalesce/nvl/ifnull,
nullif, if, CASE, isnan, isnull/isnotnull, CAST and TRY_CAST between numbers, strings (to
integral and boolean), dates and timestamps, upper/lower (Java's full case mapping),
length (code points), substring/substr (Spark's negative and zero positions), concat/||,
startswith/endswith/contains, LIKE (backslash escape, ESCAPE), ILIKE (Java's lower case),
RLIKE (the Java patterns RE2 reads alike), year/quarter/month/day/dayofweek/dayofyear,
hour/minute/second (in the session zone), datediff, date_add/date_sub, add_months
(month end clamped), date +/- interval (day, week, month, year), date - date,
timestamp_ntz +/- interval, and timestamp +/- interval in a UTC session.

Refused, named: non-deterministic functions, subqueries, decimal division and
remainder, decimal results above 38 digits (Spark rounds them), decimals above 15
digits as doubles, casts of strings to numbers other than integers, to dates or
timestamps (except literals), casts of doubles or decimals to strings, a zoned
timestamp plus an interval outside UTC, Java regular expressions using constructs RE2
reads otherwise (flags, lookaround, possessive quantifiers, ``\\s``, ``\\p{..}``, class
intersections), and every function not listed above.

As in an ANSI session, a row that makes Spark raise (an overflow, a division
by zero, a malformed string cast) makes the evaluation
(:func:`zorder.arrow.files.translated_mask`) raise
:class:`~zorder.errors.FilterEvaluationError`; AND, OR, CASE, IF and
COALESCE evaluate their operands lazily, as Spark's do, so a guarded
expression raises only where Spark's would.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from zorder.errors import ColumnNotFoundError, FilterEvaluationError
from zorder.skipping.coercion import (
    FLOAT_TYPES,
    INTEGER_TYPES,
    InexactError,
    cast_literal,
    decimal_shape,
)
from zorder.skipping.constants import (
    FoldContext,
    NotConstantError,
    constant,
    spark_type_name,
)
from zorder.skipping.predicates import unsupported
from zorder.skipping.pushdown import quoted_name
from zorder.skipping.sql import ParsedFilter, parse_filter
from zorder.skipping.zones import SESSION_ZONE, is_utc, session_zone

__all__ = ["Translation", "parse_filter", "translate"]

_INTEGER_ORDER = ("tinyint", "smallint", "int", "bigint")
_INTEGER_AS_DECIMAL = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 20}
_MAX_PRECISION = 38
_DUCK_TYPES = {
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
# The kinds of interval literal this module computes with, and what their SQL holds.
_DAYS, _MONTHS, _MICROS = "interval day", "interval month", "interval micros"
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


class _RefusedError(Exception):
    """What has no exact translation; :func:`translate` names where it stands."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what
        self.located = False


@dataclass(frozen=True)
class Translation:
    """A filter as DuckDB SQL: ``sql`` is TRUE, FALSE or NULL for each row, as in Spark."""

    sql: str
    columns: frozenset[str]  # the table's columns it reads
    text: str  # the filter as written, for errors
    # Constant subexpressions that may raise (CAST('five' AS INT)): Spark folds them, and
    # raises, before it reads a row; evaluate them once before reading.
    constants: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Value:
    sql: str
    type: str  # Spark's type name, "null", or one of the interval kinds
    literal: Any = None  # the Python value, when the node is a literal (not NULL)
    is_literal: bool = False
    raises: bool = False  # some row may make it raise (it then needs lazy operators)
    # Spark's optimizer makes it FALSE, unevaluated, where it is the filter or an operand of
    # the filter's ANDs and ORs (its NULL is replaced by FALSE there).
    false_in_predicate: bool = False


def translate(
    parsed: ParsedFilter | str,
    columns: Mapping[str, str],
    *,
    time_zone: str = "UTC",
    context: FoldContext | None = None,
) -> Translation:
    """A Spark SQL filter, parsed (:func:`~zorder.skipping.sql.parse_filter`; text is parsed
    here), as a DuckDB boolean expression over ``columns``.

    ``columns`` maps each column to its Spark type name; ``time_zone`` is the
    session's (dates of timestamps, zone-less literals); constants fold in
    ``context``, else in the parsed filter's, else in the session's zone. The
    answer is an ANSI session's. Raises
    :class:`~zorder.errors.UnsupportedFilterError` naming what has no exact translation.
    """
    if isinstance(parsed, str):
        parsed = parse_filter(parsed)
    text = parsed.text
    zone = session_zone(time_zone)
    folding = context or parsed.context or FoldContext(zone=zone)
    translator = _Translator(columns, time_zone, folding)
    try:
        value = translator.condition(parsed.tree, predicate=True)
    except _RefusedError as refused:
        raise unsupported(refused.what) from None
    if value.type not in ("boolean", "null"):
        raise unsupported(f"the filter {text!r} (a {value.type}, not a boolean)")
    return Translation(value.sql, frozenset(translator.read), text, tuple(translator.constants))


# ---------------------------------------------------------------------------------------
# Types


def _duck_type(type_name: str) -> str:
    shape = decimal_shape(type_name)
    if shape is not None:
        return f"DECIMAL({shape[0]},{shape[1]})"
    try:
        return _DUCK_TYPES[type_name]
    except KeyError:
        raise _RefusedError(f"a value of type {type_name}") from None


def _is_numeric(type_name: str) -> bool:
    return type_name in INTEGER_TYPES or type_name in FLOAT_TYPES or type_name.startswith("decimal")


def _as_decimal(value: _Value) -> tuple[int, int]:
    """A decimal operand's shape; an integer literal's is its digits (fromLiteral)."""
    shape = decimal_shape(value.type)
    if shape is not None:
        return shape
    if value.is_literal and isinstance(value.literal, int):
        return max(len(str(abs(value.literal))), 1), 0
    return _INTEGER_AS_DECIMAL[value.type], 0


def _bounded(precision: int, scale: int) -> str:
    """Spark's adjustPrecisionScale (precision loss allowed, its default)."""
    if precision <= _MAX_PRECISION:
        return f"decimal({precision},{scale})"
    digits = precision - scale
    kept = max(_MAX_PRECISION - digits, min(scale, 6))
    return f"decimal({_MAX_PRECISION},{kept})"


def _wider_decimal(left: tuple[int, int], right: tuple[int, int]) -> str:
    scale = max(left[1], right[1])
    digits = max(left[0] - left[1], right[0] - right[1])
    if digits + scale <= _MAX_PRECISION:
        return f"decimal({digits + scale},{scale})"
    return f"decimal({_MAX_PRECISION},{max(0, _MAX_PRECISION - digits)})"


_TEMPORAL = {
    frozenset({"date", "timestamp"}): "timestamp",
    frozenset({"date", "timestamp_ntz"}): "timestamp_ntz",
    frozenset({"timestamp", "timestamp_ntz"}): "timestamp",
}


def _common(left: _Value, right: _Value, *, digits: bool) -> str | None:
    """The type Spark (ANSI) brings two operands to; ``digits`` types an integer literal
    met by a decimal by its digits, as comparisons and arithmetic do."""
    a, b = left.type, right.type
    if a == b:
        return a
    if a == "null":
        return b
    if b == "null":
        return a
    if _is_numeric(a) and _is_numeric(b):
        if a == "double" or b == "double" or a == "float" or b == "float":
            return "double"
        if a in INTEGER_TYPES and b in INTEGER_TYPES:
            return max(a, b, key=_INTEGER_ORDER.index)
        if digits:
            return _wider_decimal(_as_decimal(left), _as_decimal(right))
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


# ---------------------------------------------------------------------------------------
# Regular expressions and LIKE patterns


def _like_regex(pattern: str, escape: str) -> str:
    """Spark's LIKE pattern as an RE2 pattern matching the whole string (Spark's
    ``escapeLikeRegex``: the escape may precede only ``_``, ``%`` or itself)."""
    out = ["(?s)"]
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == escape:
            if index + 1 >= len(pattern):
                raise FilterEvaluationError(
                    f"the LIKE pattern {pattern!r} ends with its escape character {escape!r} "
                    "(Spark rejects it)"
                )
            following = pattern[index + 1]
            if following not in ("_", "%", escape):
                raise FilterEvaluationError(
                    f"the LIKE pattern {pattern!r}: the escape character {escape!r} may "
                    f"precede only _, % or itself, not {following!r} (Spark rejects it)"
                )
            out.append(re.escape(following))
            index += 2
            continue
        out.append(".*" if char == "%" else "." if char == "_" else re.escape(char))
        index += 1
    return "".join(out)


_REGEX_PLAIN = set(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-,;:'\"=<>!@#%&/~`"
)
_REGEX_ESCAPES = set(".^$*+?()[]{}|\\-/")
# Java's '.' stops at every line terminator; RE2's only at \n.
_JAVA_DOT = r"[^\n\r\x{85}\x{2028}\x{2029}]"
# Java's '$' (no MULTILINE) also matches before a final line terminator.
_JAVA_END = r"(?:\r\n|[\n\r\x{85}\x{2028}\x{2029}])?\z"


def _java_regex(pattern: str) -> str:
    """A Java regular expression as the RE2 pattern matching the same strings, for the
    constructs both read alike; UnsupportedFilterError naming any other construct."""
    out: list[str] = []
    index = 0
    depth = 0
    previous_quantifiable = False

    def refuse(what: str) -> Exception:
        return _RefusedError(
            f"the regular expression {pattern!r}: {what} (Java's and DuckDB's (RE2) "
            "meanings differ or are not checked)"
        )

    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            if index + 1 >= len(pattern):
                raise refuse("a trailing backslash")
            following = pattern[index + 1]
            if following in "dDwW" or following in _REGEX_ESCAPES:
                out.append("\\" + following)
            else:
                raise refuse(f"the escape \\{following}")
            index += 2
            previous_quantifiable = True
            continue
        if char == "[":
            end, text = _java_class(pattern, index, refuse)
            out.append(text)
            index = end
            previous_quantifiable = True
            continue
        if char == "(":
            if pattern.startswith("(?:", index):
                out.append("(?:")
                index += 3
            elif pattern.startswith("(?", index):
                raise refuse("a group with flags, a lookaround or a named group")
            else:
                out.append("(")
                index += 1
            depth += 1
            previous_quantifiable = False
            continue
        if char == ")":
            if depth == 0:
                raise refuse("an unbalanced parenthesis")
            depth -= 1
            out.append(")")
            index += 1
            previous_quantifiable = True
            continue
        if char in "*+?":
            if not previous_quantifiable:
                raise refuse(f"the quantifier {char} after nothing to repeat")
            out.append(char)
            index += 1
            if index < len(pattern) and pattern[index] == "+":
                raise refuse("a possessive quantifier")
            if index < len(pattern) and pattern[index] == "?":
                out.append("?")
                index += 1
            previous_quantifiable = False
            continue
        if char == "{":
            match = re.match(r"\{(\d{1,3})(,(\d{0,3}))?\}", pattern[index:])
            if match is None or not previous_quantifiable:
                raise refuse("a brace that is not a simple {n}, {n,} or {n,m} repetition")
            out.append(match.group(0))
            index += len(match.group(0))
            if index < len(pattern) and pattern[index] == "+":
                raise refuse("a possessive quantifier")
            if index < len(pattern) and pattern[index] == "?":
                out.append("?")
                index += 1
            previous_quantifiable = False
            continue
        if char == ".":
            out.append(_JAVA_DOT)
        elif char == "^":
            out.append("^")
        elif char == "$":
            out.append(_JAVA_END)
        elif char == "|":
            out.append("|")
        elif char in _REGEX_PLAIN or ord(char) > 127:
            out.append(re.escape(char) if char in "-&~#" else char)
        else:
            raise refuse(f"the character {char!r}")
        previous_quantifiable = char not in "^$|"
        index += 1
    if depth:
        raise refuse("an unclosed group")
    return "".join(out)


def _java_class(pattern: str, start: int, refuse: Callable[[str], Exception]) -> tuple[int, str]:
    """A simple character class ``[...]`` (ranges, negation, escaped punctuation)."""
    index = start + 1
    out = ["["]
    if index < len(pattern) and pattern[index] == "^":
        out.append("^")
        index += 1
    first = True
    while index < len(pattern):
        char = pattern[index]
        if char == "]" and not first:
            out.append("]")
            return index + 1, "".join(out)
        if char == "[" or pattern.startswith("&&", index):
            raise refuse("a nested class or a class intersection")
        if char == "\\":
            following = pattern[index + 1 : index + 2]
            if following and (following in _REGEX_ESCAPES or following in "dw"):
                out.append("\\" + following)
                index += 2
                first = False
                continue
            raise refuse(f"the escape \\{following} in a class")
        if char == "]":
            raise refuse("an empty class")
        out.append(char if char.isalnum() or char in "-_ " or ord(char) > 127 else "\\" + char)
        index += 1
        first = False
    raise refuse("an unclosed class")


# ---------------------------------------------------------------------------------------
# Literals


def _literal_sql(value: Any, type_name: str) -> str:
    if type_name == "boolean":
        return "TRUE" if value else "FALSE"
    if type_name in INTEGER_TYPES:
        return f"CAST({int(value)} AS {_duck_type(type_name)})"
    if type_name in FLOAT_TYPES:
        number = float(value)
        text = "nan" if number != number else repr(number)
        return f"CAST('{text}' AS {_duck_type(type_name)})"
    if type_name.startswith("decimal"):
        return f"CAST('{decimal.Decimal(value)}' AS {_duck_type(type_name)})"
    if type_name == "string":
        return "'" + str(value).replace("'", "''") + "'"
    if type_name == "date":
        if not 1 <= value.year <= 9999:
            raise _RefusedError(f"the date {value} (outside years 1-9999)")
        return f"DATE '{value.isoformat()}'"
    if type_name == "timestamp":
        utc = value.astimezone(dt.UTC).replace(tzinfo=None)
        return f"TIMESTAMPTZ '{utc.isoformat(sep=' ', timespec='microseconds')}+00'"
    if type_name == "timestamp_ntz":
        return f"TIMESTAMP '{value.isoformat(sep=' ', timespec='microseconds')}'"
    raise _RefusedError(f"a literal of type {type_name}")


_INTERVAL_UNITS = {
    "YEAR": (_MONTHS, 12),
    "MONTH": (_MONTHS, 1),
    "WEEK": (_DAYS, 7),
    "DAY": (_DAYS, 1),
    "HOUR": (_MICROS, 3_600_000_000),
    "MINUTE": (_MICROS, 60_000_000),
    "SECOND": (_MICROS, 1_000_000),
}


# ---------------------------------------------------------------------------------------
# The translator


class _Translator:
    def __init__(self, columns: Mapping[str, str], time_zone: str, context: FoldContext) -> None:
        self.columns = columns
        self.time_zone = time_zone
        self.zone = session_zone(time_zone)
        self.context = context
        self.read: set[str] = set()
        self.constants: list[str] = []
        self._lowered = {name.lower(): name for name in columns}

    # -- zones ---------------------------------------------------------------------------

    def _fixed_offset(self) -> dt.timedelta | None:
        """The session zone's offset when it never changes (UTC, +05:30); None for a region."""
        if is_utc(self.time_zone):
            return dt.timedelta(0)
        if isinstance(self.zone, dt.timezone):
            return self.zone.utcoffset(None)
        return None

    def local(self, sql: str) -> str:
        """A TIMESTAMPTZ's wall-clock time in the session zone, as a TIMESTAMP."""
        offset = self._fixed_offset()
        if offset is None:
            return f"timezone('{self.time_zone.strip()}', {sql})"
        shift = int(offset.total_seconds())
        local = f"timezone('UTC', {sql})"
        return local if shift == 0 else f"({local} + INTERVAL ({shift}) SECOND)"

    def instant(self, sql: str) -> str:
        """A zone-less TIMESTAMP read in the session zone, as a TIMESTAMPTZ."""
        offset = self._fixed_offset()
        if offset is None:
            return f"zorder_instant({sql}, '{self.time_zone.strip()}')"
        shift = int(offset.total_seconds())
        shifted = sql if shift == 0 else f"({sql} - INTERVAL ({shift}) SECOND)"
        return f"timezone('UTC', {shifted})"

    # -- entry -----------------------------------------------------------------------------

    def value(self, node: exp.Expression) -> _Value:
        while isinstance(node, exp.Paren):
            node = node.this
        if not isinstance(node, exp.Column | exp.Interval) and node.find(exp.Column) is None:
            folded = self._folded(node)
            if folded is not None:
                return folded
        method = _DISPATCH.get(type(node))
        try:
            return self._other(node) if method is None else method(self, node)
        except _RefusedError as refused:
            if not refused.located and method in _LOCATING:
                refused.what = f"{refused.what} in {node.sql(dialect='spark')}"
                refused.located = True
            raise

    def _folded(self, node: exp.Expression) -> _Value | None:
        if self._nondeterministic(node) is not None:
            return None
        try:
            literal = constant(node, self.context)
        except NotConstantError:
            return None
        if literal is None:
            return _Value("NULL", "null", is_literal=True)
        value, type_name = literal.value, literal.type
        if isinstance(value, dt.datetime) and value.tzinfo is SESSION_ZONE:
            value = value.replace(tzinfo=self.zone, fold=0)
        if type_name not in _DUCK_TYPES and decimal_shape(type_name) is None:
            return None
        return _Value(_literal_sql(value, type_name), type_name, value, is_literal=True)

    @staticmethod
    def _nondeterministic(node: exp.Expression) -> str | None:
        for inner in node.walk():
            assert isinstance(inner, exp.Expression)
            name = _function_name(inner)
            if name in _NONDETERMINISTIC:
                return name
        return None

    def _other(self, node: exp.Expression) -> _Value:
        name = _function_name(node)
        shown = node.sql(dialect="spark")
        if name in _NONDETERMINISTIC:
            raise _RefusedError(f"the non-deterministic function {name} ({shown})")
        if isinstance(node, exp.Subquery | exp.Select | exp.Exists):
            raise _RefusedError(f"a subquery ({shown})")
        if isinstance(node, exp.Anonymous):
            handler = _ANONYMOUS.get(name)
            if handler is not None:
                return handler(self, node)
            raise _RefusedError(f"the function {name} ({shown})")
        raise _RefusedError(f"{shown} (no exact in-process translation of {type(node).__name__})")

    # -- leaves ----------------------------------------------------------------------------

    def column(self, node: exp.Column) -> _Value:
        if node.table:
            raise _RefusedError(f"the qualified name {node.sql(dialect='spark')}")
        name = str(node.name)
        resolved = name if name in self.columns else self._lowered.get(name.lower())
        if resolved is None:
            raise ColumnNotFoundError(
                f"unknown column {name!r} in the filter; the table's columns: "
                f"{', '.join(self.columns)}"
            )
        type_name = self.columns[resolved]
        if type_name not in _DUCK_TYPES and decimal_shape(type_name) is None:
            raise _RefusedError(f"the {type_name} column {resolved}")
        self.read.add(resolved)
        return _Value(quoted_name(resolved), type_name)

    def interval(self, node: exp.Interval) -> _Value:
        unit = node.args.get("unit")
        text = node.this
        if not isinstance(unit, exp.Var) or not isinstance(text, exp.Literal):
            raise _RefusedError(f"the interval {node.sql(dialect='spark')} (only one unit)")
        kind = _INTERVAL_UNITS.get(str(unit.this).upper().rstrip("S"))
        raw = str(text.this).strip()
        if kind is None or not re.fullmatch(r"[+-]?\d{1,9}", raw):
            raise _RefusedError(f"the interval {node.sql(dialect='spark')}")
        amount = int(raw) * kind[1]
        return _Value(str(amount), kind[0], amount, is_literal=True)

    # -- casts -----------------------------------------------------------------------------

    def cast(self, value: _Value, target: str, *, safe: bool = False) -> _Value:
        """``CAST(value AS target)`` as ANSI Spark computes it (``safe``: TRY_CAST)."""
        source = value.type
        if source == target:
            return value
        duck = _duck_type(target)
        if source == "null":
            return _Value(f"CAST(NULL AS {duck})", target)
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
                return _Value(_literal_sql(converted, target), target, converted, True)
        sql = self._cast_sql(value, source, target, duck, safe=safe)
        may_raise = value.raises or (not safe and self._cast_may_raise(source, target))
        if value.is_literal and may_raise:
            self.constants.append(sql)  # Spark folds it before reading a row, raising if it must
        return _Value(sql, target, raises=may_raise)

    @staticmethod
    def _cast_may_raise(source: str, target: str) -> bool:
        widening = (
            source in INTEGER_TYPES
            and target in INTEGER_TYPES
            and _INTEGER_ORDER.index(source) <= _INTEGER_ORDER.index(target)
        )
        return not (widening or (target in ("double", "string", "boolean") and source != "string"))

    def _cast_sql(self, value: _Value, source: str, target: str, duck: str, *, safe: bool) -> str:
        sql = value.sql
        shown = f"CAST of a {source} AS {target}"
        cast = "TRY_CAST" if safe else "CAST"
        numeric_source = _is_numeric(source) or source == "boolean"
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
                raise _RefusedError(
                    f"a {source} converted to DOUBLE (above 15 digits DuckDB does not round "
                    "as Java does)"
                )
            return f"CAST({sql} AS DOUBLE)"
        if target == "float" and (source in INTEGER_TYPES or source == "boolean"):
            return f"CAST({sql} AS FLOAT)"
        if target.startswith("decimal") and (
            source in INTEGER_TYPES or source.startswith("decimal")
        ):
            return f"{cast}({sql} AS {duck})"  # overflow raises; HALF_UP rounding, as Spark
        if target == "boolean" and (source in INTEGER_TYPES or source.startswith("decimal")):
            return f"({sql} <> 0)"
        if target == "boolean" and source == "string":
            trimmed = f"lower(trim({sql}))"
            bad = "NULL" if safe else _error("cannot cast a string to boolean: malformed")
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
        if target == "date":
            if source == "timestamp":
                return f"CAST({self.local(sql)} AS DATE)"
            if source == "timestamp_ntz":
                return f"CAST({sql} AS DATE)"
        if target == "timestamp_ntz":
            if source == "date":
                return f"CAST({sql} AS TIMESTAMP)"
            if source == "timestamp":
                return self.local(sql)
        if target == "timestamp":
            if source == "date":
                return self.instant(f"CAST({sql} AS TIMESTAMP)")
            if source == "timestamp_ntz":
                return self.instant(sql)
        raise _RefusedError(shown)

    # -- boolean logic ---------------------------------------------------------------------

    def boolean(self, node: exp.Expression) -> _Value:
        value = self.value(node)
        if value.type == "null":
            return value if value.is_literal else _Value("CAST(NULL AS BOOLEAN)", "boolean")
        if value.type != "boolean":
            raise _RefusedError(
                f"{node.sql(dialect='spark')} used as a condition is a {value.type}"
            )
        return value

    def condition(self, node: exp.Expression, predicate: bool) -> _Value:
        """``node`` as a condition; in ``predicate`` position (the filter itself and the
        operands of its ANDs and ORs) a NULL literal is FALSE, as Spark's optimizer makes it
        (ReplaceNullWithFalseInPredicate) before it evaluates a row."""
        while isinstance(node, exp.Paren):
            node = node.this
        if isinstance(node, exp.And | exp.Or):
            return self._junction(node, predicate)
        value = self.boolean(node)
        if predicate and (_truth(value) is None or value.false_in_predicate):
            return _FALSE
        return value

    def and_(self, node: exp.And) -> _Value:
        return self._junction(node, predicate=False)

    def or_(self, node: exp.Or) -> _Value:
        return self._junction(node, predicate=False)

    def _junction(self, node: exp.And | exp.Or, predicate: bool) -> _Value:
        is_and = isinstance(node, exp.And)
        left = self.condition(node.this, predicate)
        right = self.condition(node.expression, predicate)
        # Spark's BooleanSimplification, before any row: x AND FALSE is FALSE, x OR TRUE is
        # TRUE, whatever x would do (raise included); TRUE AND x is x.
        absorbing, neutral = (False, True) if is_and else (True, False)
        truths = (_truth(left), _truth(right))
        if absorbing in truths:
            return _FALSE if is_and else _TRUE
        if truths[0] is neutral:
            return right
        if truths[1] is neutral:
            return left
        if truths == (None, None):
            return _NULL
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
        return _Value(sql, "boolean", raises=raises)

    def not_(self, node: exp.Not) -> _Value:
        inner = self.boolean(node.this)
        truth = _truth(inner)
        if truth is not _UNKNOWN:
            return _NULL if truth is None else (_FALSE if truth else _TRUE)
        return _Value(f"(NOT ({inner.sql}))", "boolean", raises=inner.raises)

    def is_(self, node: exp.Is) -> _Value:
        inner = self.value(node.this)
        target = node.expression
        if isinstance(target, exp.Null):
            return _Value(f"(({inner.sql}) IS NULL)", "boolean", raises=inner.raises)
        if isinstance(target, exp.Boolean):
            inner = self.boolean(node.this)
            word = "TRUE" if target.this else "FALSE"
            return _Value(f"(({inner.sql}) IS {word})", "boolean", raises=inner.raises)
        raise _RefusedError(node.sql(dialect="spark"))

    # -- comparisons -----------------------------------------------------------------------

    def _pair(self, left: _Value, right: _Value, shown: str) -> tuple[_Value, _Value, str]:
        common = _common(left, right, digits=True)
        if common is None:
            raise _RefusedError(
                f"{shown}: Spark does not compare a {left.type} with a {right.type}"
            )
        if common == "null":
            common = "boolean"
        return self.cast(left, common), self.cast(right, common), common

    def compare(self, node: exp.Expression) -> _Value:
        op = _COMPARISONS[type(node)]
        left, right = self.value(node.this), self.value(node.expression)
        return self._compare(op, left, right, node.sql(dialect="spark"))

    def _compare(self, op: str, left: _Value, right: _Value, shown: str) -> _Value:
        if "DISTINCT" not in op and (_is_null(left) or _is_null(right)):
            return _NULL  # NullPropagation: the other side is never evaluated
        unwrapped = _unwrapped(op, left, right)
        if unwrapped is not None:
            return unwrapped
        if left.type in (_DAYS, _MONTHS, _MICROS) or right.type in (_DAYS, _MONTHS, _MICROS):
            if left.type != right.type:
                raise _RefusedError(f"{shown}: an interval compared with a {right.type}")
            a, b = left, right
        else:
            a, b, _ = self._pair(left, right, shown)
        sql = f"(({a.sql}) {op} ({b.sql}))"
        return _Value(sql, "boolean", raises=a.raises or b.raises)

    def distinct(self, node: exp.NullSafeNEQ) -> _Value:
        left, right = self.value(node.this), self.value(node.expression)
        return self._compare("IS DISTINCT FROM", left, right, node.sql(dialect="spark"))

    def between(self, node: exp.Between) -> _Value:
        if node.args.get("symmetric"):
            raise _RefusedError("BETWEEN SYMMETRIC")
        shown = node.sql(dialect="spark")
        target = self.value(node.this)
        low = self._compare(">=", target, self.value(node.args["low"]), shown)
        high = self._compare("<=", target, self.value(node.args["high"]), shown)
        if high.raises:
            sql = f"CASE WHEN ({low.sql}) IS FALSE THEN FALSE ELSE ({low.sql}) AND ({high.sql}) END"
        else:
            sql = f"(({low.sql}) AND ({high.sql}))"
        return _Value(sql, "boolean", raises=low.raises or high.raises)

    def in_(self, node: exp.In) -> _Value:
        shown = node.sql(dialect="spark")
        if node.args.get("query") is not None or node.args.get("unnest") is not None:
            raise _RefusedError(f"a subquery ({shown})")
        target = self.value(node.this)
        items = [self.value(item) for item in node.expressions]
        common = target.type
        for item in items:
            widened = _common(_Value("", common), item, digits=False)
            if widened is None:
                raise _RefusedError(
                    f"{shown}: Spark does not compare a {common} with a {item.type}"
                )
            common = widened
        if common == "null":
            return _Value("CAST(NULL AS BOOLEAN)", "boolean")
        cast = [self.cast(v, common) for v in [target, *items]]
        sql = f"(({cast[0].sql}) IN ({', '.join(v.sql for v in cast[1:])}))"
        return _Value(sql, "boolean", raises=any(v.raises for v in cast))

    # -- strings ---------------------------------------------------------------------------

    def _string(self, node: exp.Expression) -> _Value:
        value = self.value(node)
        if value.type == "null":
            return _Value("CAST(NULL AS VARCHAR)", "string")
        return self.cast(value, "string")

    def _pattern(self, node: exp.Expression, what: str) -> str | None:
        try:
            literal = constant(node, self.context)
        except NotConstantError:
            raise _RefusedError(f"{what} with a pattern that is not a literal") from None
        if literal is None:
            return None
        if not isinstance(literal.value, str):
            raise _RefusedError(f"{what} with a {literal.type} pattern")
        return str(literal.value)

    def like(self, node: exp.Expression) -> _Value:
        escape = "\\"
        if isinstance(node, exp.Escape):
            escape_text = self._pattern(node.expression, "ESCAPE")
            if escape_text is None or len(escape_text) != 1:
                raise _RefusedError("an ESCAPE that is not one character")
            escape = escape_text
            node = node.this
        negated = bool(node.args.get("negate"))
        insensitive = isinstance(node, exp.ILike)
        what = "ILIKE" if insensitive else "LIKE"
        target = self._string(node.this)
        pattern = self._pattern(node.expression, what)
        if pattern is None:
            sql = "CAST(NULL AS BOOLEAN)"
        else:
            if insensitive:  # Spark: lower(x) LIKE lower(pattern), with Java's lower case
                pattern = pattern.lower()
                target = _Value(f"zorder_lower({target.sql})", "string", raises=target.raises)
            regex = _like_regex(pattern, escape)
            sql = f"regexp_full_match({target.sql}, {_literal_sql(regex, 'string')})"
        if negated:
            sql = f"(NOT {sql})"
        return _Value(sql, "boolean", raises=target.raises)

    def rlike(self, node: exp.RegexpLike) -> _Value:
        target = self._string(node.this)
        pattern = self._pattern(node.expression, "RLIKE")
        if pattern is None:
            return _Value("CAST(NULL AS BOOLEAN)", "boolean")
        regex = _java_regex(pattern)
        sql = f"regexp_matches({target.sql}, {_literal_sql(regex, 'string')})"
        return _Value(sql, "boolean", raises=target.raises)

    def _affix(self, node: exp.Expression, function: str) -> _Value:
        left, right = self._string(node.this), self._string(node.expression)
        return _Value(
            f"{function}({left.sql}, {right.sql})", "boolean", raises=left.raises or right.raises
        )

    def starts_with(self, node: exp.StartsWith) -> _Value:
        return self._affix(node, "starts_with")

    def ends_with(self, node: exp.EndsWith) -> _Value:
        return self._affix(node, "suffix")

    def contains(self, node: exp.Contains) -> _Value:
        return self._affix(node, "contains")

    def case_map(self, node: exp.Upper | exp.Lower) -> _Value:
        inner = self._string(node.this)
        function = "zorder_upper" if isinstance(node, exp.Upper) else "zorder_lower"
        return _Value(f"{function}({inner.sql})", "string", raises=inner.raises)

    def length(self, node: exp.Length) -> _Value:
        inner = self._string(node.this)  # code points, as Spark counts (and DuckDB's length)
        return _Value(f"CAST(length({inner.sql}) AS INTEGER)", "int", raises=inner.raises)

    def substring(self, node: exp.Substring) -> _Value:
        text = self._string(node.this)
        start = self._integer(node.args.get("start"), "substring's position")
        given = node.args.get("length")
        length = (
            self._integer(given, "substring's length")
            if given is not None
            else _Value("2147483647", "bigint")
        )
        # UTF8String.substringSQL: a position of 0 is 1, a negative one counts from the end.
        n = f"length({text.sql})"
        pos = f"CAST({start.sql} AS BIGINT)"
        begin = f"(CASE WHEN {pos} > 0 THEN {pos} - 1 WHEN {pos} < 0 THEN {n} + {pos} ELSE 0 END)"
        end = f"({begin} + CAST({length.sql} AS BIGINT))"
        first = f"greatest({begin}, 0)"
        sql = (
            f"(CASE WHEN {text.sql} IS NULL OR {pos} IS NULL OR {end} IS NULL THEN NULL "
            f"WHEN {first} >= {end} THEN '' "
            f"ELSE substring({text.sql}, {first} + 1, {end} - {first}) END)"
        )
        return _Value(sql, "string", raises=text.raises or start.raises or length.raises)

    def _integer(self, node: exp.Expression | None, what: str) -> _Value:
        if node is None:
            raise _RefusedError(f"{what} missing")
        value = self.value(node)
        if value.type == "null":
            return _Value("CAST(NULL AS INTEGER)", "int")
        if value.type not in ("tinyint", "smallint", "int"):
            raise _RefusedError(f"{what} of type {value.type} (Spark takes an int)")
        return value

    def concat(self, node: exp.Concat | exp.DPipe) -> _Value:
        parts = [node.this, node.expression] if isinstance(node, exp.DPipe) else node.expressions
        values = [self._string(part) for part in parts]
        # Spark's concat is NULL when any argument is (DuckDB's || too; its concat skips them).
        sql = " || ".join(f"({v.sql})" for v in values)
        return _Value(f"({sql})", "string", raises=any(v.raises for v in values))

    # -- numbers ---------------------------------------------------------------------------

    def _numeric_pair(self, node: exp.Binary, verb: str) -> tuple[_Value, _Value, str]:
        left, right = self.value(node.this), self.value(node.expression)
        shown = node.sql(dialect="spark")
        for one, other in ((left, right), (right, left)):
            if one.type == "string" and other.type not in INTEGER_TYPES:
                # Spark brings a string to the other side's integral type as a bigint; with
                # anything else its rule is not reproduced here.
                raise _RefusedError(f"{shown}: a string {verb} a {other.type}")
        if _is_null(left) or _is_null(right):  # NullPropagation: NULL, nothing evaluated
            return left, right, "null"
        if left.type == "string" or right.type == "string":
            return self.cast(left, "bigint"), self.cast(right, "bigint"), "bigint"
        if left.type == "null" and right.type == "null":
            return left, right, "null"
        for one in (left, right):
            if one.type != "null" and not _is_numeric(one.type):
                raise _RefusedError(f"{shown}: arithmetic on a {one.type}")
        common = _common(left, right, digits=True)
        assert common is not None
        return left, right, common

    def add_sub(self, node: exp.Add | exp.Sub) -> _Value:
        left, right = self.value(node.this), self.value(node.expression)
        op = "+" if isinstance(node, exp.Add) else "-"
        temporal = self._datetime_arithmetic(node, left, right, op)
        if temporal is not None:
            return temporal
        a, b, common = self._numeric_pair(node, "added to")
        if common == "null":
            return _NULL
        if common.startswith("decimal"):
            (p1, s1), (p2, s2) = _as_decimal(a), _as_decimal(b)
            scale = max(s1, s2)
            precision = max(p1 - s1, p2 - s2) + scale + 1
            result = _bounded(precision, scale)
            if precision > _MAX_PRECISION:
                raise _RefusedError(f"{node.sql(dialect='spark')}: a decimal sum above 38 digits")
            x, y = self.cast(a, result), self.cast(b, result)
            sql = f"CAST(({x.sql}) {op} ({y.sql}) AS {_duck_type(result)})"
            return _Value(sql, result, raises=True)
        x, y = self.cast(a, common), self.cast(b, common)
        may_raise = common not in FLOAT_TYPES or x.raises or y.raises
        return _Value(f"(({x.sql}) {op} ({y.sql}))", common, raises=may_raise)

    def mul(self, node: exp.Mul) -> _Value:
        a, b, common = self._numeric_pair(node, "multiplied by")
        if common == "null":
            return _NULL
        if common.startswith("decimal"):
            (p1, s1), (p2, s2) = _as_decimal(a), _as_decimal(b)
            if p1 + p2 + 1 > _MAX_PRECISION:
                raise _RefusedError(
                    f"{node.sql(dialect='spark')}: a decimal product above 38 digits "
                    "(Spark rounds it)"
                )
            result = f"decimal({p1 + p2 + 1},{s1 + s2})"
            x = self.cast(a, f"decimal({p1},{s1})")
            y = self.cast(b, f"decimal({p2},{s2})")
            sql = f"CAST(({x.sql}) * ({y.sql}) AS {_duck_type(result)})"
            return _Value(sql, result, raises=x.raises or y.raises)
        x, y = self.cast(a, common), self.cast(b, common)
        may_raise = common not in FLOAT_TYPES or x.raises or y.raises
        return _Value(f"(({x.sql}) * ({y.sql}))", common, raises=may_raise)

    def div(self, node: exp.Div) -> _Value:
        a, b, common = self._numeric_pair(node, "divided by")
        if common == "null":
            return _NULL
        if common.startswith("decimal"):
            raise _RefusedError(
                f"{node.sql(dialect='spark')}: decimal division (Spark rounds the exact "
                "quotient to its result scale)"
            )
        x, y = self.cast(a, "double"), self.cast(b, "double")
        sql = (
            f"(CASE WHEN ({y.sql}) = 0 THEN {_error('[DIVIDE_BY_ZERO] Division by zero')} "
            f"ELSE ({x.sql}) / ({y.sql}) END)"
        )
        return _Value(sql, "double", raises=True)

    def int_div(self, node: exp.IntDiv) -> _Value:
        a, b, common = self._numeric_pair(node, "divided by")
        if common == "null":
            return _NULL
        if common not in INTEGER_TYPES:
            raise _RefusedError(f"{node.sql(dialect='spark')}: div of a {common}")
        x, y = self.cast(a, "bigint"), self.cast(b, "bigint")
        sql = (
            f"(CASE WHEN ({y.sql}) = 0 THEN {_error('[DIVIDE_BY_ZERO] Division by zero')} "
            f"ELSE ({x.sql}) // ({y.sql}) END)"
        )
        return _Value(sql, "bigint", raises=True)

    def mod(self, node: exp.Mod) -> _Value:
        a, b, common = self._numeric_pair(node, "divided by")
        if common == "null":
            return _NULL
        if common.startswith("decimal"):
            raise _RefusedError(f"{node.sql(dialect='spark')}: the remainder of decimals")
        x, y = self.cast(a, common), self.cast(b, common)
        zero = _error("[REMAINDER_BY_ZERO] Remainder by zero")
        # Java's % keeps the dividend's sign, as DuckDB's; MIN % -1 is 0 in Java.
        minus_one = f"WHEN ({y.sql}) = -1 THEN ({x.sql}) * 0 " if common in INTEGER_TYPES else ""
        sql = f"(CASE WHEN ({y.sql}) = 0 THEN {zero} {minus_one}ELSE ({x.sql}) % ({y.sql}) END)"
        return _Value(sql, common, raises=True)

    def neg(self, node: exp.Neg) -> _Value:
        inner = self.value(node.this)
        if inner.type == "null":
            return inner
        if inner.type in (_DAYS, _MONTHS, _MICROS) and inner.is_literal:
            return _Value(str(-inner.literal), inner.type, -inner.literal, True)
        if not _is_numeric(inner.type):
            raise _RefusedError(f"{node.sql(dialect='spark')}: minus a {inner.type}")
        return _Value(f"(-({inner.sql}))", inner.type, raises=inner.type not in FLOAT_TYPES)

    def abs_(self, node: exp.Abs) -> _Value:
        inner = self.value(node.this)
        if inner.type == "null":
            return inner
        if not _is_numeric(inner.type):
            raise _RefusedError(f"{node.sql(dialect='spark')}: abs of a {inner.type}")
        return _Value(f"abs({inner.sql})", inner.type, raises=inner.type not in FLOAT_TYPES)

    # -- conditionals ----------------------------------------------------------------------

    def _branches(self, values: list[_Value], shown: str) -> tuple[list[_Value], str]:
        common = "null"
        for value in values:
            widened = _common(_Value("", common), value, digits=False)
            if widened is None:
                raise _RefusedError(f"{shown}: no common type of {common} and {value.type}")
            common = widened
        if common == "null":
            return values, common
        return [self.cast(v, common) for v in values], common

    def coalesce(self, node: exp.Coalesce) -> _Value:
        values = [self.value(node.this), *[self.value(e) for e in node.expressions]]
        cast, common = self._branches(values, node.sql(dialect="spark"))
        if common == "null":
            return _NULL
        sql = f"coalesce({', '.join(v.sql for v in cast)})"
        return _Value(sql, common, raises=any(v.raises for v in cast))

    def if_(self, node: exp.If) -> _Value:
        condition = self.boolean(node.this)
        otherwise = node.args.get("false")
        values = [self.value(node.args["true"])]
        values.append(self.value(otherwise) if otherwise is not None else _Value("NULL", "null"))
        cast, common = self._branches(values, node.sql(dialect="spark"))
        sql = f"(CASE WHEN {condition.sql} THEN {cast[0].sql} ELSE {cast[1].sql} END)"
        raises = condition.raises or any(v.raises for v in cast)
        return _Value(sql, common, raises=raises)

    def case(self, node: exp.Case) -> _Value:
        shown = node.sql(dialect="spark")
        subject = node.this
        conditions: list[_Value] = []
        results: list[_Value] = []
        for branch in node.args.get("ifs") or []:
            if subject is not None:
                conditions.append(
                    self._compare("=", self.value(subject), self.value(branch.this), shown)
                )
            else:
                conditions.append(self.boolean(branch.this))
            results.append(self.value(branch.args["true"]))
        default = node.args.get("default")
        results.append(self.value(default) if default is not None else _Value("NULL", "null"))
        cast, common = self._branches(results, shown)
        whens = " ".join(
            f"WHEN {c.sql} THEN {r.sql}" for c, r in zip(conditions, cast[:-1], strict=True)
        )
        sql = f"(CASE {whens} ELSE {cast[-1].sql} END)"
        raises = any(v.raises for v in conditions) or any(v.raises for v in cast)
        return _Value(sql, common, raises=raises)

    def nullif(self, node: exp.Nullif) -> _Value:
        first = self.value(node.this)
        equal = self._compare("=", first, self.value(node.expression), node.sql(dialect="spark"))
        sql = f"(CASE WHEN {equal.sql} THEN NULL ELSE {first.sql} END)"
        return _Value(sql, first.type, raises=equal.raises)

    def is_nan(self, node: exp.IsNan) -> _Value:
        inner = self.value(node.this)
        if inner.type == "null":
            return _Value("FALSE", "boolean")
        if inner.type not in FLOAT_TYPES:
            raise _RefusedError(f"isnan of a {inner.type}")
        return _Value(f"coalesce(isnan({inner.sql}), FALSE)", "boolean", raises=inner.raises)

    def is_null_function(self, node: exp.Anonymous) -> _Value:
        if len(node.expressions) != 1:
            raise _RefusedError(node.sql(dialect="spark"))
        inner = self.value(node.expressions[0])
        word = "IS NULL" if str(node.this).lower() == "isnull" else "IS NOT NULL"
        return _Value(f"(({inner.sql}) {word})", "boolean", raises=inner.raises)

    # -- dates and times -------------------------------------------------------------------

    def _date(self, node: exp.Expression) -> _Value:
        while isinstance(node, exp.TsOrDsToDate) and not node.args.get("format"):
            if node.args.get("safe"):
                break
            node = node.this
        value = self.value(node)
        if value.type == "null":
            return _Value("CAST(NULL AS DATE)", "date")
        if value.type not in ("date", "timestamp", "timestamp_ntz", "string"):
            raise _RefusedError(f"{node.sql(dialect='spark')}: a {value.type} as a date")
        return self.cast(value, "date")

    def to_date(self, node: exp.TsOrDsToDate) -> _Value:
        if node.args.get("format") is not None:
            raise _RefusedError(f"{node.sql(dialect='spark')} (a date format)")
        if node.args.get("safe"):
            inner = self.value(node.this)
            if inner.type == "string":
                raise _RefusedError(f"{node.sql(dialect='spark')} (a string read as a date)")
            return self._date(node.this)
        return self._date(node.this)

    def date_part(self, node: exp.Expression) -> _Value:
        date = self._date(node.this)
        part = _DATE_PARTS[type(node)]
        sql = f"CAST({part}({date.sql}) AS INTEGER)"
        if isinstance(node, exp.DayOfWeek):  # Spark: Sunday is 1; DuckDB's dayofweek: 0
            sql = f"CAST(dayofweek({date.sql}) + 1 AS INTEGER)"
        return _Value(sql, "int", raises=date.raises)

    def time_part(self, node: exp.Expression) -> _Value:
        value = self.value(node.this)
        if value.type == "null":
            return _Value("CAST(NULL AS INTEGER)", "int")
        if value.type == "date":
            value = self.cast(value, "timestamp")
        if value.type == "timestamp":
            local = self.local(value.sql)
        elif value.type == "timestamp_ntz":
            local = value.sql
        else:
            raise _RefusedError(f"{node.sql(dialect='spark')}: a {value.type} as a timestamp")
        part = _TIME_PARTS[type(node)]
        return _Value(f"CAST({part}({local}) AS INTEGER)", "int", raises=value.raises)

    def date_diff(self, node: exp.DateDiff) -> _Value:
        if node.args.get("unit") is not None:
            raise _RefusedError(f"{node.sql(dialect='spark')} (a unit)")
        end, start = self._date(node.this), self._date(node.expression)
        sql = f"CAST(date_diff('day', {start.sql}, {end.sql}) AS INTEGER)"
        return _Value(sql, "int", raises=end.raises or start.raises)

    def date_add(self, node: exp.TsOrDsAdd) -> _Value:
        unit = node.args.get("unit")
        if unit is not None and str(unit.this).upper() != "DAY":
            raise _RefusedError(node.sql(dialect="spark"))
        date = self._date(node.this)
        days = self._integer(node.expression, "date_add's days")
        sql = f"({date.sql} + CAST({days.sql} AS INTEGER))"
        return _Value(sql, "date", raises=True)

    def add_months(self, node: exp.AddMonths) -> _Value:
        date = self._date(node.this)
        months = self._integer(node.expression, "add_months' months")
        return _Value(self._plus_months(date.sql, months.sql), "date", raises=True)

    @staticmethod
    def _plus_months(date_sql: str, months_sql: str) -> str:
        # java.time's plusMonths: the day of month clamped to the new month's end (DuckDB's too)
        return f"CAST({date_sql} + to_months(CAST({months_sql} AS INTEGER)) AS DATE)"

    def _datetime_arithmetic(
        self, node: exp.Expression, left: _Value, right: _Value, op: str
    ) -> _Value | None:
        shown = node.sql(dialect="spark")
        temporal = ("date", "timestamp", "timestamp_ntz")
        intervals = (_DAYS, _MONTHS, _MICROS)
        if op == "+" and left.type in intervals and right.type in temporal:
            left, right = right, left
        if left.type not in temporal and right.type not in temporal:
            if left.type in intervals or right.type in intervals:
                if left.type == right.type and left.is_literal and right.is_literal:
                    amount = (
                        left.literal + right.literal if op == "+" else left.literal - right.literal
                    )
                    return _Value(str(amount), left.type, amount, True)
                raise _RefusedError(f"{shown}: interval arithmetic")
            return None
        if left.type not in temporal:
            raise _RefusedError(f"{shown}: a {left.type} {op} a {right.type}")
        sign = "" if op == "+" else "-"
        if right.type in INTEGER_TYPES and left.type == "date":  # date + n: date_add
            if right.type == "bigint":
                raise _RefusedError(f"{shown}: a date plus a bigint")
            return _Value(f"({left.sql} {op} CAST({right.sql} AS INTEGER))", "date", raises=True)
        if right.type == "date" and left.type == "date" and op == "-":
            sql = f"date_diff('day', {right.sql}, {left.sql})"
            return _Value(sql, _DAYS, raises=left.raises or right.raises)
        if right.type not in intervals:
            raise _RefusedError(f"{shown}: a {left.type} {op} a {right.type}")
        amount = f"({sign}({right.sql}))"
        if right.type == _MONTHS:
            if left.type == "date":
                return _Value(self._plus_months(left.sql, amount), "date", raises=True)
            if left.type == "timestamp_ntz":
                return _Value(f"({left.sql} + to_months({amount}))", left.type, raises=True)
        if right.type == _DAYS and left.type == "date":
            return _Value(f"({left.sql} + CAST({amount} AS INTEGER))", "date", raises=True)
        if left.type == "timestamp_ntz":
            micros = amount if right.type == _MICROS else f"({amount} * 86400000000)"
            sql = f"({left.sql} + to_microseconds(CAST({micros} AS BIGINT)))"
            return _Value(sql, left.type, raises=True)
        if self._fixed_offset() == dt.timedelta(0):
            if right.type == _MONTHS:
                return _Value(f"({left.sql} + to_months({amount}))", "timestamp", raises=True)
            base = left if left.type == "timestamp" else self.cast(left, "timestamp")
            micros = amount if right.type == _MICROS else f"({amount} * 86400000000)"
            sql = f"({base.sql} + to_microseconds(CAST({micros} AS BIGINT)))"
            return _Value(sql, "timestamp", raises=True)
        raise _RefusedError(
            f"{shown}: a timestamp plus an interval outside UTC (Spark adds it to the "
            "local time of the session zone)"
        )


_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "<>": "<>"}


def _unwrapped(op: str, left: _Value, right: _Value) -> _Value | None:
    """Spark's UnwrapCastInBinaryComparison, where it decides the comparison before a row:
    an integral expression against a literal its type cannot hold (``CAST(m AS BIGINT) =
    1.5``, ``i > 1e10``) is FALSE (or TRUE) wherever the expression is not NULL, and FALSE
    unevaluated in predicate position; None where the rule does not decide it."""
    for target, literal, flipped in ((left, right, False), (right, left, True)):
        if target.is_literal or not literal.is_literal or target.type not in INTEGER_TYPES:
            continue
        if not _is_numeric(literal.type) or op not in _FLIPPED:
            continue
        value = literal.literal
        if isinstance(value, float) and math.isnan(value):
            return None
        if literal.type in ("float", "double") and target.type == "bigint":
            # Compared as DOUBLE, which does not hold every BIGINT: not an up-cast, so the
            # rule does not apply and Spark casts each row (measured: CAST(f AS BIGINT) =
            # 1e30 raises on an infinite f).
            return None
        low, high = -(1 << (_BITS[target.type] - 1)), (1 << (_BITS[target.type] - 1)) - 1
        above = value > high
        below = value < low
        if isinstance(value, float):
            fractional = not (above or below) and not value.is_integer()
        else:
            number = decimal.Decimal(value)
            fractional = number != number.to_integral_value()
        direction = _FLIPPED[op] if flipped else op
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
        return _Value(sql, "boolean", raises=target.raises, false_in_predicate=not truth)
    return None


_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
_UNKNOWN = object()
_TRUE = _Value("TRUE", "boolean", True, is_literal=True)
_FALSE = _Value("FALSE", "boolean", False, is_literal=True)
_NULL = _Value("NULL", "null", is_literal=True)


def _is_null(value: _Value) -> bool:
    return value.type == "null" and value.is_literal


def _truth(value: _Value) -> object:
    """True, False or None (NULL) for a constant condition; _UNKNOWN otherwise."""
    if _is_null(value):
        return None
    if value.is_literal and value.type == "boolean":
        return bool(value.literal)
    return _UNKNOWN


def _cast_error(sql: str, target: str) -> str:
    """An error naming the value, as Spark's CAST_INVALID_INPUT does."""
    quote = "''"
    return (
        f"error('[CAST_INVALID_INPUT] The value {quote}' || ({sql}) || '{quote} of the type "
        f"STRING cannot be cast to {target.upper()} because it is malformed')"
    )


def _error(message: str) -> str:
    return "error(" + _literal_sql(message, "string") + ")"


def _function_name(node: exp.Expression) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    if isinstance(node, exp.Func):
        return str(node.sql_name()).lower()
    return ""


_COMPARISONS: dict[type[exp.Expression], str] = {
    exp.EQ: "=",
    exp.NullSafeEQ: "IS NOT DISTINCT FROM",
    exp.NEQ: "<>",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
}
_DATE_PARTS: dict[type[exp.Expression], str] = {
    exp.Year: "year",
    exp.Month: "month",
    exp.Day: "day",
    exp.DayOfMonth: "day",
    exp.Quarter: "quarter",
    exp.DayOfWeek: "dayofweek",
    exp.DayOfYear: "dayofyear",
}
_TIME_PARTS: dict[type[exp.Expression], str] = {
    exp.Hour: "hour",
    exp.Minute: "minute",
    exp.Second: "second",
}


def _cast_node(self: _Translator, node: exp.Cast) -> _Value:
    target = spark_type_name(node.to)
    if target is None:
        raise _RefusedError(f"{node.sql(dialect='spark')} (a cast to {node.to.sql('spark')})")
    inner = self.value(node.this)
    return self.cast(inner, target, safe=bool(node.args.get("safe")))


_DISPATCH: dict[type[exp.Expression], Callable[[_Translator, Any], _Value]] = {
    exp.Column: _Translator.column,
    exp.Interval: _Translator.interval,
    exp.And: _Translator.and_,
    exp.Or: _Translator.or_,
    exp.Not: _Translator.not_,
    exp.Is: _Translator.is_,
    **dict.fromkeys(_COMPARISONS, _Translator.compare),
    exp.NullSafeNEQ: _Translator.distinct,
    exp.Between: _Translator.between,
    exp.In: _Translator.in_,
    exp.Like: _Translator.like,
    exp.ILike: _Translator.like,
    exp.Escape: _Translator.like,
    exp.RegexpLike: _Translator.rlike,
    exp.StartsWith: _Translator.starts_with,
    exp.EndsWith: _Translator.ends_with,
    exp.Contains: _Translator.contains,
    exp.Upper: _Translator.case_map,
    exp.Lower: _Translator.case_map,
    exp.Length: _Translator.length,
    exp.Substring: _Translator.substring,
    exp.Concat: _Translator.concat,
    exp.DPipe: _Translator.concat,
    exp.Add: _Translator.add_sub,
    exp.Sub: _Translator.add_sub,
    exp.Mul: _Translator.mul,
    exp.Div: _Translator.div,
    exp.IntDiv: _Translator.int_div,
    exp.Mod: _Translator.mod,
    exp.Neg: _Translator.neg,
    exp.Abs: _Translator.abs_,
    exp.Coalesce: _Translator.coalesce,
    exp.If: _Translator.if_,
    exp.Case: _Translator.case,
    exp.Nullif: _Translator.nullif,
    exp.IsNan: _Translator.is_nan,
    exp.TsOrDsToDate: _Translator.to_date,
    **dict.fromkeys(_DATE_PARTS, _Translator.date_part),
    **dict.fromkeys(_TIME_PARTS, _Translator.time_part),
    exp.DateDiff: _Translator.date_diff,
    exp.TsOrDsAdd: _Translator.date_add,
    exp.AddMonths: _Translator.add_months,
    exp.Cast: _cast_node,
    exp.TryCast: _cast_node,
}
_ANONYMOUS: dict[str, Callable[[_Translator, exp.Anonymous], _Value]] = {
    "isnull": _Translator.is_null_function,
    "isnotnull": _Translator.is_null_function,
}
# The nodes whose SQL names where a refusal stands (the smallest boolean around it).
_LOCATING = {
    _Translator.compare,
    _Translator.distinct,
    _Translator.between,
    _Translator.in_,
    _Translator.like,
    _Translator.rlike,
    _Translator.is_,
}
