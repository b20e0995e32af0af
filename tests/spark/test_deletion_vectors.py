"""Tables with deletion vectors: read exactly, clustered without a deleted row coming back.

The vectors are Databricks' (tests/data) or made here as Delta Spark makes
them (tests/delta_writer.py: inline, relative and absolute storage). Every
answer is checked against DuckDB's delta_scan (the Delta kernel) and
delta-rs's DataFusion scan, which both apply deletion vectors.
"""

from __future__ import annotations

import json
import random
import shutil
from collections import Counter
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from deltalake import DeltaTable, TableFeatures, write_deltalake
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

import zorder
from tests.delta_writer import (
    STORAGES,
    Storage,
    delete_rows,
    enable_deletion_vectors,
    live_adds,
    rename_column,
)
from tests.spark.helpers import arrow_rows, delta_rs_rows, kernel_rows, row_multiset
from tests.spark.test_partitioned_optimize import (
    DAYS,
    ENGINES,
    just_before_commit,
    other_process,
)
from zorder.errors import ConcurrentCommitError, UnsupportedTableError
from zorder.plan.modes import Engine

pytestmark = pytest.mark.spark

DATA = Path(__file__).resolve().parents[1] / "data"
VENDORED = ["table-with-dv-small", "table_with_deletion_logs", "cdf-table-with-cdc-and-dvs"]


def copy_of(name: str, tmp_path: Path) -> str:
    shutil.copytree(DATA / name, tmp_path / name)
    return str(tmp_path / name)


@pytest.mark.parametrize("name", VENDORED)
def test_databricks_tables_read_without_deleted_rows(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, name: str
) -> None:
    path = str(DATA / name)
    columns = [f.name for f in spark.read.parquet(str(next(Path(path).glob("*.parquet")))).schema]
    expected = kernel_rows(kernel, path, columns)
    assert delta_rs_rows(path, columns) == expected
    assert arrow_rows(zorder.to_arrow(path, columns=columns), columns) == expected
    assert row_multiset(zorder.read(spark, path).select(*columns).collect()) == expected
    total = sum(expected.values())
    assert zorder.explain(path, "true").rows_total == total
    assert zorder.describe(path).rows == total


def dv_table(path: str, *, seed: int = 3) -> None:
    """Four days of blind appends by delta-rs, then DELETEs as deletion vectors in each
    storage kind, some files deleted from twice."""
    for batch in range(2):
        for number, day in enumerate(DAYS):
            start = (batch * len(DAYS) + number) * 300
            ids = list(range(start, start + 300))
            columns = {
                "a": [i * 7919 % 1000 for i in ids],
                "b": [i * 104729 % 997 for i in ids],
                "day": [day] * 300,
            }
            write_deltalake(path, pa.table(columns), partition_by=["day"], mode="append")
    table = DeltaTable(path)
    table.alter.add_feature(TableFeatures.DeletionVectors, allow_protocol_versions_increase=True)
    rng = random.Random(seed)
    files = sorted(live_adds(Path(path)))
    for index, data_file in enumerate(files[:6]):
        rows = rng.sample(range(300), rng.randint(1, 40))
        delete_rows(path, data_file, rows, storage=STORAGES[index % 3])
    delete_rows(path, files[0], rng.sample(range(300), 10), storage="u")


COLUMNS = ["a", "b", "day"]
FILTERS = [
    "TRUE",
    "a < 100",
    "b >= 500 AND day = '2026-11-02'",
    "day IN ('2026-11-01', '2026-11-04') OR a = 7",
    "NOT (a BETWEEN 200 AND 800)",
]


def test_generated_vectors_read_exactly_through_every_path(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    dv_table(path)
    assert any("deletionVector" in add for add in live_adds(Path(path)).values())
    for where in FILTERS:
        expected = kernel_rows(kernel, path, COLUMNS, where)
        assert arrow_rows(zorder.to_arrow(path, where), COLUMNS) == expected, where
        read = zorder.read(spark, path, where).select(*COLUMNS).collect()
        assert row_multiset(read) == expected, where
    assert zorder.explain(path, "TRUE").rows_total == sum(
        kernel_rows(kernel, path, COLUMNS).values()
    )


@pytest.mark.parametrize("full", [False, True], ids=["incremental", "full"])
def test_optimize_purges_deleted_rows_and_keeps_the_rest(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path, full: bool
) -> None:
    path = str(tmp_path / "t")
    dv_table(path)
    before = kernel_rows(kernel, path, COLUMNS)
    described = zorder.describe(path)
    assert described.rows == sum(before.values())
    assert described.deleted_rows == 8 * 300 - sum(before.values())
    with_deletes = {f.path for f in described.files if f.deleted_rows}
    assert len(with_deletes) == 6
    assert with_deletes <= {f.path for f in described.unclustered}
    metrics = zorder.optimize(spark, path, by=["a", "b"], full=full, num_files=8)
    assert metrics.rows == sum(before.values())
    assert kernel_rows(kernel, path, COLUMNS) == before
    assert delta_rs_rows(path, COLUMNS) == before
    assert arrow_rows(zorder.to_arrow(path), COLUMNS) == before
    assert row_multiset(zorder.read(spark, path).select(*COLUMNS).collect()) == before
    # Every file with deleted rows was rewritten without them.
    assert not any("deletionVector" in add for add in live_adds(Path(path)).values())
    # Nothing left to do: a second optimize commits nothing.
    assert zorder.optimize(spark, path).version is None


def test_append_to_a_table_with_deletion_vectors(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    dv_table(path)
    before = kernel_rows(kernel, path, COLUMNS)
    extra = spark.createDataFrame(
        [(i, i % 7, DAYS[1]) for i in range(50)], "a long, b long, day string"
    )
    zorder.write(extra, path, mode="append", by=["a", "b"])
    expected = before + row_multiset(extra.collect())
    assert kernel_rows(kernel, path, COLUMNS) == expected
    assert delta_rs_rows(path, COLUMNS) == expected


@pytest.mark.parametrize("engine", ENGINES)
def test_blind_append_during_a_purging_optimize_is_kept_and_fails_it_cleanly(
    spark: SparkSession,
    kernel: duckdb.DuckDBPyConnection,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    engine: Engine,
) -> None:
    # The purge's overwrite is made on the newest version, where it would remove the
    # appended file unread: it fails instead, and the append stands. A second run purges.
    path = str(tmp_path / "t")
    dv_table(path)
    before = kernel_rows(kernel, path, COLUMNS)
    just_before_commit(monkeypatch, lambda: other_process("append", path, DAYS[0]))
    with pytest.raises(ConcurrentCommitError, match="added 1 file"):
        zorder.optimize(spark, path, by=["a", "b"], full=True, num_files=4, engine=engine)
    appended = Counter({(a, 0, DAYS[0]): 1 for a in (-1, -2, -3)})
    assert kernel_rows(kernel, path, COLUMNS) == before + appended
    assert delta_rs_rows(path, COLUMNS) == before + appended
    monkeypatch.undo()
    zorder.optimize(spark, path, by=["a", "b"], full=True, num_files=4, engine=engine)
    assert kernel_rows(kernel, path, COLUMNS) == before + appended
    assert not any(f.deleted_rows for f in zorder.describe(path).files)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("deleted_before", [True, False], ids=["vector-changed", "vector-added"])
def test_concurrent_delete_fails_the_optimize_cleanly(
    spark: SparkSession,
    kernel: duckdb.DuckDBPyConnection,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    deleted_before: bool,
    engine: Engine,
) -> None:
    # A DELETE that lands while optimize runs gives a file read here a new vector: a
    # commit that removed the old logical file would bring the deleted rows back.
    path = str(tmp_path / "t")
    if deleted_before:
        dv_table(path)  # optimize rewrites through the partitions' overwrite
    else:  # no vectors yet: the plain rewrite's own check must see the new one
        dv_table(path)
        zorder.optimize(spark, path, by=["a", "b"], full=True, num_files=4)
        write_deltalake(path, pa.table({"a": [1], "b": [2], "day": [DAYS[2]]}), mode="append")
    adds = live_adds(Path(path))
    victim = next(
        p
        for p in sorted(adds)
        if ("deletionVector" in adds[p] if deleted_before else p.startswith("zorder-"))
    )
    runs_before = {p.name for p in Path(path).glob("zorder-*")}
    just_before_commit(monkeypatch, lambda: other_process("dv-delete", path, f"{victim}:0,1,2"))
    with pytest.raises(ConcurrentCommitError):
        zorder.optimize(spark, path, by=["a", "b"], full=True, num_files=4, engine=engine)
    after_delete = kernel_rows(kernel, path, COLUMNS)
    assert delta_rs_rows(path, COLUMNS) == after_delete
    assert arrow_rows(zorder.to_arrow(path), COLUMNS) == after_delete
    assert {p.name for p in Path(path).glob("zorder-*")} == runs_before  # ours removed


@pytest.mark.parametrize("engine", ENGINES)
def test_optimize_of_a_change_data_feed_table_with_deleted_rows_is_refused_first(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: Engine
) -> None:
    path = copy_of("cdf-table-with-cdc-and-dvs", tmp_path)
    listing = sorted(str(p) for p in Path(path).rglob("*"))
    import zorder.arrow.engine as inprocess_module
    import zorder.spark.engine as in_spark

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("nothing may be laid out")

    monkeypatch.setattr(in_spark, "cluster", never)  # Spark's layout
    monkeypatch.setattr(inprocess_module, "write_files", never)  # this process's files
    with pytest.raises(UnsupportedTableError, match=r"delta\.enableChangeDataFeed"):
        zorder.optimize(spark, path, by=["id"], full=True, engine=engine)
    assert sorted(str(p) for p in Path(path).rglob("*")) == listing


def test_vacuum_keeps_live_deletion_vectors(
    kernel: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    # deltalake's own full vacuum counts a live vector's file as unused: deleting it
    # would bring the deleted rows back.
    path = copy_of("table-with-dv-small", tmp_path)
    orphan = Path(path) / "part-99999-orphan.snappy.parquet"
    orphan.write_bytes((Path(path) / next(iter(live_adds(Path(path))))).read_bytes())
    before = kernel_rows(kernel, path, ["value"])
    result = zorder.vacuum(path, retain_hours=0, force=True, dry_run=False)
    assert result.files == ("part-99999-orphan.snappy.parquet",)
    assert not orphan.exists()
    assert list(Path(path).glob("deletion_vector_*.bin"))
    assert kernel_rows(kernel, path, ["value"]) == before
    assert sum(before.values()) == 8


# ------------------------------------------------------------- property test

# A column-mapped table (the partition column first: DuckDB's delta extension 1.5.5 reads
# a mapped partition column placed last as NULL), written by delta-rs and by zorder.


@pytest.fixture(scope="module")
def fuzz_sources(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> dict[bool, str]:
    """By whether columns are mapped: six files over two days, NaN and NULL included."""
    return {mapped: fuzz_source(spark, tmp_path_factory, mapped=mapped) for mapped in (False, True)}


def fuzz_source(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory, *, mapped: bool
) -> str:
    path = str(tmp_path_factory.mktemp("dv-fuzz") / "t")
    rng = random.Random(5)
    for number in range(4):
        count = 120
        write_deltalake(
            path,
            pa.table(
                {
                    "day": [DAYS[number % 2]] * count,
                    "a": [rng.randint(-50, 50) for _ in range(count)],
                    "f": [
                        rng.choice([float("nan"), None, rng.uniform(-5, 5)]) for _ in range(count)
                    ],
                    "s": [rng.choice(["x", "y", "zz", None]) for _ in range(count)],
                }
            ),
            partition_by=["day"],
            mode="append",
            configuration={"delta.columnMapping.mode": "name"} if number == 0 and mapped else None,
        )
    frame = spark.createDataFrame(
        [(DAYS[1], i, float(i) / 7, "w") for i in range(-40, 40)],
        "day string, a long, f double, s string",
    )
    zorder.write(frame, path, mode="append", by=["a", "f"], num_files=2)
    if mapped:
        enable_deletion_vectors(path)  # (deltalake's add_feature fails on such tables)
    else:
        DeltaTable(path).alter.add_feature(
            TableFeatures.DeletionVectors, allow_protocol_versions_increase=True
        )
    return path


leaves = st.sampled_from(
    [
        "{a} < 0",
        "{a} = 7",
        "{a} BETWEEN -10 AND 10",
        "f > 1.5",
        "isnan(f)",
        "f IS NULL",
        "{s} = 'zz'",
        "{s} IN ('x', 'w')",
        "day = '2026-11-02'",
        "{s} IS NOT NULL",
    ]
)
filters = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.builds(lambda x: f"NOT ({x})", inner),
        st.builds(lambda x, y: f"({x}) AND ({y})", inner, inner),
        st.builds(lambda x, y: f"({x}) OR ({y})", inner, inner),
    ),
    max_leaves=4,
)
deletes = st.lists(
    st.tuples(
        st.integers(0, 5), st.sets(st.integers(0, 119), max_size=60), st.sampled_from(STORAGES)
    ),
    min_size=1,
    max_size=5,
)
renames = st.tuples(st.sampled_from(["a", "amount", "a b"]), st.sampled_from(["s", "label"]))
# Without mapping (no renames) DuckDB's prefilter reads the files; with it, pyarrow does.
layouts = st.one_of(st.just(None), renames)


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(deletes=deletes, names=layouts, where=filters)
def test_random_deletes_and_renames_then_fuzzed_filters(
    spark: SparkSession,
    kernel: duckdb.DuckDBPyConnection,
    fuzz_sources: dict[bool, str],
    tmp_path_factory: pytest.TempPathFactory,
    deletes: list[tuple[int, set[int], Storage]],
    names: tuple[str, str] | None,
    where: str,
) -> None:
    path = str(tmp_path_factory.mktemp("dv-example") / "t")
    shutil.copytree(fuzz_sources[names is not None], path)
    names = names or ("a", "s")
    files = sorted(live_adds(Path(path)))
    for index, rows, storage in deletes:
        add = live_adds(Path(path))[files[index % len(files)]]
        count = json.loads(add["stats"])["numRecords"]
        delete_rows(path, add["path"], {r % count for r in rows}, storage=storage)
    for old, new in zip(("a", "s"), names, strict=True):
        if new != old:
            rename_column(path, old, new)
    columns = ["day", names[0], "f", names[1]]
    where = where.format(a=f"`{names[0]}`", s=f"`{names[1]}`")
    everything = kernel_rows(kernel, path, columns)
    full = zorder.read(spark, path).select(*[f"`{c}`" for c in columns])
    assert row_multiset(full.collect()) == everything
    assert arrow_rows(zorder.to_arrow(path), columns) == everything
    expected = row_multiset(full.where(where).collect())  # Spark's meaning, on the live rows
    assert arrow_rows(zorder.to_arrow(path, where), columns) == expected, where
    skipped = zorder.read(spark, path, where).select(*[f"`{c}`" for c in columns])
    assert row_multiset(skipped.collect()) == expected, where


def test_purge_with_null_and_encoded_values_over_two_partition_columns(
    spark: SparkSession, kernel: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    # The rewrite replaces whole partitions through a partition filter: NULL values,
    # characters that are percent-encoded in paths, two columns, and a partition whose
    # rows are all deleted (its file goes, nothing takes its place).
    path = str(tmp_path / "t")
    rng = random.Random(11)
    for _ in range(2):
        rows = 240
        write_deltalake(
            path,
            pa.table(
                {
                    "region": [rng.choice(["a b%", "c/d", None]) for _ in range(rows)],
                    "bucket": [rng.choice([1, 2]) for _ in range(rows)],
                    "a": [rng.randint(0, 999) for _ in range(rows)],
                }
            ),
            partition_by=["region", "bucket"],
            mode="append",
        )
    write_deltalake(
        path,
        pa.table({"region": ["gone"] * 5, "bucket": [3] * 5, "a": list(range(5))}),
        partition_by=["region", "bucket"],
        mode="append",
    )
    DeltaTable(path).alter.add_feature(
        TableFeatures.DeletionVectors, allow_protocol_versions_increase=True
    )
    adds = live_adds(Path(path))
    for number, (name, add) in enumerate(sorted(adds.items())):
        count = json.loads(add["stats"])["numRecords"]
        if add["partitionValues"]["region"] == "gone":
            delete_rows(path, name, range(count))
        elif number % 2 == 0:
            delete_rows(
                path, name, rng.sample(range(count), count // 3), storage=STORAGES[number % 3]
            )
    columns = ["region", "bucket", "a"]
    before = kernel_rows(kernel, path, columns)
    assert not any(row[0] == "gone" for row in before)
    assert zorder.optimize(spark, path, by=["a"], num_files=6).rows == sum(before.values())
    assert kernel_rows(kernel, path, columns) == before
    assert delta_rs_rows(path, columns) == before
    assert arrow_rows(zorder.to_arrow(path), columns) == before
    assert not any("deletionVector" in a for a in live_adds(Path(path)).values())
    assert "gone" not in {a["partitionValues"]["region"] for a in live_adds(Path(path)).values()}
