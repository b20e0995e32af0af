"""zorder: Z-order and Hilbert clustering with data skipping for Delta Lake tables.

The curve core (pure Python/NumPy) is importable without Spark::

    >>> import zorder
    >>> zorder.interleave_bits([3, 6], 3)
    30
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from zorder.api import (
    ClusterMetrics,
    ScanReport,
    VacuumResult,
    explain,
    optimize,
    read,
    skipping_effectiveness,
    vacuum,
    write,
)
from zorder.curves import (
    OrderedEncoding,
    deinterleave_bits,
    encoding_for,
    hilbert_index,
    hilbert_index_array,
    hilbert_point,
    interleave_array,
    interleave_bits,
    zorder_less,
)

try:
    __version__ = version("zorder")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+unknown"

__all__ = [
    "ClusterMetrics",
    "OrderedEncoding",
    "ScanReport",
    "VacuumResult",
    "__version__",
    "deinterleave_bits",
    "encoding_for",
    "explain",
    "hilbert_index",
    "hilbert_index_array",
    "hilbert_point",
    "interleave_array",
    "interleave_bits",
    "optimize",
    "read",
    "skipping_effectiveness",
    "vacuum",
    "write",
    "zorder_less",
]
