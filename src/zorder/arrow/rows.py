"""The in-process engine: a planned scan's rows read with pyarrow, filtered with Spark's meaning.

The mirror of :mod:`zorder.spark.scan`: given the files a plan keeps, it
reads only those, with DuckDB prefiltering where the filter compares columns
with literals and the table allows it (:mod:`zorder.arrow.files`), else
file by file with pyarrow, and filters the rows by
:mod:`zorder.skipping.rows` where the filter compares columns with literals
(exact, tested leaf by leaf), else by the filter translated to DuckDB SQL
(:mod:`zorder.skipping.translate`). What neither answers exactly is refused
before anything is read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from zorder.arrow.files import (
    check_constants,
    read_file,
    read_in_order,
    read_where,
    translated_mask,
)
from zorder.errors import UnsupportedFilterError
from zorder.skipping.predicates import Bound
from zorder.skipping.rows import (
    exact_predicate,
    prefilter_sql,
    referenced,
    row_mask,
)
from zorder.skipping.sql import ParsedFilter
from zorder.skipping.translate import Translation, translate
from zorder.table import DataFile, TableSnapshot

__all__ = ["read_rows"]


def read_rows(
    snapshot: TableSnapshot,
    files: Sequence[DataFile],
    row_filter: ParsedFilter,
    *,
    columns: Sequence[str] | None,
    time_zone: str,
    limit: int | None,
) -> pa.Table:
    """The rows of ``files`` (of ``snapshot``) matching ``row_filter`` (as the scan parsed
    it, its clock pinned) in the session zone ``time_zone``: ``columns`` (default all), up to
    ``limit`` rows in file order."""
    types = snapshot.schema.column_types
    evaluator = _row_filter(row_filter, types, time_zone)
    wanted = list(types) if columns is None else list(columns)
    files = files if limit != 0 else ()
    table = None
    if isinstance(evaluator, _Exact):
        table = _prefiltered(snapshot, files, evaluator.predicate, wanted)
    if table is None:
        table = _file_by_file(snapshot, files, evaluator, wanted, limit)
    return table if limit is None else table.slice(0, limit)


@dataclass(frozen=True)
class _Exact:
    """The filter bound for :mod:`zorder.skipping.rows` (a column against literals)."""

    predicate: Bound
    types: Mapping[str, str]

    @property
    def columns(self) -> set[str]:
        return referenced(self.predicate)

    def mask(self, rows: pa.Table) -> Any:
        return row_mask(self.predicate, rows, self.types)


@dataclass(frozen=True)
class _Translated:
    """The filter as DuckDB SQL with Spark's meaning (:mod:`zorder.skipping.translate`)."""

    translation: Translation

    @property
    def columns(self) -> set[str]:
        return set(self.translation.columns)

    def mask(self, rows: pa.Table) -> Any:
        return translated_mask(self.translation, rows)


def _row_filter(
    parsed: ParsedFilter, types: Mapping[str, str], time_zone: str
) -> _Exact | _Translated:
    """The exact evaluator where it answers the filter (tested leaf by leaf), else the
    translation to DuckDB; UnsupportedFilterError naming what neither answers. Both read
    the one parsed tree; neither parses the text again."""
    try:
        return _Exact(exact_predicate(parsed.unfolded(), types, time_zone=time_zone), types)
    except UnsupportedFilterError:
        translation = translate(parsed, types, time_zone=time_zone)
        check_constants(translation)
        return _Translated(translation)


def _prefiltered(
    snapshot: TableSnapshot, files: Sequence[DataFile], predicate: Bound, wanted: list[str]
) -> pa.Table | None:
    """The matching rows of ``files``, read by DuckDB with a prefilter; None where it cannot."""
    types = snapshot.schema.column_types
    stored = set(types) - set(snapshot.partition_columns)
    prefilter = prefilter_sql(predicate, types, among=stored)
    if prefilter is None or not files:
        return None
    probed = [c for c in sorted(referenced(predicate)) if c not in wanted]
    read = read_where(snapshot, files, wanted + probed, prefilter)
    if read is None:
        return None
    return read.filter(pc.fill_null(row_mask(predicate, read, types), False)).select(wanted)


def _file_by_file(
    snapshot: TableSnapshot,
    files: Sequence[DataFile],
    row_filter: _Exact | _Translated,
    wanted: list[str],
    limit: int | None,
) -> pa.Table:
    """The matching rows of ``files``, read with pyarrow, until ``limit`` rows are found."""
    probed = sorted(row_filter.columns)
    rest = [c for c in wanted if c not in probed]
    schema = pa.schema([snapshot.schema.arrow.field(c) for c in wanted])

    def matching(data_file: DataFile) -> pa.Table:
        if not probed:  # a filter without columns: TRUE or FALSE for every row
            rows = read_file(snapshot, data_file, wanted)
            return rows.filter(pc.fill_null(row_filter.mask(rows), False))
        # The filter's columns first: most files a lookup keeps hold no match, and
        # then the other columns (often long strings) are never decoded.
        probe = read_file(snapshot, data_file, probed)
        keep = pc.fill_null(row_filter.mask(probe), False)
        if not pc.any(keep).as_py():
            return schema.empty_table()
        others = read_file(snapshot, data_file, rest)
        rows = {name: probe.column(name) for name in probed}
        rows |= {name: others.column(name) for name in rest}
        return pa.Table.from_arrays([rows[c] for c in wanted], schema=schema).filter(keep)

    parts: list[pa.Table] = []
    found = 0
    for part in read_in_order(matching, files):
        parts.append(part)
        found += part.num_rows
        if limit is not None and found >= limit:
            break
    return pa.concat_tables(parts) if parts else schema.empty_table()
