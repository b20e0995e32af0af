"""The curves rows can be laid out along, and the keys that feed them: one definition.

The public signatures (``write``, ``optimize``), the metrics, the Spark layer
and the command line's choices all take these ``Literal`` types.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Literal, get_args

from zorder.errors import InvalidArgumentError

__all__ = [
    "CURVES",
    "KEY_METHODS",
    "SPACE_FILLING_CURVES",
    "ClusteringSpec",
    "Curve",
    "KeyMethod",
    "SpaceFillingCurve",
    "as_curve",
    "as_key_method",
]

# "linear" is the baseline: a plain lexicographic sort by the columns in order.
Curve = Literal["zorder", "hilbert", "linear"]
# The curves proper, which combine several columns' keys into one.
SpaceFillingCurve = Literal["zorder", "hilbert"]
# "rank": quantile buckets from a sample; "direct": order-preserving encodings.
KeyMethod = Literal["rank", "direct"]
CURVES: tuple[Curve, ...] = get_args(Curve)
KEY_METHODS: tuple[KeyMethod, ...] = get_args(KeyMethod)
SPACE_FILLING_CURVES: tuple[SpaceFillingCurve, ...] = get_args(SpaceFillingCurve)


def as_curve(value: object) -> Curve:
    """``value`` as a :data:`Curve`, or InvalidArgumentError naming the accepted ones."""
    if value not in CURVES:
        raise InvalidArgumentError(f"unknown curve {value!r}; accepted: {', '.join(CURVES)}")
    return value


def as_key_method(value: object) -> KeyMethod:
    """``value`` as a :data:`KeyMethod`, or InvalidArgumentError naming the accepted ones."""
    if value not in KEY_METHODS:
        raise InvalidArgumentError(
            f"unknown key method {value!r}; accepted: {', '.join(KEY_METHODS)}"
        )
    return value


@dataclass(frozen=True)
class ClusteringSpec:
    """What a table is clustered by: columns (as the table spells them), curve, key method."""

    columns: tuple[str, ...]
    curve: Curve
    method: KeyMethod

    @property
    def fingerprint(self) -> str:
        """Eight hex digits naming the spec in run directories (stable across versions)."""
        text = json.dumps({"by": list(self.columns), "curve": self.curve, "method": self.method})
        return hashlib.sha256(text.encode()).hexdigest()[:8]
