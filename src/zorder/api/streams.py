"""Structured Streaming into a zorder table: a ``foreachBatch`` writer, exactly once.

Spark runs a query's micro-batch again after a restart whenever the
batch's output was committed but the query's checkpoint had not recorded
it. Each batch is therefore written as an idempotent append
(:meth:`zorder.Table.write` with ``txn_app_id`` / ``txn_version``): the
app id is the query's id (kept in the checkpoint, the same across
restarts), the version its batch id, so a batch the table records already
adds nothing. Delta Spark's documentation recommends the same keys for its
``txnAppId`` / ``txnVersion`` options.

A batch whose commit meets a concurrent one it cannot go past (an optimize
that changed the table's properties, another writer's overwrite) committed
nothing; it is written again, up to ``retries`` times, which the
transaction makes safe even when the outcome of an attempt is unclear.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from zorder.curves.kinds import ClusteringSpec, Curve, KeyMethod, as_curve, as_key_method
from zorder.errors import ConcurrentCommitError, InvalidArgumentError, InvalidArgumentTypeError
from zorder.plan.jobs import check_schema_mode, check_size
from zorder.plan.modes import SchemaMode
from zorder.table.delta.transactions import AppTransaction

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from zorder.api.cluster import ClusterMetrics
    from zorder.api.table import Table

__all__ = ["BatchWriter", "foreach_batch"]

_log = logging.getLogger(__name__)

# The local property Spark's stream execution sets on the threads that run a batch.
_QUERY_ID_PROPERTY = "sql.streaming.queryId"


@dataclass(frozen=True, kw_only=True)
class _BatchOptions:
    """What each batch's write is asked for (see :meth:`zorder.Table.write`)."""

    by: Sequence[str] | ClusteringSpec | None
    curve: Curve | None
    method: KeyMethod | None
    num_files: int | None
    target_file_size: int | str | None
    sample_size: int | None
    partition_by: Sequence[str] | None
    schema_mode: SchemaMode | None = None


class BatchWriter:
    """The function to pass to ``writeStream.foreachBatch``: each call appends one
    micro-batch, clustered as the table's spec (or ``by``) says, exactly once.

    ``last`` holds the newest batch's :class:`~zorder.ClusterMetrics` (its
    ``skipped`` is True for a batch the table had already). It holds plain
    values only, so Spark Connect can ship it to where batches run.
    """

    def __init__(
        self,
        location: str,
        options: _BatchOptions,
        *,
        storage_options: Mapping[str, str] | None,
        app_id: str | None,
        retries: int,
    ) -> None:
        self.location = location
        self.options = options
        self.storage_options = dict(storage_options) if storage_options is not None else None
        self.app_id = app_id
        self.retries = retries
        self.last: ClusterMetrics | None = None

    def __repr__(self) -> str:
        return f"BatchWriter({self.location!r}, app_id={self.app_id!r})"

    def __call__(self, df: DataFrame, batch_id: int) -> None:
        app_id = self.app_id if self.app_id is not None else query_id(df)
        AppTransaction.of(app_id, batch_id)  # a bad id is refused before anything is read
        for attempt in range(self.retries + 1):
            try:
                self.last = self._append(df, app_id, batch_id)
            except ConcurrentCommitError as error:
                if attempt == self.retries:
                    error.add_note(
                        f"batch {batch_id} of query {app_id!r} was tried {attempt + 1} times; "
                        "nothing of it was committed, and the query's restart writes it again"
                    )
                    raise
                _log.warning(
                    "batch %d met a concurrent commit (%s); writing it again", batch_id, error
                )
                continue
            state = "skipped (the table has it)" if self.last.skipped else "committed"
            _log.info("batch %d of query %s into %s: %s", batch_id, app_id, self.location, state)
            return

    def _append(self, df: DataFrame, app_id: str, batch_id: int) -> ClusterMetrics:
        from zorder.api.table import Table

        table = Table._unread(
            self.location, storage_options=self.storage_options, spark=df.sparkSession
        )
        options = self.options
        return table.write(
            df,
            mode="append",
            by=options.by,
            curve=options.curve,
            method=options.method,
            num_files=options.num_files,
            target_file_size=options.target_file_size,
            sample_size=options.sample_size,
            partition_by=options.partition_by,
            txn_app_id=app_id,
            txn_version=batch_id,
            schema_mode=options.schema_mode,
        )


def query_id(df: DataFrame) -> str:
    """The id of the streaming query whose batch ``df`` is (from the batch's thread)."""
    from zorder.spark.progress import is_connect

    spark = df.sparkSession
    found = None if is_connect(spark) else spark.sparkContext.getLocalProperty(_QUERY_ID_PROPERTY)
    if not found:
        where = "on Spark Connect" if is_connect(spark) else "outside a streaming batch"
        raise InvalidArgumentError(
            f"the streaming query's id is not available {where}: pass "
            "zorder.foreach_batch(..., app_id='<a name unique to this query>') so that its "
            "batches are recorded under a stable id"
        )
    return str(found)


def foreach_batch(
    table: str | Table,
    *,
    by: Sequence[str] | ClusteringSpec | None = None,
    curve: Curve | None = None,
    method: KeyMethod | None = None,
    num_files: int | None = None,
    target_file_size: int | str | None = None,
    sample_size: int | None = None,
    partition_by: Sequence[str] | None = None,
    app_id: str | None = None,
    retries: int = 3,
    storage_options: Mapping[str, str] | None = None,
    schema_mode: SchemaMode | None = None,
) -> BatchWriter:
    """The function for ``df.writeStream.foreachBatch(...)`` that appends each micro-batch
    to the Delta table ``table`` (a location or a :class:`~zorder.Table`), clustered,
    exactly once.

    Each batch is ``Table(table).write(batch, mode="append", by=..., ...,
    txn_app_id=app_id, txn_version=batch_id)``: a batch Spark replays after a
    restart from the checkpoint, which the table records already, writes
    nothing. ``app_id`` defaults to the streaming query's id, which the
    checkpoint keeps across restarts (give your own on Spark Connect, where a
    batch cannot see it, or when one query writes the table twice). ``by``
    and the other options are :meth:`zorder.Table.write`'s; left out, each
    batch is clustered as the table's recorded spec says (the first batch
    into a new table needs ``by``). A batch that meets a concurrent commit it
    cannot go past is written again, up to ``retries`` times.
    ``schema_mode="merge"`` lets a batch bring new columns, which are added to the
    table first (see :meth:`zorder.Table.write`).
    """
    from zorder.api.table import Table

    if isinstance(table, Table):
        if storage_options is not None:
            raise InvalidArgumentError(
                f"storage_options were given with the handle {table!r}, which carries its own"
            )
        location, storage_options = table.uri, dict(table.storage_options)
    elif isinstance(table, str) and table:
        location = table
    else:
        raise InvalidArgumentTypeError(
            f"table must be a table's location or a zorder.Table, got {table!r}"
        )
    if app_id is not None:
        AppTransaction.of(app_id, 0)
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise InvalidArgumentError(f"retries must be an int >= 0, got {retries!r}")
    check_size(num_files, target_file_size)
    check_schema_mode(schema_mode)
    options = _BatchOptions(
        by=by,
        curve=as_curve(curve) if curve is not None else None,
        method=as_key_method(method) if method is not None else None,
        num_files=num_files,
        target_file_size=target_file_size,
        sample_size=sample_size,
        partition_by=partition_by,
        schema_mode=schema_mode,
    )
    return BatchWriter(
        location, options, storage_options=storage_options, app_id=app_id, retries=retries
    )
