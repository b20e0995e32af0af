"""Each row's packed file key: in the JVM without a Python worker, else by an Arrow UDF.

A fitted :class:`~zorder.curves.plan.FilePlan` (or one per partition) is
encoded once on the driver and handed to ``zorder.spark.FileKeys`` in
``zorder-spark.jar``, which Spark runs as a Java UDF of the row's inputs
(its arguments, or one struct of them beyond ten): the same long
:meth:`FilePlan.packed` gives (tested equal, row for row, in
``tests/spark/test_jvm_keys.py``), at the cost of a binary search a column
and a few lookups, with no Arrow transfer and nothing of zorder's, NumPy's
or pyarrow's needed on the executors.

The inputs are the values the Arrow UDF sees (:func:`~zorder.spark.keys.comparable`),
as the JVM compares them exactly: integers, booleans, dates (unix days) and
timestamps (unix microseconds) as longs; floats as doubles; strings as their
UTF-8 bytes, which order as Spark orders strings; decimals as BigDecimals;
timestamp_ntz as LocalDateTime.

The encoding, big-endian (Java's DataInputStream), is what
``FileKeys.java`` reads: magic, version; dims, bits, curve (0 Z-order, 1
Hilbert), cell shift, dropped bits; the input kinds; the partition keys'
kind (0 none, 1 text, 2 integer) and the plans, each with its key, its first
file, its searches (input, boundaries, bucket ids or none for a cut's
identity) and its files (0: a cell tree; 1: key ranges with set-aside
ranges).
"""

from __future__ import annotations

import io
import struct
from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from zorder.columns import sql_identifier
from zorder.curves.cells import FileCells, KeyRanges
from zorder.curves.clustering import ClusteringColumn
from zorder.curves.plan import CellKeyPacking, FilePlan
from zorder.curves.ranks import STRING_SAMPLE_PREFIX
from zorder.errors import InternalError, InvalidArgumentError
from zorder.spark.jar import jvm_classes_available
from zorder.spark.keys import (
    comparable,
    partitioned_plan_key,
    plan_key,
)

__all__ = ["KeyEngine", "encode_plans", "jvm_input", "key_engine", "packed_key"]

KeyEngine = Literal["jvm", "arrow"]

_MAGIC = 0x5A4B4559
_VERSION = 1
_LONG, _DOUBLE, _BYTES, _DECIMAL, _LOCAL_DATETIME = range(5)
_INTEGERS = ("boolean", "tinyint", "smallint", "int", "bigint")
# The JVM's interleave tables hold 2**bits entries a column; rank keys have at most 10 bits.
_MAX_TABLE_BITS = 16


def _kind(type_name: str) -> int:
    if type_name in _INTEGERS or type_name in ("date", "timestamp"):
        return _LONG
    if type_name == "timestamp_ntz":
        return _LOCAL_DATETIME
    if type_name in ("float", "double"):
        return _DOUBLE
    if type_name in ("string", "binary"):
        return _BYTES
    if type_name.startswith("decimal("):
        return _DECIMAL
    raise InternalError(f"no JVM form for clustering column type {type_name}")  # pragma: no cover


def jvm_input(column: ClusteringColumn, *, whole: bool = False) -> Column:
    """The value the JVM compares for ``column``: :func:`comparable`'s, in an exact JVM form.

    ``whole``: a string or binary passes whole, not cut to its first
    STRING_SAMPLE_PREFIX characters (bytes). That finds the same bucket when no
    boundary is longer (see :func:`comparable`), and saves the cut.
    """
    value = F.col(sql_identifier(column.name)) if whole else comparable(column)
    name = column.type_name
    if name in _INTEGERS:
        return value.cast("bigint")
    if name == "date":
        return F.unix_date(value).cast("bigint")
    if name == "timestamp":
        return F.unix_micros(value)
    if name in ("float", "double"):
        return value.cast("double")
    if name == "string":
        return value.cast("binary")
    return value  # binary, decimal, timestamp_ntz: as Spark's converters give them


class _Writer:
    def __init__(self) -> None:
        self.out = io.BytesIO()

    def pack(self, fmt: str, *values: object) -> None:
        self.out.write(struct.pack(">" + fmt, *values))

    def blob(self, data: bytes) -> None:
        self.pack("i", len(data))
        self.out.write(data)

    def text(self, value: str) -> None:
        self.blob(value.encode("utf-8"))

    def ints(self, values: npt.ArrayLike) -> None:
        self.out.write(np.asarray(values, dtype=">i4").tobytes())

    def longs(self, values: npt.ArrayLike) -> None:
        array = np.asarray(values)
        if array.dtype.kind == "u":
            array = array.astype(np.uint64).view(np.int64)
        self.out.write(array.astype(">i8").tobytes())


def _boundaries(out: _Writer, kind: int, boundaries: pa.Array) -> None:
    out.pack("i", len(boundaries))
    dtype = boundaries.type
    if kind in (_LONG, _LOCAL_DATETIME):
        if pa.types.is_timestamp(dtype):
            micros = boundaries.cast(pa.timestamp("us", dtype.tz)).view(pa.int64())
        elif pa.types.is_date32(dtype):
            micros = boundaries.view(pa.int32())
        else:
            micros = boundaries
        out.longs(micros.cast(pa.int64()).to_numpy(zero_copy_only=False))
    elif kind == _DOUBLE:
        out.out.write(boundaries.cast(pa.float64()).to_numpy(zero_copy_only=False).astype(">f8"))
    elif kind == _BYTES:  # as bytes: a Spark string may hold bytes that are not UTF-8
        as_bytes = pa.large_binary() if pa.types.is_large_string(dtype) else pa.binary()
        if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
            boundaries = boundaries.cast(as_bytes)
        for value in boundaries.to_pylist():
            out.blob(bytes(value))
    else:
        for value in boundaries.to_pylist():
            out.text(str(value))


def _files(out: _Writer, files: FileCells | KeyRanges, dims: int) -> None:
    if isinstance(files, FileCells):
        out.pack("b", 0)
        out.pack("i", len(files.column))
        out.ints(files.column)
        out.ints(files.cut_start)
        out.ints(files.first_child)
        out.ints(files.cell)
        out.pack("i", len(files.cuts))
        out.longs(files.cuts)
        return
    if files.bounds.dtype.kind == "S":  # pragma: no cover (byte keys belong to direct keys)
        raise InternalError("the JVM plan takes rank keys, not byte keys")
    out.pack("b", 1)
    out.pack("i", len(files.bounds))
    out.longs(files.bounds)
    aside = files.aside_bounds
    out.pack("b", 0 if aside is None else 1)
    out.pack("i", 0 if aside is None else len(aside))
    if aside is not None:
        out.longs(aside)
    set_aside = list(files.set_aside) + [None] * (dims - len(files.set_aside))
    out.longs(np.array([-1 if v is None else int(v) for v in set_aside], dtype=np.int64))


def encode_plans(
    columns: Sequence[ClusteringColumn],
    plans: Sequence[FilePlan],
    *,
    packing: CellKeyPacking,
    first_files: Sequence[int] = (0,),
    partition_keys: Sequence[str | int] | None = None,
) -> bytes:
    """The bytes ``FileKeys.java`` reads: ``plans`` (one per partition, keyed by
    ``partition_keys``, numbered from ``first_files``) over ``columns``."""
    first = plans[0]
    kinds = [_kind(c.type_name) for c in columns]
    out = _Writer()
    out.pack("iiii", _MAGIC, _VERSION, len(columns), first.bits)
    out.pack("b", 1 if first.curve == "hilbert" else 0)
    out.pack("ii", packing.cell_shift, packing.dropped_bits)
    out.pack("i", len(kinds))
    out.out.write(bytes(kinds))
    keyed = partition_keys is not None
    texts = keyed and any(isinstance(k, str) for k in partition_keys or ())
    out.pack("b", 0 if not keyed else 1 if texts else 2)
    out.pack("i", len(plans))
    for index, plan in enumerate(plans):
        if partition_keys is not None:
            key = partition_keys[index]
            out.text(key) if isinstance(key, str) else out.pack("q", int(key))
        out.pack("q", first_files[index])
        searches: list[tuple[int, pa.Array, npt.NDArray[np.uint64] | None]] = [
            (i, b.boundaries, b.ids) for i, b in enumerate(plan.buckets)
        ]
        if plan.cut_ids is not None:
            cut_searches = zip(plan.cut_ids.columns, plan.cut_ids.searches, strict=True)
            searches += [(c, s.boundaries, None) for c, s in cut_searches]
        out.pack("i", len(searches))
        for column, boundaries, ids in searches:
            out.pack("i", column)
            _boundaries(out, kinds[column], boundaries)
            out.pack("i", 0 if ids is None else len(ids))
            if ids is not None:
                out.longs(ids)
        _files(out, plan.files, len(columns))
    return out.out.getvalue()


def key_engine(spark: SparkSession, plans: Sequence[FilePlan]) -> KeyEngine:
    """Where the packed keys are computed: in the JVM when zorder's jar can be used there
    (a classic session) and the plans have a JVM form, else by the Arrow UDF."""
    if any(p.bits > _MAX_TABLE_BITS for p in plans) or not jvm_classes_available(spark):
        return "arrow"
    return "jvm"


def packed_key(
    spark: SparkSession,
    columns: Sequence[ClusteringColumn],
    plans: Sequence[FilePlan],
    *,
    packing: CellKeyPacking,
    first_files: Sequence[int] = (0,),
    partition_key: str | None = None,
    partition_keys: pa.Array | None = None,
    engine: KeyEngine | None = None,
) -> Column:
    """Each row's file above its key along the curve, in one long: what
    :meth:`FilePlan.packed` gives, computed by ``engine`` (default :func:`key_engine`).

    One plan, or one a partition: the row's plan is ``plans[i]`` where its
    ``partition_key`` column holds ``partition_keys[i]``, and its files are
    numbered from ``first_files[i]``.
    """
    if engine is None:
        engine = key_engine(spark, plans)  # has made sure the jar is loaded for "jvm"
    elif engine == "jvm" and not jvm_classes_available(spark):
        raise InvalidArgumentError(
            "engine='jvm' needs zorder's jar in the session's JVM, which this session cannot "
            "load (Spark Connect, or a session started without it); use engine='arrow' or None"
        )
    if engine == "arrow":
        if partition_key is None or partition_keys is None:
            return plan_key(columns, plans[0])
        return partitioned_plan_key(
            columns,
            plans,
            packing=packing,
            first_files=first_files,
            partition_key=partition_key,
            partition_keys=partition_keys,
        )
    keys = None if partition_keys is None else partition_keys.to_pylist()
    encoded = encode_plans(
        columns, plans, packing=packing, first_files=first_files, partition_keys=keys
    )
    inputs = [jvm_input(c, whole=_short_boundaries(i, plans)) for i, c in enumerate(columns)]
    if partition_key is not None:
        inputs.insert(0, F.col(sql_identifier(partition_key)))
    return _file_keys_column(spark, encoded, inputs)


def _short_boundaries(column: int, plans: Sequence[FilePlan]) -> bool:
    """Whether every boundary of clustering column ``column`` in ``plans`` (rank buckets'
    and workload cuts') is at most STRING_SAMPLE_PREFIX characters (bytes) long."""
    boundaries = [p.buckets[column].boundaries for p in plans]
    for plan in plans:
        if plan.cut_ids is not None:
            cuts = zip(plan.cut_ids.columns, plan.cut_ids.searches, strict=True)
            boundaries += [search.boundaries for c, search in cuts if c == column]
    for values in boundaries:
        if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
            lengths = pc.utf8_length(values)
        elif pa.types.is_binary(values.type) or pa.types.is_large_binary(values.type):
            lengths = pc.binary_length(values)
        else:
            continue
        longest = pc.max(lengths).as_py()
        if longest is not None and longest > STRING_SAMPLE_PREFIX:
            return False
    return True


def _file_keys_column(spark: SparkSession, encoded: bytes, inputs: Sequence[Column]) -> Column:
    """``FileKeys.column``: the plan ``encoded`` applied to each row's ``inputs`` in the JVM."""
    gateway = spark.sparkContext._gateway
    jvm = spark.sparkContext._jvm
    assert gateway is not None  # a classic session (key_engine)
    assert jvm is not None
    java_inputs = gateway.new_array(jvm.org.apache.spark.sql.Column, len(inputs))
    for i, column in enumerate(inputs):
        java_inputs[i] = column._jc
    return Column(jvm.zorder.spark.FileKeys.column(bytearray(encoded), java_inputs))
