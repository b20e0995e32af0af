"""``zorder query``'s rows, as wide as the terminal (:mod:`zorder.cli.fitting`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import RenderableType

from zorder.cli.fitting import FittedTable
from zorder.cli.render import text

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["rows_table"]

_ESCAPES = str.maketrans({"\n": "\\n", "\r": "\\r", "\t": "\\t"})


def _numeric(kind: pa.DataType) -> bool:
    import pyarrow as pa

    return bool(
        pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind)
    )


def rows_table(
    title: str, table: pa.Table, width: int, *, pinned: tuple[str, ...] = ()
) -> list[RenderableType]:
    """``table``'s rows within ``width`` cells, and a line naming the columns left out;
    the ``pinned`` columns (the filter's) are never left out."""
    columns = [
        [text(value).translate(_ESCAPES) for value in column.to_pylist()]
        for column in table.columns
    ]
    fitted = FittedTable(
        title,
        table.column_names,
        [list(row) for row in zip(*columns, strict=True)] if columns else [],
        right=frozenset(i for i, f in enumerate(table.schema) if _numeric(f.type)),
        hint="--columns picks which to show",
        pinned=frozenset(i for i, name in enumerate(table.column_names) if name in pinned),
    )
    return list(fitted.drawn(width))
