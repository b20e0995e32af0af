"""A table version's schema in each form its readers and writers need.

The log holds one schema (Delta's JSON, logical names); files, statistics
and partition values may name its columns otherwise (column mapping). From
it come the Arrow schema as Delta readers give it, the one the files hold,
each column's Spark type name, and each column's stored name. Metadata only:
nothing here reads a data file.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass

import pyarrow as pa
from deltalake import Schema as DeltaSchema

from zorder.curves.encodings import canonical_type_name
from zorder.table.delta.features import COLUMN_MAPPING_MODE
from zorder.table.delta.mapping import ColumnMapping

__all__ = ["TableSchema", "delta_schema"]

# Where Spark keeps a CHAR(n) or VARCHAR(n) column's declared type: Delta records "string".
_CHAR_VARCHAR_KEY = "__CHAR_VARCHAR_TYPE_STRING"


def delta_schema(schema_json: str) -> DeltaSchema:
    """A schema in Spark's JSON form (``StructType.json()``, which is Delta's) as the Delta
    schema a table is created, or its columns are added, with."""
    return DeltaSchema.from_json(schema_json)


@dataclass(frozen=True)
class TableSchema:
    """The schema of a pinned version (:attr:`zorder.table.TableSnapshot.schema`).

    Partition columns are not part of it: they are the version's metadata on
    how its files are laid out (:attr:`~zorder.table.TableSnapshot.partition_columns`).
    """

    delta: DeltaSchema  # as the log holds it: what a commit to the table keeps
    # The table's delta.columnMapping.mode as written (``none`` without one).
    mapping_mode: str = "none"

    @classmethod
    def of(cls, delta: DeltaSchema, configuration: Mapping[str, str | None]) -> TableSchema:
        return cls(delta, str(configuration.get(COLUMN_MAPPING_MODE) or "none"))

    @functools.cached_property
    def json(self) -> str:
        """The schema as the log holds it (Delta's JSON form)."""
        return str(self.delta.to_json())

    @functools.cached_property
    def column_types(self) -> dict[str, str]:
        """Each top-level column's Spark type name (``bigint``, ``decimal(12,3)``, ...).

        Read from the Delta schema itself, so that planning a read needs no
        pyspark. A nested column's type is named by its kind (``struct``...). A
        ``CHAR(n)`` column (Delta's ``string`` with Spark's type in the field's
        metadata) is named ``char(n)``: Spark stores its values padded to ``n`` and pads
        a literal it is compared with, which no statistic, bloom filter or in-process
        evaluator here reproduces, so every comparison with it stays Unknown (files are
        kept, and the rows are Spark's).
        """
        types = {}
        for entry in json.loads(self.json)["fields"]:
            kind = entry["type"]
            name = kind if isinstance(kind, str) else str(kind.get("type", "nested"))
            declared = str((entry.get("metadata") or {}).get(_CHAR_VARCHAR_KEY, ""))
            if declared.strip().lower().startswith("char("):
                types[entry["name"]] = declared.strip().lower().replace(" ", "")
                continue
            try:
                types[entry["name"]] = canonical_type_name(name)
            except ValueError:
                types[entry["name"]] = name  # binary, nested: comparisons stay Unknown
        return types

    @functools.cached_property
    def mapping(self) -> ColumnMapping | None:
        """The table's column mapping (``name`` or ``id`` mode), None without one."""
        if self.mapping_mode not in ("name", "id"):
            return None
        return ColumnMapping.of(self.json, "id" if self.mapping_mode == "id" else "name")

    def stored_name(self, column: str) -> str:
        """The name files, statistics and partition values give the top-level ``column``."""
        return column if self.mapping is None else self.mapping.physical[column]

    @functools.cached_property
    def arrow(self) -> pa.Schema:
        """The table's schema in Arrow types, as Delta readers give them."""
        return pa.schema(self.delta.to_arrow())

    @functools.cached_property
    def stored_arrow(self) -> pa.Schema:
        """The schema the files hold (physical names under column mapping) in Arrow types."""
        if self.mapping is None:
            return self.arrow
        return pa.schema(DeltaSchema.from_json(self.mapping.physical_schema_json()).to_arrow())
