"""The public operations: the Table handle; write, and the path-first wrappers of the
handle's methods (optimize, scan, read, to_arrow, explain, vacuum, restore, describe).

The write path loads on first use (PEP 562): ``zorder query`` reaches
:mod:`zorder.api.arrow` without importing the Spark write operations.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Eager where a module shares its function's name (zorder.api.read holds read):
# importing the module would otherwise leave the module under that name.
from zorder.api.arrow import to_arrow
from zorder.api.describe import (
    ColumnDepth,
    FileDescription,
    RunDescription,
    TableDescription,
)

# The wrappers share names with modules (describe, vacuum, restore): zorder.api.table loads
# those first (through arrow above), so these names are bound to the functions last.
from zorder.api.paths import describe, optimize, restore, scan, vacuum, write
from zorder.api.read import explain, read, skipping_effectiveness
from zorder.api.restore import RestoreResult
from zorder.api.scanning import Scan, ScanReport
from zorder.api.table import Snapshot, Table
from zorder.api.vacuum import VacuumResult
from zorder.plan.modes import INPUT_FORMATS, InputFormat, WriteMode
from zorder.sizes import DEFAULT_TARGET_FILE_SIZE, parse_size

if TYPE_CHECKING:
    from zorder.api.cluster import ClusterMetrics
    from zorder.api.inputs import read_input
    from zorder.api.streams import BatchWriter, foreach_batch

# Lazy: the Spark write path (and its progress display), which a lookup never needs.
_LAZY = {
    "ClusterMetrics": "zorder.api.cluster",
    "read_input": "zorder.api.inputs",
    "BatchWriter": "zorder.api.streams",
    "foreach_batch": "zorder.api.streams",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'zorder.api' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "DEFAULT_TARGET_FILE_SIZE",
    "INPUT_FORMATS",
    "BatchWriter",
    "ClusterMetrics",
    "ColumnDepth",
    "FileDescription",
    "InputFormat",
    "RestoreResult",
    "RunDescription",
    "Scan",
    "ScanReport",
    "Snapshot",
    "Table",
    "TableDescription",
    "VacuumResult",
    "WriteMode",
    "describe",
    "explain",
    "foreach_batch",
    "optimize",
    "parse_size",
    "read",
    "read_input",
    "restore",
    "scan",
    "skipping_effectiveness",
    "to_arrow",
    "vacuum",
    "write",
]
