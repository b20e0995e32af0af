"""Column mapping (Delta's ``name`` mode): the logical names a table shows, the physical
names its files, statistics and partition values hold.

Delta Spark gives every column (nested fields too) a physical name once, in
the field's metadata, and a rename or drop changes only the logical schema:
a file written before a rename still holds the column under its physical
name. zorder reads and writes files by physical names and shows logical
ones. Pure: works on the schema's JSON and on Arrow arrays.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

__all__ = ["PHYSICAL_NAME", "ColumnMapping"]

PHYSICAL_NAME = "delta.columnMapping.physicalName"


@dataclass(frozen=True)
class ColumnMapping:
    """A table's mapping from logical to physical names (``None`` where none is mapped)."""

    schema: Mapping[str, Any]  # the logical schema, as Delta's JSON

    @classmethod
    def of(cls, schema_json: str) -> ColumnMapping:
        return cls(json.loads(schema_json))

    @property
    def physical(self) -> dict[str, str]:
        """Each top-level column's physical name, by its logical name."""
        return {f["name"]: _physical(f) for f in self.schema["fields"]}

    def physical_schema_json(self) -> str:
        """The schema with every name (nested too) physical: how the files hold it."""
        return json.dumps(_renamed_type(self.schema))

    def logical_statistics(self, stats: pa.StructArray) -> pa.StructArray | None:
        """A min/max/null_count struct keyed by physical names, keyed by logical ones.

        A field the schema does not know (a dropped column's) is left out;
        None when no field is left.
        """
        return _logical_struct(stats, self.schema["fields"])

    def logical_array(self, array: Any, logical: pa.DataType) -> Any:
        """A column read from a file (physical nested names) with the logical type's names;
        its leaf types stay as stored (cast them afterwards)."""
        return _relabelled(array, logical)


def _physical(field: Mapping[str, Any]) -> str:
    return str((field.get("metadata") or {}).get(PHYSICAL_NAME, field["name"]))


def _renamed_type(kind: Any) -> Any:
    if not isinstance(kind, dict):
        return kind
    if kind.get("type") == "struct":
        fields = [
            {**f, "name": _physical(f), "type": _renamed_type(f["type"])} for f in kind["fields"]
        ]
        return {**kind, "fields": fields}
    if kind.get("type") == "array":
        return {**kind, "elementType": _renamed_type(kind["elementType"])}
    if kind.get("type") == "map":
        return {
            **kind,
            "keyType": _renamed_type(kind["keyType"]),
            "valueType": _renamed_type(kind["valueType"]),
        }
    return kind


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
