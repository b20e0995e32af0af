"""``Table``: one handle per Delta table, deciding once where it lives and how to reach it.

The location is normalized, the storage options resolved (given ones over
the Spark session's object-store settings, see
:func:`~zorder.api.scanning.table_storage_options`) and the session zone
read when the handle is made; every method then works on that. The
path-first functions (:func:`zorder.scan`, :func:`zorder.describe`, ...)
remain, and are what these methods call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from zorder.api.describe import FileDescription, TableDescription, describe
from zorder.api.scanning import Scan, Where, plan_scan, session_time_zone, table_storage_options
from zorder.api.vacuum import VacuumResult, vacuum
from zorder.errors import InvalidArgumentError
from zorder.table import AsOf, Commit, TableSnapshot, history, load_snapshot, normalize_uri

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from zorder.api.cluster import ClusterMetrics
    from zorder.curves.kinds import ClusteringSpec, Curve, KeyMethod

__all__ = ["Commit", "Table"]


class Table:
    """The Delta table at ``uri``: ``storage_options`` (else the session's settings, else the
    environment) reach it; ``spark`` (else the active session, if any) gives the zone
    zone-less timestamps are read in, and runs :meth:`optimize` and :meth:`read`."""

    def __init__(
        self,
        uri: str,
        *,
        storage_options: Mapping[str, str] | None = None,
        spark: SparkSession | None = None,
    ) -> None:
        if not isinstance(uri, str) or not uri:
            raise InvalidArgumentError(
                f"a table's location must be a non-empty string, got {uri!r}"
            )
        self.uri = normalize_uri(uri)
        self.spark = spark
        self.storage_options = table_storage_options(self.uri, storage_options, spark)
        self.time_zone = session_time_zone(spark)

    def __repr__(self) -> str:
        return f"Table({self.uri!r})"

    @property
    def version(self) -> int:
        """The newest version."""
        return self.snapshot().version

    def history(self, *, limit: int | None = None) -> tuple[Commit, ...]:
        """The commits the log still holds, newest first: version, time, operation, and
        the zorder run a commit added."""
        return history(self.uri, self.storage_options, limit=limit)

    def snapshot(
        self, *, version: int | None = None, timestamp: AsOf | None = None
    ) -> TableSnapshot:
        """One version, from the log alone (see :func:`zorder.scan` for time travel)."""
        return load_snapshot(
            self.uri,
            self.storage_options,
            version=version,
            timestamp=timestamp,
            time_zone=self.time_zone,
        )

    def scan(
        self,
        where: Where = None,
        *,
        columns: Sequence[str] | None = None,
        version: int | None = None,
        timestamp: AsOf | None = None,
    ) -> Scan:
        """The files that may hold rows matching ``where``: :func:`zorder.scan` on this table."""
        return plan_scan(
            self.snapshot(version=version, timestamp=timestamp),
            where,
            spark=self.spark,
            time_zone=self.time_zone,
            columns=columns,
        )

    def read(
        self,
        where: Where = None,
        *,
        columns: Sequence[str] | None = None,
        version: int | None = None,
        timestamp: AsOf | None = None,
    ) -> DataFrame:
        """The matching rows as a Spark DataFrame (see :func:`zorder.read`)."""
        planned = self.scan(where, columns=columns, version=version, timestamp=timestamp)
        return planned.to_spark(self._session("read"))

    def describe(
        self,
        *,
        columns: Sequence[str] | None = None,
        version: int | None = None,
        timestamp: AsOf | None = None,
    ) -> TableDescription:
        """Spec, file size target, runs and files (see :func:`zorder.describe`)."""
        return describe(
            self.uri,
            columns=columns,
            version=version,
            timestamp=timestamp,
            time_zone=self.time_zone,
            storage_options=self.storage_options,
        )

    def stats(
        self,
        *,
        columns: Sequence[str] | None = None,
        version: int | None = None,
        timestamp: AsOf | None = None,
    ) -> tuple[FileDescription, ...]:
        """Every file with its run, rows and the bounds of ``columns``."""
        return self.describe(columns=columns, version=version, timestamp=timestamp).files

    def vacuum(
        self, *, retain_hours: float | None = None, dry_run: bool = True, force: bool = False
    ) -> VacuumResult:
        """Files no version within retention uses (see :func:`zorder.vacuum`)."""
        return vacuum(
            self.uri,
            retain_hours=retain_hours,
            dry_run=dry_run,
            force=force,
            storage_options=self.storage_options,
        )

    def optimize(
        self,
        *,
        by: Sequence[str] | ClusteringSpec | None = None,
        curve: Curve | None = None,
        num_files: int | None = None,
        target_file_size: int | str | None = None,
        method: KeyMethod | None = None,
        where: str | None = None,
        full: bool = False,
        progress: bool = False,
    ) -> ClusterMetrics:
        """Cluster what needs it, in one commit (see :func:`zorder.optimize`)."""
        from zorder.api.cluster import optimize

        return optimize(
            self._session("optimize"),
            self.uri,
            by=by,
            curve=curve,
            num_files=num_files,
            target_file_size=target_file_size,
            method=method,
            where=where,
            full=full,
            storage_options=self.storage_options,
            progress=progress,
        )

    def _session(self, what: str) -> SparkSession:
        if self.spark is not None:
            return self.spark
        from pyspark.sql import SparkSession

        active = SparkSession.getActiveSession()
        if active is None:
            raise InvalidArgumentError(
                f"Table.{what} runs Spark: make the handle with spark=... or start a session"
            )
        return active
