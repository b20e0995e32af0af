"""``write`` and ``optimize``: cluster rows along a curve into a Delta table.

Both follow one path: check everything, lay the rows out with Spark (key,
one partition per file, sort within files), write Parquet into a directory of the
run's own under the table root, read the footers for statistics, and commit
all files in one Delta transaction. Anything that fails before the commit
removes the run's directory and leaves the table as it was.
"""

from __future__ import annotations

import dataclasses
import math
import re
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import LongType, StructField, StructType

from zorder.api.modes import WRITE_MODES, WriteMode
from zorder.api.progress import phase, progress_of
from zorder.api.read import session_time_zone
from zorder.curves.kinds import ClusteringSpec, Curve, KeyMethod, as_curve, as_key_method
from zorder.errors import (
    InvalidArgumentError,
    SchemaMismatchError,
    TableExistsError,
    ZorderError,
)
from zorder.sizes import DEFAULT_TARGET_FILE_SIZE, parse_size
from zorder.skipping.sql import referenced_columns
from zorder.spark.layout import ClusteringPlan, cluster, plan_clustering
from zorder.spark.partitions import (
    Partition,
    PartitionedLayout,
    cluster_partitions,
    count_partitions,
    files_per_partition,
    partition_key,
    resolve_partition_columns,
)
from zorder.table import (
    CommitMode,
    DataFile,
    TableSnapshot,
    WrittenFile,
    commit_files,
    delete_directory,
    delta_partition_value,
    describe_written_files,
    is_delta_table,
    latest_clustering,
    load_snapshot,
    normalize_uri,
    record_properties,
    remove_writer_markers,
)
from zorder.table.clustering import (
    TARGET_FILE_SIZE_PROPERTY,
    CommitClustering,
    Operation,
    Run,
    spec_properties,
)
from zorder.table.tiering import DEFAULT_FANOUT, check_fanout, files_to_recluster

__all__ = ["ClusterMetrics", "WriteMode", "optimize", "write"]


@dataclass(frozen=True)
class ClusterMetrics:
    """What a ``write`` or ``optimize`` did."""

    table_uri: str
    operation: Operation
    version: int | None  # table version after the commit; None when nothing was committed
    run_id: str
    by: tuple[str, ...]
    curve: Curve
    method: KeyMethod
    num_files_target: int
    files_added: int
    files_removed: int
    rows: int
    bytes_added: int
    bytes_removed: int
    seconds: float


def _unchanged(uri: str, plan: ClusteringPlan, files: int, started: float) -> ClusterMetrics:
    return ClusterMetrics(
        table_uri=uri,
        operation="optimize",
        version=None,
        run_id="",
        by=tuple(plan.names),
        curve=plan.curve,
        method=plan.method,
        num_files_target=files,
        files_added=0,
        files_removed=0,
        rows=0,
        bytes_added=0,
        bytes_removed=0,
        seconds=time.perf_counter() - started,
    )


def _file_count(
    num_files: int | None, target_file_size: int | str | None, input_bytes: int | None
) -> int:
    if num_files is not None and target_file_size is not None:
        raise InvalidArgumentError("give num_files or target_file_size, not both")
    if num_files is not None:
        if isinstance(num_files, bool) or not isinstance(num_files, int) or num_files < 1:
            raise InvalidArgumentError(f"num_files must be a positive int, got {num_files!r}")
        return num_files
    target = parse_size(
        target_file_size if target_file_size is not None else DEFAULT_TARGET_FILE_SIZE
    )
    return max(1, math.ceil((input_bytes or 0) / target))


def _estimated_bytes(df: DataFrame) -> int:
    """Spark's estimate of the input size, or rows x a sampled row width when unknown."""
    try:
        stats = df._jdf.queryExecution().optimizedPlan().stats()
        size = int(stats.sizeInBytes().toString())
    except Exception:  # Spark Connect, or a plan without statistics
        size = -1
    if 0 < size < 1 << 50:
        return size
    rows = df.count()
    sample = df.limit(1000).toArrow()
    return int(rows * sample.nbytes / max(1, sample.num_rows))


def _schema_differences(table: StructType, data: StructType) -> list[str]:
    table_types = {f.name: f.dataType for f in table.fields}
    data_types = {f.name: f.dataType for f in data.fields}
    problems = []
    for name, data_type in table_types.items():
        if name not in data_types:
            problems.append(f"{name!r} is missing from the data")
        elif data_types[name] != data_type:
            problems.append(
                f"{name!r} is {data_type.simpleString()} in the table but "
                f"{data_types[name].simpleString()} in the data"
            )
    problems += [f"{name!r} is not in the table" for name in data_types if name not in table_types]
    return problems


# Key UDFs compute a batch in about 0.2 us a row, so Spark's default of 10,000
# rows a batch leaves the per-batch round trip a large share of the time; 50,000
# measured fastest (benchmarks/product.py). Strings reach the UDFs cut to 256
# characters, which bounds a batch's size.
_ARROW_BATCH_ROWS = "50000"


@contextmanager
def _write_settings(spark: SparkSession) -> Iterator[None]:
    """Settings for the clustering write, restored afterwards.

    Parquet as Delta readers expect it (INT64 microsecond timestamps, not
    INT96; the field ids of a column-mapped table's schema written); larger
    Arrow batches for the key UDFs unless the session chose a size itself.
    """
    wanted = {
        "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
        "spark.sql.parquet.fieldId.write.enabled": "true",
    }
    batch_rows = "spark.sql.execution.arrow.maxRecordsPerBatch"
    if spark.conf.get(batch_rows, None) is None:
        wanted[batch_rows] = _ARROW_BATCH_ROWS
    previous: dict[str, str | None] = {key: spark.conf.get(key, None) for key in wanted}
    for key, value in wanted.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, old in previous.items():
            if old is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, old)


# Spark names each file it writes after its task's partition, which repartitionById
# made the file's number: part-00007-<uuid>-c000.snappy.parquet holds file 7.
_SPARK_FILE = re.compile(r"(?:^|/)part-(\d+)-[^/]*$")


def _in_partition(
    written: WrittenFile,
    layout: PartitionedLayout,
    columns: tuple[str, ...],
    snapshot: TableSnapshot | None,
    time_zone: str | None,
) -> WrittenFile:
    """``written`` with the partition values of the file number Spark named it after.

    Into an existing table they go as its log writes them already; the values
    are instants in a session of ``time_zone``, or (None) the log's own.
    """
    match = _SPARK_FILE.search(written.path)
    if match is None:  # pragma: no cover (Spark's naming is part of its file format contract)
        raise ZorderError(f"cannot tell which file of the run Spark wrote as {written.path!r}")
    partition = layout.partition_of_file(int(match.group(1)))
    if snapshot is None:
        values = {
            c: delta_partition_value(v) for c, v in zip(columns, partition.values, strict=True)
        }
    else:  # keyed by the names the log gives partition values
        values = {
            snapshot.stored_name(c): snapshot.partition_text(c, v, time_zone=time_zone)
            for c, v in zip(columns, partition.values, strict=True)
        }
    return dataclasses.replace(written, partition_values=values)


def _write_and_commit(
    df: DataFrame,
    *,
    uri: str,
    plan: ClusteringPlan,
    operation: Operation,
    commit_mode: CommitMode,
    snapshot: TableSnapshot | None,
    num_files: int,
    sample_size: int | None,
    storage_options: Mapping[str, str] | None,
    started: float,
    remember: _Remember,
    partitioned: PartitionedLayout | None = None,
    partition_by: tuple[str, ...] = (),
    removed: Sequence[DataFile] = (),
    rows: int | None = None,
) -> ClusterMetrics:
    """Lay out, write, commit; then record what the table should remember.

    ``rows`` is the exact row count of ``df`` when the log knows it (saves
    the sample its count job).
    """
    spec = plan.spec
    run = Run.new(spec)
    configuration = snapshot.stored_configuration if snapshot else {}
    if partitioned is not None:
        laid_out = partitioned.frame
    else:
        phase("sampling")
        laid_out = cluster(df, plan, num_files=num_files, sample_size=sample_size, rows=rows)
    # Into an existing table, files hold its own (under column mapping, physical) names.
    stored_frame = snapshot.stored_frame(laid_out) if snapshot is not None else laid_out
    stored_schema = snapshot.stored_schema if snapshot is not None else df.schema
    stored_partitions = [snapshot.stored_name(c) if snapshot else c for c in partition_by]
    try:
        phase("clustering and writing")
        with _write_settings(df.sparkSession):
            writer = stored_frame.write.mode(
                "error"
            )  # "error": the one spelling Spark Connect accepts too
            if partition_by:
                writer = writer.partitionBy(*stored_partitions)
            writer.parquet(f"{uri}/{run.directory}")
        remove_writer_markers(uri, run.directory)
        phase("statistics")
        written = describe_written_files(uri, run.directory, stored_schema, configuration)
        if partitioned is not None:
            # An optimize's values come from the log; a write's rows are the session's.
            zone = None if operation == "optimize" else session_time_zone(df.sparkSession)
            written = [_in_partition(f, partitioned, partition_by, snapshot, zone) for f in written]
        phase("commit")
        version = commit_files(
            uri,
            df.schema,
            written,
            mode=commit_mode,
            snapshot=snapshot,
            removed=removed,
            clustering=CommitClustering(operation, run, spec, len(written)),
            partition_by=partition_by,
            storage_options=storage_options,
        )
    except BaseException:
        delete_directory(uri, run.directory)  # never committed, never referenced
        raise
    # After the data commit, in a commit of its own (Delta refuses unknown properties
    # at creation): a crash in between leaves the rows committed and the properties
    # as they were; see _resolved_spec for how the spec is then found again.
    record_properties(uri, remember.properties(snapshot, written), storage_options=storage_options)
    return ClusterMetrics(
        table_uri=uri,
        operation=operation,
        version=version,
        run_id=run.id,
        by=tuple(plan.names),
        curve=plan.curve,
        method=plan.method,
        num_files_target=num_files,
        files_added=len(written),
        files_removed=len(removed),
        rows=sum(f.stats.num_records for f in written),
        bytes_added=sum(f.size for f in written),
        bytes_removed=sum(f.size for f in removed),
        seconds=time.perf_counter() - started,
    )


@dataclass(frozen=True)
class _Remember:
    """What a clustering commit records in the table's properties afterwards."""

    spec: ClusteringSpec | None  # None: leave the recorded spec as it is
    target_file_size: int | None  # None: the mean size of the files written (num_files)

    def properties(
        self, snapshot: TableSnapshot | None, written: Sequence[WrittenFile]
    ) -> dict[str, str]:
        wanted = spec_properties(self.spec) if self.spec is not None else {}
        if snapshot is None or snapshot.recorded_target_file_size is None:
            size = self.target_file_size
            if size is None and written:
                size = max(1, sum(f.size for f in written) // len(written))
            if size is not None:
                wanted[TARGET_FILE_SIZE_PROPERTY] = str(size)
        return wanted


def _resolved_spec(
    by: Sequence[str] | None,
    curve: Curve | None,
    method: KeyMethod | None,
    *,
    snapshot: TableSnapshot | None,
    uri: str,
    storage_options: Mapping[str, str] | None,
) -> ClusteringSpec:
    """The spec asked for: what is not given comes from the table's spec.

    The table's spec is the one its properties record; a table whose
    properties record none (written before zorder recorded specs, or a crash
    between a run's commit and its properties) falls back on the newest
    zorder commit in its history.
    """
    recorded = None
    if snapshot is not None:
        recorded = snapshot.recorded_spec
        if recorded is None:
            latest = latest_clustering(uri, storage_options)
            recorded = latest.spec if latest is not None else None
    if by is None:
        if recorded is None:
            where = f"table {uri} records no clustering" if snapshot else f"no table at {uri}"
            raise InvalidArgumentError(
                f"{where}: pass by=[columns] (CLI: --by a,b) once; the columns, curve and "
                "key method are then recorded in the table's properties and used by later "
                "appends and optimizes"
            )
        by = recorded.columns
    if isinstance(by, str):
        by = [by]
    fallback = recorded or ClusteringSpec((), "zorder", "rank")
    asked = ClusteringSpec(
        tuple(str(c) for c in by),
        as_curve(curve if curve is not None else fallback.curve),
        as_key_method(method if method is not None else fallback.method),
    )
    return asked


def _target_size(target_file_size: int | str | None, snapshot: TableSnapshot | None) -> int:
    """Bytes a file: as given, else the table's ``delta.targetFileSize``, else 128 MB."""
    if target_file_size is not None:
        return parse_size(target_file_size)
    recorded = snapshot.recorded_target_file_size if snapshot is not None else None
    return recorded or DEFAULT_TARGET_FILE_SIZE


def write(
    df: DataFrame,
    path: str,
    *,
    by: Sequence[str] | None = None,
    mode: WriteMode = "error",
    curve: Curve | None = None,
    num_files: int | None = None,
    target_file_size: int | str | None = None,
    method: KeyMethod | None = None,
    sample_size: int | None = None,
    partition_by: Sequence[str] | None = None,
    storage_options: Mapping[str, str] | None = None,
    progress: bool = False,
) -> ClusterMetrics:
    """Cluster ``df`` by the columns ``by`` along ``curve`` into the Delta table at ``path``.

    The table remembers its clustering: a write that creates (or overwrites)
    a table records ``by``, ``curve`` and ``method`` in its properties, and
    an append without ``by`` clusters its rows by them (cluster on write:
    the rows form a run of their own, which queries skip inside at once).
    What is not given comes from the table's spec, else ``curve="zorder"``,
    ``method="rank"``. An append with another ``by`` clusters its rows by it
    and leaves the table's spec as it is.

    ``partition_by`` makes a new table partitioned by those columns (an append
    uses the table's own; a different list is an error). The rows of each
    partition are clustered on their own: every file holds one partition.
    ``num_files`` is then the total, shared by the partitions' row counts
    (one file each at least), and ``target_file_size`` applies per partition.

    ``mode`` follows Spark's writer: ``"error"`` refuses an existing table,
    ``"append"`` adds files (creating the table if needed), ``"overwrite"``
    replaces every file in the same commit. ``num_files`` is exact (empty
    ranges give no file); otherwise ``target_file_size`` (accepts ``"256MB"``;
    default the table's ``delta.targetFileSize``, else 128 MB) is divided into
    Spark's estimate of the input size. A table without
    ``delta.targetFileSize`` records the size used (for ``num_files``, the
    mean size written). The files are cut at quantiles of a sample of
    ``sample_size`` rows, by default 1,000 a file (at least 100,000, at most
    1,000,000), which keeps file sizes within about 10% of each other up to
    1,000 files. ``progress=True`` shows a status line (running tasks,
    seconds) in the terminal or notebook while Spark works.
    """
    started = time.perf_counter()
    if mode not in WRITE_MODES:
        raise InvalidArgumentError(f"unknown mode {mode!r}; accepted: {', '.join(WRITE_MODES)}")
    uri = normalize_uri(path)
    if num_files is not None:
        _file_count(num_files, target_file_size, None)  # validate first
    elif target_file_size is not None:
        parse_size(target_file_size)  # validate first
    snapshot = None
    commit_mode: CommitMode = "create"
    if is_delta_table(uri, storage_options):
        if mode == "error":
            raise TableExistsError(
                f"a Delta table already exists at {uri}; use mode='append' to add to it "
                "or mode='overwrite' to replace it"
            )
        snapshot = load_snapshot(uri, storage_options)
        snapshot.check_writable("append")  # an overwrite adds whole rows too
        commit_mode = "append" if mode == "append" else "overwrite"
    spec = _resolved_spec(
        by, curve, method, snapshot=snapshot, uri=uri, storage_options=storage_options
    )
    plan = plan_clustering(df, spec.columns, curve=spec.curve, method=spec.method)
    partition_columns = resolve_partition_columns(df, partition_by, plan) if partition_by else ()
    if snapshot is not None:
        problems = _schema_differences(snapshot.schema, df.schema)
        if problems:
            raise SchemaMismatchError(f"schema mismatch on {mode} to {uri}: " + "; ".join(problems))
        table_partitions = snapshot.partition_columns
        if partition_by is None and table_partitions:
            partition_columns = resolve_partition_columns(df, table_partitions, plan)
        elif partition_by is not None and partition_columns != table_partitions:
            raise InvalidArgumentError(
                f"table {uri} is partitioned by {list(table_partitions)}, not by "
                f"{list(partition_columns)}; an {mode} keeps the table's partition columns"
            )
    target = _target_size(target_file_size, snapshot)
    with progress_of(progress, f"Clustering into {uri}...", df.sparkSession):
        phase("counting")
        estimated = _estimated_bytes(df) if num_files is None else 0
        layout = None
        if partition_columns:
            layout = _partitioned_layout(
                df,
                plan,
                partition_columns,
                num_files=num_files,
                bytes_total=estimated,
                target=target,
            )
        if layout is not None:
            files = layout.first_file[-1]
        else:
            files = num_files if num_files is not None else _file_count(None, target, estimated)
        records_spec = commit_mode != "append" or snapshot is None or snapshot.recorded_spec is None
        return _write_and_commit(
            df,
            uri=uri,
            plan=plan,
            operation="write",
            commit_mode=commit_mode,
            snapshot=snapshot,
            num_files=files,
            sample_size=sample_size,
            storage_options=storage_options,
            started=started,
            remember=_Remember(
                plan.spec if records_spec else None, None if num_files is not None else target
            ),
            partitioned=layout,
            partition_by=partition_columns,
        )


def optimize(
    spark: SparkSession,
    path: str,
    *,
    by: Sequence[str] | None = None,
    curve: Curve | None = None,
    num_files: int | None = None,
    target_file_size: int | str | None = None,
    method: KeyMethod | None = None,
    sample_size: int | None = None,
    where: str | None = None,
    full: bool = False,
    fanout: int = DEFAULT_FANOUT,
    storage_options: Mapping[str, str] | None = None,
    progress: bool = False,
) -> ClusterMetrics:
    """Cluster what needs it in the Delta table at ``path``, in one commit.

    Without ``by`` the table's recorded spec is used; a ``by`` (or ``curve``,
    ``method``) that differs from it is recorded as the new spec, and every
    file is then reclustered. Neither a recorded spec nor ``by`` is an error.

    **Incremental** (the default): files no zorder run of the current spec
    wrote (blind appends by other writers, an older layout) are clustered,
    together with the small runs, into one new run; large runs are left
    alone. Runs are tiered by size, ``fanout`` runs of a tier merging into
    one of the next (see :mod:`zorder.table.tiering`), so each byte is
    rewritten about log_fanout(growth) times and a partition holds fewer than
    ``fanout`` runs of each tier. Nothing to do means no commit (the metrics
    report 0 files and ``version=None``). ``full=True`` reclusters every file
    of the chosen partitions into one run.

    On a partitioned table each partition has its own runs and is clustered
    on its own. ``where`` (SQL over partition columns only, as Delta's
    ``OPTIMIZE ... WHERE``) chooses the partitions; files of the others are
    neither read nor rewritten. ``num_files`` is the total over the files
    written, shared by their partitions' rows (one file each at least);
    otherwise files are sized by ``target_file_size``, else the table's
    ``delta.targetFileSize``, else 128 MB, which the table then records.

    The new files are added and the files rewritten are removed in a single
    transaction with ``dataChange = false``, checked against anything
    committed meanwhile: files appended by others are kept (the next optimize
    clusters them), and a concurrent removal of a file read here makes the
    commit fail with :class:`~zorder.errors.ConcurrentCommitError`, leaving
    the table as the other writer left it. ``progress=True`` shows a status
    line (running tasks, seconds) in the terminal or notebook meanwhile.
    """
    started = time.perf_counter()
    check_fanout(fanout)
    uri = normalize_uri(path)
    snapshot = load_snapshot(uri, storage_options)
    snapshot.check_writable("optimize")
    spec = _resolved_spec(
        by, curve, method, snapshot=snapshot, uri=uri, storage_options=storage_options
    )
    # Only the schema is needed to check the request: no file is listed yet.
    schema_frame = snapshot.schema_frame(spark)
    plan = plan_clustering(schema_frame, spec.columns, curve=spec.curve, method=spec.method)
    if num_files is not None:
        _file_count(num_files, target_file_size, None)  # validate first
    target = _target_size(target_file_size, snapshot)
    columns = snapshot.partition_columns
    if columns:
        resolve_partition_columns(schema_frame, columns, plan)  # clustered by one?
    elif where is not None:
        raise InvalidArgumentError(
            f"where={where!r} chooses partitions, but table {uri} has no partition columns; "
            "leave where out to optimize the whole table"
        )
    remember = _Remember(
        plan.spec if plan.spec != snapshot.recorded_spec else None,
        None if num_files is not None else target,
    )
    with progress_of(progress, f"Optimizing {uri}...", spark):
        groups = snapshot.files_by_partition()
        phase("planning")
        chosen = (
            set(groups)
            if where is None
            else _chosen_partitions(spark, snapshot, list(groups), where)
        )
        runs = _runs_of_spec(snapshot, plan.spec)
        rewrite: dict[tuple[Any, ...], tuple[DataFile, ...]] = {}
        for partition, members in groups.items():
            if partition in chosen:
                picked = (
                    tuple(members)
                    if full
                    else files_to_recluster(
                        members,
                        [runs[f.path] for f in members],
                        target_file_size=target,
                        fanout=fanout,
                    )
                )
                if picked:
                    rewrite[partition] = picked
        read = list(snapshot.rewrite_scope([f for picked in rewrite.values() for f in picked]))
        rewrite = {}
        for data_file in read:
            rewrite[data_file.partition] = (*rewrite.get(data_file.partition, ()), data_file)
        if not read:
            record_properties(
                uri, remember.properties(snapshot, []), storage_options=storage_options
            )
            return _unchanged(uri, plan, num_files or 0, started)
        bytes_read = sum(f.size for f in read)
        wanted = {f.path for f in read}
        keep = np.array([f.path in wanted for f in snapshot.files], dtype=bool)

        def rewrite_as_unpartitioned(files: int, rows: int | None) -> ClusterMetrics:
            return _write_and_commit(
                snapshot.read_files(spark, keep),
                uri=uri,
                plan=plan,
                operation="optimize",
                commit_mode="rewrite",
                snapshot=snapshot,
                num_files=files,
                sample_size=sample_size,
                storage_options=storage_options,
                started=started,
                remember=remember,
                removed=read,
                rows=rows,
            )

        if not columns:
            counts = [f.num_records for f in read]
            return rewrite_as_unpartitioned(
                _file_count(num_files, None if num_files else target, bytes_read),
                None if None in counts else sum(c or 0 for c in counts),
            )
        key = f"__zorder_partition_{uuid.uuid4().hex}"
        todo = list(rewrite)
        df = snapshot.read_partitions(spark, keep, todo, index_column=key)
        layout = _partitioned_layout(
            df,
            plan,
            columns,
            num_files=num_files,
            bytes_total=bytes_read,
            target=target,
            key=key,
            partitions=_logged_partitions(todo, rewrite),
        )
        if layout is None and not any(f.has_vector for f in read):
            return _unchanged(uri, plan, num_files or 0, started)  # no rows: nothing to do
        if layout is None:  # every row deleted: the files go, and nothing takes their place
            return rewrite_as_unpartitioned(1, 0)
        return _write_and_commit(
            layout.frame,  # the rows without their partition index
            uri=uri,
            plan=plan,
            operation="optimize",
            commit_mode="rewrite",
            snapshot=snapshot,
            num_files=layout.first_file[-1],
            sample_size=None,
            storage_options=storage_options,
            started=started,
            remember=remember,
            partitioned=layout,
            partition_by=columns,
            removed=read,
        )


def _runs_of_spec(snapshot: TableSnapshot, spec: ClusteringSpec) -> dict[str, Run | None]:
    """Each file's run if a run of ``spec`` wrote it (as its txn vouches), else None.

    A file with deleted rows belongs to no run: it needs a rewrite without them.
    """
    return {
        f.path: run
        if run is not None and run.fingerprint == spec.fingerprint and not f.has_vector
        else None
        for f, run in zip(snapshot.files, snapshot.runs, strict=True)
    }


def _partitioned_layout(
    df: DataFrame,
    plan: ClusteringPlan,
    columns: tuple[str, ...],
    *,
    num_files: int | None,
    bytes_total: int,
    target: int,
    key: str | None = None,
    partitions: Sequence[Partition] | None = None,
) -> PartitionedLayout | None:
    """``df`` laid out partition by partition, or None when it has no rows at all.

    ``key`` names a column of ``df`` that already holds each row's partition
    key, and ``partitions`` the partitions with their row counts when known
    (else one job counts them).
    """
    if key is None:
        key = f"__zorder_partition_{uuid.uuid4().hex}"
        df = df.withColumn(key, partition_key(columns))
    if partitions is None:
        phase("counting")
        partitions = count_partitions(df, key, columns)
    if not partitions:
        return None
    per_partition = files_per_partition(
        partitions, num_files=num_files, bytes_total=bytes_total, target=target
    )
    phase("sampling")
    return cluster_partitions(df, key, plan, partitions, per_partition)


def _logged_partitions(
    chosen: Sequence[tuple[Any, ...]], groups: Mapping[tuple[Any, ...], Sequence[DataFile]]
) -> list[Partition] | None:
    """``chosen`` keyed by index, rows counted by the log; None if a file's count is missing."""
    partitions = []
    for index, values in enumerate(chosen):
        counts = [f.num_records for f in groups[values]]
        if any(count is None for count in counts):
            return None
        rows = sum(count for count in counts if count is not None)
        if rows:  # a partition of empty files has nothing to cluster (its files go)
            partitions.append(Partition(index, values, rows))
    return partitions


def _chosen_partitions(
    spark: SparkSession, snapshot: TableSnapshot, partitions: Sequence[tuple[Any, ...]], where: str
) -> set[tuple[Any, ...]]:
    """The partitions whose values satisfy ``where``, as Spark evaluates it on them."""
    columns = snapshot.partition_columns
    names = {c.lower(): c for c in columns}
    referenced = referenced_columns(where)  # raises FilterParseError first
    outside = sorted(r for r in referenced if r.lower() not in names)
    if outside:
        raise InvalidArgumentError(
            f"where={where!r} names {', '.join(outside)}, which are not partition columns of "
            f"{snapshot.uri}; it chooses partitions by: {', '.join(columns)}"
        )
    index = f"__zorder_partition_{uuid.uuid4().hex}"
    schema = StructType(
        [StructField(index, LongType(), False), *[snapshot.schema[c] for c in columns]]
    )
    rows = [(i, *values) for i, values in enumerate(partitions)]
    kept = spark.createDataFrame(rows, schema).where(where).select(index).toArrow()
    return {partitions[i] for i in kept.column(0).to_pylist()}
