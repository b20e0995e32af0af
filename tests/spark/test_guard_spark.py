"""Filters that reach outside the row are refused on the Spark path before Spark runs them.

Each attack is first shown to work when its text is handed to Spark as is
(the control), then refused through ``zorder.read``, ``zorder query --spark``
and ``zorder.optimize(where=)``, with what it would have done not done.
"""

from __future__ import annotations

import importlib.util
import time
import uuid
from pathlib import Path
from types import ModuleType

import pyarrow as pa
import pytest
from deltalake import write_deltalake
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from typer.testing import CliRunner

import zorder
from zorder.cli import app
from zorder.plan.modes import Engine
from zorder.skipping import spark_functions
from zorder.spark.compat import version_tuple
from zorder.spark.guard import check_spark_parse

pytestmark = pytest.mark.spark
runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def table(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("guard") / "t")
    frame = spark.range(200).select("id", (F.col("id") % 7).alias("m"))
    zorder.write(frame, path, by=["id"], num_files=4)
    return path


def _property(spark: SparkSession, name: str) -> str | None:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    value = jvm.java.lang.System.getProperty(name)
    return None if value is None else str(value)


def test_java_method_sets_nothing(spark: SparkSession, table: str) -> None:
    control, probe = f"zorder.guard.control.{uuid.uuid4().hex}", f"zorder.guard.{uuid.uuid4().hex}"
    attack = "java_method('java.lang.System', 'setProperty', '{}', 'set') IS NULL OR id >= 0"
    spark.range(1).where(F.expr(attack.format(control))).collect()
    assert _property(spark, control) == "set"  # the attack is real when Spark gets the text

    with pytest.raises(zorder.errors.ForbiddenFilterError, match="reflection function java_method"):
        zorder.read(spark, table, attack.format(probe)).collect()
    result = runner.invoke(
        app, ["query", table, "--where", attack.format(probe), "--spark", "--json"]
    )
    assert result.exit_code == 2, result.output
    assert "java_method" in result.output
    assert _property(spark, probe) is None


def test_reflect_sleeps_not_at_all(spark: SparkSession, table: str) -> None:
    attack = "reflect('java.lang.Thread', 'sleep', 3000L) IS NULL AND id = 1"
    started = time.monotonic()
    with pytest.raises(zorder.errors.ForbiddenFilterError, match="reflection function reflect"):
        zorder.read(spark, table, attack).collect()
    result = runner.invoke(app, ["query", table, "--where", attack, "--spark"])
    assert result.exit_code == 2, result.output
    assert "reflect" in result.output
    assert time.monotonic() - started < 3  # one sleep of 3 s would have exceeded it


def test_exists_over_a_text_source_reads_no_file(
    spark: SparkSession, table: str, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0\n")
    attack = f"EXISTS (SELECT 1 FROM text.`{secret}` WHERE value LIKE 'root%') AND id < 3"
    assert spark.range(5).where(F.expr(attack.replace("id < 3", "TRUE"))).count() == 5  # control

    with pytest.raises(zorder.errors.ForbiddenFilterError, match="EXISTS subquery"):
        zorder.read(spark, table, attack)
    result = runner.invoke(app, ["query", table, "--where", attack, "--spark"])
    assert result.exit_code == 2, result.output
    assert "EXISTS subquery" in result.output
    with pytest.raises(zorder.errors.ForbiddenFilterError):
        zorder.explain(table, attack)


@pytest.mark.parametrize("engine", ["spark", "arrow"])
def test_optimize_where_refuses_before_choosing_partitions(
    spark: SparkSession, tmp_path: Path, engine: Engine
) -> None:
    path = str(tmp_path / "p")
    write_deltalake(path, pa.table({"a": [1, 2], "day": ["x", "y"]}), partition_by=["day"])
    probe = f"zorder.guard.optimize.{uuid.uuid4().hex}"
    where = f"java_method('java.lang.System', 'setProperty', '{probe}', 'set') IS NULL"
    with pytest.raises(zorder.errors.ForbiddenFilterError, match="java_method"):
        zorder.optimize(spark, path, by=["a"], where=where, engine=engine)
    assert _property(spark, probe) is None


@pytest.mark.parametrize(
    ("text", "named"),
    [
        # Spark's parse alone, as zorder.read checks it after the first guard.
        ("EXISTS (SELECT 1 FROM range(1))", "subquery"),
        ("db.myudf(id) > 1", "qualified function name db.myudf"),
        ("reflect('a', 'b') IS NULL", "reflect"),
        ("IDENTIFIER('reflect')('a', 'b') IS NULL", "IDENTIFIER"),
        ("id = :p", "parameter marker"),
        ("exists(array(id), v -> rand() > v)", "rand"),
        ("myudf(id) > 1", "not a Spark built-in"),
    ],
)
def test_spark_parse_is_checked_too(spark: SparkSession, text: str, named: str) -> None:
    with pytest.raises(zorder.errors.ForbiddenFilterError, match="refused") as caught:
        check_spark_parse(spark, text)
    assert named in str(caught.value)


def test_spark_parse_passes_ordinary_filters(spark: SparkSession) -> None:
    for text in [
        "id = 1 AND m IN (1, 2)",
        "exists(array(id), v -> v > 1)",
        "`abs`(id) > 1 AND upper(cast(m AS STRING)) = '1'",
        # Spark continues a -- comment over backslash-newline; sqlglot ends it at the newline
        # and so refuses this (it sees more code than Spark: the safe way round).
        "id = 1 -- backslash continues Spark's comment \\\nOR rand() > 0",
        "CASE WHEN id > 1 THEN true ELSE false END",
    ]:
        check_spark_parse(spark, text)


def _generator() -> ModuleType:
    script = ROOT / "scripts" / "spark_functions.py"
    spec = importlib.util.spec_from_file_location("spark_functions_script", script)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_vendored_functions_match_the_running_spark(spark: SparkSession) -> None:
    # The lists are the development line's (make test); on another line (make compat) a
    # function they do not name is refused as unknown, and the generator reads catalog
    # internals that line may not have (4.3's registry wants qualified names).
    if version_tuple(spark.version) != version_tuple(spark_functions.SPARK_VERSION):
        pytest.skip(f"the vendored functions are Spark {spark_functions.SPARK_VERSION}'s")
    generator = _generator()
    assert spark.version == spark_functions.SPARK_VERSION, "run scripts/spark_functions.py again"
    found = generator.catalog(spark)
    for kind, names in found.items():
        vendored = getattr(spark_functions, kind)
        assert names == vendored, (kind, sorted(names ^ vendored))


def test_nondeterministic_is_sparks_own_notion(spark: SparkSession) -> None:
    # Resolved expressions' `deterministic`, independently of the generator's class checks.
    calls = {
        "rand()": False,
        "randn()": False,
        "random()": False,
        "uuid()": False,
        "shuffle(array(1, 2))": False,
        "monotonically_increasing_id()": False,
        "spark_partition_id()": False,
        "input_file_name()": False,
        "uniform(0, 10)": False,
        "reflect('java.lang.Math', 'abs', 1)": False,
        "current_user()": True,
        "current_timestamp()": True,
        "now()": True,
        "abs(1)": True,
        "transform(array(1), x -> x + 1)": True,
    }
    for call, deterministic in calls.items():
        frame = spark.range(1).selectExpr(f"{call} AS v")
        expression = frame._jdf.queryExecution().analyzed().expressions().head()
        assert bool(expression.deterministic()) is deterministic, call
        name = call.split("(")[0]
        assert (name in spark_functions.NONDETERMINISTIC | {"reflect"}) is not deterministic


def test_long_or_chain_and_deep_parentheses_read_end_to_end(
    spark: SparkSession, table: str
) -> None:
    terms = range(100, 15_100, 3)  # 5,000 terms, none below 100: files of small ids skip
    chain = " OR ".join(f"id = {i}" for i in terms)
    rows = zorder.read(spark, table, chain).select("id").collect()
    assert sorted(r.id for r in rows) == [i for i in range(200) if i in set(terms)]
    report = zorder.explain(table, chain)
    assert 0 < report.files_scanned < report.files_total
    deep = "(" * 100 + "id = 7 OR m = 3" + ")" * 100
    got = sorted(r.id for r in zorder.read(spark, table, deep).select("id").collect())
    assert got == sorted(i for i in range(200) if i == 7 or i % 7 == 3)


def test_column_filters_are_left_alone(spark: SparkSession, table: str) -> None:
    # Built by code, not read from text: a Column may call the caller's own UDF. (A named one:
    # Spark renders a lambda's call as `<lambda>(id)`, which no SQL parser reads, guard or not.)
    def add_one(v):  # type: ignore[no-untyped-def]  # hints would make pyspark guess a pandas UDF
        return v + 1

    plus_one = F.udf(add_one, "bigint")
    rows = zorder.read(spark, table, (plus_one(F.col("id")) == 5) & (F.col("id") < 10)).collect()
    assert [r.id for r in rows] == [4]
