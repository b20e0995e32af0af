"""Comparisons of an order-preserving function of one column, read on the column itself.

``year(d) = 2024`` is ``d >= DATE'2024-01-01' AND d < DATE'2025-01-01'``:
statistics of ``d`` decide the second, while the first, a function of the
column, would keep every file. This module rewrites such comparisons at parse
time (the column's type is not known yet) into the nodes of
:mod:`zorder.skipping.nodes`; binding then applies Spark's coercion to the
literals as for any comparison. The rewrites themselves are in
:mod:`~zorder.skipping.monotone_dates`, :mod:`~zorder.skipping.monotone_arithmetic`
and :mod:`~zorder.skipping.monotone_prefixes`, on the steps of
:mod:`~zorder.skipping.monotone_steps`; this module tries them in turn.

Every rewrite is either **equivalent** (the same TRUE, FALSE or NULL on every
row, so it may stand under NOT and the row evaluator may use it) or
**implied** (TRUE wherever the original is TRUE, and nothing more is
claimed). An implied rewrite is returned as ``And(rewrite, Unknown(...))``:
file skipping reads the rewrite, a NOT above it turns the whole into
:class:`Unknown`, and the row evaluator refuses it. A caller may therefore use
whatever :func:`monotone_comparison` returns wherever the comparison stood.

What each form means was measured on Spark 4.1 (ANSI on):

- ``CAST(c AS DATE)``, ``date(c)``, ``to_date(c)`` (no format): the day of
  ``c``, in the session's zone for a timestamp, on the wall clock for a
  timestamp_ntz. A DATE literal against a timestamp column is that day's first
  instant in the session's zone (``atStartOfDay``: 01:00 on a day whose
  midnight a DST change skips, as in America/Sao_Paulo), the very instant
  that starts the day ``CAST(ts AS DATE)`` returns: so every day, month,
  quarter and year boundary here is a DATE literal, right for date,
  timestamp and timestamp_ntz columns alike (and Unknown against a string
  column, which Spark would cast: sound).
- ``date_trunc(unit, c)`` returns a TIMESTAMP for every input (a date or a
  timestamp_ntz is read in the session's zone first); units YEAR/YYYY/YY,
  QUARTER, MONTH/MM/MON, WEEK (Monday), DAY/DD are day boundaries; HOUR,
  MINUTE, SECOND, MILLISECOND, MICROSECOND are instants, found by bisection
  on Spark's truncation in the session's zone
  (:mod:`~zorder.skipping.monotone_times`); an unknown unit gives NULL (the
  unit is read as written: sqlglot reads 'D' as DAY, which Spark does not).
  The constant may be any timestamp (with an offset, or not at a unit's start).
  ``trunc(c, fmt)`` returns a DATE; it knows YEAR/YYYY/YY, QUARTER,
  MONTH/MM/MON, WEEK, and gives NULL for any other fmt (``'DD'`` included).
- ``unix_timestamp(c)``: the whole seconds of the instant (a timestamp or a
  date column; not a string, which Spark parses with the format).
- ``year(c)``; ``month(c)`` and ``quarter(c)`` only inside an AND chain that
  also holds ``year(c) = Y`` (alone they are not monotone).
- ``date_add(c, n)``/``date_sub(c, n)``: the day of ``c`` moved by ``n``
  (a timestamp is cast to its day first). ``c + INTERVAL 'n' DAY``: a date
  for a date column, but a timestamp moved on the session's clock for a
  timestamp column: only the date column is rewritten (the rewrite binds to
  :class:`Unknown` on any other type, through a ``CAST(c AS DATE)`` that only a
  date column passes).
- ``c + k``, ``c - k``, ``k + c``, ``k - c`` with numbers written exactly:
  Spark's sum is exact on an integer column or a decimal of scale at most 6
  and at most 31 integral digits (``decimal(38,10) + 1`` is a
  ``decimal(38,9)``, rounded: left alone, through a ``CAST(c AS
  DECIMAL(37,6))`` that only the exact cases pass), but it raises on overflow
  where the rewrite answers: implied.
- ``substring(c, 1, k)``, ``substr``, ``left(c, k)`` (position 0 is position
  1): the first ``k`` characters (code points). Strings order by code point
  (UTF-8 bytes); a byte prefix of a UTF-8 string ends on a character boundary,
  so the :class:`StartsWith` node's bytes agree with Spark's characters.

A date column read through ``date_trunc`` (or a timestamp_ntz) goes through
the session's zone in Spark; in a zone that skipped a whole calendar day
(Pacific/Apia's 2011-12-30) the day that does not exist there reads as the
next one in Spark and as itself here. That is the one known difference.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable, Sequence

from sqlglot import exp

from zorder.skipping.monotone_arithmetic import rewrite_arithmetic
from zorder.skipping.monotone_dates import (
    rewrite_date_add,
    rewrite_date_trunc,
    rewrite_day,
    rewrite_year,
    within_year,
    year_term,
)
from zorder.skipping.monotone_prefixes import rewrite_prefix
from zorder.skipping.monotone_steps import COMPARISONS, Constant, NotHandledError, unparen
from zorder.skipping.monotone_times import rewrite_unix_timestamp
from zorder.skipping.nodes import CompareOp, Predicate, TypedLiteral

__all__ = ["COMPARISONS", "Constant", "monotone_comparison", "monotone_conjuncts"]


def monotone_comparison(
    op: CompareOp,
    side: exp.Expression,
    value: TypedLiteral,
    constant: Constant,
    *,
    zone: dt.tzinfo | None = None,
) -> Predicate | None:
    """``side op value`` as a predicate on the one column ``side`` reads, or None.

    ``side`` is the non-constant side as sqlglot parsed it (the caller flips
    ``op`` when the constant is on the left); ``value`` is the other side's
    constant (a NULL is the caller's: ``f(c) <=> NULL`` is not always
    ``c IS NULL``); ``constant`` evaluates the function's own constant
    arguments. None when ``side`` is not a form this module knows, or its
    arguments or ``value`` are not ones it rewrites exactly. ``zone`` is the session's,
    in which ``date_trunc`` below a day reads the wall clock (None: not rewritten).
    """
    side = unparen(side)
    try:
        rewrites: list[Rewrite] = [*_REWRITES, functools.partial(rewrite_date_trunc, zone=zone)]
        for rewrite in rewrites:
            predicate = rewrite(op, side, value, constant)
            if predicate is not None:
                return predicate
    except NotHandledError:
        return None
    return None


def monotone_conjuncts(
    terms: Sequence[exp.Expression], constant: Constant
) -> tuple[list[Predicate], list[exp.Expression]]:
    """The terms of one AND chain that read ``month(c)`` or ``quarter(c)`` under a
    ``year(c) = Y`` (or ``<=>``) of the same chain, as predicates on ``c``; and the
    other terms, untouched, in their order.

    Each returned predicate agrees with its term wherever the year term is not
    FALSE, so the chain (which keeps the year term among the others) is
    equivalent, NULLs and NOT included.
    """
    years: dict[str, int] = {}
    for term in terms:
        found = year_term(term, constant)
        if found is not None:
            years.setdefault(*found)
    recognised: list[Predicate] = []
    remaining: list[exp.Expression] = []
    for term in terms:
        predicate = within_year(term, years, constant) if years else None
        if predicate is None:
            remaining.append(term)
        else:
            recognised.append(predicate)
    return recognised, remaining


Rewrite = Callable[[CompareOp, exp.Expression, TypedLiteral, Constant], Predicate | None]
_REWRITES: list[Rewrite] = [
    rewrite_day,
    rewrite_unix_timestamp,
    rewrite_year,
    rewrite_date_add,
    rewrite_arithmetic,
    rewrite_prefix,
]
