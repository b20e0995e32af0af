"""zorder: Z-order and Hilbert clustering with data skipping for Delta Lake tables.

The curve core (pure Python/NumPy) is importable without Spark::

    >>> import zorder
    >>> zorder.interleave_bits([3, 6], 3)
    30

Names load on first use (PEP 562), so ``import zorder`` and the pure layers
(:mod:`zorder.curves`, :mod:`zorder.skipping`, :mod:`zorder.stats`) import no
pyspark, py4j, deltalake, matplotlib or typer; ``zorder.write`` and the other
operations import what they need when first touched.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from zorder.errors import (
    BenchmarkError,
    BrokenTableError,
    ColumnNotFoundError,
    ConcurrentCommitError,
    FilterEvaluationError,
    FilterParseError,
    ForbiddenFilterError,
    InvalidArgumentError,
    InvalidArgumentTypeError,
    MissingFilesError,
    NotADeltaTableError,
    SchemaMismatchError,
    SourceNotFoundError,
    SparkStartError,
    SparkVersionError,
    TableExistsError,
    UnsafeCommitWarning,
    UnsupportedColumnTypeError,
    UnsupportedFilterError,
    UnsupportedTableError,
    VersionNotFoundError,
    ZorderError,
)

if TYPE_CHECKING:
    __version__: str
    from zorder.api import (
        BatchWriter,
        ClusterMetrics,
        ColumnDepth,
        FileDescription,
        RestoreResult,
        RunDescription,
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
    from zorder.api.advise import Advice, Candidate
    from zorder.api.arrow import to_arrow
    from zorder.api.paths import advise, scan
    from zorder.api.scanning import Scan
    from zorder.api.table import Commit, Snapshot, Table
    from zorder.curves import (
        Curve,
        KeyMethod,
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
    from zorder.curves.kinds import BloomColumn, ClusteringSpec

# Each lazily loaded public name, and the module that defines it.
_LAZY = {
    "to_arrow": "zorder.api.arrow",  # its own module: a lookup imports no Spark operation
    "Table": "zorder.api.table",
    "Snapshot": "zorder.api.table",
    "Commit": "zorder.api.table",
    "Advice": "zorder.api.advise",
    "Candidate": "zorder.api.advise",
    "advise": "zorder.api.paths",
    "ClusteringSpec": "zorder.curves.kinds",
    "BloomColumn": "zorder.curves.kinds",
    "Scan": "zorder.api.scanning",
    "scan": "zorder.api",
    **dict.fromkeys(
        (
            "BatchWriter",
            "ClusterMetrics",
            "ColumnDepth",
            "FileDescription",
            "RestoreResult",
            "RunDescription",
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
    **dict.fromkeys(
        (
            "Curve",
            "KeyMethod",
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
    if module is None:
        raise AttributeError(f"module 'zorder' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | {"__version__"})


__all__ = [
    "Advice",
    "BatchWriter",
    "BenchmarkError",
    "BloomColumn",
    "BrokenTableError",
    "Candidate",
    "ClusterMetrics",
    "ClusteringSpec",
    "ColumnDepth",
    "ColumnNotFoundError",
    "Commit",
    "ConcurrentCommitError",
    "Curve",
    "FileDescription",
    "FilterEvaluationError",
    "FilterParseError",
    "ForbiddenFilterError",
    "InvalidArgumentError",
    "InvalidArgumentTypeError",
    "KeyMethod",
    "MissingFilesError",
    "NotADeltaTableError",
    "OrderedEncoding",
    "RestoreResult",
    "RunDescription",
    "Scan",
    "ScanReport",
    "SchemaMismatchError",
    "Snapshot",
    "SourceNotFoundError",
    "SparkStartError",
    "SparkVersionError",
    "Table",
    "TableDescription",
    "TableExistsError",
    "UnsafeCommitWarning",
    "UnsupportedColumnTypeError",
    "UnsupportedFilterError",
    "UnsupportedTableError",
    "VacuumResult",
    "VersionNotFoundError",
    "ZorderError",
    "__version__",
    "advise",
    "deinterleave_bits",
    "describe",
    "encoding_for",
    "explain",
    "foreach_batch",
    "hilbert_index",
    "hilbert_index_array",
    "hilbert_point",
    "interleave_array",
    "interleave_bits",
    "optimize",
    "read",
    "restore",
    "scan",
    "skipping_effectiveness",
    "to_arrow",
    "vacuum",
    "write",
    "zorder_less",
]
