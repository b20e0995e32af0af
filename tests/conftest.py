"""Shared fixtures: one local[2] SparkSession for the whole run, bound to loopback.

Every test under ``tests/spark/`` is marked ``spark``, so ``-m "not spark"``
(``make check``) runs the rest without starting a JVM.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

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


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    from zorder.spark import local_session

    session = local_session(app_name="zorder-tests", conf={"spark.sql.shuffle.partitions": "4"})
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def kernel() -> Iterator[object]:
    """A DuckDB connection with the Delta extension (the Delta kernel's reader), loaded offline."""
    import pathlib

    import duckdb
    import duckdb_extension_delta

    connection = duckdb.connect()
    package = pathlib.Path(duckdb_extension_delta.__file__).parent
    connection.load_extension(str(next(package.glob("extensions/*/delta.duckdb_extension"))))
    yield connection
    connection.close()
