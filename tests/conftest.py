"""Shared fixtures: one local[2] SparkSession for the whole run, bound to loopback.

Every test under ``tests/spark/`` is marked ``spark``, so ``-m "not spark"``
(``make check``) runs the rest without starting a JVM.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile("check", max_examples=20, deadline=None)  # make check: the edit loop
settings.load_profile(
    os.environ.get("ZORDER_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)


_SPARK_TESTS = Path(__file__).parent / "spark"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _SPARK_TESTS in Path(item.path).parents:
            item.add_marker(pytest.mark.spark)


DELTA: dict[str, str | None] = {}  # what the run's session loaded: coordinate and reason


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """The run's session, built as users build theirs: with Delta Spark's jars, SQL extension
    and catalog (tests/delta_spark.py), except on a Spark line Delta has no release for."""
    import pyspark

    from tests import delta_spark
    from zorder.spark import local_session

    conf, coordinate, reason = delta_spark.session_conf(pyspark.__version__)
    DELTA.update(coordinate=coordinate, reason=reason)
    try:
        with delta_spark.resolving():
            session = local_session(
                app_name="zorder-tests",
                conf={
                    "spark.sql.shuffle.partitions": "4",
                    # The catalog's default database lives outside the checkout.
                    "spark.sql.warehouse.dir": tempfile.mkdtemp(prefix="zorder-warehouse-"),
                    **conf,
                },
            )
        if coordinate is not None:  # the extension is loaded when the first query plans
            session.sql("SELECT 1").collect()
    except Exception as error:
        if coordinate is None:
            raise
        pytest.exit(
            f"Delta Spark's jars ({coordinate}) could not be had from Maven Central through "
            f"spark.jars.packages (Ivy cache {delta_spark.ivy_home()}): {error}. The tests use "
            "Delta Spark as their reference reader and writer; ZORDER_TEST_DELTA=none runs "
            "without it (its tests then skip).",
            returncode=3,
        )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def delta(spark: Any) -> Any:
    """The run's session, where it has Delta Spark; else the test skips, saying why."""
    if DELTA.get("coordinate") is None:
        pytest.skip(f"needs Delta Spark: {DELTA.get('reason')}")
    return spark


@pytest.fixture
def ansi_on(spark: Any) -> Iterator[None]:
    """The shared session with ANSI mode on for one test, whatever its default (off on 3.5)."""
    previous = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", "true")
    try:
        yield
    finally:
        spark.conf.set("spark.sql.ansi.enabled", previous)


@pytest.fixture(scope="session")
def kernel() -> Iterator[object]:
    """A DuckDB connection with the Delta extension (the Delta kernel's reader), loaded offline."""
    import duckdb

    from tests.spark.helpers import connect_kernel

    extension = metadata.version("duckdb-extension-delta")
    if duckdb.__version__ != extension:  # `make compat-duckdb` runs a newer DuckDB than dev's
        pytest.skip(f"the delta extension {extension} loads only into DuckDB {extension}")
    connection = connect_kernel()
    yield connection
    connection.close()


@dataclass(frozen=True)
class S3Server:
    """A local S3-compatible server (moto's server mode) on 127.0.0.1."""

    endpoint: str

    def options(self) -> dict[str, str]:
        """deltalake's storage options for it: nothing comes from the environment."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": "zorder-test-key",
            "AWS_SECRET_ACCESS_KEY": "zorder-test-secret",
            "AWS_REGION": "us-east-1",
            "AWS_ALLOW_HTTP": "true",
        }

    def new_bucket(self) -> str:
        import boto3

        name = f"zorder-{uuid.uuid4().hex[:12]}"
        options = self.options()
        boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=options["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=options["AWS_SECRET_ACCESS_KEY"],
            region_name=options["AWS_REGION"],
        ).create_bucket(Bucket=name)
        return name


@contextlib.contextmanager
def moto_s3(cwd: Path | None = None, env: dict[str, str] | None = None) -> Iterator[S3Server]:
    """moto's S3 server in a process of its own, bound to loopback, until the block ends."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=cwd,
        env=env,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("moto's S3 server did not start") from None
                time.sleep(0.1)
        yield S3Server(f"http://127.0.0.1:{port}")
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """moto's S3 server in a process of its own, bound to loopback, for the whole run."""
    with moto_s3() as server:
        yield server


@pytest.fixture
def no_cloud_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No AWS, Azure or Google setting from the environment: only what a test passes counts."""
    for name in list(os.environ):
        if name.startswith(("AWS_", "AZURE_", "GOOGLE_")):
            monkeypatch.delenv(name)


@dataclass
class LogReads:
    """How often zorder read a table's log through deltalake: every ``DeltaTable`` opened,
    updated, reloaded at a version, asked whether it is a table, or asked its history."""

    count: int = 0
    calls: list[str] = field(default_factory=list)

    def read(self, what: str) -> None:
        self.count += 1
        self.calls.append(what)


@pytest.fixture
def log_reads(monkeypatch: pytest.MonkeyPatch) -> LogReads:
    """Counts zorder's reads of Delta logs (see :class:`LogReads`) while the test runs."""
    from deltalake import DeltaTable

    import zorder.table.delta.snapshot
    import zorder.table.delta.versions

    reads = LogReads()

    class Counted(DeltaTable):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            reads.read("open")
            super().__init__(*args, **kwargs)

        def update_incremental(self) -> None:
            reads.read("update_incremental")
            super().update_incremental()

        def load_as_version(self, version: Any) -> None:
            reads.read("load_as_version")
            super().load_as_version(version)

        def history(self, limit: int | None = None) -> list[dict[str, Any]]:
            reads.read("history")
            return list(super().history(limit))

        @staticmethod
        def is_deltatable(*args: Any, **kwargs: Any) -> bool:
            reads.read("is_deltatable")
            return bool(DeltaTable.is_deltatable(*args, **kwargs))

    for module in (zorder.table.delta.versions, zorder.table.delta.snapshot):
        monkeypatch.setattr(module, "DeltaTable", Counted)
    return reads
