"""The clustering spec and file size a table records in its properties."""

from __future__ import annotations

import pytest

from zorder.curves.kinds import ClusteringSpec
from zorder.errors import UnsupportedTableError
from zorder.table.clustering import (
    TARGET_FILE_SIZE_PROPERTY,
    recorded_spec,
    recorded_target_file_size,
    spec_properties,
)


def test_a_spec_round_trips_through_the_properties() -> None:
    spec = ClusteringSpec(("src ip", "dst_port", "日"), "hilbert", "direct")
    properties = spec_properties(spec)
    assert set(properties) == {
        "zorder.clustering.columns",
        "zorder.clustering.curve",
        "zorder.clustering.method",
    }
    assert recorded_spec(properties) == spec
    assert recorded_spec({"delta.appendOnly": "false"}) is None


@pytest.mark.parametrize(
    "columns", ["a,b", "[]", "[1]", '{"a": 1}', "not json"], ids=lambda c: repr(c)
)
def test_unparsable_spec_properties_are_named(columns: str) -> None:
    with pytest.raises(UnsupportedTableError, match=r"zorder\.clustering\.columns") as error:
        recorded_spec({"zorder.clustering.columns": columns})
    assert repr(columns) in str(error.value)


def test_an_unknown_curve_in_the_properties_is_named() -> None:
    with pytest.raises(UnsupportedTableError, match="unknown curve 'peano'"):
        recorded_spec({"zorder.clustering.columns": '["a"]', "zorder.clustering.curve": "peano"})


def test_target_file_size_reads_bytes_and_units() -> None:
    assert recorded_target_file_size({TARGET_FILE_SIZE_PROPERTY: "1048576"}) == 1 << 20
    assert recorded_target_file_size({TARGET_FILE_SIZE_PROPERTY: "128mb"}) == 128 << 20
    assert recorded_target_file_size({}) is None
    with pytest.raises(UnsupportedTableError, match=r"delta\.targetFileSize='huge'"):
        recorded_target_file_size({TARGET_FILE_SIZE_PROPERTY: "huge"})
