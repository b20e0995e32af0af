"""Where one ``zorder`` command's output goes, chosen once: a console, or JSON (``--json``).

Results go to stdout; progress, messages and errors to stderr, so stdout
holds only results: with ``--json`` one JSON document (JSON lines for
``query``'s rows) that a failing command leaves empty, never half a message.

Exit codes (the same with and without ``--json``):

- 0: done.
- 1: a bug, an error zorder did not raise on purpose; its traceback went to a file.
- 2: refused: a :class:`~zorder.errors.ZorderError` (bad input, a table zorder
  cannot use), or a usage error typer found in the arguments themselves.

Under ``--json`` an error is one JSON object on stderr::

    {"error": "ColumnNotFoundError", "message": "...", "exit_code": 2}

with ``"traceback"`` (the file) when it is a bug and ``"spark_log"`` when
Spark started. Typer's usage errors are typer's text either way: they come
before a command has chosen its output.
"""

from __future__ import annotations

import dataclasses
import json
import traceback
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer
from rich.console import Console, RenderableType
from rich.text import Text

from zorder.cli import render
from zorder.cli.rows import rows_table

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession

    from zorder.api import ScanReport

__all__ = [
    "EXIT_BUG",
    "EXIT_REFUSED",
    "ConsoleOutput",
    "Failure",
    "JsonOutput",
    "Output",
    "jsonable",
    "output_for",
]

R = TypeVar("R")

EXIT_BUG = 1
EXIT_REFUSED = 2


def jsonable(value: Any) -> Any:
    """A frozen result (dataclasses, mappings, sequences inside) as plain JSON values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return render.plain(value)


@dataclasses.dataclass(frozen=True)
class Failure:
    """Why a command stopped: what its output reports on stderr before exiting."""

    error: str  # the exception's class name
    message: str
    exit_code: int
    traceback: Path | None = None  # a bug's traceback file
    spark_log: Path | None = None

    def to_json(self) -> dict[str, Any]:
        shown = {"error": self.error, "message": self.message, "exit_code": self.exit_code}
        extra = {"traceback": self.traceback, "spark_log": self.spark_log}
        return shown | {k: str(v) for k, v in extra.items() if v is not None}


class Output(ABC):
    """One command invocation's output: its results, its progress, its errors."""

    def __init__(self) -> None:
        self.stderr = Console(stderr=True)

    @abstractmethod
    def result(
        self,
        value: R,
        shown: Callable[[R], Iterable[RenderableType]],
        *,
        as_json: Callable[[R], Any] = jsonable,
    ) -> None:
        """A command's result on stdout: ``shown`` draws it for people, ``as_json`` for --json."""

    @abstractmethod
    def rows(
        self, title: str, table: pa.Table, report: ScanReport, *, pinned: tuple[str, ...] = ()
    ) -> None:
        """``zorder query``'s rows (the ``pinned`` columns always shown), and what was
        scanned for them."""

    @abstractmethod
    def _report(self, failure: Failure) -> None:
        """Say on stderr why the command stopped."""

    @contextmanager
    def status(self, message: str) -> Iterator[None]:
        """A status line on stderr while a block runs (drawn only in a terminal); none inside
        another's (Spark started while a command works: rich before 14 draws one at once)."""
        from rich.errors import LiveError

        shown = self.stderr.status(message)
        try:
            shown.start()
        except LiveError:
            yield
            return
        try:
            yield
        finally:
            shown.stop()

    def working(self, message: str, spark: SparkSession | None) -> AbstractContextManager[None]:
        """The status line while Spark works, drawn only in a terminal: stderr captured in a
        log keeps the command's own lines (see :mod:`zorder.api.progress`)."""
        from zorder.api.progress import spark_status

        return spark_status(message, spark, console=self.stderr, plain_lines=False)

    def refused(self, error: Exception, *, spark_log: Path | None = None) -> NoReturn:
        """An error zorder raised on purpose (a ZorderError): report it, exit code 2."""
        self._report(Failure(type(error).__name__, str(error), EXIT_REFUSED, None, spark_log))
        raise typer.Exit(code=EXIT_REFUSED)

    def bug(self, error: BaseException, log: Path, *, spark_log: Path | None = None) -> NoReturn:
        """An error zorder did not raise on purpose: its traceback to ``log``, exit code 1."""
        log.write_text("".join(traceback.format_exception(error)))
        self._report(Failure(type(error).__name__, _summary(error), EXIT_BUG, log, spark_log))
        raise typer.Exit(code=EXIT_BUG)


def _summary(error: BaseException) -> str:
    """An unexpected error in a line or two: the whole of it is in the traceback file.

    A JVM's error (py4j's) says which call failed on its first line and what the JVM
    threw on the next; hundreds of lines of stack frames follow, which the file keeps.
    """
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if not lines:
        return type(error).__name__
    shown = lines[:2] if lines[0].startswith("An error occurred while calling") else lines[:1]
    return " ".join(shown)[:500]


class ConsoleOutput(Output):
    """Rich tables and lines for people; errors as one red line."""

    def __init__(self) -> None:
        super().__init__()
        self.stdout = Console()

    def result(
        self,
        value: R,
        shown: Callable[[R], Iterable[RenderableType]],
        *,
        as_json: Callable[[R], Any] = jsonable,
    ) -> None:
        for part in shown(value):
            self.stdout.print(part)

    def rows(
        self, title: str, table: pa.Table, report: ScanReport, *, pinned: tuple[str, ...] = ()
    ) -> None:
        shown = rows_table(title, table, self.stdout.width, pinned=pinned)
        for part in (*shown, *render.scan(report)):
            self.stdout.print(part)

    def _report(self, failure: Failure) -> None:
        if failure.traceback is None:
            line = Text.assemble(("error:", "bold red"), f" {failure.message}")
        else:
            line = Text.assemble(
                ("internal error:", "bold red"),
                f" {failure.error}: {failure.message}\n"
                "This is a bug in zorder: please report it with the traceback in "
                f"{failure.traceback}.",
            )
        # Unwrapped: a path or a message cut across lines would not be found by grep.
        self.stderr.print(line, soft_wrap=True)
        if failure.spark_log is not None:
            self.stderr.print(Text(f"Spark's log: {failure.spark_log}"), soft_wrap=True)


class JsonOutput(Output):
    """JSON on stdout for programs (``--json``); an error is one JSON object on stderr."""

    def result(
        self,
        value: R,
        shown: Callable[[R], Iterable[RenderableType]],
        *,
        as_json: Callable[[R], Any] = jsonable,
    ) -> None:
        typer.echo(json.dumps(as_json(value), indent=2))

    def rows(
        self, title: str, table: pa.Table, report: ScanReport, *, pinned: tuple[str, ...] = ()
    ) -> None:
        # JSON lines: a reader can stream them, and an empty answer is no output at all.
        for row in table.to_pylist():
            typer.echo(json.dumps({k: render.plain(v) for k, v in row.items()}))

    def _report(self, failure: Failure) -> None:
        typer.echo(json.dumps(failure.to_json()), err=True)


def output_for(as_json: bool) -> Output:
    """The output of a command run with (``as_json``) or without ``--json``."""
    return JsonOutput() if as_json else ConsoleOutput()
