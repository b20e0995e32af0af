"""Rows in a table as wide as the terminal, the way DuckDB's shell prints them.

When every column does not fit, the leading and trailing columns that do are
shown with a "…" column between them and the hidden ones named underneath;
a value wider than its column is cut with "…". Squeezing every column in
instead (rich's default) stacks each header's letters vertically and leaves
the rows unreadable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from zorder.cli.render import text

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["ELLIPSIS", "MAX_CELL_WIDTH", "FittedColumns", "fit_columns", "rows_table"]

ELLIPSIS = "…"
# Columns wider than this are cut first when not all fit: a timestamp with its zone
# (25 characters) stays whole, a long string gives way to more columns.
MAX_CELL_WIDTH = 30
_RULE = 1  # the table's left edge; each column adds its padding and right rule
_COLUMN_OVERHEAD = 3
_ESCAPES = str.maketrans({"\n": "\\n", "\r": "\\r", "\t": "\\t"})


@dataclass(frozen=True)
class FittedColumns:
    """Which columns a table shows, and how wide, within a width."""

    leading: tuple[int, ...]  # indices of the columns before the "…" column
    trailing: tuple[int, ...]  # after it
    hidden: tuple[int, ...]  # in its place; none: every column shows, no "…" column
    widths: dict[int, int]  # each shown column's width in cells


def _table_width(widths: Sequence[int]) -> int:
    return _RULE + sum(w + _COLUMN_OVERHEAD for w in widths)


def fit_columns(natural: Sequence[int], available: int) -> FittedColumns:
    """The columns of widths ``natural`` (header or widest value) to show in ``available`` cells.

    All of them at their natural width if they fit, else cut to
    :data:`MAX_CELL_WIDTH` if that fits; else columns taken from the left and
    the right in turn, as long as each fits beside a one-cell "…" column. Cells
    left over go back to the columns that were cut.
    """
    count = len(natural)
    if _table_width(natural) <= available:
        return FittedColumns(tuple(range(count)), (), (), dict(enumerate(natural)))
    capped = [min(w, MAX_CELL_WIDTH) for w in natural]
    if _table_width(capped) <= available:
        leading, trailing = list(range(count)), list[int]()
        budget = available - _table_width(capped)
    else:
        leading, trailing, budget = _ends(capped, available - _table_width([1]))
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


def _ends(capped: Sequence[int], budget: int) -> tuple[list[int], list[int], int]:
    """Leading and trailing columns that fit in ``budget`` cells in turn, and the cells left.

    A side whose next column does not fit takes no more; the other goes on, so
    one wide column does not leave the rest of the width empty.
    """
    leading: list[int] = []
    trailing: list[int] = []
    left, right = 0, len(capped) - 1
    sides = ["left", "right"]
    turn = 0
    while sides and left <= right:
        side = sides[turn % len(sides)]
        index = left if side == "left" else right
        need = capped[index] + _COLUMN_OVERHEAD
        if need > budget:
            sides.remove(side)
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


def _numeric(kind: pa.DataType) -> bool:
    import pyarrow as pa

    return bool(
        pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind)
    )


def rows_table(title: str, table: pa.Table, width: int) -> list[RenderableType]:
    """``table``'s rows within ``width`` cells, and a line naming the columns left out."""
    names = table.column_names
    columns = [
        [text(value).translate(_ESCAPES) for value in column.to_pylist()]
        for column in table.columns
    ]
    natural = [
        max([cell_len(name), *(cell_len(cell) for cell in cells)])
        for name, cells in zip(names, columns, strict=True)
    ]
    fitted = fit_columns(natural, width)
    shown = Table(title=Text(title))
    gap: tuple[None, ...] = (None,) if fitted.hidden else ()
    for i in (*fitted.leading, *gap, *fitted.trailing):
        if i is None:
            shown.add_column(ELLIPSIS, width=1, no_wrap=True, justify="center")
            continue
        shown.add_column(
            Text(names[i]),
            width=fitted.widths[i],
            no_wrap=True,
            overflow="ellipsis",
            justify="right" if _numeric(table.schema.field(i).type) else "left",
        )
    for row in range(table.num_rows):
        cells = [Text(columns[i][row]) for i in fitted.leading]
        if fitted.hidden:
            cells.append(Text(ELLIPSIS))
        cells += [Text(columns[i][row]) for i in fitted.trailing]
        shown.add_row(*cells)
    if not fitted.hidden:
        return [shown]
    hidden = [names[i] for i in fitted.hidden]
    return [
        shown,
        Text(
            f"{ELLIPSIS} {len(hidden)} more column{'s' if len(hidden) != 1 else ''}: "
            f"{', '.join(hidden)} (--columns picks which to show)"
        ),
    ]
