"""Which tables zorder reads and writes, decided from the protocol, configuration and schema."""

from __future__ import annotations

import json

import pytest

from zorder.table.features import Protocol, unreadable, unwritable

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
        assert unwritable(MODERN, {}, schema(a={}), operation) == []  # type: ignore[arg-type]


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
        reasons = unwritable(protocol, {}, schema(a={}), operation)  # type: ignore[arg-type]
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


def test_vacuum_stops_only_at_features_zorder_does_not_know() -> None:
    known = Protocol(3, 7, (), ("rowTracking", "identityColumns", "vacuumProtocolCheck"))
    assert unwritable(known, {}, schema(a={}), "vacuum") == []
    unknown = Protocol(3, 7, (), ("madeUp",))
    (reason,) = unwritable(unknown, {}, schema(a={}), "vacuum")
    assert reason.startswith("madeUp")
