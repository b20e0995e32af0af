"""Which column a name a caller wrote means: one rule for every layer.

The rule, as Spark's case-insensitive analyzer applies it to a schema:

1. a column spelled exactly as ``name`` is that column;
2. else the one column equal to ``name`` ignoring case (``str.lower``);
3. else the name does not resolve: no column matches, or several columns
   that differ only in case do (``ID`` and ``Id`` for ``id``), and picking
   one of those would depend on their order, so none is picked.

The answer never depends on the order of the candidates. Where a name must
resolve, :func:`resolve_column` and :func:`resolve_columns` raise
:class:`~zorder.errors.ColumnNotFoundError`, naming the name, any ambiguous
candidates and every candidate; where a name that does not resolve is
simply left out (Delta's statistics columns property), :func:`match_column`
returns None.

Pure: imports nothing but :mod:`zorder.errors`.
"""

from __future__ import annotations

from collections.abc import Iterable

from zorder.errors import ColumnNotFoundError

__all__ = ["match_column", "resolve_column", "resolve_columns", "sql_identifier"]


def _matches(name: str, candidates: Iterable[str]) -> tuple[str, ...]:
    """The one column ``name`` means, or every column it might (none, or several)."""
    folded = name.lower()
    loose: dict[str, None] = {}  # insertion-ordered and deduplicated
    for candidate in candidates:
        if candidate == name:
            return (candidate,)
        if candidate.lower() == folded:
            loose[candidate] = None
    return tuple(loose)


def match_column(name: str, candidates: Iterable[str]) -> str | None:
    """The column among ``candidates`` that ``name`` means, or None if it resolves to none."""
    matches = _matches(name, candidates)
    return matches[0] if len(matches) == 1 else None


def resolve_column(
    name: str,
    candidates: Iterable[str],
    *,
    kind: str = "column",
    context: str | None = None,
    among: str = "table columns",
) -> str:
    """The column among ``candidates`` that ``name`` means, else ColumnNotFoundError.

    ``kind``, ``context`` and ``among`` only word the error:
    ``unknown {kind} 'name' {context}; {among}: a, b, c``.
    """
    return resolve_columns([name], candidates, kind=kind, context=context, among=among)[0]


def resolve_columns(
    names: Iterable[str],
    candidates: Iterable[str],
    *,
    kind: str = "column",
    context: str | None = None,
    among: str = "table columns",
) -> list[str]:
    """Each of ``names`` resolved among ``candidates``, in order (duplicates kept).

    Raises one ColumnNotFoundError for all the names that do not resolve, as
    :func:`resolve_column` words it.
    """
    listed = tuple(dict.fromkeys(candidates))
    resolved: list[str] = []
    unknown: list[str] = []
    ambiguous: list[tuple[str, tuple[str, ...]]] = []
    for name in names:
        matches = _matches(name, listed)
        if len(matches) == 1:
            resolved.append(matches[0])
        elif matches:
            ambiguous.append((name, matches))
        else:
            unknown.append(name)
    if unknown or ambiguous:
        raise ColumnNotFoundError(_message(kind, context, among, unknown, ambiguous, listed))
    return resolved


def _message(
    kind: str,
    context: str | None,
    among: str,
    unknown: list[str],
    ambiguous: list[tuple[str, tuple[str, ...]]],
    candidates: tuple[str, ...],
) -> str:
    where = f" {context}" if context else ""
    parts = []
    if unknown:
        plural = "s" if len(unknown) > 1 else ""
        parts.append(f"unknown {kind}{plural} {', '.join(map(repr, unknown))}{where}")
    for name, matches in ambiguous:
        parts.append(
            f"ambiguous {kind} {name!r}{where}: it matches {', '.join(map(repr, matches))}, "
            "which differ only in case; write one of them exactly"
        )
    parts.append(f"{among}: {', '.join(candidates)}")
    return "; ".join(parts)


def sql_identifier(name: str) -> str:
    """``name`` as one Spark SQL identifier: backquoted, a backquote in it doubled.

    >>> sql_identifier("a`b")
    '`a``b`'
    """
    return "`" + name.replace("`", "``") + "`"
