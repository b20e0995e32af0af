"""Every error zorder raises on purpose: one base, specific subclasses.

Each class also subclasses the builtin a caller would have caught before
there was a hierarchy (a :class:`ColumnNotFoundError` is a ``ValueError``, a
:class:`TableExistsError` a ``FileExistsError``), so ``except ValueError``
keeps working, and ``except ZorderError`` catches exactly the errors that are
about the caller's input or the table, never a bug. Messages name the bad
value and what would be accepted.

A bug is not a ``ZorderError``: :class:`InternalError` (a ``RuntimeError``) is
raised where zorder finds its own invariant broken, and the CLI reports it with
exit code 1 and a traceback to report, never as a refusal. Exceptions zorder
uses for its own control flow are private to the modules that raise and catch
them; none is a ``ZorderError`` and none reaches a caller.

Pure: importing this module imports nothing else of zorder's or anyone's.
"""

from __future__ import annotations

__all__ = [
    "BenchmarkError",
    "BrokenTableError",
    "ColumnNotFoundError",
    "ConcurrentCommitError",
    "FilterEvaluationError",
    "FilterParseError",
    "ForbiddenFilterError",
    "InternalError",
    "InvalidArgumentError",
    "InvalidArgumentTypeError",
    "MissingFilesError",
    "NotADeltaTableError",
    "SchemaMismatchError",
    "SourceNotFoundError",
    "SparkStartError",
    "SparkVersionError",
    "StorageMismatchError",
    "TableExistsError",
    "TableNotFoundError",
    "UnsafeCommitWarning",
    "UnsupportedColumnTypeError",
    "UnsupportedFilterError",
    "UnsupportedTableError",
    "VersionNotFoundError",
    "ZorderError",
]


class ZorderError(Exception):
    """Base of every error zorder raises on purpose."""


class InvalidArgumentError(ZorderError, ValueError):
    """An argument's value is outside what is accepted (a size, a mode, a curve, a count)."""


class InvalidArgumentTypeError(ZorderError, TypeError):
    """An argument is of a type the function does not take."""


class ColumnNotFoundError(InvalidArgumentError):
    """A column named by the caller (to cluster by, to filter on, to plot) is not in the table."""


class UnsupportedColumnTypeError(InvalidArgumentError):
    """A column's type cannot serve where it was asked to (no order a clustering key can use)."""


class FilterParseError(InvalidArgumentError):
    """A filter's SQL text does not parse; ``line`` and ``column`` say where, when known."""

    def __init__(
        self, message: str, *, text: str, line: int | None = None, column: int | None = None
    ) -> None:
        super().__init__(message)
        self.text = text
        self.line = line
        self.column = column


class UnsupportedFilterError(InvalidArgumentError):
    """A filter holds something zorder cannot evaluate outside Spark with Spark's meaning.

    Raised by :func:`zorder.to_arrow` (and ``zorder query`` without
    ``--spark``) before any file is read, rather than risk a different answer;
    :func:`zorder.read` evaluates the same filter in Spark.
    """


class ForbiddenFilterError(UnsupportedFilterError):
    """A filter holds something that is not a predicate over the table's columns.

    Subqueries, table references, UDFs, reflection, aggregates, window and
    non-deterministic functions (``construct`` names the one found): refused
    on every path before Spark or any reader sees the text.
    """

    def __init__(self, message: str, *, text: str, construct: str) -> None:
        super().__init__(message)
        self.text = text
        self.construct = construct


class FilterEvaluationError(ZorderError, ArithmeticError):
    """A row makes the filter raise, as it makes an ANSI Spark session raise: an overflow,
    a division by zero, a string that does not cast (:func:`zorder.to_arrow`)."""


class SchemaMismatchError(ZorderError, ValueError):
    """The data's schema differs from the table's; the message lists each difference."""


class TableExistsError(ZorderError, FileExistsError):
    """A table already exists where the caller asked for a new one."""


class NotADeltaTableError(ZorderError, ValueError):
    """The path holds no Delta table (no readable ``_delta_log``)."""


class TableNotFoundError(NotADeltaTableError, FileNotFoundError):
    """No table is where the caller named one: nothing at the path, or no such name in the
    session's catalog. Raised on opening, as delta-rs's and pyiceberg's ``TableNotFoundError``
    are; ``zorder.write`` and ``Table(..., create=True)`` open a location to make one."""


class SourceNotFoundError(ZorderError, FileNotFoundError):
    """An input path to read from does not exist."""


class UnsupportedTableError(ZorderError, ValueError):
    """A Delta table uses a feature zorder cannot read or write correctly.

    Deletion vectors and column mapping, for instance: their files cannot be
    read as plain Parquet without wrong answers.
    """


class BrokenTableError(ZorderError, ValueError):
    """A Delta table's log or files are not what the protocol requires.

    A log without a protocol or metadata action, missing commits, a data
    file the log names that storage lacks: nothing is read from such a table.
    """


class MissingFilesError(ZorderError, FileNotFoundError):
    """Files a version of a table names are no longer in storage (a vacuum deleted them, or
    someone did by hand), so the version cannot be restored; ``paths`` names them.

    The table itself is sound: its newest version does not need them.
    """

    def __init__(self, message: str, *, paths: tuple[str, ...]) -> None:
        super().__init__(message)
        self.paths = paths


class VersionNotFoundError(ZorderError, LookupError):
    """Time travel to a version or timestamp the table's log does not hold (cleaned up, or
    not yet committed); the message names the versions it holds."""


class BenchmarkError(ZorderError, RuntimeError):
    """A benchmark's contender failed (its own output says why)."""


class SparkStartError(ZorderError, RuntimeError):
    """A Spark session zorder was asked to start did not start: a master it cannot use, no
    Java, a Connect server out of reach; the message says which, and where the JVM's output
    went."""


class SparkVersionError(ZorderError, NotImplementedError):
    """The Spark in use lacks what a call needs (an Arrow UDF before pyspark 4.1, say); the
    message names the call and the version that has it."""


class ConcurrentCommitError(ZorderError, RuntimeError):
    """Another writer committed something this commit conflicts with; nothing was committed."""


class StorageMismatchError(ZorderError, ValueError):
    """Spark and zorder reach different stores for the same table location (the session's
    ``fs.*`` settings against ``storage_options``, else the environment): files Spark wrote
    are not where zorder looks. Nothing was committed."""


class InternalError(RuntimeError):
    """zorder found one of its own invariants broken: a bug, not a refusal.

    Deliberately not a :class:`ZorderError`, so ``except ZorderError`` never hides one.
    The message says what was found and whether anything was committed; please report it.
    """


class UnsafeCommitWarning(UserWarning):
    """The storage configuration may let two writers overwrite each other's commit (a store
    that may not honour conditional puts, or a lock setting deltalake no longer uses)."""
