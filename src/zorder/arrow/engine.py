"""The in-process engine: a write or an optimize run in this process, without a JVM.

For work within the bounds of :mod:`zorder.plan.engines`. The rows are read
with pyarrow (an optimize's files as Spark reads them: deleted rows left out,
partition values from the log, a column-mapped table's names), keyed with the
file plan fitted on the same sample the Spark engine fits on (for an optimize,
:func:`zorder.arrow.sample.sample_files`, which the Spark engine also uses for
such work), cut and sorted into the same files (:mod:`zorder.arrow.layout`),
written as Spark writes them (:mod:`zorder.arrow.writes`): :class:`ArrowRun`, a
:class:`~zorder.plan.runs.RunEngine`, committed through the path both engines share
(:func:`zorder.plan.runs.execute_and_commit`).

A partitioned table is worked one partition at a time, so the rows held are
one partition's. Files only Spark reads right (written in Spark's legacy
hybrid calendar) stop the run before anything is committed:
:class:`NeedsSparkError`, on which ``engine="auto"`` runs Spark instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from deltalake import Schema as DeltaSchema

from zorder.arrow.files import LegacyCalendarError, read_file, read_in_order
from zorder.arrow.layout import FileRows, curve_files, sorted_files
from zorder.arrow.sample import drawn_rows, ranked_sample, sample_plan
from zorder.arrow.writes import ParquetOptions, ancient_values, hive_directory, write_files
from zorder.curves.clustering import DEFAULT_SAMPLE_SEED
from zorder.curves.kinds import BLOOM_ROWS_SLACK, rows_per_row_group
from zorder.curves.partitions import (
    Partition,
    PartitionFiles,
    check_partitioned_plan,
    files_per_partition,
    fit_partitions,
    logged_partitions,
    partition_sample_sizes,
)
from zorder.curves.ranks import ranked_prefix
from zorder.errors import BrokenTableError, InternalError, InvalidArgumentError
from zorder.plan.engines import InProcessWork
from zorder.plan.jobs import ClusterJob, file_count
from zorder.plan.progress import files_planned, phase
from zorder.plan.runs import InProcessInput, RunOutput, RunPlan, partition_texts
from zorder.table import DataFile, TableSnapshot, by_partition
from zorder.table.clustering import Run
from zorder.table.delta.schema import delta_schema

__all__ = [
    "ArrowRun",
    "NeedsSparkError",
    "declined_in_process",
    "optimize_work",
]


class NeedsSparkError(Exception):
    """Found while running in process: this work must run in Spark (nothing is committed).

    Control flow, not a :class:`~zorder.errors.ZorderError`: the runner catches it and
    runs Spark, or, for ``engine="arrow"``, raises the reason as a refusal."""


def optimize_work(read: Sequence[DataFile]) -> InProcessWork:
    """What rewriting ``read`` in process would read."""
    counts = [f.num_records for f in read]
    rows = None if any(c is None or c < 0 for c in counts) else sum(c or 0 for c in counts)
    return InProcessWork(rows=rows, bytes=sum(f.size for f in read), files=len(read))


def declined_in_process(job: ClusterJob) -> str | None:
    """Why ``job``'s rows cannot be clustered in process, or None."""
    plan = job.plan
    if plan.method == "direct" and not plan.sorts_plainly:
        return "direct keys are computed in Spark"
    if plan.bloom_filters and not _writes_blooms():
        return "this pyarrow writes no Parquet bloom filters"
    snapshot = job.snapshot
    stored = [
        snapshot.schema.stored_name(b.column) if snapshot else b.column
        for b in plan.spec.bloom_filters
    ]
    odd = [n for n in stored if "." in n or n != n.strip()]
    if odd:
        return f"bloom filter column {odd[0]!r} has a name Parquet's writer options cannot take"
    return None


def _writes_blooms() -> bool:
    import inspect

    import pyarrow.parquet as pq

    return "bloom_filter_options" in inspect.signature(pq.ParquetWriter.__init__).parameters


def parquet_options(job: ClusterJob, schema: pa.Schema, rows_per_file: int) -> ParquetOptions:
    """How ``job``'s files are written: ``schema`` (the stored data columns), row groups and
    bloom filters sized for ``rows_per_file`` as the Spark engine sizes them."""
    group = rows_per_row_group(rows_per_file, job.sized_by)
    snapshot = job.snapshot
    blooms = {
        (snapshot.schema.stored_name(b.column) if snapshot else b.column): b.fpp
        for b in job.plan.bloom_filters
    }
    return ParquetOptions(
        schema=schema,
        blooms=blooms,
        bloom_rows=BLOOM_ROWS_SLACK * group if group else None,
        row_group_rows=group,
    )


def stored_rows(snapshot: TableSnapshot, rows: pa.Table) -> pa.Table:
    """``rows`` (the table's logical columns) as ``snapshot``'s files hold them: the data
    columns in the table's order, under stored names and types (field ids in ``id`` mode)."""
    stored = snapshot.schema.stored_arrow
    partitions = set(snapshot.partition_columns)
    columns, fields = [], []
    for logical in snapshot.schema.arrow:
        if logical.name in partitions:
            continue
        field = stored.field(snapshot.schema.stored_name(logical.name))
        column = rows.column(logical.name).cast(logical.type)
        if snapshot.schema.mapping is not None:
            column = snapshot.schema.mapping.stored_array(column, field.type)
        columns.append(column)
        fields.append(field)
    return pa.Table.from_arrays(columns, schema=pa.schema(fields))


@dataclass(frozen=True)
class ArrowRun:
    """The in-process engine: a plan executed in this process. A write's rows are
    ``source``'s (their partition values, instants, taken in ``time_zone``, the handle's
    context's, where the table's log writes them without one); an optimize reads the
    plan's files."""

    time_zone: str
    source: InProcessInput | None = None

    def execute(self, plan: RunPlan, run: Run) -> RunOutput:
        if plan.job.operation == "optimize":
            return _optimized(plan.job, plan.read, run)
        assert self.source is not None, "a write's input is given"
        return _written(plan.job, self.source, run, self.time_zone)


def _optimized(job: ClusterJob, read: Sequence[DataFile], run: Run) -> RunOutput:
    """Optimize's run in this process: the rows of ``read`` (files of the job's snapshot)
    clustered and written."""
    snapshot = job.snapshot
    assert snapshot is not None, "an optimize has a table"
    if job.partition_by:
        partitioned = _rewrite_partitions(job, snapshot, read, run)
        # No rows left: the files go, and nothing takes their place.
        files = 0 if partitioned is None else partitioned.first_file[-1]
    else:
        partitioned, files = None, _rewrite_files(job, snapshot, read, run)
    return RunOutput(
        run=run,
        columns=[snapshot.schema.stored_name(c) for c in _data_columns(snapshot)],
        schema=snapshot.schema.delta,
        files=files,
        engine=job.chosen_engine,
        rows=optimize_work(read).rows,
        partitioned=partitioned,
    )


def _data_columns(snapshot: TableSnapshot) -> list[str]:
    partitions = set(snapshot.partition_columns)
    return [f.name for f in snapshot.schema.arrow if f.name not in partitions]


def _read_files(snapshot: TableSnapshot, files: Sequence[DataFile]) -> list[pa.Table]:
    """Every column of each of ``files``' live rows, as Spark reads them."""
    columns = list(snapshot.schema.arrow.names)
    return list(read_in_order(lambda f: _read_checked(snapshot, f, columns), files))


def _read_checked(snapshot: TableSnapshot, data_file: DataFile, columns: list[str]) -> pa.Table:
    try:
        return read_file(snapshot, data_file, columns, refuse_legacy_calendar=True)
    except LegacyCalendarError as error:
        raise NeedsSparkError(f"{data_file.path}: {error}") from None


def _sample_of(
    job: ClusterJob,
    parts: Sequence[pa.Table],
    files: Sequence[DataFile],
    taken: dict[str, tuple[int, int]],
) -> pa.Table:
    """The sample :func:`~zorder.arrow.sample.sample_files` draws from ``files``, drawn from
    their rows read already (``parts``): the same rows, without reading them again."""
    names = job.plan.names
    drawn = [
        drawn_rows(part.select(names), taken[f.path])
        for part, f in zip(parts, files, strict=True)
        if taken[f.path][0] > 0
    ]
    snapshot = job.snapshot
    assert snapshot is not None
    return ranked_sample(drawn, pa.schema([snapshot.schema.arrow.field(n) for n in names]))


def _concatenated(snapshot: TableSnapshot, parts: Sequence[pa.Table]) -> pa.Table:
    rows = pa.concat_tables(parts) if parts else snapshot.schema.arrow.empty_table()
    _check_calendar(rows)
    return rows


def _check_calendar(rows: pa.Table) -> None:
    """NeedsSparkError for rows whose dates or timestamps the calendars disagree on: Spark
    3.5 reads such values from files pyarrow wrote only when told how to rebase them
    (``spark.sql.parquet.datetimeRebaseModeInRead``); Spark's engine writes them readably."""
    found = ancient_values(rows)
    if found is not None:
        raise NeedsSparkError(
            f"{found}, before the Gregorian calendar's start (1582-10-15; timestamps: 1900), "
            "which Spark 3.5 reads from files only Spark wrote"
        )


def _rewrite_files(
    job: ClusterJob, snapshot: TableSnapshot, read: Sequence[DataFile], run: Run
) -> int:
    """An unpartitioned optimize's files written into ``run``'s directory; how many were
    planned."""
    bytes_read = sum(f.size for f in read)
    files = file_count(job.num_files, job.sized_by, bytes_read)
    plan = job.plan
    phase("clustering and writing")
    parts = _read_files(snapshot, read)
    if plan.sorts_plainly:
        rows = _concatenated(snapshot, parts)
        laid_out = sorted_files(rows, plan, count=files)
    else:
        phase("sampling")
        size = job.sample_rows(files)
        taken = sample_plan([read], [size], seed=DEFAULT_SAMPLE_SEED)
        fitted = plan.fit(_sample_of(job, parts, read, taken), count=files)
        phase("clustering and writing")
        rows = _concatenated(snapshot, parts)
        laid_out = curve_files(rows, plan, fitted)
    del parts
    _write_run(job, stored_rows(snapshot, rows), laid_out, run, files)
    return files


def _check_empty(snapshot: TableSnapshot, files: Sequence[DataFile]) -> None:
    """Refuse to rewrite partitions the log counts no live row in while a file of theirs
    holds one: their files are removed and not read (Spark's engine refuses such rows too,
    meeting a partition its count did not see)."""
    for data_file in files:
        found = read_file(snapshot, data_file, []).num_rows
        if found:
            raise BrokenTableError(
                f"table {snapshot.uri} (version {snapshot.version}): the log counts no live "
                f"row in {data_file.path}, which holds {found:,}; nothing was committed"
            )


def _rewrite_partitions(
    job: ClusterJob, snapshot: TableSnapshot, read: Sequence[DataFile], run: Run
) -> PartitionFiles | None:
    """A partitioned optimize's files, partition by partition (one partition's rows held at
    a time), written into ``run``'s directory; None when no partition has a row."""
    groups = by_partition(read)
    todo = list(groups)
    check_partitioned_plan(job.plan)
    partitions = logged_partitions(todo, groups)
    counted = {p.values for p in partitions or ()}
    _check_empty(snapshot, [f for values in todo if values not in counted for f in groups[values]])
    if not partitions:
        return None
    per_partition = files_per_partition(
        partitions,
        num_files=job.num_files,
        bytes_total=sum(f.size for f in read),
        target=job.target,
    )
    sizes = partition_sample_sizes(per_partition, partitions)
    own = [groups[todo[int(p.key)]] for p in partitions]
    taken = sample_plan(own, sizes, seed=DEFAULT_SAMPLE_SEED)  # for every partition, in order
    # Filters are sized by the files asked for (Spark's engine: by the files its plans cut,
    # the same unless a partition has fewer distinct keys than files).
    asked = PartitionFiles(tuple(partitions), tuple(np.cumsum([0, *per_partition]).tolist()))
    first_file = [0]
    written = files_planned(sum(per_partition))  # the files asked for; an empty one is not written
    for index, partition in enumerate(partitions):
        phase("clustering and writing")
        parts = _read_files(snapshot, own[index])
        phase("sampling")
        sample = _sample_of(job, parts, own[index], taken)
        fitted = job.plan.fit(sample, count=per_partition[index])
        phase("clustering and writing")
        rows = _concatenated(snapshot, parts)
        del parts
        laid_out = curve_files(rows, job.plan, fitted, first_file=first_file[-1])
        first_file.append(first_file[-1] + fitted.count)
        stored = stored_rows(snapshot, rows)
        write_files(
            stored,
            laid_out,
            storage=job.storage,
            directory=run.directory,
            options=parquet_options(job, stored.schema, asked.rows_per_file),
            subdirectory=_constant(_partition_directory(job, partition)),
            written=written,
        )
        del rows, stored  # one partition's rows held at a time
    return PartitionFiles(partitions=tuple(partitions), first_file=tuple(first_file))


def _fitted(
    job: ClusterJob,
    partitions: Sequence[Partition],
    samples: Sequence[pa.Table],
    sizes: Sequence[int],
    files: Sequence[int],
) -> tuple[list[Any], list[int]]:
    """Each partition's file plan fitted on its sample, as the Spark engine fits them (one
    table of every sample, its first column the partition's key)."""
    sample = pa.concat_tables(
        part.add_column(0, "__partition", pa.repeat(pa.scalar(p.key, pa.int64()), part.num_rows))
        for p, part in zip(partitions, samples, strict=True)
    )
    known = pa.array([p.key for p in partitions], pa.int64())
    return fit_partitions(sample, known, job.plan, sizes, files, DEFAULT_SAMPLE_SEED)


def _partition_directory(
    job: ClusterJob, partition: Partition, time_zone: str | None = None
) -> str:
    """The hive-style directory of ``partition``'s files, named after its log values."""
    texts = partition_texts(job, partition, time_zone)
    snapshot = job.snapshot
    names = [snapshot.schema.stored_name(c) if snapshot else c for c in job.partition_by]
    return hive_directory(names, [texts[n] for n in names])


def _written(job: ClusterJob, source: InProcessInput, run: Run, time_zone: str) -> RunOutput:
    """A write's run in this process: ``source``'s rows clustered and written; a
    partition's values (instants) are taken in ``time_zone`` where the table's log writes
    them without a zone."""
    phase("reading")
    try:
        rows = source.read()
    except LegacyCalendarError as error:
        raise NeedsSparkError(str(error)) from None
    table = _table_schema(job, source)
    for name in job.evolution.filled if job.evolution is not None else ():
        # schema_mode="merge": a nullable column of the table the rows lack is NULL.
        rows = rows.append_column(name, pa.nulls(rows.num_rows, table.field(name).type))
    try:
        rows = rows.select(table.names).cast(table)
    except pa.ArrowInvalid as error:
        raise InvalidArgumentError(
            f"the rows of {job.uri}'s {job.operation} do not fit the table's schema ({error}): "
            f"a NULL in a column declared NOT NULL, or a value its type cannot hold"
        ) from None
    _check_calendar(rows)
    stored_schema = _stored_schema(job, table)
    input_bytes = source.work.bytes if source.work is not None else rows.nbytes
    if job.partition_by:
        partitioned = _write_partitions(job, rows, stored_schema, run, input_bytes, time_zone)
        files = partitioned.first_file[-1] if partitioned is not None else 0
    else:
        partitioned = None
        files = job.num_files or file_count(None, job.target, input_bytes)
        _write_rows(job, rows, stored_schema, run, files)
    return RunOutput(
        run=run,
        columns=stored_schema.names,
        schema=job.snapshot.schema.delta if job.snapshot else _created_schema(source),
        files=files,
        engine=job.chosen_engine,
        rows=rows.num_rows,  # exactly the rows read: a file short of them is refused
        partitioned=partitioned,
        time_zone=time_zone,
    )


def _constant(directory: str) -> Callable[[int], str]:
    return lambda _: directory


def _created_schema(source: InProcessInput) -> DeltaSchema:
    """The schema of the table a write of ``source`` creates."""
    if source.schema is None:  # pragma: no cover (a declined input never runs here)
        raise InternalError("no schema for an input the in-process engine declined")
    return delta_schema(source.schema)


def _table_schema(job: ClusterJob, source: InProcessInput) -> pa.Schema:
    """The table's logical columns in Arrow types: the table's, or those of the one created."""
    if job.snapshot is not None:
        return job.snapshot.schema.arrow
    return pa.schema(_created_schema(source).to_arrow())


def _stored(job: ClusterJob, rows: pa.Table) -> pa.Table:
    """``rows`` (the table's logical columns) as the run's files hold them."""
    if job.snapshot is not None:
        return stored_rows(job.snapshot, rows)
    return rows.select([c for c in rows.column_names if c not in job.partition_by])


def _stored_schema(job: ClusterJob, table: pa.Schema) -> pa.Schema:
    return _stored(job, table.empty_table()).schema


def _drawn(rows: pa.Table, job: ClusterJob, size: int, rng: np.random.Generator) -> pa.Table:
    """``size`` of ``rows`` (all, when fewer) drawn uniformly without replacement: the
    clustering columns as rank buckets see them."""
    picks = np.sort(rng.choice(rows.num_rows, min(size, rows.num_rows), replace=False))
    taken = rows.select(job.plan.names).take(pa.array(picks, pa.int64()))
    return pa.table([ranked_prefix(c) for c in taken.columns], names=job.plan.names)


def _write_rows(
    job: ClusterJob, rows: pa.Table, stored_schema: pa.Schema, run: Run, files: int
) -> None:
    """An unpartitioned write's rows cut into ``files`` files and written into ``run``'s
    directory."""
    if rows.num_rows == 0:
        return
    plan = job.plan
    phase("sampling")
    fitted = None
    if not plan.sorts_plainly:
        size = job.sample_rows(files)
        sample = _drawn(rows, job, size, np.random.default_rng(DEFAULT_SAMPLE_SEED))
        fitted = plan.fit(sample, count=files)
    phase("clustering and writing")
    if fitted is None:
        laid_out = sorted_files(rows, plan, count=files)
    else:
        laid_out = curve_files(rows, plan, fitted)
    _write_run(job, _stored(job, rows), laid_out, run, files, schema=stored_schema)


def _write_run(
    job: ClusterJob,
    stored: pa.Table,
    laid_out: FileRows,
    run: Run,
    files: int,
    *,
    schema: pa.Schema | None = None,
) -> None:
    """An unpartitioned run's rows (``stored``: the table's names and types) written into
    ``run``'s directory as ``laid_out`` places them in ``files`` files; their Parquet
    options sized from ``schema`` (default: the rows')."""
    options = parquet_options(job, schema or stored.schema, -(-stored.num_rows // files))
    write_files(
        stored,
        laid_out,
        storage=job.storage,
        directory=run.directory,
        options=options,
        written=files_planned(len(laid_out.numbers)),
    )


def _row_partitions(rows: pa.Table, columns: Sequence[str]) -> tuple[list[Partition], list[Any]]:
    """The partitions of ``rows`` (by ``columns``; NULL a value of its own), each keyed by
    its index, and each partition's row indices."""
    dictionaries = []
    for name in columns:
        # One array first: chunks encoded apart would each have a dictionary of their own.
        encoded = pc.dictionary_encode(rows.column(name).combine_chunks(), null_encoding="encode")
        indices = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        dictionaries.append((encoded.dictionary, indices))
    codes = np.stack([i for _, i in dictionaries], axis=1)  # a row of indices each: no overflow
    _, first, inverse, counts = np.unique(
        codes, axis=0, return_index=True, return_inverse=True, return_counts=True
    )
    inverse = inverse.reshape(-1)
    order = np.argsort(inverse, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(counts)])
    partitions, members = [], []
    for index, row in enumerate(first):
        values = tuple(d[int(i[row])].as_py() for d, i in dictionaries)
        partitions.append(Partition(index, values, int(counts[index])))
        members.append(order[bounds[index] : bounds[index + 1]])
    return partitions, members


def _write_partitions(
    job: ClusterJob,
    rows: pa.Table,
    stored_schema: pa.Schema,
    run: Run,
    input_bytes: int,
    time_zone: str,
) -> PartitionFiles | None:
    """A partitioned write's rows, partition by partition, written into ``run``'s
    directory; None when there are none."""
    check_partitioned_plan(job.plan)
    phase("counting")
    partitions, members = _row_partitions(rows, job.partition_by)
    if not partitions:
        return None
    phase("sampling")
    per_partition = files_per_partition(
        partitions, num_files=job.num_files, bytes_total=input_bytes, target=job.target
    )
    sizes = partition_sample_sizes(per_partition, partitions)
    rng = np.random.default_rng(DEFAULT_SAMPLE_SEED)
    samples = [
        _drawn(rows.take(pa.array(m)), job, size, rng)
        for m, size in zip(members, sizes, strict=True)
    ]
    fitted, first_file = _fitted(job, partitions, samples, sizes, per_partition)
    layout = PartitionFiles(partitions=tuple(partitions), first_file=tuple(first_file))
    phase("clustering and writing")
    written = files_planned(first_file[-1])  # the files planned; an empty one is not written
    for index, partition in enumerate(partitions):
        own = rows.take(pa.array(members[index]))
        laid_out = curve_files(own, job.plan, fitted[index], first_file=first_file[index])
        directory = _partition_directory(job, partition, time_zone)
        write_files(
            _stored(job, own),
            laid_out,
            storage=job.storage,
            directory=run.directory,
            options=parquet_options(job, stored_schema, layout.rows_per_file),
            subdirectory=_constant(directory),
            written=written,
        )
    return layout
