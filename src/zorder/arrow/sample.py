"""A uniform sample of a rewrite's rows, drawn in this process: a small optimize cuts its
files without a Spark job.

An optimize knows the files it rewrites and their row counts from the log.
Where they hold few rows (:func:`samples_in_process`), reading their
clustering columns here with pyarrow costs less than the Spark job that
would sample them (a job's planning, scheduling and collection alone take
about a quarter second on a local session). Larger rewrites are sampled by
Spark, as every write is.

The sample is uniform without replacement over each group's live rows: a
multivariate hypergeometric draw shares a group's sample among its files by
their live rows, and each file gives that many of its rows at random, so no
more than a few files' columns are held at once. The values are what Spark's
sample would hold: the table's Arrow types (what Spark's ``toArrow`` gives
for them), deleted rows left out, strings cut as
:func:`zorder.spark.keys.comparable` cuts them
(:func:`zorder.curves.ranks.ranked_prefix`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from zorder.arrow.files import read_file, read_in_order
from zorder.curves.clustering import DEFAULT_SAMPLE_SEED
from zorder.curves.ranks import ranked_prefix
from zorder.errors import ZorderError
from zorder.table import DataFile, TableSnapshot

__all__ = [
    "IN_PROCESS_SAMPLE_BYTES",
    "IN_PROCESS_SAMPLE_FILES",
    "IN_PROCESS_SAMPLE_ROWS",
    "drawn_rows",
    "ranked_sample",
    "sample_files",
    "sample_plan",
    "sampled_here",
    "samples_in_process",
]

_log = logging.getLogger(__name__)

# Measured on a local session (benchmarks/partitions.py's table, four clustering
# columns): 3M rows sampled here in 0.35 s, by Spark in 0.85 s. The bounds keep a
# driver on a cluster from reading much: the bytes are the files' whole sizes,
# of which only the clustering columns are read, a few files at a time.
IN_PROCESS_SAMPLE_ROWS = 4_000_000
IN_PROCESS_SAMPLE_BYTES = 256 * 2**20
# Each file is a few requests to storage: many small files (an optimize of many
# small appends) take a cluster's Spark job less time than a driver's reads.
IN_PROCESS_SAMPLE_FILES = 256


def samples_in_process(files: Sequence[DataFile]) -> bool:
    """Whether the sample of ``files`` is drawn here: the log counts their rows (none
    negative: a log whose vectors delete more rows than a file holds is left to Spark's
    read, and to the check of the rows written), and they are at most
    IN_PROCESS_SAMPLE_FILES files of at most IN_PROCESS_SAMPLE_ROWS rows in at most
    IN_PROCESS_SAMPLE_BYTES."""
    counts = [f.num_records for f in files]
    if not files or len(files) > IN_PROCESS_SAMPLE_FILES:
        return False
    if any(c is None or c < 0 for c in counts):
        return False
    rows = sum(c for c in counts if c is not None)
    return rows <= IN_PROCESS_SAMPLE_ROWS and sum(f.size for f in files) <= IN_PROCESS_SAMPLE_BYTES


def sample_plan(
    groups: Sequence[Sequence[DataFile]], sizes: Sequence[int], *, seed: int
) -> dict[str, tuple[int, int]]:
    """For each file of ``groups``: how many of its live rows the sample of its group takes
    (``sizes[i]`` of group i's, all when fewer, shared among its files by a multivariate
    hypergeometric draw) and the seed its own draw uses, by path."""
    rng = np.random.default_rng(seed)
    taken: dict[str, tuple[int, int]] = {}
    for files, size in zip(groups, sizes, strict=True):
        live = np.array([f.num_records or 0 for f in files], dtype=np.int64)  # live rows
        counts = rng.multivariate_hypergeometric(live, min(size, int(live.sum())))
        seeds = rng.integers(0, 2**63, len(files))
        for data_file, count, own in zip(files, counts, seeds, strict=True):
            taken[data_file.path] = (int(count), int(own))
    return taken


def drawn_rows(rows: pa.Table, taken: tuple[int, int]) -> pa.Table:
    """The rows of one file's ``rows`` its share of the sample takes (:func:`sample_plan`)."""
    count, own = taken
    # The log's count may disagree with the file (a broken table): the check of the
    # rows written, not the sample, is what refuses that.
    picks = np.random.default_rng(own).choice(
        rows.num_rows, min(count, rows.num_rows), replace=False
    )
    return rows.take(pa.array(np.sort(picks), pa.int64()))


def ranked_sample(parts: Sequence[pa.Table], schema: pa.Schema) -> pa.Table:
    """A group's drawn rows, one table, cut as rank buckets see them."""
    whole = pa.concat_tables(parts) if parts else schema.empty_table()
    return pa.table([ranked_prefix(c) for c in whole.columns], names=schema.names)


def sample_files(
    snapshot: TableSnapshot,
    groups: Sequence[Sequence[DataFile]],
    columns: Sequence[str],
    sizes: Sequence[int],
    *,
    seed: int,
) -> list[pa.Table]:
    """For each group of files of ``snapshot``, ``sizes[i]`` of its live rows (all, when it
    has fewer) drawn uniformly without replacement: ``columns``, cut as rank buckets see
    them. Every file's row count must be in the log (:func:`samples_in_process`)."""
    taken = sample_plan(groups, sizes, seed=seed)
    schema = pa.schema([snapshot.schema.arrow.field(c) for c in columns])

    def draw(data_file: DataFile) -> pa.Table:
        return drawn_rows(read_file(snapshot, data_file, columns), taken[data_file.path])

    # Every group's files in one pass of a few readers at a time, each part back to its group.
    wanted = [(i, f) for i, files in enumerate(groups) for f in files if taken[f.path][0] > 0]
    parts: list[list[pa.Table]] = [[] for _ in groups]
    read = read_in_order(draw, [f for _, f in wanted])
    for (index, _), part in zip(wanted, read, strict=True):
        parts[index].append(part)
    return [ranked_sample(own, schema) for own in parts]


def sampled_here(
    snapshot: TableSnapshot,
    columns: Sequence[str],
    groups: Sequence[Sequence[DataFile]],
    sizes: Sequence[int],
) -> list[pa.Table] | None:
    """Samples of ``sizes[i]`` rows of the files ``groups[i]`` (of ``snapshot``) an
    optimize rewrites, drawn here where :func:`samples_in_process` allows them
    (:func:`sample_files`, with the seed Spark's sample takes); None leaves the sampling to
    Spark: so does a failure here, which Spark's read then reports."""
    files = [f for group in groups for f in group]
    if not samples_in_process(files):
        return None
    try:
        return sample_files(snapshot, groups, columns, sizes, seed=DEFAULT_SAMPLE_SEED)
    except (OSError, pa.ArrowException, ZorderError) as error:
        _log.info("sampling %s in process failed, Spark samples it: %s", snapshot.uri, error)
        return None
