"""File statistics from Parquet footers bound every value of the file."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from zorder.stats import (
    FileStats,
    indexed_columns,
    stats_from_parquet,
    truncate_max_string,
    truncate_min_string,
)


def utf8(s: str) -> bytes:
    return s.encode("utf-8")


@given(st.text())
def test_truncated_strings_bound_the_value(value: str) -> None:
    low = truncate_min_string(value)
    high = truncate_max_string(value)
    assert len(low) <= 32
    assert utf8(low) <= utf8(value)
    assert high is not None
    assert len(high) <= 32
    assert utf8(value) <= utf8(high)


@given(st.text(min_size=33), st.text())
def test_truncated_max_bounds_every_string_with_the_prefix(value: str, tail: str) -> None:
    high = truncate_max_string(value)
    assert high is not None
    assert utf8(value[:32] + tail) < utf8(high)


def test_truncation_around_emoji_and_combining_characters() -> None:
    value = "e\u0301" * 16 + "😀" * 5
    assert truncate_min_string(value) == "e\u0301" * 16
    high = truncate_max_string(value)
    assert high == "e\u0301" * 15 + "e\u0302"
    assert truncate_max_string("\U0010ffff" * 40) is None
    assert truncate_max_string("a" * 31 + "\ud7ff" + "b") == "a" * 31 + "\ue000"


def write(tmp_path: Path, table: pa.Table, row_group_size: int = 3) -> pq.FileMetaData:
    path = tmp_path / "f.parquet"
    pq.write_table(table, path, row_group_size=row_group_size)
    return pq.read_metadata(path)


def test_numeric_date_decimal_and_nulls(tmp_path: Path) -> None:
    table = pa.table(
        {
            "i": pa.array([5, None, -3, 9, 2], pa.int32()),
            "d": pa.array([1.5, -0.0, 2.0, None, 7.25]),
            "day": pa.array([dt.date(2020, 1, 2), dt.date(1, 1, 1), None, None, None]),
            "dec": pa.array(
                [decimal.Decimal("12345678901234567890.12"), decimal.Decimal("-1.50")] + [None] * 3,
                pa.decimal128(38, 2),
            ),
            "all_null": pa.array([None] * 5, pa.int64()),
            "flag": pa.array([True, False, None, True, True]),
        }
    )
    stats = stats_from_parquet(write(tmp_path, table), table.schema, table.schema.names)
    assert stats.num_records == 5
    assert stats.min_values["i"] == -3
    assert stats.max_values["i"] == 9
    assert stats.min_values["d"] == 0.0  # -0.0 equals 0.0
    assert stats.max_values["d"] == 7.25
    assert stats.min_values["day"] == "0001-01-01"
    assert stats.max_values["day"] == "2020-01-02"
    assert stats.max_values["dec"] == decimal.Decimal("12345678901234567890.12")
    assert stats.null_count == {"i": 1, "d": 1, "day": 3, "dec": 3, "all_null": 5, "flag": 1}
    assert "all_null" not in stats.min_values
    assert "flag" not in stats.min_values  # booleans: null counts only
    parsed = json.loads(stats.to_json(), parse_float=decimal.Decimal)
    assert parsed["maxValues"]["dec"] == decimal.Decimal("12345678901234567890.12")
    assert parsed["numRecords"] == 5


def test_infinities_leave_that_bound_out(tmp_path: Path) -> None:
    # NaN bounds come from Spark's writer and are tested in the Spark suite.
    table = pa.table({"inf": [-math.inf, 1.0, math.inf], "half": [1.0, 2.0, math.inf]})
    stats = stats_from_parquet(write(tmp_path, table, 10), table.schema, table.schema.names)
    assert "inf" not in stats.min_values
    assert "inf" not in stats.max_values
    assert stats.min_values["half"] == 1.0
    assert "half" not in stats.max_values
    json.loads(stats.to_json())  # valid JSON: no NaN or Infinity tokens


def test_timestamps_rounded_to_millis_outward(tmp_path: Path) -> None:
    table = pa.table(
        {
            "ts": pa.array(
                [dt.datetime(2021, 5, 1, 12, 0, 0, 123456, tzinfo=dt.UTC)],
                pa.timestamp("us", tz="UTC"),
            ),
            "ntz": pa.array([dt.datetime(1, 1, 1, 0, 0, 0, 999)], pa.timestamp("us")),
        }
    )
    stats = stats_from_parquet(write(tmp_path, table), table.schema, table.schema.names)
    assert stats.min_values["ts"] == "2021-05-01T12:00:00.123Z"
    assert stats.max_values["ts"] == "2021-05-01T12:00:00.124Z"
    assert stats.min_values["ntz"] == "0001-01-01T00:00:00.000"
    assert stats.max_values["ntz"] == "0001-01-01T00:00:00.001"


def test_long_strings_truncated_with_a_bounding_max(tmp_path: Path) -> None:
    values = ["x" * 40, "a" * 100, "m"]
    table = pa.table({"s": values})
    stats = stats_from_parquet(write(tmp_path, table), table.schema, ["s"])
    assert stats.min_values["s"] == "a" * 32
    assert stats.max_values["s"] == "x" * 31 + "y"
    assert all(stats.min_values["s"] <= v <= stats.max_values["s"] for v in values)


@pytest.mark.parametrize(
    ("configuration", "expected"),
    [
        ({}, [f"c{i}" for i in range(32)]),
        ({"delta.dataSkippingNumIndexedCols": "3"}, ["c0", "c1", "c2"]),
        ({"delta.dataSkippingNumIndexedCols": "-1"}, [f"c{i}" for i in range(40)]),
        ({"delta.dataSkippingStatsColumns": "c39, C5,missing"}, ["c39", "c5"]),
    ],
)
def test_indexed_columns(configuration: dict[str, str], expected: list[str]) -> None:
    schema = pa.schema([(f"c{i}", pa.int32()) for i in range(40)])
    assert indexed_columns(schema, configuration) == expected


values_strategy = st.lists(st.one_of(st.none(), st.integers(-(2**40), 2**40)), min_size=1)


@given(values_strategy, st.integers(1, 5), st.data())
def test_stats_bound_random_files(values: list[Any], row_group: int, data: st.DataObject) -> None:
    import tempfile

    strings = data.draw(
        st.lists(st.one_of(st.none(), st.text()), min_size=len(values), max_size=len(values))
    )
    table = pa.table({"n": pa.array(values, pa.int64()), "s": pa.array(strings, pa.string())})
    with tempfile.TemporaryDirectory() as tmp:
        stats = stats_from_parquet(write(Path(tmp), table, row_group), table.schema, ["n", "s"])
    assert stats.null_count == {"n": values.count(None), "s": strings.count(None)}
    for name, column in (("n", values), ("s", strings)):
        present = [v for v in column if v is not None]
        if not present:
            assert name not in stats.min_values
            continue
        if name == "s":
            assert all(utf8(stats.min_values["s"]) <= utf8(v) for v in present)
            assert all(utf8(v) <= utf8(stats.max_values["s"]) for v in present)
        else:
            assert stats.min_values["n"] == min(present)
            assert stats.max_values["n"] == max(present)


def test_file_stats_json_shape() -> None:
    stats = FileStats(
        num_records=2, min_values={"a b": 1}, max_values={"a b": 2}, null_count={"a b": 0}
    )
    assert json.loads(stats.to_json()) == {
        "numRecords": 2,
        "minValues": {"a b": 1},
        "maxValues": {"a b": 2},
        "nullCount": {"a b": 0},
    }
