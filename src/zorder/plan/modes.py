"""The modes the operations accept, as Literal types (light: the CLI imports them at start)."""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "ENGINES",
    "INPUT_FORMATS",
    "SCHEMA_MODES",
    "WRITE_MODES",
    "Engine",
    "EngineUsed",
    "InputFormat",
    "SchemaMode",
    "WriteMode",
]

WriteMode = Literal["error", "append", "overwrite"]
WRITE_MODES: tuple[WriteMode, ...] = get_args(WriteMode)

# How an append (or overwrite) meets a table whose schema lacks some of its columns: None
# (strict) refuses it; "merge" adds them to the table as nullable columns first.
SchemaMode = Literal["merge"]
SCHEMA_MODES: tuple[SchemaMode, ...] = get_args(SchemaMode)

InputFormat = Literal["parquet", "csv", "delta"]
INPUT_FORMATS: tuple[InputFormat, ...] = get_args(InputFormat)

# Who writes a run's files: Spark, or this process with pyarrow (no JVM); "auto" chooses
# the in-process engine for work within its bounds (zorder.plan.engines).
Engine = Literal["auto", "spark", "arrow"]
ENGINES: tuple[Engine, ...] = get_args(Engine)
EngineUsed = Literal["spark", "arrow"]
