"""A run's files as Spark left them: their footers described, Spark's markers dropped, and the
directory removed when the run never committed.

A clustering run writes its files under a directory of its own
(:attr:`zorder.table.Run.directory`); only footers travel to the driver.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from zorder.stats import FileStats, indexed_columns, stats_from_parquet
from zorder.table.storage import Storage

__all__ = ["WrittenFile", "delete_directory", "describe_written_files", "remove_writer_markers"]


@dataclass(frozen=True)
class WrittenFile:
    """A Parquet file Spark wrote for this run, with its footer statistics."""

    path: str  # relative to the table root
    size: int
    stats: FileStats
    # The partition it belongs to, as Delta writes values in the log (None for null).
    partition_values: Mapping[str, str | None] = field(default_factory=dict)


def describe_written_files(
    storage: Storage,
    relative_dir: str,
    columns: Sequence[str],
    configuration: Mapping[str, str | None],
) -> list[WrittenFile]:
    """List the Parquet files under ``relative_dir`` of the table at ``storage`` and read each
    footer's statistics.

    Only footers travel to the driver. Files without rows (Spark writes one
    for an empty input) are left out.
    """
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq

    filesystem, root = storage.filesystem()
    directory = f"{root.rstrip('/')}/{relative_dir}"
    # A run of no rows may have written nothing, not even its directory (the in-process
    # engine's): no file then.
    selector = pafs.FileSelector(directory, recursive=True, allow_not_found=True)
    infos = filesystem.get_file_info(selector)
    written = []
    for info in sorted(infos, key=lambda i: i.path):
        base = info.base_name
        if info.type != pafs.FileType.File or not base.endswith(".parquet") or base[0] in "._":
            continue
        with filesystem.open_input_file(info.path) as handle:
            metadata = pq.read_metadata(handle)
        if metadata.num_rows == 0:
            continue
        arrow_schema = metadata.schema.to_arrow_schema()
        wanted = indexed_columns(
            pa.schema([arrow_schema.field(n) for n in columns if n in arrow_schema.names]),
            configuration,
        )
        stats = stats_from_parquet(metadata, arrow_schema, wanted)
        relative = info.path[len(root.rstrip("/")) + 1 :]
        written.append(WrittenFile(path=relative, size=int(info.size or 0), stats=stats))
    return written


def remove_writer_markers(storage: Storage, relative_dir: str) -> int:
    """Drop the ``_SUCCESS`` and ``.crc`` files Spark's writer leaves next to the data;
    returns how many files (markers and data) the directory held.

    No Delta reader wants them, and as files the log never references they
    would show up in every vacuum of the table.
    """
    import pyarrow.fs as pafs

    filesystem, root = storage.filesystem()
    selector = pafs.FileSelector(f"{root}/{relative_dir}", recursive=True, allow_not_found=True)
    files = [i for i in filesystem.get_file_info(selector) if i.type == pafs.FileType.File]
    for info in files:
        if info.base_name.startswith(("_", ".")):
            with contextlib.suppress(OSError):
                filesystem.delete_file(info.path)
    return len(files)


def delete_directory(storage: Storage, relative_dir: str) -> None:
    """Best-effort removal of a run's directory (its files were never committed)."""
    filesystem, root = storage.filesystem()
    with contextlib.suppress(OSError):
        filesystem.delete_dir(f"{root.rstrip('/')}/{relative_dir}")
