"""`zorder write` on a terminal: the status line of an in-process write (files written of
planned, rows), on a real pseudo-terminal."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]


def on_a_pty(*args: str, timeout: float = 600) -> tuple[int, str]:
    """``zorder ARGS`` run with stdin, stdout and stderr on one pseudo-terminal: its exit
    code and what the terminal received, escape codes removed."""
    leader, follower = os.openpty()
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
        "TERM": "xterm-256color",
        "COLUMNS": "250",  # rich cuts a longer line short with an ellipsis
        "LINES": "50",
    }
    env.pop("NO_COLOR", None)
    env.pop("TERM_PROGRAM", None)
    child = subprocess.Popen(
        [sys.executable, "-m", "zorder", *args],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
        close_fds=True,
    )
    os.close(follower)
    received = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # EIO: the child closed the terminal
                    chunk = b""
                if not chunk:
                    break
                received += chunk
            elif child.poll() is not None:
                break
        code = child.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if child.poll() is None:
            child.kill()
        os.close(leader)
    text = received.decode("utf-8", "replace")
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07", "", text)
    return code, plain.replace("\r", "\n")


def parquet_source(directory: Path, files: int, rows_each: int) -> Path:
    directory.mkdir()
    for number in range(files):
        ids = pa.array(range(number * rows_each, (number + 1) * rows_each), pa.int64())
        a = pa.compute.multiply(pa.compute.bit_wise_and(ids, 1023), 7)
        pq.write_table(pa.table({"a": a, "id": ids}), directory / f"part-{number}.parquet")
    return directory


def test_an_in_process_write_shows_files_written_of_planned_and_rows(tmp_path: Path) -> None:
    source = parquet_source(tmp_path / "source", files=2, rows_each=50_000)
    dest = tmp_path / "t"
    code, shown = on_a_pty(
        "write", str(source), str(dest), "--by", "a,id", "--engine", "arrow", "--num-files", "5"
    )
    assert code == 0, shown
    counted = re.findall(r"clustering and writing (\d+)/5 files ([\d,]+) rows", shown)
    assert counted, shown
    assert all(int(done) <= 5 for done, _ in counted)
    # Rows climb with the files: never more than were written, 100,000.
    assert all(int(rows.replace(",", "")) <= 100_000 for _, rows in counted)
