"""Spark's conditional expressions as DuckDB SQL: COALESCE, IF, CASE, NULLIF and tests.

The branches of a conditional are brought to the one type Spark widens them to, and
evaluated lazily as Spark's are (a branch that would raise raises only where it is
taken). The NULL and NaN tests (``isnull``, ``isnotnull``, ``isnan``) live here too:
they are how a filter asks which branch of a value it holds. Handlers of
:mod:`zorder.skipping.translator`.
"""

from __future__ import annotations

from sqlglot import exp

from zorder.skipping.coercion import FLOAT_TYPES
from zorder.skipping.translate_logic import compare_values
from zorder.skipping.translate_types import NULL, RefusedError, Translating, Value, common_type


def _branches(t: Translating, values: list[Value], shown: str) -> tuple[list[Value], str]:
    common = "null"
    for value in values:
        widened = common_type(Value("", common), value, digits=False)
        if widened is None:
            raise RefusedError(f"{shown}: no common type of {common} and {value.type}")
        common = widened
    if common == "null":
        return values, common
    return [t.cast(v, common) for v in values], common


def coalesce(t: Translating, node: exp.Coalesce) -> Value:
    values = [t.value(node.this), *[t.value(e) for e in node.expressions]]
    cast, common = _branches(t, values, node.sql(dialect="spark"))
    if common == "null":
        return NULL
    sql = f"coalesce({', '.join(v.sql for v in cast)})"
    return Value(sql, common, raises=any(v.raises for v in cast))


def if_(t: Translating, node: exp.If) -> Value:
    condition = t.boolean(node.this)
    otherwise = node.args.get("false")
    values = [t.value(node.args["true"])]
    values.append(t.value(otherwise) if otherwise is not None else Value("NULL", "null"))
    cast, common = _branches(t, values, node.sql(dialect="spark"))
    sql = f"(CASE WHEN {condition.sql} THEN {cast[0].sql} ELSE {cast[1].sql} END)"
    raises = condition.raises or any(v.raises for v in cast)
    return Value(sql, common, raises=raises)


def case(t: Translating, node: exp.Case) -> Value:
    shown = node.sql(dialect="spark")
    subject = node.this
    conditions: list[Value] = []
    results: list[Value] = []
    for branch in node.args.get("ifs") or []:
        if subject is not None:
            conditions.append(compare_values(t, "=", t.value(subject), t.value(branch.this), shown))
        else:
            conditions.append(t.boolean(branch.this))
        results.append(t.value(branch.args["true"]))
    default = node.args.get("default")
    results.append(t.value(default) if default is not None else Value("NULL", "null"))
    cast, common = _branches(t, results, shown)
    whens = " ".join(
        f"WHEN {c.sql} THEN {r.sql}" for c, r in zip(conditions, cast[:-1], strict=True)
    )
    sql = f"(CASE {whens} ELSE {cast[-1].sql} END)"
    raises = any(v.raises for v in conditions) or any(v.raises for v in cast)
    return Value(sql, common, raises=raises)


def nullif(t: Translating, node: exp.Nullif) -> Value:
    first = t.value(node.this)
    equal = compare_values(t, "=", first, t.value(node.expression), node.sql(dialect="spark"))
    sql = f"(CASE WHEN {equal.sql} THEN NULL ELSE {first.sql} END)"
    return Value(sql, first.type, raises=equal.raises)


def is_nan(t: Translating, node: exp.IsNan) -> Value:
    inner = t.value(node.this)
    if inner.type == "null":
        return Value("FALSE", "boolean")
    if inner.type not in FLOAT_TYPES:
        raise RefusedError(f"isnan of a {inner.type}")
    return Value(f"coalesce(isnan({inner.sql}), FALSE)", "boolean", raises=inner.raises)


def is_null_function(t: Translating, node: exp.Anonymous) -> Value:
    if len(node.expressions) != 1:
        raise RefusedError(node.sql(dialect="spark"))
    inner = t.value(node.expressions[0])
    word = "IS NULL" if str(node.this).lower() == "isnull" else "IS NOT NULL"
    return Value(f"(({inner.sql}) {word})", "boolean", raises=inner.raises)
