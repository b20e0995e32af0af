"""The public operations: write, optimize, read, to_arrow, explain, vacuum, describe."""

from __future__ import annotations

from zorder.api.arrow import scan_arrow, to_arrow
from zorder.api.cluster import ClusterMetrics, WriteMode, optimize, write
from zorder.api.describe import FileDescription, RunDescription, TableDescription, describe
from zorder.api.inputs import INPUT_FORMATS, InputFormat, read_input
from zorder.api.read import ScanReport, explain, read, skipping_effectiveness
from zorder.api.vacuum import VacuumResult, vacuum
from zorder.sizes import DEFAULT_TARGET_FILE_SIZE, parse_size

__all__ = [
    "DEFAULT_TARGET_FILE_SIZE",
    "INPUT_FORMATS",
    "ClusterMetrics",
    "FileDescription",
    "InputFormat",
    "RunDescription",
    "ScanReport",
    "TableDescription",
    "VacuumResult",
    "WriteMode",
    "describe",
    "explain",
    "optimize",
    "parse_size",
    "read",
    "read_input",
    "scan_arrow",
    "skipping_effectiveness",
    "to_arrow",
    "vacuum",
    "write",
]
