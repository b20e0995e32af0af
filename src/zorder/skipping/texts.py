"""Spark's readings of a string as a date, a timestamp, an integer, a double or a boolean.

Spark casts a string to these types with one parser each, in and out of ANSI
mode alike: ANSI raises where the parser finds no value, ANSI off reads NULL
(``SparkDateTimeUtils.stringToDate``, ``parseTimestampString``,
``UTF8String.toInt``/``toLong``, ``Double.parseDouble``, ``StringUtils.isTrueString``).
The functions here follow those parsers: each answers the value, or
:data:`None` where Spark's parser finds none (a malformed string), and raises
:class:`UnreadError` where the answer is not known here (a time without a date,
which means today; a year outside 1..9999, which Python's dates lack; a zone
spelled as Java's short ids; a character outside ASCII). Measured on Spark 4.1
(tests/spark/test_texts_spark.py checks them against its casts string by string).

Pure: the standard library only, so :mod:`zorder.skipping.coercion` builds on it.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
import zoneinfo
from fractions import Fraction

__all__ = [
    "UnreadError",
    "nearest_double",
    "nearest_float",
    "spark_boolean",
    "spark_date",
    "spark_double",
    "spark_integer",
    "spark_timestamp",
]


class UnreadError(Exception):
    """The string's value is not known here exactly (``str(self)`` says why)."""


def _trimmed(text: str) -> str:
    """``text`` without the spaces around it, which every parser here trims. Other
    whitespace and control characters, and characters outside ASCII, are not read here
    (the parsers trim them differently)."""
    if not text.isascii() or any(c < " " or c == "\x7f" for c in text):
        raise UnreadError(f"the string {text!r} holds a control or non-ASCII character")
    return text.strip(" ")


def _year(sign: int, year: int) -> int:
    if not 1 <= sign * year <= 9999:
        raise UnreadError(f"the year {sign * year} (outside 1..9999)")
    return sign * year


def spark_date(text: str) -> dt.date | None:
    """``CAST(text AS DATE)``: ``[+-]yyyy[-m[m][-d[d]]]``, the year of 4 to 7 digits,
    anything after a space or a ``T`` that follows the day ignored; None where Spark
    reads no date (``'2026-11-31'``, ``'2026-11-'``, ``'abc'``)."""
    chars = _trimmed(text)
    if not chars:
        return None
    sign, j = 1, 0
    if chars[0] in "+-":
        sign, j = (-1 if chars[0] == "-" else 1), 1
    segments, segment, value, digits = [1, 1, 1], 0, 0, 0
    while j < len(chars) and chars[j] not in " T":
        char = chars[j]
        if segment < 2 and char == "-":
            if not _date_digits(segment, digits):
                return None
            segments[segment], segment, value, digits = value, segment + 1, 0, 0
        elif char.isdigit():
            value, digits = value * 10 + int(char), digits + 1
        else:
            return None
        j += 1
    if not _date_digits(segment, digits) or (segment < 2 and j < len(chars)):
        return None
    segments[segment] = value
    try:
        return dt.date(_year(sign, segments[0]), segments[1], segments[2])
    except ValueError:
        return None


def _date_digits(segment: int, digits: int) -> bool:
    return 4 <= digits <= 7 if segment == 0 else 0 < digits <= 2


def _timestamp_digits(segment: int, digits: int) -> bool:
    if segment == 0:
        return 4 <= digits <= 6
    if segment == 6:
        return True
    if segment == 7:
        return digits <= 2
    return 0 < digits <= 2


def _timestamp_parts(chars: str) -> tuple[list[int], str | None] | None:
    """The fields of ``parseTimestampString`` (year, month, day, hour, minute, second,
    microsecond) and the zone's text; None where Spark finds none."""
    segments = [1, 1, 1, 0, 0, 0, 0, 0, 0]
    segment, value, digits, fraction_digits, j = 0, 0, 0, 0, 0
    zone: str | None = None
    sign = 1
    if chars[0] in "+-":
        sign, j = (-1 if chars[0] == "-" else 1), 1
    while j < len(chars):
        char = chars[j]
        if char.isdigit():
            if segment == 6:
                fraction_digits += 1
            if segment != 6 or digits < 6:  # digits past microseconds are dropped
                value = value * 10 + int(char)
            digits += 1
            j += 1
            continue
        if (j == 0 and char == "T") or (segment == 0 and char == ":" and j == digits):
            raise UnreadError(f"the time {chars!r} without a date (today's, in Spark)")
        separator = {0: "-", 1: "-", 3: ":", 4: ":"}.get(segment)
        if segment == 2:
            if char not in " T":
                return None
        elif segment in (5, 6):
            if not (char == "." and segment == 5):
                if not _timestamp_digits(segment, digits):
                    return None
                segments[segment] = value
                segment, value, digits = 7, 0, 0
                zone = chars[j:]
                break
        elif char != separator:
            return None
        if not _timestamp_digits(segment, digits):
            return None
        segments[segment], segment, value, digits = value, segment + 1, 0, 0
        j += 1
    if not _timestamp_digits(segment, digits):
        return None
    segments[segment] = value
    segments[6] *= 10 ** (6 - min(fraction_digits, 6))
    segments[0] = _year(sign, segments[0])
    return segments, zone


# Java's ZoneOffset.of: +h, +hh, +hhmm, +hh:mm, +hhmmss, +hh:mm:ss (by length, nothing else).
_OFFSET = re.compile(r"(?:UTC|GMT|UT)?([+-])(\d{1,2}|\d{4}|\d{2}:\d{2}|\d{6}|\d{2}:\d{2}:\d{2})")
_REGION = re.compile(r"[A-Za-z][A-Za-z_]+(?:/[A-Za-z][A-Za-z_+-]*)+")
# Directories of the tz database Python may install that Java's ZoneId does not know.
_NOT_JAVA_REGIONS = ("posix/", "right/", "SystemV/")


def _spark_zone_text(name: str) -> str:
    """The zone text as Spark hands it to Java (``DateTimeUtils.getZoneId``): ``+5:30`` is
    read as ``+05:30``, ``+05:3`` as ``+05:03``."""
    name = re.sub(r"([+-])(\d):", r"\g<1>0\2:", name, count=1)
    return re.sub(r"([+-])(\d\d):(\d)$", r"\1\2:0\3", name, count=1)


def _zone(text: str) -> dt.tzinfo | None:
    """The zone a timestamp string names after its time (Java's ``ZoneId.of``); None for
    one Java refuses."""
    name = _spark_zone_text(text.strip(" "))
    if name in ("Z", "UTC", "GMT", "UT", ""):
        return dt.UTC
    offset = _OFFSET.fullmatch(name)
    if offset:
        sign, digits = offset.groups()
        if ":" in digits or len(digits) <= 2:
            fields = [int(part) for part in digits.split(":")]
        else:  # hhmm or hhmmss
            fields = [int(digits[i : i + 2]) for i in range(0, len(digits), 2)]
        hours, minutes, seconds = (*fields, 0, 0)[:3]
        total = dt.timedelta(hours=hours, minutes=minutes, seconds=seconds)
        if total > dt.timedelta(hours=18) or minutes > 59 or seconds > 59:
            return None
        return dt.timezone(-total if sign == "-" else total)
    if re.fullmatch(r"(?:UTC|GMT|UT)?[+-][\d:]+", name):
        return None  # an offset Java's ZoneOffset.of refuses (+530): Spark reads no timestamp
    if _REGION.fullmatch(name) and not name.startswith(_NOT_JAVA_REGIONS):
        try:
            return zoneinfo.ZoneInfo(name)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            pass
    raise UnreadError(f"the zone {name!r} of a timestamp string")


def spark_timestamp(text: str) -> dt.datetime | None:
    """``CAST(text AS TIMESTAMP)``'s fields: ``[+-]yyyy[-m[m][-d[d]]][( |T)h[h][:m[m][:s[s]
    [.fraction]]]][zone]``, naive where no zone is named (the session's then), else zoned;
    None where Spark reads no timestamp (``'2026-11-02 24:00'``, ``'2026-11-02T'``)."""
    chars = _trimmed(text)
    if not chars:
        return None
    parts = _timestamp_parts(chars)
    if parts is None:
        return None
    fields, zone_text = parts
    zone = None if zone_text is None else _zone(zone_text)
    if zone_text is not None and zone is None:
        return None
    try:
        year, month, day, hour, minute, second, micros = fields[:7]
        naive = dt.datetime(year, month, day, hour, minute, second, micros)
    except ValueError:
        return None
    return naive if zone is None else naive.replace(tzinfo=zone)


_INTEGER_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
_LEGACY_INTEGER = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?")


def spark_integer(text: str, type_name: str) -> int | None:
    """``CAST(text AS type_name)`` with ANSI mode off (``UTF8String.toInt``): an optional
    sign, digits, and a fraction that is dropped (``'5.7'`` is 5, ``'.5'`` 0); None for
    anything else or a value out of the type's range."""
    chars = _trimmed(text)
    match = _LEGACY_INTEGER.fullmatch(chars)
    if not chars or match is None or chars in ("+", "-"):
        return None
    sign, whole, _ = match.groups()
    number = int(whole or "0") * (-1 if sign == "-" else 1)
    bits = _INTEGER_BITS[type_name]
    if not -(1 << (bits - 1)) <= number < 1 << (bits - 1):
        return None
    return number


# A decimal exponent past which a string is no finite, non-zero double (10^308 and 4.9e-324).
_DOUBLE_DIGITS = 400
_JAVA_DOUBLE = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[fFdD]?")
# Java's parseDouble reads NaN and Infinity (signed); Spark then reads these, in any case.
_SPECIAL = {
    **dict.fromkeys(("NaN", "+NaN", "-NaN", "nan"), float("nan")),
    **dict.fromkeys(
        ("Infinity", "+Infinity", "inf", "+inf", "infinity", "+infinity"), float("inf")
    ),
    **dict.fromkeys(("-Infinity", "-inf", "-infinity"), float("-inf")),
}


def spark_double(text: str) -> Fraction | float:
    """``CAST(text AS DOUBLE)`` (and FLOAT) before rounding: the exact decimal value as a
    Fraction, or a float for NaN and the infinities (Java's ``parseDouble``, then Spark's
    ``inf``/``nan`` spellings). Every other spelling (hexadecimal, ``'abc'``) is not read
    here: which of them Java reads is not pinned down."""
    chars = _trimmed(text)
    if _JAVA_DOUBLE.fullmatch(chars):
        number = decimal.Decimal(chars.rstrip("fFdD"))  # read in time whatever its exponent
        if number and number.adjusted() > _DOUBLE_DIGITS:  # beyond every double: infinite
            return -math.inf if number < 0 else math.inf
        if not number or number.adjusted() < -_DOUBLE_DIGITS:  # below every double: zero
            return Fraction(0)
        return Fraction(number)
    special = _SPECIAL.get(chars if chars[1:] in ("NaN", "Infinity") else chars.lower())
    if special is None:
        raise UnreadError(f"the string {text!r} as a double")
    return special


def nearest_double(value: Fraction | float) -> float:
    """The DOUBLE nearest ``value``, ties to even, an infinity past the largest (Java's
    ``parseDouble``)."""
    if isinstance(value, float):
        return value
    try:
        return float(value)  # correctly rounded
    except OverflowError:
        return -math.inf if value < 0 else math.inf


_FLOAT_MAX = Fraction(2**128 - 2**104)
_FLOAT_LIMIT = _FLOAT_MAX + 2**103  # half a step past the largest FLOAT: an infinity there


_FLOAT_HALF_TINY = Fraction(1, 2**150)


def nearest_float(value: Fraction | float) -> float:
    """The FLOAT nearest ``value`` (as a Python float), ties to even, an infinity past the
    largest (Java's ``parseFloat``: rounded once, from the decimal)."""
    if isinstance(value, float):
        return value
    if abs(value) >= _FLOAT_LIMIT:
        return -math.inf if value < 0 else math.inf
    if abs(value) <= _FLOAT_HALF_TINY:  # at most half the least subnormal: zero (ties even)
        return -0.0 if value < 0 else 0.0
    exponent = max(math.floor(math.log2(abs(value))) - 23, -149) if value else -149
    while abs(value) >= 2 ** (exponent + 24) and exponent > -149:
        exponent += 1
    while exponent > -149 and abs(value) < 2 ** (exponent + 23):
        exponent -= 1
    step = Fraction(2) ** exponent
    return float(round(value / step) * step)  # round(): ties to even


_TRUE = {"t", "true", "y", "yes", "1"}
_FALSE = {"f", "false", "n", "no", "0"}


def spark_boolean(text: str) -> bool | None:
    """``CAST(text AS BOOLEAN)``: t, true, y, yes, 1 and f, false, n, no, 0 in any case,
    trimmed; None for anything else."""
    word = _trimmed(text).lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    return None
