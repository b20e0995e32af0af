"""A test-only stand-in for Delta Spark's DELETE with deletion vectors and its RENAME COLUMN.

deltalake writes no deletion vectors, and Delta Spark needs Maven, so the
tests make their own, as the protocol specifies (delta-io/delta PROTOCOL.md,
"Deletion Vector Format"): a RoaringBitmapArray of the deleted row
positions, stored inline (``i``), in a file named by a UUID (``u``) or at an
absolute path (``p``), and one commit that removes the file's old logical
entry and adds it again with the new vector, as a DELETE does. The log is
replayed from its JSON commits only: use it on tables without checkpoints.
:func:`rename_column`, :func:`add_column` and :func:`enable_deletion_vectors` make those
changes to a column-mapped table likewise.
"""

from __future__ import annotations

import json
import struct
import time
import uuid
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pyroaring import BitMap

Storage = Literal["u", "i", "p"]
STORAGES: tuple[Storage, ...] = ("u", "i", "p")

_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
_BITMAP_MAGIC = 1681511377


def z85(data: bytes) -> str:
    """ZeroMQ's Z85 (Python 3.13 has base64.z85encode; 3.11 does not)."""
    assert len(data) % 4 == 0
    out = []
    for (word,) in struct.iter_unpack(">I", data):
        chars = []
        for _ in range(5):
            word, digit = divmod(word, 85)
            chars.append(_Z85[digit])
        out.append("".join(reversed(chars)))
    return "".join(out)


def serialized_bitmap(rows: Iterable[int]) -> bytes:
    """The protocol's RoaringBitmapArray: magic, count, then (high key, 32-bit bitmap) pairs."""
    by_key: dict[int, list[int]] = {}
    for row in sorted(set(rows)):
        by_key.setdefault(row >> 32, []).append(row & 0xFFFFFFFF)
    parts = [struct.pack("<iq", _BITMAP_MAGIC, len(by_key))]
    for key, lows in sorted(by_key.items()):
        parts.append(struct.pack("<i", key) + BitMap(lows).serialize())
    return b"".join(parts)


def live_adds(table: Path) -> dict[str, dict[str, Any]]:
    """The live add actions by path, replayed from the JSON commits."""
    live: dict[str, dict[str, Any]] = {}
    for commit in sorted((table / "_delta_log").glob("*.json")):
        for line in commit.read_text().splitlines():
            action = json.loads(line)
            if "add" in action:
                live[action["add"]["path"]] = action["add"]
            elif "remove" in action:
                live.pop(action["remove"]["path"], None)
    return live


def deleted_rows(table: Path, add: dict[str, Any]) -> set[int]:
    """The positions an add action's deletion vector deletes (this module's vectors only)."""
    vector = add.get("deletionVector")
    if vector is None:
        return set()
    if vector["storageType"] == "i":
        blob = unz85(vector["pathOrInlineDv"])[: vector["sizeInBytes"]]
    else:
        if vector["storageType"] == "p":
            location = Path(vector["pathOrInlineDv"].removeprefix("file://"))
        else:
            encoded = vector["pathOrInlineDv"]
            prefix, code = encoded[:-20], encoded[-20:]
            location = table / prefix / f"deletion_vector_{uuid.UUID(bytes=unz85(code))}.bin"
        start = vector["offset"] + 4
        blob = location.read_bytes()[start : start + vector["sizeInBytes"]]
    count = struct.unpack_from("<q", blob, 4)[0]
    rows: set[int] = set()
    position = 12
    for _ in range(count):
        key = struct.unpack_from("<i", blob, position)[0]
        bitmap = BitMap.deserialize(blob[position + 4 :])
        rows |= {(key << 32) | low for low in bitmap}
        position += 4 + len(bitmap.serialize())
    return rows


def unz85(text: str) -> bytes:
    words = []
    for start in range(0, len(text), 5):
        word = 0
        for char in text[start : start + 5]:
            word = word * 85 + _Z85.index(char)
        words.append(struct.pack(">I", word))
    return b"".join(words)


def delete_rows(
    table: str | Path, path: str, rows: Iterable[int], *, storage: Storage = "u"
) -> int:
    """Commit a DELETE of the file ``path``'s rows at ``rows`` (0-based) as a deletion vector.

    Rows the file's vector already deletes stay deleted. Returns the new version.
    """
    root = Path(table)
    add = live_adds(root)[path]
    deleted = deleted_rows(root, add) | set(rows)
    assert max(deleted, default=0) < json.loads(add["stats"])["numRecords"], "no such row"
    bitmap = serialized_bitmap(deleted)
    if storage == "i":
        padded = bitmap + b"\0" * (-len(bitmap) % 4)
        descriptor: dict[str, Any] = {"storageType": "i", "pathOrInlineDv": z85(padded)}
    else:
        identifier = uuid.uuid4()
        name = f"deletion_vector_{identifier}.bin"
        checksum = struct.pack(">I", zlib.crc32(bitmap))
        (root / name).write_bytes(b"\x01" + struct.pack(">i", len(bitmap)) + bitmap + checksum)
        where = z85(identifier.bytes) if storage == "u" else (root / name).as_uri()
        descriptor = {"storageType": storage, "pathOrInlineDv": where, "offset": 1}
    descriptor |= {"sizeInBytes": len(bitmap), "cardinality": len(deleted)}
    now = int(time.time() * 1000)
    removed = {k: v for k, v in add.items() if k not in ("stats", "modificationTime")}
    removed |= {"deletionTimestamp": now, "dataChange": True, "extendedFileMetadata": True}
    stats = json.loads(add.get("stats") or "{}") | {"tightBounds": False}
    added = add | {"deletionVector": descriptor, "dataChange": True, "stats": json.dumps(stats)}
    log = root / "_delta_log"
    version = max(int(p.stem) for p in log.glob("*.json")) + 1
    commit_info = {"timestamp": now, "operation": "DELETE", "readVersion": version - 1}
    lines = [{"commitInfo": commit_info}, {"remove": removed}, {"add": added}]
    with open(log / f"{version:020d}.json", "x") as out:  # fails if another commit took it
        out.write("\n".join(json.dumps(line) for line in lines) + "\n")
    return version


def latest_schema(table: str | Path) -> dict[str, Any]:
    """The table's schema (Delta's JSON), replayed from the JSON commits."""
    return dict(json.loads(_latest_metadata(Path(table) / "_delta_log")["schemaString"]))


def _latest_metadata(log: Path) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    for commit in sorted(log.glob("*.json")):
        for line in commit.read_text().splitlines():
            action = json.loads(line)
            if "metaData" in action:
                metadata = action["metaData"]
    return metadata


def _latest_protocol(log: Path) -> dict[str, Any]:
    protocol: dict[str, Any] = {}
    for commit in sorted(log.glob("*.json")):
        for line in commit.read_text().splitlines():
            action = json.loads(line)
            if "protocol" in action:
                protocol = action["protocol"]
    return protocol


def _commit_metadata(log: Path, metadata: dict[str, Any], operation: str) -> int:
    version = max(int(p.stem) for p in log.glob("*.json")) + 1
    info = {"timestamp": int(time.time() * 1000), "operation": operation}
    with open(log / f"{version:020d}.json", "x") as out:
        out.write(
            json.dumps({"commitInfo": info}) + "\n" + json.dumps({"metaData": metadata}) + "\n"
        )
    return version


def set_properties(table: str | Path, properties: dict[str, str]) -> int:
    """Commit Delta Spark's ALTER TABLE SET TBLPROPERTIES (a metadata action only).

    For properties deltalake refuses to write, e.g. UniForm's
    ``delta.universalFormat.enabledFormats``. Returns the new version.
    """
    log = Path(table) / "_delta_log"
    metadata = _latest_metadata(log)
    configuration = dict(metadata.get("configuration") or {}) | properties
    return _commit_metadata(log, metadata | {"configuration": configuration}, "SET TBLPROPERTIES")


def rename_column(table: str | Path, old: str, new: str) -> int:
    """Commit Delta Spark's RENAME COLUMN (column mapping): a new logical name, same physical.

    Returns the new version.
    """
    log = Path(table) / "_delta_log"
    metadata = _latest_metadata(log)
    schema = json.loads(metadata["schemaString"])
    (field,) = [f for f in schema["fields"] if f["name"] == old]
    assert "delta.columnMapping.physicalName" in field["metadata"], "no column mapping"
    field["name"] = new
    partitions = [new if c == old else c for c in metadata["partitionColumns"]]
    renamed = metadata | {"schemaString": json.dumps(schema), "partitionColumns": partitions}
    return _commit_metadata(log, renamed, "RENAME COLUMN")


def _new_field(name: str, kind: str, configuration: dict[str, Any]) -> dict[str, Any]:
    """A mapped field with the table's next column id (``configuration`` counts it)."""
    column_id = int(configuration["delta.columnMapping.maxColumnId"]) + 1
    configuration["delta.columnMapping.maxColumnId"] = str(column_id)
    mapping = {
        "delta.columnMapping.id": column_id,
        "delta.columnMapping.physicalName": f"col-{uuid.uuid4()}",
    }
    return {"name": name, "type": kind, "nullable": True, "metadata": mapping}


def add_column(table: str | Path, name: str, kind: str) -> int:
    """Commit Delta Spark's ADD COLUMN on a column-mapped table: a new id and physical name."""
    log = Path(table) / "_delta_log"
    metadata = _latest_metadata(log)
    schema = json.loads(metadata["schemaString"])
    configuration = dict(metadata["configuration"])
    schema["fields"].append(_new_field(name, kind, configuration))
    added = metadata | {"schemaString": json.dumps(schema), "configuration": configuration}
    return _commit_metadata(log, added, "ADD COLUMNS")


def enable_deletion_vectors(table: str | Path) -> int:
    """Commit the protocol upgrade Delta Spark makes for deletion vectors on a legacy
    column-mapped table (reader 2, writer 5): table features listing what that implied.

    (deltalake's own add_feature fails on a partitioned column-mapped table.)
    """
    log = Path(table) / "_delta_log"
    implied = ["appendOnly", "invariants", "checkConstraints", "changeDataFeed"]
    protocol = {
        "minReaderVersion": 3,
        "minWriterVersion": 7,
        "readerFeatures": ["columnMapping", "deletionVectors"],
        "writerFeatures": [*implied, "generatedColumns", "columnMapping", "deletionVectors"],
    }
    version = max(int(p.stem) for p in log.glob("*.json")) + 1
    info = {"timestamp": int(time.time() * 1000), "operation": "UPGRADE PROTOCOL"}
    with open(log / f"{version:020d}.json", "x") as out:
        out.write(
            json.dumps({"commitInfo": info}) + "\n" + json.dumps({"protocol": protocol}) + "\n"
        )
    return version


def widen_columns(table: str | Path, widened: dict[str, str]) -> int:
    """Commit Delta Spark's type widening (ALTER COLUMN ... TYPE) of ``widened`` columns:
    the typeWidening feature, the wider types and their ``delta.typeChanges`` (each change
    added to the column's history)."""
    log = Path(table) / "_delta_log"
    metadata = _latest_metadata(log)
    schema = json.loads(metadata["schemaString"])
    for field in schema["fields"]:
        if field["name"] in widened:
            change = {"fromType": field["type"], "toType": widened[field["name"]]}
            history = field.get("metadata", {}).get("delta.typeChanges", [])
            field["metadata"] = {
                **field.get("metadata", {}),
                "delta.typeChanges": [*history, change],
            }
            field["type"] = widened[field["name"]]
    return _commit_widening(log, metadata, schema, ntz="timestamp_ntz" in widened.values())


def widen_nested(
    table: str | Path, column: str, kind: dict[str, Any], changes: list[dict[str, str]]
) -> int:
    """Commit a widening inside the nested ``column``: its new type ``kind`` (whose struct
    fields carry their own ``delta.typeChanges``) and ``changes`` of its array elements and
    map keys and values (each with its ``fieldPath``)."""
    log = Path(table) / "_delta_log"
    metadata = _latest_metadata(log)
    schema = json.loads(metadata["schemaString"])
    (field,) = [f for f in schema["fields"] if f["name"] == column]
    field["type"] = kind
    if changes:
        history = field.get("metadata", {}).get("delta.typeChanges", [])
        field["metadata"] = {**field.get("metadata", {}), "delta.typeChanges": history + changes}
    return _commit_widening(log, metadata, schema, ntz="timestamp_ntz" in json.dumps(kind))


def _commit_widening(
    log: Path, metadata: dict[str, Any], schema: dict[str, Any], *, ntz: bool
) -> int:
    features = ["typeWidening", *(["timestampNtz"] if ntz else [])]
    current = _latest_protocol(log)  # features the table lists already stay listed
    protocol = {
        "minReaderVersion": 3,
        "minWriterVersion": 7,
        "readerFeatures": sorted({*current.get("readerFeatures", []), *features}),
        "writerFeatures": sorted({*current.get("writerFeatures", []), *features}),
    }
    version = max(int(p.stem) for p in log.glob("*.json")) + 1
    info = {"timestamp": int(time.time() * 1000), "operation": "CHANGE COLUMN"}
    lines = [
        {"commitInfo": info},
        {"protocol": protocol},
        {"metaData": metadata | {"schemaString": json.dumps(schema)}},
    ]
    with open(log / f"{version:020d}.json", "x") as out:
        out.write("\n".join(json.dumps(line) for line in lines) + "\n")
    return version


def change_struct(
    table: str | Path, column: str, *, add: tuple[str, str] | None = None, drop: str | None = None
) -> int:
    """Commit Delta Spark's ALTER TABLE ADD / DROP COLUMN of a field inside struct ``column``
    of a column-mapped table: the added field gets a new id and physical name."""
    log = Path(table) / "_delta_log"
    metadata = _latest_metadata(log)
    schema = json.loads(metadata["schemaString"])
    configuration = dict(metadata["configuration"])
    (struct,) = [f for f in schema["fields"] if f["name"] == column]
    fields = struct["type"]["fields"]
    if drop is not None:
        fields[:] = [f for f in fields if f["name"] != drop]
    if add is not None:
        fields.append(_new_field(*add, configuration))
    changed = metadata | {"schemaString": json.dumps(schema), "configuration": configuration}
    return _commit_metadata(log, changed, "ALTER COLUMNS")
