"""A filter's text checked once more as Spark itself parses it, just before Spark gets it.

:mod:`zorder.skipping.guard` judges the text as sqlglot reads it, on every
path. Two parsers may disagree about where a comment or a string ends (Spark
continues a ``--`` comment over a backslash-newline, for one), so on a
classic session the Spark path also asks Spark's own parser (parsing only:
nothing is resolved, no function looked up, no class loaded) and refuses a
subquery, a parameter marker, an ``IDENTIFIER(...)`` clause, or a call that is
not a plain allowed built-in, in the tree Spark would run. A Spark Connect
client holds no parser: there the first check stands alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from zorder.skipping.guard import forbidden_call, refuse

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["check_spark_parse"]


def check_spark_parse(spark: SparkSession, text: str) -> None:
    """Raise :class:`~zorder.errors.ForbiddenFilterError` if Spark's parse of ``text`` holds
    anything :func:`zorder.skipping.guard.check_filter` refuses; nothing on Spark Connect."""
    from zorder.spark.progress import is_connect

    if is_connect(spark):
        return
    try:
        expression = spark._jsparkSession.sessionState().sqlParser().parseExpression(text)
    except Exception:  # F.expr parses the same text with the same parser: it reports this
        return
    jvm: Any = spark._jvm  # set on every classic session
    patterns = jvm.org.apache.spark.sql.catalyst.trees.TreePattern
    for pattern, construct in (
        ("PLAN_EXPRESSION", "a subquery"),
        ("PARAMETER", "a parameter marker"),
        ("UNRESOLVED_IDENTIFIER", "the IDENTIFIER clause (a name chosen at run time)"),
    ):
        if expression.containsPattern(getattr(patterns, pattern)()):
            refuse(text, construct, "as Spark parses the text")
    _check_calls(expression, patterns.UNRESOLVED_FUNCTION(), text)


def _check_calls(expression: Any, calls: Any, text: str) -> None:
    """Every function Spark's tree calls, by its name parts; only subtrees holding calls are
    walked (a chain of thousands of comparisons is skipped in one look)."""
    pending = [expression]
    while pending:
        node = pending.pop()
        if not node.containsPattern(calls):
            continue
        if node.getClass().getSimpleName() == "UnresolvedFunction":
            parts = node.nameParts()
            names = [str(parts.apply(i)) for i in range(parts.size())]
            if len(names) != 1:
                refuse(text, f"the qualified function name {'.'.join(names)}")
            problem = forbidden_call(names[0].lower())
            if problem is not None:
                refuse(text, problem, "as Spark parses the text")
        children = node.children()
        pending.extend(children.apply(i) for i in range(children.size()))
