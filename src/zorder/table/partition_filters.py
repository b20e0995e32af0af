"""Which of a table's partitions a filter over partition columns chooses: the filter checked
(it may name partition columns only), and decided in this process where
:mod:`zorder.skipping.rows` reproduces Spark's meaning of it exactly."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from zorder.columns import match_column
from zorder.errors import FilterEvaluationError, InvalidArgumentError, UnsupportedFilterError
from zorder.skipping.rows import exact_predicate, row_mask
from zorder.skipping.sql import ParsedFilter, parse_filter
from zorder.table.delta.snapshot import TableSnapshot

__all__ = ["check_partition_where", "partitions_where"]


def check_partition_where(snapshot: TableSnapshot, where: str) -> ParsedFilter:
    """``where`` parsed, refused unless the table is partitioned and it names only partition
    columns: what an optimize's ``where`` may choose by, decided without Spark."""
    columns = snapshot.partition_columns
    if not columns:
        raise InvalidArgumentError(
            f"where={where!r} chooses partitions, but table {snapshot.uri} has no partition "
            "columns; leave where out to optimize the whole table"
        )
    parsed = parse_filter(where)  # raises FilterParseError first
    outside = sorted(r for r in parsed.columns if match_column(r, columns) is None)
    if outside:
        raise InvalidArgumentError(
            f"where={where!r} names {', '.join(outside)}, which are not partition columns of "
            f"{snapshot.uri}; it chooses partitions by: {', '.join(columns)}"
        )
    return parsed


def partitions_where(
    snapshot: TableSnapshot,
    partitions: Sequence[tuple[Any, ...]],
    parsed: ParsedFilter,
    *,
    time_zone: str,
    ansi: bool,
) -> set[tuple[Any, ...]] | None:
    """The ``partitions`` (values of ``snapshot``'s partition columns) whose values satisfy
    ``parsed`` in a session of ``time_zone`` with ANSI mode ``ansi``; None where the exact
    evaluator refuses the filter (Spark then decides)."""
    columns = snapshot.partition_columns
    # The filter's spelling of each column (Spark matches names regardless of case).
    named = {r: columns.index(c) for r in parsed.columns if (c := match_column(r, columns))}
    types = {r: snapshot.schema.column_types[columns[i]] for r, i in named.items()}
    try:
        if not ansi:  # the evaluator has ANSI's meaning: ANSI off's read as it where exact
            parsed = parsed.for_ansi_off(types)
        bound = exact_predicate(parsed.unfolded(), types, time_zone=time_zone)
    except (UnsupportedFilterError, FilterEvaluationError):
        # An ANSI error (d = 'abc'): Spark raises it too, unless its optimizer drops the part
        # that raises (x AND FALSE). Spark decides, so the answer is always Spark's.
        return None
    arrow = snapshot.schema.arrow
    values = pa.table(
        {
            r: pa.array([p[i] for p in partitions], arrow.field(columns[i]).type)
            for r, i in named.items()
        },
    )
    if not named:  # a filter of no column: one value for every partition
        values = pa.table({"_": pa.nulls(len(partitions))})
    try:
        keep = pc.fill_null(row_mask(bound, values, types), False).to_pylist()
    except FilterEvaluationError:
        return None  # as above: Spark decides what raises
    return {p for p, kept in zip(partitions, keep, strict=True) if kept}
