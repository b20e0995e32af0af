"""Per-file statistics for Delta add actions, from Parquet footers.

Only footers are read (a few kilobytes a file), never the data. The rules
follow what Delta readers trust for skipping: a bound is written only when it
truly bounds every value of the file, and anything unsure is left out (a
missing bound only means "might match").

:mod:`~zorder.stats.depth` measures how the files' ranges of a column
overlap (Snowflake's clustering depth) from those statistics alone.
"""

from __future__ import annotations

from zorder.stats.actions import action_stats_field
from zorder.stats.delta import (
    DEFAULT_NUM_INDEXED_COLS,
    STATS_COLUMNS,
    STRING_PREFIX_LENGTH,
    FileStats,
    indexed_columns,
    stats_from_parquet,
    truncate_max_string,
    truncate_min_string,
    typed_bound,
)
from zorder.stats.depth import ColumnDepth, column_depth

__all__ = [
    "DEFAULT_NUM_INDEXED_COLS",
    "STATS_COLUMNS",
    "STRING_PREFIX_LENGTH",
    "ColumnDepth",
    "FileStats",
    "action_stats_field",
    "column_depth",
    "indexed_columns",
    "stats_from_parquet",
    "truncate_max_string",
    "truncate_min_string",
    "typed_bound",
]
