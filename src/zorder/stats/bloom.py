"""Parquet's split-block bloom filters, read from their bytes, and filter literals hashed as
a file stores them.

Why: a file's bounds cannot rule out a value that lies between them, which
is every lookup of an identifier, a host or a session in a file that spans
many; a bloom filter can. Writers keep one per column chunk (row group by
column) when asked to (Spark's ``parquet.bloom.filter.enabled#col``,
delta-rs's ``BloomFilterProperties``, pyarrow's ``bloom_filter_options``).

The format (apache/parquet-format ``BloomFilter.md``): a Thrift
compact-protocol ``BloomFilterHeader`` (the bitset's size, and three unions
naming the algorithm, the hash and the compression), then the bitset: ``z``
blocks of eight little-endian 32-bit words. A value is inserted by hashing
its PLAIN encoding in the column's *physical* type with XXH64 (seed 0): the
top 32 bits of the hash pick a block, the low 32 bits, times eight salts,
one bit in each word. A filter that lacks one of those bits proves the value
absent from its row group; one that has them all proves nothing.

So a literal is hashed in the file's own types, never the table's: a Delta
table that widened ``int`` to ``bigint`` holds INT32 files under a bigint
column, and a decimal may be an INT32, an INT64 or a FIXED_LEN_BYTE_ARRAY
depending on the writer and its precision (delta-rs writes a decimal(1,0)
as INT64). Whatever this module cannot read or hash *exactly* it answers
with None, and the caller keeps the file: a header naming another algorithm,
hash or compression, a damaged one, an INT96 timestamp, a literal finer than
the file's time unit, an unsigned integer, a float (Spark's ``-0.0 = 0.0``
and ``NaN = NaN`` are not bit equalities), a decimal stored as a BYTE_ARRAY
(whose minimal length the format only recommends). Pure: bytes in, answers
out; :mod:`zorder.arrow.blooms` reads them.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import xxhash

from zorder.curves.kinds import bloom_filter_type

__all__ = [
    "MAX_FILTER_BYTES",
    "BloomFilter",
    "BloomHeader",
    "StoredColumn",
    "parse_filter",
    "parse_header",
    "probed_type",
    "value_hash",
]

# The largest bitset read: Arrow's writer stops at 128 MiB, parquet-mr at 1 MiB by default.
MAX_FILTER_BYTES = 128 * 1024 * 1024

# The constants of BloomFilter.md's ``mask``: one odd multiplier per word of a block.
_SALTS = (
    0x47B6137B,
    0x44974D91,
    0x8824AD5B,
    0xA2B7289D,
    0x705495C7,
    0x2DF1424B,
    0x9EFC4947,
    0x5C6BFB31,
)
_BLOCK_BYTES = 32
_WORDS = struct.Struct("<8I")

_INTEGER_TYPES = frozenset({"tinyint", "smallint", "int", "bigint"})
_DECIMAL = re.compile(r"decimal\((\d+),(\d+)\)")
_INT_WIDTHS = {"INT32": 4, "INT64": 8}
_UNITS = {"milliseconds": "MILLIS", "microseconds": "MICROS", "nanoseconds": "NANOS"}
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)
_MICROSECOND = dt.timedelta(microseconds=1)


def probed_type(column_type: str) -> bool:
    """Can a bloom filter answer equality on a column of Spark type ``column_type``?

    The exact types: integers, decimals, strings, binary, dates and timestamps.
    Not floats and doubles (SQL equality is not bit equality there), booleans
    (two values: the bounds already say) or nested types: the rule the spec's
    bloom filters are checked by too (:func:`zorder.curves.kinds.bloom_filter_type`).
    """
    return bloom_filter_type(column_type)


# --------------------------------------------------------------------------
# The header: Thrift's compact protocol, as little of it as a header needs


class _MalformedError(Exception):
    """Bytes that are no header this module can use (truncated, damaged, or another kind)."""


# Compact-protocol type ids (Thrift's TCompactProtocol.Types).
_TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY = 1, 2, 3, 4, 5, 6, 7, 8
_LIST, _SET, _MAP, _STRUCT = 9, 10, 11, 12
_MAX_DEPTH = 16  # nesting a header's unknown fields may have before it counts as damaged


class _Compact:
    """A reader of Thrift compact-protocol bytes from ``position`` on."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.position = 0

    def byte(self) -> int:
        if self.position >= len(self.data):
            raise _MalformedError("truncated")
        value = self.data[self.position]
        self.position += 1
        return value

    def varint(self) -> int:
        result = shift = 0
        while True:
            byte = self.byte()
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return result
            shift += 7
            if shift > 63:
                raise _MalformedError("a varint longer than 64 bits")

    def zigzag(self) -> int:
        value = self.varint()
        return (value >> 1) ^ -(value & 1)

    def fields(self) -> Iterator[tuple[int, int]]:
        """Each field's (id, type) of the struct here, up to its stop byte; the caller
        reads (or skips) each field's value before asking for the next."""
        last = 0
        while True:
            header = self.byte()
            if header == 0:
                return
            kind, delta = header & 0x0F, header >> 4
            last = last + delta if delta else self.zigzag()
            yield last, kind

    def skip(self, kind: int, depth: int = 0) -> None:
        if depth > _MAX_DEPTH:
            raise _MalformedError("nested too deeply")
        if kind in (_TRUE, _FALSE):
            return
        if kind == _BYTE:
            self.byte()
        elif kind in (_I16, _I32, _I64):
            self.varint()
        elif kind == _DOUBLE:
            self._advance(8)
        elif kind == _BINARY:
            self._advance(self.varint())
        elif kind in (_LIST, _SET):
            header = self.byte()
            size = header >> 4 if header >> 4 != 15 else self.varint()
            for _ in range(size):
                self._element(header & 0x0F, depth)
        elif kind == _MAP:
            size = self.varint()
            types = self.byte() if size else 0
            for _ in range(size):
                self._element(types >> 4, depth)
                self._element(types & 0x0F, depth)
        elif kind == _STRUCT:
            for _, field_kind in self.fields():
                self.skip(field_kind, depth + 1)
        else:
            raise _MalformedError(f"unknown compact type {kind}")

    def _element(self, kind: int, depth: int) -> None:
        if kind in (_TRUE, _FALSE):  # a collection's booleans take a byte each
            self.byte()
        else:
            self.skip(kind, depth + 1)

    def _advance(self, count: int) -> None:
        if self.position + count > len(self.data):
            raise _MalformedError("truncated")
        self.position += count

    def union_choice(self) -> int:
        """The field id a union of structs holds (BLOCK, XXHASH, UNCOMPRESSED: 1)."""
        chosen = []
        for field_id, kind in self.fields():
            if kind != _STRUCT:
                raise _MalformedError(f"union field {field_id} is not a struct")
            self.skip(kind)
            chosen.append(field_id)
        if len(chosen) != 1:
            raise _MalformedError("a union holding other than one field")
        return chosen[0]


@dataclass(frozen=True)
class BloomHeader:
    """A header this module can use: BLOCK, XXHASH, UNCOMPRESSED."""

    length: int  # bytes the header takes; the bitset follows
    num_bytes: int  # the bitset's size: whole 32-byte blocks


def parse_header(data: bytes) -> BloomHeader | None:
    """The header at the start of ``data``, or None for anything but a split-block filter
    hashed with XXH64 and stored uncompressed (or bytes too damaged or short to tell)."""
    reader = _Compact(data)
    num_bytes: int | None = None
    choices: dict[int, int] = {}
    try:
        for field_id, kind in reader.fields():
            if field_id == 1 and kind == _I32:
                num_bytes = reader.zigzag()
            elif field_id in (2, 3, 4) and kind == _STRUCT:
                choices[field_id] = reader.union_choice()
            else:
                reader.skip(kind)
    except _MalformedError:
        return None
    if choices != {2: 1, 3: 1, 4: 1} or num_bytes is None:
        return None  # a required field missing, or another algorithm, hash or compression
    if not _BLOCK_BYTES <= num_bytes <= MAX_FILTER_BYTES or num_bytes % _BLOCK_BYTES:
        return None
    return BloomHeader(reader.position, num_bytes)


@dataclass(frozen=True)
class BloomFilter:
    """A split-block bloom filter's bitset: whole 32-byte blocks."""

    bitset: bytes

    def __post_init__(self) -> None:
        if not self.bitset or len(self.bitset) % _BLOCK_BYTES:
            raise ValueError(f"a bitset of {len(self.bitset)} bytes is no whole number of blocks")

    @property
    def num_blocks(self) -> int:
        return len(self.bitset) // _BLOCK_BYTES

    def might_contain(self, value_hash: int) -> bool:
        """False only when no value with this 64-bit hash was inserted (BloomFilter.md's
        ``filter_check``)."""
        block = ((value_hash >> 32) * self.num_blocks) >> 32
        key = value_hash & 0xFFFFFFFF
        words = _WORDS.unpack_from(self.bitset, block * _BLOCK_BYTES)
        return all(
            (word >> (((key * salt) & 0xFFFFFFFF) >> 27)) & 1
            for word, salt in zip(words, _SALTS, strict=True)
        )


def parse_filter(data: bytes) -> BloomFilter | None:
    """The filter that starts ``data`` (a header, then its bitset; anything after is
    ignored), or None when the header is not one :func:`parse_header` accepts or the
    bitset is cut short."""
    header = parse_header(data)
    if header is None or header.length + header.num_bytes > len(data):
        return None
    return BloomFilter(bytes(data[header.length : header.length + header.num_bytes]))


# --------------------------------------------------------------------------
# Literals hashed as the file stores them


@dataclass(frozen=True)
class StoredColumn:
    """How one file stores a column: its Parquet physical type and logical annotation."""

    physical: str  # INT32, INT64, INT96, BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY, FLOAT, ...
    logical: str = "NONE"  # the annotation's kind as pyarrow names it: INT, STRING, DECIMAL, ...
    length: int = 0  # FIXED_LEN_BYTE_ARRAY's width in bytes
    scale: int = 0  # DECIMAL
    unit: str = ""  # TIMESTAMP: MILLIS, MICROS or NANOS
    utc: bool = False  # TIMESTAMP: isAdjustedToUTC
    signed: bool = True  # INT

    @classmethod
    def of(cls, column: Any) -> StoredColumn:
        """From pyarrow's ``ColumnSchema`` (``ParquetFile.schema.column(i)``)."""
        logical = json.loads(column.logical_type.to_json())
        return cls(
            physical=str(column.physical_type),
            logical=str(column.logical_type.type),
            length=int(column.length or 0),
            scale=int(logical.get("scale", 0)),
            unit=_UNITS.get(str(logical.get("timeUnit", "")), ""),
            utc=bool(logical.get("isAdjustedToUTC", False)),
            signed=bool(logical.get("isSigned", True)),
        )


def value_hash(value: Any, column_type: str, stored: StoredColumn) -> int | None:
    """The XXH64 a filter holds for a row whose value Spark finds equal to ``value``, or
    None when this cannot be said exactly (then the file must be kept).

    ``value`` is a literal as binding leaves it against a ``column_type`` column compared
    in its own values (:class:`~zorder.skipping.nodes.Comparison` with ``domain`` None): an
    int or a Decimal for integers and decimals, a str, bytes, a date, an aware datetime for
    ``timestamp``, a naive one for ``timestamp_ntz``. ``stored`` is the file's column.
    """
    plain = _plain(value, column_type, stored)
    return None if plain is None else int(xxhash.xxh64_intdigest(plain))


def _plain(value: Any, column_type: str, stored: StoredColumn) -> bytes | None:
    """``value``'s PLAIN encoding in ``stored``'s types, or None."""
    numeric = column_type in _INTEGER_TYPES or _DECIMAL.fullmatch(column_type) is not None
    kind, physical = stored.logical, stored.physical
    if physical in _INT_WIDTHS and kind in ("NONE", "INT") and stored.signed and numeric:
        return _little_endian(_scaled(value, 0), _INT_WIDTHS[physical])
    if kind == "DECIMAL" and numeric:
        unscaled = _scaled(value, stored.scale)
        if physical in _INT_WIDTHS:
            return _little_endian(unscaled, _INT_WIDTHS[physical])
        if physical == "FIXED_LEN_BYTE_ARRAY" and stored.length > 0:
            return _big_endian(unscaled, stored.length)
        return None  # BYTE_ARRAY: its length is the writer's choice
    if kind == "DATE" and physical == "INT32":
        day = _date(value, column_type)
        return None if day is None else _little_endian((day - _EPOCH_DATE).days, 4)
    if kind == "TIMESTAMP" and physical == "INT64":
        return _timestamp(value, column_type, stored)
    if physical == "BYTE_ARRAY" and kind in ("NONE", "STRING"):
        if column_type == "string" and isinstance(value, str):
            try:
                return value.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate: no string Spark holds
                return None
        if column_type == "binary" and isinstance(value, bytes):
            return value
    return None


def _scaled(value: Any, scale: int) -> int | None:
    """``value`` times ``10**scale`` when that is an integer (a Decimal or an int), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value * _power_of_ten(scale)
    if isinstance(value, decimal.Decimal) and value.is_finite():
        sign, digits, exponent = value.as_tuple()
        assert isinstance(exponent, int)  # finite
        magnitude = int("".join(map(str, digits)) or "0")
        shift = exponent + scale
        if shift < 0:
            magnitude, remainder = divmod(magnitude, _power_of_ten(-shift))
            if remainder:
                return None  # finer than the file's scale: no stored value equals it
        else:
            magnitude *= _power_of_ten(shift)
        return -magnitude if sign else magnitude
    return None


def _power_of_ten(exponent: int) -> int:
    return int(10**exponent)


def _little_endian(number: int | None, width: int) -> bytes | None:
    if number is None:
        return None
    try:
        return number.to_bytes(width, "little", signed=True)
    except OverflowError:
        return None


def _big_endian(number: int | None, width: int) -> bytes | None:
    if number is None:
        return None
    try:
        return number.to_bytes(width, "big", signed=True)
    except OverflowError:
        return None


def _date(value: Any, column_type: str) -> dt.date | None:
    """The day a DATE file stores for a row equal to ``value``: a date against a date
    column (or a timestamp at midnight UTC, as binding compares one there), a naive
    midnight against a ``timestamp_ntz`` column a date was widened to."""
    if isinstance(value, dt.datetime):
        if column_type == "date" and value.utcoffset() is not None:
            instant = value.astimezone(dt.UTC).replace(tzinfo=None)
        elif column_type == "timestamp_ntz" and value.tzinfo is None:
            instant = value
        else:
            return None
        return instant.date() if instant.time() == dt.time() else None
    if isinstance(value, dt.date) and column_type == "date":
        return value
    return None


def _timestamp(value: Any, column_type: str, stored: StoredColumn) -> bytes | None:
    """An INT64 TIMESTAMP's PLAIN bytes for ``value``: zoned against ``timestamp`` (stored
    adjusted to UTC), naive against ``timestamp_ntz`` (stored local), in the file's unit."""
    if not isinstance(value, dt.datetime):
        return None
    if column_type == "timestamp" and stored.utc and value.utcoffset() is not None:
        since = value.astimezone(dt.UTC).replace(tzinfo=None) - _EPOCH
    elif column_type == "timestamp_ntz" and not stored.utc and value.tzinfo is None:
        since = value - _EPOCH
    else:
        return None
    micros = since // _MICROSECOND  # exact: a timedelta counts whole microseconds
    if stored.unit == "MICROS":
        return _little_endian(micros, 8)
    if stored.unit == "NANOS":
        return _little_endian(micros * 1000, 8)
    if stored.unit == "MILLIS" and micros % 1000 == 0:
        return _little_endian(micros // 1000, 8)
    return None
