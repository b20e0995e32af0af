"""PySpark's Python daemon, less a cost that every Python task pays on Python 3.10/3.11.

Before each task, pyspark's worker calls ``importlib.invalidate_caches()``.
On Python 3.10 and 3.11 that re-reads the directory of every zip archive an
importer holds (CPython gh-103200, fixed in 3.12), and the workers import
pyspark itself from ``pyspark.zip``, one zip importer per package: about
70 ms of CPU a task, measured here, nearly what computing the clustering keys
of 500,000 rows costs. Import caches go stale only when an entry of
``sys.path`` appears, disappears or changes (a file added to a directory, an
archive replaced), so this daemon has pyspark's worker invalidate them only
then: when the path or one of its entries' modification times differs from
the previous task's. Spark 4.2 makes the same saving itself (SPARK-54744).

:func:`zorder.spark.local_session` starts its local Python workers through
this module (``spark.python.daemon.module``, Spark's hook for custom
daemons); any session whose workers can import zorder can set the same option.

It lies outside :mod:`zorder.spark` on purpose: Spark runs it as
``python -m zorder.worker_daemon``, and a module that its own package's
``__init__`` imports first is run twice over (runpy's RuntimeWarning
"found in sys.modules after import of package"). ``zorder``'s ``__init__``
imports nothing eagerly, so this module is loaded once, as ``__main__``.
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType
from typing import Any

__all__ = ["NEEDED", "install"]

# Python 3.12 reads a zip's directory only when the invalidated importer is next used.
NEEDED = sys.version_info < (3, 12)


def _path_state() -> tuple[tuple[str, int | None], ...]:
    """Each ``sys.path`` entry with its modification time (None if it does not exist)."""
    state = []
    for entry in sys.path:
        try:
            mtime: int | None = os.stat(entry or ".").st_mtime_ns
        except (OSError, TypeError, ValueError):
            mtime = None
        state.append((entry, mtime))
    return tuple(state)


class _InvalidateOnPathChanges:
    """``importlib`` as pyspark's worker sees it, invalidating only when the path changed."""

    def __init__(self) -> None:
        self._seen: tuple[tuple[str, int | None], ...] | None = None

    def invalidate_caches(self) -> None:
        state = _path_state()
        if state != self._seen:
            importlib.invalidate_caches()
            self._seen = state

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib, name)


def install(worker_util: ModuleType | None = None) -> bool:
    """Have pyspark's per-task set-up invalidate import caches only when the path changed.

    Returns whether it did: not on Python 3.12+, and not on a pyspark whose
    worker set-up no longer calls ``importlib.invalidate_caches`` itself.
    """
    if not NEEDED:
        return False
    if worker_util is None:
        from pyspark import worker_util as pyspark_worker_util

        worker_util = pyspark_worker_util
    if getattr(worker_util, "importlib", None) is not importlib:
        return False
    setattr(worker_util, "importlib", _InvalidateOnPathChanges())  # noqa: B010
    return True


if __name__ == "__main__":
    install()
    # pyspark's daemon reads the worker module's name from sys.argv when imported.
    from pyspark import daemon

    daemon.manager()  # type: ignore[no-untyped-call]
