"""Input for a clustering write: Parquet, CSV or a Delta table; what it holds is found
without Spark, and :func:`read_input` reads it with Spark (pyspark loads only then)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from zorder.api.context import Context, table_storage
from zorder.api.scanning import plan_scan
from zorder.columns import resolve_columns
from zorder.errors import InvalidArgumentError, SourceNotFoundError, ZorderError
from zorder.plan.modes import INPUT_FORMATS, InputFormat
from zorder.table import is_delta_table, load_snapshot

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "INPUT_FORMATS",
    "InputFormat",
    "check_input_columns",
    "check_input_exists",
    "input_format",
    "read_input",
]

_CSV_SUFFIXES = (".csv", ".csv.gz", ".tsv")


def input_format(path: str, storage_options: Mapping[str, str] | None = None) -> InputFormat:
    """What ``path`` holds: a Delta table (its ``_delta_log``), CSV (a ``.csv`` file, or a
    directory of them), else Parquet."""
    if str(path).lower().endswith(_CSV_SUFFIXES):
        return "csv"
    try:
        storage = table_storage(path, storage_options, None)
        if is_delta_table(storage):
            return "delta"
        filesystem, root = storage.filesystem()
        import pyarrow.fs as pafs

        if filesystem.get_file_info(root).type != pafs.FileType.Directory:
            return "parquet"
        listed = filesystem.get_file_info(pafs.FileSelector(root, recursive=False))
    except (OSError, ZorderError):
        return "parquet"  # unreachable here: the read says why
    data = [f.path.lower() for f in listed if not f.base_name.startswith(("_", "."))]
    if data and all(name.endswith(_CSV_SUFFIXES) for name in data):
        return "csv"
    return "parquet"


def read_input(
    spark: SparkSession,
    path: str,
    *,
    format: InputFormat | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> DataFrame:
    """The rows at ``path``: Parquet files, CSV files with a header, or a Delta table's snapshot.

    ``format`` None reads what :func:`input_format` finds there. CSV columns take
    the types Spark infers. A missing path raises
    :class:`~zorder.errors.SourceNotFoundError` before anything runs; files that
    are not of the format, :class:`~zorder.errors.InvalidArgumentError` naming it.
    """
    if format is None:
        format = input_format(path, storage_options)
    if format not in INPUT_FORMATS:
        raise InvalidArgumentError(
            f"unknown input format {format!r}; accepted: {', '.join(INPUT_FORMATS)}"
        )
    # Spark's errors load with Spark: an input read in process loads none of them.
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import AnalysisException, PySparkException

    from zorder.spark.storage import spark_path

    if format == "delta":  # as Table(path, spark=spark).read() reads it
        context = Context.of_session(spark).at(path, storage_options)
        snapshot = load_snapshot(context.table_storage, time_zone=context.time_zone)
        return plan_scan(snapshot, None, context).to_spark(spark)
    location = spark_path(spark, path)
    try:
        if format == "csv":
            return spark.read.option("header", True).option("inferSchema", True).csv(location)
        return spark.read.parquet(location)
    except AnalysisException as error:
        if "PATH_NOT_FOUND" in str(error.getCondition() or error):
            raise SourceNotFoundError(f"no {format} input at {path}") from None
        raise
    except (PySparkException, Py4JJavaError) as error:
        # Spark reads the footers to learn the schema: a file that is not Parquet fails here.
        if format == "parquet" and "CANNOT_READ_FILE_FOOTER" in str(error):
            raise InvalidArgumentError(
                f"{path} holds files that are not Parquet (Spark cannot read their footers); "
                "give its format: format='csv' or 'delta' (CLI: --format csv|delta)"
            ) from None
        raise


def check_input_exists(path: str, storage_options: Mapping[str, str] | None = None) -> None:
    """Refuse an input ``path`` that its filesystem says does not exist, without Spark (a path
    this process cannot reach is left to Spark, which reads it its own way)."""
    import pyarrow.fs as pafs

    try:
        filesystem, root = table_storage(path, storage_options, None).filesystem()
        found = filesystem.get_file_info(root).type
    except (OSError, ZorderError):
        return
    if found == pafs.FileType.NotFound:
        raise SourceNotFoundError(f"no input at {path}: nothing exists there")


def check_input_columns(
    path: str,
    columns: Sequence[str],
    *,
    format: InputFormat | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> None:
    """Refuse clustering ``columns`` the input at ``path`` lacks, as :func:`zorder.write`
    would, when its column names can be read without Spark (Parquet footers, a CSV
    header, a Delta log); where they cannot, the write itself says so later."""
    names = _input_columns(path, format or input_format(path, storage_options), storage_options)
    if names is not None:
        resolve_columns(columns, names, kind="clustering column")


def _input_columns(
    path: str, format: InputFormat, storage_options: Mapping[str, str] | None
) -> list[str] | None:
    import pyarrow.dataset as pads

    try:
        if format == "delta":
            snapshot = load_snapshot(table_storage(path, storage_options, None))
            return list(snapshot.schema.column_types)
        storage = table_storage(path, storage_options, None)
        filesystem, root = storage.filesystem()
        if format == "csv":
            found = pads.dataset(root, format="csv", filesystem=filesystem)
        else:
            found = pads.dataset(root, format="parquet", filesystem=filesystem, partitioning="hive")
        return list(found.schema.names)
    except (OSError, ValueError, ZorderError):
        return None  # not readable here: Spark reads it, and names what is wrong
