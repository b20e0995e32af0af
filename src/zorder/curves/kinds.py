"""The curves rows can be laid out along, and the keys that feed them: one definition.

The public signatures (``write``, ``optimize``), the metrics, the Spark layer
and the command line's choices all take these ``Literal`` types.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any, Literal, get_args

from zorder.curves.cuts import CutTree
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


@dataclass(frozen=True, repr=False)
class ClusteringSpec:
    """What a table is clustered by: columns (as the table spells them), curve, key method.

    Z-order with rank keys may also carry ``weights`` (one per column: the
    share of the file cuts each column gets, see
    :func:`~zorder.curves.cells.balanced_cells`) and workload ``cuts`` (a
    :class:`~zorder.curves.cuts.CutTree` over these columns, cut first), as
    :func:`zorder.advise` chooses them.
    """

    columns: tuple[str, ...]
    curve: Curve
    method: KeyMethod
    weights: tuple[float, ...] | None = None
    cuts: CutTree | None = None

    def __post_init__(self) -> None:
        if self.weights is not None:
            given = list(self.weights)
            if not all(isinstance(w, int | float) and not isinstance(w, bool) for w in given):
                raise InvalidArgumentError(
                    f"weights must be numbers, one per column of {list(self.columns)}; got {given}"
                )
            # As floats, so that (2, 1) and the (2.0, 1.0) read back name the same runs.
            object.__setattr__(self, "weights", tuple(float(w) for w in given))
        if self.weights is None and self.cuts is None:
            return
        if self.curve != "zorder" or self.method != "rank":
            raise InvalidArgumentError(
                f"weights and workload cuts shape Z-order's rank-key cells; got "
                f"curve={self.curve!r}, method={self.method!r} (use curve='zorder', method='rank')"
            )
        if self.weights is not None and (
            len(self.weights) != len(self.columns)
            or not all(math.isfinite(w) and w >= 0 for w in self.weights)
            or not any(w > 0 for w in self.weights)
        ):
            raise InvalidArgumentError(
                f"weights must be {len(self.columns)} finite numbers >= 0, one per column of "
                f"{list(self.columns)}, one of them positive; got {list(self.weights)}"
            )
        if self.cuts is not None and not all(c < len(self.columns) for c in self.cuts.column):
            raise InvalidArgumentError(
                f"the workload cuts name a column beyond the {len(self.columns)} of "
                f"{list(self.columns)}"
            )

    @property
    def fingerprint(self) -> str:
        """Eight hex digits naming the spec in run directories (stable across versions)."""
        shape: dict[str, Any] = {"by": list(self.columns), "curve": self.curve}
        shape["method"] = self.method
        if self.weights is not None:
            shape["weights"] = list(self.weights)
        if self.cuts is not None:
            shape["cuts"] = self.cuts.to_json()
        text = json.dumps(shape)
        return hashlib.sha256(text.encode()).hexdigest()[:8]

    def shape(self) -> tuple[str, ...]:
        """What the spec adds to its columns, curve and method, in words: ``weights 2:1``,
        ``12 workload cuts``."""
        parts = []
        if self.weights is not None:
            parts.append("weights " + ":".join(f"{w:g}" for w in self.weights))
        if self.cuts is not None:
            cuts = self.cuts.cut_count
            parts.append(f"{cuts} workload cut{'s' if cuts != 1 else ''}")
        return tuple(parts)

    def __repr__(self) -> str:
        """One line: the cuts, which may be thousands of values from a workload's literals,
        are counted, not listed (``to_json``-style forms keep them)."""
        extra = f", weights={self.weights!r}" if self.weights is not None else ""
        if self.cuts is not None:
            extra += f", cuts=<{self.cuts.cut_count} workload cuts>"
        return (
            f"ClusteringSpec(columns={self.columns!r}, curve={self.curve!r}, "
            f"method={self.method!r}{extra})"
        )

    def __str__(self) -> str:
        return self.describe()

    def describe(self) -> str:
        """The spec in a few words: ``zorder(a, b) weights 2:1, 12 workload cuts``."""
        parts = list(self.shape())
        text = f"{self.curve}({', '.join(self.columns)})"
        if self.weights is not None:
            text += f" {parts.pop(0)}"
        text += "".join(f", {part}" for part in parts)
        return text if self.method == "rank" else f"{text} [{self.method} keys]"
