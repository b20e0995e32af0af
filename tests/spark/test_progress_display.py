"""The status line over a real clustering job on a classic session."""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import pandas as pd
import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import zorder
from tests.api.test_progress import plain, recording
from zorder.api.progress import spark_status

pytestmark = pytest.mark.spark


def _slowly(batches: Iterable[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    # Each pass over a partition waits 0.6 s, so every job over these rows
    # (the sample, the write) outlasts several of the display's quarter-second
    # ticks however fast the machine: the line must catch the write's tasks.
    time.sleep(0.6)
    yield from batches


def test_the_line_names_the_phases_and_spark_s_tasks(spark: SparkSession, tmp_path: Path) -> None:
    console, sink = recording()
    source = spark.range(0, 200_000, numPartitions=2).select(
        (F.col("id") * 7919 % 1000).alias("a"), "id"
    )
    rows = source.mapInPandas(_slowly, schema=source.schema)
    with spark_status("Writing:", spark, console=console):
        metrics = zorder.write(rows, str(tmp_path / "t"), by=["a", "id"], num_files=4)
    assert metrics.rows == 200_000  # the display changes nothing
    shown = plain(sink)
    with_tasks = set(re.findall(r"Writing: ([a-z ]+) [\d,]+/[\d,]+ tasks", shown))
    assert "clustering and writing" in with_tasks  # the write job's tasks, from the tracker
    assert "Writing: sampling" in shown
