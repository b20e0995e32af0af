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
from typing import Any, Literal, get_args

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import LongType, StructField, StructType

from zorder.curves.kinds import Curve, KeyMethod
from zorder.errors import (
    InvalidArgumentError,
    SchemaMismatchError,
    TableExistsError,
    ZorderError,
)
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
    load_snapshot,
    normalize_uri,
    remove_writer_markers,
)
from zorder.table.clustering import CommitClustering, Operation, Run

__all__ = [
    "DEFAULT_TARGET_FILE_SIZE",
    "ClusterMetrics",
    "WriteMode",
    "optimize",
    "parse_size",
    "write",
]

WriteMode = Literal["error", "append", "overwrite"]
WRITE_MODES: tuple[str, ...] = get_args(WriteMode)
DEFAULT_TARGET_FILE_SIZE = 128 * 1024 * 1024
_UNITS = {"": 1, "B": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*$", re.IGNORECASE)


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


def parse_size(size: int | str) -> int:
    """Bytes in ``size``: an int, or text such as ``"256MB"``, ``"1.5 GiB"``, ``"4096"``."""
    if isinstance(size, bool):
        raise InvalidArgumentError(f"invalid size {size!r}")
    if isinstance(size, int):
        value = size
    else:
        match = _SIZE.match(size)
        if not match:
            raise InvalidArgumentError(
                f"invalid size {size!r}; accepted: bytes as an int, or a number with a unit "
                "B, KB, MB, GB, TB (e.g. '256MB')"
            )
        value = int(float(match.group(1)) * _UNITS[match.group(2).upper()])
    if value < 1:
        raise InvalidArgumentError(f"size must be at least 1 byte, got {size!r}")
    return value


def _clustered_by_one_run(files: Sequence[DataFile], plan: ClusteringPlan) -> bool:
    """Every one of ``files`` was written by one run with ``plan``'s clustering.

    Files appended later (by anyone, zorder's own appends included: each run
    is clustered on its own) or a different spec make the table worth
    rewriting. A run's directory name carries the spec's fingerprint.
    """
    runs = {Run.of_path(f.path) for f in files}
    if len(runs) != 1:
        return False
    run = next(iter(runs))
    return run is not None and run.fingerprint == plan.spec.fingerprint


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
    INT96); larger Arrow batches for the key UDFs unless the session chose a
    size itself.
    """
    wanted = {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"}
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
    written: WrittenFile, layout: PartitionedLayout, columns: tuple[str, ...]
) -> WrittenFile:
    """``written`` with the partition values of the file number Spark named it after."""
    match = _SPARK_FILE.search(written.path)
    if match is None:  # pragma: no cover (Spark's naming is part of its file format contract)
        raise ZorderError(f"cannot tell which file of the run Spark wrote as {written.path!r}")
    partition = layout.partition_of_file(int(match.group(1)))
    values = {c: delta_partition_value(v) for c, v in zip(columns, partition.values, strict=True)}
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
    partitioned: PartitionedLayout | None = None,
    partition_by: tuple[str, ...] = (),
    removed: Sequence[DataFile] | None = None,
) -> ClusterMetrics:
    spec = plan.spec
    run = Run.new(spec)
    configuration = snapshot.configuration if snapshot else {}
    # An optimize knows its row count from the snapshot's statistics: no count job.
    rows = snapshot.counted_rows if snapshot and commit_mode == "rewrite" else None
    if partitioned is not None:
        laid_out = partitioned.frame
    else:
        laid_out = cluster(df, plan, num_files=num_files, sample_size=sample_size, rows=rows)
    if removed is None:
        removed = snapshot.files if commit_mode == "rewrite" and snapshot else ()
    try:
        with _write_settings(df.sparkSession):
            writer = laid_out.write.mode("errorifexists")
            if partition_by:
                writer = writer.partitionBy(*partition_by)
            writer.parquet(f"{uri}/{run.directory}")
        remove_writer_markers(uri, run.directory)
        written = describe_written_files(uri, run.directory, df.schema, configuration)
        if partitioned is not None:
            written = [_in_partition(f, partitioned, partition_by) for f in written]
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


def write(
    df: DataFrame,
    path: str,
    *,
    by: Sequence[str],
    mode: WriteMode = "error",
    curve: Curve = "zorder",
    num_files: int | None = None,
    target_file_size: int | str | None = None,
    method: KeyMethod = "rank",
    sample_size: int | None = None,
    partition_by: Sequence[str] | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> ClusterMetrics:
    """Cluster ``df`` by the columns ``by`` along ``curve`` into the Delta table at ``path``.

    ``partition_by`` makes a new table partitioned by those columns (an append
    uses the table's own; a different list is an error). The rows of each
    partition are clustered on their own: every file holds one partition.
    ``num_files`` is then the total, shared by the partitions' row counts
    (one file each at least), and ``target_file_size`` applies per partition.

    ``mode`` follows Spark's writer: ``"error"`` refuses an existing table,
    ``"append"`` adds files (creating the table if needed), ``"overwrite"``
    replaces every file in the same commit. ``num_files`` is exact (empty
    ranges give no file); otherwise ``target_file_size`` (default 128 MB,
    accepts ``"256MB"``) is divided into Spark's estimate of the input size.
    The files are cut at quantiles of a sample of ``sample_size`` rows, by
    default 1,000 a file (at least 100,000, at most 1,000,000), which keeps
    file sizes within about 10% of each other up to 1,000 files.
    """
    started = time.perf_counter()
    if mode not in WRITE_MODES:
        raise InvalidArgumentError(f"unknown mode {mode!r}; accepted: {', '.join(WRITE_MODES)}")
    uri = normalize_uri(path)
    plan = plan_clustering(df, by, curve=curve, method=method)
    partition_columns = resolve_partition_columns(df, partition_by, plan) if partition_by else ()
    if num_files is None:
        target = parse_size(target_file_size or DEFAULT_TARGET_FILE_SIZE)  # validate first
    else:
        _file_count(num_files, target_file_size, None)  # validate first
        target = DEFAULT_TARGET_FILE_SIZE
    snapshot = None
    commit_mode: CommitMode = "create"
    if is_delta_table(uri, storage_options):
        if mode == "error":
            raise TableExistsError(
                f"a Delta table already exists at {uri}; use mode='append' to add to it "
                "or mode='overwrite' to replace it"
            )
        snapshot = load_snapshot(uri, storage_options)
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
        commit_mode = "append" if mode == "append" else "overwrite"
    estimated = _estimated_bytes(df) if num_files is None else 0
    layout = None
    if partition_columns:
        layout = _partitioned_layout(
            df, plan, partition_columns, num_files=num_files, bytes_total=estimated, target=target
        )
    if layout is not None:
        files = layout.first_file[-1]
    else:
        files = _file_count(num_files, None if num_files else target, estimated)
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
        partitioned=layout,
        partition_by=partition_columns,
    )


def optimize(
    spark: SparkSession,
    path: str,
    *,
    by: Sequence[str],
    curve: Curve = "zorder",
    num_files: int | None = None,
    target_file_size: int | str | None = None,
    method: KeyMethod = "rank",
    sample_size: int | None = None,
    where: str | None = None,
    storage_options: Mapping[str, str] | None = None,
    force: bool = False,
) -> ClusterMetrics:
    """Rewrite the Delta table at ``path`` clustered by ``by``, in one commit.

    On a partitioned table each partition is clustered on its own. ``where``
    (SQL over partition columns only, as Delta's ``OPTIMIZE ... WHERE``)
    chooses the partitions; files of the others are neither read nor
    rewritten. A partition whose files already come from one zorder run with
    the same clustering is left alone. ``num_files`` is the total over the
    partitions rewritten, shared by their rows (one file each at least), and
    ``target_file_size`` applies per partition.

    The new files are added and every file of the version read is removed in
    a single transaction with ``dataChange = false``. delta-rs checks it
    against anything committed meanwhile: files appended by others are kept,
    and a concurrent removal of a file read here makes the commit fail with
    :class:`~zorder.errors.ConcurrentCommitError`, leaving the table as the
    other writer left it.

    A table whose files all come from one zorder run with the same columns,
    curve and key method is already clustered: nothing is rewritten and no
    commit is made (the metrics report 0 files and ``version=None``).
    ``force=True`` rewrites it anyway (to change the number of files, say).
    """
    started = time.perf_counter()
    uri = normalize_uri(path)
    snapshot = load_snapshot(uri, storage_options)
    # Only the schema is needed to check the request: no file is listed yet.
    plan = plan_clustering(snapshot.schema_frame(spark), by, curve=curve, method=method)
    if where is not None or snapshot.partition_columns:
        return _optimize_partitions(
            spark,
            snapshot,
            plan,
            where=where,
            num_files=num_files,
            target_file_size=target_file_size,
            force=force,
            storage_options=storage_options,
            started=started,
        )
    files = _file_count(num_files, target_file_size, snapshot.total_bytes)
    if not snapshot.files or (not force and _clustered_by_one_run(snapshot.files, plan)):
        return _unchanged(uri, plan, files, started)
    return _write_and_commit(
        snapshot.dataframe(spark),
        uri=uri,
        plan=plan,
        operation="optimize",
        commit_mode="rewrite",
        snapshot=snapshot,
        num_files=files,
        sample_size=sample_size,
        storage_options=storage_options,
        started=started,
    )


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
        partitions = count_partitions(df, key, columns)
    if not partitions:
        return None
    per_partition = files_per_partition(
        partitions, num_files=num_files, bytes_total=bytes_total, target=target
    )
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


def _optimize_partitions(
    spark: SparkSession,
    snapshot: TableSnapshot,
    plan: ClusteringPlan,
    *,
    where: str | None,
    num_files: int | None,
    target_file_size: int | str | None,
    force: bool,
    storage_options: Mapping[str, str] | None,
    started: float,
) -> ClusterMetrics:
    """Optimize of a partitioned table: the chosen partitions, each clustered on its own."""
    uri, columns = snapshot.uri, snapshot.partition_columns
    if not columns:
        raise InvalidArgumentError(
            f"where={where!r} chooses partitions, but table {uri} has no partition columns; "
            "leave where out to optimize the whole table"
        )
    target = parse_size(target_file_size or DEFAULT_TARGET_FILE_SIZE)
    if num_files is not None:
        _file_count(num_files, target_file_size, None)  # validate first
    resolve_partition_columns(snapshot.schema_frame(spark), columns, plan)  # clustered by one?
    groups = snapshot.files_by_partition()
    chosen = (
        set(groups) if where is None else _chosen_partitions(spark, snapshot, list(groups), where)
    )
    todo = [
        p for p in groups if p in chosen and (force or not _clustered_by_one_run(groups[p], plan))
    ]
    if not todo:
        return _unchanged(uri, plan, num_files or 0, started)
    read = [f for p in todo for f in groups[p]]
    key = f"__zorder_partition_{uuid.uuid4().hex}"
    df = snapshot.read_partitions(spark, todo, index_column=key)
    layout = _partitioned_layout(
        df,
        plan,
        columns,
        num_files=num_files,
        bytes_total=sum(f.size for f in read),
        target=target,
        key=key,
        partitions=_logged_partitions(todo, groups),
    )
    if layout is None:  # the chosen partitions' files hold no rows: nothing to cluster
        return _unchanged(uri, plan, num_files or 0, started)
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
        partitioned=layout,
        partition_by=columns,
        removed=read,
    )
