"""Order-preserving encodings of Spark's atomic types to unsigned integers.

These are the reference semantics of the "direct" key method: every value of
a column becomes an unsigned integer of a fixed width whose order is the
value's order in Spark, so that interleaving the integers clusters the rows.

- byte/short/int/long: two's complement with the sign bit flipped.
- float/double: IEEE bits with all bits flipped when negative, else the sign
  bit set; -0.0 encodes as 0.0 and every NaN as one canonical NaN that sorts
  after +inf (Spark's order).
- decimal(p, s): the unscaled integer, 64 bits wide for p <= 18, else 128.
- date: days since 1970-01-01 (32 bits); timestamp / timestamp_ntz:
  microseconds since the epoch (64 bits).
- boolean: false = 0, true = 1.
- string / binary: the first ``prefix_bytes`` bytes (UTF-8 for strings),
  big-endian, right-padded with 0x00, so "ab" < "abc". Only a prefix: values
  that share it encode equal (order is preserved weakly: a < b gives
  enc(a) <= enc(b)).

Nulls get a place of their own through :meth:`OrderedEncoding.key`, one bit
above the value bits: all nulls first (the default) or all last.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from zorder.errors import InvalidArgumentError, InvalidArgumentTypeError

__all__ = [
    "SUPPORTED_TYPES",
    "NullOrder",
    "OrderedEncoding",
    "canonical_type_name",
    "encoding_for",
]

NullOrder = Literal["first", "last"]

_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_ONE_MICROSECOND = dt.timedelta(microseconds=1)

# Spark's simpleString names, and the typeName() aliases that map onto them.
_ALIASES = {
    "bool": "boolean",
    "byte": "tinyint",
    "short": "smallint",
    "integer": "int",
    "long": "bigint",
    "real": "float",
}
SUPPORTED_TYPES = (
    "boolean",
    "tinyint",
    "smallint",
    "int",
    "bigint",
    "float",
    "double",
    "decimal(p,s)",
    "date",
    "timestamp",
    "timestamp_ntz",
    "string",
    "binary",
)
_INT_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
_DECIMAL = re.compile(r"^decimal\(\s*(\d+)\s*,\s*(-?\d+)\s*\)$")
_MAX_DECIMAL_PRECISION = 38


def canonical_type_name(type_name: str) -> str:
    """Spark's simpleString for ``type_name`` (``"long"`` -> ``"bigint"``).

    Raises ValueError naming the type and the accepted ones when clustering
    cannot use it (maps, arrays, structs, intervals, ...).
    """
    name = type_name.strip().lower()
    name = _ALIASES.get(name, name)
    if name == "decimal":
        name = "decimal(10,0)"  # Spark's default precision and scale
    match = _DECIMAL.match(name)
    if match:
        precision, scale = int(match.group(1)), int(match.group(2))
        if not 1 <= precision <= _MAX_DECIMAL_PRECISION or not 0 <= scale <= precision:
            raise InvalidArgumentError(
                f"invalid decimal type {type_name!r}; accepted: decimal(p,s) with "
                f"1 <= p <= {_MAX_DECIMAL_PRECISION} and 0 <= s <= p"
            )
        return f"decimal({precision},{scale})"
    if name.startswith(("varchar(", "char(")):
        return "string"
    if name not in SUPPORTED_TYPES:
        raise InvalidArgumentError(
            f"type {type_name!r} cannot be used for clustering (it has no total order "
            f"that fits a key); accepted: {', '.join(SUPPORTED_TYPES)}"
        )
    return name


def _flip_signed(value: int, bits: int) -> int:
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if not low <= value <= high:
        raise InvalidArgumentError(f"value {value} is outside the {bits}-bit range {low} .. {high}")
    return (value + (1 << (bits - 1))) & ((1 << bits) - 1)


def _require(value: object, kinds: tuple[type, ...], type_name: str) -> None:
    if isinstance(value, bool) and bool not in kinds:
        kinds_text = " or ".join(k.__name__ for k in kinds)
        raise InvalidArgumentTypeError(f"{type_name} expects {kinds_text}, got bool {value!r}")
    if not isinstance(value, kinds):
        kinds_text = " or ".join(k.__name__ for k in kinds)
        raise InvalidArgumentTypeError(
            f"{type_name} expects {kinds_text}, got {type(value).__name__} {value!r}"
        )


def _encode_float_bits(raw: int, bits: int) -> int:
    sign = 1 << (bits - 1)
    mask = (1 << bits) - 1
    return (raw ^ mask) if raw & sign else (raw | sign)


def _float_encoder(bits: int) -> Callable[[object], int]:
    fmt_float, fmt_int = (">f", ">I") if bits == 32 else (">d", ">Q")
    canonical_nan = 0x7FC0_0000 if bits == 32 else 0x7FF8_0000_0000_0000
    type_name = "float" if bits == 32 else "double"

    def encode(value: object) -> int:
        _require(value, (float, int), type_name)
        assert isinstance(value, float | int)
        number = float(value)
        if math.isnan(number):
            return _encode_float_bits(canonical_nan, bits)
        if number == 0.0:
            number = 0.0  # -0.0 and 0.0 are one value
        try:
            packed = struct.pack(fmt_float, number)
        except OverflowError:
            raise InvalidArgumentError(
                f"value {number!r} is outside the range of {type_name}"
            ) from None
        (raw,) = struct.unpack(fmt_int, packed)
        return _encode_float_bits(raw, bits)

    return encode


def _int_encoder(type_name: str, bits: int) -> Callable[[object], int]:
    def encode(value: object) -> int:
        _require(value, (int,), type_name)
        assert isinstance(value, int)
        return _flip_signed(value, bits)

    return encode


def _decimal_encoder(
    type_name: str, precision: int, scale: int, bits: int
) -> Callable[[object], int]:
    limit = 10**precision

    def encode(value: object) -> int:
        _require(value, (decimal.Decimal, int), type_name)
        assert isinstance(value, decimal.Decimal | int)
        number = decimal.Decimal(value)
        if not number.is_finite():
            raise InvalidArgumentError(f"{type_name} cannot hold {number}")
        unscaled = number.scaleb(scale, context=decimal.Context(prec=_MAX_DECIMAL_PRECISION + 40))
        if unscaled != unscaled.to_integral_value():
            raise InvalidArgumentError(
                f"value {number} has more than {scale} decimal places for {type_name}"
            )
        as_int = int(unscaled)
        if not -limit < as_int < limit:
            raise InvalidArgumentError(f"value {number} does not fit in {type_name}")
        return _flip_signed(as_int, bits)

    return encode


def _encode_boolean(value: object) -> int:
    _require(value, (bool,), "boolean")
    return int(bool(value))


def _encode_date(value: object) -> int:
    if isinstance(value, dt.datetime) or not isinstance(value, dt.date | int):
        raise InvalidArgumentTypeError(
            f"date expects datetime.date or int days, got {type(value).__name__}"
        )
    days = value if isinstance(value, int) else (value - _EPOCH_DATE).days
    return _flip_signed(days, 32)


def _timestamp_encoder(type_name: str) -> Callable[[object], int]:
    def encode(value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, dt.datetime | int):
            raise InvalidArgumentTypeError(
                f"{type_name} expects datetime.datetime or int microseconds, "
                f"got {type(value).__name__}"
            )
        if isinstance(value, int):
            micros = value
        else:
            # Naive datetimes are read as UTC wall time (Spark's timestamp_ntz).
            aware = value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
            micros = (aware - _EPOCH) // _ONE_MICROSECOND
        return _flip_signed(micros, 64)

    return encode


def _bytes_encoder(type_name: str, prefix_bytes: int) -> Callable[[object], int]:
    def encode(value: object) -> int:
        if type_name == "string":
            _require(value, (str,), type_name)
            assert isinstance(value, str)
            data = value.encode("utf-8", errors="surrogatepass")
        else:
            _require(value, (bytes, bytearray, memoryview), type_name)
            assert isinstance(value, bytes | bytearray | memoryview)
            data = bytes(value)
        prefix = data[:prefix_bytes].ljust(prefix_bytes, b"\x00")
        return int.from_bytes(prefix, "big")

    return encode


@dataclass(frozen=True)
class OrderedEncoding:
    """Order-preserving map from one Spark type's values to ``value_bits``-bit integers."""

    type_name: str
    value_bits: int
    nulls: NullOrder = "first"
    _encode: Callable[[object], int] = field(repr=False, compare=False, default=_encode_boolean)

    @property
    def key_bits(self) -> int:
        """Width of :meth:`key`: the value bits and one bit for the null slot."""
        return self.value_bits + 1

    def encode(self, value: object) -> int:
        """Encoding of a non-null value, in ``0 .. 2**value_bits - 1``."""
        if value is None:
            raise InvalidArgumentError(
                f"{self.type_name}: encode() takes non-null values; use key()"
            )
        return self._encode(value)

    def key(self, value: object) -> int:
        """Encoding with nulls in a place of their own (all before or all after values)."""
        null_flag = 1 << self.value_bits
        if value is None:
            return 0 if self.nulls == "first" else null_flag
        encoded = self._encode(value)
        return (null_flag | encoded) if self.nulls == "first" else encoded


def encoding_for(
    type_name: str, *, prefix_bytes: int = 8, nulls: NullOrder = "first"
) -> OrderedEncoding:
    """The order-preserving encoding of a Spark type (simpleString or typeName).

    >>> enc = encoding_for("int")
    >>> enc.encode(-1) < enc.encode(0) < enc.encode(1)
    True
    >>> encoding_for("string", prefix_bytes=2).encode("abc") == int.from_bytes(b"ab", "big")
    True
    """
    if nulls not in ("first", "last"):
        raise InvalidArgumentError(f"nulls must be 'first' or 'last', got {nulls!r}")
    if prefix_bytes < 1:
        raise InvalidArgumentError(f"prefix_bytes must be >= 1, got {prefix_bytes}")
    name = canonical_type_name(type_name)
    encoder: Callable[[object], int]
    if name in _INT_BITS:
        bits = _INT_BITS[name]
        encoder = _int_encoder(name, bits)
    elif name in ("float", "double"):
        bits = 32 if name == "float" else 64
        encoder = _float_encoder(bits)
    elif name.startswith("decimal("):
        match = _DECIMAL.match(name)
        assert match is not None  # canonical_type_name produced it
        precision, scale = int(match.group(1)), int(match.group(2))
        bits = 64 if precision <= 18 else 128
        encoder = _decimal_encoder(name, precision, scale, bits)
    elif name == "boolean":
        bits, encoder = 1, _encode_boolean
    elif name == "date":
        bits, encoder = 32, _encode_date
    elif name in ("timestamp", "timestamp_ntz"):
        bits, encoder = 64, _timestamp_encoder(name)
    else:  # string, binary
        bits, encoder = 8 * prefix_bytes, _bytes_encoder(name, prefix_bytes)
    return OrderedEncoding(type_name=name, value_bits=bits, nulls=nulls, _encode=encoder)
