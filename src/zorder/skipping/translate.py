"""A Spark SQL filter translated to a DuckDB boolean expression with Spark's meaning.

The exact row evaluator (:mod:`zorder.skipping.rows`) answers a column
compared with literals; everything else a deterministic filter may hold
(columns against columns, arithmetic, functions, CASE, casts) is answered
here: the parsed tree is typed as Spark types it (an ANSI session, Spark
4.1's default) and written as DuckDB SQL that computes in those types,
with explicit casts, so DuckDB evaluates it over the Arrow rows with
Spark's answer. Where DuckDB's own function means something else (integer
division, casts of malformed strings, Java's case mapping, regular
expressions, zones), the SQL spells Spark's meaning out, or the construct is
refused with :class:`~zorder.errors.UnsupportedFilterError` naming it.

Translated, each in Spark's types (``int * int`` stays an int and raises on overflow;
``/`` divides doubles; ``div`` bigints; decimal sums and products get Spark's result
precision and scale): comparisons (NaN equal to NaN and above everything, -0.0 = 0.0,
strings by UTF-8 bytes, a string against an integral as a bigint, a date against a
timestamp at midnight in the session zone), IN, BETWEEN, IS [NOT] DISTINCT FROM,
IS [NOT] NULL/TRUE/FALSE, ``+ - * / div %``, unary minus, abs, coalesce/nvl/ifnull,
nullif, if, CASE, isnan, isnull/isnotnull, CAST and TRY_CAST between numbers, strings (to
integral and boolean), dates and timestamps, upper/lower (Java's full case mapping),
length (code points), substring/substr (Spark's negative and zero positions), concat/||,
startswith/endswith/contains, LIKE (backslash escape, ESCAPE), ILIKE (Java's lower case),
RLIKE (the Java patterns RE2 reads alike), year/quarter/month/day/dayofweek/dayofyear,
hour/minute/second (in the session zone), datediff, date_add/date_sub, add_months
(month end clamped), date +/- interval (day, week, month, year), date - date,
timestamp_ntz +/- interval, and timestamp +/- interval in a UTC session.

Refused, named: non-deterministic functions, subqueries, decimal division and
remainder, decimal results above 38 digits (Spark rounds them), decimals above 15
digits as doubles, casts of strings to numbers other than integers, to dates or
timestamps (except literals), casts of doubles or decimals to strings, a zoned
timestamp plus an interval outside UTC, Java regular expressions using constructs RE2
reads otherwise (flags, lookaround, possessive quantifiers, ``\\s``, ``\\p{..}``, class
intersections), LIKE patterns Spark rejects (an escape before another character than
``_``, ``%`` or itself, or at the end: Spark raises unless its optimizer folds the LIKE
away, as in ``NULL AND s LIKE ..``), and every function not listed above.

As in an ANSI session, a row that makes Spark raise (an overflow, a division
by zero, a malformed string cast) makes the evaluation
(:func:`zorder.arrow.files.translated_mask`) raise
:class:`~zorder.errors.FilterEvaluationError`; AND, OR, CASE, IF and
COALESCE evaluate their operands lazily, as Spark's do, so a guarded
expression raises only where Spark's would.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from zorder.skipping.constants import FoldContext
from zorder.skipping.predicates import unsupported
from zorder.skipping.sql import ParsedFilter, parse_filter
from zorder.skipping.sql_values import RefusedError as _RefusedError
from zorder.skipping.translator import Translator as _Translator
from zorder.skipping.zones import session_zone

__all__ = ["Translation", "translate"]


@dataclass(frozen=True)
class Translation:
    """A filter as DuckDB SQL: ``sql`` is TRUE, FALSE or NULL for each row, as in Spark."""

    sql: str
    columns: frozenset[str]  # the table's columns it reads
    text: str  # the filter as written, for errors
    # Constant subexpressions that may raise (CAST('five' AS INT)): Spark folds them, and
    # raises, before it reads a row; evaluate them once before reading.
    constants: tuple[str, ...] = ()


def translate(
    parsed: ParsedFilter | str,
    columns: Mapping[str, str],
    *,
    time_zone: str = "UTC",
    context: FoldContext | None = None,
) -> Translation:
    """A Spark SQL filter, parsed (:func:`~zorder.skipping.sql.parse_filter`; text is parsed
    here), as a DuckDB boolean expression over ``columns``.

    ``columns`` maps each column to its Spark type name; ``time_zone`` is the
    session's (dates of timestamps, zone-less literals); constants fold in
    ``context``, else in the parsed filter's, else in the session's zone. The
    answer is an ANSI session's. Raises
    :class:`~zorder.errors.UnsupportedFilterError` naming what has no exact translation.
    """
    if isinstance(parsed, str):
        parsed = parse_filter(parsed)
    text = parsed.text
    zone = session_zone(time_zone)
    folding = context or parsed.context or FoldContext(zone=zone)
    translator = _Translator(columns, time_zone, folding)
    try:
        value = translator.condition(parsed.tree, predicate=True)
    except _RefusedError as refused:
        raise unsupported(refused.what) from None
    if value.type not in ("boolean", "null"):
        raise unsupported(f"the filter {text!r} (a {value.type}, not a boolean)")
    return Translation(value.sql, frozenset(translator.read), text, tuple(translator.constants))
