"""Which engine runs a write or an optimize: Spark, or this process (pyarrow, no JVM).

The in-process engine (:mod:`zorder.arrow.engine`) holds the rows it
rewrites in memory, so it takes only work within bounds measured for it
(``benchmarks/cold.py``): at most IN_PROCESS_ROWS rows, IN_PROCESS_BYTES of
input files and IN_PROCESS_FILES files. ``engine="auto"`` runs work within
them in process and everything else in Spark; ``engine="arrow"`` refuses work
outside them (or work only Spark can do: a DataFrame, CSV input, direct keys)
before anything is read, naming the reason; ``engine="spark"`` always runs
Spark.
"""

from __future__ import annotations

from dataclasses import dataclass

from zorder.errors import InvalidArgumentError
from zorder.plan.modes import ENGINES, Engine, EngineUsed
from zorder.sizes import size_text

__all__ = [
    "IN_PROCESS_BYTES",
    "IN_PROCESS_FILES",
    "IN_PROCESS_ROWS",
    "EngineChoice",
    "InProcessWork",
    "check_engine",
    "choose_engine",
]

# The largest work the in-process engine takes. Its peak memory there is measured
# in BENCHMARKS.md (benchmarks/cold.py): it holds every row it rewrites (one
# partition's at a time when the table is partitioned) and one file's copy.
IN_PROCESS_ROWS = 4_000_000
IN_PROCESS_BYTES = 256 * 2**20
# Each input file is a few requests to storage: many small files take a cluster's
# Spark job less time than one process's reads.
IN_PROCESS_FILES = 1_000


@dataclass(frozen=True)
class InProcessWork:
    """What a run would read in process: rows, bytes of its input files, files; None for a
    count the log does not give."""

    rows: int | None
    bytes: int
    files: int

    def over_bounds(self) -> str | None:
        """Why this is too much for the in-process engine, or None."""
        if self.rows is None:
            return "the log does not count the rows of every file it reads"
        if self.rows > IN_PROCESS_ROWS:
            return f"{self.rows:,} rows, over the in-process bound of {IN_PROCESS_ROWS:,}"
        if self.bytes > IN_PROCESS_BYTES:
            return (
                f"{self.bytes / 2**20:,.1f} MiB of input files, over the in-process bound of "
                f"{IN_PROCESS_BYTES / 2**20:,.0f} MiB"
            )
        if self.files > IN_PROCESS_FILES:
            return f"{self.files:,} input files, over the in-process bound of {IN_PROCESS_FILES:,}"
        return None

    def describe(self) -> str:
        rows = "?" if self.rows is None else f"{self.rows:,}"
        files = f"{self.files:,} file{'s' if self.files != 1 else ''}"
        return f"{rows} rows in {files} ({size_text(self.bytes)})"


@dataclass(frozen=True)
class EngineChoice:
    """The engine a run uses, and why."""

    engine: EngineUsed
    reason: str


def check_engine(engine: object) -> Engine:
    """``engine`` if it is one of ENGINES; InvalidArgumentError naming it otherwise."""
    if engine not in ENGINES:
        raise InvalidArgumentError(
            f"unknown engine {engine!r}; accepted: {', '.join(repr(e) for e in ENGINES)}"
        )
    return engine


def choose_engine(
    asked: Engine, *, what: str, declined: str | None, work: InProcessWork | None
) -> EngineChoice:
    """The engine for ``what`` (``"optimize of <uri>"``...): Spark when asked for, when the
    in-process engine ``declined`` (its reason) or the ``work`` is over its bounds (None: not
    known without Spark); else this process. ``asked="arrow"`` raises instead of falling
    back, naming the reason."""
    check_engine(asked)
    if asked == "spark":
        return EngineChoice("spark", "engine='spark' was asked for")
    why = declined
    if why is None:
        why = work.over_bounds() if work is not None else "its size is not known without Spark"
    if why is not None:
        if asked == "arrow":
            raise InvalidArgumentError(
                f"engine='arrow' cannot run the {what}: {why}. Use engine='spark' (or "
                "'auto', which chooses Spark for it)"
            )
        return EngineChoice("spark", why)
    assert work is not None
    origin = "engine='arrow' was asked for" if asked == "arrow" else "within the in-process bounds"
    return EngineChoice("arrow", f"{work.describe()}: {origin}")
