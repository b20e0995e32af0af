"""Spark's conditionals and NULL tests: each defined once, its value and its SQL.

COALESCE, NULLIF, IF, CASE, GREATEST and LEAST bring their branches to the one type
Spark widens them to (:func:`~zorder.skipping.logic.common_of` for a constant, the
translator's :func:`~zorder.skipping.sql_values.common_type` over columns, both on
:func:`~zorder.skipping.coercion.wider_type`) and take a branch only where Spark takes
it: a branch that would raise raises only where it is taken. The NULL and NaN tests
(``isnull``, ``isnotnull``, ``isnan``) live here too: they are how a filter asks which
branch a value takes. For each function the rule that folds a constant call
(``*_value``) stands next to the one that writes it over columns as DuckDB SQL
(``*_sql``); :data:`FUNCTIONS` registers both in the one table of
:mod:`zorder.skipping.functions`.
"""

from __future__ import annotations

import math

from sqlglot import exp

from zorder.skipping.coercion import FLOAT_TYPES, InexactError
from zorder.skipping.logic import (
    NUMERIC,
    as_type,
    common_of,
    compare_values,
    family,
    order_of,
    sort_key,
)
from zorder.skipping.numbers import Operand
from zorder.skipping.rules import (
    NULL,
    Classifying,
    DiffersError,
    Folding,
    Function,
    Translating,
    Typed,
)
from zorder.skipping.sql_values import NULL as NULL_SQL
from zorder.skipping.sql_values import RefusedError, Value, common_type


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


def _condition(operand: Operand) -> bool:
    if operand.type not in ("boolean", "void"):
        raise InexactError(f"a {operand.type} as a condition")
    return operand.value is True


def coalesce_value(f: Folding, node: exp.Coalesce) -> Operand:
    operands = [f.fold(node.this), *(f.fold(e) for e in node.expressions)]
    common = common_of([o.type for o in operands])
    chosen = next((o for o in operands if o.value is not None), None)
    return as_type(chosen, common)


def coalesce_sql(t: Translating, node: exp.Coalesce) -> Value:
    values = [t.value(node.this), *[t.value(e) for e in node.expressions]]
    cast, common = _branches(t, values, node.sql(dialect="spark"))
    if common == "null":
        return NULL_SQL
    sql = f"coalesce({', '.join(v.sql for v in cast)})"
    return Value(sql, common, raises=any(v.raises for v in cast))


def nullif_value(f: Folding, node: exp.Nullif) -> Operand:
    first, second = f.fold(node.this), f.fold(node.expression)
    if first.type is None:
        raise InexactError("nullif of a NULL of unknown type")
    if order_of(first, second) == 0:
        return Operand(None, first.type)
    return Operand(first.value, first.type)


def nullif_sql(t: Translating, node: exp.Nullif) -> Value:
    first = t.value(node.this)
    equal = compare_values(t, "=", first, t.value(node.expression), node.sql(dialect="spark"))
    sql = f"(CASE WHEN {equal.sql} THEN NULL ELSE {first.sql} END)"
    return Value(sql, first.type, raises=equal.raises)


def if_value(f: Folding, node: exp.If) -> Operand:
    condition = _condition(f.fold(node.this))
    yes = f.fold(node.args["true"])
    no = f.fold(node.args["false"]) if node.args.get("false") is not None else NULL
    common = common_of([yes.type, no.type])
    return as_type(yes if condition else no, common)


def if_sql(t: Translating, node: exp.If) -> Value:
    condition = t.boolean(node.this)
    otherwise = node.args.get("false")
    values = [t.value(node.args["true"])]
    values.append(t.value(otherwise) if otherwise is not None else Value("NULL", "null"))
    cast, common = _branches(t, values, node.sql(dialect="spark"))
    sql = f"(CASE WHEN {condition.sql} THEN {cast[0].sql} ELSE {cast[1].sql} END)"
    raises = condition.raises or any(v.raises for v in cast)
    return Value(sql, common, raises=raises)


def case_value(f: Folding, node: exp.Case) -> Operand:
    subject = f.fold(node.this) if node.args.get("this") is not None else None
    branches = [(f.fold(i.this), f.fold(i.args["true"])) for i in node.args["ifs"]]
    default = f.fold(node.args["default"]) if node.args.get("default") else NULL
    common = common_of([v.type for _, v in branches] + [default.type])
    for test, value in branches:
        if subject is None and test.type == "void":  # measured: IF(NULL, ..) is not
            raise InexactError("CASE WHEN NULL: an error in Spark")
        matched = _condition(test) if subject is None else order_of(subject, test) == 0
        if matched:
            return as_type(value, common)
    return as_type(default, common)


def case_sql(t: Translating, node: exp.Case) -> Value:
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


def extreme_value(f: Folding, node: exp.Greatest | exp.Least) -> Operand:
    operands = [f.fold(node.this), *(f.fold(e) for e in node.expressions)]
    if len(operands) < 2:
        raise InexactError("greatest/least of one argument: an error in Spark")
    common = common_of([o.type for o in operands])
    values = [as_type(o, common) for o in operands if o.value is not None]
    if not values:
        return Operand(None, common)
    pick = max if isinstance(node, exp.Greatest) else min
    if any(isinstance(v.value, float) and math.isnan(v.value) for v in values):
        raise InexactError("greatest/least with NaN")
    return pick(values, key=lambda v: sort_key(v.value))


def is_nan_sql(t: Translating, node: exp.IsNan) -> Value:
    inner = t.value(node.this)
    if inner.type == "null":
        return Value("FALSE", "boolean")
    if inner.type not in FLOAT_TYPES:
        raise RefusedError(f"isnan of a {inner.type}")
    return Value(f"coalesce(isnan({inner.sql}), FALSE)", "boolean", raises=inner.raises)


def is_null_function_sql(t: Translating, node: exp.Anonymous) -> Value:
    if len(node.expressions) != 1:
        raise RefusedError(node.sql(dialect="spark"))
    inner = t.value(node.expressions[0])
    word = "IS NULL" if str(node.this).lower() == "isnull" else "IS NOT NULL"
    return Value(f"(({inner.sql}) {word})", "boolean", raises=inner.raises)


def is_nan_ansi(c: Classifying, node: exp.IsNan) -> Typed:
    if family(c.typed(node, node.this)) != NUMERIC:
        raise DiffersError(node)
    return Typed("boolean")


FUNCTIONS: dict[type[exp.Expression] | str, Function] = {
    exp.Coalesce: Function(coalesce_value, coalesce_sql),
    exp.Nullif: Function(nullif_value, nullif_sql),
    exp.If: Function(if_value, if_sql),
    exp.Case: Function(case_value, case_sql),
    exp.Greatest: Function(extreme_value),
    exp.Least: Function(extreme_value),
    exp.IsNan: Function(sql=is_nan_sql, ansi=is_nan_ansi),
    "isnull": Function(sql=is_null_function_sql),
    "isnotnull": Function(sql=is_null_function_sql),
}
