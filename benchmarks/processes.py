"""A command in a cold process: its wall time from launch to exit and its peak memory.

The command runs as a child of this process. Its time is from just before
``Popen`` to ``os.wait4``'s return. Its memory is measured two ways:

- ``tree_peak_mib``: the peak of the summed resident memory (RSS) of the child
  and every process it started (a Spark driver's JVM, Spark's Python workers),
  read from ``/proc`` every ``SAMPLE_S`` seconds while the child runs. Pages
  that processes share count once per process, so it errs high; a peak shorter
  than the interval can be missed, so it can err low too.
- ``maxrss_mib``: ``os.wait4``'s ``ru_maxrss``, the largest RSS of the child
  or of any descendant it waited for: one process's peak, not the sum.

A descendant still running when the child exits (a JVM shutting down after
its Python parent) is waited for before the next command starts, so that no
run pays for the one before it; ``settle_s`` is how long that took.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

SAMPLE_S = 0.05
SETTLE_TIMEOUT_S = 120.0
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
MIB = 2**20


class ColdRunError(RuntimeError):
    """The command exited with a non-zero status."""


@dataclass(frozen=True)
class ColdRun:
    """One command's run in a process of its own."""

    command: list[str]
    seconds: float
    tree_peak_mib: float
    maxrss_mib: float
    processes: int  # the child and the descendants seen while it ran
    settle_s: float
    stdout: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _processes() -> dict[int, tuple[int, int]]:
    """Every process on the machine: pid to (parent pid, resident pages)."""
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                text = stat.read()
        except OSError:  # gone since the listing
            continue
        # The command name (field 2) is in parentheses and may hold spaces: split after it.
        fields = text[text.rindex(b")") + 2 :].split()
        found[int(entry.name)] = (int(fields[1]), int(fields[21]))
    return found


def tree(root: int, processes: Mapping[int, tuple[int, int]]) -> set[int]:
    """``root`` and its descendants among ``processes``."""
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in processes.items():
        children.setdefault(parent, []).append(pid)
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid in processes and pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, []))
    return found


class _TreeSampler(threading.Thread):
    """Samples the summed RSS of ``root``'s process tree until stopped."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.peak_bytes = 0
        self.seen: set[int] = set()
        self.stopped = threading.Event()

    def run(self) -> None:
        while True:
            processes = _processes()
            members = tree(self.root, processes)
            self.seen |= members
            resident = sum(processes[pid][1] for pid in members) * PAGE_BYTES
            self.peak_bytes = max(self.peak_bytes, resident)
            if self.stopped.wait(SAMPLE_S):
                return


def _alive(pid: int) -> bool:
    """``pid`` runs (a zombie waits only for its parent to read its status: not running)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read()
    except OSError:
        return False
    return text[text.rindex(b")") + 2 :].split()[0] != b"Z"


def _settle(pids: set[int]) -> float:
    """Wait until none of ``pids`` runs (at most ``SETTLE_TIMEOUT_S``); the seconds it took."""
    started = time.perf_counter()
    while any(_alive(pid) for pid in pids):
        if time.perf_counter() - started > SETTLE_TIMEOUT_S:
            break
        time.sleep(SAMPLE_S)
    return time.perf_counter() - started


def run_cold(command: Sequence[str], env: Mapping[str, str] | None = None) -> ColdRun:
    """Run ``command`` in a new process; its time, memory and standard output."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        process = subprocess.Popen(list(command), stdout=out, stderr=err, env=env)
        sampler = _TreeSampler(process.pid)
        sampler.start()
        # wait4, not Popen.wait: it also gives the child's rusage (ru_maxrss in KiB on Linux).
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        sampler.stopped.set()
        sampler.join()
        settle_s = _settle(sampler.seen - {process.pid})
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if process.returncode != 0:
        raise ColdRunError(
            f"{' '.join(command)} exited with {process.returncode}:\n{stdout[-2000:]}"
            f"{stderr[-4000:]}"
        )
    return ColdRun(
        command=list(command),
        seconds=seconds,
        tree_peak_mib=sampler.peak_bytes / MIB,
        maxrss_mib=usage.ru_maxrss / 1024,
        processes=len(sampler.seen),
        settle_s=settle_s,
        stdout=stdout,
    )
