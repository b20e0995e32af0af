"""Which Delta tables zorder reads and writes: the protocol's features, decided in one place.

Delta's rule (PROTOCOL.md, "Table Features"): a reader must support every
reader feature a table lists, a writer every writer feature. On the legacy
protocol (no feature lists) a reader version of 2 means column mapping may
be in use, and writer versions 2 to 6 allow invariants, check constraints,
generated and identity columns: what matters then is whether the table uses
them, which its configuration and schema say. Everything here is pure: it
looks at the protocol, the configuration and the schema, never at a file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "COLUMN_MAPPING_MODE",
    "DELETION_VECTORS",
    "Protocol",
    "WriteOperation",
    "restore_gaps",
    "unreadable",
    "unsupported_type_changes",
    "unwritable",
]

COLUMN_MAPPING_MODE = "delta.columnMapping.mode"
DELETION_VECTORS = "deletionVectors"

WriteOperation = Literal["append", "optimize", "restore", "vacuum"]

# Reader features whose tables zorder reads exactly (deletion vectors are applied on
# every read path, column mapping's physical names are read and written in name mode;
# the rest change nothing a Parquet read of the files sees).
_READABLE = {
    DELETION_VECTORS,
    "columnMapping",
    "timestampNtz",
    "typeWidening",  # Spark's Parquet reader and to_arrow's casts widen older files' values
    "typeWidening-preview",
    "v2Checkpoint",
    "vacuumProtocolCheck",
}
# Column mapping modes zorder reads and writes (by physical name, or by Parquet field id).
_MAPPING_MODES = {"none", "name", "id"}

# Writer features zorder honours in every write: the log and its checkpoints are
# deltalake's, optimize changes no row, and appends of whole rows need nothing more.
# Invariants, constraints, generated and identity columns are checked by use below.
_WRITABLE = (_READABLE - {"typeWidening", "typeWidening-preview"}) | {
    "appendOnly",
    "changeDataFeed",
    "checkConstraints",
    "generatedColumns",
    "invariants",
}

# Why a feature zorder does not honour matters to the person refused.
_WHY = {
    "columnMapping": "a column mapping mode zorder does not know",
    "rowTracking": "rewritten rows must keep their row ids, which zorder does not carry",
    "clustering": (
        "the table is liquid-clustered by Delta, which owns its layout (and deltalake cannot "
        "commit the clustering's domain metadata): cluster it with Delta's own OPTIMIZE "
        "(OPTIMIZE <table>, or OPTIMIZE <table> FULL) and append to it with Delta Spark; "
        "zorder reads it, skipping files on its statistics"
    ),
    "icebergCompatV1": "UniForm's Iceberg metadata would not follow zorder's commits",
    "icebergCompatV2": "UniForm's Iceberg metadata would not follow zorder's commits",
    "typeWidening": "deltalake, which makes zorder's commits, does not write to them",
    "typeWidening-preview": "deltalake, which makes zorder's commits, does not write to them",
    "inCommitTimestamp": "commits must carry in-commit timestamps, which deltalake does not write",
    "variantType": "zorder does not read the variant type",
    "variantType-preview": "zorder does not read the variant type",
    # deltalake 1.6 refuses to commit to such tables ("Unsupported table features").
    "identityColumns": "deltalake, which makes zorder's commits, does not write to them",
    "domainMetadata": "deltalake, which makes zorder's commits, does not write to them",
}


@dataclass(frozen=True)
class Protocol:
    """A table's protocol action, as deltalake gives it."""

    min_reader_version: int
    min_writer_version: int
    reader_features: tuple[str, ...] = ()
    writer_features: tuple[str, ...] = ()

    def describe(self) -> str:
        """``reader 3, writer 7, reader features [...]``."""
        text = f"reader {self.min_reader_version}, writer {self.min_writer_version}"
        if self.reader_features:
            text += f", reader features {sorted(self.reader_features)}"
        if self.writer_features:
            text += f", writer features {sorted(self.writer_features)}"
        return text

    @classmethod
    def of(cls, protocol: Any) -> Protocol:
        return cls(
            int(protocol.min_reader_version),
            int(protocol.min_writer_version),
            tuple(protocol.reader_features or ()),
            tuple(protocol.writer_features or ()),
        )


def unreadable(protocol: Protocol, configuration: Mapping[str, Any]) -> list[str]:
    """Why zorder cannot read the table exactly (empty: it can), one reason a feature."""
    reasons = []
    if protocol.min_reader_version > 3:
        reasons.append(f"reader version {protocol.min_reader_version} (zorder knows up to 3)")
    mode = str(configuration.get(COLUMN_MAPPING_MODE) or "none")
    if mode not in _MAPPING_MODES:
        reasons.append(f"columnMapping (mode {mode!r}): {_WHY['columnMapping']}")
    elif mode != "none" and not _mapping_enabled(protocol):
        # deltalake 1.6 makes such tables (a mapped table that also needs timestampNtz): its
        # files hold logical names. Delta Spark refuses them (DELTA_FEATURES_PROTOCOL_
        # METADATA_MISMATCH); read by physical name, every column would come back NULL.
        reasons.append(
            f"columnMapping (mode {mode!r}) is set in the table's configuration but its "
            f"protocol ({protocol.describe()}) does not enable it, so whether the files hold "
            "physical or logical names is not decided; Delta Spark refuses such tables too"
        )
    for feature in sorted(set(protocol.reader_features) - _READABLE - {"columnMapping"}):
        reasons.append(_reason(feature))
    return reasons


def _mapping_enabled(protocol: Protocol) -> bool:
    """PROTOCOL.md, Column Mapping, Enablement: reader 2 and writer 5 or newer, or reader 3
    and writer 7 with the columnMapping feature listed for both."""
    if protocol.min_reader_version >= 3 or protocol.min_writer_version >= 7:
        features = set(protocol.reader_features) & set(protocol.writer_features)
        return protocol.min_reader_version >= 2 and "columnMapping" in features
    return protocol.min_reader_version >= 2 and protocol.min_writer_version >= 5


def unwritable(
    protocol: Protocol,
    configuration: Mapping[str, Any],
    schema_json: str,
    operation: WriteOperation,
) -> list[str]:
    """Why zorder cannot make ``operation`` on the table (empty: it can)."""
    reasons = []
    if protocol.min_writer_version > 7:
        reasons.append(f"writer version {protocol.min_writer_version} (zorder knows up to 7)")
    # A vacuum commits nothing of zorder's: only features zorder does not know stop it
    # (vacuumProtocolCheck exists so that such writers leave tables alone).
    honoured = _WRITABLE | set(_WHY) if operation == "vacuum" else _WRITABLE
    for feature in sorted(set(protocol.writer_features) - honoured):
        reasons.append(_reason(feature))
    if operation == "vacuum":
        return reasons
    for name, kind in _column_rules(json.loads(schema_json)):
        if kind == _IDENTITY:  # on the legacy protocol too (writer version 6)
            reasons.append(f"column {name!r} is {kind}: {_WHY['identityColumns']}")
        elif operation == "append":
            reasons.append(f"column {name!r} is {kind}, which appends do not compute")
    if operation == "append":
        constraints = sorted(k for k in configuration if k.startswith("delta.constraints."))
        if constraints:
            reasons.append(f"check constraints {constraints}, which appends do not evaluate")
    return reasons


# Delta's type widening (PROTOCOL.md, "Type Widening"): the changes it allows, which Spark's
# Parquet reader reads from the older files on its own. Delta Spark refuses any other change
# a table records (TypeWidening.assertTableReadable), as readers must.
ALLOWED_TYPE_CHANGES = (
    "byte -> short -> integer -> long; float -> double; byte, short or integer -> double; "
    "date -> timestamp_ntz; decimal(p,s) -> decimal(p+k1,s+k2); byte, short or integer -> "
    "decimal(10+k1,k2); long -> decimal(20+k1,k2) (k1 >= k2 >= 0)"
)
_TYPE_WIDENING = ("typeWidening", "typeWidening-preview")
_INTEGRAL = {"byte": 1, "short": 2, "integer": 4, "long": 8}
# The integer digits a decimal needs to take each integral type (Delta's rule: all of INT32's).
_DECIMAL_DIGITS = {"byte": 10, "short": 10, "integer": 10, "long": 20}
_ALIASES = {"tinyint": "byte", "smallint": "short", "int": "integer", "bigint": "long"}
_DECIMAL = re.compile(r"decimal\((\d+),(\d+)\)")
_TEXT = re.compile(r"string|(var)?char\(\d+\)")


def type_changes(protocol: Protocol, schema_json: str) -> list[str]:
    """Every type change a type-widened table records, as ``column: from -> to``."""
    if not set(_TYPE_WIDENING) & set(protocol.reader_features):
        return []
    return [
        f"{'.'.join(column)}: {change.get('fromType')} -> {change.get('toType')}"
        for column, change in _type_changes(json.loads(schema_json))
    ]


def unsupported_type_changes(protocol: Protocol, schema_json: str) -> list[str]:
    """The type changes a type-widened table records that Delta does not allow, one reason
    each (empty: none, or the table does not use type widening)."""
    if not set(_TYPE_WIDENING) & set(protocol.reader_features):
        return []
    reasons = []
    for column, change in _type_changes(json.loads(schema_json)):
        source, target = change.get("fromType"), change.get("toType")
        if not _allowed_change(source, target):
            place = [*column, *str(change.get("fieldPath") or "").split(".")]
            name = ".".join(p for p in place if p)
            reasons.append(f"column {name!r} changed from {source} to {target}")
    return reasons


def _type_changes(
    kind: Any, prefix: Sequence[str] = ()
) -> Iterator[tuple[list[str], Mapping[str, Any]]]:
    """(column path, recorded change) for each ``delta.typeChanges`` entry under ``kind``."""
    if not isinstance(kind, Mapping):
        return
    if kind.get("type") == "struct":
        for field in kind.get("fields", ()):
            path = [*prefix, str(field["name"])]
            for change in (field.get("metadata") or {}).get("delta.typeChanges") or ():
                yield path, change if isinstance(change, Mapping) else {}
            yield from _type_changes(field.get("type"), path)
    elif kind.get("type") == "array":  # named as Delta's fieldPath names such parts
        yield from _type_changes(kind.get("elementType"), [*prefix, "element"])
    elif kind.get("type") == "map":
        yield from _type_changes(kind.get("keyType"), [*prefix, "key"])
        yield from _type_changes(kind.get("valueType"), [*prefix, "value"])


def _allowed_change(source: Any, target: Any) -> bool:
    if not isinstance(source, str) or not isinstance(target, str):
        return False
    source, target = _type_name(source), _type_name(target)
    if source == target or (_TEXT.fullmatch(source) and _TEXT.fullmatch(target)):
        return True  # text changes are no widening; Delta reads past them
    if source in _INTEGRAL and target in _INTEGRAL:
        return _INTEGRAL[source] <= _INTEGRAL[target]
    if (source, target) in {("float", "double"), ("date", "timestamp_ntz")}:
        return True
    if source in ("byte", "short", "integer") and target == "double":
        return True
    wider = _DECIMAL.fullmatch(target)
    if wider is None:
        return False
    precision, scale = int(wider[1]), int(wider[2])
    if source in _DECIMAL_DIGITS:
        return precision - scale >= _DECIMAL_DIGITS[source]
    narrower = _DECIMAL.fullmatch(source)
    if narrower is None:
        return False
    old_precision, old_scale = int(narrower[1]), int(narrower[2])
    return scale >= old_scale and precision - scale >= old_precision - old_scale


def _type_name(name: str) -> str:
    compact = re.sub(r"\s+", "", name.lower())
    return _ALIASES.get(compact, compact)


def restore_gaps(
    current: Protocol,
    restored: Protocol,
    configuration: Mapping[str, Any],
    schema_json: str,
) -> list[str]:
    """Why a version whose protocol is ``restored`` (its configuration and schema given)
    cannot be restored onto a table whose protocol is ``current`` (empty: it can).

    deltalake's restore (1.6) keeps the higher reader and writer versions but the
    table's current feature lists, where Delta Spark's merges both: a feature only
    the older version lists would be gone (its deletion vectors no longer applied,
    say). So is one its metadata puts to use (its column mapping, constraints,
    change data feed) that the current lists lack. A legacy table keeps the higher
    versions, which allow all the older version did.
    """
    reasons = []
    if current.min_writer_version < 7 <= restored.min_writer_version:
        reasons.append(
            f"the version's protocol ({restored.min_reader_version}, "
            f"{restored.min_writer_version}) lists table features, the table's "
            f"({current.min_reader_version}, {current.min_writer_version}) lists none"
        )
    elif current.min_writer_version >= 7:
        lost = (set(restored.reader_features) - set(current.reader_features)) | (
            set(restored.writer_features) - set(current.writer_features)
        )
        for feature in _features_in_use(configuration, schema_json):
            readers = current.min_reader_version < 3 or feature in current.reader_features
            if feature not in current.writer_features or (
                feature == "columnMapping" and not readers
            ):
                lost.add(feature)
        reasons += [f"{f}: the version uses it, the table lists it no more" for f in sorted(lost)]
    for name, kind in _column_rules(json.loads(schema_json)):
        if kind == _IDENTITY:  # Delta Spark merges high-water marks; deltalake takes them back
            reasons.append(f"column {name!r} is {kind}: {_WHY['identityColumns']}")
    return reasons


def _features_in_use(configuration: Mapping[str, Any], schema_json: str) -> set[str]:
    """The features a table's configuration and schema put to use (PROTOCOL.md)."""
    used = {feature for key, feature in _SWITCHES.items() if _on(configuration.get(key))}
    if any(key.startswith("delta.constraints.") for key in configuration):
        used.add("checkConstraints")
    if str(configuration.get(COLUMN_MAPPING_MODE) or "none") != "none":
        used.add("columnMapping")
    used.update(_RULE_FEATURES[kind] for _, kind in _column_rules(json.loads(schema_json)))
    return used


def _on(value: Any) -> bool:
    return str(value or "").strip().lower() == "true"


_SWITCHES = {"delta.appendOnly": "appendOnly", "delta.enableChangeDataFeed": "changeDataFeed"}


def _reason(feature: str) -> str:
    return f"{feature}: {_WHY.get(feature, 'a feature zorder does not know')}"


_IDENTITY = "an identity column"
_RULES = {
    "delta.generationExpression": "a generated column",
    "delta.identity.start": _IDENTITY,
    "delta.invariants": "under an invariant",
}
# The writer feature each kind of column rule is.
_RULE_FEATURES = {
    "a generated column": "generatedColumns",
    _IDENTITY: "identityColumns",
    "under an invariant": "invariants",
}


def _column_rules(
    schema: Mapping[str, Any], prefix: Sequence[str] = ()
) -> Iterator[tuple[str, str]]:
    """(column, what rule it follows) for each column a writer must compute or check."""
    for field in schema.get("fields", ()):
        path = [*prefix, field["name"]]
        for key, kind in _RULES.items():
            if key in (field.get("metadata") or {}):
                yield ".".join(path), kind
        if isinstance(field.get("type"), dict):
            yield from _column_rules(field["type"], path)
