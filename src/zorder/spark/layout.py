"""The layout transform: key -> range repartition -> sort within each file."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from zorder.spark.keys import (
    CURVES,
    DEFAULT_SAMPLE_SEED,
    DEFAULT_SAMPLE_SIZE,
    KEY_METHODS,
    ClusteringColumn,
    Curve,
    KeyMethod,
    bits_per_column,
    direct_key,
    rank_boundaries,
    rank_key,
    resolve_clustering_columns,
)

__all__ = ["ClusteringPlan", "cluster", "plan_clustering"]


@dataclass(frozen=True)
class ClusteringPlan:
    """What clustering a DataFrame means, checked before any job runs."""

    columns: tuple[ClusteringColumn, ...]
    curve: Curve
    method: KeyMethod

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def sorts_plainly(self) -> bool:
        """One column, or the linear baseline: a plain lexicographic range sort."""
        return self.curve == "linear" or len(self.columns) == 1


def plan_clustering(
    df: DataFrame, by: Sequence[str], *, curve: str = "zorder", method: str = "rank"
) -> ClusteringPlan:
    """Validate the clustering request against ``df`` (raises ValueError)."""
    if curve not in CURVES:
        raise ValueError(f"unknown curve {curve!r}; accepted: {', '.join(CURVES)}")
    if method not in KEY_METHODS:
        raise ValueError(f"unknown key method {method!r}; accepted: {', '.join(KEY_METHODS)}")
    columns = resolve_clustering_columns(df, by)
    plan = ClusteringPlan(tuple(columns), curve, method)  # type: ignore[arg-type]
    if not plan.sorts_plainly and method == "rank":
        bits_per_column(len(columns))  # raises on too many columns, warns on many
    return plan


def _key(df: DataFrame, plan: ClusteringPlan, sample_size: int, seed: int) -> Column:
    if plan.method == "direct":
        return direct_key(plan.columns, curve=plan.curve)
    bits = bits_per_column(len(plan.columns))
    boundaries = rank_boundaries(df, plan.columns, bits=bits, sample_size=sample_size, seed=seed)
    return rank_key(plan.columns, boundaries, curve=plan.curve, bits=bits)


def cluster(
    df: DataFrame,
    plan: ClusteringPlan,
    *,
    num_files: int,
    sample_size: int = DEFAULT_SAMPLE_SIZE,
    seed: int = DEFAULT_SAMPLE_SEED,
) -> DataFrame:
    """``df`` laid out in ``num_files`` range partitions, each sorted along the curve.

    Writing the result gives one file per non-empty partition. The key column
    is dropped again, so the result has ``df``'s schema.
    """
    if num_files < 1:
        raise ValueError(f"num_files must be >= 1, got {num_files}")
    if plan.sorts_plainly:
        order = [F.col(f"`{name}`").asc_nulls_first() for name in plan.names]
        return df.repartitionByRange(num_files, *order).sortWithinPartitions(*order)
    key_name = f"__zorder_key_{uuid.uuid4().hex}"
    keyed = df.withColumn(key_name, _key(df, plan, sample_size, seed))
    return (
        keyed.repartitionByRange(num_files, F.col(key_name))
        .sortWithinPartitions(F.col(key_name))
        .drop(key_name)
    )
