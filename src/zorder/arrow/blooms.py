"""Values a file's Parquet bloom filters prove absent, read in this process with few requests.

Why: the log's bounds keep every file whose range spans a looked-up value;
a file's bloom filters (:mod:`zorder.stats.bloom`) can prove the value is in
none of its row groups, and :func:`zorder.skipping.blooms.excluded_by_blooms`
then rules the file out. Only the footer and the filters themselves are
read, never a data page. What one file takes, in the worst case (every
count is in :class:`ProbeCost`):

1. opening it: one request (object stores answer a HEAD: pyarrow asks the size);
2. its last 64 KiB: the footer, and often the filters written just before it
   (parquet-mr writes them all after the last row group); one more request
   when the footer is longer;
3. each probed filter those bytes do not hold, one request per run of
   filters lying close together (a writer puts a row group's filters side
   by side): at most one per row group and probed column, and one more per
   filter whose length the footer leaves out (an older writer's: its first
   64 KiB are read, then the rest).

So 2 or 3 requests, plus one per row group and probed column at worst; a
file Spark or delta-rs wrote with one row group takes 2 to 4. At most 32 MiB
of filters are read from a file (more, and it is kept unread). A file whose
probed columns were probed before (same location, size and modification
time: a Delta file never changes, though a table written again may reuse a
path) takes none: each column's filters are kept in a process-wide
cache bounded at 256 MiB of bitsets, least recently used first out. Files
are probed on up to 16 threads.

Never raises for what it reads: a file it cannot open, a footer or filter it
cannot parse, a header naming another algorithm, a row group without a
filter, a column the file lacks, all leave the values "maybe there" and the
file kept (logged at debug). pyarrow gives filter offsets from version 25
on; with an older one nothing is read and every file is kept.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Collection, Mapping, Sequence, Set
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from zorder.errors import ColumnNotFoundError
from zorder.stats.bloom import BloomFilter, StoredColumn, parse_filter, probed_type, value_hash
from zorder.table import DataFile, TableSnapshot, has_scheme
from zorder.table.storage import Storage

__all__ = ["CACHE_BYTES", "BloomProbe", "ProbeCost", "clear_cache", "probe_blooms"]

_log = logging.getLogger(__name__)

CACHE_BYTES = 256 * 2**20
_THREADS = 16
_TAIL = 64 * 2**10  # read from a file's end at once: the footer, and maybe filters
_PREFIX = 64 * 2**10  # read first of a filter whose length the footer does not give
_MAX_FOOTER = 16 * 2**20
# The most filter bytes read from one file: a file whose probed filters are larger (a
# writer's default of 1 MiB per row group, over hundreds of row groups) is kept unread.
_FILE_BUDGET = 32 * 2**20
_HOLE = 64 * 2**10  # filters at most this far apart are read in one request...
_RUN = 16 * 2**20  # ...of at most this many bytes (a longer filter is read alone)
_MAGIC = b"PAR1"
_LEGACY_CALENDAR = b"org.apache.spark.legacyDateTime"


@dataclass(frozen=True)
class ProbeCost:
    """What a probe took: files asked, files whose filters could not be read (kept),
    requests to storage (an open counts as one), bytes read, and wall-clock seconds."""

    files_probed: int = 0
    files_unreadable: int = 0
    requests: int = 0
    bytes_read: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class BloomProbe:
    """Per file, in the order given: each probed column's looked-up values that no row of
    the file holds (a column without one proven absent is left out); and the cost."""

    absent: tuple[Mapping[str, frozenset[Any]], ...]
    cost: ProbeCost


def probe_blooms(
    snapshot: TableSnapshot,
    files: Sequence[DataFile],
    columns: Collection[str],
    lookups: Mapping[str, Set[Any]],
) -> BloomProbe:
    """The values of ``lookups`` (column -> literals, as
    :func:`zorder.skipping.blooms.bloom_lookups` gives them) that the bloom filters of
    each of ``files`` prove absent, for the ``columns`` (logical names) worth probing.

    A value is absent from a file only when every row group's filter for the column
    says so. Partition columns, collated strings and types no filter answers for are
    not probed. Raises ColumnNotFoundError for a column the table does not have.
    """
    started = time.monotonic()
    types = snapshot.schema.column_types
    unknown = [c for c in columns if c not in types]
    if unknown:
        raise ColumnNotFoundError(
            f"unknown bloom filter column {unknown[0]!r}; table columns: {', '.join(types)}"
        )
    collated = _collated_columns(snapshot)
    probed = {
        c: frozenset(lookups[c])
        for c in columns
        if lookups.get(c)
        and c not in snapshot.partition_columns
        and c not in collated
        and probed_type(types[c])
    }
    if not probed or not files or not _reads_offsets():
        return BloomProbe(tuple({} for _ in files), ProbeCost(seconds=time.monotonic() - started))
    stored = {c: snapshot.schema.stored_name(c) for c in probed}
    job = _Job(snapshot, probed, stored, _Hashes())
    with ThreadPoolExecutor(max_workers=min(_THREADS, len(files))) as pool:
        results = list(pool.map(job.probe, files))
    return BloomProbe(
        tuple(absent for absent, _ in results),
        ProbeCost(
            files_probed=len(files),
            files_unreadable=sum(tally.unreadable for _, tally in results),
            requests=sum(tally.requests for _, tally in results),
            bytes_read=sum(tally.bytes_read for _, tally in results),
            seconds=time.monotonic() - started,
        ),
    )


def clear_cache() -> None:
    """Forget every filter read so far."""
    _CACHE.clear()


def _reads_offsets() -> bool:
    """Does this pyarrow give column chunks' filter offsets (version 25 on)?"""
    import pyarrow.parquet as pq

    return hasattr(pq.ColumnChunkMetaData, "bloom_filter_offset")


def _collated_columns(snapshot: TableSnapshot) -> set[str]:
    """String columns with a collation (Delta's ``__COLLATIONS`` field metadata): their
    equality is not byte equality (UTF8_LCASE finds 'A' for 'a'), so no filter answers."""
    fields = json.loads(snapshot.schema.json)["fields"]
    return {f["name"] for f in fields if "__COLLATIONS" in (f.get("metadata") or {})}


# --------------------------------------------------------------------------
# One file


@dataclass(frozen=True)
class _ColumnFilters:
    """One column's filters in one file: ``stored`` None when the file has no such
    top-level column; per row group a filter, or None (none written, or unreadable)."""

    stored: StoredColumn | None
    filters: tuple[BloomFilter | None, ...] = ()
    damaged: bool = False

    @property
    def weight(self) -> int:
        return 256 + sum(64 + (len(f.bitset) if f else 0) for f in self.filters)


@dataclass
class _Tally:
    requests: int = 0
    bytes_read: int = 0
    unreadable: bool = False


class _UnreadableError(Exception):
    """This file's footer or filters cannot be read."""


class _Hashes:
    """Each literal's hash per stored type, made once per probe (files share types)."""

    def __init__(self) -> None:
        self._known: dict[tuple[Any, str, StoredColumn], int | None] = {}

    def get(self, value: Any, column_type: str, stored: StoredColumn) -> int | None:
        key = (value, column_type, stored)
        if key not in self._known:
            self._known[key] = value_hash(value, column_type, stored)
        return self._known[key]


@dataclass(frozen=True)
class _Job:
    snapshot: TableSnapshot
    lookups: Mapping[str, frozenset[Any]]  # logical column -> values
    stored_names: Mapping[str, str]  # logical column -> the name files give it
    hashes: _Hashes

    def probe(self, data_file: DataFile) -> tuple[dict[str, frozenset[Any]], _Tally]:
        tally = _Tally()
        location = self.snapshot.file_uri(data_file)
        file_key = (location, data_file.size, data_file.modified)
        found = {s: _CACHE.get((*file_key, s)) for s in self.stored_names.values()}
        missing = [s for s, filters in found.items() if filters is None]
        if missing:
            try:
                read = _read_file(self.snapshot, data_file, missing, tally)
            except (_UnreadableError, OSError, pa.ArrowException) as error:
                _log.debug("bloom filters of %s not read: %s", location, error)
                tally.unreadable = True
                return {}, tally
            for name, fresh in read.items():
                _CACHE.put((*file_key, name), fresh)
                found[name] = fresh
        absent = {}
        types = self.snapshot.schema.column_types
        for column, values in self.lookups.items():
            filters = found[self.stored_names[column]]
            assert filters is not None  # cached, or read just now
            tally.unreadable |= filters.damaged
            proven = self._absent(filters, values, types[column])
            if proven:
                absent[column] = proven
        return absent, tally

    def _absent(
        self, filters: _ColumnFilters, values: frozenset[Any], column_type: str
    ) -> frozenset[Any]:
        if filters.stored is None or any(f is None for f in filters.filters):
            return frozenset()
        proven = set()
        for value in values:
            hashed = self.hashes.get(value, column_type, filters.stored)
            if hashed is not None and not any(
                f is not None and f.might_contain(hashed) for f in filters.filters
            ):
                proven.add(value)
        return frozenset(proven)


class _Reader:
    """A file's ranged reads, counted; a short one is :class:`_UnreadableError`."""

    def __init__(self, source: Any, tally: _Tally) -> None:
        self.source = source
        self.tally = tally

    def read(self, offset: int, length: int) -> bytes:
        self.tally.requests += 1
        data = bytes(self.source.read_at(length, offset))
        self.tally.bytes_read += len(data)
        if len(data) != length:
            raise _UnreadableError(f"{len(data)} bytes at {offset} where {length} were asked")
        return data


def _read_file(
    snapshot: TableSnapshot, data_file: DataFile, names: Sequence[str], tally: _Tally
) -> dict[str, _ColumnFilters]:
    """The filters of the stored columns ``names`` in one file, read from storage."""
    if has_scheme(data_file.path):  # an absolute path, reached with the table's options
        filesystem, location = Storage.of(data_file.path, snapshot.storage.options).filesystem()
    else:
        filesystem, root = snapshot.storage.filesystem()
        location = f"{root.rstrip('/')}/{data_file.path}"
    tally.requests += 1
    with filesystem.open_input_file(location) as source:
        reader = _Reader(source, tally)
        tail = _Tail.read(reader, data_file.size)
        metadata = tail.metadata()
        if _LEGACY_CALENDAR in (metadata.metadata or {}):
            # Dates and timestamps in Spark 2's hybrid calendar, which Spark rebases as it
            # reads: a literal hashes as no such stored value. Not worth telling apart.
            return {name: _ColumnFilters(None) for name in names}
        leaves = _top_level_leaves(metadata)
        spans: dict[str, list[tuple[int, int | None] | None]] = {}
        stored: dict[str, StoredColumn] = {}
        for name in names:
            if name in leaves:
                stored[name] = StoredColumn.of(metadata.schema.column(leaves[name]))
                spans[name] = _spans(metadata, leaves[name], tail.footer_start)
        wanted = [s for per in spans.values() for s in per]
        total = sum(_PREFIX if s[1] is None else s[1] for s in wanted if s is not None)
        if total > _FILE_BUDGET:
            raise _UnreadableError(f"{total} bytes of filters, more than {_FILE_BUDGET} a file")
        fetched = _fetch(reader, tail, wanted)
    result = {name: _ColumnFilters(None) for name in names}
    position = 0
    for name, per in spans.items():
        filters: list[BloomFilter | None] = []
        damaged = False
        for span in per:
            data = fetched[position]
            position += 1
            parsed = None if data is None else parse_filter(data)
            damaged |= span is not None and parsed is None
            filters.append(parsed)
        if damaged:
            _log.debug("a bloom filter of %s in %s is damaged or unknown", name, data_file.path)
        result[name] = _ColumnFilters(stored[name], tuple(filters), damaged)
    return result


@dataclass(frozen=True)
class _Tail:
    """A file's last bytes, from ``start`` on: at least its whole footer."""

    data: bytes
    start: int
    footer_start: int  # where the footer's Thrift metadata begins

    @classmethod
    def read(cls, reader: _Reader, size: int) -> _Tail:
        if size < 12:
            raise _UnreadableError(f"{size} bytes: no Parquet file")
        start = max(0, size - _TAIL)
        data = reader.read(start, size - start)
        if data[-4:] != _MAGIC:
            raise _UnreadableError("no plain Parquet footer (an encrypted one, or another format)")
        footer_start = size - 8 - int.from_bytes(data[-8:-4], "little")
        if footer_start < 4:
            raise _UnreadableError("a footer longer than the file")
        if footer_start < start:
            if start - footer_start > _MAX_FOOTER:
                raise _UnreadableError(f"a footer of {size - footer_start} bytes")
            data = reader.read(footer_start, start - footer_start) + data
            start = footer_start
        return cls(data, start, footer_start)

    def metadata(self) -> Any:
        import pyarrow.parquet as pq

        return pq.read_metadata(pa.BufferReader(self.data[self.footer_start - self.start :]))

    def holds(self, offset: int, length: int) -> bool:
        return self.start <= offset and offset + length <= self.footer_start

    def slice(self, offset: int, length: int) -> bytes:
        return self.data[offset - self.start : offset - self.start + length]


def _top_level_leaves(metadata: Any) -> dict[str, int]:
    """The column index of each top-level column of a primitive type, by stored name (a
    nested field's leaf is named apart from its path; a name that repeats, not at all)."""
    leaves: dict[str, int] = {}
    repeated = set()
    for index in range(metadata.num_columns):
        column = metadata.schema.column(index)
        if column.path == column.name and column.max_repetition_level == 0:
            if column.name in leaves:
                repeated.add(column.name)
            leaves[column.name] = index
    return {name: index for name, index in leaves.items() if name not in repeated}


def _spans(metadata: Any, index: int, end: int) -> list[tuple[int, int | None] | None]:
    """Each row group's filter of column ``index`` as (offset, length or None), None where
    the footer names none; one outside the file's data (before ``end``) is unreadable."""
    spans: list[tuple[int, int | None] | None] = []
    for group in range(metadata.num_row_groups):
        chunk = metadata.row_group(group).column(index)
        offset, length = chunk.bloom_filter_offset, chunk.bloom_filter_length
        if offset is None:
            spans.append(None)
            continue
        if not 4 <= offset < end or (length is not None and not 0 < length <= end - offset):
            raise _UnreadableError(f"a bloom filter at {offset} (+{length}) outside the data")
        spans.append((int(offset), None if length is None else int(length)))
    return spans


def _fetch(
    reader: _Reader, tail: _Tail, spans: Sequence[tuple[int, int | None] | None]
) -> list[bytes | None]:
    """Each span's bytes (None for None): from the tail when it holds them, else in runs
    of spans lying close together; a span of unknown length as a prefix, then the rest."""
    fetched: list[bytes | None] = [None] * len(spans)
    known: list[tuple[int, int, int]] = []  # offset, length, position in spans
    for position, span in enumerate(spans):
        if span is None:
            continue
        offset, length = span
        if length is None:
            fetched[position] = _unsized(reader, tail, offset)
        elif tail.holds(offset, length):
            fetched[position] = tail.slice(offset, length)
        else:
            known.append((offset, length, position))
    known.sort()
    while known:
        run = [known.pop(0)]
        while (
            known
            and known[0][0] - (run[-1][0] + run[-1][1]) <= _HOLE
            and known[0][0] + known[0][1] - run[0][0] <= _RUN
        ):
            run.append(known.pop(0))
        start = run[0][0]
        data = reader.read(start, max(o + n for o, n, _ in run) - start)
        for offset, length, position in run:
            fetched[position] = data[offset - start : offset - start + length]
    return fetched


def _unsized(reader: _Reader, tail: _Tail, offset: int) -> bytes | None:
    """A filter whose length the footer leaves out: its header, then as much as it says."""
    from zorder.stats.bloom import parse_header

    available = tail.footer_start - offset
    if tail.holds(offset, available):
        return tail.slice(offset, available)
    prefix = reader.read(offset, min(_PREFIX, available))
    header = parse_header(prefix)
    if header is None:
        return None
    wanted = header.length + header.num_bytes
    if wanted <= len(prefix):
        return prefix
    if wanted > min(available, _FILE_BUDGET):
        return None
    return prefix + reader.read(offset + len(prefix), wanted - len(prefix))


# --------------------------------------------------------------------------
# The cache


class _Cache:
    """Least recently used first out, bounded by the bytes its filters hold."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[tuple[str, int, int, str], _ColumnFilters] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[str, int, int, str]) -> _ColumnFilters | None:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def put(self, key: tuple[str, int, int, str], value: _ColumnFilters) -> None:
        if value.weight > self.capacity:
            return
        with self._lock:
            previous = self._entries.pop(key, None)
            if previous is not None:
                self._bytes -= previous.weight
            self._entries[key] = value
            self._bytes += value.weight
            while self._bytes > self.capacity:
                _, evicted = self._entries.popitem(last=False)
                self._bytes -= evicted.weight

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0


_CACHE = _Cache(CACHE_BYTES)
