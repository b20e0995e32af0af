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
from zorder.curves.hilbert import hilbert_index, hilbert_index_array, hilbert_point
from zorder.curves.kinds import CURVES, KEY_METHODS, Curve, KeyMethod, as_curve, as_key_method
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
    "SUPPORTED_TYPES",
    "Curve",
    "KeyMethod",
    "NullOrder",
    "OrderedEncoding",
    "as_curve",
    "as_key_method",
    "canonical_type_name",
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
