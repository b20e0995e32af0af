"""A write's input given as a path (Parquet files, CSV files, a Delta table), as Spark
reads it, and what reading it in process would take, from metadata alone.

Spark reads Parquet files with every column nullable, integers by their width,
timestamps adjusted to UTC as ``timestamp`` and the others as
``timestamp_ntz``. The in-process engine takes an input whose every column
reads so without doubt, and declines (naming why) the rest, which Spark then
reads: CSV (Spark infers its types), hive-style partition directories (Spark
infers their types too), unsigned integers, nanosecond or INT96 timestamps,
files of Spark's legacy calendar, nested columns, names equal but for case.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from zorder.api.context import Context, table_storage
from zorder.api.inputs import (
    check_input_columns,
    check_input_exists,
    input_format,
    read_input,
)
from zorder.arrow.files import legacy_calendar, read_file, read_in_order
from zorder.curves.kinds import ClusteringSpec
from zorder.errors import ZorderError
from zorder.plan.engines import InProcessWork
from zorder.plan.modes import InputFormat
from zorder.plan.runs import InProcessInput
from zorder.table import DataFile, load_snapshot

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["InProcessInput", "WriteSource", "checked_source", "in_process_input", "read_source"]


@dataclass(frozen=True)
class WriteSource:
    """A write's input at ``path``: ``format`` None reads what is found there."""

    path: str
    format: InputFormat | None = None
    storage_options: Mapping[str, str] | None = None


def checked_source(source: WriteSource, by: Sequence[str] | ClusteringSpec | None) -> WriteSource:
    """``source`` refused, without Spark, where it is not there or lacks the clustering columns
    ``by`` names (when its columns can be read here); returned with its format found, so
    that what it holds is looked for once."""
    options = source.storage_options
    check_input_exists(source.path, options)
    found = source.format or input_format(source.path, options)
    columns = by.columns if isinstance(by, ClusteringSpec) else by
    if columns and not isinstance(columns, str):
        check_input_columns(source.path, list(columns), format=found, storage_options=options)
    return dataclasses.replace(source, format=found)


def read_source(spark: SparkSession, source: WriteSource) -> DataFrame:
    """``source``'s rows, read by Spark."""
    return read_input(
        spark, source.path, format=source.format, storage_options=source.storage_options
    )


def in_process_input(source: WriteSource, context: Context) -> InProcessInput:
    """How the in-process engine would read ``source`` (metadata only: footers, a log);
    a Delta input's timestamp partition values read in ``context``'s zone, as Spark's
    session would read them."""
    try:
        found = source.format or input_format(source.path, source.storage_options)
        if found == "csv":
            return _declined("CSV input: Spark infers its columns' types")
        if found == "delta":
            return _delta_input(source, context)
        return _parquet_input(source)
    except (OSError, pa.ArrowException, ZorderError) as error:
        return _declined(f"its input is not readable here ({error})")


def _declined(why: str) -> InProcessInput:
    return InProcessInput(schema=None, work=None, declined=why)


def _delta_input(source: WriteSource, context: Context) -> InProcessInput:
    storage = table_storage(source.path, source.storage_options, None)
    snapshot = load_snapshot(storage, time_zone=context.time_zone)
    if any(f.get("metadata") for f in json.loads(snapshot.schema.json)["fields"]):
        # Column mapping, generated or identity columns, CHAR types: what Spark's read
        # keeps of them for the new table is Spark's to say.
        return _declined("its schema carries column metadata (column mapping, CHAR...)")
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


def _parquet_input(source: WriteSource) -> InProcessInput:
    import pyarrow.dataset as pads
    import pyarrow.parquet as pq

    filesystem, root = table_storage(source.path, source.storage_options, None).filesystem()
    paths = _parquet_files(filesystem, root)
    if isinstance(paths, str):
        return _declined(paths)
    if not paths:
        return _declined(f"no Parquet file at {source.path}")
    rows, size, schema = 0, 0, None
    for path in paths:
        with filesystem.open_input_file(path) as handle:
            metadata = pq.read_metadata(handle)
            size += handle.size()
        if legacy_calendar(metadata):
            return _declined(f"{path} holds dates or timestamps of Spark's legacy calendar")
        found = metadata.schema.to_arrow_schema()
        if schema is not None and not found.equals(schema):
            return _declined("its files' schemas differ: Spark merges them by its own rules")
        schema, rows = found, rows + metadata.num_rows
        over = InProcessWork(rows=rows, bytes=size, files=len(paths)).over_bounds()
        if over is not None:  # the rest is not read: Spark reads it
            return _declined(over)
    assert schema is not None
    struct, why = _schema_json(schema)
    if struct is None:
        return _declined(why)

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
