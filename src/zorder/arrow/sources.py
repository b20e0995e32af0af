"""A write's input given as a path, as this process reads it: what reading it would
take, from metadata alone (footers, a log), and the read.

Spark reads Parquet files with every column nullable, integers by their width,
timestamps adjusted to UTC as ``timestamp`` and the others as
``timestamp_ntz``. The in-process engine takes an input whose every column
reads so without doubt, and declines (naming why) the rest, which Spark then
reads: CSV (Spark infers its types, :mod:`zorder.api.sources` declines it),
hive-style partition directories (Spark infers their types too), unsigned
integers, nanosecond or INT96 timestamps, files of Spark's legacy calendar,
nested columns, names equal but for case.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from zorder.arrow.files import legacy_calendar, read_file, read_in_order
from zorder.plan.engines import InProcessWork
from zorder.plan.modes import InputFormat
from zorder.plan.runs import InProcessInput
from zorder.table import DataFile, Storage, load_snapshot

__all__ = ["declined_input", "input_read_here"]


def input_read_here(storage: Storage, found: InputFormat, *, time_zone: str) -> InProcessInput:
    """How this process would read the input at ``storage``, Parquet files or a Delta
    table (``found``); a Delta input's timestamp partition values read in ``time_zone``,
    as Spark's session would read them. Raises where the input is not readable here."""
    return _delta_input(storage, time_zone) if found == "delta" else _parquet_input(storage)


def declined_input(why: str) -> InProcessInput:
    """An input the in-process engine leaves to Spark, and why."""
    return InProcessInput(schema=None, work=None, declined=why)


def _delta_input(storage: Storage, time_zone: str) -> InProcessInput:
    snapshot = load_snapshot(storage, time_zone=time_zone)
    if any(f.get("metadata") for f in json.loads(snapshot.schema.json)["fields"]):
        # Column mapping, generated or identity columns, CHAR types: what Spark's read
        # keeps of them for the new table is Spark's to say.
        return declined_input("its schema carries column metadata (column mapping, CHAR...)")
    files = snapshot.files
    counts = [f.num_records for f in files]
    rows = None if any(c is None or c < 0 for c in counts) else sum(c or 0 for c in counts)
    columns = list(snapshot.schema.arrow.names)

    def one(data_file: DataFile) -> pa.Table:
        return read_file(snapshot, data_file, columns, refuse_legacy_calendar=True)

    def read() -> pa.Table:
        parts = list(read_in_order(one, files))
        return pa.concat_tables(parts) if parts else snapshot.schema.arrow.empty_table()

    work = InProcessWork(rows=rows, bytes=sum(f.size for f in files), files=len(files))
    return InProcessInput(schema=snapshot.schema.json, work=work, read=read)


def _hidden(relative: str) -> bool:
    """A path Spark's file listing leaves out: a part starting with ``_`` (not a
    ``name=value`` directory) or ``.``, or a file still being copied."""
    parts = relative.strip("/").split("/")
    if parts[-1].endswith("._COPYING_"):
        return True
    return any(p.startswith(".") or (p.startswith("_") and "=" not in p) for p in parts)


def _parquet_files(filesystem: Any, root: str) -> list[str] | str:
    """The Parquet files Spark reads at ``root`` (a file, or a directory's files, hidden
    ones left out); or why the input is left to Spark."""
    import pyarrow.fs as pafs

    if filesystem.get_file_info(root).type != pafs.FileType.Directory:
        return [root]
    listed = filesystem.get_file_info(pafs.FileSelector(root, recursive=True))
    files = [f for f in listed if f.type == pafs.FileType.File]
    shown = [f.path for f in files if not _hidden(f.path[len(root) :])]
    if any("=" in p for path in shown for p in path[len(root) :].strip("/").split("/")[:-1]):
        return "hive-style partition directories: Spark infers their types"
    return sorted(shown)


def _parquet_input(storage: Storage) -> InProcessInput:
    import pyarrow.dataset as pads
    import pyarrow.parquet as pq

    filesystem, root = storage.filesystem()
    paths = _parquet_files(filesystem, root)
    if isinstance(paths, str):
        return declined_input(paths)
    if not paths:
        return declined_input(f"no Parquet file at {storage.uri}")
    rows, size, schema = 0, 0, None
    for path in paths:
        with filesystem.open_input_file(path) as handle:
            metadata = pq.read_metadata(handle)
            size += handle.size()
        if legacy_calendar(metadata):
            return declined_input(f"{path} holds dates or timestamps of Spark's legacy calendar")
        found = metadata.schema.to_arrow_schema()
        if schema is not None and not found.equals(schema):
            return declined_input("its files' schemas differ: Spark merges them by its own rules")
        schema, rows = found, rows + metadata.num_rows
        over = InProcessWork(rows=rows, bytes=size, files=len(paths)).over_bounds()
        if over is not None:  # the rest is not read: Spark reads it
            return declined_input(over)
    assert schema is not None
    struct, why = _schema_json(schema)
    if struct is None:
        return declined_input(why)

    def read() -> pa.Table:
        dataset = pads.dataset(paths, format="parquet", filesystem=filesystem)
        return dataset.to_table()

    work = InProcessWork(rows=rows, bytes=size, files=len(paths))
    return InProcessInput(schema=struct, work=work, read=read)


# The type Spark reads a Parquet column of each Arrow type as, in the JSON form.
_SIMPLE: dict[str, str] = {
    "bool": "boolean",
    "int8": "byte",
    "int16": "short",
    "int32": "integer",
    "int64": "long",
    "float": "float",
    "double": "double",
    "string": "string",
    "large_string": "string",
    "binary": "binary",
    "large_binary": "binary",
    "date32[day]": "date",
}


def _json_type(arrow: pa.DataType) -> str | None:
    """The type Spark reads a Parquet column of ``arrow``'s type as (its JSON name), None
    where it is in doubt here."""
    simple = _SIMPLE.get(str(arrow))
    if simple is not None:
        return simple
    if pa.types.is_timestamp(arrow) and arrow.unit in ("ms", "us"):
        return "timestamp" if arrow.tz is not None else "timestamp_ntz"
    if pa.types.is_decimal128(arrow) and arrow.precision <= 38:
        return f"decimal({arrow.precision},{arrow.scale})"
    return None


def _schema_json(schema: pa.Schema) -> tuple[str | None, str]:
    """``schema`` as Spark reads it (every column nullable) in Spark's JSON form, or None
    and why not."""
    folded = [n.lower() for n in schema.names]
    if len(set(folded)) != len(folded):
        return None, "column names equal but for case: Spark refuses them"
    fields = []
    for arrow_field in schema:
        json_type = _json_type(arrow_field.type)
        if json_type is None:
            return None, (
                f"column {arrow_field.name!r} has the Parquet type {arrow_field.type}, which "
                "Spark reads by rules of its own"
            )
        fields.append(
            {"name": arrow_field.name, "type": json_type, "nullable": True, "metadata": {}}
        )
    return json.dumps({"type": "struct", "fields": fields}), ""
