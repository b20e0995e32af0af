"""The translator of a Spark filter to DuckDB SQL: the tree walked, each node to its rule.

:func:`zorder.skipping.translate.translate` hands the parsed filter to a
:class:`Translator`, which folds the constant subtrees as Spark does (by the fold rules
of the same table), resolves the columns and decides what is a condition; every other
node goes to the SQL rule of its function, operator or cast in the one table of
:mod:`zorder.skipping.functions`. Nodes without one are refused, named.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from sqlglot import exp

from zorder.errors import ColumnNotFoundError
from zorder.skipping.casts import cast_to
from zorder.skipping.coercion import ComputedLiteral, decimal_shape
from zorder.skipping.constants import FoldContext, NotConstantError, constant
from zorder.skipping.functions import lookup
from zorder.skipping.logic import junction
from zorder.skipping.nodes import TypedLiteral
from zorder.skipping.pushdown import quoted_name
from zorder.skipping.spark_functions import NONDETERMINISTIC
from zorder.skipping.sql_values import (
    DUCK_TYPES,
    FALSE,
    RefusedError,
    Value,
    literal_sql,
    truth_of,
)
from zorder.skipping.zones import SESSION_ZONE, is_utc, session_zone

# Spark's non-deterministic functions (its own list, generated), and those whose answer is
# the session's or a JVM's rather than the row's: never folded, never translated.
_NONDETERMINISTIC = NONDETERMINISTIC | {"current_user", "try_reflect"}


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
        if isinstance(node, exp.Column):
            return self.column(node)
        function = lookup(node)
        rule = None if function is None else function.sql
        try:
            return self._other(node) if rule is None else rule(self, node)
        except RefusedError as refused:
            if not refused.located and function is not None and function.locates:
                refused.what = f"{refused.what} in {node.sql(dialect='spark')}"
                refused.located = True
            raise

    def _folded(self, node: exp.Expression) -> Value | None:
        if self._nondeterministic(node) is not None:
            return None
        try:
            literal = self.constant(node)
        except NotConstantError:
            return None
        if literal is None:
            return Value("NULL", "null", is_literal=True)
        value, type_name = literal.value, literal.type
        if isinstance(value, dt.datetime) and value.tzinfo is SESSION_ZONE:
            value = value.replace(tzinfo=self.zone, fold=0)
        if type_name not in DUCK_TYPES and decimal_shape(type_name) is None:
            return None
        # Spark's analyzer types a computed integer (1 + 1) by its type, a literal by its digits.
        written: bool | None = True
        if isinstance(literal, ComputedLiteral):
            written = None if literal.maybe_literal else False
        sql = literal_sql(value, type_name)
        return Value(sql, type_name, value, is_literal=True, written=written)

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

    # -- casts -----------------------------------------------------------------------------

    def constant(self, node: exp.Expression) -> TypedLiteral | None:
        """``node`` folded as Spark folds it (None for NULL); NotConstantError otherwise."""
        return constant(node, self.context)

    def cast(self, value: Value, target: str, *, safe: bool = False) -> Value:
        """``CAST(value AS target)`` as ANSI Spark computes it (``safe``: TRY_CAST)."""
        return cast_to(self, value, target, safe=safe)

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
            return junction(self, node, predicate)
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
