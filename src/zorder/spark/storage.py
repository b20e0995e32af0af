"""A Spark session's object-store settings, as deltalake's storage options; paths for Spark.

A PySpark user configures the store once, in the session's Hadoop
configuration (``spark.hadoop.fs.s3a.endpoint``, ...). zorder reads the log
with deltalake and files with pyarrow, outside the JVM: they get the same
settings, mapped by :func:`zorder.table.options_from_hadoop`. Explicit
``storage_options`` win, setting by setting.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from urllib.parse import urlparse

from pyspark.sql import SparkSession

from zorder.spark.progress import is_connect
from zorder.table.storage import Storage, merge_options, options_from_hadoop

__all__ = ["hadoop_settings", "session_storage_options", "spark_path", "spark_paths", "unescaped"]

_log = logging.getLogger(__name__)

# The Hadoop settings that say how to reach an object store.
_STORE_SETTINGS = r"^(fs\.s3a\.|fs\.s3\.impl|fs\.azure\.|fs\.gs\.|google\.cloud\.)"


def hadoop_settings(spark: SparkSession) -> dict[str, str]:
    """The session's object-store settings: its Hadoop configuration (classic sessions),
    overridden by ``spark.hadoop.*`` keys of its SQL configuration, prefix removed."""
    settings: dict[str, str] = {}
    if not is_connect(spark):
        try:
            found = spark.sparkContext._jsc.hadoopConfiguration().getValByRegex(_STORE_SETTINGS)
            settings.update({str(k): str(v) for k, v in found.items()})
        except Exception as error:  # a session without a reachable JVM context
            _log.info("no Hadoop configuration from the session (%s)", error)
    try:
        conf = spark.conf.getAll
    except Exception as error:  # older servers
        _log.info("no SQL configuration listing from the session (%s)", error)
        conf = {}
    for key, value in conf.items():
        if key.startswith("spark.hadoop.") and value is not None:
            settings[key.removeprefix("spark.hadoop.")] = str(value)
    return settings


def session_storage_options(
    spark: SparkSession, uri: str, storage_options: Mapping[str, str] | None
) -> dict[str, str]:
    """deltalake's options for ``uri``: the session's settings, then ``storage_options``."""
    if not Storage.of(uri).scheme:  # a local path: nothing of the session's applies
        return dict(storage_options or {})
    return merge_options(options_from_hadoop(hadoop_settings(spark), uri), storage_options)


def spark_paths(spark: SparkSession, uris: Sequence[str]) -> list[str]:
    """Files' ``uris`` as the session's Hadoop filesystems name them, for Spark's readers: S3 as
    ``s3a://`` (hadoop-aws) unless the session maps ``s3://`` to a filesystem of its own (EMR's,
    Databricks'), and Hadoop's glob characters escaped.

    Spark's readers take every path as a glob pattern: ``t?x/f.parquet`` would also read
    ``tAx/f.parquet``, and ``{a,b}`` reads neither; a file's URI names one file.
    """
    return [_GLOB.sub(r"\\\g<0>", uri) for uri in _hadoop_schemes(spark, uris)]


def unescaped(path: str) -> str:
    """A path :func:`spark_paths` gave, with its glob escapes undone: the file it names."""
    return _ESCAPED.sub(r"\1", path)


def spark_path(spark: SparkSession, uri: str) -> str:
    """``uri`` as the session's Hadoop filesystems name it, as given otherwise: where Spark's
    writer writes (which takes it literally), or a user's input (a pattern if written as one)."""
    return _hadoop_schemes(spark, [uri])[0]


# The characters Hadoop's glob patterns give a meaning (GlobPattern), backslash included.
_GLOB = re.compile(r"[\\*?\[\]{}]")
_ESCAPED = re.compile(r"\\(.)", re.DOTALL)


def _hadoop_schemes(spark: SparkSession, uris: Sequence[str]) -> list[str]:
    if not any(urlparse(u).scheme.lower() == "s3" for u in uris):
        return list(uris)
    if hadoop_settings(spark).get("fs.s3.impl"):
        return list(uris)
    return [f"s3a{u[2:]}" if urlparse(u).scheme.lower() == "s3" else u for u in uris]
