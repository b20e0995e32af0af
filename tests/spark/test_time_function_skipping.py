"""Time functions skip on a ts-clustered table, and never drop a file Spark reads a row from.

A table of timestamps every 37 seconds over four days across New York's fall back
(2026-11-01), clustered by ``ts`` into 48 files, with some NULLs. For each filter on
``date_trunc``, ``trunc``, ``to_date``, ``unix_timestamp`` and the parts of a
timestamp, in several session zones and with ANSI on and off: every row Spark
returns from the whole table lies in a file zorder keeps; ``date_trunc`` and
``hour`` filters keep well under half the files; and ``to_arrow`` returns Spark's
rows, or refuses, naming the function.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import zorder
from zorder.errors import UnsupportedFilterError

FILES = 48
# (filter, whether it must skip most files); literals are read in the session's zone.
FILTERS = [
    ("date_trunc('HOUR', ts) = TIMESTAMP '2026-11-01 01:00:00'", True),
    ("date_trunc('hour', ts) = TIMESTAMP '2026-11-02 10:00:00'", True),
    (
        "date_trunc('HOUR', ts) IN (TIMESTAMP '2026-11-02 10:00:00', TIMESTAMP '2026-11-03 01:00')",
        True,
    ),
    ("date_trunc('HOUR', ts) >= TIMESTAMP '2026-11-03 10:30:00'", True),
    ("date_trunc('DAY', ts) = TIMESTAMP '2026-11-02 00:00:00'", True),
    ("date_trunc('DD', ts) < TIMESTAMP '2026-11-01 12:00:00'", True),
    (
        "date_trunc('MINUTE', ts) BETWEEN TIMESTAMP '2026-11-01 01:10:00' "
        "AND TIMESTAMP '2026-11-01 01:40:00'",
        True,
    ),
    ("date_trunc('SECOND', ts) = TIMESTAMP '2026-11-02 03:00:10'", True),
    ("date_trunc('MILLISECOND', ts) > TIMESTAMP '2026-11-03 20:00:00'", True),
    ("date_trunc('MICROSECOND', ts) <= TIMESTAMP '2026-10-31 20:00:00'", True),
    ("date_trunc('WEEK', ts) = TIMESTAMP '2026-11-02 00:00:00'", False),
    ("date_trunc('MONTH', ts) = TIMESTAMP '2026-10-01 00:00:00'", True),
    ("date_trunc('QUARTER', ts) > TIMESTAMP '2026-10-01 00:00:00'", False),
    ("date_trunc('YEAR', ts) = TIMESTAMP '2026-01-01 00:00:00'", False),
    ("date_trunc('D', ts) = TIMESTAMP '2026-11-02 00:00:00'", False),  # NULL in Spark
    ("NOT (date_trunc('bogus', ts) <=> TIMESTAMP '2026-11-02 00:00:00')", False),
    ("trunc(ts, 'MM') = DATE '2026-11-01'", False),
    ("to_date(ts) = DATE '2026-11-02'", True),
    ("CAST(ts AS DATE) IN (DATE '2026-11-01', DATE '2026-11-03')", False),
    ("unix_timestamp(ts) < 1793500000", False),
    ("hour(ts) = 10", True),
    ("hour(ts) BETWEEN 1 AND 2", True),
    ("hour(ts) IN (4, 5)", True),
    ("extract(HOUR FROM ts) = 22", True),
    ("date_part('HOUR', ts) > 21", True),
    ("NOT hour(ts) != 7", True),
    ("minute(ts) = 30", False),
    ("dayofweek(ts) = 2", False),
    ("weekday(ts) = 0", False),
    ("day(ts) = 2", False),
]


@pytest.fixture(scope="module")
def table(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    try:
        start = dt.datetime(2026, 10, 31, 12, tzinfo=dt.UTC)
        rows: list[tuple[dt.datetime | None, int]] = [
            (start + dt.timedelta(seconds=37 * i), i) for i in range(4 * 86400 // 37)
        ]
        rows += [(None, -1), (None, -2)]
        frame = spark.createDataFrame(rows, "ts timestamp, v int")
        path = str(Path(tmp_path_factory.mktemp("times")) / "t")
        zorder.write(frame, path, by=["ts"], num_files=FILES)
        yield path
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous or "UTC")


def _files_read(frame: DataFrame) -> set[str]:
    return {os.path.basename(r[0]) for r in frame.select(F.input_file_name()).distinct().collect()}


@pytest.mark.parametrize(
    ("zone", "ansi"),
    [
        ("America/New_York", True),
        ("America/New_York", False),
        ("Asia/Kolkata", True),
        ("UTC", False),
    ],
)
def test_time_functions_skip_and_keep_every_file_spark_reads(
    spark: SparkSession, table: str, zone: str, ansi: bool
) -> None:
    previous = (
        spark.conf.get("spark.sql.session.timeZone"),
        spark.conf.get("spark.sql.ansi.enabled"),
    )
    spark.conf.set("spark.sql.session.timeZone", zone)
    spark.conf.set("spark.sql.ansi.enabled", str(ansi).lower())
    report = []
    try:
        # The table's files as Parquet (no deletes: the files are its rows), so Spark's own
        # reader says which file each matching row comes from.
        files = [os.path.join(table, f.path) for f in zorder.Table(table).snapshot().files]
        assert len(files) == FILES
        whole = spark.read.parquet(*files)
        handle = zorder.Table(table, time_zone=zone, ansi=ansi)
        for text, must_skip in FILTERS:
            matched = whole.where(text)
            expected = sorted(r["v"] for r in matched.select("v").collect())
            kept = {os.path.basename(f.path) for f in handle.scan(text).files}
            missing = _files_read(matched) - kept
            assert not missing, (text, zone, ansi, sorted(missing))
            fraction = len(kept) / FILES
            report.append(f"{zone} ansi={ansi} kept {len(kept):2d}/{FILES} {text}")
            if must_skip and zone != "Asia/Kolkata":  # its +05:30 moves the hours across files
                assert fraction < 0.5, (text, zone, ansi, len(kept))
            try:
                rows = zorder.to_arrow(table, text, time_zone=zone, ansi=ansi)
            except UnsupportedFilterError as refused:
                report.append(f"    to_arrow refuses: {str(refused)[:100]}")
                continue
            assert sorted(rows.column("v").to_pylist()) == expected, (text, zone, ansi)
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous[0] or "UTC")
        spark.conf.set("spark.sql.ansi.enabled", previous[1] or "true")
    print("\n".join(report))
