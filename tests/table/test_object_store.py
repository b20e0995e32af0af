"""Tables in an object store: every JVM-free path against a local S3 server (moto, 127.0.0.1).

The options reach the store only as ``storage_options`` (or ``--storage-option``):
the environment holds no AWS setting, so a path that ignored them would go to
the public endpoint and fail, not pass by luck.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pytest
from deltalake import DeltaTable, write_deltalake
from typer.testing import CliRunner

import zorder
from tests.conftest import S3Server
from zorder.cli import app
from zorder.table import Storage, record_properties

runner = CliRunner()

DAYS = ["2026-11-01", "2026-11-02", "2026-11-03"]


@pytest.fixture
def table(s3_server: S3Server, no_cloud_environment: None) -> tuple[str, dict[str, str]]:
    """A day-partitioned table delta-rs wrote to the S3 server in two commits."""
    uri = f"s3://{s3_server.new_bucket()}/conns"
    options = s3_server.options()
    rows = pa.table(
        {
            "day": [DAYS[i % 3] for i in range(900)],
            "port": [(i * 7919) % 1000 for i in range(900)],
            "host": [f"h{i % 37}" for i in range(900)],
        }
    )
    write_deltalake(uri, rows.slice(0, 600), partition_by=["day"], storage_options=options)
    write_deltalake(uri, rows.slice(600), mode="append", storage_options=options)
    return uri, options


def _deltalake_rows(uri: str, options: dict[str, str]) -> pa.Table:
    return DeltaTable(uri, storage_options=options).to_pyarrow_table()


def _sorted(rows: pa.Table) -> list[tuple[object, ...]]:
    columns = sorted(rows.column_names)
    return sorted(zip(*[rows.column(c).to_pylist() for c in columns], strict=True))


def _data_files(uri: str, options: dict[str, str]) -> set[str]:
    """Every file under the table root but its log."""
    filesystem, root = Storage.of(uri, options).filesystem()
    infos = filesystem.get_file_info(pafs.FileSelector(root, recursive=True))
    paths = {i.path[len(root) + 1 :] for i in infos if i.type == pafs.FileType.File}
    return {p for p in paths if not p.startswith("_delta_log/")}


def test_to_arrow_returns_deltalake_rows_with_filters_limits_and_partitions(
    table: tuple[str, dict[str, str]],
) -> None:
    uri, options = table
    everything = _deltalake_rows(uri, options)
    assert _sorted(zorder.to_arrow(uri, storage_options=options)) == _sorted(everything)

    where = "port < 500 OR host = 'h5'"
    wanted = everything.filter(
        pc.or_(pc.less(everything["port"], 500), pc.equal(everything["host"], "h5"))
    )
    assert wanted.num_rows > 0
    assert _sorted(zorder.to_arrow(uri, where, storage_options=options)) == _sorted(wanted)

    in_day = zorder.to_arrow(uri, f"day = '{DAYS[1]}'", storage_options=options)
    assert in_day.num_rows == 300
    assert set(in_day["day"].to_pylist()) == {DAYS[1]}
    assert zorder.to_arrow(uri, "port >= 0", limit=7, storage_options=options).num_rows == 7


def test_s3a_names_the_same_table(table: tuple[str, dict[str, str]]) -> None:
    uri, options = table
    same = uri.replace("s3://", "s3a://", 1)
    assert _sorted(zorder.to_arrow(same, storage_options=options)) == _sorted(
        _deltalake_rows(uri, options)
    )


def test_explain_describe_and_time_travel(table: tuple[str, dict[str, str]]) -> None:
    uri, options = table
    files = DeltaTable(uri, storage_options=options).file_uris()
    report = zorder.explain(uri, f"day = '{DAYS[0]}'", storage_options=options)
    assert report.files_total == len(files)
    assert 0 < report.files_scanned < report.files_total
    described = zorder.describe(uri, storage_options=options)
    assert described.version == 1
    assert len(described.files) == len(files)
    assert described.rows == 900
    # A timestamp lists the log's commits through the same options.
    filesystem, root = Storage.of(uri, options).filesystem()
    first = filesystem.get_file_info(f"{root}/_delta_log/{0:020}.json").mtime
    assert isinstance(first, dt.datetime)
    assert zorder.to_arrow(uri, timestamp=first, storage_options=options).num_rows == 600
    with pytest.raises(zorder.errors.VersionNotFoundError, match="before the oldest commit"):
        zorder.to_arrow(uri, timestamp="2000-01-01", storage_options=options)
    assert zorder.to_arrow(uri, version=0, storage_options=options).num_rows == 600


def test_blind_append_by_another_writer_is_read(table: tuple[str, dict[str, str]]) -> None:
    uri, options = table
    planned = zorder.scan(uri, "port = 1", storage_options=options)
    extra = pa.table({"day": [DAYS[0]] * 5, "port": [1] * 5, "host": ["late"] * 5})
    write_deltalake(uri, extra, mode="append", storage_options=options)
    assert (
        planned.to_arrow().num_rows
        == _deltalake_rows(uri, options)
        .filter(pc.equal(_deltalake_rows(uri, options)["port"], 1))
        .num_rows
        - 5
    )  # the scan keeps its version
    fresh = zorder.to_arrow(uri, "port = 1", storage_options=options)
    assert fresh.filter(pc.equal(fresh["host"], "late")).num_rows == 5
    assert zorder.describe(uri, storage_options=options).version == 2


def test_properties_commit(table: tuple[str, dict[str, str]]) -> None:
    uri, options = table
    version = record_properties(
        Storage.of(uri, options), {"delta.deletedFileRetentionDuration": "interval 2 days"}
    )
    assert version == 2
    configuration = DeltaTable(uri, storage_options=options).metadata().configuration
    assert configuration["delta.deletedFileRetentionDuration"] == "interval 2 days"
    assert zorder.vacuum(uri, storage_options=options).retain_hours == 48


def test_vacuum_removes_orphans_and_crashed_runs_and_nothing_live(
    table: tuple[str, dict[str, str]],
) -> None:
    uri, options = table
    filesystem, root = Storage.of(uri, options).filesystem()
    live = _data_files(uri, options)
    crashed = f"zorder-00000000-{uuid.uuid4().hex[:12]}/zorder_file=0/part-00000-x.parquet"
    for orphan in ("orphan.parquet", f"day={DAYS[0]}/stray.parquet", crashed):
        with filesystem.open_output_stream(f"{root}/{orphan}") as out:
            out.write(b"not referenced by any version")
    orphans = {"orphan.parquet", f"day={DAYS[0]}/stray.parquet", crashed}

    listed = zorder.vacuum(uri, retain_hours=0, force=True, storage_options=options)
    assert listed.dry_run
    assert set(listed.files) == orphans
    assert _data_files(uri, options) == live | orphans  # a dry run deletes nothing

    deleted = zorder.vacuum(uri, retain_hours=0, force=True, dry_run=False, storage_options=options)
    assert set(deleted.files) == orphans
    assert _data_files(uri, options) == live
    assert zorder.to_arrow(uri, storage_options=options).num_rows == 900


def test_restore_on_the_store_and_a_vacuumed_version_refused(
    table: tuple[str, dict[str, str]],
) -> None:
    uri, options = table
    first = _sorted(DeltaTable(uri, version=0, storage_options=options).to_pyarrow_table())
    with pytest.warns(zorder.errors.UnsafeCommitWarning, match="If-None-Match"):  # moto's endpoint
        restored = zorder.restore(uri, version=0, storage_options=options)
    assert (restored.version, restored.files_removed, restored.files_added) == (2, 3, 0)
    assert _sorted(_deltalake_rows(uri, options)) == first
    filesystem, root = Storage.of(uri, options).filesystem()
    appended = set(DeltaTable(uri, version=1, storage_options=options).file_uris()) - set(
        DeltaTable(uri, version=0, storage_options=options).file_uris()
    )
    gone = sorted(u.removeprefix(f"{uri}/") for u in appended)[1:]
    for path in gone:
        filesystem.delete_file(f"{root}/{path}")  # as a vacuum would
    with (
        pytest.raises(zorder.errors.MissingFilesError) as refused,
        pytest.warns(zorder.errors.UnsafeCommitWarning),
    ):
        zorder.restore(uri, version=1, storage_options=options)
    assert sorted(refused.value.paths) == gone
    assert DeltaTable(uri, storage_options=options).version() == 2


def test_vacuum_leaves_hidden_objects_and_a_nested_table_alone(
    table: tuple[str, dict[str, str]],
) -> None:
    # In an object store directories are only key prefixes: the hidden names and the
    # nested table's _delta_log are found in the keys.
    uri, options = table
    filesystem, root = Storage.of(uri, options).filesystem()
    nested = f"{uri}/day={DAYS[0]}/nested"
    write_deltalake(nested, pa.table({"y": [1, 2]}), storage_options=options)
    write_deltalake(nested, pa.table({"y": [3]}), mode="overwrite", storage_options=options)
    kept = _data_files(uri, options)
    for stray in ("_staging/part-0.parquet", f"day={DAYS[1]}/.tmp/part-0.parquet"):
        with filesystem.open_output_stream(f"{root}/{stray}") as out:
            out.write(b"hidden from vacuum")
    with filesystem.open_output_stream(f"{root}/orphan.parquet") as out:
        out.write(b"not referenced by any version")

    listed = zorder.vacuum(uri, retain_hours=0, force=True, storage_options=options)
    assert listed.files == ("orphan.parquet",)
    deleted = zorder.vacuum(uri, retain_hours=0, force=True, dry_run=False, storage_options=options)
    assert deleted.files == ("orphan.parquet",)
    assert _data_files(uri, options) == kept | {
        "_staging/part-0.parquet",
        f"day={DAYS[1]}/.tmp/part-0.parquet",
    }
    assert DeltaTable(nested, storage_options=options).to_pyarrow_table()["y"].to_pylist() == [3]
    assert DeltaTable(nested, version=0, storage_options=options).to_pyarrow_table().num_rows == 2


def test_cli_takes_storage_options(table: tuple[str, dict[str, str]], tmp_path: Path) -> None:
    uri, options = table
    flags = [f for key, value in options.items() for f in ("--storage-option", f"{key}={value}")]
    queried = runner.invoke(
        app, ["query", uri, "--where", "port = 0", "--json", "--limit", "100", *flags]
    )
    assert queried.exit_code == 0, queried.output
    rows = [json.loads(line) for line in queried.stdout.splitlines() if line.strip()]
    expected = _deltalake_rows(uri, options)
    assert len(rows) == expected.filter(pc.equal(expected["port"], 0)).num_rows > 0
    described = runner.invoke(app, ["describe", uri, "--json", *flags])
    assert described.exit_code == 0, described.output
    assert sum(f["rows"] for f in json.loads(described.stdout)["files"]) == 900
    stats = runner.invoke(app, ["stats", uri, "--json", *flags])
    assert stats.exit_code == 0, stats.output
    vacuumed = runner.invoke(app, ["vacuum", uri, "--json", *flags])
    assert vacuumed.exit_code == 0, vacuumed.output
    assert json.loads(vacuumed.stdout)["files"] == []
    filesystem, root = Storage.of(uri, options).filesystem()
    live = _data_files(uri, options)
    with filesystem.open_output_stream(f"{root}/orphan.parquet") as out:
        out.write(b"no version references this")
    cleaned = runner.invoke(
        app, ["vacuum", uri, "--delete", "--retain-hours", "0", "--force", "--json", *flags]
    )
    assert cleaned.exit_code == 0, cleaned.output
    assert json.loads(cleaned.stdout)["files"] == ["orphan.parquet"]
    assert _data_files(uri, options) == live
    picture = tmp_path / "layout.png"
    plotted = runner.invoke(
        app, ["plot", uri, "--x", "port", "--y", "host", "-o", str(picture), *flags]
    )
    assert plotted.exit_code == 0, plotted.output
    assert picture.stat().st_size > 0


def test_cli_refuses_a_storage_option_that_is_not_key_value(tmp_path: object) -> None:
    result = runner.invoke(app, ["describe", "s3://b/t", "--storage-option", "AWS_REGION"])
    assert result.exit_code == 2
    assert "AWS_REGION" in result.output
    assert "KEY=VALUE" in result.output


def test_a_table_handle_on_the_store(table: tuple[str, dict[str, str]]) -> None:
    uri, options = table
    handle = zorder.Table(uri, storage_options=options)
    assert handle.version == 1
    assert [c.version for c in handle.history()] == [1, 0]
    assert _sorted(handle.scan().to_arrow()) == _sorted(_deltalake_rows(uri, options))
    assert handle.scan(f"day = '{DAYS[0]}'").report.partitions_scanned == 1
    assert len(handle.stats()) == len(DeltaTable(uri, storage_options=options).file_uris())
    assert handle.vacuum().files == ()
    # A snapshot handle and the path-first functions read the store as the handle does.
    first = handle.snapshot(version=0)
    assert first.scan().to_arrow().num_rows == 600
    assert first.scan(f"day = '{DAYS[0]}'").report.files_scanned >= 1
    where = f"day = '{DAYS[1]}' AND port < 500"
    assert zorder.scan(uri, where, storage_options=options).report == handle.scan(where).report
    assert zorder.describe(uri, storage_options=options) == handle.describe()
    assert zorder.vacuum(uri, storage_options=options) == handle.vacuum()
    # One S3 client for the handle's reads and listings.
    assert handle.storage.filesystem()[0] is handle.storage.filesystem()[0]
