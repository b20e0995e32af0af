"""The ``zorder`` command: help, version, and the curve tables."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake
from typer.testing import CliRunner

import zorder
from zorder.cli import app

runner = CliRunner()


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"zorder {zorder.__version__}"
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", zorder.__version__)


def test_help_lists_commands() -> None:
    result = runner.invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert not re.search(r"<(bool|str)>", result.output)  # flags take no value
    assert result.exit_code == 0
    assert "curve" in result.output
    assert "demo" in result.output


@pytest.mark.parametrize(
    "command",
    [
        "write",
        "optimize",
        "advise",
        "describe",
        "vacuum",
        "restore",
        "query",
        "stats",
        "curve",
        "demo",
        "bench",
        "plot",
    ],
)
def test_help_names_values_in_the_words_of_the_command_line(command: str) -> None:
    result = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    options = [line for line in result.output.splitlines() if re.match(r"\W*--(?!help)", line)]
    assert options, result.output
    # No Python types anywhere, --help and the arguments included: a flag takes no value,
    # others are named; a required argument is named plainly in the usage line.
    assert not re.search(r"<(bool|str|float|list\[str\]|int range)>", result.output)
    assert not re.search(r"[{}]", result.output.split("Options")[0])
    if command in ("write", "query", "stats"):
        assert re.search(r"--where +SQL|--by +COLUMNS|--columns +COLUMNS", result.output)
    if command == "write":
        assert "zorder write [OPTIONS] SOURCE DEST" in result.output
        assert re.search(r"--storage-option +KEY=VALUE", result.output)


def test_curve_table_has_every_index_once() -> None:
    result = runner.invoke(app, ["curve", "--curve", "hilbert", "--bits", "2"])
    assert result.exit_code == 0
    numbers = [int(n) for n in re.findall(r"│\s*(\d+)", result.output)]
    # 4 row labels plus 16 cells, each cell index exactly once.
    cells = sorted(numbers[i] for i in range(len(numbers)) if i % 5)
    assert cells == list(range(16))


def test_bad_option_is_a_clear_error() -> None:
    result = runner.invoke(app, ["curve", "--curve", "peano"])
    assert result.exit_code != 0
    assert "peano" in result.output


def test_console_script_runs() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "zorder", "--version"], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == f"zorder {zorder.__version__}"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--by", "nope"], "unknown clustering column 'nope'; table columns: a, b"),
        (["--target-file-size", "12XB"], "invalid size '12XB'"),
        (["--storage-option", "NOEQUALS"], "storage option 'NOEQUALS' is not KEY=VALUE"),
    ],
)
def test_optimize_refuses_bad_options_before_spark_starts(
    tmp_path: Path, arguments: list[str], message: str
) -> None:
    write_deltalake(tmp_path / "t", pa.table({"a": [1, 2], "b": ["x", "y"]}))
    # No JVM to be found: had Spark been started, the command would fail another way.
    env = {
        **os.environ,
        "JAVA_HOME": str(tmp_path / "no-java"),
        "PATH": os.path.dirname(sys.executable),
    }
    done = subprocess.run(
        [sys.executable, "-m", "zorder", "optimize", str(tmp_path / "t"), *arguments],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("arguments", "env", "message"),
    [
        (["--master", "bogus://x"], {}, "unknown Spark master 'bogus://x'; accepted: local"),
        ([], {"JAVA_HOME": "/nonexistent-java"}, "Spark did not start (local[*]): "),
    ],
)
def test_a_session_that_cannot_start_is_refused_with_the_reason(
    tmp_path: Path, arguments: list[str], env: dict[str, str], message: str
) -> None:
    write_deltalake(tmp_path / "t", pa.table({"a": [1, 2]}))
    # Spark's session: an optimize this small would run in process without --engine spark.
    command = ["optimize", str(tmp_path / "t"), "--by", "a", "--engine", "spark", *arguments]
    done = subprocess.run(
        [sys.executable, "-m", "zorder", *command],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert "bug" not in done.stderr
    assert "Traceback" not in done.stderr
    if env:
        assert "/nonexistent-java/bin/java" in done.stderr  # the JVM's own words, from its log


def test_bench_refuses_where_it_cannot_write_before_spark_starts(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    result = runner.invoke(app, ["bench", "--quick", "--workdir", str(missing)])
    assert result.exit_code == 2
    # Rich wraps the message in its box wherever the path's length puts the line end.
    assert "doesnotexist" in re.sub(r"[\s│]", "", result.output)
    result = runner.invoke(app, ["bench", "--quick", "--json", str(missing / "out.json")])
    assert result.exit_code == 2
    assert "itsdirectorydoesnotexist" in re.sub(r"[\s│]", "", result.output)


@pytest.mark.parametrize("width", [80, 120])
def test_stats_fits_the_terminal_one_line_a_file_no_value_wrapped(
    tmp_path: Path, width: int
) -> None:
    path = tmp_path / "t"
    for i in range(4):
        write_deltalake(
            path,
            pa.table(
                {
                    "src_ip": [f"10.{i}.{j}.{j * 7 % 255}" for j in range(100)],
                    "dst_port": [43000 + i * 100 + j for j in range(100)],
                    "note": ["x" * 40] * 100,
                }
            ),
            mode="append",
        )
    result = runner.invoke(
        app, ["stats", str(path), "--columns", "src_ip,dst_port,note"], env={"COLUMNS": str(width)}
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert all(len(line.rstrip()) <= width for line in lines), result.output
    body = [line for line in lines if line.startswith("│")]
    assert len(body) == 4, result.output  # one line a file: nothing folded onto a second
    starts = {f"10.{i}.0.0" for i in range(4)}
    for line in body:
        cells = [cell.strip() for cell in line.strip("│").split("│")]
        assert cells[1] == "100"
        assert cells[2] in starts  # the first clustering column's bound, whole
        for cell in cells:  # every value whole, or visibly cut
            assert cell.endswith("…") or "…" not in cell
    assert "4 files, 400" in result.output
    single = tmp_path / "single"
    write_deltalake(single, pa.table({"a": [1, 2]}))
    described = runner.invoke(app, ["describe", str(single)], env={"COLUMNS": str(width)})
    assert "1 file, 2 rows" in described.output
    assert "1 files" not in described.output


def test_query_never_hides_the_filtered_column(tmp_path: Path) -> None:
    path = tmp_path / "wide"
    columns = {f"c{i:02d}": [f"value-{i}-{j}" for j in range(5)] for i in range(12)}
    columns["c05"] = [str(j) for j in range(5)]
    write_deltalake(path, pa.table(columns))
    result = runner.invoke(app, ["query", str(path), "--where", "C05 = '3'"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    header = next(line for line in result.output.splitlines() if line.startswith("┃"))
    assert "c05" in header  # as the table spells it, moved to the front
    assert "…" in header  # not every column fits: others are left out, not it
    hidden = result.output.split("more columns:")[1].split("(--columns")[0]
    assert "c05" not in hidden
    wide_enough = runner.invoke(
        app, ["query", str(path), "--where", "c05 = '3'"], env={"COLUMNS": "300"}
    )
    header = next(line for line in wide_enough.output.splitlines() if line.startswith("┃"))
    assert header.index("c04") < header.index("c05") < header.index("c06")  # order kept


def test_masters_spark_takes_pass_the_check_and_others_are_named() -> None:
    from zorder.spark.session import check_master

    for master in [
        "local",
        "local[2]",
        "local[*]",
        "local[4,2]",
        "local-cluster[2,1,1024]",
        "spark://127.0.0.1:7077",
        "k8s://https://host:443",
        "yarn",
    ]:
        check_master(master)
    for master in ["bogus://x", "local[0]", "local[x]", "", "spark://", "yarn-cluster"]:
        with pytest.raises(zorder.errors.InvalidArgumentError, match="unknown Spark master"):
            check_master(master)


def test_vacuum_lists_then_deletes_and_refuses_a_short_retention(tmp_path: Path) -> None:
    path = tmp_path / "t"
    write_deltalake(str(path), pa.table({"a": [1, 2, 3]}))
    orphan = path / "zorder-00000000-000000000000" / "part-0.parquet"
    orphan.parent.mkdir()
    orphan.write_bytes(b"never committed")

    refused = runner.invoke(app, ["vacuum", str(path), "--retain-hours", "1"])
    assert refused.exit_code == 2
    assert "below the safe minimum of 168 hours" in refused.output

    listed = runner.invoke(app, ["vacuum", str(path), "--retain-hours", "0", "--force"])
    assert listed.exit_code == 0, listed.output
    assert "would delete 1 file(s)" in listed.output
    assert orphan.exists()

    deleted = runner.invoke(
        app, ["vacuum", str(path), "--retain-hours", "0", "--force", "--delete"]
    )
    assert deleted.exit_code == 0, deleted.output
    assert "deleted 1 file(s)" in deleted.output
    assert not orphan.exists()
    assert DeltaTable(str(path)).to_pyarrow_table().num_rows == 3


def test_restore_as_a_user_runs_it(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"a": [1, 2]}))
    write_deltalake(path, pa.table({"a": [3]}), mode="append")
    commits = path + "/_delta_log"
    for version, moment in enumerate(("2026-11-24T12:00:00+00:00", "2026-11-24T13:00:00+00:00")):
        seconds = dt.datetime.fromisoformat(moment).timestamp()
        os.utime(f"{commits}/{version:020d}.json", (seconds, seconds))

    shown = runner.invoke(app, ["restore", path, "--version", "0"])
    assert shown.exit_code == 0, shown.output
    words = " ".join(shown.stdout.split())
    assert f"restored version 0 of {path} as version 2" in words
    assert "files removed │ 1" in words
    assert DeltaTable(path).to_pyarrow_table().column("a").to_pylist() == [1, 2]

    same = runner.invoke(app, ["restore", path, "--version", "0"])
    assert "already is what version 0 was: nothing was committed" in " ".join(same.stdout.split())
    # 12:30 in Paris is 11:30 UTC: before the first commit; 14:30 there is version 1.
    early = ["restore", path, "--as-of", "2026-11-24 12:30", "--time-zone", "Europe/Paris"]
    assert runner.invoke(app, early).exit_code == 2
    later = runner.invoke(app, [*early[:3], "2026-11-24 14:30", *early[4:], "--json"])
    assert later.exit_code == 0, later.output
    (appended,) = set(DeltaTable(path, version=1).file_uris()) - set(
        DeltaTable(path, version=0).file_uris()
    )
    assert json.loads(later.stdout) == {
        "table_uri": path,
        "restored_version": 1,
        "version": 3,
        "files_added": 1,
        "files_removed": 0,
        "bytes_added": os.path.getsize(appended),
        "bytes_removed": 0,
    }


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ([], "InvalidArgumentError", "give the version to restore: --version N or --as-of TIME"),
        (["--version", "0", "--as-of", "2026-11-24"], "InvalidArgumentError", "not both"),
        (["--version", "7"], "VersionNotFoundError", "no version 7 yet"),
        (["--version", "0"], "MissingFilesError", "storage no longer holds 1 of its data file"),
    ],
)
def test_restore_refusals_exit_2_and_commit_nothing(
    tmp_path: Path, arguments: list[str], error: str, message: str
) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"a": [1, 2]}))
    write_deltalake(path, pa.table({"a": [3]}), mode="overwrite")
    for gone in DeltaTable(path, version=0).file_uris():
        os.remove(gone)  # as a vacuum would
    refused = runner.invoke(app, ["restore", path, *arguments, "--json"])
    assert refused.exit_code == 2
    assert refused.stdout == ""
    failure = json.loads(refused.stderr)
    assert (failure["error"], failure["exit_code"]) == (error, 2)
    assert message in failure["message"]
    assert DeltaTable(path).version() == 1


def test_an_unexpected_error_is_reported_as_a_bug_with_its_traceback_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_deltalake(str(tmp_path / "t"), pa.table({"a": [1]}))

    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("oops")

    monkeypatch.setattr(zorder, "describe", broken)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    result = runner.invoke(app, ["stats", str(tmp_path / "t")])
    assert result.exit_code == 1
    assert "internal error: KeyError: 'oops'" in result.output
    assert "This is a bug in zorder" in result.output
    logs = list(tmp_path.glob("zorder-error-*.log"))
    assert len(logs) == 1
    assert "raise KeyError" in logs[0].read_text()
    assert str(logs[0]) in result.output.replace("\n", "")


def test_an_internal_error_is_a_bug_not_a_refusal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_deltalake(str(tmp_path / "t"), pa.table({"a": [1]}))

    def broken(*args: object, **kwargs: object) -> None:
        raise zorder.errors.InternalError("an invariant broke; nothing was committed")

    monkeypatch.setattr(zorder, "describe", broken)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    result = runner.invoke(app, ["stats", str(tmp_path / "t"), "--json"])
    assert result.exit_code == 1  # a refusal would be 2
    failure = json.loads(result.stderr)
    assert (failure["error"], failure["exit_code"]) == ("InternalError", 1)
    assert "traceback" in failure
    result = runner.invoke(app, ["stats", str(tmp_path / "t")])
    assert result.exit_code == 1
    assert "please report it" in result.output


def test_describe_a_table_zorder_did_not_write(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"a": [3, 1], "b": ["x", "y"], "c": [1.5, None]}))
    write_deltalake(path, pa.table({"a": [7], "b": ["z"], "c": [2.5]}), mode="append")
    described = zorder.describe(path)
    assert described.clustering is None
    assert described.columns == ("a", "b", "c")  # no clustering recorded: columns with stats
    assert described.rows == 3
    assert len(described.files) == 2
    assert all(f.run is None and f.name == f.path for f in described.files)
    assert sorted((f.min_values["a"], f.max_values["a"]) for f in described.files) == [
        (1, 3),
        (7, 7),
    ]
    assert zorder.describe(path, columns=["B"]).columns == ("b",)
    with pytest.raises(zorder.errors.ColumnNotFoundError, match="unknown column 'd'"):
        zorder.describe(path, columns=["d"])
    result = runner.invoke(app, ["stats", path])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())  # titles wrap at the terminal's width
    assert "2 files, 3 rows" in text
    assert "no zorder clustering recorded" in text


def test_describe_shows_what_is_not_clustered(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"a": [3, 1], "b": ["x", "y"]}))
    write_deltalake(path, pa.table({"a": [7], "b": ["z"]}), mode="append")
    result = runner.invoke(app, ["describe", path])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "2 files, 3 rows" in text
    assert "no spec recorded (pass --by to write or optimize)" in text
    assert "delta.targetFileSize): not set" in text
    assert "not clustered by the spec: 2 files, 3 rows" in text
    assert "(100% of the bytes)" in text


def test_describe_shows_the_clustering_depth(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    for start in (0, 5, 100):  # [0, 9] and [5, 14] overlap; [100, 109] meets neither
        table = pa.table({"a": list(range(start, start + 10)), "b": [None] * 10, "c": ["x"] * 10})
        write_deltalake(path, table, mode="append")
    result = runner.invoke(app, ["describe", path, "--columns", "a,c"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    lines = result.output.split("clustering depth")[1].splitlines()
    rows = {r[0]: r for r in ([c.strip() for c in line.strip("│").split("│")] for line in lines)}
    # column, avg depth, avg overlaps, histogram, files, constant
    assert rows["a"] == ["a", "1.67", "0.67", "1:1 2:2", "3", "0"]
    assert rows["c"] == ["c", "3.00", "2.00", "3:3", "3", "3"]
    described = json.loads(runner.invoke(app, ["describe", path, "--json"]).output)
    assert described["columns"] == ["a", "c"]  # no spec: the first columns with bounds
    assert described["depth"][0] == {
        "column": "a",
        "files": 3,
        "average_overlaps": pytest.approx(2 / 3),
        "average_depth": pytest.approx(5 / 3),
        "depth_histogram": {"1": 1, "2": 2},
        "constant_files": 0,
        "null_files": 0,
        "unknown_files": 0,
    }
    nulls = runner.invoke(app, ["describe", path, "--columns", "b", "--json"]).output
    assert json.loads(nulls)["depth"][0]["null_files"] == 3  # every row NULL: no range at all
    shown = runner.invoke(app, ["describe", path, "--columns", "b"], env={"COLUMNS": "120"})
    assert re.search(r"│ b +│ +- +│ +- +│ - +│ +0 │ +0 │ +3 │ +0 │", shown.output), shown.output


def test_json_output_of_describe_vacuum_and_explain(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"a": [3, 1], "b": ["x", "y"]}))
    described = json.loads(runner.invoke(app, ["describe", path, "--json"]).output)
    assert described["spec"] is None
    assert [f["rows"] for f in described["files"]] == [2]
    vacuumed = json.loads(runner.invoke(app, ["vacuum", path, "--json"]).output)
    assert vacuumed["files"] == []
    explained = runner.invoke(app, ["query", path, "--where", "a > 2", "--explain", "--json"])
    assert explained.exit_code == 0, explained.output
    assert json.loads(explained.output)["files_total"] == 1
    assert json.loads(explained.output)["planned"] == "`a` > 2"


def test_explain_shows_the_filter_as_planned(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"a": [3, 1], "b": ["x", "y"]}))
    where = "a > 2 AND (a IN (1, 2) OR upper(b) = 'X')"
    explained = runner.invoke(app, ["query", path, "--where", where, "--explain"])
    assert explained.exit_code == 0, explained.output
    shown = " ".join(explained.output.split())  # rich wraps long lines
    assert "filter as planned: `a` > 2 AND (`a` IN (1, 2) OR [kept by statistics:" in shown


def test_errors_go_to_stderr_so_json_output_stays_clean(tmp_path: Path) -> None:
    # A script reading `zorder describe ... --json` must never get a message instead.
    result = runner.invoke(app, ["describe", str(tmp_path / "missing"), "--json"])
    assert result.exit_code == 2
    assert result.stdout == ""
    error = json.loads(result.stderr)  # one JSON object, nothing else
    assert error == {
        "error": "TableNotFoundError",
        "message": f"not a Delta table: {tmp_path / 'missing'} (no such path)",
        "exit_code": 2,
    }
    # Without --json the same error is one red line, still on stderr.
    result = runner.invoke(app, ["describe", str(tmp_path / "missing")])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: not a Delta table")


def test_json_rows_stay_json_lines_when_the_query_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"a": [1, 2, 3]}))
    result = runner.invoke(
        app, ["query", path, "--where", "sha2(cast(a as string), 256) = ''", "--json"]
    )
    assert result.exit_code == 2
    assert result.stdout == ""
    error = json.loads(result.stderr)
    assert error["error"] == "UnsupportedFilterError"
    assert "--spark" in error["message"]
    assert error["exit_code"] == 2


def test_a_bug_under_json_is_one_object_naming_its_traceback_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("oops")

    monkeypatch.setattr(zorder, "describe", broken)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    result = runner.invoke(app, ["describe", str(tmp_path), "--json"])
    assert result.exit_code == 1
    assert result.stdout == ""
    error = json.loads(result.stderr)
    (log,) = tmp_path.glob("zorder-error-*.log")
    assert error == {
        "error": "KeyError",
        "message": "'oops'",
        "exit_code": 1,
        "traceback": str(log),
    }
    assert "raise KeyError" in log.read_text()


def test_a_usage_error_is_typers_own_exit_code_2() -> None:
    result = runner.invoke(app, ["describe", "--json"])  # PATH missing
    assert result.exit_code == 2
    assert result.stdout == ""


def retention_table(path: Path, retention: str | None) -> str:
    configuration = {} if retention is None else {"delta.deletedFileRetentionDuration": retention}
    write_deltalake(str(path), pa.table({"a": [1, 2, 3]}), configuration=configuration)
    return str(path)


def vacuum_json(*arguments: str) -> dict[str, object]:
    result = runner.invoke(app, ["vacuum", *arguments, "--json"])
    assert result.exit_code == 0, result.output
    parsed: dict[str, object] = json.loads(result.stdout)
    return parsed


def test_vacuum_keeps_what_the_table_says_to_keep(tmp_path: Path) -> None:
    plain = retention_table(tmp_path / "plain", None)
    month = retention_table(tmp_path / "month", "interval 30 days")
    assert vacuum_json(plain)["retain_hours"] == 168
    assert vacuum_json(plain)["retention_from"] == "default"
    assert vacuum_json(month)["retain_hours"] == 720
    assert vacuum_json(month)["retention_from"] == "table"
    assert zorder.vacuum(month).retain_hours == 720
    shown = runner.invoke(app, ["vacuum", month])
    assert shown.exit_code == 0, shown.output
    assert "unused for 720 hours (the table's delta.deletedFileRetentionDuration)" in " ".join(
        shown.stdout.split()
    )
    # Less than the table keeps is refused as zorder's own error (deltalake's is not one).
    refused = runner.invoke(app, ["vacuum", month, "--retain-hours", "200", "--json"])
    assert refused.exit_code == 2
    error = json.loads(refused.stderr)
    assert error["error"] == "InvalidArgumentError"
    assert "below the 720 hours the table keeps" in error["message"]
    assert "'interval 30 days'" in error["message"]
    forced = vacuum_json(month, "--retain-hours", "200", "--force")
    assert (forced["retain_hours"], forced["retention_from"]) == (200, "argument")
    assert vacuum_json(month, "--retain-hours", "1000")["retention_from"] == "argument"


def test_a_table_that_keeps_less_than_a_week_is_vacuumed_by_its_own_retention(
    tmp_path: Path,
) -> None:
    # As Delta's VACUUM: the table's own retention is the floor, not Delta's default week.
    day = retention_table(tmp_path / "day", "interval 1 day")
    kept = vacuum_json(day)
    assert (kept["retain_hours"], kept["retention_from"]) == (24, "table")
    assert zorder.vacuum(day).retain_hours == 24
    assert vacuum_json(day, "--retain-hours", "30")["retain_hours"] == 30
    refused = runner.invoke(app, ["vacuum", day, "--retain-hours", "12"])
    assert refused.exit_code == 2
    message = " ".join(refused.stderr.split())
    assert "below the 24 hours the table keeps" in message
    assert "--force" in message
    with pytest.raises(zorder.errors.InvalidArgumentError, match="below the 24 hours"):
        zorder.vacuum(day, retain_hours=1)
    # A table that sets nothing keeps Delta's week.
    plain = retention_table(tmp_path / "plain", None)
    with pytest.raises(zorder.errors.InvalidArgumentError, match="safe minimum of 168 hours"):
        zorder.vacuum(plain, retain_hours=24)
    assert zorder.vacuum(plain, retain_hours=24, force=True).retain_hours == 24


def test_a_retention_zorder_cannot_read_is_named(tmp_path: Path) -> None:
    months = retention_table(tmp_path / "months", "interval 1 month")
    refused = runner.invoke(app, ["vacuum", months])
    assert refused.exit_code == 2
    message = " ".join(refused.stderr.split())
    assert "delta.deletedFileRetentionDuration: 'interval 1 month' counts months" in message
    assert "--retain-hours" in message
    forced = vacuum_json(months, "--retain-hours", "720", "--force")
    assert forced["retain_hours"] == 720


def test_vacuum_help_names_where_the_default_comes_from() -> None:
    result = runner.invoke(app, ["vacuum", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "default: the table's delta.deletedFileRetentionDuration, else 168" in text


def test_time_travel_from_the_command_line(tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"a": [1, 2, 3]}))
    write_deltalake(path, pa.table({"a": [4, 5]}), mode="append")
    write_deltalake(path, pa.table({"a": [9]}), mode="overwrite")

    def rows(*options: str) -> list[int]:
        result = runner.invoke(app, ["query", path, "--json", *options])
        assert result.exit_code == 0, result.stderr
        return sorted(json.loads(line)["a"] for line in result.stdout.splitlines())

    assert rows() == [9]
    assert rows("--version", "0") == [1, 2, 3]
    assert rows("--version", "1", "--where", "a > 2") == [3, 4, 5]
    # A commit's time is its commit file's modification time, as in Delta Spark.
    second = (Path(path) / "_delta_log" / f"{1:020d}.json").stat().st_mtime_ns // 1_000_000
    as_of = dt.datetime.fromtimestamp(second / 1000, dt.UTC).isoformat()
    assert rows("--as-of", as_of) == [1, 2, 3, 4, 5]
    described = runner.invoke(app, ["describe", path, "--version", "1", "--json"])
    assert described.exit_code == 0, described.stderr
    assert json.loads(described.stdout)["version"] == 1
    explained = runner.invoke(app, ["query", path, "--explain", "--version", "0", "--json"])
    assert json.loads(explained.stdout)["version"] == 0
    # A version the log does not hold: one JSON error naming the versions it holds.
    missing = runner.invoke(app, ["query", path, "--version", "7", "--json"])
    assert missing.exit_code == 2
    assert missing.stdout == ""
    error = json.loads(missing.stderr)
    assert error["error"] == "VersionNotFoundError"
    assert "holds versions 0 to 2" in error["message"]


def test_a_file_count_past_the_bound_is_refused_before_anything_runs() -> None:
    from zorder.plan.jobs import file_count
    from zorder.sizes import MAX_FILES

    assert file_count(MAX_FILES, None, None) == MAX_FILES
    with pytest.raises(zorder.errors.InvalidArgumentError, match="more files than one run writes"):
        file_count(10**9, None, None)
    result = runner.invoke(app, ["write", "in", "out", "--num-files", str(10**9)])
    assert result.exit_code == 2
    assert "lessthanorequalto1000000" in re.sub(r"[\s│]", "", result.output)


def test_input_formats_are_found_from_what_the_path_holds(tmp_path: Path) -> None:
    from zorder.api.inputs import input_format

    (tmp_path / "a.csv").write_text("x\n1\n")
    csvs = tmp_path / "csvs"
    csvs.mkdir()
    (csvs / "part-0.csv").write_text("x\n1\n")
    (csvs / "_SUCCESS").write_text("")
    write_deltalake(tmp_path / "delta", pa.table({"x": [1]}))
    parquets = tmp_path / "parquets"
    parquets.mkdir()
    pq.write_table(pa.table({"x": [1]}), parquets / "part-0.parquet")
    assert input_format(str(tmp_path / "a.csv")) == "csv"
    assert input_format(str(csvs)) == "csv"
    assert input_format(str(tmp_path / "delta")) == "delta"
    assert input_format(str(parquets)) == "parquet"
    assert input_format(str(tmp_path / "missing")) == "parquet"  # the read names it


def test_describe_of_a_file_says_it_is_not_a_table(tmp_path: Path) -> None:
    plain = tmp_path / "conns.csv"
    plain.write_text("x\n1\n")
    result = runner.invoke(app, ["describe", str(plain)])
    assert result.exit_code == 2
    assert f"not a Delta table: {plain}" in result.output
    assert "\x1b[" not in result.output


def test_a_parquet_folder_is_told_apart_from_a_missing_path(tmp_path: Path) -> None:
    parquets = tmp_path / "events"
    parquets.mkdir()
    pq.write_table(pa.table({"x": [1, 2]}), parquets / "part-0.parquet")
    result = runner.invoke(app, ["describe", str(parquets), "--json"])
    assert result.exit_code == 2
    message = json.loads(result.stderr)["message"]
    assert message == (
        f"not a Delta table: {parquets} (a folder of Parquet files, not a Delta table: make "
        f"one of it with `zorder write {parquets} DEST --by COLUMNS` (zorder.write in Python))"
    )
    missing = runner.invoke(app, ["query", str(tmp_path / "nope"), "--json"])
    assert json.loads(missing.stderr)["message"].endswith("(no such path)")
    (tmp_path / "empty").mkdir()
    empty = runner.invoke(app, ["stats", str(tmp_path / "empty"), "--json"])
    assert json.loads(empty.stderr)["message"].endswith(
        "(the folder exists but holds no _delta_log)"
    )


def test_a_bug_is_summed_up_in_a_line_or_two_the_trace_in_its_file() -> None:
    from zorder.cli.output import _summary

    java = RuntimeError(
        "An error occurred while calling o45.parquet.\n: org.apache.spark.SparkException: "
        "Job aborted\n\tat org.apache.spark.Foo(Foo.scala:1)\n" + "\tat frame\n" * 300
    )
    assert _summary(java) == (
        "An error occurred while calling o45.parquet. : org.apache.spark.SparkException: "
        "Job aborted"
    )
    assert _summary(ValueError("one\ntwo")) == "one"
    assert _summary(ValueError()) == "ValueError"


@pytest.mark.parametrize("command", ["describe", "stats", "query"])
def test_version_and_as_of_are_refused_in_the_command_line_s_words(
    tmp_path: Path, command: str
) -> None:
    write_deltalake(tmp_path / "t", pa.table({"a": [1]}))
    result = runner.invoke(
        app, [command, str(tmp_path / "t"), "--version", "0", "--as-of", "2026-11-24"]
    )
    assert result.exit_code == 2
    assert "give --version or --as-of, not both" in result.output
    assert "timestamp" not in result.output


@pytest.mark.parametrize("kind", ["parquet", "csv", "delta"])
def test_write_refuses_clustering_columns_the_input_lacks_before_spark_starts(
    tmp_path: Path, kind: str
) -> None:
    rows = pa.table({"src_ip": ["10.0.0.1"], "dst_port": [80]})
    source = tmp_path / f"in.{kind}"
    if kind == "parquet":
        source.mkdir()
        pq.write_table(rows, source / "part-0.parquet")
    elif kind == "csv":
        source.write_text("src_ip,dst_port\n10.0.0.1,80\n")
    else:
        write_deltalake(source, rows)
    env = {**os.environ, "JAVA_HOME": str(tmp_path / "no-java")}  # Spark would not start
    done = subprocess.run(
        [sys.executable, "-m", "zorder", "write", str(source), str(tmp_path / "t"), "--by", "nope"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 2, done.stderr
    assert "unknown clustering column 'nope'; table columns: src_ip, dst_port" in done.stderr
    assert not (tmp_path / "t").exists()


def test_query_answers_with_the_ansi_mode_asked_for(tmp_path: Path) -> None:
    """'5.7' against an int column: an error with ANSI's meaning (Spark 4.x), the row with 5
    for a session with ANSI off (Spark 3.5 casts the string to 5); arithmetic that may wrap
    around with ANSI off is refused by name."""
    path = str(tmp_path / "t")
    write_deltalake(path, pa.table({"a": pa.array([5, 6], pa.int32())}))
    on = runner.invoke(app, ["query", path, "--where", "a = 3", "--json"])
    assert on.exit_code == 0, on.output
    assert on.stdout == ""
    same = runner.invoke(app, ["query", path, "--where", "a = 5", "--no-ansi", "--json"])
    assert same.exit_code == 0, same.output
    assert [json.loads(line) for line in same.stdout.splitlines()] == [{"a": 5}]
    cast = runner.invoke(app, ["query", path, "--where", "a = '5.7'", "--no-ansi", "--json"])
    assert cast.exit_code == 0, cast.output
    assert [json.loads(line) for line in cast.stdout.splitlines()] == [{"a": 5}]
    off = runner.invoke(app, ["query", path, "--where", "a + 1 > 5", "--no-ansi", "--json"])
    assert off.exit_code == 2
    error = json.loads(off.stderr)
    assert error["error"] == "UnsupportedFilterError"
    assert "ANSI mode off" in error["message"]
    assert "a + 1" in error["message"]


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (["--txn-app-id", "hourly"], "txn_app_id was given without txn_version"),
        (["--txn-version", "3"], "txn_version was given without txn_app_id"),
        (["--txn-app-id", "hourly", "--txn-version", "-1"], "between 0 and"),
    ],
)
def test_write_refuses_half_a_transaction_before_spark_starts(
    tmp_path: Path, given: list[str], said: str
) -> None:
    source = tmp_path / "in"
    source.mkdir()
    pq.write_table(pa.table({"a": [1]}), source / "part-0.parquet")
    env = {**os.environ, "JAVA_HOME": str(tmp_path / "no-java")}  # Spark would not start
    done = subprocess.run(
        [sys.executable, "-m", "zorder", "write", str(source), str(tmp_path / "t"), *given],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 2, done.stderr
    assert said in done.stderr
    assert not (tmp_path / "t").exists()


def run_without_java(tmp_path: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """``zorder ARGUMENTS`` where Spark could not start: what it says comes before the JVM."""
    env = {**os.environ, "JAVA_HOME": str(tmp_path / "no-java")}
    return subprocess.run(
        [sys.executable, "-m", "zorder", *arguments], capture_output=True, text=True, env=env
    )


def test_a_missing_input_is_refused_before_spark_starts(tmp_path: Path) -> None:
    started = time.monotonic()
    done = run_without_java(tmp_path, "write", str(tmp_path / "nope"), str(tmp_path / "t"))
    assert done.returncode == 2, done.stderr
    assert f"no input at {tmp_path / 'nope'}" in done.stderr
    assert time.monotonic() - started < 4
    assert not (tmp_path / "t").exists()


@pytest.mark.parametrize(
    ("partitioned", "where", "said"),
    [
        (True, "a > 3", "names a, which are not partition columns"),
        (False, "day = 'x'", "has no partition columns"),
        (True, "day = ", "syntax error"),
    ],
)
def test_optimize_where_is_checked_before_spark_starts(
    tmp_path: Path, partitioned: bool, where: str, said: str
) -> None:
    rows = pa.table({"a": [1, 2], "day": ["x", "y"]})
    write_deltalake(tmp_path / "t", rows, partition_by=["day"] if partitioned else None)
    done = run_without_java(
        tmp_path, "optimize", str(tmp_path / "t"), "--by", "a", "--where", where
    )
    assert done.returncode == 2, done.stderr
    assert said in done.stderr
    assert "Spark did not start" not in done.stderr


def test_a_filter_typo_is_a_syntax_error_on_the_command_line(tmp_path: Path) -> None:
    write_deltalake(tmp_path / "t", pa.table({"ip": ["10.1.2.3"], "port": [443]}))
    typo = runner.invoke(app, ["query", str(tmp_path / "t"), "--where", "ip = 10.1.2.3"])
    assert typo.exit_code == 2
    said = " ".join(typo.output.split())
    assert "syntax error in filter 'ip = 10.1.2.3' at or near '.2'" in said
    assert "--spark" not in said
    right = runner.invoke(
        app, ["query", str(tmp_path / "t"), "--where", "ip = '10.1.2.3'", "--json"]
    )
    assert right.exit_code == 0, right.output
    assert [json.loads(line) for line in right.stdout.splitlines()] == [
        {"ip": "10.1.2.3", "port": 443}
    ]


def test_bloom_filters_option_takes_names_and_rates() -> None:
    from zorder.cli.command import bloom_list

    assert bloom_list(None) is None
    assert bloom_list("") == {}
    assert bloom_list("session_id, user_id:0.001") == {"session_id": 0.01, "user_id": 0.001}
    with pytest.raises(zorder.errors.InvalidArgumentError, match=r"'often' in 'user_id:often'"):
        bloom_list("user_id:often")


def test_bad_bloom_filters_are_refused_before_spark_starts(tmp_path: Path) -> None:
    write_deltalake(tmp_path / "t", pa.table({"a": [1, 2], "session_id": ["x", "y"]}))
    result = CliRunner().invoke(
        app, ["optimize", str(tmp_path / "t"), "--bloom-filters", "session_id:1.5"]
    )
    assert result.exit_code == 2, result.output
    assert "strictly between 0 and 1" in result.output
