"""Input for a clustering write: Parquet, CSV or a Delta table, read by Spark."""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession

from zorder.api.modes import INPUT_FORMATS, InputFormat
from zorder.api.table import Table
from zorder.errors import InvalidArgumentError, SourceNotFoundError
from zorder.spark.storage import spark_path

__all__ = ["INPUT_FORMATS", "InputFormat", "read_input"]


def read_input(
    spark: SparkSession,
    path: str,
    *,
    format: InputFormat = "parquet",
    storage_options: Mapping[str, str] | None = None,
) -> DataFrame:
    """The rows at ``path``: Parquet files, CSV files with a header, or a Delta table's snapshot.

    CSV columns take the types Spark infers. A missing path raises
    :class:`~zorder.errors.SourceNotFoundError` before anything runs.
    """
    if format not in INPUT_FORMATS:
        raise InvalidArgumentError(
            f"unknown input format {format!r}; accepted: {', '.join(INPUT_FORMATS)}"
        )
    if format == "delta":
        return Table(path, storage_options=storage_options, spark=spark).read()
    location = spark_path(spark, path)
    try:
        if format == "csv":
            return spark.read.option("header", True).option("inferSchema", True).csv(location)
        return spark.read.parquet(location)
    except AnalysisException as error:
        if "PATH_NOT_FOUND" in str(error.getCondition() or error):
            raise SourceNotFoundError(f"no {format} input at {path}") from None
        raise
