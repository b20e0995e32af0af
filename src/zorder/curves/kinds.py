"""The curves rows can be laid out along, and the keys that feed them: one definition.

The public signatures (``write``, ``optimize``), the metrics, the Spark layer
and the command line's choices all take these ``Literal`` types.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, get_args

from zorder.curves.cuts import CutTree
from zorder.errors import InvalidArgumentError

__all__ = [
    "BLOOM_FILTER_TYPES",
    "BLOOM_ROWS_SLACK",
    "CURVES",
    "DEFAULT_BLOOM_FPP",
    "KEY_METHODS",
    "PARQUET_ROW_GROUP_BYTES",
    "SPACE_FILLING_CURVES",
    "BloomColumn",
    "BloomFilters",
    "ClusteringSpec",
    "Curve",
    "KeyMethod",
    "SpaceFillingCurve",
    "as_curve",
    "as_key_method",
    "bloom_columns",
    "bloom_filter_bytes",
    "bloom_filter_type",
    "rows_per_row_group",
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


# Parquet's bloom filters are sized for this false-positive rate unless a column says
# otherwise: about 1.2 bytes a distinct value (Parquet's split-block filters).
DEFAULT_BLOOM_FPP = 0.01
# The column types (Spark's names; and decimal(p,s)) whose values a Parquet bloom filter
# holds as Spark compares them for equality: floats are left out (Spark's -0.0 = 0.0 and
# NaN = NaN are not bit equality), booleans have two values, nested values are not hashed.
BLOOM_FILTER_TYPES = (
    "tinyint",
    "smallint",
    "int",
    "bigint",
    "string",
    "binary",
    "date",
    "timestamp",
    "timestamp_ntz",
    "decimal(p,s)",
)


# A write sizes each file's filters for this many times a file's rows (the largest file of
# a run may hold more than the rest); Parquet's writer was measured to write that size for
# id columns of any number of distinct values per file.
BLOOM_ROWS_SLACK = 2
# Parquet's writers cut a row group at about this many bytes (parquet.block.size's
# default), and a bloom filter is one a row group.
PARQUET_ROW_GROUP_BYTES = 128 << 20


def bloom_filter_bytes(distinct: int, fpp: float) -> int:
    """The bytes of a split-block bloom filter for ``distinct`` values at rate ``fpp``: the
    bits Parquet's writers compute (``-8 n / ln(1 - p^(1/8))``), as a power of two."""
    bits = -8 * max(1, distinct) / math.log(1 - fpp ** (1 / 8))
    return max(32, 1 << math.ceil(math.log2(max(1.0, bits / 8))))


@dataclass(frozen=True)
class BloomColumn:
    """A column whose files carry Parquet bloom filters, and the false-positive rate they are
    sized for (a lookup of an absent value keeps a file with about this probability)."""

    column: str
    fpp: float = DEFAULT_BLOOM_FPP

    def __post_init__(self) -> None:
        if not isinstance(self.column, str) or not self.column:
            raise InvalidArgumentError(
                f"a bloom filter names a column by its name, got {self.column!r}"
            )
        fpp = self.fpp
        if isinstance(fpp, bool) or not isinstance(fpp, int | float) or not 0 < fpp < 1:
            raise InvalidArgumentError(
                f"the bloom filter of {self.column!r} needs a false-positive rate strictly "
                f"between 0 and 1 (such as {DEFAULT_BLOOM_FPP}), got {fpp!r}"
            )
        object.__setattr__(self, "fpp", float(fpp))

    def describe(self) -> str:
        """``session_id``, or ``session_id (fpp 0.001)`` for a rate other than the default."""
        return self.column if self.fpp == DEFAULT_BLOOM_FPP else f"{self.column} (fpp {self.fpp:g})"


def bloom_filter_type(type_name: str) -> bool:
    """Can a bloom filter answer equality on a column of Spark type ``type_name`` (as
    Spark's ``simpleString`` names it)? See :data:`BLOOM_FILTER_TYPES`."""
    return type_name in BLOOM_FILTER_TYPES or (
        type_name.startswith("decimal(") and type_name.endswith(")")
    )


# What ``bloom_filters=`` takes: column names (at the default rate), names mapped to
# false-positive rates, or BloomColumn values.
BloomFilters: TypeAlias = Sequence[str | BloomColumn] | Mapping[str, float]


def bloom_columns(value: object) -> tuple[BloomColumn, ...]:
    """``bloom_filters=`` as given (column names, a mapping of names to false-positive rates,
    or :class:`BloomColumn` values) as the spec holds them; InvalidArgumentError for anything
    else, or a column named twice."""
    if isinstance(value, str):
        value = [value]
    if isinstance(value, Mapping):
        items = [BloomColumn(str(k), v) for k, v in value.items()]
    elif isinstance(value, Sequence):
        items = [v if isinstance(v, BloomColumn) else BloomColumn(v) for v in value]
    else:
        raise InvalidArgumentError(
            "bloom_filters takes a list of column names (or a mapping of column names to "
            f"false-positive rates, such as {{'session_id': 0.01}}), got {value!r}"
        )
    seen: dict[str, str] = {}
    for item in items:
        folded = item.column.lower()  # Spark matches column names regardless of case
        if folded in seen:
            raise InvalidArgumentError(
                f"bloom_filters names the column {item.column!r} twice "
                f"(also as {seen[folded]!r}); name each column once"
            )
        seen[folded] = item.column
    # In one order, so that the same filters listed otherwise are the same spec.
    return tuple(sorted(items, key=lambda b: (b.column.lower(), b.column)))


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
    :func:`zorder.advise` chooses them. ``bloom_filters`` name columns (any
    curve) whose files carry Parquet bloom filters, for lookups the curve
    cannot serve (an id it does not cluster by).
    """

    columns: tuple[str, ...]
    curve: Curve
    method: KeyMethod
    weights: tuple[float, ...] | None = None
    cuts: CutTree | None = None
    bloom_filters: tuple[BloomColumn, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "bloom_filters", bloom_columns(self.bloom_filters))
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
        if self.bloom_filters:  # files without the filters are then another spec's
            shape["bloom"] = {b.column: b.fpp for b in self.bloom_filters}
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
        if self.bloom_filters:
            named = ", ".join(b.describe() for b in self.bloom_filters)
            parts.append(f"bloom filters on {named}")
        return tuple(parts)

    def __repr__(self) -> str:
        """One line: the cuts, which may be thousands of values from a workload's literals,
        are counted, not listed (``to_json``-style forms keep them)."""
        extra = f", weights={self.weights!r}" if self.weights is not None else ""
        if self.cuts is not None:
            extra += f", cuts=<{self.cuts.cut_count} workload cuts>"
        if self.bloom_filters:
            extra += f", bloom_filters={self.bloom_filters!r}"
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
        if self.method != "rank":  # direct keys take neither weights nor cuts
            text += f" [{self.method} keys]"
        return text + "".join(f", {part}" for part in parts)


def rows_per_row_group(rows_per_file: int | None, file_bytes: int | None) -> int | None:
    """The rows of one of a file's row groups: Parquet's writer cuts a row group at about
    128 MiB (``parquet.block.size``), and a bloom filter is per row group; ``file_bytes``
    None: a file's size is not known (one row group assumed)."""
    if not rows_per_file or file_bytes is None or file_bytes <= PARQUET_ROW_GROUP_BYTES:
        return rows_per_file
    return max(1, math.ceil(rows_per_file * PARQUET_ROW_GROUP_BYTES / file_bytes))
