"""The modes the operations accept, as Literal types (light: the CLI imports them at start)."""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["INPUT_FORMATS", "WRITE_MODES", "InputFormat", "WriteMode"]

WriteMode = Literal["error", "append", "overwrite"]
WRITE_MODES: tuple[WriteMode, ...] = get_args(WriteMode)

InputFormat = Literal["parquet", "csv", "delta"]
INPUT_FORMATS: tuple[InputFormat, ...] = get_args(InputFormat)
