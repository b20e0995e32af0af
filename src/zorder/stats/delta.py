"""Delta statistics (numRecords, minValues, maxValues, nullCount) from a Parquet footer."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from zorder.columns import match_column

__all__ = [
    "DEFAULT_NUM_INDEXED_COLS",
    "STRING_PREFIX_LENGTH",
    "FileStats",
    "indexed_columns",
    "stats_from_parquet",
    "truncate_max_string",
    "truncate_min_string",
    "typed_bound",
]

if TYPE_CHECKING:  # loaded where used: a lookup reads no footer and lists no directory
    import pyarrow.parquet as pq

DEFAULT_NUM_INDEXED_COLS = 32
STRING_PREFIX_LENGTH = 32
_MAX_CODE_POINT = 0x10FFFF
_SURROGATES = range(0xD800, 0xE000)


def truncate_min_string(value: str, length: int = STRING_PREFIX_LENGTH) -> str:
    """A lower bound of ``value`` with at most ``length`` characters: its prefix."""
    return value[:length]


def truncate_max_string(value: str, length: int = STRING_PREFIX_LENGTH) -> str | None:
    """An upper bound of ``value`` with at most ``length`` characters, or None.

    A longer value is cut to ``length`` characters and its last character
    that can grow is replaced by the next code point, which makes the bound
    greater than every string with the cut prefix, in code point order and
    so in UTF-8 byte order (Spark's and Delta's string order).
    """
    if len(value) <= length:
        return value
    prefix = value[:length]
    for position in range(length - 1, -1, -1):
        code = ord(prefix[position])
        if code == _MAX_CODE_POINT:
            continue
        following = code + 1
        if following in _SURROGATES:  # not valid in UTF-8: skip the block
            following = _SURROGATES.stop
        return prefix[:position] + chr(following)
    return None  # only U+10FFFF characters: no short bound exists


@dataclass(frozen=True)
class FileStats:
    """Statistics of one data file, as Delta writes them in an add action."""

    num_records: int
    min_values: Mapping[str, Any] = field(default_factory=dict)
    max_values: Mapping[str, Any] = field(default_factory=dict)
    null_count: Mapping[str, int] = field(default_factory=dict)

    def to_json(self) -> str:
        """The add action's ``stats`` string (decimals kept exact)."""
        parts = [f'"numRecords":{self.num_records}']
        for key, values in (
            ("minValues", self.min_values),
            ("maxValues", self.max_values),
            ("nullCount", self.null_count),
        ):
            body = ",".join(f"{json.dumps(k)}:{_json_value(v)}" for k, v in values.items())
            parts.append(f'"{key}":{{{body}}}')
        return "{" + ",".join(parts) + "}"


def _json_value(value: Any) -> str:
    if isinstance(value, decimal.Decimal):
        return str(value)  # JSON number with every digit
    return json.dumps(value)


# Delta's table property naming the columns that get statistics (logical names).
STATS_COLUMNS = "delta.dataSkippingStatsColumns"


def indexed_columns(schema: pa.Schema, configuration: Mapping[str, str | None]) -> list[str]:
    """Top-level columns that get statistics under the table's configuration.

    ``delta.dataSkippingStatsColumns`` (comma-separated names) wins over
    ``delta.dataSkippingNumIndexedCols`` (the first N columns, -1 for all,
    default 32), as in Delta.
    """
    names = list(schema.names)
    listed = configuration.get(STATS_COLUMNS)
    if listed:
        wanted = [name.strip().strip("`") for name in listed.split(",") if name.strip()]
        # A listed name that resolves to no column gets no statistics (Delta checks the
        # property when it is set; a reader of someone else's table only skips less).
        matched = (match_column(w, names) for w in wanted)
        return [name for name in matched if name is not None]
    raw = configuration.get("delta.dataSkippingNumIndexedCols")
    count = DEFAULT_NUM_INDEXED_COLS if raw in (None, "") else int(str(raw))
    return names if count < 0 else names[:count]


def _leaf_count(dtype: pa.DataType) -> int:
    if pa.types.is_struct(dtype):
        return sum(_leaf_count(dtype.field(i).type) for i in range(dtype.num_fields))
    if pa.types.is_map(dtype):
        return _leaf_count(dtype.key_type) + _leaf_count(dtype.item_type)
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return _leaf_count(dtype.value_type)
    return 1


def _leaf_positions(schema: pa.Schema) -> dict[str, int]:
    """Parquet leaf index of every top-level column that is a single leaf."""
    positions: dict[str, int] = {}
    leaf = 0
    for schema_field in schema:
        count = _leaf_count(schema_field.type)
        if count == 1 and not pa.types.is_nested(schema_field.type):
            positions[schema_field.name] = leaf
        leaf += count
    return positions


def _has_min_max_stats(dtype: pa.DataType) -> bool:
    return bool(
        pa.types.is_integer(dtype)
        or pa.types.is_floating(dtype)
        or pa.types.is_decimal(dtype)
        or pa.types.is_date(dtype)
        or pa.types.is_timestamp(dtype)
        or pa.types.is_string(dtype)
        or pa.types.is_large_string(dtype)
    )


def _row_group_bounds(
    metadata: pq.FileMetaData, leaf: int
) -> Iterator[tuple[int | None, Any, Any, bool]]:
    """(null_count, min, max, bounded) per row group; bounded is False when unknown."""
    for index in range(metadata.num_row_groups):
        chunk = metadata.row_group(index).column(leaf)
        rows = metadata.row_group(index).num_rows
        stats = chunk.statistics
        if stats is None:
            yield None, None, None, False
            continue
        nulls = stats.null_count if stats.has_null_count else None
        if nulls is not None and nulls == rows:
            yield nulls, None, None, True  # all null: nothing to bound
        elif stats.has_min_max:
            yield nulls, stats.min, stats.max, True
        else:
            yield nulls, None, None, False


def _floor_millis(value: dt.datetime) -> dt.datetime:
    return value - dt.timedelta(microseconds=value.microsecond % 1000)


def _ceil_millis(value: dt.datetime) -> dt.datetime | None:
    extra = value.microsecond % 1000
    if not extra:
        return value
    try:
        return value + dt.timedelta(microseconds=1000 - extra)
    except OverflowError:
        return None


def _format_timestamp(value: dt.datetime, with_zone: bool) -> str:
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    text = value.isoformat(timespec="milliseconds")  # the caller rounded already
    return text + "Z" if with_zone else text


def _json_bounds(dtype: pa.DataType, low: Any, high: Any) -> tuple[Any, Any]:
    """Delta's JSON form of a column's [low, high]; None for a side that cannot be bounded."""
    if pa.types.is_floating(dtype):
        low_f, high_f = float(low), float(high)
        if math.isnan(low_f) or math.isnan(high_f):
            # Spark orders NaN above +inf; JSON has no NaN: leave the column unbounded.
            return None, None
        return (low_f if math.isfinite(low_f) else None), (
            high_f if math.isfinite(high_f) else None
        )
    if pa.types.is_timestamp(dtype):
        with_zone = dtype.tz is not None
        ceiling = _ceil_millis(high)
        return _format_timestamp(_floor_millis(low), with_zone), (
            None if ceiling is None else _format_timestamp(ceiling, with_zone)
        )
    if pa.types.is_date(dtype):
        return low.isoformat(), high.isoformat()
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
        return truncate_min_string(low), truncate_max_string(high)
    if pa.types.is_decimal(dtype):
        return decimal.Decimal(low), decimal.Decimal(high)
    return int(low), int(high)


def typed_bound(dtype: pa.DataType, value: Any) -> Any:
    """A bound of :class:`FileStats` (Delta's JSON form) as the Python value of ``dtype``
    that Delta readers give: dates and timestamps parsed from their text (a ``Z``
    timestamp in UTC), the rest as they are; None stays None."""
    if value is None or not isinstance(value, str):
        return value
    if pa.types.is_timestamp(dtype):
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        if dtype.tz is None:  # timestamp_ntz: a wall clock, written without a zone
            return moment.replace(tzinfo=None)
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)
    if pa.types.is_date(dtype):
        return dt.date.fromisoformat(value)
    return value


def _smaller(a: Any, b: Any) -> Any:
    return b if _lt(b, a) else a


def _larger(a: Any, b: Any) -> Any:
    return b if _lt(a, b) else a


def _lt(a: Any, b: Any) -> bool:
    # NaN is the largest double, as in Spark and in parquet-mr's statistics.
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a):
            return False
        if math.isnan(b):
            return True
    return bool(a < b)


def stats_from_parquet(
    metadata: pq.FileMetaData, schema: pa.Schema, columns: Sequence[str]
) -> FileStats:
    """Delta statistics of one file from its footer, for ``columns`` of ``schema``.

    A column gets a null count when every row group reports one, and min/max
    only when every row group that holds a value reports a bound (Parquet
    writers drop bounds of very long strings, for instance). Booleans and
    binaries get null counts only, as in Delta.

    Doubles: Spark's Parquet writer (parquet-mr) counts NaN as the largest
    value in its bounds, as Spark orders it; a NaN bound leaves the column
    unbounded in that file, since JSON has no NaN. Writers that leave NaN out
    of their bounds (pyarrow does) cannot be told apart from the footer, so
    only footers of Spark-written files are read here.
    """
    positions = _leaf_positions(schema)
    mins: dict[str, Any] = {}
    maxs: dict[str, Any] = {}
    nulls: dict[str, int] = {}
    for name in columns:
        if name not in positions:
            continue
        dtype = schema.field(name).type
        total_nulls: int | None = 0
        low: Any = None
        high: Any = None
        bounded = True
        for count, rg_low, rg_high, rg_bounded in _row_group_bounds(metadata, positions[name]):
            total_nulls = None if count is None or total_nulls is None else total_nulls + count
            bounded = bounded and rg_bounded
            if rg_low is not None:
                low = rg_low if low is None else _smaller(low, rg_low)
                high = rg_high if high is None else _larger(high, rg_high)
        if total_nulls is not None:
            nulls[name] = total_nulls
        if bounded and low is not None and _has_min_max_stats(dtype):
            json_low, json_high = _json_bounds(dtype, low, high)
            if json_low is not None:
                mins[name] = json_low
            if json_high is not None:
                maxs[name] = json_high
    return FileStats(
        num_records=metadata.num_rows, min_values=mins, max_values=maxs, null_count=nulls
    )
