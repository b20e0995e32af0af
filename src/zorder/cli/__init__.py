"""The ``zorder`` command: argument parsing and printing only, no logic."""

from __future__ import annotations

from zorder.cli.app import app, main

__all__ = ["app", "main"]
