"""Values that files' bloom filters prove absent, read from Delta tables delta-rs and pyarrow
wrote: never a value a file holds, most of those it does not, and within the stated
number of requests (counted by the S3 server itself for one table).

Spark's files are probed in ``tests/spark/test_bloom_filters.py``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import time
import urllib.request
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import (
    BloomFilterProperties,
    ColumnProperties,
    Schema,
    WriterProperties,
    write_deltalake,
)
from deltalake.transaction import AddAction, create_table_with_add_actions

import zorder.arrow.blooms
from tests.conftest import S3Server, moto_s3
from tests.delta_writer import _commit_metadata, _latest_metadata
from zorder.arrow.blooms import (
    BloomProbe,
    _Cache,
    _ColumnFilters,
    _fetch,
    _Reader,
    _Tail,
    _Tally,
    clear_cache,
    probe_blooms,
)
from zorder.errors import ColumnNotFoundError
from zorder.stats.bloom import BloomFilter
from zorder.table import Storage, TableSnapshot, load_snapshot

DATA = Path(__file__).resolve().parents[1] / "data"
PROBED = ["i", "n", "s", "m", "d", "ts"]
ROW_GROUPS = 3
UTC = dt.UTC

pytestmark = pytest.mark.skipif(
    not zorder.arrow.blooms._reads_offsets(),
    reason="this pyarrow gives no bloom filter offsets (version 25 does)",
)


@pytest.fixture(autouse=True)
def fresh_cache() -> Iterator[None]:
    clear_cache()
    yield
    clear_cache()


def properties(columns: list[str], rows: int = 200) -> WriterProperties:
    bloom = BloomFilterProperties(set_bloom_filter_enabled=True, fpp=0.01, ndv=rows)
    return WriterProperties(
        max_row_group_size=rows,
        column_properties={c: ColumnProperties(bloom_filter_properties=bloom) for c in columns},
    )


def rows(part: int, count: int = 600) -> pa.Table:
    """Values of part ``part`` only: the parts share none."""
    ids = [part * 100_000 + 7 * k for k in range(count)]
    return pa.table(
        {
            "i": pa.array([x - 200_000 for x in ids], pa.int32()),
            "n": pa.array([x * 1_000_003 for x in ids], pa.int64()),
            "s": [f"é{x}" if x % 5 else "" for x in ids],
            "m": pa.array([Decimal(x).scaleb(-2) for x in ids], pa.decimal128(12, 2)),
            "d": pa.array([dt.date(1900, 1, 1) + dt.timedelta(days=x // 7) for x in ids]),
            "ts": pa.array(
                [dt.datetime(2024, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=x) for x in ids],
                pa.timestamp("us", "UTC"),
            ),
            "f": pa.array([x / 3 for x in ids], pa.float64()),
        }
    )


def literals(table: pa.Table, column: str, count: int) -> list[Any]:
    """Values of ``column`` as binding leaves them (zoned timestamps, Decimals, ints)."""
    return list(table.column(column).to_pylist()[:count])


@pytest.fixture
def table(tmp_path: Path) -> str:
    """Three files (one per write) of three row groups each, every column but ``f`` with
    bloom filters."""
    path = str(tmp_path / "t")
    for part in range(3):
        write_deltalake(path, rows(part), mode="append", writer_properties=properties(PROBED))
    return path


def file_values(snapshot: TableSnapshot, column: str) -> list[set[Any]]:
    return [
        set(pq.read_table(f"{snapshot.uri}/{f.path}", columns=[column]).column(0).to_pylist())
        for f in snapshot.files
    ]


def test_absent_values_are_found_and_present_ones_never(table: str) -> None:
    snapshot = load_snapshot(Storage.of(table))
    lookups = {
        c: frozenset(v for p in range(4) for v in literals(rows(p), c, 60)[::3]) for c in PROBED
    }
    probe = probe_blooms(snapshot, snapshot.files, [*PROBED, "f"], {**lookups, "f": {1.0}})
    assert isinstance(probe, BloomProbe)
    assert len(probe.absent) == len(snapshot.files) == 3
    for column in PROBED:
        for absent, held in zip(probe.absent, file_values(snapshot, column), strict=True):
            proven = absent.get(column, frozenset())
            assert not proven & held, column  # never a value the file holds
            missing = lookups[column] - held
            assert len(proven) >= 0.9 * len(missing), column  # fpp 0.01
    assert all("f" not in absent for absent in probe.absent)  # doubles are not probed
    # Files smaller than the 64 KiB read from their end: an open and one read each.
    cost = probe.cost
    assert (cost.files_probed, cost.files_unreadable, cost.requests) == (3, 0, 6)
    assert cost.bytes_read == sum(f.size for f in snapshot.files)


def test_a_second_probe_reads_nothing(table: str) -> None:
    snapshot = load_snapshot(Storage.of(table))
    lookups = {"i": frozenset({-200_000, 5, 6}), "s": frozenset({"é7", "nope"})}
    first = probe_blooms(snapshot, snapshot.files, ["i", "s"], lookups)
    again = probe_blooms(snapshot, snapshot.files, ["i", "s"], lookups)
    assert again.absent == first.absent
    assert (again.cost.requests, again.cost.bytes_read, again.cost.files_probed) == (0, 0, 3)
    # Another column: the footer again, the cached column's filters not.
    other = probe_blooms(snapshot, snapshot.files, ["i", "n"], {**lookups, "n": {1}})
    assert other.cost.requests == 6


def test_a_damaged_filter_or_footer_keeps_the_file(table: str) -> None:
    snapshot = load_snapshot(Storage.of(table))
    first, second, _ = (Path(snapshot.uri) / f.path for f in snapshot.files)
    metadata = pq.ParquetFile(first).metadata
    s_index = [metadata.schema.column(i).name for i in range(metadata.num_columns)].index("s")
    offset = metadata.row_group(1).column(s_index).bloom_filter_offset
    data = bytearray(first.read_bytes())
    data[offset] = 0xFF  # no field header of Thrift's compact protocol
    first.write_bytes(bytes(data))
    data = bytearray(second.read_bytes())
    data[-1:] = b"E"  # PARE: an encrypted footer, as far as a reader can tell
    second.write_bytes(bytes(data))
    lookups = {"s": frozenset({"nope", "zip"}), "i": frozenset({123_456_789})}
    probe = probe_blooms(snapshot, snapshot.files, ["s", "i"], lookups)
    assert probe.absent[0] == {"i": {123_456_789}}  # s: one row group's filter unreadable
    assert probe.absent[1] == {}
    assert probe.absent[2] == lookups
    assert probe.cost.files_unreadable == 2


def test_a_missing_file_is_kept(table: str) -> None:
    snapshot = load_snapshot(Storage.of(table))
    (Path(snapshot.uri) / snapshot.files[0].path).unlink()
    probe = probe_blooms(snapshot, snapshot.files, ["i"], {"i": {43}})
    assert probe.absent == ({}, {"i": frozenset({43})}, {"i": frozenset({43})})
    assert probe.cost.files_unreadable == 1


def test_filters_beyond_the_budget_are_not_read(
    table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = load_snapshot(Storage.of(table))
    monkeypatch.setattr(zorder.arrow.blooms, "_FILE_BUDGET", 100)
    probe = probe_blooms(snapshot, snapshot.files, ["i"], {"i": {43}})
    assert probe.absent == ({}, {}, {})
    assert probe.cost.files_unreadable == 3


def test_files_without_filters_are_kept(tmp_path: Path) -> None:
    path = str(tmp_path / "plain")
    write_deltalake(path, rows(0))
    snapshot = load_snapshot(Storage.of(path))
    probe = probe_blooms(snapshot, snapshot.files, ["i", "s"], {"i": {1}, "s": {"x"}})
    assert probe.absent == ({},)
    assert (probe.cost.files_unreadable, probe.cost.requests) == (0, 2)


def test_arguments(table: str, monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot = load_snapshot(Storage.of(table))
    with pytest.raises(ColumnNotFoundError, match="unknown bloom filter column 'nope'"):
        probe_blooms(snapshot, snapshot.files, ["nope"], {"nope": {1}})
    nothing = probe_blooms(snapshot, snapshot.files, ["i"], {"i": frozenset()})
    assert nothing.absent == ({}, {}, {})
    assert nothing.cost.requests == 0
    assert probe_blooms(snapshot, [], ["i"], {"i": {1}}).absent == ()
    # pyarrow before 25 gives no offsets: nothing is read, every file kept.
    monkeypatch.setattr(zorder.arrow.blooms, "_reads_offsets", lambda: False)
    old = probe_blooms(snapshot, snapshot.files, ["i"], {"i": {1}})
    assert (old.absent, old.cost.requests) == (({}, {}, {}), 0)


def test_a_column_mapped_table_and_its_partition_column(tmp_path: Path) -> None:
    path = tmp_path / "mapped"
    shutil.copytree(DATA / "table_with_column_mapping", path)
    physical = "col-3877fd94-0973-4941-ac6b-646849a1ff65"  # "Super Name"'s, in the files
    appended = pa.table(
        {"Company Very Short": ["X"] * 300, "Super Name": [f"n{i}" for i in range(300)]}
    )
    write_deltalake(str(path), appended, mode="append", writer_properties=properties([physical]))
    snapshot = load_snapshot(Storage.of(str(path)))
    assert snapshot.schema.stored_name("Super Name") == physical
    lookups = {"Super Name": frozenset({"n1", "n299", "absent", "also absent"})}
    probe = probe_blooms(snapshot, snapshot.files, ["Super Name"], lookups)
    by_path = dict(zip((f.path for f in snapshot.files), probe.absent, strict=True))
    new = [p for p in by_path if not p.startswith(("BH/", "8v/"))]
    assert len(new) == 1
    assert by_path[new[0]] == {"Super Name": {"absent", "also absent"}}
    assert all(by_path[p] == {} for p in by_path if p not in new)  # files without filters
    partition = probe_blooms(
        snapshot, snapshot.files, ["Company Very Short"], {"Company Very Short": {"nope"}}
    )
    assert partition.cost.requests == 0  # the log says it, not the files


def test_collated_strings_are_not_probed(table: str) -> None:
    """UTF8_LCASE finds 'A' for 'a': a filter of the bytes proves nothing about it."""
    log = Path(table) / "_delta_log"
    metadata = _latest_metadata(log)
    schema = json.loads(metadata["schemaString"])
    for field in schema["fields"]:
        if field["name"] == "s":
            field["metadata"] = {"__COLLATIONS": {"s": "spark.UTF8_LCASE"}}
    _commit_metadata(log, metadata | {"schemaString": json.dumps(schema)}, "CHANGE COLUMN")
    snapshot = load_snapshot(Storage.of(table))
    probe = probe_blooms(snapshot, snapshot.files, ["s", "i"], {"s": {"nope"}, "i": {43}})
    assert probe.absent == ({"i": frozenset({43})},) * 3


def commit_one_file(
    path: Path, values: pa.Table, *, rows: int, modified: int | None = None
) -> None:
    """A new table at ``path`` of its one file ``part-0.parquet``, written there already."""
    action = AddAction(
        path="part-0.parquet",
        size=(path / "part-0.parquet").stat().st_size,
        partition_values={},
        modification_time=int(time.time() * 1000) if modified is None else modified,
        data_change=True,
        stats=json.dumps({"numRecords": rows}),
    )
    create_table_with_add_actions(str(path), Schema.from_arrow(values.schema), [action])


def test_a_long_footer_takes_one_more_request(tmp_path: Path) -> None:
    path = tmp_path / "long"
    path.mkdir()
    values = pa.table({"i": pa.array(range(1200), pa.int32()), "s": [f"v{k}" for k in range(1200)]})
    filters = {"i": {"ndv": 2, "fpp": 0.1}}
    pq.write_table(values, path / "part-0.parquet", row_group_size=2, bloom_filter_options=filters)
    metadata = pq.ParquetFile(path / "part-0.parquet").metadata
    assert metadata.serialized_size > 64 * 1024
    commit_one_file(path, values, rows=1200)
    snapshot = load_snapshot(Storage.of(str(path)))
    probe = probe_blooms(snapshot, snapshot.files, ["i", "s"], {"i": {5, 5000}, "s": {"v5"}})
    assert probe.absent == ({"i": frozenset({5000})},)  # s has no filter
    # Open, the last 64 KiB, the rest of the footer, the filters (600 row groups) at once.
    assert probe.cost.requests == 4


def test_filters_whose_length_the_footer_leaves_out() -> None:
    small = header_and_bitset(64)
    large = header_and_bitset(96 * 1024)
    data = b"PAR1" + b"x" * 100 + small + b"y" * 100 + large + b"footer"
    tally = _Tally()
    reader = _Reader(pa.BufferReader(data), tally)
    tail = _Tail(b"", len(data) - 6, len(data) - 6)  # nothing read from the end yet
    spans: list[tuple[int, int | None] | None] = [(104, None), None, (204 + len(small), None)]
    fetched = _fetch(reader, tail, spans)
    assert fetched[0] is not None
    assert fetched[0].startswith(small)
    assert fetched[1] is None
    assert fetched[2] == large
    assert tally.requests == 3  # a prefix of each, and the rest of the large one


def header_and_bitset(num_bytes: int) -> bytes:
    varint = bytearray()
    value = num_bytes << 1
    while value >= 0x80:
        varint.append(value & 0x7F | 0x80)
        value >>= 7
    varint.append(value)
    union = bytes([0x1C, 0x1C, 0x00, 0x00])
    return b"\x15" + bytes(varint) + union * 3 + b"\x00" + b"\x01" * num_bytes


def test_the_cache_forgets_the_least_recently_used_first() -> None:
    cache = _Cache(capacity=3 * 600)
    entry = _ColumnFilters(None, (BloomFilter(bytes(256)),))  # weighs 256 + 64 + 256
    for name in "abc":
        cache.put(("f", 1, 0, name), entry)
    assert cache.get(("f", 1, 0, "a")) == entry  # now the most recently used
    cache.put(("f", 1, 0, "d"), entry)
    assert cache.get(("f", 1, 0, "b")) is None
    assert cache.get(("f", 1, 0, "a")) == entry
    cache.put(("f", 2, 0, "huge"), _ColumnFilters(None, (BloomFilter(bytes(4096)),)))
    assert cache.get(("f", 2, 0, "huge")) is None  # larger than the whole cache: not kept


# --------------------------------------------------------------------------
# On an object store, counted by the server


@pytest.fixture(scope="module")
def recording_s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """moto's S3 server in a process of its own that records every request it answers."""
    directory = tmp_path_factory.mktemp("moto")
    environment = {**os.environ, "MOTO_RECORDER_FILEPATH": str(directory / "recording")}
    with moto_s3(cwd=directory, env=environment) as server:
        yield server


def recorder(server: S3Server, action: str) -> str:
    request = urllib.request.Request(f"{server.endpoint}/moto-api/recorder/{action}", method="POST")
    with urllib.request.urlopen(request) as response:
        return str(response.read().decode())


def data_requests(recording: str) -> list[tuple[str, str]]:
    entries = [json.loads(line) for line in recording.splitlines() if line.strip()]
    return [(e["method"], e["url"]) for e in entries if ".parquet" in e["url"]]


def test_the_request_bound_on_an_object_store(
    recording_s3: S3Server, no_cloud_environment: None
) -> None:
    uri = f"s3://{recording_s3.new_bucket()}/t"
    options = recording_s3.options()
    for part in range(2):
        write_deltalake(
            uri,
            rows(part, 6000),  # 3 row groups of about 70 KiB
            mode="append",
            storage_options=options,
            writer_properties=properties(["i", "s"], 2000),
        )
    snapshot = load_snapshot(Storage.of(uri, options))
    lookups = {"i": frozenset({-1, -2}), "s": frozenset({"nope"})}
    recorder(recording_s3, "reset-recording")
    recorder(recording_s3, "start-recording")
    try:
        probe = probe_blooms(snapshot, snapshot.files, ["i", "s"], lookups)
        again = probe_blooms(snapshot, snapshot.files, ["i", "s"], lookups)
    finally:
        recorder(recording_s3, "stop-recording")
    requests = data_requests(recorder(recording_s3, "download-recording"))
    assert probe.absent == (lookups, lookups)
    assert again.cost.requests == 0
    # The bound: per file an open (HEAD), the last 64 KiB, maybe the rest of the footer,
    # then at most one read per row group and probed column (here one run per row group,
    # delta-rs writing a row group's filters after its data).
    assert len(requests) == probe.cost.requests, requests
    assert probe.cost.requests <= 2 * (3 + ROW_GROUPS * 2)
    assert sorted({method for method, _ in requests}) == ["GET", "HEAD"]
    assert sum(method == "HEAD" for method, _ in requests) == 2


def test_a_path_written_again_is_not_answered_from_the_cache(tmp_path: Path) -> None:
    """A table dropped and written again may reuse a file's path and size: the add action's
    modification time tells the files apart, so the second probe reads the new filters."""
    clear_cache()
    path, sizes, answers = tmp_path / "t", set(), []
    for first, written in ((100_000, 1_700_000_000_000), (200_000, 1_700_000_000_001)):
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir()
        values = pa.table({"sid": [f"{i:06d}" for i in range(first, first + 1000)]})
        pq.write_table(values, path / "part-0.parquet", bloom_filter_options={"sid": {}})
        sizes.add((path / "part-0.parquet").stat().st_size)
        commit_one_file(path, values, rows=1000, modified=written)
        snapshot = load_snapshot(Storage.of(str(path)))
        probe = probe_blooms(snapshot, snapshot.files, ["sid"], {"sid": {"200500"}})
        answers.append(dict(probe.absent[0]))
    assert len(sizes) == 1  # the same path and size: only the time tells them apart
    assert answers == [{"sid": frozenset({"200500"})}, {}]


def test_a_file_in_sparks_legacy_calendar_is_not_probed(tmp_path: Path) -> None:
    """Spark rebases such a file's dates and timestamps as it reads them: a literal hashes
    as no value the file stores, so none of its filters is asked."""
    path = tmp_path / "legacy"
    path.mkdir()
    values = pa.table({"sid": [f"{i:06d}" for i in range(100)]}).replace_schema_metadata(
        {"org.apache.spark.legacyDateTime": ""}
    )
    pq.write_table(values, path / "part-0.parquet", bloom_filter_options={"sid": {}})
    commit_one_file(path, values, rows=100)
    snapshot = load_snapshot(Storage.of(str(path)))
    probe = probe_blooms(snapshot, snapshot.files, ["sid"], {"sid": {"999999"}})
    assert probe.absent == ({},)
