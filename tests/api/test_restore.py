"""``restore``: one new commit that makes a table what one of its versions was.

No JVM: tables are written by deltalake, by zorder's own commit of a run's files,
or by Delta Spark and Databricks (``tests/data``, copied first). What a restore
leaves is read back by DuckDB's Delta kernel and by delta-rs, which apply
deletion vectors and column mapping, and compared with what each reader read of
the version restored. These tests also hold what deltalake 1.6.6's restore was
measured to do (its add and remove carry the deletion vector, its metadata
action brings back the version's schema and properties) and what it was found
not to do (look for deletion vectors' files, honour ``delta.appendOnly``).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake

import zorder
from tests.conftest import LogReads
from zorder.curves.kinds import ClusteringSpec
from zorder.errors import (
    ConcurrentCommitError,
    InvalidArgumentError,
    MissingFilesError,
    NotADeltaTableError,
    UnsupportedTableError,
    VersionNotFoundError,
)
from zorder.table import (
    CommitClustering,
    CommitRequest,
    Run,
    Storage,
    commit_files,
    describe_written_files,
    load_snapshot,
    record_properties,
)
from zorder.table.clustering import TARGET_FILE_SIZE_PROPERTY, spec_properties
from zorder.table.delta.restore import commit_restore, plan_restore

DATA = Path(__file__).parents[1] / "data"

Rows = Counter[tuple[tuple[str, Any], ...]]


def _copy(name: str, tmp_path: Path) -> str:
    path = tmp_path / name
    shutil.copytree(DATA / name, path)
    return str(path)


def _counted(table: pa.Table) -> Rows:
    """Rows as (column, value) pairs, so that versions of different schemas compare."""
    return Counter(tuple(sorted(row.items())) for row in table.to_pylist())


def _rows(path: str, version: int | None = None) -> Rows:
    """What delta-rs reads (its scan applies deletion vectors and column mapping)."""
    return _counted(
        pa.RecordBatchReader.from_stream(DeltaTable(path, version=version).scan()).read_all()
    )


def _kernel(kernel: duckdb.DuckDBPyConnection, path: str) -> Rows:
    """What DuckDB's delta_scan (the Delta kernel) reads."""
    found = kernel.sql(f"SELECT * FROM delta_scan('{path}')")
    return Counter(tuple(sorted(zip(found.columns, row, strict=True))) for row in found.fetchall())


def _sizes(path: str, version: int | None = None) -> dict[str, int]:
    """The version's files (as the log names them) and their sizes."""
    actions = DeltaTable(path, version=version).get_add_actions(flatten=True)
    return dict(zip(actions["path"].to_pylist(), actions["size_bytes"].to_pylist(), strict=True))


def _paths(path: str, version: int | None = None) -> list[str]:
    return sorted(_sizes(path, version))


def _log(path: str) -> list[str]:
    return sorted(os.listdir(Path(path) / "_delta_log"))


def _actions(path: str, version: int) -> list[dict[str, Any]]:
    """The actions of one commit file, as deltalake wrote them."""
    text = (Path(path) / "_delta_log" / f"{version:020d}.json").read_text()
    return [json.loads(line) for line in text.splitlines()]


def _data_files(path: str) -> set[str]:
    root = Path(path)
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and "_delta_log" not in p.parts
    }


def test_restore_undoes_an_append_an_optimize_and_an_overwrite(
    tmp_path: Path, kernel: duckdb.DuckDBPyConnection
) -> None:
    path = str(tmp_path / "t")
    # "a b": the log names its files percent-encoded, storage holds them as decoded once.
    write_deltalake(path, pa.table({"x": [1, 2, 3], "p": ["a b", "b", "a b"]}), partition_by=["p"])
    write_deltalake(path, pa.table({"x": [4], "p": ["b"]}), partition_by=["p"], mode="append")
    DeltaTable(path).optimize.compact()  # 2: each partition's files rewritten, no data change
    new = pa.table({"x": [9], "p": ["c"], "y": ["a new column"]})
    write_deltalake(path, new, mode="overwrite", schema_mode="overwrite", partition_by=["p"])
    held = {version: _rows(path, version) for version in range(4)}
    schemas = {v: DeltaTable(path, version=v).schema().to_json() for v in range(4)}
    written = _data_files(path)
    table = zorder.Table(path)
    for version in (2, 0, 1, 3):  # undo the overwrite, the optimize, the append; then redo
        newest, live, kept = table.refresh().version, _sizes(path), _sizes(path, version)
        result = table.restore(version=version)
        assert result.table_uri == path
        assert result.restored_version == version
        assert result.version == newest + 1 == table.version  # the handle holds it
        assert result.files_added == len(kept.keys() - live.keys())
        assert result.files_removed == len(live.keys() - kept.keys())
        assert result.bytes_added == sum(kept[f] for f in kept.keys() - live.keys())
        assert result.bytes_removed == sum(live[f] for f in live.keys() - kept.keys())
        assert _rows(path) == _kernel(kernel, path) == held[version]
        assert DeltaTable(path).schema().to_json() == schemas[version]
        assert table.history(limit=1)[0].operation == "RESTORE"
    assert _data_files(path) == written  # no data file was written, none deleted


def test_a_restore_to_what_the_table_already_is_commits_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"x": [1, 2]}))
    write_deltalake(path, pa.table({"x": [3]}), mode="append")
    nothing = zorder.restore(path, version=1)  # the newest version
    assert (nothing.version, nothing.restored_version, nothing.files_added) == (None, 1, 0)
    assert zorder.restore(path, version=0).version == 2
    log = _log(path)
    again = zorder.restore(path, version=0)  # version 2 is what version 0 was
    assert again == zorder.RestoreResult(path, 0, None, 0, 0, 0, 0)
    assert _log(path) == log


def test_a_restore_reads_the_log_three_times(tmp_path: Path, log_reads: LogReads) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"x": [1]}))
    write_deltalake(path, pa.table({"x": [2]}), mode="append")
    assert zorder.restore(path, version=0).version == 2
    # The newest version, the one restored, and the table deltalake restores (it moves it).
    assert log_reads.calls == ["open"] * 3
    assert zorder.restore(path, version=2).version is None  # the newest: read once
    assert log_reads.calls == ["open"] * 4


def test_restore_brings_back_the_spec_and_file_size_the_version_recorded(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"a": [1, 2], "b": [3, 4]}))
    storage = Storage.of(path)
    first = ClusteringSpec(("a", "b"), "zorder", "rank")
    second = ClusteringSpec(("b",), "hilbert", "rank")
    record_properties(storage, {**spec_properties(first), TARGET_FILE_SIZE_PROPERTY: "1048576"})
    record_properties(storage, {**spec_properties(second), TARGET_FILE_SIZE_PROPERTY: "2mb"})
    assert zorder.describe(path).spec == second
    restored = zorder.restore(path, version=1)
    assert (restored.files_added, restored.files_removed, restored.version) == (0, 0, 3)
    described = zorder.describe(path)
    assert (described.spec, described.target_file_size) == (first, 1048576)
    zorder.restore(path, version=0)
    described = zorder.describe(path)
    assert (described.spec, described.target_file_size) == (None, None)


def _commit_run(path: str, spec: ClusteringSpec | None) -> int:
    """A zorder run's commit of one file (as a write makes it, without Spark): its files in
    the run's directory, ``commitInfo.zorder`` and the run's ``txn``. Without ``spec``,
    another writer's append of one file: in a directory of its own, no run, no txn."""
    storage = Storage.of(path)
    snapshot = load_snapshot(storage)
    run = Run.new(spec) if spec is not None else None
    relative = run.directory if run is not None else f"other-{uuid.uuid4().hex[:8]}"
    directory = Path(path) / relative
    directory.mkdir()
    rows = pa.table({"value": pa.array([100, 101], pa.int32())})
    pq.write_table(rows, directory / f"part-00000-{uuid.uuid4()}.c000.snappy.parquet")
    written = describe_written_files(storage, relative, ["value"], snapshot.configuration)
    clustering = (
        CommitClustering("write", run, spec, len(written))
        if run is not None and spec is not None
        else None
    )
    request = CommitRequest(
        storage=storage,
        mode="append",
        files=written,
        schema=snapshot.schema.delta,
        snapshot=snapshot,
        clustering=clustering,
    )
    return commit_files(request)


def test_a_spec_recorded_only_in_zorder_commits_follows_the_restore(tmp_path: Path) -> None:
    """On a writer-version-7 table zorder records no properties: the spec is the newest
    zorder commit's, and a restore to before that commit takes it back."""
    path = _copy("table-with-dv-small", tmp_path)
    spec = ClusteringSpec(("value",), "zorder", "rank")
    assert _commit_run(path, spec) == 2
    assert zorder.describe(path).spec == spec
    zorder.restore(path, version=1)
    assert zorder.describe(path).spec is None  # version 3 is what version 1 was
    assert zorder.describe(path, version=2).spec == spec
    zorder.restore(path, version=2)
    described = zorder.describe(path)
    assert described.spec == spec
    assert [run.current for run in described.runs] == [True]  # the run's txn still vouches


@pytest.mark.parametrize(
    ("name", "version"),
    [
        ("table-with-dv-small", 0),  # before the DELETE: the file without its vector
        ("table_with_deletion_logs", 2),  # before deletion vectors were enabled
        ("table_with_deletion_logs", 3),  # the file with another vector
        ("cdf-table-with-cdc-and-dvs", 12),  # the change data feed on, files with vectors
        ("table_with_partitioning_mapping", 1),  # before column mapping and a renamed column
        ("table_with_partitioning_mapping", 3),  # column mapping, the partition column renamed
    ],
)
def test_deletion_vectors_and_column_mapping_round_trip(
    name: str, version: int, tmp_path: Path, kernel: duckdb.DuckDBPyConnection
) -> None:
    """Back to ``version`` and forward again to the newest: each reader reads, each time,
    what it read of that version (a remove without its vector would double rows)."""
    path = _copy(name, tmp_path)
    newest = DeltaTable(path).version()
    then, now = _rows(path, version), _rows(path)
    assert then != now
    back = zorder.restore(path, version=version)
    assert back.version == newest + 1
    assert _rows(path) == _kernel(kernel, path) == then
    assert _counted(zorder.to_arrow(path)) == then
    assert zorder.restore(path, version=newest).version == newest + 2
    assert _rows(path) == _kernel(kernel, path) == now


def test_deltalakes_restore_keeps_each_files_deletion_vector(tmp_path: Path) -> None:
    """What the round trips rest on, as deltalake wrote it: the file comes back without
    its vector and is removed with it, then comes back with it."""
    path = _copy("table-with-dv-small", tmp_path)
    zorder.restore(path, version=0)
    zorder.restore(path, version=1)
    back, forward = (_actions(path, version) for version in (2, 3))
    vector = {
        "storageType": "u",
        "pathOrInlineDv": "vBn[lx{q8@P<9BNH/isA",
        "offset": 1,
        "sizeInBytes": 36,
        "cardinality": 2,
    }

    def file_actions(actions: list[dict[str, Any]], kind: str) -> list[Any]:
        return [a[kind].get("deletionVector") for a in actions if kind in a]

    assert (file_actions(back, "add"), file_actions(back, "remove")) == ([None], [vector])
    assert (file_actions(forward, "add"), file_actions(forward, "remove")) == ([vector], [None])


def test_column_mapping_by_name_on_the_legacy_protocol(
    tmp_path: Path, kernel: duckdb.DuckDBPyConnection
) -> None:
    path = _copy("table_with_column_mapping", tmp_path)
    first = _kernel(kernel, path)
    more = pa.table({"Company Very Short": ["NEW"], "Super Name": ["Ms. Appended"]})
    write_deltalake(path, more, mode="append")
    appended = _kernel(kernel, path)
    assert sum(appended.values()) == sum(first.values()) + 1
    zorder.restore(path, version=0)
    assert _kernel(kernel, path) == _rows(path) == first
    zorder.restore(path, version=1)
    assert _kernel(kernel, path) == _rows(path) == appended


def test_a_version_whose_data_files_were_vacuumed_is_refused_by_name(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"x": [1, 2], "p": ["a b", "b"]}), partition_by=["p"])
    write_deltalake(path, pa.table({"x": [3], "p": ["c"]}), mode="overwrite")
    (gone,) = (u for u in DeltaTable(path, version=0).file_uris() if "/p=a%20b/" in u)
    gone = os.path.relpath(gone, path)  # as storage names it: p=a%20b/part-...
    (Path(path) / gone).unlink()
    log, live = _log(path), _paths(path)
    table = zorder.Table(path)
    with pytest.raises(MissingFilesError, match=gone) as refused:
        table.restore(version=0)
    assert refused.value.paths == (gone,)
    assert isinstance(refused.value, FileNotFoundError)
    assert "version 0" in str(refused.value)
    assert "Nothing was committed" in str(refused.value)
    assert (_log(path), _paths(path), table.version) == (log, live, 1)


def test_a_version_whose_deletion_vector_was_vacuumed_is_refused_by_name(tmp_path: Path) -> None:
    """deltalake's restore would commit it (it looks for data files only): every reader
    would then fail on the vector, or read the deleted rows."""
    path = _copy("table-with-dv-small", tmp_path)
    zorder.restore(path, version=0)  # the vector is no longer live: a vacuum may delete it
    (vector,) = (p.name for p in Path(path).glob("deletion_vector_*.bin"))
    (Path(path) / vector).unlink()
    log = _log(path)
    with pytest.raises(MissingFilesError, match="deletion vector") as refused:
        zorder.restore(path, version=1)
    assert refused.value.paths == (vector,)
    assert _log(path) == log
    assert sum(_rows(path).values()) == 10


def test_what_deltalake_would_restore_wrong_is_refused_before_a_commit(tmp_path: Path) -> None:
    append_only = str(tmp_path / "append-only")
    write_deltalake(append_only, pa.table({"x": [1]}), configuration={"delta.appendOnly": "true"})
    write_deltalake(append_only, pa.table({"x": [2]}), mode="append")
    with pytest.raises(UnsupportedTableError, match="append-only"):
        zorder.restore(append_only, version=0)  # deltalake would remove the file
    identity = _copy("checkpoint-v2-table", tmp_path)  # identityColumns: deltalake cannot
    log = _log(identity)
    with pytest.raises(UnsupportedTableError, match="identity"):
        zorder.restore(identity, version=1)
    assert (_log(append_only)[-1], _log(identity)) == ("00000000000000000001.json", log)


def test_a_commit_made_meanwhile_fails_the_restore(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"x": [1]}))
    write_deltalake(path, pa.table({"x": [2]}), mode="append")
    storage = Storage.of(path)
    change = plan_restore(load_snapshot(storage), load_snapshot(storage, version=0))
    write_deltalake(path, pa.table({"x": [3]}), mode="append")  # another writer, version 2
    with pytest.raises(ConcurrentCommitError, match="after version 1"):
        commit_restore(change)
    assert len(_log(path)) == 3
    assert sorted(DeltaTable(path).to_pyarrow_table().column("x").to_pylist()) == [1, 2, 3]


def test_restore_by_time_picks_the_version_committed_at_or_before_it(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    for x in range(3):
        write_deltalake(path, pa.table({"x": [x]}), mode="append")
    base = dt.datetime(2026, 11, 24, 12, tzinfo=dt.UTC).timestamp()
    for version in range(3):
        seconds = base + 3600 * version
        os.utime(Path(path) / "_delta_log" / f"{version:020d}.json", (seconds, seconds))
    restored = zorder.restore(path, timestamp="2026-11-24 13:30:00")  # UTC: version 1
    assert (restored.restored_version, restored.version) == (1, 3)
    table = zorder.Table(path, time_zone="Europe/Paris")  # 13:30 in Paris is 12:30 UTC
    assert table.restore(timestamp=dt.datetime(2026, 11, 24, 13, 30)).restored_version == 0
    with pytest.raises(VersionNotFoundError, match="before the oldest commit"):
        zorder.restore(path, timestamp="2026-11-24")


def test_bad_requests_are_refused_before_anything_is_read(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"x": [1]}))
    with pytest.raises(InvalidArgumentError, match="exactly one"):
        zorder.restore(path, version=0, timestamp="2026-11-24")
    with pytest.raises(InvalidArgumentError, match="exactly one"):
        zorder.restore(path)
    with pytest.raises(InvalidArgumentError, match="int >= 0"):
        zorder.restore(path, version=-1)
    with pytest.raises(
        VersionNotFoundError, match="no version 5 yet: its log holds versions 0 to 0"
    ):
        zorder.restore(path, version=5)
    with pytest.raises(NotADeltaTableError):
        zorder.restore(str(tmp_path / "nothing"), version=0)
    assert _log(path) == ["00000000000000000000.json"]
