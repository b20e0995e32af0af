"""The public operations: ``write``, ``optimize``, ``read``, ``explain``, ``vacuum``."""

from __future__ import annotations

from zorder.api.cluster import (
    DEFAULT_TARGET_FILE_SIZE,
    ClusterMetrics,
    WriteMode,
    optimize,
    parse_size,
    write,
)
from zorder.api.read import ScanReport, explain, read, skipping_effectiveness
from zorder.api.vacuum import VacuumResult, vacuum

__all__ = [
    "DEFAULT_TARGET_FILE_SIZE",
    "ClusterMetrics",
    "ScanReport",
    "VacuumResult",
    "WriteMode",
    "explain",
    "optimize",
    "parse_size",
    "read",
    "skipping_effectiveness",
    "vacuum",
    "write",
]
