"""Write src/zorder/skipping/spark_functions.py: Spark's built-in functions, by kind.

    PYTHONPATH=src python scripts/spark_functions.py > src/zorder/skipping/spark_functions.py

Run it again on a Spark upgrade (tests/spark/test_guard_spark.py fails until then).
"""

from __future__ import annotations

import logging
import re
import textwrap
from typing import Any

_KINDS = ("BUILTIN", "AGGREGATE", "WINDOW", "GENERATOR", "TABLE_VALUED", "NONDETERMINISTIC")

# Arguments to try, in order, until a call resolves: Spark then says if it is deterministic.
_ARGUMENTS = (
    "",
    "1",
    "'a'",
    "array(1)",
    "1, 1",
    "'a', 'a'",
    "1, 1, 1",
    "'a', 'a', 'a'",
)


def catalog(spark: Any) -> dict[str, frozenset[str]]:
    """Spark's function names by kind, as the running session's registry has them.

    BUILTIN: every name ``SHOW SYSTEM FUNCTIONS`` lists that is a word (not an
    operator). AGGREGATE, WINDOW, GENERATOR: by the expression class's traits and
    the function's documented group. TABLE_VALUED: listed without a group or class
    (``range``, ``sql_keywords``), except the syntax words ``case``. NONDETERMINISTIC:
    the class is ``Nondeterministic``, or (for a class that overrides ``deterministic``,
    or a builder) a call with simple arguments resolves to an expression Spark says is
    not deterministic.
    """
    logging.getLogger("SQLQueryContextLogger").disabled = True  # one error per failed try
    jvm = spark._jvm
    names = sorted(
        row[0]
        for row in spark.sql("SHOW SYSTEM FUNCTIONS").collect()
        if re.fullmatch(r"[a-z_][a-z0-9_]*", row[0])
    )
    registry = spark._jsparkSession.sessionState().functionRegistry()
    identifier = jvm.org.apache.spark.sql.catalyst.FunctionIdentifier
    java_class = jvm.java.lang.Class
    package = "org.apache.spark.sql.catalyst.expressions."
    expression = java_class.forName(package + "Expression")
    no_types = spark.sparkContext._gateway.new_array(java_class, 0)
    traits = {
        kind: java_class.forName(package + name)
        for kind, name in (
            ("NONDETERMINISTIC", "Nondeterministic"),
            ("AGGREGATE", "aggregate.AggregateFunction"),
            ("WINDOW", "WindowFunction"),
            ("GENERATOR", "Generator"),
        )
    }
    groups = {"agg_funcs": "AGGREGATE", "window_funcs": "WINDOW", "generator_funcs": "GENERATOR"}
    kinds: dict[str, set[str]] = {kind: set() for kind in _KINDS}
    for name in names:
        kinds["BUILTIN"].add(name)
        info = registry.lookupFunction(identifier.apply(name))
        group = info.get().getGroup() if info.isDefined() else None
        class_name = info.get().getClassName() if info.isDefined() else None
        if group in groups:
            kinds[groups[group]].add(name)
        if class_name is None and group is None:
            if name != "case":
                kinds["TABLE_VALUED"].add(name)
            continue
        try:
            expression_class = java_class.forName(class_name)
        except Exception:  # a builder, not an expression class: its calls say
            expression_class = None
        for kind, trait in traits.items():
            if expression_class is not None and trait.isAssignableFrom(expression_class):
                kinds[kind].add(name)
        if name in kinds["AGGREGATE"] | kinds["WINDOW"] | kinds["GENERATOR"]:
            continue
        if (
            _inherits_determinism(expression_class, expression, no_types)
            or name in kinds["NONDETERMINISTIC"]
        ):
            continue
        if _deterministic(spark, name) is False:
            kinds["NONDETERMINISTIC"].add(name)
    return {kind: frozenset(found) for kind, found in kinds.items()}


def _inherits_determinism(expression_class: Any, expression: Any, no_types: Any) -> bool:
    """Whether the class keeps Expression's own ``deterministic`` (its children's): then a call
    is deterministic exactly when its arguments are, and need not be tried."""
    if expression_class is None or not expression.isAssignableFrom(expression_class):
        return False
    declared = expression_class.getMethod("deterministic", no_types).getDeclaringClass()
    return bool(declared.equals(expression))


def _deterministic(spark: Any, name: str) -> bool | None:
    """Whether the first call of ``name`` that resolves is deterministic; None if none does."""
    for arguments in _ARGUMENTS:
        try:
            frame = spark.range(1).selectExpr(f"{name}({arguments}) AS v")
        except Exception:
            continue
        projected = frame._jdf.queryExecution().analyzed().expressions().head()
        return bool(projected.deterministic())
    return None


def module(spark: Any) -> str:
    """The text of src/zorder/skipping/spark_functions.py for the running Spark."""
    found = catalog(spark)
    lines = [
        f'"""Spark {spark.version}\'s built-in functions, by kind. Generated: do not edit.',
        "",
        "    PYTHONPATH=src python scripts/spark_functions.py "
        "> src/zorder/skipping/spark_functions.py",
        "",
        "(``SHOW SYSTEM FUNCTIONS``; each function's ``ExpressionInfo`` group and expression",
        "class; and, for the rest, whether a resolved call is deterministic.)",
        "tests/spark/test_guard_spark.py checks it against the running Spark.",
        '"""',
        "",
        f'SPARK_VERSION = "{spark.version}"',
        "",
        "",
        "def _names(text: str) -> frozenset[str]:",
        '    """The names ``text`` lists, separated by spaces and line breaks."""',
        "    return frozenset(text.split())",
        "",
    ]
    for kind in _KINDS:
        lines += ["", f"{kind}: frozenset[str] = _names(", '    """']
        lines += _wrapped(sorted(found[kind]))
        lines += ['    """', ")"]
    return "\n".join(lines) + "\n"


def _wrapped(names: list[str]) -> list[str]:
    """The names, space-separated, in indented lines of at most 100 characters: one set
    a few dozen lines long rather than one line per name."""
    return textwrap.wrap(
        " ".join(names),
        width=100,
        initial_indent="    ",
        subsequent_indent="    ",
        break_long_words=False,
        break_on_hyphens=False,
    )


if __name__ == "__main__":
    from zorder.spark import local_session

    session = local_session(app_name="spark-functions")
    session.sparkContext.setLogLevel("OFF")
    print(module(session), end="")
    session.stop()
