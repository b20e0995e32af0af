"""The ``zorder`` command's entry point: the application with every command registered.

Importing :mod:`zorder.cli.tables` and :mod:`zorder.cli.tools` registers their
commands on :data:`zorder.cli.command.app`, tables' first (the order of
``zorder --help``).
"""

from __future__ import annotations

import importlib.abc
import sys

from zorder.cli import tables, tools
from zorder.cli.command import app

__all__ = ["app", "main", "tables", "tools"]


# Commands that start no Spark. pyarrow imports pandas (about 0.2 s, a third of a cold
# `zorder query`) the first time it converts anything, only to ask whether the input is a
# pandas object; these commands never have one, so in their process pandas is hidden from
# it. Spark needs pandas (Arrow UDFs, toPandas): a command that may start Spark keeps it.
_WITHOUT_SPARK = frozenset({"query", "describe", "stats", "vacuum", "restore", "curve"})


class _WithoutPandas(importlib.abc.MetaPathFinder):
    """An import of pandas fails, as if it were not installed (pyarrow then goes without)."""

    def find_spec(self, name: str, *args: object, **kwargs: object) -> None:
        if name.split(".")[0] == "pandas":
            raise ModuleNotFoundError(f"{name} is not loaded by this zorder command", name=name)


def main() -> None:
    arguments = sys.argv[1:]
    command = next((a for a in arguments if not a.startswith("-")), None)
    if command in _WITHOUT_SPARK and "--spark" not in arguments and "pandas" not in sys.modules:
        sys.meta_path.insert(0, _WithoutPandas())
    app()
