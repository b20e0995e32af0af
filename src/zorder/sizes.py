"""Sizes as people write them: ``"256MB"``, ``"1.5 GiB"``, ``4096``.

Delta's ``delta.targetFileSize`` property is written either way, so the table
layer reads it with the same rules as the API's ``target_file_size``.
"""

from __future__ import annotations

import re

from zorder.errors import InvalidArgumentError

__all__ = ["DEFAULT_TARGET_FILE_SIZE", "MAX_FILES", "parse_size", "size_text"]

DEFAULT_TARGET_FILE_SIZE = 128 * 1024 * 1024
# One run's files are written one Spark task each: more than this is a mistake (a run of a
# million 128 MB files is 128 TB), and asking for it would schedule that many tasks.
MAX_FILES = 1_000_000
_UNITS = {"": 1, "B": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*$", re.IGNORECASE)


def parse_size(size: int | str) -> int:
    """Bytes in ``size``: an int, or text such as ``"256MB"``, ``"1.5 GiB"``, ``"4096"``."""
    if isinstance(size, bool):
        raise InvalidArgumentError(f"invalid size {size!r}")
    if isinstance(size, int):
        value = size
    else:
        match = _SIZE.match(size)
        if not match:
            raise InvalidArgumentError(
                f"invalid size {size!r}; accepted: bytes as an int, or a number with a unit "
                "B, KB, MB, GB, TB (e.g. '256MB')"
            )
        value = int(float(match.group(1)) * _UNITS[match.group(2).upper()])
    if value < 1:
        raise InvalidArgumentError(f"size must be at least 1 byte, got {size!r}")
    return value


def size_text(count: int) -> str:
    """Bytes in the largest unit that keeps the number at least 1 (1,024 bytes a KB)."""
    size = float(count)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1024 or unit == "TB":
            return f"{size:,.1f} {unit}" if unit != "B" else f"{int(size):,} B"
        size /= 1024
    return f"{count} B"  # pragma: no cover
