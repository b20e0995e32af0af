"""Tables as wide as the terminal, the way DuckDB's shell prints them.

When every column does not fit, the columns that do are shown (the leading
and trailing ones in turn, or only the leading ones when they matter most)
with a "…" column where the others were, and the hidden ones named
underneath; a value wider than its column is cut with "…", never wrapped.
Squeezing every column in instead (rich's default) folds values across lines
and stacks each header's letters vertically, which leaves the rows unreadable.
The width is the console's when the table is drawn.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

__all__ = ["ELLIPSIS", "MAX_CELL_WIDTH", "FittedColumns", "FittedTable", "Keep", "fit_columns"]

ELLIPSIS = "…"
# Columns wider than this are cut first when not all fit: a timestamp with its zone
# (25 characters) stays whole, a long string gives way to more columns.
MAX_CELL_WIDTH = 30
_RULE = 1  # the table's left edge; each column adds its padding and right rule
_COLUMN_OVERHEAD = 3

# Which columns stay when not all fit: from both ends in turn (rows of a query, whose
# last columns are as telling as the first), or from the left (the first matter most).
Keep = Literal["ends", "leading"]


@dataclass(frozen=True)
class FittedColumns:
    """Which columns a table shows, and how wide, within a width."""

    leading: tuple[int, ...]  # indices of the columns before the "…" column
    trailing: tuple[int, ...]  # after it
    hidden: tuple[int, ...]  # in its place; none: every column shows, no "…" column
    widths: dict[int, int]  # each shown column's width in cells


def _table_width(widths: Sequence[int]) -> int:
    return _RULE + sum(w + _COLUMN_OVERHEAD for w in widths)


def fit_columns(natural: Sequence[int], available: int, *, keep: Keep = "ends") -> FittedColumns:
    """The columns of widths ``natural`` (header or widest value) to show in ``available`` cells.

    All of them at their natural width if they fit, else cut to
    :data:`MAX_CELL_WIDTH` if that fits; else columns taken as ``keep`` says, as
    long as each fits beside a one-cell "…" column. Cells left over go back to
    the columns that were cut.
    """
    count = len(natural)
    if _table_width(natural) <= available:
        return FittedColumns(tuple(range(count)), (), (), dict(enumerate(natural)))
    capped = [min(w, MAX_CELL_WIDTH) for w in natural]
    if _table_width(capped) <= available:
        leading, trailing = list(range(count)), list[int]()
        budget = available - _table_width(capped)
    else:
        sides = ("left", "right") if keep == "ends" else ("left",)
        leading, trailing, budget = _ends(capped, available - _table_width([1]), sides)
    if not leading and not trailing:  # narrower than any column: the first, cut to fit
        capped[0] = max(1, budget - _COLUMN_OVERHEAD)
        leading, budget = [0], 0
    widths = {i: capped[i] for i in (*leading, *trailing)}
    cut = [i for i in widths if widths[i] < natural[i]]
    while budget > 0 and cut:
        for i in list(cut):
            if budget == 0:
                break
            widths[i] += 1
            budget -= 1
            if widths[i] == natural[i]:
                cut.remove(i)
    hidden = tuple(range(len(leading), trailing[0] if trailing else count))
    return FittedColumns(tuple(leading), tuple(trailing), hidden, widths)


def _ends(
    capped: Sequence[int], budget: int, sides: Sequence[str]
) -> tuple[list[int], list[int], int]:
    """Leading and trailing columns that fit in ``budget`` cells, taken from ``sides`` in
    turn, and the cells left.

    A side whose next column does not fit takes no more; the other goes on, so
    one wide column does not leave the rest of the width empty.
    """
    leading: list[int] = []
    trailing: list[int] = []
    left, right = 0, len(capped) - 1
    open_sides = list(sides)
    turn = 0
    while open_sides and left <= right:
        side = open_sides[turn % len(open_sides)]
        index = left if side == "left" else right
        need = capped[index] + _COLUMN_OVERHEAD
        if need > budget:
            open_sides.remove(side)
            continue
        budget -= need
        turn += 1
        if side == "left":
            leading.append(index)
            left += 1
        else:
            trailing.insert(0, index)
            right -= 1
    return leading, trailing, budget


@dataclass(frozen=True)
class FittedTable:
    """Rows of text cells drawn within the console's width (see the module's docstring).

    ``right`` holds the indices of the columns aligned right (numbers); ``hint``
    follows the line naming hidden columns, to say how to choose them.
    """

    title: str
    names: Sequence[str]
    rows: Sequence[Sequence[str]]
    right: frozenset[int] = field(default_factory=frozenset)
    keep: Keep = "ends"
    hint: str = ""
    pinned: frozenset[int] = field(default_factory=frozenset)  # never hidden

    def fitted(self, width: int) -> FittedColumns:
        natural = [
            max([cell_len(name), *(cell_len(row[i]) for row in self.rows)])
            for i, name in enumerate(self.names)
        ]
        return fit_columns(natural, width, keep=self.keep)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self.drawn(options.max_width)

    def drawn(self, width: int) -> Iterator[Table | Text]:
        """The table within ``width`` cells, then the line naming what it hides, if any.

        A pinned column that would be hidden moves to the front, and the table is fitted
        again: a query's filtered column is never the one left out.
        """
        fitted = self.fitted(width)
        if self.pinned & set(fitted.hidden):
            yield from self._pinned_first().drawn(width)
            return
        shown = Table(title=Text(self.title))
        gap: tuple[None, ...] = (None,) if fitted.hidden else ()
        for i in (*fitted.leading, *gap, *fitted.trailing):
            if i is None:
                shown.add_column(ELLIPSIS, width=1, no_wrap=True, justify="center")
                continue
            shown.add_column(
                Text(self.names[i]),
                width=fitted.widths[i],
                no_wrap=True,
                overflow="ellipsis",
                justify="right" if i in self.right else "left",
            )
        for row in self.rows:
            cells = [Text(row[i]) for i in fitted.leading]
            if fitted.hidden:
                cells.append(Text(ELLIPSIS))
            cells += [Text(row[i]) for i in fitted.trailing]
            shown.add_row(*cells)
        yield shown
        if fitted.hidden:
            hidden = [self.names[i] for i in fitted.hidden]
            plural = "s" if len(hidden) != 1 else ""
            hint = f" ({self.hint})" if self.hint else ""
            yield Text(f"{ELLIPSIS} {len(hidden)} more column{plural}: {', '.join(hidden)}{hint}")

    def _pinned_first(self) -> FittedTable:
        order = sorted(range(len(self.names)), key=lambda i: i not in self.pinned)
        moved = {old: new for new, old in enumerate(order)}
        return FittedTable(
            self.title,
            [self.names[i] for i in order],
            [[row[i] for i in order] for row in self.rows],
            right=frozenset(moved[i] for i in self.right),
            keep="leading",
            hint=self.hint,
        )
