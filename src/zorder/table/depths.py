"""The clustering depth of a version's files, and of the files a rewrite leaves behind.

From the log alone (the add actions' statistics) and, for a rewrite, the
footer statistics of the files it wrote: no data file is read, and the log
is not read again after a commit. The measure itself is
:mod:`zorder.stats.depth`; here each file gets its column bounds, whether it
holds no value of the column, and its partition.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from zorder.stats import ColumnDepth, action_stats_field, column_depth, typed_bound
from zorder.table.delta.snapshot import DataFile, TableSnapshot
from zorder.table.runs import WrittenFile

__all__ = ["rewritten_depths", "snapshot_depths"]


def snapshot_depths(snapshot: TableSnapshot, columns: Sequence[str]) -> tuple[ColumnDepth, ...]:
    """The depth of each of ``columns`` (the table's names) over the version's files."""
    actions = snapshot.actions
    groups = _group_ids([f.partition for f in snapshot.files])
    depths = []
    for column in columns:
        lows, highs = _bounds(actions, snapshot, column)
        valueless = _valueless(actions, column)
        depths.append(column_depth(column, lows, highs, groups, valueless=valueless))
    return tuple(depths)


def rewritten_depths(
    snapshot: TableSnapshot,
    columns: Sequence[str],
    removed: Sequence[DataFile],
    written: Sequence[WrittenFile],
) -> tuple[ColumnDepth, ...]:
    """The depth of each of ``columns`` over ``snapshot``'s files once ``removed`` are
    replaced by ``written`` (whose partition values are as the log writes them).

    A written file lies in a partition the rewrite read: its values' text
    is matched to the partitions of ``removed`` (as :meth:`TableSnapshot.partition_text`
    writes them, as the rewrite did), so that it meets the files kept there.
    """
    gone = {f.path for f in removed}
    keep = np.array([f.path not in gone for f in snapshot.files], dtype=bool)
    kept_actions = snapshot.actions.filter(pa.array(keep))
    names = snapshot.partition_columns
    read = {
        tuple(
            snapshot.partition_text(c, v, time_zone=None)
            for c, v in zip(names, values, strict=True)
        ): values
        for values in {f.partition for f in removed}
    }
    stored = [snapshot.schema.stored_name(c) for c in names]
    keys: list[Hashable] = [
        f.partition for f, kept in zip(snapshot.files, keep, strict=True) if kept
    ]
    for w in written:
        text = tuple(w.partition_values.get(s) for s in stored)
        keys.append(read.get(text, text))
    groups = _group_ids(keys)
    depths = []
    for column in columns:
        lows, highs = _bounds(kept_actions, snapshot, column)
        name = snapshot.schema.stored_name(column)
        kind = lows.type
        new_lows = pa.array(
            [typed_bound(kind, w.stats.min_values.get(name)) for w in written], kind
        )
        new_highs = pa.array(
            [typed_bound(kind, w.stats.max_values.get(name)) for w in written], kind
        )
        valueless = np.concatenate(
            [
                _valueless(kept_actions, column),
                [w.stats.null_count.get(name) == w.stats.num_records for w in written],
            ]
        )
        depths.append(
            column_depth(
                column,
                pa.concat_arrays([lows, new_lows]),
                pa.concat_arrays([highs, new_highs]),
                groups,
                valueless=valueless,
            )
        )
    return tuple(depths)


def _bounds(actions: pa.Table, snapshot: TableSnapshot, column: str) -> tuple[pa.Array, pa.Array]:
    """Each file's min and max of ``column`` (null where the log has none), typed as Delta
    readers give them (the table's type when no file has statistics for it)."""
    found = [action_stats_field(actions, kind, column) for kind in ("min", "max")]
    kinds = [f.type for f in found if f is not None]
    kind = kinds[0] if kinds else snapshot.schema.arrow.field(column).type
    low, high = (pa.nulls(actions.num_rows, kind) if f is None else f.cast(kind) for f in found)
    return low, high


def _valueless(actions: pa.Table, column: str) -> npt.NDArray[np.bool_]:
    """Per file: every one of its rows (by its statistics) is NULL in ``column``."""
    nulls = action_stats_field(actions, "null_count", column)
    counted = nulls is not None and pa.types.is_integer(nulls.type)  # a struct's are nested
    if nulls is None or not counted or "num_records" not in actions.column_names:
        return np.zeros(actions.num_rows, dtype=bool)
    rows = actions.column("num_records").combine_chunks()
    same = pc.equal(nulls.cast(pa.int64()), rows.cast(pa.int64())).fill_null(False)
    return np.asarray(same.to_numpy(zero_copy_only=False), dtype=bool)


def _group_ids(keys: Sequence[Hashable]) -> npt.NDArray[np.int64]:
    """Each key's index among the distinct keys, in order of first appearance."""
    ids: dict[Hashable, int] = {}
    return np.array([ids.setdefault(k, len(ids)) for k in keys], dtype=np.int64)
