"""SQL boolean text parsed once with sqlglot (Spark's dialect) into a :class:`ParsedFilter`,
from whose one tree the folded and unfolded predicate trees (unbound) are both derived."""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import functools
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ParseError, TokenError

from zorder.errors import FilterParseError, InvalidArgumentError, InvalidArgumentTypeError
from zorder.skipping.ansi import as_ansi_off, check_same_in_ansi_modes, mode_dependent_atoms
from zorder.skipping.coercion import number_literal
from zorder.skipping.constants import FoldContext, NotConstantError, constant, spark_type_name
from zorder.skipping.guard import check_filter
from zorder.skipping.lexical import (
    check_interval_units,
    negative_edge_literals,
    shown,
    unary_plus_literals,
)
from zorder.skipping.monotone import COMPARISONS, monotone_comparison, monotone_conjuncts
from zorder.skipping.monotone_times import record_unit_spellings
from zorder.skipping.parts import part_comparison
from zorder.skipping.predicates import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    CompareOp,
    Comparison,
    InList,
    IsNaN,
    IsNull,
    Not,
    NullComparison,
    Or,
    Predicate,
    StartsWith,
    TypedLiteral,
    Unknown,
    and_,
    flip,
    not_,
    or_,
)

__all__ = [
    "ParsedFilter",
    "parse_filter",
    "parse_predicate",
    "parse_unfolded",
    "referenced_columns",
    "sql_literal",
]


@dataclass(frozen=True, eq=False)
class ParsedFilter:
    """A filter's text parsed once (Spark's dialect, checked): every reader of the filter
    (skipping, the row evaluator, the translation to DuckDB) derives its tree from this.

    ``tree`` is sqlglot's, never changed once parsed; ``context`` is the session's zone
    and the query's instant the constants fold in (None: what depends on them stays
    unfolded).
    """

    text: str
    tree: exp.Expression
    context: FoldContext | None = None
    # The text as given, before its clock was pinned (see zorder.skipping.clock): what a
    # plan in another zone pins again. None: ``text`` is as given.
    given: str | None = None
    # The trees converted from ``tree``, kept: predicate trees are frozen, and a filter is
    # planned again (another zone, another version) without converting it again.
    _converted: dict[object, Predicate] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def predicate(
        self, *, ansi_off: Mapping[str, str] | None = None, cast_strings: bool = True
    ) -> Predicate:
        """The unbound predicate tree, folded: what file skipping evaluates.

        Anything that parses but that statistics cannot decide becomes
        :class:`Unknown` (never an error, never a wrong skip). Constant
        subexpressions are computed as Spark computes them
        (:mod:`zorder.skipping.constants`), with ANSI mode on. ``ansi_off``, the
        table's column types, reads the filter as a session with ANSI mode off
        does: each part whose meaning may differ between the modes
        (:mod:`zorder.skipping.ansi`) becomes :class:`Unknown`.
        """
        key = (
            "folded",
            None if ansi_off is None else tuple(sorted(ansi_off.items())),
            cast_strings,
        )
        if key not in self._converted:
            differs = None if ansi_off is None else mode_dependent_atoms(ansi_off, self.context)
            converter = _Converter(fold=True, context=self.context, differs=differs)
            rewritten = ansi_off is not None and cast_strings
            tree = self.ansi_off_tree(ansi_off) if rewritten and ansi_off else self.tree
            self._converted[key] = converter.convert(tree)
        return self._converted[key]

    def ansi_off_tree(self, columns: Mapping[str, str]) -> exp.Expression:
        """The tree as a session with ANSI mode off reads it against a table of
        ``columns``, spelled with ANSI's meaning where that is known exactly
        (:func:`~zorder.skipping.ansi.as_ansi_off`: strings compared with dates,
        timestamps, numbers and booleans cast as ANSI off casts them)."""
        return as_ansi_off(self.tree, columns, self.context)

    def check_ansi_off(self, columns: Mapping[str, str]) -> None:
        """UnsupportedFilterError naming the part of the filter whose meaning differs
        between ANSI mode on and off, against a table of ``columns``, once read as
        :meth:`ansi_off_tree` reads it."""
        check_same_in_ansi_modes(self.ansi_off_tree(columns), columns, self.context)

    def for_ansi_off(
        self, columns: Mapping[str, str], *, cast_strings: bool = True
    ) -> ParsedFilter:
        """This filter as an evaluator with ANSI's rules answers it for a session with ANSI
        mode off, against a table of ``columns``: its tree read as :meth:`ansi_off_tree`
        reads it, the text as given (for errors). UnsupportedFilterError naming a part
        whose meaning with ANSI off is not known exactly here. ``cast_strings=False`` (a
        Spark 3.5 session with ANSI on, whose strings are cast otherwise) leaves the tree as
        written: every string compared with another type is then mode-dependent."""
        tree = self.ansi_off_tree(columns) if cast_strings else self.tree
        check_same_in_ansi_modes(tree, columns, self.context)
        return ParsedFilter(self.text, tree, self.context, self.given)

    def unfolded(self) -> Predicate:
        """:meth:`predicate` without folding: every leaf of the text stays in the tree.

        Folding drops what cannot change which files may match (``x AND FALSE``
        is FALSE whatever ``x`` is); a row evaluator that must refuse what it
        cannot answer exactly has to see every leaf. (Constant subexpressions
        are still computed: that changes no row.)
        """
        if "unfolded" not in self._converted:
            converter = _Converter(fold=False, context=self.context)
            self._converted["unfolded"] = converter.convert(self.tree)
        return self._converted["unfolded"]

    @functools.cached_property
    def columns(self) -> frozenset[str]:
        """The names of every column the filter refers to."""
        return frozenset(str(column.name) for column in self.tree.find_all(exp.Column))


def parse_filter(text: str, *, context: FoldContext | None = None) -> ParsedFilter:
    """``text``, a Spark SQL boolean expression, parsed and checked once.

    Raises :class:`~zorder.errors.FilterParseError`, with the line and column,
    for text that does not parse. ``context`` names the session's zone and the
    query's instant, without which the clock's functions stay unfolded.
    """
    return ParsedFilter(text, _parse(text), context)


def parse_predicate(text: str, *, context: FoldContext | None = None) -> Predicate:
    """``parse_filter(text, context=context).predicate()``: the folded unbound tree."""
    return parse_filter(text, context=context).predicate()


def parse_unfolded(text: str, *, context: FoldContext | None = None) -> Predicate:
    """``parse_filter(text, context=context).unfolded()``: every leaf kept."""
    return parse_filter(text, context=context).unfolded()


def referenced_columns(text: str) -> set[str]:
    """The names of every column the SQL boolean expression ``text`` refers to."""
    return set(parse_filter(text).columns)


def _parse(text: str) -> exp.Expression:
    if not isinstance(text, str) or not text.strip():
        raise InvalidArgumentError(f"filter must be non-empty SQL text, got {text!r}")
    try:
        with _deep_recursion():
            # Tokenized once: the parser reads these tokens, and the checks below the text's.
            tokens = _SPARK.tokenize(text)
            trees = _SPARK.parser().parse(tokens, text)
        if not trees or trees[0] is None:
            raise ParseError(f"No expression was parsed from {text!r}")
        tree = exp.Block(expressions=trees) if len(trees) > 1 else trees[0]
    except ParseError as error:
        raise _syntax_error(text, error.errors[0] if error.errors else {}) from None
    except TokenError:
        raise FilterParseError(
            f"syntax error in filter {text!r}: a quote (' \" or `) is not closed", text=text
        ) from None
    if not isinstance(tree, exp.Expression):
        raise FilterParseError(f"filter {text!r} is not an expression", text=text)
    tree = _balanced(tree)
    depth = _depth(tree)
    if depth > MAX_NESTING:
        raise FilterParseError(
            f"cannot plan filter {shown(text)}: it nests {depth} levels deep (parentheses, "
            f"NOTs, function calls); at most {MAX_NESTING} are accepted. Long AND/OR chains "
            "are fine at any length",
            text=text,
        )
    check_filter(tree, text)  # subqueries, UDFs, reflection...: refused before any engine
    check_interval_units(tokens, text)  # what the tree no longer tells: units and suffixes
    record_unit_spellings(tree, tokens)  # date_trunc's and trunc's units as written
    tree = negative_edge_literals(tree, tokens, text)
    tree = unary_plus_literals(tree, tokens)
    for identifier in tree.find_all(exp.Identifier):
        name = str(identifier.this)
        if not identifier.quoted and not _PLAIN_IDENTIFIER.fullmatch(name):
            # Spark's lexer takes only ASCII letters, digits and _ in an unquoted name.
            raise FilterParseError(
                f"cannot parse filter {text!r}: the name {name} must be quoted as `{name}` "
                "(Spark reads only ASCII letters, digits and _ in unquoted names)",
                text=text,
            )
    for dot in tree.find_all(exp.Dot):
        if isinstance(dot.this, exp.Literal) and not dot.this.is_string:
            # 10.1.2.3: Spark reads the numbers 10.1, .2 and .3 side by side.
            written = f"{dot.this.this}.{dot.expression.sql()}"
            near = "." + str(dot.expression.sql()).split(".")[0]
            raise FilterParseError(
                f"syntax error in filter {text!r} at or near {near!r}: a number has one "
                f"decimal point at most (text such as an IP address is quoted: '{written}')",
                text=text,
            )
    for number in tree.find_all(exp.Literal):
        if not number.is_string:
            try:
                number_literal(str(number.this))
            except ValueError as error:
                message = f"cannot parse filter {text!r}: {error}"
                raise FilterParseError(message, text=text) from None
    return tree


def _syntax_error(text: str, detail: dict[str, Any]) -> FilterParseError:
    """sqlglot's parse error as Spark words one: a syntax error at or near a token, where."""
    line, column = detail.get("line"), detail.get("col")
    description = str(detail.get("description", ""))
    at_end = not str(detail.get("end_context", "")).strip() and description.startswith(
        ("Required keyword", "Expecting", "Expected")
    )
    near = "end of input" if at_end or not detail.get("highlight") else repr(detail["highlight"])
    if at_end:
        column = len(text.splitlines()[-1]) if text.splitlines() else column
    hint = f" ({description})" if description.startswith("Expecting") else ""
    where = f" (line {line}, column {column})" if line is not None else ""
    return FilterParseError(
        f"syntax error in filter {text!r} at or near {near}{where}{hint}",
        text=text,
        line=line,
        column=column,
    )


_SPARK = Spark()
_PLAIN_IDENTIFIER = re.compile(r"[A-Za-z0-9_]+")

MAX_NESTING = 200
"""How deep a filter's expression tree may nest (a balanced AND/OR chain counts by its
logarithm): every walk over the tree recurses, and Python's stack is finite."""


@contextlib.contextmanager
def _deep_recursion() -> Iterator[None]:
    """sqlglot's parser recurses a few dozen frames per parenthesis: lift Python's limit for
    the parse alone (the tree is then checked against :data:`MAX_NESTING`)."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, 50_000))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def _balanced(tree: exp.Expression) -> exp.Expression:
    """``tree`` with every chain of ANDs (or of ORs) rebuilt as a balanced tree.

    sqlglot parses ``a OR b OR c ...`` as a left-deep chain, as deep as it is
    long; the same terms balanced are as deep as its logarithm, and mean the
    same (AND and OR are associative, NULLs included). Iterative, since the
    chain may be thousands deep.
    """
    stack: list[exp.Expression] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, exp.And | exp.Or):
            terms = _chain(node)
            rebuilt = _rebuild(type(node), terms)
            if rebuilt is not node:
                if node is tree:
                    tree = rebuilt
                else:
                    node.replace(rebuilt)
            stack.extend(terms)
        else:
            stack.extend(node.iter_expressions())
    return tree


def _chain(node: exp.And | exp.Or) -> list[exp.Expression]:
    """The terms of the chain of ``type(node)`` under ``node``, left to right."""
    terms: list[exp.Expression] = []
    pending: list[exp.Expression] = [node]
    while pending:
        item = pending.pop()
        if type(item) is type(node):
            pending.append(item.expression)
            pending.append(item.this)
        else:
            terms.append(item)
    return terms


def _rebuild(kind: type[exp.And | exp.Or], terms: list[exp.Expression]) -> exp.Expression:
    level = [term.pop() if term.parent is not None else term for term in terms]
    while len(level) > 1:
        paired = [kind(this=a, expression=b) for a, b in zip(level[::2], level[1::2], strict=False)]
        level = paired + ([level[-1]] if len(level) % 2 else [])
    return level[0]


def _depth(tree: exp.Expression) -> int:
    deepest = 0
    stack: list[tuple[exp.Expression, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in node.iter_expressions())
    return deepest


def _column_name(node: exp.Expression) -> str | None:
    if isinstance(node, exp.Column) and not node.table:
        return str(node.name)
    if isinstance(node, exp.Paren):
        return _column_name(node.this)
    return None


def _cast_column(node: exp.Expression) -> tuple[str, str | None] | None:
    """(column, cast type or None) for ``col`` or ``CAST(col AS type)``."""
    name = _column_name(node)
    if name is not None:
        return name, None
    if isinstance(node, exp.Paren):
        return _cast_column(node.this)
    if isinstance(node, exp.Cast):  # Spark SQL CAST parses as TryCast: both fine here
        inner = _column_name(node.this)
        if inner is not None:
            return inner, spark_type_name(node.to) or node.to.sql(dialect="spark").lower()
    return None


class _Converter:
    """sqlglot's tree to a predicate tree; ``fold`` simplifies ``x AND FALSE`` and the like."""

    def __init__(
        self,
        *,
        fold: bool,
        context: FoldContext | None,
        differs: Callable[[exp.Expression], str | None] | None = None,
    ) -> None:
        self.fold = fold
        self.context = context
        # Names the part of an atom whose meaning differs with ANSI off (then Unknown).
        self.differs = differs

    def constant(self, node: exp.Expression) -> TypedLiteral | None:
        """The literal ``node`` stands for (None for NULL); NotConstantError otherwise."""
        return constant(node, self.context)

    def convert(self, node: exp.Expression) -> Predicate:
        if self.differs is not None and not isinstance(
            node, exp.Paren | exp.Not | exp.And | exp.Or
        ):
            part = self.differs(node)
            if part is not None:
                return Unknown(f"{part} means another thing with ANSI mode off")
        converted = self._convert_node(node)
        if isinstance(converted, Unknown) and not isinstance(
            node, exp.Paren | exp.Not | exp.And | exp.Or
        ):
            # Name the construct: the reason alone does not say which part of a long filter.
            return Unknown(f"{converted.reason} ({node.sql(dialect='spark')})")
        return converted

    def comparison(self, op: CompareOp, left: exp.Expression, right: exp.Expression) -> Predicate:
        for side, constant_side, side_op in ((left, right, op), (right, left, flip(op))):
            try:
                value = self.constant(constant_side)
            except NotConstantError:
                continue
            if value is not None:  # f(c) <=> NULL is not always c IS NULL: left as before
                zone = self.context.zone if self.context is not None else None
                rewritten = monotone_comparison(side_op, side, value, self.constant, zone=zone)
                if rewritten is not None:
                    return rewritten
                part = part_comparison(side_op, side, value)
                if part is not None:
                    return part
            break
        target, other = _cast_column(left), right
        if target is None:
            target, other, op = _cast_column(right), left, flip(op)
        if target is None:
            return Unknown("comparison without a plain column on one side")
        column, cast = target
        try:
            value = self.constant(other)
        except NotConstantError:
            return Unknown("comparison with something other than a literal")
        if value is None:
            if cast is not None:  # Spark may refuse the cast itself: binding must see it
                return Unknown("a cast column compared with NULL")
            if op == "<=>":
                return IsNull(column)
            return NullComparison(op, column)  # NULL for every row, and so is its NOT
        return Comparison(op, column, value, cast)

    def like(self, node: exp.Like) -> Predicate:
        column = _column_name(node.this)
        if column is None or node.args.get("escape") is not None:
            return Unknown("LIKE on an expression or with ESCAPE")
        try:
            pattern = self.constant(node.expression)
        except NotConstantError:
            return Unknown("LIKE with a non-literal pattern")
        if pattern is None or not isinstance(pattern.value, str):
            return Unknown("LIKE with a non-string pattern")
        text = pattern.value
        body = text[:-1] if text.endswith("%") else text
        if any(c in body for c in "%_\\"):
            return Unknown("LIKE pattern with inner wildcards")
        if text.endswith("%"):
            return StartsWith(column, body)
        # LIKE compares strings: a column of another type is cast to one, which binding refuses.
        return Comparison("=", column, TypedLiteral(body, "string"), cast="string")

    def _convert_node(self, node: exp.Expression) -> Predicate:
        both, either, negation = (and_, or_, not_) if self.fold else (And, Or, Not)
        if node.args.get("negate"):  # x NOT LIKE p, x NOT ILIKE p: sqlglot flags the node
            positive = node.copy()
            positive.set("negate", None)
            return negation(self.convert(positive))
        if isinstance(node, exp.Paren):
            return self.convert(node.this)
        if isinstance(node, exp.And):
            # A chain read as one (month(c) under year(c) = Y) only where all of it means
            # the same in both ANSI modes; else term by term.
            whole = self.differs is None or self.differs(node) is None
            recognised, remaining = (
                monotone_conjuncts(_chain(node), self.constant) if whole else ([], [])
            )
            if recognised:  # month(c) / quarter(c) read under the chain's year(c) = Y
                level = [*recognised, *(self.convert(term) for term in remaining)]
                while len(level) > 1:  # balanced, as the chain was
                    pairs = zip(level[::2], level[1::2], strict=False)
                    level = [both(a, b) for a, b in pairs] + ([level[-1]] if len(level) % 2 else [])
                return level[0]
            return both(self.convert(node.this), self.convert(node.expression))
        if isinstance(node, exp.Or):
            return either(self.convert(node.this), self.convert(node.expression))
        if isinstance(node, exp.Not):
            return negation(self.convert(node.this))
        if isinstance(node, exp.Boolean):
            return AlwaysTrue() if node.this else AlwaysFalse()
        op = COMPARISONS.get(type(node))
        if op is not None:
            return self.comparison(op, node.this, node.expression)
        if isinstance(node, exp.NullSafeNEQ):  # x IS DISTINCT FROM v
            return negation(self.comparison("<=>", node.this, node.expression))
        if isinstance(node, exp.Between):
            return both(
                self.comparison(">=", node.this, node.args["low"]),
                self.comparison("<=", node.this, node.args["high"]),
            )
        if isinstance(node, exp.In):
            return self._in_list(node)
        if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
            column = _column_name(node.this)
            return IsNull(column) if column is not None else Unknown("IS NULL on an expression")
        if isinstance(node, exp.Like):
            return self.like(node)
        if isinstance(node, exp.StartsWith):
            return self._starts_with(node)
        if isinstance(node, exp.IsNan):
            column = _column_name(node.this)
            return IsNaN(column) if column is not None else Unknown("isnan on an expression")
        return Unknown(f"{type(node).__name__} is not understood by statistics")

    def _in_list(self, node: exp.In) -> Predicate:
        target = _cast_column(node.this)
        if (target is None or target[1] is not None) and node.args.get("query") is None:
            # f(c) IN (...): each value rewritten on c (a cast such as CAST(ts AS DATE) too)
            found = self._function_in_list(node) if node.expressions else None
            if target is None or not isinstance(found, Unknown | None):
                return found if found is not None else Unknown("IN on an expression")
        if target is None or node.args.get("query") is not None:
            return Unknown("IN on an expression or a subquery")
        listed, cast = target
        try:
            values = [self.constant(v) for v in node.expressions]
        except NotConstantError:
            return Unknown("IN list with non-literals")
        present = tuple(v for v in values if v is not None)
        return InList(listed, present, has_null=len(present) < len(values), cast=cast)

    def _function_in_list(self, node: exp.In) -> Predicate:
        """``f(c) IN (v, ...)`` as ``f(c) = v OR ...`` where each equality is rewritten on
        ``c`` (:mod:`zorder.skipping.monotone`); a NULL in the list is NULL on every row,
        as in Spark (TRUE where another value matches, never FALSE)."""
        either = or_ if self.fold else Or
        column = next(node.this.find_all(exp.Column), None)
        terms: list[Predicate] = []
        for listed in node.expressions:
            try:
                value = self.constant(listed)
            except NotConstantError:
                return Unknown("IN list with non-literals")
            zone = self.context.zone if self.context is not None else None
            if value is None:
                if column is None:
                    return Unknown("IN on an expression")
                terms.append(NullComparison("=", str(column.name)))
                continue
            rewritten = monotone_comparison(
                "=", node.this, value, self.constant, zone=zone
            ) or part_comparison("=", node.this, value)
            if rewritten is None:
                return Unknown("IN on an expression or a subquery")
            terms.append(rewritten)
        if all(isinstance(term, NullComparison) for term in terms):
            return Unknown("IN on an expression")  # no value read f: leave it to Spark
        while len(terms) > 1:  # balanced: a long list nests as deep as its logarithm
            pairs = zip(terms[::2], terms[1::2], strict=False)
            terms = [either(a, b) for a, b in pairs] + ([terms[-1]] if len(terms) % 2 else [])
        return terms[0]

    def _starts_with(self, node: exp.StartsWith) -> Predicate:
        column = _column_name(node.this)
        try:
            prefix = self.constant(node.expression)
        except NotConstantError:
            return Unknown("startswith with a non-literal prefix")
        if column is None or prefix is None or not isinstance(prefix.value, str):
            return Unknown("startswith on an expression")
        return StartsWith(column, prefix.value)


def sql_literal(value: Any) -> str:
    """Spark SQL text for a Python value, such that parsing it gives the value back."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            word = "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
            return f"CAST('{word}' AS DOUBLE)"
        # In exponent form Spark reads the text as a DOUBLE itself; `1.5D` parses as a cast
        # of a decimal, which Spark may round another way (coercion._double_of_decimal).
        shown = repr(value)
        return shown if "e" in shown else f"{shown}e0"
    if isinstance(value, decimal.Decimal):
        return f"{value}BD"
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:  # with its offset: Spark then ignores the session zone
            utc = value.astimezone(dt.UTC).replace(tzinfo=None)
            return f"TIMESTAMP'{utc.isoformat(sep=' ', timespec='microseconds')}+00:00'"
        return f"TIMESTAMP_NTZ'{value.isoformat(sep=' ', timespec='microseconds')}'"
    if isinstance(value, dt.date):
        return f"DATE'{value.isoformat()}'"
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, bytes):
        return f"X'{value.hex()}'"
    raise InvalidArgumentTypeError(f"no SQL literal for {type(value).__name__} {value!r}")
