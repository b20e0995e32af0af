"""A clustering request resolved and checked, before any job runs: a frozen job value.

``write`` and ``optimize`` take many options, and most default to what the
table records (its clustering spec, ``delta.targetFileSize``, its partition
columns). Everything is resolved and validated here, so a bad request raises
a :class:`~zorder.errors.ZorderError` naming the bad value before Spark
reads a row, and the run itself (:mod:`zorder.api.cluster`) works from one
:class:`ClusterJob`.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

from zorder.columns import resolve_columns
from zorder.curves.clustering import ClusteringPlan, sample_size_for
from zorder.curves.kinds import (
    BloomColumn,
    BloomFilters,
    ClusteringSpec,
    Curve,
    KeyMethod,
    as_curve,
    as_key_method,
    bloom_columns,
)
from zorder.curves.schema import (
    Columns,
    plan_clustering,
    resolve_partition_columns,
    same_type,
    type_text,
)
from zorder.errors import (
    InternalError,
    InvalidArgumentError,
    SchemaMismatchError,
    TableExistsError,
    UnsupportedTableError,
)
from zorder.plan.engines import EngineChoice
from zorder.plan.modes import SCHEMA_MODES, WRITE_MODES, SchemaMode, WriteMode
from zorder.sizes import DEFAULT_TARGET_FILE_SIZE, MAX_FILES, parse_size
from zorder.table import (
    CommitMode,
    Storage,
    TableSnapshot,
    WrittenFile,
)
from zorder.table.clustering import TARGET_FILE_SIZE_PROPERTY, Operation, spec_properties
from zorder.table.delta.transactions import AppTransaction
from zorder.table.partition_filters import check_partition_where
from zorder.table.tiering import check_fanout

__all__ = [
    "ClusterJob",
    "ClusterOptions",
    "OptimizeRequest",
    "Remember",
    "SchemaEvolution",
    "WriteRequest",
    "check_schema_mode",
    "check_size",
    "file_count",
    "optimize_job",
    "target_size",
    "write_commit_mode",
    "write_job",
]


@dataclass(frozen=True)
class Remember:
    """What a clustering commit records in the table's properties afterwards."""

    spec: ClusteringSpec | None  # None: leave the recorded spec as it is
    target_file_size: int | None  # None: the mean size of the files written (num_files)
    # The size was asked to be recorded (set_target_size=True): it replaces a recorded one.
    asked: bool = False
    # The size is this run's alone (num_files or target_file_size without set_target_size):
    # only a new table records it. Else (the default size) a table without one records it
    # with the first run that writes files (a run with nothing to do commits no size).
    one_off: bool = False

    def properties(
        self, snapshot: TableSnapshot | None, written: Sequence[WrittenFile]
    ) -> dict[str, str]:
        wanted = spec_properties(self.spec) if self.spec is not None else {}
        unrecorded = snapshot is not None and snapshot.recorded_target_file_size is None
        defaulted = unrecorded and not self.one_off and bool(written)
        if self.asked or snapshot is None or defaulted:
            size = self.target_file_size
            if size is None and written:
                size = max(1, sum(f.size for f in written) // len(written))
            if size is not None:
                wanted[TARGET_FILE_SIZE_PROPERTY] = str(size)
        return wanted


@dataclass(frozen=True)
class SchemaEvolution:
    """What ``schema_mode="merge"`` changes for a write into an existing table."""

    # The data's columns the table lacks, added to it before the data: a schema in Spark's
    # JSON form (Delta's log's), or None when there are none.
    added: str | None
    filled: tuple[str, ...] = ()  # the table's nullable columns the data lacks: NULL


@dataclass(frozen=True, eq=False, kw_only=True)
class ClusterJob:
    """One write or optimize, resolved: where, how, into which version, recording what."""

    storage: Storage  # the table's location and options, resolved once
    operation: Operation
    commit_mode: CommitMode
    snapshot: TableSnapshot | None  # None: the write creates the table
    plan: ClusteringPlan
    partition_by: tuple[str, ...]
    num_files: int | None  # exact, as asked; None: sized by target
    target: int  # bytes a file
    sample_size: int | None
    remember: Remember
    transaction: AppTransaction | None = None  # the writer's own txn, committed with the data
    engine: EngineChoice | None = None  # who runs it, once chosen (zorder.plan.engines)
    evolution: SchemaEvolution | None = None  # schema_mode="merge": how the schema changes
    where: str | None = None  # an optimize's choice of partitions (its commit records it)

    @property
    def uri(self) -> str:
        return self.storage.uri

    @property
    def chosen_engine(self) -> EngineChoice:
        """Who runs the job: chosen before any run, so asking sooner is a bug."""
        if self.engine is None:
            raise InternalError(f"no engine was chosen for the {self.operation} of {self.uri}")
        return self.engine

    @property
    def sized_by(self) -> int | None:
        """The bytes a file is sized to; None where ``num_files`` fixes the count instead."""
        return None if self.num_files else self.target

    def sample_rows(self, files: int) -> int:
        """The rows to sample for ``files`` files: as asked, else what cutting them needs."""
        return sample_size_for(files) if self.sample_size is None else self.sample_size


def file_count(
    num_files: int | None, target_file_size: int | str | None, input_bytes: int | None
) -> int:
    """``num_files`` (checked), else the input's bytes over the target size, at least 1."""
    if num_files is not None and target_file_size is not None:
        raise InvalidArgumentError("give num_files or target_file_size, not both")
    if num_files is not None:
        if isinstance(num_files, bool) or not isinstance(num_files, int) or num_files < 1:
            raise InvalidArgumentError(f"num_files must be a positive int, got {num_files!r}")
        if num_files > MAX_FILES:
            raise InvalidArgumentError(
                f"num_files={num_files:,} is more files than one run writes (at most "
                f"{MAX_FILES:,}, one Spark task each); give fewer, or target_file_size"
            )
        return num_files
    target = parse_size(
        target_file_size if target_file_size is not None else DEFAULT_TARGET_FILE_SIZE
    )
    return max(1, math.ceil((input_bytes or 0) / target))


@dataclass(frozen=True, kw_only=True)
class ClusterOptions:
    """What a write or an optimize is asked for alike, as given: None leaves it to the table
    (its recorded spec, ``delta.targetFileSize``), else to the default."""

    by: Sequence[str] | ClusteringSpec | None = None
    curve: Curve | None = None
    method: KeyMethod | None = None
    num_files: int | None = None
    target_file_size: int | str | None = None
    # Whether this run's size (num_files' or target_file_size) becomes the table's
    # delta.targetFileSize; else it sizes this run only (a table without one records it).
    set_target_size: bool = False
    sample_size: int | None = None
    # Columns whose files carry Parquet bloom filters: names, or names to false-positive
    # rates; None: the table's (as its spec records them), [] none.
    bloom_filters: BloomFilters | None = None
    # A write's only: how rows whose columns differ from the table's are met (None: strict).
    schema_mode: SchemaMode | None = None

    def __post_init__(self) -> None:
        """Refuse, on being asked, what is wrong whatever the table and the rows: a curve, a
        key method, a size, a sample size, bloom filters, a schema mode. Nothing has been
        read or started yet; the checks against the table and the rows come with the job."""
        if self.curve is not None:
            as_curve(self.curve)
        if self.method is not None:
            as_key_method(self.method)
        check_size(self.num_files, self.target_file_size)
        _size_asked(self)
        _check_sample_size(self.sample_size)
        if self.bloom_filters is not None:
            bloom_columns(self.bloom_filters)
        check_schema_mode(self.schema_mode)


@dataclass(frozen=True, kw_only=True)
class WriteRequest:
    """A write as asked, before its rows are read: the table at ``storage`` as of
    ``snapshot`` (its newest version; None: no table is there yet), the options, the
    mode, the partition columns asked for (None: the table's, else none) and the
    writer's application transaction, committed with the rows."""

    storage: Storage
    snapshot: TableSnapshot | None
    asked: ClusterOptions
    mode: WriteMode
    partition_by: Sequence[str] | None = None
    transaction: AppTransaction | None = None


@dataclass(frozen=True, kw_only=True)
class OptimizeRequest:
    """An optimize as asked: the table at ``storage`` as of ``snapshot`` (its newest
    version), the options, the partitions ``where`` chooses (None: all), whether every
    file is reclustered (``full``) or only those no run vouches for and full tiers, and
    the runs a tier merges at once (``fanout``)."""

    storage: Storage
    snapshot: TableSnapshot
    asked: ClusterOptions
    where: str | None
    full: bool
    fanout: int


def write_job(schema: str, request: WriteRequest) -> ClusterJob:
    """``zorder.write``'s ``request``, checked against the rows' ``schema`` (in Spark's JSON
    form, which Delta's log holds: whichever engine reads the rows, no engine's types) and
    the table's snapshot; ``asked.schema_mode="merge"`` lets the rows bring new columns."""
    storage, snapshot, asked, mode = request.storage, request.snapshot, request.asked, request.mode
    commit_mode = write_commit_mode(mode, storage, snapshot)
    columns = Columns.from_json(schema)
    plan = plan_clustering(columns, _resolved_spec(asked, snapshot, storage))
    evolution = None
    if snapshot is not None:
        evolution = _evolution(
            snapshot.schema.json, schema, asked.schema_mode, f"{mode} to {storage.uri}"
        )
    partition_columns = _write_partitions(columns, plan, request.partition_by, snapshot, mode)
    records_spec = commit_mode != "append" or snapshot is None or snapshot.recorded_spec is None
    if not records_spec and asked.bloom_filters is not None:
        _check_append_blooms(plan.spec, snapshot)
    _check_blooms_outside(plan, partition_columns)
    job = _job(
        storage,
        snapshot,
        asked,
        plan,
        operation=("write", commit_mode),
        partition_by=partition_columns,
        records=plan.spec if records_spec else None,
        transaction=request.transaction,
    )
    return dataclasses.replace(job, evolution=evolution)


def write_commit_mode(
    mode: WriteMode, storage: Storage, snapshot: TableSnapshot | None
) -> CommitMode:
    """How a write in ``mode`` commits to the table at ``storage`` as of ``snapshot`` (None:
    no table): refused, before the rows are read, where the mode or the table forbids it."""
    if mode not in WRITE_MODES:
        raise InvalidArgumentError(f"unknown mode {mode!r}; accepted: {', '.join(WRITE_MODES)}")
    if snapshot is None:
        return "create"
    if mode == "error":
        raise TableExistsError(
            f"a Delta table already exists at {storage.uri}; use mode='append' to add to it "
            "or mode='overwrite' to replace it"
        )
    snapshot.check_writable("append")  # an overwrite adds whole rows too
    return "append" if mode == "append" else "overwrite"


def check_schema_mode(schema_mode: object) -> None:
    """Refuse a ``schema_mode`` other than None (strict) and those accepted."""
    if schema_mode is not None and schema_mode not in SCHEMA_MODES:
        raise InvalidArgumentError(
            f"unknown schema_mode {schema_mode!r}; accepted: None (the default: the rows' "
            f"columns must be the table's), {', '.join(repr(m) for m in SCHEMA_MODES)}"
        )


def _check_blooms_outside(plan: ClusteringPlan, partition_columns: Sequence[str]) -> None:
    """Refuse a bloom filter on a partition column: its files hold no such column."""
    inside = [b.column for b in plan.bloom_filters if b.column in partition_columns]
    if inside:
        raise InvalidArgumentError(
            f"bloom filter column {inside[0]!r} is a partition column: its values live in the "
            "log, not in the files, and the partitions already skip by it; leave it out of "
            "bloom_filters"
        )


def _check_append_blooms(spec: ClusteringSpec, snapshot: TableSnapshot | None) -> None:
    """Refuse an append's ``bloom_filters`` other than the table's: an append keeps the
    table's spec, and scans probe only the filters it records."""
    recorded = snapshot.recorded_spec if snapshot is not None else None
    if recorded is None or _folded(recorded.bloom_filters) == _folded(spec.bloom_filters):
        return
    names = [b.describe() for b in recorded.bloom_filters] or "none"
    raise InvalidArgumentError(
        f"bloom_filters={[b.describe() for b in spec.bloom_filters]} differs from the bloom "
        f"filters table {snapshot.uri if snapshot else ''} records ({names}); an append keeps "
        "the table's spec: leave bloom_filters out, or change them with "
        "optimize(bloom_filters=...), which rewrites every file to carry them"
    )


def _write_partitions(
    schema: Columns,
    plan: ClusteringPlan,
    partition_by: Sequence[str] | None,
    snapshot: TableSnapshot | None,
    mode: WriteMode,
) -> tuple[str, ...]:
    """The partition columns a write uses: ``partition_by`` for a new table, else the
    table's own (checked against ``schema`` and a ``partition_by`` given)."""
    if snapshot is None:
        return resolve_partition_columns(schema, partition_by, plan) if partition_by else ()
    uri = snapshot.uri
    table_partitions = tuple(snapshot.partition_columns)
    if partition_by is not None:  # the table's partitioning is what is compared first
        named = tuple(resolve_columns([str(c) for c in partition_by], schema.names))
        if named != table_partitions:
            raise InvalidArgumentError(
                f"table {uri} is partitioned by {list(table_partitions)}, not by "
                f"{list(named)}; an {mode} keeps the table's partition columns"
            )
    return resolve_partition_columns(schema, table_partitions, plan) if table_partitions else ()


def optimize_job(request: OptimizeRequest) -> ClusterJob:
    """``zorder.optimize``'s ``request``, checked against the table's snapshot."""
    storage, snapshot, asked, where = (
        request.storage,
        request.snapshot,
        request.asked,
        request.where,
    )
    check_fanout(request.fanout)
    snapshot.check_writable("optimize")
    spec = _resolved_spec(asked, snapshot, storage)
    # Only the schema is needed to check the request: no file is listed yet.
    frame = Columns.from_json(snapshot.schema.json)
    plan = plan_clustering(frame, spec)
    check_size(asked.num_files, asked.target_file_size)
    columns = snapshot.partition_columns
    if where is not None:
        check_partition_where(snapshot, where)
    if columns:
        resolve_partition_columns(frame, columns, plan)  # clustered by one?
    _check_blooms_outside(plan, columns)
    job = _job(
        storage,
        snapshot,
        asked,
        plan,
        operation=("optimize", "rewrite"),
        partition_by=columns,
        records=plan.spec if plan.spec != snapshot.recorded_spec else None,
    )
    return dataclasses.replace(job, where=where)


def _job(
    storage: Storage,
    snapshot: TableSnapshot | None,
    asked: ClusterOptions,
    plan: ClusteringPlan,
    *,
    operation: tuple[Operation, CommitMode],
    partition_by: tuple[str, ...],
    records: ClusteringSpec | None,
    transaction: AppTransaction | None = None,
) -> ClusterJob:
    """The job, with what it records afterwards: ``records`` (None: the spec stays) and the
    file size (unless ``num_files`` sized the files)."""
    target = target_size(asked.target_file_size, snapshot)
    return ClusterJob(
        storage=storage,
        operation=operation[0],
        commit_mode=operation[1],
        snapshot=snapshot,
        plan=plan,
        partition_by=partition_by,
        num_files=asked.num_files,
        target=target,
        sample_size=asked.sample_size,
        remember=Remember(
            records,
            None if asked.num_files is not None else target,
            asked=_size_asked(asked),
            one_off=asked.num_files is not None or asked.target_file_size is not None,
        ),
        transaction=transaction,
    )


def _size_asked(asked: ClusterOptions) -> bool:
    """Whether the size asked for replaces the table's ``delta.targetFileSize``: only with
    ``set_target_size=True``. A one-off ``num_files`` or ``target_file_size`` sizes this run
    and leaves the recorded target as it is (a new table records this run's size; an
    existing one that records none keeps recording none)."""
    if not isinstance(asked.set_target_size, bool):
        raise InvalidArgumentError(
            f"set_target_size must be True or False, got {asked.set_target_size!r}"
        )
    if asked.set_target_size and asked.num_files is None and asked.target_file_size is None:
        raise InvalidArgumentError(
            "set_target_size=True records the size this run is given: give num_files or "
            "target_file_size with it (CLI: --set-target-size with --num-files or "
            "--target-file-size)"
        )
    return asked.set_target_size


def _check_sample_size(sample_size: int | None) -> None:
    if sample_size is not None and (
        isinstance(sample_size, bool) or not isinstance(sample_size, int) or sample_size < 1
    ):
        raise InvalidArgumentError(
            f"sample_size must be >= 1 (or None for the default), got {sample_size!r}"
        )


def check_size(num_files: int | None, target_file_size: int | str | None) -> None:
    """Refuse a bad ``num_files`` or ``target_file_size`` (or both given)."""
    if num_files is not None:
        file_count(num_files, target_file_size, None)
    elif target_file_size is not None:
        parse_size(target_file_size)


def _resolved_spec(
    asked: ClusterOptions, snapshot: TableSnapshot | None, storage: Storage
) -> ClusteringSpec:
    """The spec asked for, with the bloom filters asked for: what is not given comes from
    the table's spec (a spec passed as ``by`` carries its own bloom filters)."""
    recorded = _table_spec(asked, snapshot)
    spec = _asked_spec(asked, recorded, storage, snapshot is not None)
    given = asked.by if isinstance(asked.by, ClusteringSpec) else None
    carried = given.bloom_filters if given is not None else ()
    if asked.bloom_filters is None:
        # A spec that names no filters (advise's, when none pays) leaves the table's be.
        if recorded is None or carried:
            return spec
        return dataclasses.replace(spec, bloom_filters=recorded.bloom_filters)
    blooms = bloom_columns(asked.bloom_filters)
    if given is not None and carried and _folded(carried) != _folded(blooms):
        raise InvalidArgumentError(
            f"bloom_filters={[b.describe() for b in blooms]} contradicts the spec passed as "
            f"by= ({given.describe()}); leave bloom_filters out, the spec carries them"
        )
    return dataclasses.replace(spec, bloom_filters=blooms)


def _folded(blooms: Sequence[BloomColumn]) -> list[tuple[str, float]]:
    return [(b.column.lower(), b.fpp) for b in blooms]


def _table_spec(asked: ClusterOptions, snapshot: TableSnapshot | None) -> ClusteringSpec | None:
    """The table's spec, as clustering reads it.

    The table's spec is the one its properties record; a table whose
    properties record none (on Delta's table-features protocol, written
    before zorder recorded specs, or a crash between a run's commit and its
    properties) goes by its log (:attr:`~zorder.table.TableSnapshot.logged_spec`).
    """
    if snapshot is None:
        return None
    try:
        recorded = snapshot.recorded_spec
    except UnsupportedTableError:
        if asked.by is None:
            raise
        recorded = None  # properties that do not parse: the new by= replaces them
    return recorded if recorded is not None else snapshot.logged_spec


def _asked_spec(
    asked: ClusterOptions, recorded: ClusteringSpec | None, storage: Storage, exists: bool
) -> ClusteringSpec:
    """The curve's part of the spec asked for: what is not given comes from ``recorded``."""
    by, curve, method = asked.by, asked.curve, asked.method
    if isinstance(by, ClusteringSpec):
        for name, given, own in (("curve", curve, by.curve), ("method", method, by.method)):
            if given is not None and given != own:
                raise InvalidArgumentError(
                    f"{name}={given!r} contradicts the spec passed as by= ({by.describe()}); "
                    f"leave {name} out, the spec carries it"
                )
        return by
    keeps_recorded = recorded is not None and curve in (None, recorded.curve)
    if by is None and recorded is not None and keeps_recorded and method in (None, recorded.method):
        return recorded  # with its weights and workload cuts
    if by is None:
        if recorded is None:
            uri = storage.uri
            where = f"table {uri} records no clustering" if exists else f"no table at {uri}"
            raise InvalidArgumentError(
                f"{where}: pass by=[columns] (CLI: --by a,b) once; the columns, curve and "
                "key method are then recorded in the table's properties and used by later "
                "appends and optimizes"
            )
        by = recorded.columns
    if isinstance(by, str):
        by = [by]
    fallback = recorded or ClusteringSpec((), "zorder", "rank")
    return ClusteringSpec(
        tuple(str(c) for c in by),
        as_curve(curve if curve is not None else fallback.curve),
        as_key_method(method if method is not None else fallback.method),
    )


def target_size(target_file_size: int | str | None, snapshot: TableSnapshot | None) -> int:
    """Bytes a file: as given, else the table's ``delta.targetFileSize``, else 128 MB."""
    if target_file_size is not None:
        return parse_size(target_file_size)
    recorded = snapshot.recorded_target_file_size if snapshot is not None else None
    return recorded or DEFAULT_TARGET_FILE_SIZE


_WIDENING = (
    "changing a column's type is type widening (Delta's typeWidening table feature), which "
    "zorder does not do: cast the column to the table's type"
)


def _evolution(
    table: str, data: str, schema_mode: SchemaMode | None, what: str
) -> SchemaEvolution | None:
    """How ``data``'s columns meet ``table``'s (both schemas in Spark's JSON form): None when
    they are the same; under ``schema_mode="merge"``, the columns to add and those to write
    as NULL. Anything else (a type changed, a NOT NULL column missing, every difference in
    strict mode) raises :class:`SchemaMismatchError`, naming the way forward."""
    table_fields = {str(f["name"]): f for f in json.loads(table)["fields"]}
    data_fields = {str(f["name"]): f for f in json.loads(data)["fields"]}
    folded = {name.lower(): name for name in table_fields}
    changed = {  # in the table's order
        name: f"{name!r} is {type_text(field['type'])} in the table but "
        f"{type_text(data_fields[name]['type'])} in the data"
        for name, field in table_fields.items()
        if name in data_fields and not same_type(data_fields[name]["type"], field["type"])
    }
    cased = [
        f"{name!r} differs from the table's {folded[name.lower()]!r} only in case"
        for name in data_fields
        if name not in table_fields and name.lower() in folded
    ]
    new = [f for name, f in data_fields.items() if name.lower() not in folded]
    missing = [name for name in table_fields if name not in data_fields]
    if schema_mode is None:
        # In the table's order, then the data's columns the table lacks.
        problems = [
            changed.get(name, f"{name!r} is missing from the data")
            for name in table_fields
            if name in changed or name not in data_fields
        ]
        problems += cased + [f"{f['name']!r} is not in the table" for f in new]
        if not problems:
            return None
        hints = [_WIDENING] if changed else []
        if new or missing:
            hints.append(
                'schema_mode="merge" (CLI: --schema-mode merge) adds new columns to the '
                "table as nullable columns (rows written before read them as NULL) and writes "
                "a missing nullable column as NULL"
            )
        raise SchemaMismatchError(
            f"schema mismatch on {what}: " + "; ".join(problems) + ". " + "; ".join(hints)
        )
    required = [
        f"{name!r} is missing from the data and NOT NULL"
        for name in missing
        if not table_fields[name].get("nullable", True)
    ]
    problems = [*changed.values(), *cased, *required]
    if problems:
        hint = f": {_WIDENING}" if changed else ""
        raise SchemaMismatchError(
            f'schema_mode="merge" on {what} adds new columns and writes missing nullable '
            f"ones as NULL, nothing else: " + "; ".join(problems) + hint
        )
    if not new and not missing:
        return None
    added = json.dumps({"type": "struct", "fields": new}) if new else None
    return SchemaEvolution(added, tuple(missing))
