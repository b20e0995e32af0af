"""The Python worker daemon's import-cache patch (no JVM: the daemon module alone)."""

from __future__ import annotations

import importlib
import os
import sys
import types
from pathlib import Path

import pytest

from zorder import worker_daemon as worker


@pytest.fixture
def invalidations(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    monkeypatch.setattr(importlib, "invalidate_caches", lambda: calls.append(1))
    monkeypatch.setattr(worker, "NEEDED", True)
    return calls


def _patched_importlib() -> types.ModuleType:
    module = types.ModuleType("fake_worker_util")
    module.importlib = importlib  # type: ignore[attr-defined]
    assert worker.install(module)
    return module


def test_invalidates_only_when_the_path_or_an_entry_changed(
    invalidations: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])  # (syspath_prepend invalidates)
    proxy = _patched_importlib().importlib
    proxy.invalidate_caches()
    proxy.invalidate_caches()
    assert len(invalidations) == 1  # the first task, then nothing changed

    (tmp_path / "new_module.py").write_text("VALUE = 1\n")
    # A directory's mtime can be coarse; make the change visible whatever the file system.
    os.utime(tmp_path, ns=(0, os.stat(tmp_path).st_mtime_ns + 1_000_000_000))
    proxy.invalidate_caches()
    assert len(invalidations) == 2  # a file appeared in a path directory

    added = tmp_path / "more"
    added.mkdir()
    sys.path.insert(0, str(added))
    proxy.invalidate_caches()
    proxy.invalidate_caches()
    assert len(invalidations) == 3  # a new path entry, once


def test_a_path_entry_that_appears_later_invalidates(
    invalidations: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    later = tmp_path / "later"
    monkeypatch.setattr(sys, "path", [str(later), *sys.path])
    proxy = _patched_importlib().importlib
    proxy.invalidate_caches()
    proxy.invalidate_caches()
    later.mkdir()
    proxy.invalidate_caches()
    assert len(invalidations) == 2


def test_the_rest_of_importlib_passes_through(invalidations: list[int]) -> None:
    proxy = _patched_importlib().importlib
    assert proxy.import_module is importlib.import_module


def test_install_leaves_alone_what_it_does_not_recognise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(worker, "NEEDED", True)
    changed = types.ModuleType("other_worker_util")  # set-up without importlib
    assert not worker.install(changed)
    assert not hasattr(changed, "importlib")
    monkeypatch.setattr(worker, "NEEDED", False)
    untouched = types.ModuleType("fake_worker_util")
    untouched.importlib = importlib  # type: ignore[attr-defined]
    assert not worker.install(untouched)
    assert untouched.importlib is importlib


def test_the_daemon_starts_without_warnings() -> None:
    """Run as Spark runs it, with warnings as errors: it must get as far as its port."""
    import subprocess

    child = subprocess.Popen(
        [sys.executable, "-W", "error", "-m", "zorder.worker_daemon"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONWARNINGS": "error"},
    )
    try:
        assert child.stdout is not None
        port = child.stdout.read(4)  # pyspark's daemon writes its port as a 4-byte int first
    finally:
        child.kill()
        _, errors = child.communicate(timeout=30)
    assert len(port) == 4, errors.decode()
    assert b"Warning" not in errors, errors.decode()
