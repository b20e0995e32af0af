"""The add actions deltalake lists, as zorder reads them, and partition values as the log
writes them.

Partition values become exact statistics (so one evaluator prunes partitions
and skips files), statistics of a column-mapped table are keyed by logical
name, and the partition filters of an overwrite are built and checked here.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from zorder.errors import (
    InvalidArgumentTypeError,
    UnsupportedTableError,
)
from zorder.stats import (
    action_stats_field,
)
from zorder.table.delta.mapping import ColumnMapping
from zorder.table.delta.timestamps import iso_text

__all__ = [
    "PartitionFilter",
    "delta_partition_value",
    "logical_statistics",
    "overwrite_filters",
    "partition_tuples",
    "satisfies",
    "with_partition_statistics",
    "with_partition_values",
]


def partition_tuples(actions: pa.Table, columns: Sequence[str]) -> list[tuple[Any, ...]]:
    """Each file's values of ``columns``, typed as deltalake parsed them from the log."""
    if not columns:
        return [()] * actions.num_rows
    values = [action_stats_field(actions, "partition", c) for c in columns]
    if any(v is None for v in values):
        raise UnsupportedTableError(
            f"the log lists no values of partition columns {list(columns)} for its files"
        )
    return list(zip(*(v.to_pylist() for v in values if v is not None), strict=True))


def with_partition_statistics(actions: pa.Table, columns: Sequence[str]) -> pa.Table:
    """``actions`` with each partition column's value as its exact min, max and null count.

    A partition value is the value of every row of its files, so the one
    evaluator prunes partitions by the same rules that skip files.
    """
    if not columns or actions.num_rows == 0:
        return actions
    rows = actions.column("num_records") if "num_records" in actions.column_names else None
    for kind in ("min", "max", "null_count"):
        names: list[str] = []
        fields: list[pa.Array] = []
        if kind in actions.column_names and pa.types.is_struct(actions.column(kind).type):
            struct_type = actions.column(kind).type
            for index in range(struct_type.num_fields):
                name = struct_type.field(index).name
                if name not in columns:
                    field = action_stats_field(actions, kind, name)
                    assert field is not None
                    names.append(name)
                    fields.append(field)
        for column in columns:
            values = action_stats_field(actions, "partition", column)
            assert values is not None
            if kind == "null_count":
                counts = rows.combine_chunks() if rows is not None else pa.nulls(len(values))
                zero = pa.scalar(0, pa.int64())
                values = pc.if_else(values.is_null(), counts.cast(pa.int64()), zero)
            names.append(column)
            fields.append(values)
        struct = pa.StructArray.from_arrays(fields, names=names)
        if kind in actions.column_names:
            actions = actions.set_column(actions.column_names.index(kind), kind, struct)
        else:
            actions = actions.append_column(kind, struct)
    return actions


def with_partition_values(
    actions: pa.Table, columns: Sequence[str], moves: Mapping[str, Mapping[Any, Any]]
) -> pa.Table:
    """``actions`` with the values of each partition column in ``moves`` replaced as it
    maps them (a value it does not map is kept), and the partition statistics made again."""
    partition = actions.column("partition").combine_chunks()
    fields = {
        partition.type.field(i).name: partition.field(i) for i in range(partition.type.num_fields)
    }
    for column, moved in moves.items():
        values = fields[column]
        fields[column] = pa.array(
            [moved.get(v, v) if v is not None else None for v in values.to_pylist()],
            values.type,
        )
    struct = pa.StructArray.from_arrays(list(fields.values()), names=list(fields))
    actions = actions.set_column(actions.column_names.index("partition"), "partition", struct)
    return with_partition_statistics(actions, columns)


def logical_statistics(actions: pa.Table, mapping: ColumnMapping) -> pa.Table:
    """``actions`` with min, max and null_count keyed by logical names, as readers ask."""
    for kind in ("min", "max", "null_count"):
        if kind not in actions.column_names or not pa.types.is_struct(actions.column(kind).type):
            continue
        index = actions.column_names.index(kind)
        logical = mapping.logical_statistics(actions.column(kind).combine_chunks())
        actions = (
            actions.remove_column(index)
            if logical is None
            else actions.set_column(index, kind, logical)
        )
    return actions


def delta_partition_value(value: Any) -> str | None:
    """``value`` as the text Delta's log holds for a partition value; None for null.

    Timestamps as ISO-8601 UTC text (``timestamp``: its instant in every
    session) or as written (``timestamp_ntz``), to the microsecond; an empty
    string is null in Delta, as in Hive.
    """
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:  # its instant, whatever zone a reader's session is in
            return iso_text(value)
        return value.isoformat(sep=" ", timespec="microseconds")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, int | str):
        return str(value)
    raise InvalidArgumentTypeError(f"no Delta partition value for {type(value).__name__} {value!r}")


PartitionFilter = tuple[str, str, str | list[str]]


def satisfies(
    partition: tuple[Any, ...], columns: Sequence[str], filters: Sequence[PartitionFilter]
) -> bool:
    """Whether a partition's values (of ``columns``) pass ``filters``, as delta-rs reads them."""
    values = dict(zip(columns, partition, strict=True))
    for column, operator, expected in filters:
        text = delta_partition_value(values[column])
        if operator == "=" and text != (expected or None):
            return False
        if operator == "in" and text not in expected:
            return False
    return True


def overwrite_filters(
    columns: Sequence[str], partitions: set[tuple[Any, ...]]
) -> list[PartitionFilter] | None:
    """A conjunction of partition filters that holds for every partition of ``partitions``.

    It may hold for others too (a column whose values mix NULL and others is
    left out, and the values of several columns combine): the files it
    selects are the rewrite's scope. None: the whole table.
    """
    filters: list[PartitionFilter] = []
    for index, column in enumerate(columns):
        values = {delta_partition_value(values[index]) for values in partitions}
        if values == {None}:
            filters.append((column, "=", ""))  # delta-rs: "" matches a NULL partition value
        elif None not in values:
            filters.append((column, "in", sorted(v for v in values if v is not None)))
    return filters or None
