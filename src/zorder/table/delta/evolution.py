"""Schema evolution: new nullable columns added to a table in a metadata-only commit.

deltalake 1.6's ``create_write_transaction`` keeps the table's schema in mode
``append`` whatever schema it is given, without a word: a data commit whose
files hold a new column would leave its values invisible to every reader.
So the columns are added first, in a commit of their own, and the data is
committed afterwards as an ordinary append on that version. A nullable
column added alone changes no row (every file written before reads it as
NULL), so a failure between the two commits loses nothing.

- Without column mapping: deltalake's ``ADD COLUMN`` (``DeltaTable.alter.add_columns``).
- With column mapping: deltalake's ``ADD COLUMN`` refuses it. Each new field
  (nested ones too) gets an id above ``delta.columnMapping.maxColumnId`` and a
  physical name ``col-<uuid>``, as Delta Spark gives them; the maximum is
  raised first (``set_table_properties``: an id reserved and unused harms no
  one), then the schema is committed by an overwrite that replaces no
  partition (two contradicting filters, ``=`` and ``!=`` on one value of the
  partition column's type, which deltalake parses by that type). The overwrite
  goes ahead only if the table is then at exactly the properties commit's
  version with the snapshot's schema; else another writer came between, whose
  schema would be lost, and it is a ConcurrentCommitError (run again). Refused,
  before any commit, where that cannot be done without other changes: an
  unpartitioned table (no partition filter to replace nothing with), a
  partition column of a type with no such value, a protocol of table features
  (deltalake's ``set_table_properties`` adds features to it).

Every path is checked afterwards: the newest version must hold each column
as asked, else nothing of the data is written.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from typing import Any

from deltalake import DeltaTable, Field
from deltalake import Schema as DeltaSchema
from deltalake.exceptions import CommitFailedError, DeltaError

from zorder.errors import ConcurrentCommitError, UnsupportedTableError
from zorder.table.delta.mapping import COLUMN_ID, PHYSICAL_NAME
from zorder.table.delta.snapshot import TableSnapshot, load_snapshot
from zorder.table.storage import Storage

__all__ = ["MAX_COLUMN_ID", "add_columns"]

MAX_COLUMN_ID = "delta.columnMapping.maxColumnId"

# From this writer version a protocol lists its features, and deltalake 1.6's
# set_table_properties adds some (variantType) to it.
_FEATURES_WRITER_VERSION = 7


def add_columns(storage: Storage, snapshot: TableSnapshot, added: DeltaSchema) -> TableSnapshot:
    """Add ``added``'s fields (each made nullable) to the table as of ``snapshot``, in a
    commit of its own (two under column mapping); returns the newest version, checked to
    hold them."""
    fields = [{**f, "nullable": True} for f in json.loads(added.to_json())["fields"]]
    names = [str(f["name"]) for f in fields]
    mapping = snapshot.schema.mapping
    try:
        if mapping is None:
            snapshot.table.alter.add_columns([Field.from_json(json.dumps(f)) for f in fields])
        else:
            fields = _add_mapped(snapshot, fields, names)
    except CommitFailedError as error:
        raise ConcurrentCommitError(
            f"adding columns {names} to {storage.uri} conflicts with a concurrent commit: "
            f"{error}. Nothing of the data was written; run again on the new version."
        ) from error
    except DeltaError as error:
        raise UnsupportedTableError(
            f"deltalake could not add columns {names} to {storage.uri}: {error}. Nothing of "
            "the data was written"
        ) from error
    latest = load_snapshot(storage)
    _check_added(latest, fields)
    return latest if snapshot.time_zone is None else latest.in_time_zone(snapshot.time_zone)


def _add_mapped(
    snapshot: TableSnapshot, fields: list[dict[str, Any]], names: Sequence[str]
) -> list[dict[str, Any]]:
    """Under column mapping: the maximum id raised, then the fields with their ids and
    physical names committed as an overwrite of no partition. Returns the fields as
    committed."""
    uri = snapshot.uri
    why = ""
    if not snapshot.partition_columns:
        why = "the table is not partitioned"
    elif snapshot.table.protocol().min_writer_version >= _FEATURES_WRITER_VERSION:
        why = "its protocol lists table features, to which deltalake would add others"
    if why:
        raise UnsupportedTableError(
            f"cannot add columns {list(names)} to the column-mapped table {uri}: deltalake "
            f"1.6 adds no column to a column-mapped table, and zorder's way around it does "
            f"not apply here ({why}). Add them with Delta Spark (ALTER TABLE delta.`{uri}` "
            "ADD COLUMNS (...)), then append. Nothing was written"
        )
    schema = json.loads(snapshot.schema.json)
    column = snapshot.partition_columns[0]
    value = _nowhere_value(schema, column, uri, names)
    configured = snapshot.configuration.get(MAX_COLUMN_ID)
    next_id = max(int(configured or 0), _max_id(schema)) + 1
    mapped = []
    for field in fields:
        field, next_id = _with_ids(field, next_id)
        mapped.append(field)
    table = snapshot.table
    _raise_max_id(table, next_id - 1)
    table.update_incremental()
    if table.version() != snapshot.version + 1 or json.loads(table.schema().to_json()) != schema:
        raise ConcurrentCommitError(
            f"adding columns {list(names)} to {uri}: another commit came after version "
            f"{snapshot.version} (the table is at version {table.version()}), and its schema "
            "may differ; only delta.columnMapping.maxColumnId was raised (an id reserved and "
            "unused). Nothing of the data was written; run again on the new version."
        )
    evolved = {**schema, "fields": [*schema["fields"], *mapped]}
    table.create_write_transaction(
        [],
        mode="overwrite",
        schema=DeltaSchema.from_json(json.dumps(evolved)),
        partition_by=list(snapshot.partition_columns),
        # No partition satisfies both, NULL included: nothing is replaced.
        partition_filters=[(column, "=", value), (column, "!=", value)],
    )
    return mapped


def _raise_max_id(table: DeltaTable, max_id: int) -> None:
    """The properties commit: ``delta.columnMapping.maxColumnId`` raised to ``max_id``."""
    table.alter.set_table_properties({MAX_COLUMN_ID: str(max_id)}, raise_if_not_exists=False)


def _nowhere_value(schema: dict[str, Any], column: str, uri: str, names: Sequence[str]) -> str:
    """A value of partition column ``column``'s type, as Delta writes partition values,
    for the filters that replace no partition (deltalake parses them by that type)."""
    kind = next((f["type"] for f in schema["fields"] if f["name"] == column), None)
    if kind in ("string", "binary"):
        return "zorder"
    if kind in ("byte", "short", "integer", "long", "float", "double"):
        return "0"
    if kind == "boolean":
        return "true"
    if kind == "date":
        return "1970-01-01"
    if kind in ("timestamp", "timestamp_ntz"):
        return "1970-01-01 00:00:00"
    decimal = re.fullmatch(r"decimal\(\d+,\s*(\d+)\)", kind) if isinstance(kind, str) else None
    if decimal is not None:
        scale = int(decimal.group(1))
        return "0." + "0" * scale if scale else "0"
    raise UnsupportedTableError(
        f"cannot add columns {list(names)} to the column-mapped table {uri}: its partition "
        f"column {column!r} is of type {json.dumps(kind)}, for which zorder has no partition "
        "filter to replace nothing with (accepted: string, binary, byte, short, integer, "
        "long, float, double, boolean, date, timestamp, timestamp_ntz, decimal). Add them "
        f"with Delta Spark (ALTER TABLE delta.`{uri}` ADD COLUMNS (...)), then append. "
        "Nothing was written"
    )


def _with_ids(kind: Any, next_id: int) -> tuple[Any, int]:
    """``kind`` (a field, or a type) with an id and a physical name on every field in it."""
    if not isinstance(kind, dict):
        return kind, next_id
    if "name" in kind and "type" in kind:  # a field
        metadata = {
            **(kind.get("metadata") or {}),
            COLUMN_ID: next_id,
            PHYSICAL_NAME: f"col-{uuid.uuid4()}",
        }
        inner, after = _with_ids(kind["type"], next_id + 1)
        return {**kind, "type": inner, "metadata": metadata}, after
    if kind.get("type") == "struct":
        fields = []
        for field in kind["fields"]:
            field, next_id = _with_ids(field, next_id)
            fields.append(field)
        return {**kind, "fields": fields}, next_id
    for key in ("elementType", "keyType", "valueType"):
        if key in kind:
            inner, next_id = _with_ids(kind[key], next_id)
            kind = {**kind, key: inner}
    return kind, next_id


def _max_id(kind: Any) -> int:
    """The largest column id in ``kind`` (a schema, a field or a type), 0 for none."""
    if isinstance(kind, list):
        return max((_max_id(k) for k in kind), default=0)
    if not isinstance(kind, dict):
        return 0
    own = int((kind.get("metadata") or {}).get(COLUMN_ID, 0)) if "name" in kind else 0
    inner = [
        kind[k] for k in ("type", "fields", "elementType", "keyType", "valueType") if k in kind
    ]
    return max([own, *(_max_id(k) for k in inner)])


def _check_added(latest: TableSnapshot, fields: Sequence[dict[str, Any]]) -> None:
    """Refuse to go on unless the newest version holds every field as it was added."""
    committed = {f["name"]: f for f in json.loads(latest.schema.json)["fields"]}
    for field in fields:
        found = committed.get(field["name"])
        wanted_physical = (field.get("metadata") or {}).get(PHYSICAL_NAME)
        found_physical = (found.get("metadata") or {}).get(PHYSICAL_NAME) if found else None
        if found is None or found["type"] != field["type"] or wanted_physical != found_physical:
            raise ConcurrentCommitError(
                f"column {field['name']!r} was added to {latest.uri}, but its version "
                f"{latest.version} holds {json.dumps(found) if found else 'no such column'}; "
                "nothing of the data was written"
            )
