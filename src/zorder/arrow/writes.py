"""A run's files written in this process with pyarrow, as Spark's writer writes them for
Delta readers (:func:`zorder.spark.writes.write_run`).

The same file names (``part-<file number>-<uuid>.c000.snappy.parquet``, in the
partition's hive-style directory), and Parquet as Spark writes it for Delta:
snappy pages, INT64 microsecond timestamps (``timestamp`` adjusted to UTC,
``timestamp_ntz`` not), decimals of up to 18 digits as INT32/INT64, the stored
(physical) names and, in ``id`` mode, the field ids of a column-mapped table,
and one bloom filter per row group on the columns the spec names (dictionary
encoding off for them, as the Spark engine writes them). Statistics are read
back from the footers by :func:`zorder.table.describe_written_files`, as for
Spark's files.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from zorder.arrow.layout import FileRows
from zorder.table.storage import Storage

__all__ = ["ParquetOptions", "ancient_values", "hive_directory", "write_files"]

# Spark's (Hive's) escaping of a partition directory's value: these characters and the
# control characters go as %XX.
_ESCAPED = frozenset("\"#%'*/:=?\\\x7f{[]^")
_HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
# Files written at once: pyarrow's writer releases the GIL while it encodes.
_WRITERS = 4


def _escaped(text: str) -> str:
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED or ord(c) < 0x20 else c for c in text)


def hive_directory(columns: Sequence[str], texts: Sequence[str | None]) -> str:
    """A partition's directory, ``day=2026-11-01/region=eu/``, from the log's texts of its
    values, escaped as Spark escapes them (a NULL as Hive's default partition)."""
    parts = [
        f"{_escaped(c)}={_HIVE_NULL if t is None else _escaped(t)}"
        for c, t in zip(columns, texts, strict=True)
    ]
    return "".join(f"{p}/" for p in parts)


@dataclass(frozen=True)
class ParquetOptions:
    """How a run's files are written: the stored columns' schema and the bloom filters."""

    schema: pa.Schema  # the data columns as files hold them (physical names, field ids)
    blooms: Mapping[str, float] = field(default_factory=dict)  # stored name: false positives
    bloom_rows: int | None = None  # distinct values each filter is sized for
    row_group_rows: int | None = None  # rows of a row group; None: pyarrow's default

    def writer_options(self) -> dict[str, object]:
        options: dict[str, object] = {
            "compression": "snappy",
            "coerce_timestamps": "us",
            "allow_truncated_timestamps": False,
            "store_decimal_as_integer": True,
            "store_schema": False,
            "write_statistics": True,
        }
        if self.row_group_rows:
            options["row_group_size"] = self.row_group_rows
        if self.blooms:
            leaves = _leaf_paths(self.schema)
            options["use_dictionary"] = [p for p in leaves if p not in self.blooms]
            sized = {"ndv": self.bloom_rows} if self.bloom_rows else {}
            options["bloom_filter_options"] = {
                name: {**sized, "fpp": fpp} for name, fpp in self.blooms.items()
            }
        return options


def _leaf_paths(schema: pa.Schema) -> list[str]:
    """Every leaf column's dotted path, as Parquet's writer options name them."""

    def leaves(name: str, kind: pa.DataType) -> list[str]:
        if pa.types.is_struct(kind):
            return [
                p
                for i in range(kind.num_fields)
                for p in leaves(f"{name}.{kind.field(i).name}", kind.field(i).type)
            ]
        if pa.types.is_list(kind) or pa.types.is_large_list(kind):
            return leaves(f"{name}.list.element", kind.value_type)
        if pa.types.is_map(kind):
            return [
                *leaves(f"{name}.key_value.key", kind.key_type),
                *leaves(f"{name}.key_value.value", kind.item_type),
            ]
        return [name]

    return [p for f in schema for p in leaves(f.name, f.type)]


def nan_leaves(rows: pa.Table) -> set[str]:
    """The dotted paths of the floating columns (top level or in structs) holding a NaN."""
    found: set[str] = set()

    def visit(name: str, column: pa.Array | pa.ChunkedArray) -> None:
        kind = column.type
        if pa.types.is_floating(kind):
            if pc.any(pc.is_nan(column)).as_py():
                found.add(name)
        elif pa.types.is_struct(kind):
            chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
            for i in range(kind.num_fields):
                child = pa.chunked_array([c.field(i) for c in chunks], type=kind.field(i).type)
                visit(f"{name}.{kind.field(i).name}", child)

    for name, column in zip(rows.column_names, rows.columns, strict=True):
        visit(name, column)
    return found


_ANCIENT_DATE = dt.date(1582, 10, 15)
_ANCIENT_INSTANT = dt.datetime(1900, 1, 1, tzinfo=dt.UTC)


def ancient_values(rows: pa.Table) -> str | None:
    """The first top-level column holding a date before 1582-10-15 or a timestamp before
    1900 (where Spark's legacy calendar and the proleptic one part), or None: Spark 3.5
    refuses to read such values from a file no Spark wrote, unless told how to rebase."""
    for name, column in zip(rows.column_names, rows.columns, strict=True):
        kind = column.type
        if pa.types.is_date(kind):
            low = pc.min(column).as_py()
            if low is not None and low < _ANCIENT_DATE:
                return f"{name} holds {low}"
        elif pa.types.is_timestamp(kind):
            low = pc.min(column).as_py()
            if low is not None and low.replace(tzinfo=low.tzinfo or dt.UTC) < _ANCIENT_INSTANT:
                return f"{name} holds {low}"
    return None


def write_files(
    rows: pa.Table,
    files: FileRows,
    *,
    storage: Storage,
    directory: str,
    options: ParquetOptions,
    subdirectory: Callable[[int], str] = lambda _: "",
    written: Callable[[int], None] = lambda rows: None,
) -> list[str]:
    """Each file of ``files`` (rows of ``rows``, whose columns are ``options.schema``'s)
    written under ``directory`` of the table at ``storage``, in ``subdirectory(number)``;
    returns their paths relative to the table root. ``written`` is told each file's rows
    once it is written (from the writers' threads)."""
    import pyarrow.parquet as pq

    filesystem, root = storage.filesystem()
    job = uuid.uuid4()
    stored = rows.cast(options.schema)
    writer_options = options.writer_options()

    def write(index: int) -> str:
        number = int(files.numbers[index])
        relative = f"{directory}/{subdirectory(number)}part-{number:05d}-{job}.c000.snappy.parquet"
        location = f"{root.rstrip('/')}/{relative}"
        parent = location.rsplit("/", 1)[0]
        filesystem.create_dir(parent, recursive=True)
        part = stored.take(pa.array(files.rows_of(index)))
        options_here = writer_options
        if holding_nan := nan_leaves(part):
            # pyarrow leaves NaN out of its bounds, Spark's readers (and zorder's trust in its
            # own runs' bounds) count it in: such a column is written without statistics.
            kept = [p for p in _leaf_paths(part.schema) if p not in holding_nan]
            options_here = {**writer_options, "write_statistics": kept}
        pq.write_table(part, location, filesystem=filesystem, **options_here)
        written(part.num_rows)
        return relative

    with ThreadPoolExecutor(max_workers=_WRITERS) as pool:
        return list(pool.map(write, range(len(files.numbers))))
