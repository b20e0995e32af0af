"""The clustering spec and file size a table records in its properties."""

from __future__ import annotations

import pytest

from zorder.curves.kinds import BloomColumn, ClusteringSpec, bloom_columns
from zorder.errors import InvalidArgumentError, UnsupportedTableError
from zorder.table.clustering import (
    SPARK_PART_FILE,
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
        "zorder.clustering.weights",
        "zorder.clustering.cuts",
        "zorder.clustering.bloomFilters",
    }
    assert recorded_spec(properties) == spec
    assert recorded_spec({"delta.appendOnly": "false"}) is None


def test_bloom_filters_round_trip_and_name_the_spec_apart() -> None:
    plain = ClusteringSpec(("a", "b"), "zorder", "rank")
    blooms = ClusteringSpec(
        ("a", "b"), "zorder", "rank", bloom_filters=bloom_columns({"id": 0.01, "s": 0.001})
    )
    assert spec_properties(plain)["zorder.clustering.bloomFilters"] == "null"
    assert recorded_spec(spec_properties(blooms)) == blooms
    assert blooms.fingerprint != plain.fingerprint  # files without the filters are another spec's
    assert plain.fingerprint == "4df667d6"  # as every earlier version named it
    # A spec recorded before bloom filters existed reads as one without them.
    older = {k: v for k, v in spec_properties(plain).items() if "bloom" not in k}
    assert recorded_spec(older) == plain


def test_a_bloom_filter_needs_a_rate_between_0_and_1_and_each_column_once() -> None:
    with pytest.raises(InvalidArgumentError, match=r"strictly between 0 and 1.*got 1"):
        BloomColumn("id", 1)
    with pytest.raises(InvalidArgumentError, match="names the column 'ID' twice"):
        bloom_columns(["id", "ID"])
    with pytest.raises(InvalidArgumentError, match="list of column names"):
        bloom_columns(3)
    assert bloom_columns("id") == (BloomColumn("id"),)
    assert bloom_columns({"id": 0.05}) == (BloomColumn("id", 0.05),)


@pytest.mark.parametrize(
    "columns", ["a,b", "[]", "[1]", '{"a": 1}', "not json"], ids=lambda c: repr(c)
)
def test_unparsable_spec_properties_are_named(columns: str) -> None:
    with pytest.raises(UnsupportedTableError, match=r"zorder\.clustering\.columns") as error:
        recorded_spec({"zorder.clustering.columns": columns})
    assert repr(columns) in str(error.value)


def test_unparsable_weights_or_cuts_are_named() -> None:
    base = {"zorder.clustering.columns": '["a", "b"]'}
    for key, value, said in (
        ("zorder.clustering.weights", '["x", 1]', "not a JSON list of numbers"),
        ("zorder.clustering.weights", "[1]", "one per column"),
        ("zorder.clustering.cuts", '[[0, {"month": 1}, 1, 2], [-1], [-1]]', "a cut value is"),
        ("zorder.clustering.cuts", "{", "parse"),
        ("zorder.clustering.bloomFilters", '["id"]', "not a JSON object"),
        ("zorder.clustering.bloomFilters", '{"id": 2}', "strictly between 0 and 1"),
    ):
        with pytest.raises(UnsupportedTableError, match=said):
            recorded_spec({**base, key: value})


def test_an_unknown_curve_in_the_properties_is_named() -> None:
    with pytest.raises(UnsupportedTableError, match="unknown curve 'peano'"):
        recorded_spec({"zorder.clustering.columns": '["a"]', "zorder.clustering.curve": "peano"})


def test_target_file_size_reads_bytes_and_units() -> None:
    assert recorded_target_file_size({TARGET_FILE_SIZE_PROPERTY: "1048576"}) == 1 << 20
    assert recorded_target_file_size({TARGET_FILE_SIZE_PROPERTY: "128mb"}) == 128 << 20
    assert recorded_target_file_size({}) is None
    with pytest.raises(UnsupportedTableError, match=r"delta\.targetFileSize='huge'"):
        recorded_target_file_size({TARGET_FILE_SIZE_PROPERTY: "huge"})


@pytest.mark.parametrize(
    ("name", "short", "number"),
    [
        ("part-00007-f4dfefa0-7ef5-4c48-a4a0-61a6d4f2f813.c000.snappy.parquet", "part-00007", 7),
        (
            "day=1/part-00012-f4dfefa0-7ef5-4c48-a4a0-61a6d4f2f813-c000.snappy.parquet",
            "day=1/part-00012",
            12,
        ),
        ("part-00003-f4dfefa0-7ef5-4c48-a4a0-61a6d4f2f813.parquet", "part-00003", 3),
        (  # a run of an earlier version: a directory of the file's number, then its task's
            "zorder_file=7/part-00002-f4dfefa0-7ef5-4c48-a4a0-61a6d4f2f813.c000.snappy.parquet",
            "zorder_file=7/part-00002",
            2,
        ),
    ],
)
def test_spark_part_file_names_give_their_number(name: str, short: str, number: int) -> None:
    match = SPARK_PART_FILE.match(name)
    assert match is not None
    assert match["short"] == short
    assert int(match["number"]) == number


@pytest.mark.parametrize("name", ["x.parquet", "part-1.parquet", "zorder-1/part-00001.parquet"])
def test_other_file_names_are_not_spark_part_files(name: str) -> None:
    assert SPARK_PART_FILE.match(name) is None
