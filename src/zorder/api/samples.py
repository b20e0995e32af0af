"""Where a clustering's sample comes from: drawn in process for a small optimize, whose
files the log counts (:mod:`zorder.arrow.sample`), else by Spark as the layout samples.

The two layouts (:func:`zorder.spark.layout.cluster` and
:func:`zorder.spark.partitions.cluster_partitions`) take a drawn sample in the
shape their own Spark sample has, or sample with Spark when given none.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pyarrow as pa

from zorder.api.jobs import ClusterJob
from zorder.arrow.sample import sample_files, samples_in_process
from zorder.curves.clustering import DEFAULT_SAMPLE_SEED
from zorder.curves.partitions import Partition
from zorder.errors import ZorderError
from zorder.table import DataFile

__all__ = ["files_sample", "partitions_sample"]

_log = logging.getLogger(__name__)


def _sample_here(
    job: ClusterJob, groups: Sequence[Sequence[DataFile]], sizes: Sequence[int]
) -> list[pa.Table] | None:
    """Samples of ``sizes[i]`` rows of the files ``groups[i]`` an optimize rewrites, drawn
    in process where :func:`~zorder.arrow.sample.samples_in_process` allows; None leaves
    the sampling to Spark: so does a failure here, which Spark's read then reports."""
    files = [f for group in groups for f in group]
    if job.snapshot is None or not samples_in_process(files):
        return None
    try:
        return sample_files(job.snapshot, groups, job.plan.names, sizes, seed=DEFAULT_SAMPLE_SEED)
    except (OSError, pa.ArrowException, ZorderError) as error:
        _log.info("sampling %s in process failed, Spark samples it: %s", job.uri, error)
        return None


def partitions_sample(
    job: ClusterJob,
    partitions: Sequence[Partition],
    groups: Sequence[Sequence[DataFile]],
    sizes: Sequence[int],
    *,
    key: str,
) -> pa.Table | None:
    """``sizes[i]`` rows of each of ``partitions`` (whose key is an index into ``groups``,
    the files an optimize rewrites), drawn in process with the partition's key in column
    ``key`` first, as :func:`~zorder.spark.partitions.cluster_partitions` takes them; None
    where Spark samples them."""
    drawn = _sample_here(job, [groups[int(p.key)] for p in partitions], sizes)
    if drawn is None:
        return None
    return pa.concat_tables(
        part.add_column(0, key, pa.repeat(pa.scalar(p.key, pa.int64()), part.num_rows))
        for p, part in zip(partitions, drawn, strict=True)
    )


def files_sample(job: ClusterJob, files: Sequence[DataFile], size: int) -> pa.Table | None:
    """``size`` rows of ``files`` (those an optimize rewrites, unpartitioned), drawn in
    process, as :func:`~zorder.spark.layout.cluster` takes them; None where Spark samples
    them, or where nothing is sampled (no files, or a plain sort) or the size is refused
    (by :func:`~zorder.spark.layout.cluster`, with its message)."""
    if not files or job.plan.sorts_plainly or size < 1:
        return None
    drawn = _sample_here(job, [files], [size])
    return None if drawn is None else drawn[0]
