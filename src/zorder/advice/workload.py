"""A workload as users have it: filters, whole queries, or a ``.sql`` file of them.

Each statement becomes the filters that reach the table's scans: a query's
``WHERE`` (of every ``SELECT`` in it, subqueries included, each a scan of
its own) keeps the conjuncts that read only the table's columns and no
subquery; join conditions and other tables' columns drop out. A query whose
``WHERE`` reads the table but keeps no such conjunct scans everything
(``TRUE``); a statement that names none of the table's columns is left out,
as it never scans this table. A bare filter is taken as it is.

Columns are matched by name, qualifiers dropped: the statement's tables are
not known here, so another table's column of the same name (``id``) counts
as this table's.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from zorder.errors import FilterParseError, InvalidArgumentError
from zorder.skipping.clock import parse_with_clock
from zorder.skipping.sql import ParsedFilter

__all__ = ["Workload", "parsed_filters", "read_workload"]

_DIALECT = "spark"
_EVERYTHING = "TRUE"


@dataclass(frozen=True)
class Workload:
    """The table's filters, one per scan, each parsed once, and the statements that never
    scan the table."""

    filters: tuple[ParsedFilter, ...]
    statements: int
    left_out: int  # statements naming none of the table's columns

    @property
    def texts(self) -> tuple[str, ...]:
        return tuple(f.text for f in self.filters)


def read_workload(
    workload: str | Path | Sequence[str],
    columns: Iterable[str],
    *,
    time_zone: str = "UTC",
    now: dt.datetime | None = None,
) -> Workload:
    """The filters ``workload`` puts on a table of ``columns``, parsed once each with the
    clock pinned to ``now`` (default: this instant) in the session zone ``time_zone``.

    ``workload`` is a sequence of filters or SQL statements, or a path (``str``
    ending in ``.sql``, or a :class:`~pathlib.Path`) to a file of
    ``;``-separated statements. Each statement is parsed once.
    """
    columns = list(columns)
    names = {c.lower() for c in columns}
    statements = _statements(workload)
    texts: list[str] = []
    left_out = 0
    for text, tree in statements:
        found = _filters_of(text, tree, names)
        if found:
            texts.extend(found)
        else:
            left_out += 1
    if not texts:
        raise InvalidArgumentError(
            f"the workload has no filter on the table's columns ({', '.join(sorted(names))}): "
            f"{len(statements)} statement(s), none of them reads one"
        )
    return Workload(parsed_filters(texts, columns, time_zone, now), len(statements), left_out)


def parsed_filters(
    texts: Sequence[str], columns: Iterable[str], time_zone: str, now: dt.datetime | None = None
) -> tuple[ParsedFilter, ...]:
    """``texts`` as filters, parsed once per distinct text (one instant for them all)."""
    now = now if now is not None else dt.datetime.now(dt.UTC)
    columns = list(columns)
    parsed: dict[str, ParsedFilter] = {}
    for text in texts:
        if text not in parsed:
            parsed[text] = parse_with_clock(text, columns=columns, time_zone=time_zone, now=now)
    return tuple(parsed[text] for text in texts)


def _statements(workload: str | Path | Sequence[str]) -> list[tuple[str, exp.Expr]]:
    """Each statement's text and its tree, parsed once."""
    if isinstance(workload, Path) or (
        isinstance(workload, str) and workload.strip().lower().endswith(".sql")
    ):
        path = Path(workload)
        if not path.is_file():
            raise InvalidArgumentError(f"workload file {str(path)!r} does not exist")
        text = path.read_text()
        try:
            parsed = sqlglot.parse(text, read=_DIALECT)
        except ParseError as error:
            raise FilterParseError(
                f"workload file {str(path)!r} does not parse: {error}", text=text
            ) from None
        return [(p.sql(dialect=_DIALECT, comments=False), p) for p in parsed if p is not None]
    if isinstance(workload, str):
        raise InvalidArgumentError(
            "workload must be a sequence of filters or queries, or a path to a .sql file; "
            f"got the string {workload[:60]!r} (wrap one filter in a list)"
        )
    texts = list(workload)
    bad = [t for t in texts if not isinstance(t, str) or not t.strip()]
    if bad or not texts:
        raise InvalidArgumentError(
            f"workload must hold non-empty SQL strings, got {bad[0] if bad else 'nothing'!r}"
        )
    return [(text, _parsed(text)) for text in texts]


def _parsed(text: str) -> exp.Expr:
    try:
        return sqlglot.parse_one(text, read=_DIALECT)
    except ParseError as error:
        shown = text[:80]
        raise FilterParseError(
            f"workload statement {shown!r} does not parse: {error}", text=text
        ) from None


def _filters_of(text: str, tree: exp.Expr, names: set[str]) -> list[str]:
    if not _reads(tree, names):
        return []
    selects = list(tree.find_all(exp.Select))
    if not selects:
        return [text]  # a bare filter
    filters = []
    for select in selects:
        where = select.args.get("where")
        if where is None:
            continue
        own = [c for c in where.find_all(exp.Column) if c.find_ancestor(exp.Select) is select]
        if not any(c.name.lower() in names for c in own):
            continue  # this scan reads another table
        conjuncts = list(where.this.flatten()) if isinstance(where.this, exp.And) else [where.this]
        kept = [_unqualified(c) for c in conjuncts if _table_only(c, names)]
        filters.append(" AND ".join(f"({c})" for c in kept) if kept else _EVERYTHING)
    return filters or [_EVERYTHING]


def _reads(node: exp.Expr, names: set[str]) -> bool:
    """Does ``node`` name one of the table's columns anywhere?"""
    return any(c.name.lower() in names for c in node.find_all(exp.Column))


def _unqualified(node: exp.Expr) -> str:
    """``node`` as Spark SQL, its columns without table qualifiers (``l.x`` is ``x`` here)."""
    copy = node.copy()
    for column in copy.find_all(exp.Column):
        column.set("table", None)
        column.set("db", None)
        column.set("catalog", None)
    return str(copy.sql(dialect=_DIALECT))


def _table_only(node: exp.Expr, names: set[str]) -> bool:
    """A conjunct the table's statistics can use: its columns all the table's, no subquery."""
    if node.find(exp.Subquery, exp.Select, exp.Exists) is not None:
        return False
    columns = list(node.find_all(exp.Column))
    return bool(columns) and all(c.name.lower() in names for c in columns)
