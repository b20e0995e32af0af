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

import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pyarrow as pa

from zorder.arrow.layout import FileRows
from zorder.table.storage import Storage

__all__ = ["ParquetOptions", "hive_directory", "write_files"]

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
            options["use_dictionary"] = [n for n in self.schema.names if n not in self.blooms]
            sized = {"ndv": self.bloom_rows} if self.bloom_rows else {}
            options["bloom_filter_options"] = {
                name: {**sized, "fpp": fpp} for name, fpp in self.blooms.items()
            }
        return options


def write_files(
    rows: pa.Table,
    files: FileRows,
    *,
    storage: Storage,
    directory: str,
    options: ParquetOptions,
    subdirectory: Callable[[int], str] = lambda _: "",
) -> list[str]:
    """Each file of ``files`` (rows of ``rows``, whose columns are ``options.schema``'s)
    written under ``directory`` of the table at ``storage``, in ``subdirectory(number)``;
    returns their paths relative to the table root."""
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
        pq.write_table(part, location, filesystem=filesystem, **writer_options)
        return relative

    with ThreadPoolExecutor(max_workers=_WRITERS) as pool:
        return list(pool.map(write, range(len(files.numbers))))
