"""``import zorder`` and the pure layers load no Spark, Delta, plotting or CLI library."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("pyspark", "py4j", "deltalake", "matplotlib", "typer")


def loaded_after(statement: str) -> list[str]:
    """Heavy top-level packages in sys.modules after ``statement``, in a fresh interpreter."""
    probe = (
        f"import sys\n{statement}\n"
        "import json\n"
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r})))"
    )
    output = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    return list(json.loads(output.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "statement",
    [
        "import zorder",
        "import zorder.curves",
        "import zorder.skipping",
        "import zorder.stats",
        "import zorder.errors",
        "import zorder.columns",
        "import zorder.curves; zorder.curves.interleave_bits([3, 6], 3); zorder.ZorderError",
    ],
)
def test_pure_imports_load_nothing_heavy(statement: str) -> None:
    assert loaded_after(statement) == []


def test_the_api_still_loads_on_first_use() -> None:
    # zorder.write is a path-first wrapper: the Spark write path loads when it runs; the
    # write and optimize machinery loads Spark's half only when Spark runs.
    assert loaded_after("import zorder; zorder.write") == ["deltalake"]
    assert loaded_after("import zorder; zorder.ClusterMetrics.__name__") == ["deltalake"]
    assert "pyspark" in loaded_after("import zorder.spark.engine")


def test_every_public_name_resolves() -> None:
    import zorder

    missing = [name for name in zorder.__all__ if not hasattr(zorder, name)]
    assert missing == []
    assert set(zorder.__all__) <= set(dir(zorder))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        zorder.nope  # noqa: B018


def test_lookups_and_describe_start_no_spark(tmp_path: object) -> None:
    """The JVM-free paths import no pyspark, on a real table (time travel, a vacuum that
    deletes an orphan file and a restore included); each call's answer is checked as it
    runs."""
    path = str(tmp_path)
    statement = (
        "import os, pyarrow as pa, deltalake, zorder\n"
        f"path = {path!r} + '/t'\n"
        "deltalake.write_deltalake(path, pa.table({'x': [1, 2, 3]}))\n"
        "deltalake.write_deltalake(path, pa.table({'x': [4]}), mode='append')\n"
        "assert zorder.describe(path, version=0).version == 0\n"
        "assert zorder.to_arrow(path, 'x > 1', version=1).num_rows == 3\n"
        "assert zorder.scan(path, 'x > 1').to_arrow(limit=1).num_rows == 1\n"
        "assert zorder.explain(path, 'x = 4').files_scanned == 1\n"
        "orphan = os.path.join(path, 'orphan.parquet')\n"
        "open(orphan, 'wb').write(b'referenced by no commit')\n"
        "kept = zorder.vacuum(path, dry_run=True)\n"
        "assert (kept.files, kept.retain_hours) == ((), 168), kept  # a week: too young\n"
        "listed = zorder.vacuum(path, retain_hours=0, force=True)\n"
        "assert (listed.files, listed.dry_run) == (('orphan.parquet',), True), listed\n"
        "assert os.path.exists(orphan)  # a dry run deletes nothing\n"
        "done = zorder.vacuum(path, retain_hours=0, force=True, dry_run=False)\n"
        "assert (done.files, done.dry_run) == (('orphan.parquet',), False), done\n"
        "assert not os.path.exists(orphan)\n"
        "assert sorted(zorder.to_arrow(path).column('x').to_pylist()) == [1, 2, 3, 4]\n"
        "assert zorder.vacuum(path, retain_hours=0, force=True).files == ()\n"
        "assert zorder.restore(path, version=0).version == 2\n"
        "assert sorted(zorder.to_arrow(path).column('x').to_pylist()) == [1, 2, 3]\n"
    )
    loaded = loaded_after(statement)
    assert "pyspark" not in loaded, loaded
    assert "py4j" not in loaded, loaded


def test_the_top_level_is_small_and_old_names_warn_their_way_home() -> None:
    import warnings

    import zorder
    import zorder.curves

    assert len(zorder.__all__) <= 30
    with pytest.warns(DeprecationWarning, match=r"use zorder\.errors\.InvalidArgumentError"):
        moved = zorder.InvalidArgumentError
    assert moved is zorder.errors.InvalidArgumentError
    with pytest.warns(DeprecationWarning, match=r"use zorder\.curves\.interleave_bits"):
        assert zorder.interleave_bits([3, 6], 3) == 30
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert zorder.errors.TableNotFoundError.__name__ == "TableNotFoundError"
        assert zorder.ZorderError is zorder.errors.ZorderError
        assert zorder.curves.interleave_bits([3, 6], 3) == 30
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = zorder.nope


def test_an_in_process_optimize_loads_no_pyspark(tmp_path: object) -> None:
    """``engine="arrow"`` (and ``"auto"`` on small work) plans, rewrites and commits without
    pyspark: on a plain table, and on a partitioned one with ``where=``; the rows stay."""
    path = str(tmp_path)
    statement = (
        "import numpy as np, pyarrow as pa, pyarrow.parquet as pq, deltalake, zorder\n"
        "n = 5000\n"
        "rows = pa.table({'a': np.arange(n), 'b': np.arange(n)[::-1] % 97,\n"
        "                 'day': np.where(np.arange(n) % 2 == 0, 'd1', 'd2')})\n"
        f"plain, parted = {path!r} + '/plain', {path!r} + '/parted'\n"
        "for i in range(3):\n"
        "    deltalake.write_deltalake(plain, rows.slice(i * 1000, 1000), mode='append')\n"
        "    deltalake.write_deltalake(parted, rows.slice(i * 1000, 1000), mode='append',\n"
        "                              partition_by=['day'])\n"
        "done = zorder.optimize(None, plain, by=['a', 'b'], engine='arrow', num_files=2)\n"
        "assert (done.engine, done.files_removed, done.files_added) == ('arrow', 3, 2), done\n"
        "again = zorder.Table(parted).optimize(by=['a', 'b'], where=\"day = 'd2'\")\n"
        "assert (again.engine, again.files_removed) == ('arrow', 3), again\n"
        "for p in (plain, parted):\n"
        # The files the log lists, read by pyarrow (deltalake's own reader can abort this
        # interpreter at exit, which is not what is tested here).
        "    got = pq.read_table(deltalake.DeltaTable(p).file_uris(), columns=['a'])\n"
        "    got = got.sort_by('a')\n"
        "    assert got.column('a').to_pylist() == list(range(3000)), p\n"
    )
    loaded = loaded_after(statement)
    assert "pyspark" not in loaded, loaded
    assert "py4j" not in loaded, loaded


def test_an_in_process_write_loads_no_pyspark(tmp_path: object) -> None:
    """A write from a path in process (``engine="arrow"``) plans, writes and commits without
    pyspark: Parquet into a new table, an append that adds a column and writes a missing one
    as NULL (``schema_mode="merge"``), and a Delta table into a new partitioned one."""
    path = str(tmp_path)
    statement = (
        "import os, numpy as np, pyarrow as pa, pyarrow.parquet as pq, deltalake, zorder\n"
        "n = 3000\n"
        "rows = pa.table({'a': np.arange(n), 'b': np.arange(n)[::-1] % 97,\n"
        "                 'day': np.where(np.arange(n) % 2 == 0, 'd1', 'd2')})\n"
        f"root = {path!r}\n"
        "pq.write_table(rows, root + '/in.parquet')\n"
        "done = zorder.write(root + '/in.parquet', root + '/t', by=['a', 'b'], engine='arrow',\n"
        "                    num_files=2)\n"
        "assert (done.engine, done.files_added) == ('arrow', 2), done\n"
        "more = rows.append_column('c', pa.array(np.arange(n) * 2.0)).drop_columns(['day'])\n"
        "os.makedirs(root + '/in2')\n"
        "pq.write_table(more, root + '/in2/p.parquet')\n"
        "again = zorder.write(root + '/in2', root + '/t', mode='append', schema_mode='merge',\n"
        "                     engine='arrow')\n"
        "assert again.engine == 'arrow', again\n"
        "parted = zorder.write(root + '/t', root + '/p', by=['a'], partition_by=['day'],\n"
        "                      engine='arrow')\n"
        "assert parted.engine == 'arrow', parted\n"
        "got = pq.read_table(deltalake.DeltaTable(root + '/t').file_uris())\n"
        "assert got.column_names == ['a', 'b', 'day', 'c'], got.schema\n"
        "assert (got.num_rows, got['day'].null_count, got['c'].null_count) == (6000, 3000, 3000)\n"
        "assert sorted(got['a'].to_pylist()) == sorted(list(range(n)) * 2)\n"
        "new = deltalake.DeltaTable(root + '/p')\n"
        "assert new.metadata().partition_columns == ['day']\n"
        "assert sum(pq.read_metadata(u).num_rows for u in new.file_uris()) == 6000\n"
    )
    loaded = loaded_after(statement)
    assert "pyspark" not in loaded, loaded
    assert "py4j" not in loaded, loaded
