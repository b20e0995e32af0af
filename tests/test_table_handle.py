"""zorder.Table without a JVM: a delta-rs table and one Delta Spark wrote, opened once."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake

import zorder
from tests.conftest import LogReads
from zorder.errors import InvalidArgumentError
from zorder.table import Storage, normalize_uri

DATA = Path(__file__).parent / "data"


def test_a_handle_reads_a_delta_rs_table_in_process(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"x": list(range(10)), "s": [f"v{i}" for i in range(10)]}))
    write_deltalake(path, pa.table({"x": [10, 11], "s": ["v10", "v11"]}), mode="append")
    table = zorder.Table(path)
    assert repr(table) == f"Table({table.uri!r})"
    assert table.version == 1
    assert [c.version for c in table.history()] == [1, 0]
    assert all(c.clustering is None and c.timestamp is not None for c in table.history())
    assert sorted(table.scan("x >= 5").to_arrow().column("x").to_pylist()) == list(range(5, 12))
    assert table.scan(version=0).to_arrow().num_rows == 10
    assert len(table.stats()) == 2
    assert table.describe().spec is None
    with pytest.raises(InvalidArgumentError, match="non-empty string"):
        zorder.Table("")


def test_a_handle_reads_a_table_delta_spark_wrote() -> None:
    table = zorder.Table(str(DATA / "table-without-dv-small"))
    assert table.history()[0].operation
    assert table.scan().to_arrow().num_rows == table.snapshot().total_rows


def test_a_snapshot_of_the_handle_scans_its_own_version(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"x": list(range(10))}))
    table = zorder.Table(tmp_path / "t")  # a path object names the table too
    first = table.snapshot()
    write_deltalake(path, pa.table({"x": list(range(10, 20))}), mode="append")
    assert (first.version, first.total_rows, len(first.files)) == (0, 10, 1)
    kept = first.scan("x >= 5", columns=["x"])
    assert kept.report.version == 0
    assert sorted(kept.to_arrow().column("x").to_pylist()) == list(range(5, 10))
    # The handle holds the version it opened until it is refreshed.
    assert table.version == 0
    assert table.snapshot().scan("x >= 5").to_arrow().num_rows == 5
    assert table.refresh().version == 1
    assert table.snapshot().scan("x >= 5").to_arrow().num_rows == 15
    assert first.describe().version == 0
    assert table.snapshot(version=0).scan().report == first.scan().report
    with pytest.raises(zorder.errors.VersionNotFoundError):
        table.snapshot(version=7)


def test_the_path_first_functions_give_what_the_handle_gives(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    for start in (0, 100, 200):
        rows = pa.table({"x": list(range(start, start + 100)), "p": [start // 100 % 2] * 100})
        write_deltalake(path, rows, mode="append", partition_by=["p"])
    table = zorder.Table(path)
    where = "x BETWEEN 120 AND 130 OR x = 5"
    planned = zorder.scan(path, where, columns=["x"], version=1)
    handled = table.scan(where, columns=["x"], version=1)
    assert planned.report == handled.report
    assert planned.files == handled.files
    assert planned.to_arrow().equals(handled.to_arrow())
    assert zorder.to_arrow(path, where, limit=3).equals(table.scan(where).to_arrow(3))
    assert zorder.explain(path, where) == table.scan(where).report
    assert zorder.describe(path, columns=["x"]) == table.describe(columns=["x"])
    # vacuum: an orphan file is kept by the week's retention, then listed and deleted by both.
    rows = sorted(table.scan().to_arrow().column("x").to_pylist())
    orphan = Path(path) / "orphan.parquet"
    orphan.write_bytes(b"referenced by no commit")
    assert zorder.vacuum(path) == table.vacuum()
    assert table.vacuum().files == ()
    listed = table.vacuum(retain_hours=0, force=True)
    assert zorder.vacuum(path, retain_hours=0, force=True) == listed
    assert (listed.files, listed.dry_run) == (("orphan.parquet",), True)
    assert orphan.exists()
    deleted = table.vacuum(retain_hours=0, force=True, dry_run=False)
    assert (deleted.files, deleted.dry_run) == (("orphan.parquet",), False)
    assert not orphan.exists()
    assert zorder.vacuum(path, retain_hours=0, force=True).files == ()
    assert sorted(table.scan().to_arrow().column("x").to_pylist()) == rows == list(range(300))
    # skipping_effectiveness: the mean share of rows each filter's scan skips
    filters = ["x < 100", "p = 1"]
    shares = [1 - table.scan(f).report.rows_fraction for f in filters]
    assert zorder.skipping_effectiveness(path, filters) == pytest.approx(sum(shares) / 2)
    assert shares[0] > 0


def test_the_handle_decides_its_zone_and_storage_once(tmp_path: Path) -> None:
    # deltalake writes a timestamp partition value as zone-less text; a handle reads it in
    # its zone, as a Spark session in that zone would.
    path = str(tmp_path / "t")
    instant = dt.datetime(2021, 9, 8, 11, tzinfo=dt.UTC)
    rows = pa.table({"ts": pa.array([instant], pa.timestamp("us", tz="UTC")), "x": [1]})
    write_deltalake(path, rows, partition_by=["ts"])
    assert zorder.Table(path).time_zone == "UTC"  # no session active
    new_york = zorder.Table(path, time_zone="America/New_York")
    assert new_york.time_zone == "America/New_York"
    where = "ts = '2021-09-08 11:00:00'"  # New York's wall clock on both sides
    assert new_york.scan(where).to_arrow().column("x").to_pylist() == [1]
    assert new_york.scan(where).report.files_scanned == 1
    assert zorder.to_arrow(path, where, time_zone="America/New_York").num_rows == 1
    # The partition's text is another instant in each zone: 15:00 UTC in New York.
    instant_filter = "ts = TIMESTAMP'2021-09-08 15:00:00+00:00'"
    assert new_york.scan(instant_filter).to_arrow().num_rows == 1
    assert zorder.Table(path).scan(instant_filter).report.files_scanned == 0
    # One Storage: the location normalized once, one filesystem for every read of it.
    assert isinstance(new_york.storage, Storage)
    assert new_york.storage.uri == new_york.uri == normalize_uri(path)
    assert new_york.storage.filesystem()[0] is new_york.storage.filesystem()[0]
    pinned = new_york.snapshot().table_snapshot.storage
    assert pinned.filesystem()[0] is new_york.storage.filesystem()[0]  # shared by its snapshots
    with pytest.raises(TypeError):  # the options its filesystem was made with stay so
        new_york.storage_options["AWS_REGION"] = "us-east-1"  # type: ignore[index]


def test_an_open_handle_reads_the_log_once(tmp_path: Path, log_reads: LogReads) -> None:
    path = str(tmp_path / "t")
    for start in (0, 10):
        write_deltalake(path, pa.table({"x": list(range(start, start + 10))}), mode="append")
    assert log_reads.count == 0  # deltalake's own writes are not zorder's reads
    table = zorder.Table(path)
    assert log_reads.calls == ["open"]
    assert table.version == 1
    assert table.scan("x >= 5").report.files_total == 2
    assert table.describe().version == 1
    assert len(table.stats()) == 2
    assert table.snapshot(version=1).version == 1  # the version held: no read
    assert table.history()[0].version == 1
    assert log_reads.calls == ["open"]
    table.refresh()
    assert log_reads.calls == ["open", "open"]
    assert table.snapshot(version=0).version == 0  # another version: read for this call
    assert log_reads.count == 3
    assert table.version == 1  # the handle still holds the newest


def test_the_path_first_functions_read_the_log_once(tmp_path: Path, log_reads: LogReads) -> None:
    path = str(tmp_path / "t")
    for start in (0, 10):
        write_deltalake(path, pa.table({"x": list(range(start, start + 10))}), mode="append")
    assert zorder.scan(path, "x < 3", version=0).report.version == 0
    assert zorder.describe(path).version == 1
    assert zorder.to_arrow(path, "x < 3").num_rows == 3
    assert zorder.vacuum(path).files == ()  # reads the newest version, and only that
    assert log_reads.calls == ["open"] * 4


def test_history_numbers_commits_by_their_files(tmp_path: Path) -> None:
    # deltalake 1.6's DeltaTable.history of a table loaded at an older version numbers the
    # newest commits down from the loaded one: the handle reads the commit files instead.
    path = str(tmp_path / "t")
    for i in range(4):
        write_deltalake(path, pa.table({"x": [i]}), mode="append")
    table = zorder.Table(path, version=1)
    assert [c.version for c in table.history()] == [1, 0]
    write_deltalake(path, pa.table({"x": [9]}), mode="overwrite")
    newest = zorder.Table(path)
    assert [c.version for c in newest.history(limit=2)] == [4, 3]
    assert [c.operation for c in newest.history(limit=2)] == ["WRITE", "WRITE"]
    times = [c.timestamp for c in newest.history()]
    assert times == sorted(times, reverse=True)  # type: ignore[type-var]


def _clustered_with_an_append(path: str) -> None:
    rows = pa.table({"a": list(range(400)), "b": [i % 17 for i in range(400)]})
    zorder.write(rows_path := _parquet(path, rows), path, by=["a", "b"], num_files=2)
    assert rows_path
    write_deltalake(path, pa.table({"a": [5, 6], "b": [7, 8]}), mode="append")  # blind


def _parquet(path: str, rows: pa.Table) -> str:
    import pyarrow.parquet as pq

    source = f"{path}-input"
    Path(source).mkdir()
    pq.write_table(rows, f"{source}/part-0.parquet")
    return source


def test_open_then_optimize_reads_the_log_once_to_plan(tmp_path: Path, log_reads: LogReads) -> None:
    path = str(tmp_path / "t")
    _clustered_with_an_append(path)
    before = log_reads.count
    table = zorder.Table(path)
    metrics = table.optimize(engine="arrow")
    assert metrics.files_removed >= 1
    # One read to open (and plan on), one for the commit's check of what landed since.
    assert log_reads.count - before == 2, log_reads.calls
    assert table.scan().to_arrow().num_rows == 402


def test_a_handle_behind_the_log_plans_on_the_newest_version(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _clustered_with_an_append(path)
    table = zorder.Table(path)
    held = table.version
    write_deltalake(path, pa.table({"a": [9], "b": [9]}), mode="append")  # after it opened
    metrics = table.optimize(engine="arrow")
    assert metrics.version is not None
    assert metrics.version > held + 1
    assert metrics.rows == 3  # both blind appends, the later one too
    assert table.scan("a = 9 AND b = 9").to_arrow().num_rows == 2  # the first write's, the new
    assert table.scan().to_arrow().num_rows == 403


def test_the_cli_optimize_reads_the_log_once_to_plan(tmp_path: Path, log_reads: LogReads) -> None:
    from typer.testing import CliRunner

    from zorder.cli.app import app

    path = str(tmp_path / "t")
    _clustered_with_an_append(path)
    before = log_reads.count
    done = CliRunner().invoke(app, ["optimize", path, "--engine", "arrow", "--json"])
    assert done.exit_code == 0, done.output
    assert log_reads.count - before == 2, log_reads.calls
