"""Split-block bloom filters read as BloomFilter.md specifies, and literals hashed as files
store them.

The reference filter here is built bit by bit from the specification's
``filter_insert`` and checked with its ``filter_check``, in a form of its own
(a set of (block, word, bit) positions); the headers are Thrift compact bytes
written out by hand. The hashes are checked against files another writer
made: pyarrow (Arrow C++) writes bloom filters from version 24 on, and every
value it wrote must be found.
"""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import xxhash
from hypothesis import given
from hypothesis import strategies as st

from zorder.stats.bloom import (
    BloomFilter,
    BloomHeader,
    StoredColumn,
    parse_filter,
    parse_header,
    probed_type,
    value_hash,
)

SALTS = [
    0x47B6137B,
    0x44974D91,
    0x8824AD5B,
    0xA2B7289D,
    0x705495C7,
    0x2DF1424B,
    0x9EFC4947,
    0x5C6BFB31,
]
HASHES = st.integers(0, 2**64 - 1)


def positions(h: int, blocks: int) -> set[tuple[int, int, int]]:
    """The (block, word, bit) positions ``filter_insert`` sets for hash ``h``."""
    block = ((h >> 32) * blocks) >> 32
    key = h % 2**32
    return {(block, word, ((key * SALTS[word]) % 2**32) >> 27) for word in range(8)}


def bitset(inserted: set[tuple[int, int, int]], blocks: int) -> bytes:
    """The bytes of a filter with ``inserted`` positions set: little-endian 32-bit words."""
    data = bytearray(32 * blocks)
    for block, word, bit in inserted:
        data[block * 32 + word * 4 + bit // 8] |= 1 << (bit % 8)
    return bytes(data)


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def zigzag(value: int) -> bytes:
    return varint((value << 1) ^ (value >> 63))


def union(choice: int) -> bytes:
    """A struct field (type 12) holding a union whose field ``choice`` is an empty struct."""
    return bytes([0x1C, (choice << 4) | 0x0C, 0x00, 0x00])


def header(
    num_bytes: int, algorithm: int = 1, hash_: int = 1, compression: int = 1, extra: bytes = b""
) -> bytes:
    """A BloomFilterHeader in Thrift's compact protocol: field ids 1..4, each one above the
    last (a delta of 1 in the field header's high nibble), ``extra`` fields after them."""
    return (
        bytes([0x15])
        + zigzag(num_bytes)
        + union(algorithm)
        + union(hash_)
        + union(compression)
        + extra
        + b"\x00"
    )


@given(
    blocks=st.integers(1, 9),
    inserted=st.lists(HASHES, max_size=40),
    probes=st.lists(HASHES, max_size=40),
)
def test_the_reader_agrees_with_the_specification(
    blocks: int, inserted: list[int], probes: list[int]
) -> None:
    bits = set().union(*(positions(h, blocks) for h in inserted))
    parsed = parse_filter(header(32 * blocks) + bitset(bits, blocks) + b"trailing bytes")
    assert parsed is not None
    assert parsed.num_blocks == blocks
    for h in inserted:
        assert parsed.might_contain(h)  # no false negative, ever
    for h in probes:
        assert parsed.might_contain(h) == (positions(h, blocks) <= bits)


def test_an_empty_filter_contains_nothing_and_a_full_one_everything() -> None:
    empty = BloomFilter(bytes(64))
    full = BloomFilter(b"\xff" * 64)
    for h in (0, 1, 2**63, 2**64 - 1, 0xDEADBEEF12345678):
        assert not empty.might_contain(h)
        assert full.might_contain(h)
    with pytest.raises(ValueError, match="no whole number of blocks"):
        BloomFilter(bytes(33))


def test_headers_accepted_and_their_length() -> None:
    plain = header(1024)
    assert parse_header(plain) == BloomHeader(len(plain), 1024)
    # Unknown fields after the known ones are skipped, whatever their type: an i64, a
    # binary, a list of i32, a struct holding a map, a bool, and a field in long form.
    extra = (
        bytes([0x16]) + zigzag(-5)  # field 5, i64
        + bytes([0x18]) + varint(3) + b"abc"  # field 6, binary
        + bytes([0x19, 0x25]) + zigzag(1) + zigzag(2)  # field 7, list<i32> of 2
        + bytes([0x1C, 0x1B]) + varint(1) + bytes([0x85]) + varint(1) + b"k" + zigzag(9)
        + bytes([0x11, 0x00])  # field 8, struct {1: map<binary, i32>, 2: true}
        + bytes([0x0C]) + zigzag(40) + b"\x00"  # field 40 in long form, an empty struct
    )  # fmt: skip
    with_extra = header(64, extra=extra)
    assert parse_header(with_extra) == BloomHeader(len(with_extra), 64)
    parsed = parse_filter(with_extra + b"\xff" * 64)
    assert parsed is not None
    assert parsed.bitset == b"\xff" * 64


@pytest.mark.parametrize(
    "data",
    [
        header(64, algorithm=2),  # an algorithm other than BLOCK
        header(64, hash_=2),  # a hash other than XXHASH
        header(64, compression=2),  # a compression other than UNCOMPRESSED
        header(0),
        header(48),  # not whole 32-byte blocks
        header(-32),
        header(2**30),  # beyond the largest filter read
        header(64)[:-1],  # no stop byte
        header(64)[:5],
        b"",
        bytes([0x15]) + zigzag(64) + b"\x00",  # algorithm, hash, compression missing
        bytes([0x15]) + zigzag(64) + bytes([0x1C, 0x1C, 0x00, 0x2C, 0x00, 0x00]) + b"\x00",
    ],
)
def test_headers_refused(data: bytes) -> None:
    assert parse_header(data) is None
    assert parse_filter(data + b"\xff" * 4096) is None


def test_a_bitset_cut_short_is_refused() -> None:
    assert parse_filter(header(64) + bytes(63)) is None
    assert parse_filter(header(64) + bytes(64)) is not None


@given(st.binary(max_size=64))
def test_no_bytes_make_the_parser_raise(data: bytes) -> None:
    parse_header(data)
    parse_header(header(32) + data)
    parse_filter(data)
    parse_filter(b"\x15" + data)


# --------------------------------------------------------------------------
# Literals hashed as the file stores them

INT32 = StoredColumn("INT32")
INT64 = StoredColumn("INT64")
TINY = StoredColumn("INT32", "INT")
UTC_MICROS = StoredColumn("INT64", "TIMESTAMP", unit="MICROS", utc=True)
LOCAL_MICROS = StoredColumn("INT64", "TIMESTAMP", unit="MICROS")
STRING = StoredColumn("BYTE_ARRAY", "STRING")
BINARY = StoredColumn("BYTE_ARRAY")
DATE = StoredColumn("INT32", "DATE")
D = decimal.Decimal
UTC = dt.UTC


def xx(data: bytes) -> int:
    return int(xxhash.xxh64_intdigest(data))


def le(number: int, width: int) -> bytes:
    return number.to_bytes(width, "little", signed=True)


def decimal_column(physical: str, scale: int, length: int = 0) -> StoredColumn:
    return StoredColumn(physical, "DECIMAL", length=length, scale=scale)


@pytest.mark.parametrize(
    ("value", "column_type", "stored", "plain"),
    [
        (5, "int", INT32, le(5, 4)),
        (-1, "bigint", INT64, le(-1, 8)),
        (-100, "tinyint", TINY, le(-100, 4)),
        (7, "bigint", INT32, le(7, 4)),  # a widened column's older INT32 file
        (D("7.000"), "int", INT32, le(7, 4)),
        (D("1.5"), "decimal(5,2)", decimal_column("INT32", 2), le(150, 4)),
        (D("1.50000"), "decimal(5,2)", decimal_column("INT32", 2), le(150, 4)),
        (3, "decimal(5,2)", decimal_column("INT32", 2), le(300, 4)),
        (D("-20"), "decimal(15,2)", decimal_column("INT64", 2), le(-2000, 8)),
        (D("3"), "decimal(1,0)", decimal_column("INT64", 0), le(3, 8)),  # delta-rs's (1,0)
        (
            D("-1.5"),
            "decimal(30,4)",
            decimal_column("FIXED_LEN_BYTE_ARRAY", 4, 13),
            (-15000).to_bytes(13, "big", signed=True),
        ),
        (D("0"), "decimal(30,4)", decimal_column("FIXED_LEN_BYTE_ARRAY", 4, 13), bytes(13)),
        (5, "decimal(12,0)", INT32, le(5, 4)),  # int widened to a decimal
        ("k0é", "string", STRING, "k0é".encode()),
        ("", "string", STRING, b""),
        ("plain", "string", BINARY, b"plain"),  # a string column's file without annotation
        (b"\x00\xff", "binary", BINARY, b"\x00\xff"),
        (dt.date(1969, 12, 31), "date", DATE, le(-1, 4)),
        (dt.datetime(2024, 1, 2, tzinfo=UTC), "date", DATE, le(19724, 4)),
        (dt.datetime(2024, 1, 2, 1, tzinfo=dt.timezone(dt.timedelta(hours=1))), "date", DATE,
         le(19724, 4)),
        (dt.datetime(2024, 1, 2), "timestamp_ntz", DATE, le(19724, 4)),  # date widened
        (dt.datetime(1970, 1, 1, 0, 0, 1, 5, tzinfo=UTC), "timestamp", UTC_MICROS,
         le(1_000_005, 8)),
        (dt.datetime(1969, 12, 31, 23, 59, 59, 999_999), "timestamp_ntz", LOCAL_MICROS,
         le(-1, 8)),
        (dt.datetime(1970, 1, 1, 0, 0, 2, tzinfo=UTC), "timestamp",
         StoredColumn("INT64", "TIMESTAMP", unit="MILLIS", utc=True), le(2000, 8)),
        (dt.datetime(1970, 1, 1, 0, 0, 0, 3, tzinfo=UTC), "timestamp",
         StoredColumn("INT64", "TIMESTAMP", unit="NANOS", utc=True), le(3000, 8)),
    ],
)  # fmt: skip
def test_plain_encodings(value: Any, column_type: str, stored: StoredColumn, plain: bytes) -> None:
    assert value_hash(value, column_type, stored) == xx(plain)


@pytest.mark.parametrize(
    ("value", "column_type", "stored"),
    [
        (2**31, "bigint", INT32),  # no INT32 holds it
        (True, "int", INT32),
        (D("7.5"), "int", INT32),
        (D("NaN"), "decimal(5,2)", decimal_column("INT32", 2)),
        (1.0, "int", INT32),
        (5, "int", StoredColumn("INT32", "INT", signed=False)),
        (5, "double", StoredColumn("DOUBLE")),
        (5.0, "double", StoredColumn("DOUBLE")),
        (5, "int", StoredColumn("FLOAT")),
        (D("1.234"), "decimal(5,2)", decimal_column("INT32", 2)),  # finer than the scale
        (D("1E+10"), "decimal(9,0)", decimal_column("INT32", 0)),  # beyond INT32
        (D("1"), "decimal(30,4)", decimal_column("BYTE_ARRAY", 4)),  # length: the writer's
        (D("1"), "decimal(30,4)", decimal_column("FIXED_LEN_BYTE_ARRAY", 4, 0)),
        (10**30, "decimal(38,0)", decimal_column("FIXED_LEN_BYTE_ARRAY", 0, 12)),
        (5, "string", INT32),
        ("5", "int", INT32),
        ("a\ud800", "string", STRING),  # a lone surrogate: no string Spark holds
        (b"a", "string", STRING),
        ("a", "binary", BINARY),
        ("a", "string", StoredColumn("BYTE_ARRAY", "JSON")),
        ("ab", "string", StoredColumn("FIXED_LEN_BYTE_ARRAY", length=2)),
        (dt.datetime(2024, 1, 2, 0, 0, 1, tzinfo=UTC), "date", DATE),  # not midnight
        (dt.datetime(2024, 1, 2), "date", DATE),  # naive against a date column
        (dt.date(2024, 1, 2), "timestamp", DATE),
        (dt.date(2024, 1, 2), "date", StoredColumn("INT64", "DATE")),
        (dt.datetime(2024, 1, 2), "timestamp", UTC_MICROS),  # naive against zoned
        (dt.datetime(2024, 1, 2, tzinfo=UTC), "timestamp_ntz", LOCAL_MICROS),
        (dt.datetime(2024, 1, 2, tzinfo=UTC), "timestamp", LOCAL_MICROS),  # not UTC-adjusted
        (dt.datetime(2024, 1, 2), "timestamp_ntz", UTC_MICROS),
        (dt.date(2024, 1, 2), "timestamp", UTC_MICROS),
        (dt.datetime(2024, 1, 2, 0, 0, 0, 1500, tzinfo=UTC), "timestamp",
         StoredColumn("INT64", "TIMESTAMP", unit="MILLIS", utc=True)),  # finer than ms
        (dt.datetime(2300, 1, 1, tzinfo=UTC), "timestamp",
         StoredColumn("INT64", "TIMESTAMP", unit="NANOS", utc=True)),  # beyond int64 ns
        (dt.datetime(2024, 1, 2, tzinfo=UTC), "timestamp", StoredColumn("INT96")),
        (dt.datetime(2024, 1, 2, tzinfo=UTC), "timestamp",
         StoredColumn("INT64", "TIMESTAMP", unit="", utc=True)),
    ],
)  # fmt: skip
def test_literals_not_hashed_exactly(value: Any, column_type: str, stored: StoredColumn) -> None:
    assert value_hash(value, column_type, stored) is None


def test_probed_types() -> None:
    for name in ("tinyint", "smallint", "int", "bigint", "decimal(38,10)", "string", "binary"):
        assert probed_type(name)
    for name in ("date", "timestamp", "timestamp_ntz"):
        assert probed_type(name)
    for name in ("float", "double", "boolean", "struct", "array", "map", "decimal", ""):
        assert not probed_type(name)


def test_stored_columns_from_pyarrow(tmp_path: Path) -> None:
    table = pa.table(
        {
            "i8": pa.array([1], pa.int8()),
            "u32": pa.array([1], pa.uint32()),
            "i64": pa.array([1], pa.int64()),
            "s": ["a"],
            "m": pa.array([D("1.25")], pa.decimal128(30, 4)),
            "ts": pa.array([dt.datetime(2020, 1, 1)], pa.timestamp("ms", "UTC")),
            "ntz": pa.array([dt.datetime(2020, 1, 1)], pa.timestamp("ns")),
            "d": pa.array([dt.date(2020, 1, 1)]),
        }
    )
    pq.write_table(table, tmp_path / "f.parquet")
    schema = pq.ParquetFile(tmp_path / "f.parquet").schema
    stored = {schema.column(i).name: StoredColumn.of(schema.column(i)) for i in range(len(schema))}
    assert stored == {
        "i8": StoredColumn("INT32", "INT"),
        "u32": StoredColumn("INT32", "INT", signed=False),
        "i64": StoredColumn("INT64"),
        "s": StoredColumn("BYTE_ARRAY", "STRING"),
        "m": StoredColumn("FIXED_LEN_BYTE_ARRAY", "DECIMAL", length=13, scale=4),
        "ts": StoredColumn("INT64", "TIMESTAMP", unit="MILLIS", utc=True),
        "ntz": StoredColumn("INT64", "TIMESTAMP", unit="NANOS"),
        "d": StoredColumn("INT32", "DATE"),
    }


# --------------------------------------------------------------------------
# Against another writer: every value pyarrow wrote is found

# pyarrow writes filters from version 24 on, and gives their offsets from 25 on.
needs_pyarrow_filters = pytest.mark.skipif(
    not hasattr(pq.ColumnChunkMetaData, "bloom_filter_offset"),
    reason="this pyarrow gives no bloom filter offsets (version 25 does)",
)

INTEGERS = {
    "tinyint": (pa.int8(), st.integers(-(2**7), 2**7 - 1)),
    "smallint": (pa.int16(), st.integers(-(2**15), 2**15 - 1)),
    "int": (pa.int32(), st.integers(-(2**31), 2**31 - 1)),
    "bigint": (pa.int64(), st.integers(-(2**63), 2**63 - 1)),
}
INSTANTS = st.datetimes(dt.datetime(1700, 1, 1), dt.datetime(2250, 1, 1))


def decimals(precision: int, scale: int) -> st.SearchStrategy[decimal.Decimal]:
    bound = 10**precision - 1
    return st.integers(-bound, bound).map(lambda n: D(f"{n}E-{scale}"))


def written(array: pa.Array, **options: Any) -> bytes:
    """A Parquet file pyarrow writes of ``array`` as column ``c``, with a bloom filter."""
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table({"c": array}), sink, bloom_filter_options={"c": True}, **options)
    return bytes(sink.getvalue())


def filters_of(data: bytes, column: str) -> tuple[StoredColumn, list[BloomFilter]]:
    """The column's stored type and its filter in every row group, read with nothing of
    pyarrow's but the footer's offsets."""
    metadata = pq.ParquetFile(pa.BufferReader(data)).metadata
    index = [metadata.schema.column(i).name for i in range(metadata.num_columns)].index(column)
    found = []
    for group in range(metadata.num_row_groups):
        chunk = metadata.row_group(group).column(index)
        offset, length = chunk.bloom_filter_offset, chunk.bloom_filter_length
        parsed = parse_filter(data[offset : offset + length])
        assert parsed is not None
        found.append(parsed)
    return StoredColumn.of(metadata.schema.column(index)), found


def assert_found(array: pa.Array, column_type: str, values: list[Any], **options: Any) -> None:
    stored, filters = filters_of(written(array, **options), "c")
    for value in values:
        hashed = value_hash(value, column_type, stored)
        assert hashed is not None, (value, stored)
        assert any(f.might_contain(hashed) for f in filters), (value, stored)


@needs_pyarrow_filters
@given(data=st.data(), name=st.sampled_from(sorted(INTEGERS)))
def test_integers_pyarrow_wrote_are_found(data: st.DataObject, name: str) -> None:
    arrow_type, strategy = INTEGERS[name]
    values = data.draw(st.lists(strategy, min_size=1, max_size=30))
    assert_found(pa.array(values, arrow_type), name, values)


@needs_pyarrow_filters
@given(
    data=st.data(),
    shape=st.sampled_from([(5, 2), (9, 0), (15, 2), (18, 6), (30, 4), (38, 10)]),
    as_integer=st.booleans(),
)
def test_decimals_pyarrow_wrote_are_found(
    data: st.DataObject, shape: tuple[int, int], as_integer: bool
) -> None:
    precision, scale = shape
    values = data.draw(st.lists(decimals(precision, scale), min_size=1, max_size=30))
    array = pa.array(values, pa.decimal128(precision, scale))
    column_type = f"decimal({precision},{scale})"
    # As integers, INT32 up to precision 9 and INT64 up to 18 (Spark's and delta-rs's
    # choice); else FIXED_LEN_BYTE_ARRAY of the precision's width (pyarrow's default).
    assert_found(array, column_type, values, store_decimal_as_integer=as_integer)


@needs_pyarrow_filters
@given(values=st.lists(st.text(), min_size=1, max_size=30), binary=st.booleans())
def test_strings_and_binaries_pyarrow_wrote_are_found(values: list[str], binary: bool) -> None:
    values = [v for v in values if not any(0xD800 <= ord(c) < 0xE000 for c in v)] or ["x"]
    if binary:
        encoded = [v.encode() for v in values]
        assert_found(pa.array(encoded, pa.binary()), "binary", encoded)
    else:
        assert_found(pa.array(values, pa.string()), "string", values)


@needs_pyarrow_filters
@given(
    values=st.lists(INSTANTS, min_size=1, max_size=30),
    unit=st.sampled_from(["ms", "us", "ns"]),
    zoned=st.booleans(),
)
def test_timestamps_and_dates_pyarrow_wrote_are_found(
    values: list[dt.datetime], unit: str, zoned: bool
) -> None:
    if unit == "ms":
        values = [v.replace(microsecond=v.microsecond // 1000 * 1000) for v in values]
    if unit == "ns":
        values = [v for v in values if dt.datetime(1678, 1, 1) < v < dt.datetime(2262, 1, 1)]
    literals = [v.replace(tzinfo=UTC) for v in values] if zoned else values
    column_type = "timestamp" if zoned else "timestamp_ntz"
    array = pa.array(values, pa.timestamp(unit, "UTC" if zoned else None))
    assert_found(array, column_type, literals, coerce_timestamps=None)
    days = [v.date() for v in values]
    assert_found(pa.array(days, pa.date32()), "date", days)
