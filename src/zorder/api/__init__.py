"""The public operations: ``write`` and ``optimize`` (reads arrive with skipping)."""

from __future__ import annotations

from zorder.api.cluster import (
    DEFAULT_TARGET_FILE_SIZE,
    ClusterMetrics,
    WriteMode,
    optimize,
    parse_size,
    write,
)

__all__ = [
    "DEFAULT_TARGET_FILE_SIZE",
    "ClusterMetrics",
    "WriteMode",
    "optimize",
    "parse_size",
    "write",
]
