"""The JVM's file keys are the Arrow UDF's, row for row, and so are the files they make.

``zorder.spark.FileKeys`` (in zorder-spark.jar) executes a fitted file plan
without Python; the reference is :meth:`FilePlan.packed`, the NumPy code the
Arrow UDF runs, applied on the driver to the same rows. Plans are drawn by
hypothesis over every clustering type (NaN, infinities, -0.0, NULL, extreme
integers and decimals, ancient dates, supplementary characters, strings with
long common prefixes and strings longer than the 256 characters a sample
keeps), both curves, any file count, weights and workload cut trees.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import zorder
from tests.spark.helpers import ALL_TYPES_SCHEMA, PREFIX, needs_arrow_udf, random_row
from zorder.curves.cells import FileCells
from zorder.curves.cuts import CutTree
from zorder.curves.kinds import SpaceFillingCurve
from zorder.curves.plan import FilePlan, cell_key_packing, fit_file_plan
from zorder.demo import network_frame
from zorder.spark.compat import collect_arrow
from zorder.spark.file_keys import key_engine, packed_key
from zorder.spark.keys import (
    bits_per_column,
    comparable,
    resolve_clustering_columns,
)

pytestmark = pytest.mark.spark

ROWS = 3_000
COLUMNS = ["b", "i8", "i16", "i32", "i64", "f32", "f64", "dec", "wide", "d", "ts", "ntz", "s"]
COLUMNS += ["bin", "long", "one_dec", "one_text", "not_utf8"]
CURVES: tuple[SpaceFillingCurve, ...] = ("zorder", "hilbert")


def _long_text(rng: random.Random) -> str | None:
    """Mostly over 256 characters, sharing long prefixes: the cut a sample makes matters."""
    if rng.random() < 0.1:
        return None
    return PREFIX * rng.randint(1, 12) + str(rng.randint(0, 50)) + "é" * rng.randint(0, 200)


@pytest.fixture(scope="module")
def frame(spark: SparkSession) -> DataFrame:
    rng = random.Random(35)
    rows = [(i, *random_row(rng), _long_text(rng)) for i in range(ROWS)]
    schema = f"id int, {ALL_TYPES_SCHEMA}, long string"
    # Columns of one value (and NULL) have no boundary at all; a Spark string may hold bytes
    # that are not UTF-8.
    one = F.when(F.col("id") % 5 > 0, F.lit(1.5))
    not_utf8 = F.unhex(F.concat(F.lit("FF"), F.hex(F.col("s")))).cast("string")
    return (
        spark.createDataFrame(rows, schema)
        .withColumn("one_dec", one.cast("decimal(5,2)"))
        .withColumn("one_text", one.cast("string"))
        .withColumn("not_utf8", F.when(F.col("id") % 7 > 0, not_utf8))
        .cache()
    )


@pytest.fixture(scope="module")
def values(frame: DataFrame) -> dict[str, pa.Array]:
    """Each column as the Arrow UDF sees it (cut by ``comparable``), in ``id`` order."""
    columns = resolve_clustering_columns(frame, COLUMNS)
    table = collect_arrow(frame.select("id", *[comparable(c) for c in columns]))
    table = table.take(pc.sort_indices(table.column("id")))
    return {c.name: table.column(c.name).combine_chunks() for c in columns}


@st.composite
def _trees(draw: st.DrawFn, arrays: list[pa.Array]) -> CutTree:
    """A tree of cuts at values the columns hold, grown by splitting random leaves."""
    column, value, left, right = [-1], [None], [-1], [-1]
    for _ in range(draw(st.integers(1, 6))):
        leaves = [i for i, c in enumerate(column) if c < 0]
        at = draw(st.sampled_from(leaves))
        which = draw(st.integers(0, len(arrays) - 1))
        try:
            listed = arrays[which].slice(0, 200).to_pylist()
        except UnicodeDecodeError:  # a cut value is a Python str: these bytes are not UTF-8
            continue
        held = [v for v in listed if v is not None and not (isinstance(v, float) and v != v)]
        if not held:
            continue
        cut = draw(st.sampled_from(held))
        if isinstance(cut, str) and draw(st.booleans()):
            cut += "z" * 300  # longer than a sample keeps: the JVM then sees values cut too
        column[at], value[at] = which, cut
        left[at], right[at] = len(column), len(column) + 1
        column += [-1, -1]
        value += [None, None]
        left += [-1, -1]
        right += [-1, -1]
    return CutTree(tuple(column), tuple(value), tuple(left), tuple(right))


def _jvm_keys(frame: DataFrame, key: Any) -> np.ndarray:
    out = collect_arrow(frame.select("id", key.alias("key")))
    order = np.argsort(out.column("id").to_numpy())
    keys: np.ndarray = out.column("key").to_numpy()[order]
    return keys


@pytest.mark.compat
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_jvm_keys_equal_the_reference_on_drawn_plans(
    spark: SparkSession, frame: DataFrame, values: dict[str, pa.Array], data: st.DataObject
) -> None:
    assert key_engine(spark, []) == "jvm"
    names = data.draw(st.lists(st.sampled_from(COLUMNS), min_size=2, max_size=6, unique=True))
    curve = data.draw(st.sampled_from(CURVES))
    count = data.draw(st.integers(1, 300))
    columns = resolve_clustering_columns(frame, names)
    arrays = [values[n] for n in names]
    sample_rows = np.sort(
        np.random.default_rng(data.draw(st.integers(0, 99))).choice(ROWS, 1_000, replace=False)
    )
    sample = [a.take(pa.array(sample_rows)) for a in arrays]
    weights = cuts = None
    if curve == "zorder" and data.draw(st.booleans()):
        weights = data.draw(st.lists(st.floats(0, 4), min_size=len(names), max_size=len(names)))
        if not any(weights):
            weights[0] = 1.0
    if curve == "zorder" and data.draw(st.booleans()):
        cuts = data.draw(_trees(arrays))
    plan = fit_file_plan(
        sample,
        curve=curve,
        bits=bits_per_column(len(names)),
        count=count,
        weights=weights,
        cuts=cuts,
        names=names,
    )
    key = packed_key(spark, columns, [plan], packing=plan.packing, engine="jvm")
    expected = plan.packed(arrays)
    got = _jvm_keys(frame, key)
    mismatched = np.flatnonzero(got != expected)
    assert mismatched.size == 0, (
        f"{mismatched.size} rows differ, first: "
        f"{[values[n][int(mismatched[0])].as_py() for n in names]}"
    )


@pytest.mark.parametrize("curve", ["zorder", "hilbert"])
def test_partitioned_jvm_keys_equal_the_reference(
    spark: SparkSession, frame: DataFrame, values: dict[str, pa.Array], curve: SpaceFillingCurve
) -> None:
    """One plan a partition, picked by a text key and by an integer key, files numbered on."""
    names = ["f64", "s", "long", "ntz", "one_dec"]
    columns = resolve_clustering_columns(frame, names)
    bits = bits_per_column(len(names))
    groups = np.arange(ROWS) % 3
    plans: list[FilePlan] = []
    first_files = [0]
    for group in range(3):
        rows = pa.array(np.flatnonzero(groups == group))
        sample = [values[n].take(rows) for n in names]
        plans.append(fit_file_plan(sample, curve=curve, bits=bits, count=7 + group))
        first_files.append(first_files[-1] + plans[-1].count)
    packing = cell_key_packing(len(names), bits, first_files[-1])
    expected = np.empty(ROWS, dtype=np.int64)
    for group, plan in enumerate(plans):
        rows = np.flatnonzero(groups == group)
        cell, curve_key = plan.place([values[n].take(pa.array(rows)) for n in names])
        expected[rows] = (
            (np.uint64(first_files[group]) + cell.astype(np.uint64))
            << np.uint64(packing.cell_shift)
        ) | (curve_key >> np.uint64(packing.dropped_bits))
    texts = ["a", "é😀", "c"]
    by_text = F.element_at(F.array(*[F.lit(t) for t in texts]), F.col("id") % 3 + 1)
    for keys, spark_key in [
        (pa.array(texts), by_text),
        (pa.array([10, 11, 12], pa.int64()), (F.col("id") % 3 + 10).cast("long")),
    ]:
        keyed = frame.withColumn("part", spark_key)
        key = packed_key(
            spark,
            columns,
            plans,
            packing=packing,
            first_files=first_files,
            partition_key="part",
            partition_keys=keys,
            engine="jvm",
        )
        assert (_jvm_keys(keyed, key) == expected).all()


def _files(path: str) -> dict[str, list[tuple[Any, ...]]]:
    """Each file of a table (by its number in the run) and its rows, sorted."""
    out = {}
    for file in zorder.describe(path).files:
        table = pq.read_table(Path(path) / file.path)
        number = file.path.rsplit("/", 1)[-1].split("-")[1]
        columns = [table.column(c).to_pylist() for c in table.column_names]
        out[number] = sorted(zip(*columns, strict=True))
    return out


@needs_arrow_udf
@pytest.mark.parametrize("curve", ["zorder", "hilbert"])
def test_the_jvm_and_the_arrow_udf_write_the_same_files(
    spark: SparkSession, tmp_path: Path, curve: SpaceFillingCurve, monkeypatch: pytest.MonkeyPatch
) -> None:
    by = ["src_ip", "dst_ip", "src_port", "dst_port"]
    source = network_frame(spark, 20_000, seed=35)
    jvm = str(tmp_path / "jvm")
    zorder.write(source, jvm, by=by, curve=curve, num_files=10)
    monkeypatch.setattr("zorder.spark.file_keys.key_engine", lambda spark, plans: "arrow")
    arrow = str(tmp_path / "arrow")
    zorder.write(source, arrow, by=by, curve=curve, num_files=10)
    assert _files(jvm) == _files(arrow)  # the same files, each holding the same rows


def test_a_plan_without_a_jvm_form_keeps_the_arrow_udf(spark: SparkSession) -> None:
    sample = [pa.array(list(range(100)), pa.int32())]
    plan = fit_file_plan(sample, curve="zorder", bits=20, count=3)  # 2**20-entry tables a column
    assert key_engine(spark, [plan]) == "arrow"


def test_more_inputs_than_a_java_udf_takes_go_in_one_struct(
    spark: SparkSession, frame: DataFrame, values: dict[str, pa.Array]
) -> None:
    names = COLUMNS[:12]  # twelve clustering columns: more than UDF10's arguments
    columns = resolve_clustering_columns(frame, names)
    arrays = [values[n] for n in names]
    with pytest.warns(UserWarning, match="clustering on 12 columns"):
        bits = bits_per_column(len(names))
    plan = fit_file_plan(arrays, curve="hilbert", bits=bits, count=40)
    key = packed_key(spark, columns, [plan], packing=plan.packing, engine="jvm")
    assert (_jvm_keys(frame, key) == plan.packed(arrays)).all()


def test_thousands_of_cells_are_walked_by_search(spark: SparkSession) -> None:
    """Past a million (node, id) entries FileKeys searches each node's cuts instead."""
    names = ["a", "b", "c", "d"]
    frame = spark.range(60_000).select(
        F.col("id").cast("int").alias("id"),
        *[(F.rand(i) * 1e6).cast("int").alias(n) for i, n in enumerate(names)],
    )
    columns = resolve_clustering_columns(frame, names)
    table = collect_arrow(frame)
    table = table.take(pc.sort_indices(table.column("id")))
    arrays = [table.column(n).combine_chunks() for n in names]
    plan = fit_file_plan(arrays, curve="zorder", bits=bits_per_column(4), count=20_000)
    cells = plan.files
    assert isinstance(cells, FileCells)
    inner = np.flatnonzero(cells.column >= 0)
    assert int((cells.cuts[cells.cut_start[inner + 1] - 1] + 1).sum()) > 1 << 20
    key = packed_key(spark, columns, [plan], packing=plan.packing, engine="jvm")
    assert (_jvm_keys(frame, key) == plan.packed(arrays)).all()
