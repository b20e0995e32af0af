"""zorder: Z-order and Hilbert clustering with data skipping for Delta Lake tables.

The top level holds what a user calls: the operations (``write``, ``optimize``,
``read``, ``to_arrow``, ``scan``, ``explain``, ``describe``, ``vacuum``, ``restore``,
``advise``, ``foreach_batch``), the :class:`Table` handle, the clustering spec and
the frozen results. The error classes are in :mod:`zorder.errors` (``ZorderError``,
their base, is here too), and the curve core in :mod:`zorder.curves`, which is pure
Python/NumPy and importable without Spark::

    >>> import zorder.curves
    >>> zorder.curves.interleave_bits([3, 6], 3)
    30

Names load on first use (PEP 562), so ``import zorder`` and the pure layers
(:mod:`zorder.curves`, :mod:`zorder.skipping`, :mod:`zorder.stats`) import no
pyspark, py4j, deltalake, matplotlib or typer; ``zorder.write`` and the other
operations import what they need when first touched. The names the top level
held before (each error class, the curve functions, the parts of a description)
still resolve there for one release, with a :class:`DeprecationWarning` naming
their home.
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

import zorder.errors as errors
from zorder.errors import ZorderError

if TYPE_CHECKING:
    __version__: str
    from zorder.api import (
        BatchWriter,
        ClusterMetrics,
        RestoreResult,
        ScanReport,
        TableDescription,
        VacuumResult,
        describe,
        explain,
        foreach_batch,
        optimize,
        read,
        restore,
        skipping_effectiveness,
        vacuum,
        write,
    )
    from zorder.api.advise import Advice
    from zorder.api.arrow import to_arrow
    from zorder.api.paths import advise, scan
    from zorder.api.scanning import Scan
    from zorder.api.table import Commit, Snapshot, Table
    from zorder.curves import Curve, KeyMethod
    from zorder.curves.kinds import BloomColumn, ClusteringSpec

# Each lazily loaded public name, and the module that defines it.
_LAZY = {
    "to_arrow": "zorder.api.arrow",  # its own module: a lookup imports no Spark operation
    "Table": "zorder.api.table",
    "Snapshot": "zorder.api.table",
    "Commit": "zorder.api.table",
    "Advice": "zorder.api.advise",
    "advise": "zorder.api.paths",
    "ClusteringSpec": "zorder.curves.kinds",
    "BloomColumn": "zorder.curves.kinds",
    "Scan": "zorder.api.scanning",
    "scan": "zorder.api",
    "Curve": "zorder.curves",
    "KeyMethod": "zorder.curves",
    **dict.fromkeys(
        (
            "BatchWriter",
            "ClusterMetrics",
            "RestoreResult",
            "ScanReport",
            "TableDescription",
            "VacuumResult",
            "describe",
            "explain",
            "foreach_batch",
            "optimize",
            "read",
            "restore",
            "skipping_effectiveness",
            "vacuum",
            "write",
        ),
        "zorder.api",
    ),
}

# Names the top level held before, and where they live: each still resolves here, with a
# DeprecationWarning, for one release.
_MOVED = {
    **dict.fromkeys((n for n in errors.__all__ if n != "ZorderError"), "zorder.errors"),
    "Candidate": "zorder.api.advise",
    **dict.fromkeys(
        ("ColumnDepth", "FileDescription", "RunDescription"),
        "zorder.api",
    ),
    **dict.fromkeys(
        (
            "OrderedEncoding",
            "deinterleave_bits",
            "encoding_for",
            "hilbert_index",
            "hilbert_index_array",
            "hilbert_point",
            "interleave_array",
            "interleave_bits",
            "zorder_less",
        ),
        "zorder.curves",
    ),
}


def _installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("zorder")
    except PackageNotFoundError:  # running from a source tree that was not installed
        return "0.0.0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":  # read from the installed metadata only when asked (30 ms)
        globals()[name] = _installed_version()
        return globals()[name]
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value  # later lookups skip this function
        return value
    home = _MOVED.get(name)
    if home is None:
        raise AttributeError(f"module 'zorder' has no attribute {name!r}")
    # Not cached: every use is warned about, as each is a line to change.
    warnings.warn(
        f"zorder.{name} is deprecated and leaves the top level in the next release; "
        f"use {home}.{name}",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module(home), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | {"__version__"})


__all__ = [
    "Advice",
    "BatchWriter",
    "BloomColumn",
    "ClusterMetrics",
    "ClusteringSpec",
    "Commit",
    "Curve",
    "KeyMethod",
    "RestoreResult",
    "Scan",
    "ScanReport",
    "Snapshot",
    "Table",
    "TableDescription",
    "VacuumResult",
    "ZorderError",
    "__version__",
    "advise",
    "describe",
    "errors",
    "explain",
    "foreach_batch",
    "optimize",
    "read",
    "restore",
    "scan",
    "skipping_effectiveness",
    "to_arrow",
    "vacuum",
    "write",
]
