"""Columns as planning sees them, in no engine's types, and the requests checked against them.

A write's rows (a Spark DataFrame, files read in process) and a table's log
all give their schema as the same JSON (Spark's ``StructType.json()`` is the
form Delta's log holds). :class:`Columns` reads the top-level columns from it:
each name, its Spark type name (``bigint``, ``decimal(12,3)``,
``struct<a:int>``), and a ``CHAR``/``VARCHAR`` type Spark declared in the
field's metadata. Clustering columns, bloom filter columns and partition
columns are checked here against it, so that planning an in-process run needs
no pyspark (:mod:`zorder.spark.keys` and :mod:`zorder.spark.layout` give the
same checks a DataFrame).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from zorder.columns import resolve_column
from zorder.curves.clustering import ClusteringColumn, ClusteringPlan, bits_per_column
from zorder.curves.encodings import SUPPORTED_TYPES, canonical_type_name
from zorder.curves.kinds import (
    BLOOM_FILTER_TYPES,
    BloomColumn,
    ClusteringSpec,
    Curve,
    KeyMethod,
    as_curve,
    as_key_method,
    bloom_filter_type,
)
from zorder.errors import InvalidArgumentError, UnsupportedColumnTypeError

__all__ = [
    "PARTITIONABLE_TYPES",
    "Columns",
    "SchemaField",
    "plan_clustering",
    "resolve_bloom_columns",
    "resolve_clustering_columns",
    "resolve_partition_columns",
    "same_type",
    "type_text",
]

# Where Spark keeps a CHAR(n) or VARCHAR(n) column's declared type: the JSON says "string".
_CHAR_VARCHAR_KEY = "__CHAR_VARCHAR_TYPE_STRING"
# The JSON's names that differ from Spark's simpleString.
_SIMPLE_NAMES = {"integer": "int", "long": "bigint", "short": "smallint", "byte": "tinyint"}

# Delta partition values are strings in the log: types with an exact text form.
PARTITIONABLE_TYPES = (
    "string",
    "tinyint",
    "smallint",
    "int",
    "bigint",
    "boolean",
    "date",
    "timestamp",
    "timestamp_ntz",
    "decimal(p,s)",
)


def type_text(kind: str | Mapping[str, Any]) -> str:
    """A JSON schema type as Spark's ``simpleString`` names it."""
    if isinstance(kind, str):
        return _SIMPLE_NAMES.get(kind, kind)
    tag = str(kind.get("type"))
    if tag == "struct":
        inner = ",".join(f"{f['name']}:{type_text(f['type'])}" for f in kind["fields"])
        return f"struct<{inner}>"
    if tag == "array":
        return f"array<{type_text(kind['elementType'])}>"
    if tag == "map":
        return f"map<{type_text(kind['keyType'])},{type_text(kind['valueType'])}>"
    if tag == "udt" and "sqlType" in kind:
        return type_text(kind["sqlType"])
    return tag


def same_type(one: str | Mapping[str, Any], other: str | Mapping[str, Any]) -> bool:
    """Whether two JSON schema types are one type as Spark's ``DataType`` equality has it:
    nested fields' names, nullability and metadata, an array's ``containsNull`` and a map's
    ``valueContainsNull`` included; a left-out flag or metadata read as Spark reads it."""
    return bool(_normal(one) == _normal(other))


def _normal(kind: str | Mapping[str, Any]) -> Any:
    if isinstance(kind, str):
        return kind
    tag = kind.get("type")
    if tag == "struct":
        fields = [
            (
                str(f["name"]),
                _normal(f["type"]),
                bool(f.get("nullable", True)),
                json.dumps(f.get("metadata") or {}, sort_keys=True),
            )
            for f in kind["fields"]
        ]
        return ("struct", tuple(fields))
    if tag == "array":
        return ("array", _normal(kind["elementType"]), bool(kind.get("containsNull", True)))
    if tag == "map":
        return (
            "map",
            _normal(kind["keyType"]),
            _normal(kind["valueType"]),
            bool(kind.get("valueContainsNull", True)),
        )
    return json.dumps(kind, sort_keys=True)


@dataclass(frozen=True)
class SchemaField:
    """One top-level column: its name, Spark type name and declared ``CHAR``/``VARCHAR``."""

    name: str
    type_name: str
    declared: str = ""  # e.g. "char(5)", as Spark records it in the field's metadata


@dataclass(frozen=True)
class Columns:
    """The top-level columns of a schema, in order."""

    fields: tuple[SchemaField, ...]

    @classmethod
    def from_json(cls, schema_json: str) -> Columns:
        """The columns of a schema in Spark's (and Delta's log's) JSON form."""
        fields = []
        for entry in json.loads(schema_json)["fields"]:
            declared = str((entry.get("metadata") or {}).get(_CHAR_VARCHAR_KEY, ""))
            fields.append(SchemaField(str(entry["name"]), type_text(entry["type"]), declared))
        return cls(tuple(fields))

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.fields]

    def field(self, name: str) -> SchemaField:
        """The column named exactly ``name`` (resolve a user's spelling first)."""
        return next(f for f in self.fields if f.name == name)


def resolve_clustering_columns(columns: Columns, by: Sequence[str]) -> list[ClusteringColumn]:
    """``by`` checked against ``columns``; names resolve case-insensitively, as in Spark.

    Raises InvalidArgumentError, naming the bad value and what would be accepted,
    for an empty or duplicated list or an unknown column, and
    UnsupportedColumnTypeError for a type no key can order.
    """
    if isinstance(by, str):
        by = [by]
    names = columns.names
    if not by:
        raise InvalidArgumentError(
            f"no clustering columns given; table columns: {', '.join(names)}"
        )
    resolved: list[ClusteringColumn] = []
    seen: set[str] = set()
    for wanted in by:
        if not isinstance(wanted, str) or not wanted:
            raise InvalidArgumentError(
                f"clustering column names must be non-empty strings, got {wanted!r}"
            )
        actual = resolve_column(wanted, names, kind="clustering column")
        if actual in seen:
            raise InvalidArgumentError(
                f"clustering column {actual!r} is listed twice in by={list(by)}"
            )
        seen.add(actual)
        spark_type = columns.field(actual).type_name
        try:
            type_name = canonical_type_name(spark_type)
        except InvalidArgumentError:
            raise UnsupportedColumnTypeError(
                f"clustering column {actual!r} has type {spark_type}, which has no order a "
                f"clustering key can use; accepted types: {', '.join(SUPPORTED_TYPES)}"
            ) from None
        resolved.append(ClusteringColumn(actual, type_name))
    return resolved


def resolve_bloom_columns(
    columns: Columns, blooms: Sequence[BloomColumn]
) -> tuple[BloomColumn, ...]:
    """``blooms`` checked against ``columns``, named as they spell the columns;
    UnsupportedColumnTypeError for a type a bloom filter cannot answer equality on."""
    resolved = []
    for bloom in blooms:
        actual = resolve_column(bloom.column, columns.names, kind="bloom filter column")
        found = columns.field(actual)
        spark_type = found.type_name
        if found.declared.lower().startswith("char("):
            spark_type = found.declared  # stored padded: compared as no filter hashes it
        if not bloom_filter_type(spark_type):
            raise UnsupportedColumnTypeError(
                f"bloom filter column {actual!r} has type {spark_type}, whose equality a "
                f"Parquet bloom filter cannot answer; accepted types: "
                f"{', '.join(BLOOM_FILTER_TYPES)}"
            )
        resolved.append(BloomColumn(actual, bloom.fpp))
    return tuple(resolved)


def plan_clustering(
    columns: Columns,
    by: Sequence[str] | ClusteringSpec,
    *,
    curve: Curve = "zorder",
    method: KeyMethod = "rank",
) -> ClusteringPlan:
    """The clustering request checked against ``columns`` (raises InvalidArgumentError).

    ``by`` is the columns, or a whole spec (its curve, method, weights and cuts).
    """
    if isinstance(by, ClusteringSpec):
        plan = ClusteringPlan(
            tuple(resolve_clustering_columns(columns, by.columns)),
            by.curve,
            by.method,
            by.weights,
            by.cuts,
            bloom_filters=resolve_bloom_columns(columns, by.bloom_filters),
        )
    else:
        plan = ClusteringPlan(
            tuple(resolve_clustering_columns(columns, by)), as_curve(curve), as_key_method(method)
        )
    if not plan.sorts_plainly and plan.method == "rank":
        bits_per_column(len(plan.columns))  # raises on too many columns, warns on many
    return plan


def _partitionable(type_name: str) -> bool:
    return type_name in PARTITIONABLE_TYPES or type_name.startswith("decimal(")


def resolve_partition_columns(
    columns: Columns, partition_by: Sequence[str], plan: ClusteringPlan
) -> tuple[str, ...]:
    """``partition_by`` as ``columns`` spell it, checked: known, partitionable, not clustered
    by."""
    if isinstance(partition_by, str):
        partition_by = [partition_by]
    names = columns.names
    resolved: list[str] = []
    for wanted in partition_by:
        actual = resolve_column(str(wanted), names, kind="partition column")
        if actual in resolved:
            raise InvalidArgumentError(f"partition column {actual!r} is listed twice")
        type_name = columns.field(actual).type_name
        try:
            partitionable = _partitionable(canonical_type_name(type_name))
        except InvalidArgumentError:
            partitionable = False
        if not partitionable:
            raise UnsupportedColumnTypeError(
                f"partition column {actual!r} has type {type_name}, which Delta cannot "
                f"partition by exactly; accepted types: {', '.join(PARTITIONABLE_TYPES)}"
            )
        if actual in plan.names:
            raise InvalidArgumentError(
                f"column {actual!r} is both a partition column and a clustering column; "
                "it is constant inside a partition, so cluster by other columns"
            )
        resolved.append(actual)
    if len(resolved) == len(names):
        raise InvalidArgumentError("a table needs at least one column that is not a partition")
    return tuple(resolved)
