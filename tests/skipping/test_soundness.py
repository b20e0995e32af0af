"""Soundness fuzz: the evaluator never rules out a file that holds a matching row.

Random small tables are split into files whose statistics are written the
way different Delta writers write them; random predicates are rendered as
SQL for the system under test and evaluated row by row, with Spark's
semantics (three-valued logic, NaN above every number), by a reference
interpreter that shares no code with the parser or the evaluator. The
statistics reach the evaluator as the Arrow table deltalake returns.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.skipping.oracle import FileSummary
from zorder.skipping import bind, might_match_mask, parse_predicate
from zorder.skipping.predicates import Comparison, TypedLiteral
from zorder.skipping.sql import sql_literal
from zorder.stats import truncate_max_string, truncate_min_string

UTC = dt.UTC
TYPES = {
    "n": "bigint",
    "x": "double",
    "s": "string",
    "d": "date",
    "t": "timestamp",
    "m": "decimal(6,2)",
    "b": "boolean",
    "y": "binary",
}
ARROW_TYPES = {
    "n": pa.int64(),
    "x": pa.float64(),
    "s": pa.string(),
    "d": pa.date32(),
    "t": pa.timestamp("us", tz="UTC"),
    "m": pa.decimal128(6, 2),
    "b": pa.bool_(),
}  # binary columns get no bounds from any writer: no min/max field at all

# Small domains, so that literals often sit right at a file's bounds.
_T0 = dt.datetime(2000, 1, 1, tzinfo=UTC)
values_by_column: dict[str, st.SearchStrategy[Any]] = {
    "n": st.integers(-3, 3),
    "x": st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 0.0, 0.1, 0.3, -1.0, 1.5, 2.0]),
    "s": st.one_of(
        st.text(alphabet="ab😀", max_size=3),
        st.builds(lambda t: "p" * 31 + t, st.text(alphabet="ab😀", max_size=2)),
    ),
    "d": st.dates(dt.date(1999, 12, 30), dt.date(2000, 1, 2)),
    "t": st.sampled_from([-86_400_000_000, -1500, -1, 0, 1, 999, 1000, 1001, 86_400_000_000]).map(
        lambda us: _T0 + dt.timedelta(microseconds=us)
    ),
    "m": st.sampled_from(["-1.00", "0.00", "0.10", "0.25", "2.00", "3.00"]).map(decimal.Decimal),
    "b": st.booleans(),
    "y": st.binary(max_size=2),
}


# ---------------------------------------------------------------- reference


def cmp_key(value: Any) -> Any:
    if isinstance(value, float):
        return (1, 0.0) if math.isnan(value) else (0, value + 0.0)
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, int | decimal.Decimal):  # booleans too: false < true
        return (0, float(value))
    return value


def compare(x: Any, op: str, v: Any) -> bool | None:
    if x is None or v is None:
        return None
    a, b = cmp_key(x), cmp_key(v)
    outcomes: dict[str, bool] = {
        "=": a == b,
        "!=": a != b,
        "<": a < b,
        "<=": a <= b,
        ">": a > b,
        ">=": a >= b,
    }
    return outcomes[op]


@dataclass(frozen=True)
class Node:
    kind: str
    column: str = ""
    op: str = ""
    values: tuple[Any, ...] = ()
    children: tuple[Node, ...] = ()
    swap: bool = False


def truth(node: Node, row: dict[str, Any]) -> bool | None:
    x = row.get(node.column)
    match node.kind:
        case "cmp":
            return compare(x, node.op, node.values[0])
        case "nullsafe":
            if x is None or node.values[0] is None:
                return x is None and node.values[0] is None
            return compare(x, "=", node.values[0])
        case "between":
            return kleene_and(compare(x, ">=", node.values[0]), compare(x, "<=", node.values[1]))
        case "in" | "notin":
            if x is None:
                found: bool | None = None
            elif any(v is not None and compare(x, "=", v) for v in node.values):
                found = True
            elif any(v is None for v in node.values):
                found = None
            else:
                found = False
            return found if node.kind == "in" else kleene_not(found)
        case "isnull":
            return x is None
        case "notnull":
            return x is not None
        case "like":
            return None if x is None else x.startswith(node.values[0])
        case "isnan":
            return isinstance(x, float) and math.isnan(x)
        case "and":
            return kleene_and(truth(node.children[0], row), truth(node.children[1], row))
        case "or":
            return kleene_or(truth(node.children[0], row), truth(node.children[1], row))
        case "not":
            return kleene_not(truth(node.children[0], row))
        case "opaque":
            return True if x is not None else None
    raise AssertionError(node.kind)


def kleene_and(a: bool | None, b: bool | None) -> bool | None:
    if a is False or b is False:
        return False
    return None if a is None or b is None else True


def kleene_or(a: bool | None, b: bool | None) -> bool | None:
    if a is True or b is True:
        return True
    return None if a is None or b is None else False


def kleene_not(a: bool | None) -> bool | None:
    return None if a is None else not a


# ---------------------------------------------------------------- rendering


def literal(value: Any, column: str) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            word = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
            return f"CAST('{word}' AS DOUBLE)"
        return repr(value + 0.0)
    if isinstance(value, dt.datetime):
        return f"TIMESTAMP'{value.strftime('%Y-%m-%d %H:%M:%S.%f')}'"
    if isinstance(value, dt.date):
        return f"DATE'{value.isoformat()}'"
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, bytes):
        return f"X'{value.hex()}'"
    return str(value)


def render(node: Node) -> str:
    c = f"`{node.column}`"
    match node.kind:
        case "cmp":
            lit = literal(node.values[0], node.column)
            flipped = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "!=": "!="}
            return f"{lit} {flipped[node.op]} {c}" if node.swap else f"{c} {node.op} {lit}"
        case "nullsafe":
            return f"{c} <=> {literal(node.values[0], node.column)}"
        case "between":
            a, b = (literal(v, node.column) for v in node.values)
            return f"{c} BETWEEN {a} AND {b}"
        case "in" | "notin":
            items = ", ".join(literal(v, node.column) for v in node.values)
            return f"{c} {'NOT IN' if node.kind == 'notin' else 'IN'} ({items})"
        case "isnull":
            return f"{c} IS NULL"
        case "notnull":
            return f"{c} IS NOT NULL"
        case "like":
            return (
                f"startswith({c}, {literal(node.values[0], 's')})"
                if node.swap
                else f"{c} LIKE {literal(node.values[0] + '%', 's')}"
            )
        case "isnan":
            return f"isnan({c})"
        case "and" | "or":
            return f"({render(node.children[0])}) {node.kind.upper()} ({render(node.children[1])})"
        case "not":
            return f"NOT ({render(node.children[0])})"
        case "opaque":
            return f"abs(hash({c})) >= 0"
    raise AssertionError(node.kind)


# ---------------------------------------------------------------- generation


def cross_literal(column: str) -> st.SearchStrategy[Any]:
    # Literals of a neighbouring type: Spark compares them after a cast.
    if column == "d":
        return values_by_column["t"]
    if column == "t":
        return values_by_column["d"]
    if column == "n":
        return st.sampled_from([-3.5, -0.5, 0.0, 2.5, 3.0])
    if column == "x":
        return st.integers(-2, 2)
    if column == "m":
        return st.one_of(st.integers(-2, 3), st.sampled_from([0.1, 0.25, 2.5]))
    return values_by_column[column]


@st.composite
def leaves(draw: st.DrawFn) -> Node:
    column = draw(st.sampled_from(list(TYPES)))
    value = st.one_of(values_by_column[column], cross_literal(column))
    kind = draw(
        st.sampled_from(
            [
                "cmp",
                "cmp",
                "cmp",
                "nullsafe",
                "between",
                "in",
                "notin",
                "isnull",
                "notnull",
                "like",
                "isnan",
                "opaque",
            ]
        )
    )
    if kind == "like":
        column = "s"
        prefix = draw(
            st.one_of(values_by_column["s"].map(lambda v: v[:33]), st.text("ap", max_size=34))
        )
        return Node("like", "s", values=(prefix,), swap=draw(st.booleans()))
    if kind == "isnan":
        return Node("isnan", "x")
    if kind in ("in", "notin"):
        items = draw(st.lists(st.one_of(value, st.none()), min_size=1, max_size=3))
        return Node(kind, column, values=tuple(items))
    # Now and then a NULL literal: x = NULL and x BETWEEN NULL AND v are NULL for every row
    # (and so is NOT of them), which a FALSE in their place would get wrong under NOT.
    value = st.one_of(value, value, value, value, value, value, value, st.none())
    if kind == "between":
        return Node(kind, column, values=(draw(value), draw(value)))
    if kind in ("isnull", "notnull", "opaque"):
        return Node(kind, column)
    op = draw(st.sampled_from(["=", "!=", "<", "<=", ">", ">="]))
    return Node(kind, column, op=op, values=(draw(value),), swap=draw(st.booleans()))


predicates = st.recursive(
    leaves(),
    lambda inner: st.one_of(
        st.tuples(st.sampled_from(["and", "or"]), inner, inner).map(
            lambda t: Node(t[0], children=(t[1], t[2]))
        ),
        inner.map(lambda n: Node("not", children=(n,))),
    ),
    max_leaves=5,
)


# ---------------------------------------------------------------- statistics


def summarize(rows: list[dict[str, Any]], style: str, path: str) -> FileSummary:
    mins: dict[str, Any] = {}
    maxs: dict[str, Any] = {}
    nulls: dict[str, int | None] = {}
    for column in TYPES:
        values = [v for r in rows if (v := r.get(column)) is not None]
        nulls[column] = len(rows) - len(values)
        if style == "bare" or not values or column == "y":
            continue
        if column == "b" and style == "zorder":
            continue  # Spark writes null counts only for booleans; some writers bound them
        if column == "x":
            finite = [v for v in values if not math.isnan(v)]
            if style == "zorder":
                if len(finite) < len(values):
                    continue  # a NaN: no bounds at all
                low, high = min(finite), max(finite)
                if math.isfinite(low):
                    mins[column] = low
                if math.isfinite(high):
                    maxs[column] = high
            elif finite:  # a writer that leaves NaN out of its bounds
                mins[column], maxs[column] = min(finite), max(finite)
            continue
        low, high = min(values), max(values)
        if column == "s":
            if style == "zorder":
                low, high = truncate_min_string(low), truncate_max_string(high)
            else:
                low, high = low[:32], high[:32]  # a plain cut, no bound kept
        if column == "t":
            low = low.replace(microsecond=low.microsecond // 1000 * 1000)
            cut = high.replace(microsecond=high.microsecond // 1000 * 1000)
            high = cut if style != "zorder" or cut == high else cut + dt.timedelta(milliseconds=1)
        mins[column], maxs[column] = low, high
        if high is None:
            del maxs[column]
    return FileSummary(
        path=path,
        num_records=len(rows),
        min_values=mins,
        max_values=maxs,
        null_count=nulls,
        nan_free_bounds=style == "zorder",
    )


def actions_table(summaries: list[FileSummary]) -> pa.Table:
    """Shaped like deltalake's get_add_actions(flatten=False)."""

    def struct(kind: str, types: dict[str, pa.DataType]) -> pa.StructArray:
        values = [getattr(s, kind) for s in summaries]
        arrays = [pa.array([v.get(c) for v in values], types[c]) for c in types]
        return pa.StructArray.from_arrays(arrays, names=list(types))

    return pa.table(
        {
            "path": [s.path for s in summaries],
            "size_bytes": pa.array([100] * len(summaries), pa.int64()),
            "num_records": pa.array([s.num_records for s in summaries], pa.int64()),
            "null_count": struct("null_count", dict.fromkeys(TYPES, pa.int64())),
            "min": struct("min_values", ARROW_TYPES),
            "max": struct("max_values", ARROW_TYPES),
        }
    )


def kept(sql: str, summaries: list[FileSummary], types: dict[str, str] = TYPES) -> list[bool]:
    """Which files the evaluator keeps for ``sql`` (as zorder.read plans them)."""
    trusted = np.array([s.nan_free_bounds for s in summaries], dtype=bool)
    mask = might_match_mask(
        bind(parse_predicate(sql), types),
        actions_table(summaries),
        types,
        nan_free_bounds=lambda: trusted,
    )
    return [bool(m) for m in mask]


def files_of(rows: list[dict[str, Any]], files: int, style: str) -> list[FileSummary]:
    chunks = [c for c in (rows[i::files] for i in range(files)) if c]
    return [summarize(chunk, style, f"f{i}") for i, chunk in enumerate(chunks)]


def check_sound(rows: list[dict[str, Any]], node: Node, files: int, style: str) -> None:
    """No file holding a row for which ``node`` is TRUE is ruled out."""
    sql = render(node)
    chunks = [c for c in (rows[i::files] for i in range(files)) if c]
    summaries = files_of(rows, files, style)
    for chunk, summary, keep in zip(chunks, summaries, kept(sql, summaries), strict=True):
        matching = [row for row in chunk if truth(node, row) is True]
        if matching:
            assert keep, (sql, summary, matching[0])


rows_strategy = st.lists(
    st.fixed_dictionaries(
        {name: st.one_of(st.none(), strategy) for name, strategy in values_by_column.items()}
    ),
    min_size=1,
    max_size=24,
)


@settings(max_examples=8 * settings().max_examples)
@given(rows_strategy, predicates, st.integers(1, 5), st.sampled_from(["zorder", "plain", "bare"]))
def test_no_file_with_a_matching_row_is_skipped(
    rows: list[dict[str, Any]], node: Node, files: int, style: str
) -> None:
    check_sound(rows, node, files, style)


def test_skipping_does_happen() -> None:
    rows = [
        {
            "n": i,
            "x": float(i),
            "s": f"k{i:02d}",
            "d": dt.date(2000, 1, 1 + i % 28),
            "t": dt.datetime(2000, 1, 1, tzinfo=UTC) + dt.timedelta(hours=i),
        }
        for i in range(40)
    ]
    files = [summarize(rows[i : i + 10], "zorder", f"f{i}") for i in range(0, 40, 10)]
    cases = {
        "n = 5": 1,
        "n BETWEEN 12 AND 25": 2,
        "x > 35.5": 1,
        "s LIKE 'k3%'": 1,
        "n IN (1, 39)": 2,
        "d = DATE'2000-01-02'": 2,
        "t < TIMESTAMP'2000-01-01 05:00:00'": 1,
        "t >= DATE'2000-01-02'": 2,
        "NOT (n >= 10)": 1,
        "n = 5 OR s = 'k35'": 2,
        "n IS NULL": 0,
        "abs(n) = 5": 4,
    }
    for sql, expected in cases.items():
        assert sum(kept(sql, files)) == expected, sql


def _row(**values: Any) -> dict[str, Any]:
    return {name: values.get(name) for name in TYPES}


_EDGE_CASES = [
    # NaN is above every number, and some writers leave it out of the bounds.
    ([_row(x=math.nan), _row(x=1.0)], Node("cmp", "x", op=">", values=(2.0,))),
    ([_row(x=math.nan), _row(x=math.inf)], Node("cmp", "x", op=">=", values=(math.inf,))),
    # A maximum cut to the millisecond below the true value.
    ([_row(t=_T0 + dt.timedelta(microseconds=999))], Node("cmp", "t", op=">", values=(_T0,))),
    # A maximum cut to 32 characters.
    ([_row(s="p" * 31 + "b😀")], Node("cmp", "s", op=">=", values=("p" * 31 + "b😀",))),
    ([_row(s="p" * 31 + "b😀")], Node("like", "s", values=("p" * 31 + "b😀",))),
    # Dates meet timestamps at midnight UTC, both ways round.
    ([_row(d=dt.date(2000, 1, 1))], Node("cmp", "d", op=">=", values=(_T0,))),
    ([_row(t=_T0)], Node("cmp", "t", op="<=", values=(dt.date(2000, 1, 1),))),
    # NULL never equals, and x <=> v never holds for a NULL x.
    ([_row(n=None), _row(n=3)], Node("nullsafe", "n", values=(3,))),
]


@example(*_EDGE_CASES[0], 1, "plain")
@example(*_EDGE_CASES[1], 1, "plain")
@example(*_EDGE_CASES[2], 1, "plain")
@example(*_EDGE_CASES[3], 1, "plain")
@example(*_EDGE_CASES[4], 1, "plain")
@example(*_EDGE_CASES[5], 1, "plain")
@example(*_EDGE_CASES[6], 1, "plain")
@example(*_EDGE_CASES[7], 1, "plain")
@settings(max_examples=8 * settings().max_examples)
@given(rows_strategy, leaves(), st.integers(1, 3), st.sampled_from(["zorder", "plain"]))
def test_single_conditions_never_skip_a_matching_file(
    rows: list[dict[str, Any]], node: Node, files: int, style: str
) -> None:
    check_sound(rows, node, files, style)


def test_numbers_meet_doubles_as_doubles() -> None:
    # Spark casts a decimal literal to double against a double column (and a
    # decimal column to double against a double literal): 0.1 equals 0.1.
    one_tenth = FileSummary(
        "f",
        1,
        {"x": 0.1, "m": decimal.Decimal("0.10"), "n": 3},
        {"x": 0.1, "m": decimal.Decimal("0.10"), "n": 3},
        {"x": 0, "m": 0, "n": 0},
        nan_free_bounds=True,
    )
    might = ["x = 0.1", "x <= 0.1", "0.1 >= x", "m = 0.1D", "m = 0.1", "n = 3.0", "n < 3.5"]
    cannot = ["x = 0.2", "m = 0.11", "n = 3.5", "n > 3.0", "x < 0.1", "m > 0.1", "x > 0.1"]
    for sql in might:
        assert kept(sql, [one_tenth]) == [True], sql
    for sql in cannot:
        assert kept(sql, [one_tenth]) == [False], sql


def test_integers_beyond_64_bits_and_decimals_compare_exactly() -> None:
    file = FileSummary(
        "f",
        2,
        {"n": -5, "m": decimal.Decimal("1.25")},
        {"n": 7, "m": decimal.Decimal("1.25")},
        {"n": 0, "m": 0},
    )
    cases = {
        f"n < {2**70}": True,
        f"n > {2**70}": False,
        f"n > {-(2**70)}": True,
        "n > 7.0": False,
        "n >= 6.99": True,
        "m = 1.25": True,
        "m = 1.250001": False,
        "m > 1": True,
        "m < 1.25": False,
    }
    for sql, expected in cases.items():
        assert kept(sql, [file]) == [expected], sql


def test_booleans_and_binaries() -> None:
    types = {"b": "boolean", "y": "binary"}
    files = [
        FileSummary("f0", 2, {"b": True}, {"b": True}, {"b": 0, "y": 2}),
        FileSummary("f1", 2, {"b": False}, {"b": True}, {"b": 1, "y": 0}),
    ]
    assert kept("b = false", files, types) == [False, True]
    assert kept("b IS NULL", files, types) == [False, True]
    assert kept("y IS NOT NULL", files, types) == [False, True]
    # Binary literals are not read from SQL: statistics cannot decide, both files stay.
    assert kept("y = X'00'", files, types) == [True, True]


@given(
    st.one_of(
        st.integers(-(2**63), 2**63 - 1),
        st.floats(),
        st.decimals(
            allow_nan=False, allow_infinity=False, places=3, max_value=10**20, min_value=-(10**20)
        ),
        st.dates(),
        st.datetimes(timezones=st.just(UTC)),
        st.datetimes(),
        st.text(),
        st.booleans(),
    )
)
def test_sql_literals_parse_back_to_their_value(value: Any) -> None:
    parsed = parse_predicate(f"x = {sql_literal(value)}")
    assert isinstance(parsed, Comparison)
    assert isinstance(parsed.value, TypedLiteral)
    if isinstance(value, float) and math.isnan(value):
        assert math.isnan(parsed.value.value)
    else:
        assert parsed.value.value == value
        assert type(parsed.value.value) is type(value)
