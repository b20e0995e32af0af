"""Spark key builders equal the pure reference on random data of every supported type."""

from __future__ import annotations

import pytest
from pyspark.sql import DataFrame, SparkSession

from tests.spark.helpers import all_types_frame
from zorder.curves import encoding_for, hilbert_index, interleave_bits
from zorder.curves.cells import FileCells, reference_cell, reference_range
from zorder.curves.kinds import SpaceFillingCurve
from zorder.curves.plan import fit_file_plan
from zorder.curves.ranks import reference_bucket, reference_direct_word
from zorder.spark.compat import collect_arrow
from zorder.spark.keys import (
    bits_per_column,
    direct_file_key,
    direct_ranges,
    plan_key,
    resolve_clustering_columns,
    sample_arrays,
    sample_columns,
)

pytestmark = pytest.mark.spark

GROUPS = [
    ["b", "i8", "i16", "i32"],
    ["i64", "f32", "f64"],
    ["dec", "wide", "d"],
    ["ts", "ntz", "s", "bin"],
]


@pytest.fixture(scope="module")
def frame(spark: SparkSession) -> DataFrame:
    return all_types_frame(spark, 400, seed=11).cache()


@pytest.mark.parametrize(
    ("names", "count", "curve"),
    [
        (["i32", "s"], 7, "zorder"),
        (["dec", "d", "ts"], 40, "zorder"),
        (["f32", "bin", "ntz"], 40, "hilbert"),
        # six columns of 10 bits and 40 files: 66 bits, so the key's lowest 3 are dropped
        (["i8", "i16", "i32", "i64", "f64", "s"], 40, "zorder"),
        (["i8", "i16", "i32", "i64", "f64", "s"], 40, "hilbert"),
    ],
)
def test_cell_key_packs_the_reference_file_above_the_reference_key(
    frame: DataFrame, names: list[str], count: int, curve: SpaceFillingCurve
) -> None:
    columns = resolve_clustering_columns(frame, names)
    bits = bits_per_column(len(columns))
    sample = sample_columns(frame, columns, sample_size=300)
    plan = fit_file_plan(sample_arrays(sample), curve=curve, bits=bits, count=count)
    buckets = dict(zip(names, plan.buckets, strict=True))
    files = plan.files
    packing = plan.packing
    assert packing.dropped_bits == max(0, len(columns) * bits + (count - 1).bit_length() - 63)
    key = plan_key(columns, plan)
    combine = interleave_bits if curve == "zorder" else hilbert_index
    bounds = {n: buckets[n].boundaries.to_pylist() for n in names}
    encodings = {c.name: encoding_for(c.type_name) for c in columns}
    seen_files = set()
    for row in collect_arrow(frame.select(*names, key.alias("k"))).to_pylist():
        ids = [
            int(buckets[n].ids[reference_bucket(row[n], bounds[n], encodings[n])]) for n in names
        ]
        curve_key = combine(ids, bits)
        if isinstance(files, FileCells):
            file = reference_cell(files, ids)
        else:
            file = reference_range(files, ids, curve_key)
        assert row["k"] == file << packing.cell_shift | curve_key >> packing.dropped_bits, row
        assert 0 <= row["k"] < 2**63
        assert row["k"] >> packing.cell_shift == file
        seen_files.add(file)
    assert len(seen_files) == files.count  # every file is reached


@pytest.mark.parametrize("names", [*GROUPS, ["s"]])
@pytest.mark.parametrize("curve", ["zorder", "hilbert"])
def test_direct_file_key_equals_reference(
    frame: DataFrame, names: list[str], curve: SpaceFillingCurve
) -> None:
    columns = resolve_clustering_columns(frame, names)
    sample = sample_columns(frame, columns, sample_size=300)
    ranges = direct_ranges(sample, columns, curve=curve, count=9)
    assert ranges.count > 1
    keyed = frame.select(*names, direct_file_key(columns, ranges, curve=curve).alias("k"))
    combine = interleave_bits if curve == "zorder" else hilbert_index
    encodings = {c.name: encoding_for(c.type_name) for c in columns}
    width = 8 * len(names)
    bounds = [b.ljust(width, b"\0") for b in ranges.bounds.tolist()]  # NumPy drops trailing 0s
    seen_files = set()
    for row in collect_arrow(keyed).to_pylist():
        words = [reference_direct_word(row[n], encodings[n]) for n in names]
        expected = combine(words, 64).to_bytes(width, "big")
        assert row["k"]["key"] == expected, row
        assert row["k"]["file"] == sum(1 for bound in bounds if expected >= bound), row
        seen_files.add(row["k"]["file"])
    assert len(seen_files) == ranges.count


def test_sampled_strings_and_binaries_are_their_first_256_characters_or_bytes(
    spark: SparkSession,
) -> None:
    # Around the cut, in bytes and in characters: 'é' is two bytes, so 200 of
    # them are 400 bytes but only 200 characters, and stay whole.
    texts = ["a" * 255, "b" * 256, "c" * 257, "é" * 200, "é" * 300, "", None, "d" * 100_000]
    rows = [(t, None if t is None else t.encode()) for t in texts]
    df = spark.createDataFrame(rows, "s string, bin binary")
    columns = resolve_clustering_columns(df, ["s", "bin"])
    sample = sample_columns(df, columns, sample_size=len(rows))
    assert sample.column("s").to_pylist() == [None if t is None else t[:256] for t in texts]
    assert sample.column("bin").to_pylist() == [
        None if t is None else t.encode()[:256] for t in texts
    ]


def test_planning_names_every_type_as_spark_does(spark: SparkSession) -> None:
    """The schema planning reads (JSON, as Delta's log holds it) names each column's type as
    Spark's simpleString does, nested and interval types included, and keeps a declared
    CHAR."""
    from pyspark.sql.types import StructType

    from zorder.curves.schema import Columns

    schema = StructType.fromDDL(
        "a TINYINT, b SMALLINT, c INT, d BIGINT, e FLOAT, f DOUBLE, g DECIMAL(12,3), "
        "h STRING, i BINARY, j BOOLEAN, k DATE, l TIMESTAMP, m TIMESTAMP_NTZ, "
        "n ARRAY<INT>, o MAP<STRING, ARRAY<BIGINT>>, p STRUCT<x: INT, y: STRUCT<z: DATE>>, "
        "q INTERVAL DAY TO SECOND, r INTERVAL YEAR TO MONTH, s VOID"
    )
    assert isinstance(schema, StructType)
    columns = Columns.from_json(schema.json())
    assert columns.names == schema.names
    assert [f.type_name for f in columns.fields] == [
        f.dataType.simpleString() for f in schema.fields
    ]
    padded = StructType.fromJson(
        {
            "type": "struct",
            "fields": [
                {
                    "name": "code",
                    "type": "string",
                    "nullable": True,
                    "metadata": {"__CHAR_VARCHAR_TYPE_STRING": "char(5)"},
                }
            ],
        }
    )
    assert Columns.from_json(padded.json()).field("code").declared == "char(5)"


def _spark_types() -> object:
    from hypothesis import strategies as st
    from pyspark.sql.types import (
        ArrayType,
        DataType,
        DateType,
        DecimalType,
        IntegerType,
        LongType,
        MapType,
        StringType,
        StructField,
        StructType,
        TimestampType,
    )

    leaves = st.sampled_from(
        [
            IntegerType(),
            LongType(),
            StringType(),
            DateType(),
            TimestampType(),
            DecimalType(12, 3),
            DecimalType(12, 2),
        ]
    )
    metadata = st.sampled_from([{}, {"comment": "x"}])

    def nested(inner: st.SearchStrategy[DataType]) -> st.SearchStrategy[DataType]:
        fields = st.lists(
            st.builds(StructField, st.sampled_from(["a", "b"]), inner, st.booleans(), metadata),
            min_size=1,
            max_size=2,
            unique_by=lambda f: f.name,
        )
        return st.one_of(
            st.builds(ArrayType, inner, st.booleans()),
            st.builds(MapType, leaves, inner, st.booleans()),
            fields.map(StructType),
        )

    return st.recursive(leaves, nested, max_leaves=4)


def test_a_schema_change_is_seen_as_sparks_type_equality_sees_it() -> None:
    """``same_type`` on the JSON form (what a write compares the rows' and the table's
    columns by, in no engine's types) agrees with Spark's ``DataType`` equality, nested
    nullability and metadata included; a left-out flag reads as Spark reads it."""
    from hypothesis import given
    from hypothesis import strategies as st
    from pyspark.sql.types import DataType

    from zorder.curves.schema import same_type, type_text

    types = _spark_types()
    assert isinstance(types, st.SearchStrategy)

    @given(types, types)
    def agrees(one: DataType, other: DataType) -> None:
        assert same_type(one.jsonValue(), other.jsonValue()) == (one == other)
        assert same_type(one.jsonValue(), one.jsonValue())
        assert type_text(one.jsonValue()) == one.simpleString()

    agrees()
    bare = {
        "type": "array",
        "elementType": {"type": "struct", "fields": [{"name": "a", "type": "integer"}]},
    }
    full = {
        "type": "array",
        "elementType": {
            "type": "struct",
            "fields": [{"name": "a", "type": "integer", "nullable": True, "metadata": {}}],
        },
        "containsNull": True,
    }
    assert same_type(bare, full)
    assert not same_type(bare, {**full, "containsNull": False})
