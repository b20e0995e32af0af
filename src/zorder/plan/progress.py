"""The phases a run names, for the status line and for its timings.

A run says what it does now with :func:`phase` (counting, sampling, clustering
and writing, statistics, commit) and, in the in-process engine, counts the files
it writes with :func:`files_planned`. Both do nothing but time the phase when no
status line shows, so the engines call them unconditionally. The status line
itself (rich, Spark's tasks) is :mod:`zorder.api.progress`, which shows the
:class:`Shown` state set here (:func:`showing_as`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = [
    "FileProgress",
    "Shown",
    "files_planned",
    "phase",
    "phase_seconds",
    "showing",
    "showing_as",
    "timed_phases",
]


@dataclass(frozen=True)
class FileProgress:
    """The in-process engine's files: written of planned, and the rows written."""

    files_done: int
    files_total: int
    rows: int


class Shown:
    """The phase a status line shows; set by the run, read by the display's thread.

    A new phase is drawn at once (``redraw``), not at the next tick: a phase
    shorter than a quarter second is still seen.
    """

    def __init__(self) -> None:
        self.name = ""
        self.redraw: Callable[[], None] = lambda: None
        self.files: FileProgress | None = None
        self.lock = threading.Lock()  # files are counted by the writers' threads


_SHOWING: ContextVar[Shown | None] = ContextVar("zorder_progress_phase", default=None)
# When each phase of the running operation began (see timed_phases).
_MARKS: ContextVar[list[tuple[str, float]] | None] = ContextVar("zorder_phase_marks", default=None)


def showing() -> Shown | None:
    """The status line's state that shows now, if any."""
    return _SHOWING.get()


@contextmanager
def showing_as(shown: Shown) -> Iterator[None]:
    """``shown`` is what :func:`phase` and :func:`files_planned` tell inside the block."""
    token = _SHOWING.set(shown)
    try:
        yield
    finally:
        _SHOWING.reset(token)


@contextmanager
def timed_phases() -> Iterator[None]:
    """Time the phases :func:`phase` names inside the block (read with :func:`phase_seconds`)."""
    token = _MARKS.set([("checking", time.perf_counter())])
    try:
        yield
    finally:
        _MARKS.reset(token)


def phase_seconds() -> tuple[tuple[str, float], ...]:
    """Each phase so far in the :func:`timed_phases` block and its seconds, in order; a phase
    named twice (a partitioned write counts, then samples) adds up."""
    marks = _MARKS.get()
    if not marks:
        return ()
    ends = [at for _, at in marks[1:]] + [time.perf_counter()]
    totals: dict[str, float] = {}
    for (name, began), ended in zip(marks, ends, strict=True):
        totals[name] = totals.get(name, 0.0) + ended - began
    return tuple(totals.items())


def phase(name: str) -> None:
    """Say what the operation does now (``"sampling"``...): on the status line, if one
    shows, and to the phase timing of :func:`timed_phases`."""
    marks = _MARKS.get()
    if marks is not None:
        marks.append((name, time.perf_counter()))
    current = _SHOWING.get()
    if current is not None:
        current.name = name
        current.redraw()


def files_planned(total: int) -> Callable[[int], None]:
    """Show ``0/total files`` on the status line that shows now, if any; the function
    returned counts one file written and its rows (from any thread)."""
    current = _SHOWING.get()
    if current is None:
        return lambda rows: None
    shown = current
    shown.files = FileProgress(0, total, 0)
    shown.redraw()

    def written(rows: int) -> None:
        with shown.lock:
            was = shown.files or FileProgress(0, total, 0)
            shown.files = FileProgress(was.files_done + 1, was.files_total, was.rows + rows)
        shown.redraw()

    return written
