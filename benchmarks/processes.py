"""A command in a cold process: its wall time from launch to exit and its peak memory.

The command runs as a child of this process. Its time is from just before
``Popen`` to ``os.waitpid``'s return. Its memory:

- ``tree_peak_mib``: the peak of the summed resident memory (RSS) of the child
  and every process it started (a Spark driver's JVM, Spark's Python workers),
  read from ``/proc`` every ``SAMPLE_S`` seconds while the child runs. Pages
  that processes share count once per process, so it errs high; a peak
  shorter than the interval can be missed, so it can err low too.
- ``command_peak_mib``: the command's own process's peak RSS, exactly, from
  GNU time (``/usr/bin/time -f %M``, the command run under it) where it is
  installed, else None. It counts descendants the command waited for, as their
  own peaks (a JVM that pyspark leaves to exit by itself is not counted).
- ``largest_process_mib``: the highest peak RSS (``VmHWM``, read with the
  samples, and ``command_peak_mib``) of any one process of the tree, and
  ``peaks_sum_mib`` the sum of every process's own peak (an upper bound of the
  tree's peak). A peak reached in a process's last ``SAMPLE_S`` seconds is
  missed, except the command's own where GNU time measures it.
- ``peak_mib``: the larger of ``tree_peak_mib`` and ``largest_process_mib``,
  the tree's peak as closely as these measures bound it (exact for a command
  that starts no process).

``wait4``'s ``ru_maxrss`` for a child of this process is not used: Linux counts
in it the memory of the process that spawned it, as it was then (exec keeps
the high-water mark of the memory it replaces), so a child of a large
benchmark process shows the benchmark's size. Under GNU time (a small
process) that error is GNU time's size, about 2 MiB.

A descendant still running when the child exits (a JVM shutting down after
its Python parent) is waited for before the next command starts, so that no
run pays for the one before it; ``settle_s`` is how long that took.
"""

from __future__ import annotations

import functools
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

GNU_TIME = "/usr/bin/time"
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
    peak_mib: float
    tree_peak_mib: float
    command_peak_mib: float | None
    largest_process_mib: float
    peaks_sum_mib: float
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


def _peak_kib(pid: int) -> int | None:
    """The peak RSS of ``pid`` so far (``VmHWM``, KiB); None when gone or without memory."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


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
        self.peaks_kib: dict[int, int] = {}
        self.stopped = threading.Event()

    def run(self) -> None:
        while True:
            processes = _processes()
            members = tree(self.root, processes)
            self.seen |= members
            resident = sum(processes[pid][1] for pid in members) * PAGE_BYTES
            self.peak_bytes = max(self.peak_bytes, resident)
            for pid in members:
                peak = _peak_kib(pid)
                if peak is not None:
                    self.peaks_kib[pid] = max(peak, self.peaks_kib.get(pid, 0))
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


@functools.cache
def gnu_time() -> bool:
    """Whether GNU time is installed at ``GNU_TIME`` (not every machine has it)."""
    try:
        done = subprocess.run(
            [GNU_TIME, "-f", "%M", "true"], capture_output=True, text=True, check=False
        )
    except OSError:
        return False
    return done.returncode == 0 and done.stderr.strip().isdigit()


def run_cold(command: Sequence[str], env: Mapping[str, str] | None = None) -> ColdRun:
    """Run ``command`` in a new process; its time, memory and standard output."""
    with (
        tempfile.TemporaryFile("w+") as out,
        tempfile.TemporaryFile("w+") as err,
        tempfile.NamedTemporaryFile("w+") as peak,
    ):
        timed = [GNU_TIME, "-o", peak.name, "-f", "%M"] if gnu_time() else []
        started = time.perf_counter()
        process = subprocess.Popen([*timed, *command], stdout=out, stderr=err, env=env)
        sampler = _TreeSampler(process.pid)
        sampler.start()
        _, status = os.waitpid(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        sampler.stopped.set()
        sampler.join()
        settle_s = _settle(sampler.seen - {process.pid})
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
        # GNU time's last line (before it, "Command exited with non-zero status N").
        command_kib = int(peak.read().split()[-1]) if timed else None
    if process.returncode != 0:
        raise ColdRunError(
            f"{' '.join(command)} exited with {process.returncode}:\n{stdout[-2000:]}"
            f"{stderr[-4000:]}"
        )
    largest_kib = max([*sampler.peaks_kib.values(), command_kib or 0])
    return ColdRun(
        command=list(command),
        seconds=seconds,
        peak_mib=max(sampler.peak_bytes / MIB, largest_kib / 1024),
        tree_peak_mib=sampler.peak_bytes / MIB,
        command_peak_mib=None if command_kib is None else command_kib / 1024,
        largest_process_mib=largest_kib / 1024,
        peaks_sum_mib=sum(sampler.peaks_kib.values()) / 1024,
        processes=len(sampler.seen),
        settle_s=settle_s,
        stdout=stdout,
    )
