"""A write's input given as a path (Parquet files, CSV files, a Delta table): checked
before anything runs, read by Spark, or described for the in-process engine, which
reads it as :mod:`zorder.arrow.sources` says (CSV, whose types Spark infers, is left to
Spark).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from zorder.api.context import Context, table_storage
from zorder.api.inputs import (
    check_input_columns,
    check_input_exists,
    input_format,
    read_input,
)
from zorder.arrow.sources import declined_input, input_read_here
from zorder.curves.kinds import ClusteringSpec
from zorder.errors import ZorderError
from zorder.plan.modes import InputFormat
from zorder.plan.runs import InProcessInput

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["WriteSource", "checked_source", "in_process_input", "read_source"]


@dataclass(frozen=True)
class WriteSource:
    """A write's input at ``path``: ``format`` None reads what is found there."""

    path: str
    format: InputFormat | None = None
    storage_options: Mapping[str, str] | None = None


def checked_source(source: WriteSource, by: Sequence[str] | ClusteringSpec | None) -> WriteSource:
    """``source`` refused, without Spark, where it is not there or lacks the clustering columns
    ``by`` names (when its columns can be read here); returned with its format found, so
    that what it holds is looked for once."""
    options = source.storage_options
    check_input_exists(source.path, options)
    found = source.format or input_format(source.path, options)
    columns = by.columns if isinstance(by, ClusteringSpec) else by
    if columns and not isinstance(columns, str):
        check_input_columns(source.path, list(columns), format=found, storage_options=options)
    return dataclasses.replace(source, format=found)


def read_source(spark: SparkSession, source: WriteSource) -> DataFrame:
    """``source``'s rows, read by Spark."""
    return read_input(
        spark, source.path, format=source.format, storage_options=source.storage_options
    )


def in_process_input(source: WriteSource, context: Context) -> InProcessInput:
    """How the in-process engine would read ``source`` (metadata only: footers, a log);
    a Delta input's timestamp partition values read in ``context``'s zone, as Spark's
    session would read them."""
    try:
        found = source.format or input_format(source.path, source.storage_options)
        if found == "csv":
            return declined_input("CSV input: Spark infers its columns' types")
        storage = table_storage(source.path, source.storage_options, None)
        return input_read_here(storage, found, time_zone=context.time_zone)
    except (OSError, pa.ArrowException, ZorderError) as error:
        return declined_input(f"its input is not readable here ({error})")
