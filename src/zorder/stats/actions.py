"""Statistics as deltalake hands them over: the add-actions table of a snapshot."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["action_stats_field"]


def action_stats_field(actions: pa.Table, kind: str, name: str) -> pa.Array | None:
    """One column's ``min``, ``max`` or ``null_count`` across all files, or None if never kept.

    ``actions`` is deltalake's ``get_add_actions(flatten=False)``: one row per
    file, the statistics as struct columns. A file without statistics (a
    null struct) hides its fields too, so its entry is null here.
    """
    if kind not in actions.column_names:
        return None
    column = actions.column(kind)
    if not pa.types.is_struct(column.type) or column.type.get_field_index(name) < 0:
        return None
    pieces = []
    for chunk in column.chunks:  # only this field is copied, not the whole struct
        values = chunk.field(name)
        if chunk.null_count:
            values = pc.if_else(chunk.is_valid(), values, pa.nulls(len(values), values.type))
        pieces.append(values)
    if not pieces:
        return pa.array([], column.type.field(name).type)
    return pa.concat_arrays(pieces) if len(pieces) > 1 else pieces[0]
