"""A Spark session's object-store settings reach zorder's JVM-free paths (no hadoop-aws here).

Spark itself cannot read s3a:// without the hadoop-aws jars, which this
machine cannot install; what is tested is that the settings a PySpark user
already gave the session (``spark.hadoop.fs.s3a.*``) are all zorder needs for
the log and the files it reads outside the JVM, and that Spark is handed
``s3a://`` paths.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pyarrow.fs as pafs
import pytest
from deltalake import DeltaTable, write_deltalake
from pyspark.sql import SparkSession

import zorder
from tests.conftest import S3Server
from zorder.spark.storage import (
    hadoop_settings,
    session_storage_options,
    spark_path,
    spark_paths,
)
from zorder.table import Storage


@pytest.fixture
def s3a_session(
    spark: SparkSession, s3_server: S3Server, no_cloud_environment: None
) -> Iterator[SparkSession]:
    """The test session with the S3 server's settings as a PySpark user sets them."""
    options = s3_server.options()
    settings = {
        "spark.hadoop.fs.s3a.endpoint": s3_server.endpoint.removeprefix("http://"),
        "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.access.key": options["AWS_ACCESS_KEY_ID"],
        "spark.hadoop.fs.s3a.secret.key": options["AWS_SECRET_ACCESS_KEY"],
    }
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield spark
    finally:
        for key in settings:
            spark.conf.unset(key)


def test_session_settings_read_a_table_in_s3(
    s3a_session: SparkSession, s3_server: S3Server
) -> None:
    uri = f"s3://{s3_server.new_bucket()}/t"
    rows = pa.table({"x": list(range(50)), "y": [i % 7 for i in range(50)]})
    write_deltalake(uri, rows, storage_options=s3_server.options())
    same = uri.replace("s3://", "s3a://", 1)

    # Nothing but the session's settings: the active session's, or the one given.
    assert zorder.to_arrow(same, "y = 3").num_rows == 7
    assert zorder.explain(same, "x < 10", spark=s3a_session).rows_total == 50
    assert zorder.describe(same).version == 0
    assert zorder.vacuum(same).files == ()
    assert DeltaTable(uri, storage_options=s3_server.options()).version() == 0
    filesystem, root = Storage.of(uri, s3_server.options()).filesystem()
    with filesystem.open_output_stream(f"{root}/orphan.parquet") as out:
        out.write(b"no version references this")
    deleted = zorder.vacuum(same, retain_hours=0, force=True, dry_run=False)
    assert deleted.files == ("orphan.parquet",)
    assert filesystem.get_file_info(f"{root}/orphan.parquet").type == pafs.FileType.NotFound
    assert sorted(zorder.to_arrow(same)["x"].to_pylist()) == list(range(50))


def test_explicit_options_win_over_the_session(
    s3a_session: SparkSession, s3_server: S3Server
) -> None:
    mapped = session_storage_options(s3a_session, "s3a://b/t", None)
    assert mapped["aws_endpoint_url"] == s3_server.endpoint
    assert mapped["aws_virtual_hosted_style_request"] == "false"
    given = session_storage_options(s3a_session, "s3a://b/t", {"AWS_ACCESS_KEY_ID": "mine"})
    assert given["AWS_ACCESS_KEY_ID"] == "mine"
    assert "aws_access_key_id" not in given
    assert session_storage_options(s3a_session, "/local/t", None) == {}
    assert hadoop_settings(s3a_session)["fs.s3a.path.style.access"] == "true"


def test_spark_is_handed_s3a_paths(spark: SparkSession) -> None:
    assert spark_paths(spark, ["s3://b/t/f.parquet", "/local/f.parquet"]) == [
        "s3a://b/t/f.parquet",
        "/local/f.parquet",
    ]
    spark.conf.set("spark.hadoop.fs.s3.impl", "com.example.EmrLikeFileSystem")
    try:
        assert spark_paths(spark, ["s3://b/t/f.parquet"]) == ["s3://b/t/f.parquet"]
    finally:
        spark.conf.unset("spark.hadoop.fs.s3.impl")


def test_spark_reads_files_by_escaped_paths_and_writes_where_it_is_told(
    spark: SparkSession,
) -> None:
    # Spark's readers glob every path; a file's URI must name that file only.
    assert spark_paths(spark, ["/t/q?x/f.parquet", "s3://b/a*{1,2}[x]\\/f"]) == [
        "/t/q\\?x/f.parquet",
        "s3a://b/a\\*\\{1,2\\}\\[x\\]\\\\/f",
    ]
    # Writers take a path literally, and a user's input may be a pattern.
    assert spark_path(spark, "/t/q?x/run") == "/t/q?x/run"
    assert spark_path(spark, "s3://b/in/*.parquet") == "s3a://b/in/*.parquet"


def test_a_session_that_sets_nothing_adds_nothing(spark: SparkSession) -> None:
    """Hadoop's own defaults (core-default.xml: path style off, SSL on) are listed by the
    session's configuration too; they must not override what a user gives zorder."""
    assert hadoop_settings(spark).get("fs.s3a.path.style.access") in (None, "false")
    assert session_storage_options(spark, "s3://b/t", None) == {}
    given = {"AWS_ENDPOINT_URL": "http://127.0.0.1:9000"}
    assert session_storage_options(spark, "s3://b/t", given) == given
