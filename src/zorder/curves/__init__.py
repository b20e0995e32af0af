"""Pure Python/NumPy curve core: encodings, Morton (Z-order) and Hilbert keys.

Nothing here imports pyspark; the Spark key builders are tested against it.
"""

from __future__ import annotations

from zorder.curves.encodings import (
    SUPPORTED_TYPES,
    NullOrder,
    OrderedEncoding,
    canonical_type_name,
    encoding_for,
)
from zorder.curves.grid import curve_grid
from zorder.curves.hilbert import hilbert_index, hilbert_index_array, hilbert_point
from zorder.curves.kinds import (
    CURVES,
    KEY_METHODS,
    SPACE_FILLING_CURVES,
    ClusteringSpec,
    Curve,
    KeyMethod,
    SpaceFillingCurve,
    as_curve,
    as_key_method,
)
from zorder.curves.morton import (
    deinterleave_bits,
    interleave_array,
    interleave_bits,
    key_bytes,
    less_msb,
    zorder_less,
)

__all__ = [
    "CURVES",
    "KEY_METHODS",
    "SPACE_FILLING_CURVES",
    "SUPPORTED_TYPES",
    "ClusteringSpec",
    "Curve",
    "KeyMethod",
    "NullOrder",
    "OrderedEncoding",
    "SpaceFillingCurve",
    "as_curve",
    "as_key_method",
    "canonical_type_name",
    "curve_grid",
    "deinterleave_bits",
    "encoding_for",
    "hilbert_index",
    "hilbert_index_array",
    "hilbert_point",
    "interleave_array",
    "interleave_bits",
    "key_bytes",
    "less_msb",
    "zorder_less",
]
