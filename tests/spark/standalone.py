"""A Spark standalone cluster on 127.0.0.1: a master and a worker, each a process of its own.

Both start from the installed pyspark's ``bin/spark-class`` (every pyspark
wheel carries it), as on a cluster set up by hand. The worker's executors run
Python ``executor_python()``: an interpreter without zorder, NumPy or pyarrow
(Debian's ``/usr/bin/python3``), which sees only pyspark and py4j, as a node
whose Spark distribution ships ``python/lib/pyspark.zip`` would. Everything
binds to loopback; both processes are stopped by their pids.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import py4j
import pyspark

from tests.spark.jvm import QUICK_JVM_OPTIONS

LOOPBACK = "127.0.0.1"
EXECUTOR_PYTHON_CANDIDATES = ("/usr/bin/python3",)
ABSENT = ("zorder", "pyarrow", "numpy")  # what the executors' Python must not have
START_TIMEOUT = 60.0

# pyspark refuses a worker whose Python's minor version is not the driver's (this one's).
_PROBE = (
    "import importlib.util, sys; "
    f"sys.exit(any(importlib.util.find_spec(m) for m in {ABSENT!r}) "
    f"or sys.version_info[:2] != {tuple(sys.version_info[:2])!r})"
)


def executor_python() -> str | None:
    """A Python of this minor version without zorder, NumPy, pyarrow, as the executors see it."""
    for candidate in EXECUTOR_PYTHON_CANDIDATES:
        if not os.access(candidate, os.X_OK):
            continue
        probe = subprocess.run(
            [candidate, "-c", _PROBE], env=_clean_environment(), capture_output=True, timeout=30
        )
        if probe.returncode == 0:
            return candidate
    return None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return int(probe.getsockname()[1])


@dataclass
class Standalone:
    """A running master and worker; ``url`` is what ``SparkSession.builder.master`` takes."""

    url: str
    web_url: str
    root: Path
    python: str
    processes: dict[str, subprocess.Popen[bytes]]

    def state(self) -> dict[str, object]:
        """The master's status (its web UI's JSON): workers, cores, applications."""
        with urllib.request.urlopen(f"{self.web_url}/json/", timeout=5) as answer:
            status: dict[str, object] = json.load(answer)
        return status

    def client_environment(self) -> dict[str, str]:
        """A driver's environment on this cluster: loopback and the cluster's
        ``spark-defaults.conf``, nothing of this process's Spark or Python settings."""
        conf = str(self.root / "conf")
        return _clean_environment() | {"SPARK_LOCAL_IP": LOOPBACK, "SPARK_CONF_DIR": conf}

    def logs(self, tail: int = 4000) -> str:
        """The end of the master's, the worker's and each executor's log."""
        files = [self.root / "master.log", self.root / "worker.log"]
        files += sorted((self.root / "work").glob("app-*/*/std*"))
        parts = []
        for path in files:
            text = path.read_text(errors="replace") if path.exists() else "(none)"
            parts.append(f"--- {path.relative_to(self.root)} ---\n{text[-tail:]}")
        return "\n".join(parts)


def _python_path(root: Path) -> Path:
    """A directory holding pyspark and py4j only: the executors' PYTHONPATH."""
    path = root / "executor-pythonpath"
    path.mkdir()
    for package in (pyspark, py4j):
        (path / package.__name__).symlink_to(Path(str(package.__file__)).parent)
    return path


def _clean_environment() -> dict[str, str]:
    """This process's environment without its Spark and Python settings."""
    skip = ("SPARK_", "PYSPARK_", "PYTHONPATH", "PYTHONHOME")
    return {k: v for k, v in os.environ.items() if not k.startswith(skip)}


def _environment(root: Path) -> dict[str, str]:
    """The master's and the worker's: Spark from pyspark, loopback, the cluster's conf."""
    conf = root / "conf"  # the cluster's spark-defaults.conf; no log4j settings from elsewhere
    conf.mkdir()
    # For every application's driver and executors (short-lived JVMs start sooner).
    (conf / "spark-defaults.conf").write_text(
        f"spark.driver.extraJavaOptions {QUICK_JVM_OPTIONS}\n"
        f"spark.executor.extraJavaOptions {QUICK_JVM_OPTIONS}\n"
    )
    return _clean_environment() | {
        "SPARK_HOME": str(Path(str(pyspark.__file__)).parent),
        "SPARK_CONF_DIR": str(conf),
        "SPARK_LOCAL_IP": LOOPBACK,
        "SPARK_DAEMON_JAVA_OPTS": QUICK_JVM_OPTIONS,
        "SPARK_DAEMON_MEMORY": "256m",
        "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",  # no port 6066
        "PYTHONPATH": str(_python_path(root)),  # what the executors' Python workers import
    }


def _start(name: str, args: list[str], env: dict[str, str], root: Path) -> subprocess.Popen[bytes]:
    spark_class = Path(env["SPARK_HOME"]) / "bin" / "spark-class"
    with (root / f"{name}.log").open("wb") as log:
        return subprocess.Popen(
            [str(spark_class), *args],
            env=env,
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its executors in its group, none in pytest's
        )


def _wait(cluster: Standalone, what: str, ready: Callable[[], bool]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        for name, process in cluster.processes.items():
            if process.poll() is not None:
                raise RuntimeError(f"the {name} exited ({process.returncode})\n{cluster.logs()}")
        try:
            if ready():
                return
        # Not up yet; or up, but answering /json/ with its HTML page before the JSON handler
        # is attached (seen once in CI on 4.3.0).
        except (OSError, ValueError):
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} not ready in {START_TIMEOUT:.0f} s\n{cluster.logs()}")
        time.sleep(0.2)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate by pid, then kill; then whatever it started and left behind (its group)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # an executor the worker did not stop


def _alive(pgid: int, timeout: float = 10.0) -> bool:
    """Whether a process of group ``pgid`` is left after ``timeout`` (killed ones take a moment)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        time.sleep(0.1)
    return True


@contextmanager
def standalone_cluster(root: Path, *, cores: int = 1, memory: str = "1g") -> Iterator[Standalone]:
    """Start a master and one worker under ``root`` (logs, work dir); stop both on exit."""
    python = executor_python()
    if python is None:
        raise LookupError(
            f"no Python without {', '.join(ABSENT)} among {EXECUTOR_PYTHON_CANDIDATES}"
        )
    if shutil.which("java") is None and "JAVA_HOME" not in os.environ:
        raise LookupError("no java")
    env = _environment(root)
    port, web = free_port(), free_port()
    cluster = Standalone(f"spark://{LOOPBACK}:{port}", f"http://{LOOPBACK}:{web}", root, python, {})
    master = ["org.apache.spark.deploy.master.Master", "--host", LOOPBACK]
    worker = ["org.apache.spark.deploy.worker.Worker", cluster.url, "--host", LOOPBACK]
    try:
        cluster.processes["master"] = _start(
            "master", [*master, "--port", str(port), "--webui-port", str(web)], env, root
        )
        _wait(cluster, "the master", lambda: bool(cluster.state()))
        worker += ["--cores", str(cores), "--memory", memory, "--work-dir", str(root / "work")]
        worker += ["--port", str(free_port()), "--webui-port", str(free_port())]
        cluster.processes["worker"] = _start("worker", worker, env, root)
        _wait(cluster, "the worker", lambda: cluster.state().get("aliveworkers") == 1)
        yield cluster
    finally:
        for process in reversed(cluster.processes.values()):  # the worker first
            _stop(process)
        survivors = [p.pid for p in cluster.processes.values() if _alive(p.pid)]
        if survivors:
            raise RuntimeError(f"processes of groups {survivors} survived the cluster")


def _exit(signum: int, frame: object) -> None:
    raise SystemExit(0)


if (
    __name__ == "__main__"
):  # a cluster to try by hand: python -m tests.spark.standalone DIR [SECONDS]
    signal.signal(signal.SIGTERM, _exit)  # stopped as on ^C: the cluster with it
    with standalone_cluster(Path(sys.argv[1])) as running:
        print(running.url, running.web_url, flush=True)
        with suppress(KeyboardInterrupt):
            time.sleep(float(sys.argv[2]) if len(sys.argv) > 2 else 3600)
