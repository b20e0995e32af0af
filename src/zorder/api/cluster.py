"""``write`` and ``optimize``: cluster rows along a curve into a Delta table.

Both follow one path: check everything, lay the rows out with Spark (key,
one partition per file, sort within files), write Parquet into a directory of the
run's own under the table root, read the footers for statistics, and commit
all files in one Delta transaction. Anything that fails before the commit
removes the run's directory and leaves the table as it was.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal, get_args

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from zorder.curves.kinds import Curve, KeyMethod
from zorder.errors import (
    InvalidArgumentError,
    SchemaMismatchError,
    TableExistsError,
    UnsupportedTableError,
)
from zorder.spark.layout import ClusteringPlan, cluster, plan_clustering
from zorder.table import (
    CommitMode,
    TableSnapshot,
    commit_files,
    delete_directory,
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


def _clustered_by_one_run(snapshot: TableSnapshot, plan: ClusteringPlan) -> bool:
    """Every file of ``snapshot`` was written by one run with ``plan``'s clustering.

    Files appended later (by anyone, zorder's own appends included: each run
    is clustered on its own) or a different spec make the table worth
    rewriting. A run's directory name carries the spec's fingerprint.
    """
    runs = {Run.of_path(f.path) for f in snapshot.files}
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
) -> ClusterMetrics:
    spec = plan.spec
    run = Run.new(spec)
    configuration = snapshot.configuration if snapshot else {}
    # An optimize knows its row count from the snapshot's statistics: no count job.
    rows = snapshot.counted_rows if snapshot and commit_mode == "rewrite" else None
    laid_out = cluster(df, plan, num_files=num_files, sample_size=sample_size, rows=rows)
    removed = snapshot.files if commit_mode == "rewrite" and snapshot else ()
    try:
        with _write_settings(df.sparkSession):
            laid_out.write.mode("errorifexists").parquet(f"{uri}/{run.directory}")
        remove_writer_markers(uri, run.directory)
        written = describe_written_files(uri, run.directory, df.schema, configuration)
        version = commit_files(
            uri,
            df.schema,
            written,
            mode=commit_mode,
            snapshot=snapshot,
            removed=removed,
            clustering=CommitClustering(operation, run, spec, len(written)),
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
    storage_options: Mapping[str, str] | None = None,
) -> ClusterMetrics:
    """Cluster ``df`` by the columns ``by`` along ``curve`` into the Delta table at ``path``.

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
    if num_files is None:
        target = parse_size(target_file_size or DEFAULT_TARGET_FILE_SIZE)  # validate first
        files = _file_count(None, target, _estimated_bytes(df))
    else:
        files = _file_count(num_files, target_file_size, None)
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
        if snapshot.partition_columns:
            raise UnsupportedTableError(
                f"table {uri} is partitioned by {list(snapshot.partition_columns)}; "
                "zorder writes unpartitioned tables only"
            )
        commit_mode = "append" if mode == "append" else "overwrite"
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
    storage_options: Mapping[str, str] | None = None,
    force: bool = False,
) -> ClusterMetrics:
    """Rewrite the Delta table at ``path`` clustered by ``by``, in one commit.

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
    if snapshot.partition_columns:
        raise UnsupportedTableError(
            f"table {uri} is partitioned by {list(snapshot.partition_columns)}; "
            "zorder optimizes unpartitioned tables only"
        )
    df = snapshot.dataframe(spark)
    plan = plan_clustering(df, by, curve=curve, method=method)
    files = _file_count(num_files, target_file_size, snapshot.total_bytes)
    if not snapshot.files or (not force and _clustered_by_one_run(snapshot, plan)):
        return _unchanged(uri, plan, files, started)
    return _write_and_commit(
        df,
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
