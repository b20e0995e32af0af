"""Order-preserving encodings: a < b iff enc(a) < enc(b), at the edges too."""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zorder.curves import SUPPORTED_TYPES, canonical_type_name, encoding_for

INT_RANGES = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}


def assert_order_preserved(
    type_name: str, a: Any, b: Any, sort_key: Callable[[Any], Any] = lambda v: v
) -> None:
    enc = encoding_for(type_name)
    ea, eb = enc.encode(a), enc.encode(b)
    assert 0 <= ea < 1 << enc.value_bits
    assert 0 <= eb < 1 << enc.value_bits
    ka, kb = sort_key(a), sort_key(b)
    assert (ka < kb) == (ea < eb)
    assert (ka == kb) == (ea == eb)


@pytest.mark.parametrize(("type_name", "bits"), INT_RANGES.items())
@given(data=st.data())
def test_signed_integers(type_name: str, bits: int, data: st.DataObject) -> None:
    values = st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    assert_order_preserved(type_name, data.draw(values), data.draw(values))


@pytest.mark.parametrize(("type_name", "bits"), INT_RANGES.items())
def test_integer_extremes(type_name: str, bits: int) -> None:
    enc = encoding_for(type_name)
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    assert enc.encode(low) == 0
    assert enc.encode(-1) == (1 << (bits - 1)) - 1
    assert enc.encode(0) == 1 << (bits - 1)
    assert enc.encode(high) == (1 << bits) - 1
    with pytest.raises(ValueError, match=f"value {high + 1} is outside the {bits}-bit range"):
        enc.encode(high + 1)
    with pytest.raises(TypeError, match="expects int"):
        enc.encode(1.5)


def float_key(value: float) -> tuple[int, float]:
    """Spark's order for doubles: -0.0 == 0.0, NaN equal to itself and above +inf."""
    return (1, 0.0) if math.isnan(value) else (0, value + 0.0)


@given(st.floats(), st.floats())
def test_doubles(a: float, b: float) -> None:
    assert_order_preserved("double", a, b, float_key)


@given(st.floats(width=32), st.floats(width=32))
def test_floats(a: float, b: float) -> None:
    assert_order_preserved("float", a, b, float_key)


@pytest.mark.parametrize("type_name", ["float", "double"])
def test_float_edges(type_name: str) -> None:
    enc = encoding_for(type_name)
    tiny = 1e-45 if type_name == "float" else 5e-324
    largest = 3.4028234663852886e38 if type_name == "float" else 1.7976931348623157e308
    ladder = [-math.inf, -largest, -1.0, -tiny, 0.0, tiny, 1.0, largest, math.inf, math.nan]
    codes = [enc.encode(v) for v in ladder]
    assert codes == sorted(codes)
    assert len(set(codes)) == len(codes)
    assert enc.encode(-0.0) == enc.encode(0.0)
    negative_nan = -math.nan
    assert (
        enc.encode(negative_nan)
        == enc.encode(math.nan)
        == (1 << enc.value_bits) - (1 << (22 if type_name == "float" else 51))
    )


@given(
    st.integers(1, 38).flatmap(
        lambda p: st.integers(0, p).flatmap(
            lambda s: st.tuples(
                st.just(p),
                st.just(s),
                st.integers(-(10**p) + 1, 10**p - 1),
                st.integers(-(10**p) + 1, 10**p - 1),
            )
        )
    )
)
def test_decimals(case: tuple[int, int, int, int]) -> None:
    precision, scale, ua, ub = case
    exact = decimal.Context(prec=80)  # the default 28 digits would round 38-digit values
    a = decimal.Decimal(ua).scaleb(-scale, context=exact)
    b = decimal.Decimal(ub).scaleb(-scale, context=exact)
    type_name = f"decimal({precision},{scale})"
    assert_order_preserved(type_name, a, b)
    assert encoding_for(type_name).value_bits == (64 if precision <= 18 else 128)


def test_decimal_errors() -> None:
    enc = encoding_for("decimal(5,2)")
    with pytest.raises(ValueError, match=r"value 1000.00 does not fit in decimal\(5,2\)"):
        enc.encode(decimal.Decimal("1000.00"))
    with pytest.raises(ValueError, match="more than 2 decimal places"):
        enc.encode(decimal.Decimal("1.234"))
    assert enc.encode(decimal.Decimal("999.99")) > enc.encode(decimal.Decimal("-999.99"))
    full = encoding_for("decimal(38,0)")
    assert full.encode(decimal.Decimal(10**38 - 1)) == (1 << 127) + 10**38 - 1


@given(st.dates(), st.dates())
def test_dates(a: dt.date, b: dt.date) -> None:
    assert_order_preserved("date", a, b)


def test_date_extremes() -> None:
    enc = encoding_for("date")
    assert (
        enc.encode(dt.date(1, 1, 1))
        < enc.encode(dt.date(1970, 1, 1))
        < enc.encode(dt.date(9999, 12, 31))
    )
    assert enc.encode(dt.date(1970, 1, 1)) == 1 << 31


@given(
    st.datetimes(timezones=st.timezones() | st.just(dt.UTC)),
    st.datetimes(timezones=st.timezones() | st.just(dt.UTC)),
)
def test_timestamps(a: dt.datetime, b: dt.datetime) -> None:
    # Aware datetimes compare as instants, as Spark's timestamp does.
    assert_order_preserved("timestamp", a, b)


@given(st.datetimes(), st.datetimes())
def test_timestamp_ntz(a: dt.datetime, b: dt.datetime) -> None:
    assert_order_preserved("timestamp_ntz", a, b)


def test_timestamp_microseconds() -> None:
    enc = encoding_for("timestamp")
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    assert enc.encode(epoch) == 1 << 63
    assert enc.encode(epoch + dt.timedelta(microseconds=1)) == (1 << 63) + 1
    assert enc.encode(epoch - dt.timedelta(microseconds=1)) == (1 << 63) - 1
    assert enc.encode(5) == (1 << 63) + 5


def utf8_prefix(value: str, size: int = 8) -> bytes:
    return value.encode("utf-8")[:size].ljust(size, b"\x00")


@given(st.text(), st.text())
def test_strings_weakly_ordered_by_prefix(a: str, b: str) -> None:
    enc = encoding_for("string")
    ea, eb = enc.encode(a), enc.encode(b)
    assert 0 <= ea < 1 << 64
    if a < b:
        assert ea <= eb
    # Strict whenever the 8-byte prefixes differ (UTF-8 order is code point order).
    assert (utf8_prefix(a) < utf8_prefix(b)) == (ea < eb)


@pytest.mark.parametrize(
    ("smaller", "larger"),
    [("", "a"), ("ab", "abc"), ("a", "b"), ("z", "é"), ("é", "中"), ("中", "😀"), ("A", "a")],
)
def test_string_examples(smaller: str, larger: str) -> None:
    enc = encoding_for("string")
    assert enc.encode(smaller) < enc.encode(larger)


def test_string_prefix_width_and_shared_prefix() -> None:
    enc = encoding_for("string", prefix_bytes=4)
    assert enc.value_bits == 32
    assert enc.encode("ab") == int.from_bytes(b"ab\x00\x00", "big")
    # A shared prefix carries no information: the known weakness of "direct".
    assert enc.encode("prefix-1") == enc.encode("prefix-2")


@given(st.binary(), st.binary())
def test_binary(a: bytes, b: bytes) -> None:
    enc = encoding_for("binary")
    assert (a[:8].ljust(8, b"\x00") < b[:8].ljust(8, b"\x00")) == (enc.encode(a) < enc.encode(b))
    if a < b:
        assert enc.encode(a) <= enc.encode(b)


def test_boolean() -> None:
    enc = encoding_for("boolean")
    assert enc.value_bits == 1
    assert (enc.encode(False), enc.encode(True)) == (0, 1)
    with pytest.raises(TypeError, match="boolean expects bool"):
        enc.encode(1)


@pytest.mark.parametrize("type_name", ["int", "double", "string", "date", "boolean"])
def test_nulls_have_their_own_place(type_name: str) -> None:
    first = encoding_for(type_name)
    last = encoding_for(type_name, nulls="last")
    sample = {"int": -5, "double": -math.inf, "string": "", "date": dt.date(1, 1, 1)}.get(
        type_name, False
    )
    assert first.key_bits == first.value_bits + 1
    assert first.key(None) == 0 < first.key(sample)
    assert last.key(None) == 1 << last.value_bits > last.key(sample)
    # The minimum value and null never share a key.
    assert first.key(None) != first.key(sample)
    with pytest.raises(ValueError, match="takes non-null values"):
        first.encode(None)


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [
        ("long", "bigint"),
        ("LONG", "bigint"),
        ("integer", "int"),
        ("short", "smallint"),
        ("byte", "tinyint"),
        ("decimal", "decimal(10,0)"),
        ("decimal(38, 18)", "decimal(38,18)"),
        ("varchar(10)", "string"),
    ],
)
def test_type_aliases(alias: str, canonical: str) -> None:
    assert canonical_type_name(alias) == canonical


@pytest.mark.parametrize("bad", ["map<string,int>", "array<int>", "struct<a:int>", "interval"])
def test_unsupported_types_are_named(bad: str) -> None:
    with pytest.raises(ValueError, match=r"cannot be used for clustering.*accepted: boolean"):
        encoding_for(bad)


def test_every_supported_type_has_an_encoding() -> None:
    for name in SUPPORTED_TYPES:
        enc = encoding_for(name.replace("(p,s)", "(12,2)"))
        assert enc.value_bits >= 1
    with pytest.raises(ValueError, match=r"invalid decimal type 'decimal\(40,2\)'"):
        encoding_for("decimal(40,2)")
