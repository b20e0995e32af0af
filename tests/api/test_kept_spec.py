"""The spec zorder keeps outside the log: ``_zorder/specs/<fingerprint>.json``, named by the
``zorder.spec`` txn, found once the log's cleanup removed the commits that recorded it.

On a table with table features (writer 7) zorder records no properties, so without it a
table whose early commits expired would forget how it is clustered. Delta Spark's own
cleanup of such a table is in ``tests/spark/test_delta_spark_maintenance.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from deltalake import DeltaTable

import zorder
from tests.api.test_restore import _commit_run, _copy
from zorder.curves.kinds import ClusteringSpec
from zorder.table.clustering import SPEC_TRANSACTION, read_spec_file, write_spec_file
from zorder.table.storage import Storage

SPEC = ClusteringSpec(("value",), "zorder", "rank", weights=(1.0,))


def _plain_commit(path: str) -> None:
    """Another writer's append of one file: no zorder run, no txn."""
    _commit_run(path, None)


def _clean_up_the_log(path: str) -> None:
    """What Delta's log cleanup leaves: a checkpoint, and no commit before it."""
    table = DeltaTable(path)
    table.create_checkpoint()
    version = table.version()
    for commit in Path(path, "_delta_log").glob("*.json"):
        if int(commit.name[:20]) < version:
            commit.unlink()


def test_the_kept_spec_outlasts_the_commits_that_recorded_it(tmp_path: Path) -> None:
    path = _copy("table-with-dv-small", tmp_path)
    assert DeltaTable(path).protocol().min_writer_version == 7  # no properties from zorder
    _commit_run(path, SPEC)
    assert DeltaTable(path).transaction_version(SPEC_TRANSACTION) == int(SPEC.fingerprint, 16)
    kept = Path(path, "_zorder", "specs", f"{SPEC.fingerprint}.json")
    assert json.loads(kept.read_text())["zorder.clustering.weights"] == "[1.0]"
    _plain_commit(path)
    _clean_up_the_log(path)
    assert zorder.describe(path).clustering is None  # no zorder commit is left in the log
    assert zorder.describe(path).spec == SPEC


def test_without_its_file_or_with_a_damaged_one_no_spec_is_made_up(tmp_path: Path) -> None:
    path = _copy("table-with-dv-small", tmp_path)
    _commit_run(path, SPEC)
    _plain_commit(path)
    kept = Path(path, "_zorder", "specs", f"{SPEC.fingerprint}.json")
    kept.unlink()
    assert zorder.describe(path).spec == SPEC  # the commit that recorded it is still there
    _clean_up_the_log(path)
    assert zorder.describe(path).spec is None  # gone with its commit
    kept.write_text('{"zorder.clustering.columns": "[\\"other\\"]"}')  # another spec's
    assert read_spec_file(Storage.of(path), SPEC.fingerprint) is None
    assert zorder.describe(path).spec is None
    kept.write_text("{not json")
    assert read_spec_file(Storage.of(path), SPEC.fingerprint) is None


def test_a_restore_past_every_zorder_commit_takes_the_kept_spec_back(tmp_path: Path) -> None:
    path = _copy("table-with-dv-small", tmp_path)
    _commit_run(path, SPEC)
    zorder.restore(path, version=1)  # the log still holds every commit: none records one
    assert zorder.describe(path).spec is None


def test_the_spec_file_is_written_once_and_read_back(tmp_path: Path) -> None:
    storage = Storage.of(str(tmp_path))
    write_spec_file(storage, SPEC)
    kept = tmp_path / "_zorder" / "specs" / f"{SPEC.fingerprint}.json"
    written = kept.stat().st_mtime_ns
    write_spec_file(storage, SPEC)
    assert kept.stat().st_mtime_ns == written  # already there: not written again
    assert read_spec_file(storage, SPEC.fingerprint) == SPEC


def test_delta_rs_vacuum_leaves_the_spec_file(tmp_path: Path) -> None:
    path = _copy("table-with-dv-small", tmp_path)
    _commit_run(path, SPEC)
    kept = Path(path, "_zorder", "specs", f"{SPEC.fingerprint}.json")
    aged = kept.stat().st_mtime - 30 * 86_400
    os.utime(kept, (aged, aged))
    orphan = Path(path, "orphan.parquet")
    orphan.write_bytes(b"not a table's file")
    os.utime(orphan, (aged, aged))
    listed = DeltaTable(path).vacuum(
        retention_hours=0, enforce_retention_duration=False, dry_run=True, full=True
    )
    assert "orphan.parquet" in listed  # it does delete what no version references...
    assert not [f for f in listed if f.startswith("_zorder")]  # ...but not under _zorder/
