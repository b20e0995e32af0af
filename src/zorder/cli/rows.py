"""``zorder query``'s rows, as wide as the terminal (:mod:`zorder.cli.fitting`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import RenderableType

from zorder.cli.fitting import FittedTable
from zorder.cli.render import text

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["in_zone", "rows_table"]

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


def in_zone(table: pa.Table, time_zone: str) -> pa.Table:
    """``table`` with its timestamps (with a zone: instants) shown in ``time_zone``, a
    session's zone (a region, UTC, or an offset): the same instants, at any depth of
    structs, lists and maps. Timestamps without a zone (``timestamp_ntz``) are wall clocks,
    shown as they are."""
    import pyarrow as pa

    zone = _arrow_zone(time_zone)
    shown = pa.schema([field.with_type(_in_zone(field.type, zone)) for field in table.schema])
    return table if shown == table.schema else table.cast(shown)


def _arrow_zone(time_zone: str) -> str:
    """``time_zone`` as Arrow names it: a region's key, or an offset ``+05:30``."""
    import datetime as dt
    import zoneinfo

    from zorder.skipping.zones import session_zone

    zone = session_zone(time_zone)
    if isinstance(zone, zoneinfo.ZoneInfo):
        return zone.key
    offset = zone.utcoffset(None) or dt.timedelta(0)
    minutes = int(offset.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def _in_zone(kind: pa.DataType, zone: str) -> pa.DataType:
    import pyarrow as pa

    if pa.types.is_timestamp(kind):
        return pa.timestamp(kind.unit, tz=zone) if kind.tz is not None else kind
    if pa.types.is_struct(kind):
        return pa.struct(
            [
                kind.field(i).with_type(_in_zone(kind.field(i).type, zone))
                for i in range(kind.num_fields)
            ]
        )
    if pa.types.is_map(kind):
        return pa.map_(
            kind.key_field.with_type(_in_zone(kind.key_type, zone)),
            kind.item_field.with_type(_in_zone(kind.item_type, zone)),
        )
    if pa.types.is_list(kind):
        return pa.list_(kind.value_field.with_type(_in_zone(kind.value_type, zone)))
    if pa.types.is_large_list(kind):
        return pa.large_list(kind.value_field.with_type(_in_zone(kind.value_type, zone)))
    return kind
