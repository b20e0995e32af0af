"""What differs between the Spark lines zorder supports: pyspark 3.5 through 4.x.

One wheel serves every line, so the few PySpark calls that a line lacks are
made here and nowhere else: Arrow in and out of a DataFrame (``toArrow`` and
``createDataFrame`` of an Arrow table arrived in 4.0), Arrow UDFs (4.1) and
the version a feature needs. Everything else zorder calls exists on 3.5.
A call a line cannot make raises :class:`~zorder.errors.SparkVersionError`
naming the version that has it, never an ``ImportError``.

Spark 3.5 is a maintenance line whose private Arrow helpers
(``DataFrame._collect_as_arrow``, ``SparkContext._serialize_to_jvm``,
``PythonSQLUtils.toDataFrame``) no longer change; they are used on 3.x only,
the same way 3.5's own ``toPandas`` and ``createDataFrame`` use them.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyspark
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import DataType, StructType

from zorder.errors import SparkVersionError
from zorder.spark.progress import is_connect

__all__ = [
    "ARROW_UDF_SPARK",
    "PYSPARK_VERSION",
    "TYPE_WIDENING_SPARK",
    "arrow_frame",
    "arrow_schema",
    "arrow_udf",
    "collect_arrow",
    "hash_preimages",
    "hash_repartition_by_id",
    "metadata_column",
    "repartition_by_id",
    "require_pyspark",
    "spark_version",
    "version_tuple",
]

ARROW_UDF_SPARK = (4, 1)  # pyspark.sql.pandas.functions.arrow_udf
TYPE_WIDENING_SPARK = (4, 0)  # Parquet's narrower types read as a wider column's


def version_tuple(text: str) -> tuple[int, int]:
    """``(major, minor)`` of a Spark version string.

    >>> version_tuple("3.5.9"), version_tuple("4.1.0.dev0"), version_tuple("4.3.0-SNAPSHOT")
    ((3, 5), (4, 1), (4, 3))
    """
    found = re.match(r"(\d+)\.(\d+)", text)
    if found is None:
        raise SparkVersionError(f"cannot read a Spark version from {text!r}")
    return int(found.group(1)), int(found.group(2))


PYSPARK_VERSION = version_tuple(pyspark.__version__)


def spark_version(spark: SparkSession) -> tuple[int, int]:
    """The version of the Spark behind ``spark`` (a Connect server may differ from the client)."""
    return version_tuple(spark.version)


def require_pyspark(minimum: tuple[int, int], what: str) -> None:
    """Refuse ``what`` by name where the installed pyspark is older than ``minimum``."""
    if minimum > PYSPARK_VERSION:
        needed = ".".join(map(str, minimum))
        raise SparkVersionError(
            f"{what} needs pyspark {needed} or newer; this is pyspark {pyspark.__version__}"
        )


def _refuse_old_connect(spark: SparkSession, what: str) -> None:
    """Spark Connect before 4.0 has none of the JVM helpers the 3.5 forms below use (and its
    server jar is not in the pyspark 3.5 wheel, so zorder cannot test it): refused by name."""
    if is_connect(spark):
        raise SparkVersionError(
            f"{what} through Spark Connect needs pyspark 4.0 or newer; this is pyspark "
            f"{pyspark.__version__} (a classic session works)"
        )


def arrow_schema(schema: StructType) -> pa.Schema:
    """Spark's Arrow types for ``schema``, timestamps in UTC as ``toArrow`` gives them
    (``to_arrow_schema`` takes the zone as ``timezone`` from pyspark 4.3 on, and asserts
    one is given; before, it wrote UTC itself)."""
    if "timezone" in inspect.signature(to_arrow_schema).parameters:
        return to_arrow_schema(schema, timezone="UTC")  # type: ignore[call-arg,unused-ignore]
    return to_arrow_schema(schema)


def collect_arrow(df: DataFrame) -> pa.Table:
    """``df``'s rows on the driver as an Arrow table with Spark's Arrow types (``toArrow``)."""
    if PYSPARK_VERSION >= (4, 0):
        return df.toArrow()
    _refuse_old_connect(df.sparkSession, "collecting rows as Arrow")
    schema = arrow_schema(df.schema)
    frame: Any = df  # a private method of 3.5's, which its type hints do not show
    batches = frame._collect_as_arrow()
    return pa.Table.from_batches(batches, schema=schema) if batches else schema.empty_table()


def arrow_frame(
    spark: SparkSession, table: pa.Table, schema: StructType | None = None
) -> DataFrame:
    """A DataFrame of ``table``'s rows with ``schema``, made in the JVM from Arrow batches:
    no Python worker reads them, so executors need no Python for it. ``schema`` defaults to
    the Spark types of ``table``'s Arrow types."""
    if schema is None:
        schema = from_arrow_schema(table.schema)
    if PYSPARK_VERSION >= (4, 0):
        return spark.createDataFrame(table, schema)
    _refuse_old_connect(spark, "a DataFrame made from Arrow")
    from pyspark.sql.pandas.serializers import ArrowStreamSerializer

    table = table.cast(arrow_schema(schema))
    batches = table.to_batches() or [pa.RecordBatch.from_pylist([], schema=table.schema)]
    jvm: Any = spark._jvm
    jiter = spark.sparkContext._serialize_to_jvm(
        batches,
        ArrowStreamSerializer(),
        lambda name: jvm.PythonSQLUtils.readArrowStreamFromFile(name),
        lambda: jvm.ArrowIteratorServer(),
    )
    frame = jvm.PythonSQLUtils.toDataFrame(jiter, schema.json(), spark._jsparkSession)
    return DataFrame(frame, spark)


def arrow_udf(
    function: Callable[..., pa.Array], return_type: DataType, *, what: str
) -> Callable[..., Column]:
    """A scalar Arrow UDF of ``function`` (pyspark 4.1's ``arrow_udf``); ``what`` names the
    zorder feature that needs it, for the error on older lines."""
    require_pyspark(ARROW_UDF_SPARK, what)
    import warnings

    from pyspark.sql.pandas.functions import ArrowUDFType
    from pyspark.sql.pandas.functions import arrow_udf as make

    with warnings.catch_warnings():
        # Spark prefers type hints; the variadic key functions cannot state their arity.
        warnings.simplefilter("ignore", UserWarning)
        udf: Callable[..., Column] = make(function, return_type, ArrowUDFType.SCALAR)
    return udf


def metadata_column(df: DataFrame, name: str = "_metadata") -> Column:
    """The file-source metadata column ``name`` of ``df``, found even where a data column
    has the same name (pyspark 4.0's ``metadataColumn``; on 3.5 the JVM's own, since 3.5)."""
    if PYSPARK_VERSION >= (4, 0):
        return df.metadataColumn(name)
    _refuse_old_connect(df.sparkSession, f"the file metadata column {name!r}")
    frame: Any = df
    return Column(frame._jdf.metadataColumn(name))


def repartition_by_id(df: DataFrame, count: int, partition: Column) -> DataFrame:
    """``df`` in ``count`` partitions, each row in the one numbered ``partition`` (an int in
    ``[0, count)``): pyspark 4.1's ``repartitionById``.

    Before 4.1 the same shuffle is a hash repartition on a stand-in value: Spark sends an int
    ``v`` to partition ``pmod(murmur3(v, 42), count)``, so each partition number is replaced
    by an int that hashes to it (:func:`hash_preimages`), looked up in a literal array.
    The explicit partition count keeps adaptive execution from coalescing them.
    """
    if PYSPARK_VERSION >= (4, 1):
        return df.repartitionById(count, partition)
    return hash_repartition_by_id(df, count, partition)


def hash_repartition_by_id(df: DataFrame, count: int, partition: Column) -> DataFrame:
    """:func:`repartition_by_id` as a hash repartition, the form used before pyspark 4.1."""
    preimages = F.array(*[F.lit(int(v)) for v in hash_preimages(count)])
    return df.repartition(count, F.element_at(preimages, partition.cast("int") + 1))


def _murmur3_ints(values: npt.NDArray[np.uint32], seed: int = 42) -> npt.NDArray[np.int32]:
    """Spark's ``Murmur3_x86_32.hashInt`` of each value (wrapping 32-bit arithmetic)."""

    def rotl(x: npt.NDArray[np.uint32], r: int) -> npt.NDArray[np.uint32]:
        return (x << np.uint32(r)) | (x >> np.uint32(32 - r))

    with np.errstate(over="ignore"):
        k1 = rotl(values * np.uint32(0xCC9E2D51), 15) * np.uint32(0x1B873593)
        h1 = np.full_like(values, seed) ^ k1
        h1 = rotl(h1, 13) * np.uint32(5) + np.uint32(0xE6546B64)
        h1 ^= np.uint32(4)
        h1 ^= h1 >> np.uint32(16)
        h1 *= np.uint32(0x85EBCA6B)
        h1 ^= h1 >> np.uint32(13)
        h1 *= np.uint32(0xC2B2AE35)
        h1 ^= h1 >> np.uint32(16)
    return h1.view(np.int32)


def hash_preimages(count: int) -> npt.NDArray[np.int32]:
    """For each partition ``p < count``, the smallest int ``v >= 0`` that Spark's hash
    partitioning into ``count`` partitions sends to ``p``.

    >>> hash_preimages(4).tolist()
    [12, 6, 2, 0]
    """
    found = np.full(count, -1, dtype=np.int64)
    start, width = 0, max(64, 4 * count)
    while (found < 0).any():
        candidates = np.arange(start, start + width, dtype=np.int64)
        buckets = np.mod(_murmur3_ints(candidates.astype(np.uint32)).astype(np.int64), count)
        # The first candidate of each bucket not yet found.
        order = np.argsort(buckets, kind="stable")
        first = np.unique(buckets[order], return_index=True)
        for bucket, index in zip(first[0], first[1], strict=True):
            if found[bucket] < 0:
                found[bucket] = candidates[order[index]]
        start += width
    return found.astype(np.int32)
