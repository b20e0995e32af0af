"""Issue 57's pipeline: with ANSI mode off, timestamp, date and number filters written with
strings skip as their typed twins do, and read Spark's rows.

A table of events clustered on ``ts`` into 16 files, read by a session as the
issue built it (ANSI off, America/New_York): Spark analyzes ``ts >= '...'`` as
``ts >= CAST('...' AS TIMESTAMP)``, which for a string that parses means what
``ts >= TIMESTAMP '...'`` means. ``zorder.explain`` must keep exactly the files
the typed twin keeps (it kept all of them before), and ``zorder.read`` and
``to_arrow(ansi=False)`` must give Spark's rows; a string that does not parse
is NULL with ANSI off (no row), an error with it on.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession

import zorder
from zorder.errors import ZorderError
from zorder.spark.compat import PYSPARK_VERSION

pytestmark = pytest.mark.compat  # Spark's ANSI-off casts on the oldest and newest line

ZONE = "America/New_York"
FILES = 16

# (as written with strings, its typed twin): the twin's meaning is the same with ANSI off.
TWINS = [
    ("ts >= '2026-11-02 10:00:00'", "ts >= TIMESTAMP'2026-11-02 10:00:00'"),
    (
        "ts >= '2026-11-02 10:00:00' AND ts < '2026-11-02 11:00:00'",
        "ts >= TIMESTAMP'2026-11-02 10:00:00' AND ts < TIMESTAMP'2026-11-02 11:00:00'",
    ),
    (
        "ts BETWEEN '2026-11-03' AND '2026-11-03 23:59:59'",
        "ts BETWEEN TIMESTAMP'2026-11-03 00:00:00' AND TIMESTAMP'2026-11-03 23:59:59'",
    ),
    # The DST hour: 01:00-02:00 happens twice on 2026-11-01; Spark takes the earlier offset.
    (
        "ts >= '2026-11-01 01:00:00' AND ts < '2026-11-01 02:00:00'",
        "ts >= TIMESTAMP'2026-11-01 01:00:00' AND ts < TIMESTAMP'2026-11-01 02:00:00'",
    ),
    (
        "ts >= '2026-11-02T10:00:00-05:00 ' AND ts < '2026-11-02 16:00:00Z'",
        "ts >= TIMESTAMP'2026-11-02 15:00:00Z' AND ts < TIMESTAMP'2026-11-02 16:00:00Z'",
    ),
    (
        "day >= '2026-11-03' AND day < '2026-11-4'",
        "day >= DATE'2026-11-03' AND day < DATE'2026-11-04'",
    ),
    ("user_id = '5.7'", "user_id = 5"),
    ("user_id BETWEEN '10' AND '12.9'", "user_id BETWEEN 10 AND 12"),
    ("amount > '130.5'", "CAST(amount AS DOUBLE) > 130.5D"),
]
UNPARSEABLE = ["ts >= 'abc'", "ts = '2026-11-31 10:00:00'", "day < 'never' OR user_id = 'x'"]


@contextlib.contextmanager
def _session(spark: SparkSession, *, ansi: bool) -> Iterator[None]:
    keys = {"spark.sql.ansi.enabled": str(ansi).lower(), "spark.sql.session.timeZone": ZONE}
    previous: dict[str, str | None] = {k: spark.conf.get(k) for k in keys}
    for key, value in keys.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, old in previous.items():
            if old is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, old)


@pytest.fixture(scope="module")
def events(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, DataFrame]:
    rng = random.Random(57)
    start = dt.datetime(2026, 10, 30, tzinfo=dt.UTC)
    rows = []
    for _ in range(6000):
        seconds = rng.randint(0, 6 * 86_400)
        ts = start + dt.timedelta(seconds=seconds)
        day = ts.astimezone(dt.timezone(dt.timedelta(hours=-5))).date()
        # user_id and amount follow ts, so the clustering on ts skips on them too.
        rows.append((ts, day, seconds // 3600, round(seconds / 3000 + rng.random(), 2)))
    frame = spark.createDataFrame(rows, "ts timestamp, day date, user_id int, amount double")
    frame = frame.selectExpr("ts", "day", "user_id", "CAST(amount AS DECIMAL(8,2)) AS amount")
    path = str(Path(tmp_path_factory.mktemp("ansi_off")) / "events")
    zorder.write(frame, path, by=["ts"], num_files=FILES)
    return path, frame.cache()  # Spark's rows: the reference each filter is evaluated on


@pytest.mark.parametrize(("written", "typed"), TWINS)
def test_strings_skip_as_their_typed_twins_with_ansi_off(
    spark: SparkSession, events: tuple[str, DataFrame], written: str, typed: str
) -> None:
    path, rows = events
    with _session(spark, ansi=False):
        twin = zorder.explain(path, typed, spark=spark)
        report = zorder.explain(path, written, spark=spark)
        expected = sorted(map(tuple, rows.where(written).collect()))
        assert sorted(map(tuple, rows.where(typed).collect())) == expected  # the twin is a twin
        read = sorted(map(tuple, zorder.read(spark, path, written).collect()))
    assert twin.files_total == FILES
    assert twin.files_scanned < FILES / 2, f"{typed} skips little: the table does not test it"
    assert report.files_scanned == twin.files_scanned, (report.planned, twin.planned)
    assert "ANSI" not in report.planned
    assert read == expected
    arrow = zorder.to_arrow(path, written, ansi=False, time_zone=ZONE)
    assert arrow.num_rows == len(expected)
    if written.startswith(("ts", "day")):
        with _session(spark, ansi=True):
            on = zorder.explain(path, written, spark=spark).files_scanned
        if PYSPARK_VERSION >= (4, 0):  # ANSI on casts these strings alike
            assert on == twin.files_scanned
        else:  # 3.5 with ANSI on: its strings are read conservatively (legacy_ansi_session)
            assert twin.files_scanned <= on <= FILES


@pytest.mark.parametrize("written", UNPARSEABLE)
def test_an_unparseable_string_is_null_with_ansi_off_and_an_error_with_it_on(
    spark: SparkSession, events: tuple[str, DataFrame], written: str
) -> None:
    path, rows = events
    with _session(spark, ansi=False):
        assert rows.where(written).count() == 0
        assert zorder.explain(path, written, spark=spark).files_scanned == 0
        assert zorder.read(spark, path, written).count() == 0
    assert zorder.to_arrow(path, written, ansi=False, time_zone=ZONE).num_rows == 0
    with _session(spark, ansi=True), pytest.raises(Exception, match="CAST_INVALID_INPUT"):
        rows.where(written).count()
    with pytest.raises(ZorderError, match="CAST_INVALID_INPUT"):
        zorder.to_arrow(path, written, ansi=True, time_zone=ZONE)
