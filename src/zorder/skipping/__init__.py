"""File skipping: predicates (SQL text or Columns) evaluated against file statistics.

Pure Python: no pyspark here. Conservative by construction: a file is
skipped only when no row in it can match; anything unknown might match.
"""

from __future__ import annotations

from zorder.skipping.evaluate import FileSummary, Outcome, evaluate
from zorder.skipping.predicates import Predicate, bind, rewrite_not
from zorder.skipping.sql import parse_predicate

__all__ = [
    "FileSummary",
    "Outcome",
    "Predicate",
    "bind",
    "evaluate",
    "parse_predicate",
    "rewrite_not",
]
