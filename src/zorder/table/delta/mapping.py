"""Column mapping: the logical names a table shows, the physical names (and, in ``id``
mode, the Parquet field ids) its files, statistics and partition values hold.

Delta Spark gives every column (nested fields too) a physical name and an id
once, in the field's metadata, and a rename or drop changes only the logical
schema: a file written before a rename still holds the column under its
physical name and id. In ``name`` mode readers find columns by physical
name, in ``id`` mode by field id. zorder shows logical names. Pure: works on
the schema's JSON and on Arrow arrays.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import pyarrow as pa

__all__ = ["PHYSICAL_NAME", "ColumnMapping", "MappingMode"]

PHYSICAL_NAME = "delta.columnMapping.physicalName"
COLUMN_ID = "delta.columnMapping.id"
# Where Spark's Parquet reader and writer take a field's id from.
SPARK_FIELD_ID = "parquet.field.id"
# Where pyarrow shows a Parquet field's id.
ARROW_FIELD_ID = b"PARQUET:field_id"

MappingMode = Literal["name", "id"]


@dataclass(frozen=True)
class ColumnMapping:
    """A table's mapping from logical to physical names (``None`` where none is mapped)."""

    schema: Mapping[str, Any]  # the logical schema, as Delta's JSON
    mode: MappingMode = "name"

    @classmethod
    def of(cls, schema_json: str, mode: MappingMode = "name") -> ColumnMapping:
        return cls(json.loads(schema_json), mode)

    @property
    def physical(self) -> dict[str, str]:
        """Each top-level column's physical name, by its logical name."""
        return {f["name"]: _physical(f) for f in self.schema["fields"]}

    def physical_schema_json(self) -> str:
        """The schema with every name (nested too) physical, as the files hold it; in id
        mode each field also carries its id where Spark reads and writes it."""
        return json.dumps(_renamed_type(self.schema, with_ids=self.mode == "id"))

    def stored_columns(self, file_schema: pa.Schema, columns: list[str]) -> dict[str, str]:
        """For each of ``columns`` (logical) the file holds: the name it has in the file.

        By physical name, or in id mode by field id (nested fields by name: a
        nested field whose id is the schema's under another name is refused).
        """
        fields = {f["name"]: f for f in self.schema["fields"]}
        found = {}
        if self.mode == "name":
            present = set(file_schema.names)
            return {c: _physical(fields[c]) for c in columns if _physical(fields[c]) in present}
        by_id = {_arrow_id(f): f for f in file_schema if _arrow_id(f) is not None}
        for column in columns:
            stored = by_id.get(int(fields[column]["metadata"][COLUMN_ID]))
            if stored is None:
                continue
            if not _nested_names_agree(fields[column]["type"], stored.type):
                raise ValueError(
                    f"the nested fields of {column!r} carry the table's ids under other names"
                )
            found[column] = stored.name
        return found

    def logical_statistics(self, stats: pa.StructArray) -> pa.StructArray | None:
        """A min/max/null_count struct keyed by physical names, keyed by logical ones.

        A field the schema does not know (a dropped column's) is left out;
        None when no field is left.
        """
        return _logical_struct(stats, self.schema["fields"])

    def stored_array(self, array: Any, stored: pa.DataType) -> Any:
        """A column of the table's logical type under the stored type's nested names, as
        files hold it."""
        return _relabelled(array, stored)

    def logical_array(self, array: Any, logical: pa.DataType) -> Any:
        """A column of the table's physical type (cast to it first: the cast matches nested
        fields by name) under the logical type's nested names."""
        return _relabelled(array, logical)


def _physical(field: Mapping[str, Any]) -> str:
    return str((field.get("metadata") or {}).get(PHYSICAL_NAME, field["name"]))


def _renamed_type(kind: Any, *, with_ids: bool) -> Any:
    if not isinstance(kind, dict):
        return kind
    if kind.get("type") == "struct":
        fields = []
        for f in kind["fields"]:
            metadata = dict(f.get("metadata") or {})
            if with_ids:
                metadata[SPARK_FIELD_ID] = int(metadata[COLUMN_ID])
            renamed = _renamed_type(f["type"], with_ids=with_ids)
            fields.append({**f, "name": _physical(f), "type": renamed, "metadata": metadata})
        return {**kind, "fields": fields}
    if kind.get("type") == "array":
        return {**kind, "elementType": _renamed_type(kind["elementType"], with_ids=with_ids)}
    if kind.get("type") == "map":
        return {
            **kind,
            "keyType": _renamed_type(kind["keyType"], with_ids=with_ids),
            "valueType": _renamed_type(kind["valueType"], with_ids=with_ids),
        }
    return kind


def _arrow_id(field: pa.Field) -> int | None:
    raw = (field.metadata or {}).get(ARROW_FIELD_ID)
    return None if raw is None else int(raw)


def _nested_names_agree(kind: Any, stored: pa.DataType) -> bool:
    """Does every nested field of ``stored`` that carries the id of a field inside ``kind``
    (Delta JSON) also carry that field's physical name? Nested fields are then matched by
    name: fields added or dropped since the file was written agree too."""
    if not isinstance(kind, dict):
        return True
    if kind.get("type") == "struct":
        if not pa.types.is_struct(stored):
            return False
        by_id = {int(f["metadata"][COLUMN_ID]): f for f in kind["fields"]}
        for index in range(stored.num_fields):
            child = stored.field(index)
            child_id = _arrow_id(child)
            field = by_id.get(child_id) if child_id is not None else None
            if field is None:
                continue
            if child.name != _physical(field) or not _nested_names_agree(field["type"], child.type):
                return False
        return True
    if kind.get("type") == "array":
        listed = pa.types.is_list(stored) or pa.types.is_large_list(stored)
        return listed and _nested_names_agree(kind["elementType"], stored.value_type)
    if kind.get("type") == "map":
        return (
            pa.types.is_map(stored)
            and _nested_names_agree(kind["keyType"], stored.key_type)
            and _nested_names_agree(kind["valueType"], stored.item_type)
        )
    return True


def _logical_struct(
    stats: pa.StructArray, fields: list[Mapping[str, Any]]
) -> pa.StructArray | None:
    by_physical = {stats.type.field(i).name: i for i in range(stats.type.num_fields)}
    flat = stats.flatten()
    names, children = [], []
    for field in fields:
        index = by_physical.get(_physical(field))
        if index is None:
            continue
        child = flat[index]
        kind = field["type"]
        if (
            isinstance(kind, dict)
            and kind.get("type") == "struct"
            and pa.types.is_struct(child.type)
        ):
            child = _logical_struct(child, kind["fields"])
            if child is None:
                continue
        names.append(field["name"])
        children.append(child)
    if not names:
        return None
    return pa.StructArray.from_arrays(children, names=names, mask=stats.is_null())


def _relabelled(array: Any, logical: pa.DataType) -> Any:
    """``array`` with the field names of ``logical`` (matched by position at every level),
    its values untouched: a zero-copy view, since names are no part of Arrow's layout."""
    names_only = _names_of(array.type, logical)
    if names_only == array.type:
        return array
    if isinstance(array, pa.ChunkedArray):
        return pa.chunked_array([c.view(names_only) for c in array.chunks], type=names_only)
    return array.view(names_only)


def _names_of(stored: pa.DataType, logical: pa.DataType) -> pa.DataType:
    """``stored`` with the nested field names of ``logical`` where their shapes agree."""
    if pa.types.is_struct(stored) and pa.types.is_struct(logical):
        if stored.num_fields != logical.num_fields:
            return stored
        return pa.struct(
            [
                pa.field(
                    logical.field(i).name,
                    _names_of(stored.field(i).type, logical.field(i).type),
                    stored.field(i).nullable,
                )
                for i in range(stored.num_fields)
            ]
        )
    if pa.types.is_list(stored) and pa.types.is_list(logical):
        return pa.list_(
            stored.value_field.with_type(_names_of(stored.value_type, logical.value_type))
        )
    if pa.types.is_large_list(stored) and pa.types.is_large_list(logical):
        return pa.large_list(
            stored.value_field.with_type(_names_of(stored.value_type, logical.value_type))
        )
    if pa.types.is_map(stored) and pa.types.is_map(logical):
        return pa.map_(
            stored.key_field.with_type(_names_of(stored.key_type, logical.key_type)),
            stored.item_field.with_type(_names_of(stored.item_type, logical.item_type)),
        )
    return stored
