"""File skipping: predicates (SQL text or Columns) evaluated against file statistics.

Pure Python: no pyspark here. Conservative by construction: a file is
skipped only when no row in it can match; anything unknown might match.
"""

from __future__ import annotations

from zorder.skipping.evaluate import Mask, might_match_mask
from zorder.skipping.predicates import Bound, Predicate, bind, rewrite_not
from zorder.skipping.sql import ParsedFilter, parse_filter, parse_predicate

__all__ = [
    "Bound",
    "Mask",
    "ParsedFilter",
    "Predicate",
    "bind",
    "might_match_mask",
    "parse_filter",
    "parse_predicate",
    "rewrite_not",
]
