"""The CLI on a table named in a persistent catalog: a Hive metastore, given with ``--conf``.

A pipeline (a process of its own, with Delta Spark) creates ``db.events`` in
a Hive metastore kept in Derby under the test's directory; then ``zorder
optimize db.events``, ``zorder describe db.events`` and ``zorder query`` run
as separate commands, each finding the table through the same metastore. An
in-memory catalog would forget the name with the session that made it.
Derby's embedded metastore admits one JVM at a time, as each step here uses.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pyspark
import pytest
from deltalake import DeltaTable

from tests import delta_spark
from tests.test_cli_process import zorder_command

pytestmark = pytest.mark.spark


def _catalog_conf(root: Path) -> dict[str, str]:
    conf, coordinate, reason = delta_spark.session_conf(pyspark.__version__)
    if coordinate is None:
        pytest.skip(f"needs Delta Spark: {reason}")
    return {
        **conf,
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": str(root / "warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={root / 'metastore'};create=true"
        ),
        "spark.hadoop.hive.metastore.schema.verification": "false",
        "spark.hadoop.datanucleus.schema.autoCreateAll": "true",
    }


PIPELINE = """
import sys, json
from zorder.spark import local_session
conf = json.loads(sys.argv[1])
spark = local_session(master="local[2]", app_name="pipeline", conf=conf)
spark.sql("CREATE DATABASE db")
spark.sql("CREATE TABLE db.events (id BIGINT, a INT, b INT) USING delta")
for start in (0, 1000, 2000):
    spark.sql(
        "INSERT INTO db.events SELECT id, CAST(pmod(id * 7919, 1000) AS INT), "
        f"CAST(pmod(id * 104729, 1000) AS INT) FROM range({start}, {start + 1000})"
    )
print(spark.sql("DESCRIBE DETAIL db.events").collect()[0]["location"])
spark.stop()
"""


def _rows() -> Counter[tuple[Any, ...]]:
    return Counter((i, (i * 7919) % 1000, (i * 104729) % 1000) for i in range(3000))


def test_the_cli_finds_a_name_in_a_hive_metastore_given_with_conf(tmp_path: Path) -> None:
    conf = _catalog_conf(tmp_path)
    made = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PIPELINE), json.dumps(conf)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).parents[2],
    )
    assert made.returncode == 0, made.stderr[-3000:]
    location = made.stdout.strip().splitlines()[-1].removeprefix("file:")
    flags = [item for key, value in conf.items() for item in ("--conf", f"{key}={value}")]

    optimized = zorder_command(
        "optimize", "db.events", "--by", "a,b", "--num-files", "3", *flags, "--json"
    )
    assert optimized.returncode == 0, optimized.stderr[-3000:]
    assert json.loads(optimized.stdout)["files_added"] == 3

    table = DeltaTable(location)
    files = table.file_uris()
    assert len(files) == 3
    assert all("/zorder-" in f for f in files)  # zorder's run, at the catalog's location
    got = table.to_pyarrow_table()
    rows = Counter(zip(*(got.column(c).to_pylist() for c in ("id", "a", "b")), strict=True))
    assert rows == _rows()

    described = zorder_command("describe", "db.events", *flags, "--json")
    assert described.returncode == 0, described.stderr[-3000:]
    assert json.loads(described.stdout)["spec"]["columns"] == ["a", "b"]

    queried = zorder_command("query", "db.events", "--where", "a = 7", *flags, "--explain")
    assert queried.returncode == 0, queried.stderr[-3000:]
    assert " of 3 files" in queried.stdout  # the catalog table's three files, skipped on
    # A name the catalog lacks: tests/spark/test_table_names.py (no JVM launch of its own).
