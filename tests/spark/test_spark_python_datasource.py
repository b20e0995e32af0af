"""Watch for the Spark fix that a ``format("zorder")`` data source needs.

Spark (4.1.4 here, and 4.3.0 too when tried) keeps the partitions a Python
data source planned after ``pushFilters`` on the relation and reuses them for
later queries on the same DataFrame that push no filter, so a source that
prunes files there would lose rows. This test shows that behaviour with a toy
source; it is expected to fail until Spark is fixed, and then (strict xfail)
turns red to say the data source can be built.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

pytest.importorskip("pyspark.sql.datasource", reason="Python data sources arrived in Spark 4.0")
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    EqualTo,
    Filter,
    InputPartition,
)

ROWS_PER_PARTITION = 100
PARTITIONS = 20


class _PruningReader(DataSourceReader):
    def __init__(self) -> None:
        self.keep: set[int] | None = None

    def pushFilters(self, filters: list[Filter]) -> Iterator[Filter]:  # noqa: N802 (Spark's name)
        for f in filters:
            if isinstance(f, EqualTo) and f.attribute == ("id",):
                self.keep = {int(f.value) // ROWS_PER_PARTITION}
            yield f  # Spark still applies every filter to the rows

    def partitions(self) -> list[InputPartition]:
        return [InputPartition(i) for i in range(PARTITIONS) if self.keep is None or i in self.keep]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        start = int(partition.value) * ROWS_PER_PARTITION
        ids = pa.array(range(start, start + ROWS_PER_PARTITION), pa.int64())
        yield pa.record_batch([ids], names=["id"])


class _PruningSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "zorder_pushdown_probe"

    def schema(self) -> str:
        return "id bigint"

    def reader(self, schema: Any) -> DataSourceReader:
        return _PruningReader()


@pytest.mark.xfail(
    strict=True,
    reason="Spark reuses a Python data source's pushed-down partitions for later queries",
)
def test_python_data_source_plans_each_query_afresh(spark: SparkSession) -> None:
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    try:
        spark.dataSource.register(_PruningSource)
        source = spark.read.format("zorder_pushdown_probe").load()
        assert source.where("id = 1234").count() == 1
        assert source.count() == ROWS_PER_PARTITION * PARTITIONS
    finally:
        spark.conf.unset("spark.sql.python.filterPushdown.enabled")
