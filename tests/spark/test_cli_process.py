"""The ``zorder`` command as a user runs it: a process of its own, its own JVM, its output."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

from tests.test_cli_process import zorder_command

# What Spark and the JVM print unless zorder keeps it out of the terminal.
NOISE = re.compile(
    r"log4j|WARN |NativeCodeLoader|incubator|\[Stage \d+|RuntimeWarning|setLogLevel", re.I
)


@pytest.mark.parametrize("engine", ["spark", "arrow"])
def test_a_write_prints_only_its_own_lines(tmp_path: Path, engine: str) -> None:
    source = tmp_path / "src.parquet"
    pq.write_table(pa.table({"a": list(range(2_000)), "b": [i % 37 for i in range(2_000)]}), source)
    dest = tmp_path / "t"
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    options = ["--by", "a,b", "--num-files", "2", "--engine", engine]
    done = zorder_command("write", str(source), str(dest), *options, temporary=temporary)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "files added" in done.stdout
    assert re.search(rf"│ engine +│ +{engine} \(", done.stdout), done.stdout
    assert not NOISE.search(done.stdout + done.stderr), done.stdout + done.stderr
    assert DeltaTable(str(dest)).to_pyarrow_table().num_rows == 2_000
    assert not list(temporary.glob("zorder-spark-*.log"))  # kept only to explain a failure


def test_a_failure_names_the_spark_log(tmp_path: Path) -> None:
    source = tmp_path / "src.parquet"
    pq.write_table(pa.table({"a": [1, 2, 3]}), source)
    # A partition column is checked once Spark has read the input: the log exists by then.
    # (Spark's: a write this small would run in process without --engine spark.)
    options = ["--by", "a", "--partition-by", "nope", "--engine", "spark"]
    done = zorder_command("write", str(source), str(tmp_path / "t"), *options)
    assert done.returncode == 2
    output = done.stdout + done.stderr
    assert "unknown partition column 'nope'" in output
    log = re.search(r"Spark's log: (\S+)", output)
    assert log is not None, output
    assert "log4j" in Path(log.group(1)).read_text()  # the JVM's banner went there
    assert not NOISE.search(output.replace(log.group(1), "")), output


def test_a_json_failure_is_one_object_naming_the_spark_log(tmp_path: Path) -> None:
    # What a script reads: nothing on stdout, one JSON object on stderr, no JVM noise.
    source = tmp_path / "src.parquet"
    pq.write_table(pa.table({"a": [1, 2, 3]}), source)
    options = ["--by", "a", "--partition-by", "nope", "--engine", "spark", "--json"]
    done = zorder_command("write", str(source), str(tmp_path / "t"), *options)
    assert done.returncode == 2
    assert done.stdout == ""
    error = json.loads(done.stderr)
    assert error["error"] == "ColumnNotFoundError"
    assert "unknown partition column 'nope'" in error["message"]
    assert error["exit_code"] == 2
    assert "log4j" in Path(error["spark_log"]).read_text()


def test_a_filter_spark_cannot_evaluate_is_one_line_naming_it(tmp_path: Path) -> None:
    from deltalake import write_deltalake

    path = tmp_path / "t"
    write_deltalake(path, pa.table({"dst_port": [80, 443, 8080]}))
    done = zorder_command("query", str(path), "--spark", "--where", "dst_port = 'abc'")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Spark cannot evaluate the filter \"dst_port = 'abc'\"" in done.stderr
    assert "CAST_INVALID_INPUT" in done.stderr
    assert '"errorClass"' not in done.stderr  # pyspark's JSON context went to the log
    assert "Traceback" not in done.stderr
