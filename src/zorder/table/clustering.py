"""How a table records its clustering: one definition of each name the log carries.

- A clustering **spec** (columns, curve, key method) has a short fingerprint.
- Every clustering **run** writes its files under ``zorder-<fingerprint>-<run id>/``
  below the table root, so a file's path tells which run wrote it.
- The commit that adds a run's files carries ``commitInfo.zorder`` (the run,
  its spec and file count) for zorder reading the history, ``userMetadata``
  (what the run did, with Delta's metric names) and ``zOrderBy`` among the
  ``operationParameters`` for people reading it (``DESCRIBE HISTORY``), and a Delta
  ``txn`` action (app id ``zorder.run.<run id>``, version the fingerprint as
  an integer) for programs: it is committed atomically with the files, is
  kept by checkpoints and log cleanup, and only zorder's own commits write
  it, so it is what zorder trusts about a run's files (a directory name
  anyone can imitate).
- The table's **spec** is kept where it lasts: in the table's properties
  (``zorder.clustering.*``) on the protocol (1, 2) and older, and on every
  table in a file of its own, ``_zorder/specs/<fingerprint>.json`` (its
  properties, as JSON; ``_``-prefixed names are hidden from every vacuum),
  named by a ``txn`` of app id ``zorder.spec`` whose version is the
  fingerprint, which each zorder commit records. Commits go when the log is
  cleaned up; a ``txn`` is kept by every checkpoint. On tables with table
  features, which zorder gives no properties (deltalake would add features
  to them), this is where the spec is found once the commits that recorded
  it are gone.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pyarrow.fs as pafs

from zorder.curves.cuts import CutTree
from zorder.curves.kinds import BloomColumn, ClusteringSpec, as_curve, as_key_method
from zorder.errors import InternalError, UnsupportedTableError, ZorderError
from zorder.sizes import parse_size
from zorder.table.delta.versions import commit_infos, restored_version
from zorder.table.storage import Storage

__all__ = [
    "COMMIT_METADATA_KEY",
    "SPARK_PART_FILE",
    "SPEC_PROPERTIES",
    "SPEC_TRANSACTION",
    "TARGET_FILE_SIZE_PROPERTY",
    "USER_METADATA_KEY",
    "CommitClustering",
    "Operation",
    "Run",
    "file_number",
    "is_run_transaction",
    "read_spec_file",
    "recorded_spec",
    "recorded_target_file_size",
    "spec_properties",
    "trusted_runs",
    "write_spec_file",
]

# Spark names each file it writes after its task's partition and the write job:
# part-00007-<job uuid>.c000.snappy.parquet (Spark 4; "-c000" before it). A clustering run
# writes each file with a task of its own, numbered as the file (see
# zorder.spark.writes.file_number), so no two files of a run share a name. Directories
# before the name are kept in "short": a partition's (day=2026-11-01/), or in runs of
# earlier versions a directory of the file's number (zorder_file=7/part-00002-...).
SPARK_PART_FILE = re.compile(
    r"^(?P<short>(?:.*/)?part-(?P<number>\d+))-[0-9a-f-]{36}(?:[.-]c\d+)?(?:\.\w+)*$"
)

COMMIT_METADATA_KEY = "zorder"
# Delta's commitInfo field for a writer's own text (DESCRIBE HISTORY's userMetadata column).
USER_METADATA_KEY = "userMetadata"
_RUN_DIRECTORY = re.compile(r"^zorder-(?P<fingerprint>[0-9a-f]{8})-(?P<id>[0-9a-f]{12})$")
_RUN_TRANSACTION_PREFIX = "zorder.run."
# The txn naming the table's spec (version: its fingerprint), and where the spec's file lives.
SPEC_TRANSACTION = "zorder.spec"
_SPEC_DIRECTORY = "_zorder/specs"

Operation = Literal["write", "optimize"]

_COLUMNS_PROPERTY = "zorder.clustering.columns"
_CURVE_PROPERTY = "zorder.clustering.curve"
_METHOD_PROPERTY = "zorder.clustering.method"
# Written for every spec ("null" when it has none), so a new spec clears an old one's.
_WEIGHTS_PROPERTY = "zorder.clustering.weights"
_CUTS_PROPERTY = "zorder.clustering.cuts"
# {"column": false-positive rate, ...}: the columns whose files carry Parquet bloom filters.
_BLOOM_PROPERTY = "zorder.clustering.bloomFilters"
SPEC_PROPERTIES = (
    _COLUMNS_PROPERTY,
    _CURVE_PROPERTY,
    _METHOD_PROPERTY,
    _WEIGHTS_PROPERTY,
    _CUTS_PROPERTY,
    _BLOOM_PROPERTY,
)
TARGET_FILE_SIZE_PROPERTY = "delta.targetFileSize"  # Delta's own; bytes, or "128mb"


def spec_properties(spec: ClusteringSpec) -> dict[str, str]:
    """The table properties that record ``spec``."""
    return {
        _COLUMNS_PROPERTY: json.dumps(list(spec.columns)),
        _CURVE_PROPERTY: spec.curve,
        _METHOD_PROPERTY: spec.method,
        _WEIGHTS_PROPERTY: json.dumps(list(spec.weights) if spec.weights is not None else None),
        _CUTS_PROPERTY: json.dumps(spec.cuts.to_json() if spec.cuts is not None else None),
        _BLOOM_PROPERTY: json.dumps(_bloom_json(spec)),
    }


def _bloom_json(spec: ClusteringSpec) -> dict[str, float] | None:
    return {b.column: b.fpp for b in spec.bloom_filters} or None


def _shaped(
    columns: Sequence[str], curve: str, method: str, weights: Any, cuts: Any, bloom: Any = None
) -> ClusteringSpec:
    """A spec from recorded parts; weights, cuts and bloom filters as JSON values (None:
    none)."""
    if weights is not None and not (
        isinstance(weights, list) and all(isinstance(w, int | float) for w in weights)
    ):
        raise ValueError(f"weights are not a JSON list of numbers: {weights!r}")
    if bloom is not None and not (
        isinstance(bloom, dict)
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in bloom.values())
    ):
        raise ValueError(f"bloom filters are not a JSON object of column: rate: {bloom!r}")
    return ClusteringSpec(
        tuple(columns),
        as_curve(curve),
        as_key_method(method),
        weights=tuple(float(w) for w in weights) if weights is not None else None,
        cuts=CutTree.from_json(cuts) if cuts is not None else None,
        bloom_filters=tuple(BloomColumn(str(k), v) for k, v in (bloom or {}).items()),
    )


def recorded_spec(configuration: Mapping[str, str | None]) -> ClusteringSpec | None:
    """The spec the table's properties record, None if they record none."""
    raw = {key: configuration.get(key) for key in SPEC_PROPERTIES}
    if raw[_COLUMNS_PROPERTY] is None:
        return None
    try:
        columns = json.loads(str(raw[_COLUMNS_PROPERTY]))
        if (
            not isinstance(columns, list)
            or not columns
            or not all(isinstance(c, str) for c in columns)
        ):
            raise ValueError("not a non-empty JSON list of column names")
        return _shaped(
            columns,
            raw[_CURVE_PROPERTY] or "zorder",
            raw[_METHOD_PROPERTY] or "rank",
            json.loads(raw[_WEIGHTS_PROPERTY] or "null"),
            json.loads(raw[_CUTS_PROPERTY] or "null"),
            json.loads(raw[_BLOOM_PROPERTY] or "null"),
        )
    except (ValueError, ZorderError) as error:
        shown = ", ".join(f"{key}={value!r}" for key, value in raw.items())
        raise UnsupportedTableError(
            f"the table's clustering properties do not parse ({shown}): {error}; "
            f'{_COLUMNS_PROPERTY} takes a JSON list of column names such as \'["a", "b"]\'. '
            "Pass by=... to record a new spec"
        ) from error


def _spec_path(storage: Storage, fingerprint: str) -> tuple[pafs.FileSystem, str]:
    filesystem, root = storage.filesystem()
    return filesystem, f"{root.rstrip('/')}/{_SPEC_DIRECTORY}/{fingerprint}.json"


def read_spec_file(storage: Storage, fingerprint: str) -> ClusteringSpec | None:
    """The spec ``_zorder/specs/<fingerprint>.json`` records; None when there is none, or
    it is damaged or names another spec (it is then written again with the next commit)."""
    filesystem, path = _spec_path(storage, fingerprint)
    try:
        with filesystem.open_input_stream(path) as stream:
            properties = json.loads(stream.read())
        spec = recorded_spec(properties) if isinstance(properties, dict) else None
    except (OSError, ValueError, ZorderError):
        return None
    return spec if spec is not None and spec.fingerprint == fingerprint else None


def write_spec_file(storage: Storage, spec: ClusteringSpec) -> None:
    """Keep ``spec`` in ``_zorder/specs/<fingerprint>.json`` unless it is there already.

    Written before the commit that names it: a run that fails leaves at most
    this file, which names nothing. Its bytes depend on the spec alone, so
    writers that race write the same file.
    """
    if read_spec_file(storage, spec.fingerprint) == spec:
        return
    filesystem, path = _spec_path(storage, spec.fingerprint)
    filesystem.create_dir(path.rsplit("/", 1)[0], recursive=True)
    with filesystem.open_output_stream(path) as stream:
        stream.write(json.dumps(spec_properties(spec), sort_keys=True, indent=1).encode())


def recorded_target_file_size(configuration: Mapping[str, str | None]) -> int | None:
    """``delta.targetFileSize`` in bytes, None if the table sets none."""
    raw = configuration.get(TARGET_FILE_SIZE_PROPERTY)
    if raw is None:
        return None
    try:
        return parse_size(raw)
    except ZorderError as error:
        raise UnsupportedTableError(
            f"the table's {TARGET_FILE_SIZE_PROPERTY}={raw!r} is not a size: {error}"
        ) from error


@dataclass(frozen=True)
class Run:
    """One clustering run: an id, and the fingerprint of the spec it clustered by."""

    id: str
    fingerprint: str

    @classmethod
    def new(cls, spec: ClusteringSpec) -> Run:
        return cls(id=uuid.uuid4().hex[:12], fingerprint=spec.fingerprint)

    @classmethod
    def of_path(cls, path: str) -> Run | None:
        """The run whose directory holds ``path`` (relative to the table root), if any."""
        directory, slash, _ = path.partition("/")
        match = _RUN_DIRECTORY.match(directory) if slash else None
        return cls(match["id"], match["fingerprint"]) if match else None

    @property
    def directory(self) -> str:
        return f"zorder-{self.fingerprint}-{self.id}"

    @property
    def transaction_id(self) -> str:
        """The Delta ``txn`` app id the run's commit records."""
        return f"{_RUN_TRANSACTION_PREFIX}{self.id}"

    @property
    def transaction_version(self) -> int:
        """The ``txn`` version the run's commit records: its spec's fingerprint."""
        return int(self.fingerprint, 16)


def is_run_transaction(app_id: str) -> bool:
    """Whether ``app_id`` is of the form zorder records its runs' ``txn`` under."""
    return app_id.startswith(_RUN_TRANSACTION_PREFIX)


def trusted_runs(
    paths: Sequence[str], transaction_version: Callable[[str], int | None]
) -> tuple[Run | None, ...]:
    """Per path (relative to the table root): the zorder run that wrote it, None for any
    other file.

    A file belongs to a run when it lies in the run's directory and the
    run's commit recorded the run's ``txn`` (``transaction_version`` reads
    the version the log records for an app id); a directory name alone is
    not trusted.
    """
    runs = [Run.of_path(path) for path in paths]
    trusted = {
        run: transaction_version(run.transaction_id) == run.transaction_version
        for run in set(runs)
        if run is not None
    }
    return tuple(run if run is not None and trusted[run] else None for run in runs)


@dataclass(frozen=True)
class CommitClustering:
    """What a zorder commit recorded in ``commitInfo.zorder``."""

    operation: Operation
    run: Run
    spec: ClusteringSpec
    num_files: int
    where: str | None = None  # an optimize's choice of partitions, as given

    def commit_metadata(
        self,
        *,
        files_added: int,
        bytes_added: int,
        rows: int,
        files_removed: int,
        bytes_removed: int,
    ) -> dict[str, Any]:
        """The commit's custom ``commitInfo`` keys: ``zorder`` (:meth:`to_metadata`), and for
        Delta's own tools ``userMetadata`` (which ``DESCRIBE HISTORY`` and delta-rs's
        ``history()`` show: one compact JSON line, Delta OPTIMIZE's metric names) and
        ``operationParameters`` (``zOrderBy``, ``curve``; an optimize's ``predicate``, as
        Delta's OPTIMIZE gives it), which deltalake adds beside its own (``mode``, ...)."""
        columns = json.dumps(list(self.spec.columns), separators=(",", ":"))
        parameters = {"zOrderBy": columns, "curve": self.spec.curve}
        if self.operation == "optimize":
            parameters["predicate"] = json.dumps([self.where] if self.where is not None else [])
        summary = {
            "zorder": self.operation,
            "zOrderBy": list(self.spec.columns),
            "curve": self.spec.curve,
            **({"predicate": self.where} if self.where is not None else {}),
            "numRemovedFiles": files_removed,
            "numRemovedBytes": bytes_removed,
            "numAddedFiles": files_added,
            "numAddedBytes": bytes_added,
            "numOutputRows": rows,
            "runId": self.run.id,
        }
        return {
            COMMIT_METADATA_KEY: json.dumps(self.to_metadata()),
            USER_METADATA_KEY: json.dumps(summary, separators=(",", ":")),
            "operationParameters": parameters,
        }

    def to_metadata(self) -> dict[str, Any]:
        return {
            "operation": self.operation,
            "runId": self.run.id,
            "fingerprint": self.run.fingerprint,
            "by": list(self.spec.columns),
            "curve": self.spec.curve,
            "method": self.spec.method,
            **({"weights": list(self.spec.weights)} if self.spec.weights is not None else {}),
            **({"cuts": self.spec.cuts.to_json()} if self.spec.cuts is not None else {}),
            **({"bloomFilters": bloom} if (bloom := _bloom_json(self.spec)) else {}),
            "numFiles": self.num_files,
            **({"where": self.where} if self.where is not None else {}),
        }

    @classmethod
    def from_metadata(cls, raw: Mapping[str, Any]) -> CommitClustering:
        by: Sequence[str] = raw["by"]
        operation = raw.get("operation")
        return cls(
            operation="optimize" if operation == "optimize" else "write",
            run=Run(str(raw["runId"]), str(raw["fingerprint"])),
            spec=_shaped(
                [str(c) for c in by],
                raw["curve"],
                raw["method"],
                raw.get("weights"),
                raw.get("cuts"),
                raw.get("bloomFilters"),
            ),
            num_files=int(raw.get("numFiles", 0)),
            where=str(raw["where"]) if raw.get("where") is not None else None,
        )


def commit_clustering(info: Mapping[str, Any]) -> CommitClustering | None:
    """What a commit's ``commitInfo`` records under ``zorder``; None for none, or one zorder
    cannot read (another writer's, or damaged)."""
    raw = info.get(COMMIT_METADATA_KEY)
    if not raw:
        return None
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else raw
        if not isinstance(parsed, Mapping):
            return None
        return CommitClustering.from_metadata(parsed)
    except (ValueError, KeyError, TypeError, AttributeError, ZorderError):
        return None


def latest_clustering(
    storage: Storage, *, at_version: int | None = None
) -> CommitClustering | None:
    """What the newest zorder commit still in the log (up to ``at_version``) recorded.

    A restore made the table what an older version was: the walk goes on from that
    version, past the commits the restore undid.
    """
    bound = at_version
    for version, info in commit_infos(storage, up_to=at_version):
        if bound is not None and version > bound:
            continue  # undone by a restore
        found = commit_clustering(info)
        if found is not None:
            return found
        restored = restored_version(info)
        if restored is not None and restored < version:
            bound = restored
    return None


def file_number(path: str) -> int:
    """The number of a run's file, from its name (``part-<number>-<uuid>...``), whichever
    engine wrote it (:mod:`zorder.spark.committer`, :mod:`zorder.arrow.writes`)."""
    match = SPARK_PART_FILE.match(path)
    if match is None:  # pragma: no cover (both engines name their files so)
        raise InternalError(f"cannot tell which file of the run {path!r} is")
    return int(match["number"])
