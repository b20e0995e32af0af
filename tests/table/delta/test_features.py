"""Which tables zorder reads and writes, decided from the protocol, configuration and schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zorder.table.delta.features import (
    Protocol,
    restore_gaps,
    unreadable,
    unsupported_type_changes,
    unwritable,
)

MODERN = Protocol(3, 7, ("deletionVectors", "timestampNtz"), ("deletionVectors", "appendOnly"))


def schema(**metadata: dict[str, object]) -> str:
    fields = [
        {"name": n, "type": "long", "nullable": True, "metadata": m} for n, m in metadata.items()
    ]
    return json.dumps({"type": "struct", "fields": fields})


def test_deletion_vectors_and_plain_tables_are_readable_and_writable() -> None:
    assert unreadable(Protocol(1, 2), {}) == []
    assert unreadable(MODERN, {}) == []
    named = {"delta.columnMapping.mode": "name"}
    assert unreadable(Protocol(2, 5), named) == []
    assert unreadable(Protocol(2, 5), {"delta.columnMapping.mode": "id"}) == []
    mapped = Protocol(3, 7, ("columnMapping",), ("columnMapping",))
    assert unreadable(mapped, named) == []
    assert unwritable(mapped, named, schema(a={}), "optimize") == []
    for operation in ("append", "optimize"):
        assert unwritable(MODERN, {}, schema(a={}), operation) == []


@pytest.mark.parametrize(
    "protocol",
    [
        Protocol(1, 2),  # column mapping needs reader version 2
        Protocol(2, 4),  # and writer version 5
        Protocol(3, 7, ("timestampNtz",), ("timestampNtz",)),  # deltalake 1.6 writes these
        Protocol(3, 7, ("columnMapping",), ("timestampNtz",)),  # listed for readers only
    ],
)
def test_a_mapping_mode_the_protocol_does_not_enable_is_refused(protocol: Protocol) -> None:
    # Delta Spark refuses such tables (DELTA_FEATURES_PROTOCOL_METADATA_MISMATCH); their
    # files may hold logical names, and read by physical names every column is NULL.
    (reason,) = unreadable(protocol, {"delta.columnMapping.mode": "name"})
    assert "does not enable it" in reason
    assert protocol.describe() in reason
    assert unreadable(protocol, {"delta.columnMapping.mode": "none"}) == []


@pytest.mark.parametrize(
    ("protocol", "configuration", "named"),
    [
        (Protocol(2, 5), {"delta.columnMapping.mode": "soon"}, "columnMapping (mode 'soon')"),
        (Protocol(3, 7, ("someFutureFeature",), ()), {}, "someFutureFeature"),
        (Protocol(4, 7), {}, "reader version 4"),
    ],
)
def test_what_would_be_read_wrong_is_named(
    protocol: Protocol, configuration: dict[str, str], named: str
) -> None:
    reasons = unreadable(protocol, configuration)
    assert any(named in r for r in reasons), reasons


@pytest.mark.parametrize(
    "feature",
    [
        "rowTracking",
        "icebergCompatV2",
        "clustering",
        "inCommitTimestamp",
        "identityColumns",
        "domainMetadata",
        "typeWidening",
        "madeUp",
    ],
)
def test_writer_features_zorder_does_not_honour_refuse_every_write(feature: str) -> None:
    protocol = Protocol(3, 7, ("deletionVectors",), ("deletionVectors", feature))
    for operation in ("append", "optimize"):
        reasons = unwritable(protocol, {}, schema(a={}), operation)
        assert any(r.startswith(feature) for r in reasons), reasons


def test_rules_appends_would_skip_refuse_appends_only() -> None:
    legacy = Protocol(1, 6)
    rules = schema(
        a={"delta.generationExpression": "b + 1"},
        b={"delta.identity.start": 1, "delta.identity.step": 1},
        c={},
    )
    constraints = {"delta.constraints.positive": "c > 0"}
    reasons = unwritable(legacy, constraints, rules, "append")
    assert any("generated column" in r and "'a'" in r for r in reasons)
    assert any("identity column" in r and "'b'" in r for r in reasons)
    assert any("delta.constraints.positive" in r for r in reasons)
    # An optimize changes no row: only deltalake's refusal of identity columns stays.
    (reason,) = unwritable(legacy, constraints, rules, "optimize")
    assert "'b' is an identity column" in reason
    assert unwritable(legacy, {}, schema(a={}, c={}), "append") == []


def test_restore_keeps_every_feature_the_version_uses() -> None:
    """deltalake's restore keeps the table's feature lists: a version that lists or uses a
    feature they lack (dropped since) is refused; legacy versions only ever go up."""
    plain = schema(a={})
    assert restore_gaps(Protocol(1, 2), Protocol(1, 2), {}, plain) == []
    assert restore_gaps(Protocol(2, 5), Protocol(1, 2), {}, plain) == []
    assert restore_gaps(MODERN, Protocol(1, 2), {}, plain) == []  # implied but unused: fine
    assert restore_gaps(MODERN, MODERN, {}, plain) == []
    gone = restore_gaps(Protocol(3, 7, (), ("appendOnly",)), MODERN, {}, plain)
    assert gone == [
        "deletionVectors: the version uses it, the table lists it no more",
        "timestampNtz: the version uses it, the table lists it no more",
    ]
    assert "lists none" in restore_gaps(Protocol(1, 2), MODERN, {}, plain)[0]
    mapped = {"delta.columnMapping.mode": "name"}
    assert restore_gaps(MODERN, Protocol(2, 5), mapped, plain) == [
        "columnMapping: the version uses it, the table lists it no more"
    ]
    both = Protocol(3, 7, ("columnMapping",), ("columnMapping",))
    assert restore_gaps(both, Protocol(2, 5), mapped, plain) == []
    feed = {"delta.enableChangeDataFeed": "true", "delta.constraints.positive": "a > 0"}
    assert [r.split(":")[0] for r in restore_gaps(MODERN, Protocol(1, 4), feed, plain)] == [
        "changeDataFeed",
        "checkConstraints",
    ]
    identity = schema(a={"delta.identity.start": 1})
    assert "identity column" in restore_gaps(Protocol(1, 6), Protocol(1, 6), {}, identity)[0]


def test_vacuum_stops_only_at_features_zorder_does_not_know() -> None:
    known = Protocol(3, 7, (), ("rowTracking", "identityColumns", "vacuumProtocolCheck"))
    assert unwritable(known, {}, schema(a={}), "vacuum") == []
    unknown = Protocol(3, 7, (), ("madeUp",))
    (reason,) = unwritable(unknown, {}, schema(a={}), "vacuum")
    assert reason.startswith("madeUp")


WIDENED = Protocol(3, 7, ("typeWidening",), ("typeWidening",))


def widened(*changes: dict[str, str], kind: object = "long") -> str:
    field = {"name": "c", "type": kind, "nullable": True}
    return json.dumps(
        {"type": "struct", "fields": [field | {"metadata": {"delta.typeChanges": list(changes)}}]}
    )


ALLOWED = [
    ("byte", "short"),
    ("byte", "long"),
    ("short", "integer"),
    ("integer", "long"),
    ("float", "double"),
    ("byte", "double"),
    ("integer", "double"),
    ("date", "timestamp_ntz"),
    ("decimal(5,2)", "decimal(7,4)"),  # k1 = k2 = 2
    ("decimal(5,2)", "decimal(6,3)"),
    ("decimal(5,2)", "decimal(6, 2)"),  # Delta's JSON may space the arguments
    ("decimal(10,0)", "decimal(38,28)"),
    ("byte", "decimal(10,0)"),
    ("short", "decimal(12,2)"),
    ("integer", "decimal(38,28)"),
    ("long", "decimal(20,0)"),
    ("long", "decimal(38,18)"),
    ("string", "varchar(10)"),  # text changes are no widening; Delta reads past them
]
REFUSED = [
    ("byte", "decimal(4,1)"),  # every byte fits, but Delta asks ten integer digits
    ("integer", "decimal(9,0)"),
    ("long", "decimal(19,0)"),
    ("long", "decimal(38,19)"),
    ("decimal(5,2)", "decimal(6,4)"),  # scale up by more than the precision
    ("decimal(5,2)", "decimal(5,1)"),
    ("long", "integer"),
    ("long", "double"),
    ("integer", "float"),
    ("double", "float"),
    ("date", "timestamp"),
    ("timestamp_ntz", "date"),
    ("integer", "string"),
]


@pytest.mark.parametrize(("old", "new"), ALLOWED)
def test_type_changes_delta_allows_pass(old: str, new: str) -> None:
    assert unsupported_type_changes(WIDENED, widened({"fromType": old, "toType": new})) == []


@pytest.mark.parametrize(("old", "new"), REFUSED)
def test_type_changes_delta_does_not_allow_are_named(old: str, new: str) -> None:
    schema = widened({"fromType": "byte", "toType": "short"}, {"fromType": old, "toType": new})
    assert unsupported_type_changes(WIDENED, schema) == [f"column 'c' changed from {old} to {new}"]
    preview = Protocol(3, 7, ("typeWidening-preview",), ("typeWidening-preview",))
    assert len(unsupported_type_changes(preview, schema)) == 1
    # Without the feature Delta checks nothing (the metadata then means nothing to readers).
    assert unsupported_type_changes(MODERN, schema) == []


def test_nested_type_changes_are_named_by_their_path() -> None:
    inner = {
        "type": "struct",
        "fields": [
            {
                "name": "x",
                "type": "decimal(4,1)",
                "nullable": True,
                "metadata": {"delta.typeChanges": [{"fromType": "byte", "toType": "decimal(4,1)"}]},
            }
        ],
    }
    kind = {
        "type": "map",
        "keyType": "double",
        "valueType": {"type": "array", "elementType": inner, "containsNull": True},
        "valueContainsNull": True,
    }
    schema = widened(
        {"fromType": "float", "toType": "double", "fieldPath": "key"},
        {"fromType": "double", "toType": "float", "fieldPath": "value.element"},
        kind=kind,
    )
    assert unsupported_type_changes(WIDENED, schema) == [
        "column 'c.value.element' changed from double to float",
        "column 'c.value.element.x' changed from byte to decimal(4,1)",
    ]


def test_deltalakes_mapped_table_without_the_feature_is_refused_before_anything_is_read(
    tmp_path: Path,
) -> None:
    """deltalake 1.6 sets name mode but lists only timestampNtz when the rows need it."""
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    import zorder

    path = str(tmp_path)
    rows = pa.table({"a": pa.array([1, 2], pa.int32()), "t": pa.array([1, 2], pa.timestamp("us"))})
    write_deltalake(path, rows, configuration={"delta.columnMapping.mode": "name"})
    assert "columnMapping" not in (DeltaTable(path).protocol().writer_features or [])
    assert DeltaTable(path).to_pyarrow_table().column("a").to_pylist() == [1, 2]  # logical names
    before = sorted(p.name for p in (tmp_path / "_delta_log").iterdir())
    for call in (
        lambda: zorder.to_arrow(path, "a = 1"),
        lambda: zorder.explain(path, "a = 1"),
        lambda: zorder.optimize(None, path, by=["a", "t"], engine="arrow"),
    ):
        with pytest.raises(zorder.errors.UnsupportedTableError, match="does not enable it"):
            call()
    assert sorted(p.name for p in (tmp_path / "_delta_log").iterdir()) == before
