"""A filter is a predicate over the table's columns: everything else is refused by name.

No JVM: the guard runs inside the parse every path shares (``sql._parse``), so
``parse_predicate`` and ``referenced_columns`` (optimize's partition filter)
refuse what ``zorder.read`` would otherwise hand to Spark.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from zorder.errors import ForbiddenFilterError, UnsupportedFilterError
from zorder.skipping import bind, might_match_mask, spark_functions
from zorder.skipping.guard import REFLECTION, spark_rendered
from zorder.skipping.rows import exact_predicate, row_mask
from zorder.skipping.sql import parse_predicate, parse_unfolded, referenced_columns

FORBIDDEN = [
    # (filter, words the refusal must name)
    ("EXISTS (SELECT 1 FROM text.`/etc/passwd` WHERE value LIKE 'root%')", "EXISTS subquery"),
    ("x > 0 AND EXISTS (FROM text.`/etc/passwd` SELECT 1)", "EXISTS subquery"),
    ("EXISTS (VALUES (1))", "EXISTS subquery"),
    ("x IN (SELECT a FROM t)", "IN (SELECT ...) subquery"),
    ("x IN (FROM t SELECT a)", "IN (SELECT ...) subquery"),
    ("x IN (VALUES 1)", "subquery"),
    ("x IN (1, (SELECT 1))", "subquery"),
    ("(SELECT max(a) FROM t) > 1", "subquery"),
    ("x > ALL (SELECT 1)", "subquery"),
    ("(WITH c AS (SELECT 1 AS a) SELECT a FROM c) = 1", "subquery"),
    ("EXISTS (FROM t |> WHERE a = 1)", "EXISTS subquery"),
    ("x = 1; SELECT 1", "statement"),
    ("java_method('java.lang.System', 'setProperty', 'k', 'v') IS NOT NULL", "reflection"),
    ("reflect('java.lang.Thread', 'sleep', 3000L) IS NULL", "reflection function reflect"),
    ("try_reflect('java.lang.Thread', 'sleep', 3000L) IS NULL", "try_reflect"),
    ("REFLECT('java.lang.Thread', 'sleep', 3000L) IS NULL", "reflect"),
    ("`reflect`('java.lang.Thread', 'sleep', 3000L) IS NULL", "reflect"),
    ("x = 1 OR (y = 2 AND reflect('a', 'b') = 'c')", "reflect"),
    ("myudf(x) > 1", "myudf, which is not a Spark built-in"),
    ("`myudf`(x) > 1", "myudf"),
    ("default.myudf(x) > 1", "qualified function name default.myudf"),
    ("spark_catalog.default.myudf(x) > 1", "qualified function name spark_catalog.default.myudf"),
    ("system.builtin.abs(x) > 1", "qualified function name system.builtin.abs"),
    ("`my db`.`f`(x) > 1", "qualified function name my db.f"),
    ("`a.b`(x) > 1", "a.b"),
    ("read_files('/etc') IS NULL", "read_files"),
    ("IDENTIFIER('x') = 1", "IDENTIFIER"),
    ("rand() < 0.5", "non-deterministic function rand"),
    ("random() < 0.5", "random"),
    ("RAND(1) < 0.5", "rand"),
    ("randn(1) > 0", "randn"),
    ("uuid() = 'a'", "uuid"),
    ("shuffle(a)[0] = 1", "shuffle"),
    ("randstr(3) = 'abc'", "randstr"),
    ("uniform(0, 10) > 5", "uniform"),
    ("monotonically_increasing_id() > 1", "monotonically_increasing_id"),
    ("spark_partition_id() = 0", "spark_partition_id"),
    ("input_file_name() LIKE '%x%'", "input_file_name"),
    ("input_file_block_start() = 0", "input_file_block_start"),
    ("input_file_block_length() = 0", "input_file_block_length"),
    ("count(*) > 1", "aggregate function count"),
    ("sum(x) > 1", "aggregate function sum"),
    ("max_by(x, y) = 1", "aggregate function max_by"),
    ("first(x) = 1", "aggregate function first"),
    ("any(x)", "aggregate function any"),
    ("some(x)", "aggregate function some"),
    ("bool_and(x)", "aggregate function bool_and"),
    ("collect_list(x)[0] = 1", "aggregate function collect_list"),
    ("percentile_cont(0.5) WITHIN GROUP (ORDER BY x) > 1", "percentile_cont"),
    ("count(x) FILTER (WHERE x > 1) > 0", "count"),
    ("row_number() OVER (ORDER BY x) = 1", "row_number"),
    ("lag(x) OVER (ORDER BY x) = 1", "lag"),
    ("sum(x) OVER (PARTITION BY y) > 1", "sum"),
    ("explode(arr) = 1", "generator function explode"),
    ("stack(1, x) = 1", "generator function stack"),
    ("range(10) IS NULL", "table-valued function range"),
    ("from_protobuf(b, 'M', '/etc/passwd') IS NULL", "from_protobuf"),
    ("from_xml(s, 'a INT', map('rowValidationXSDPath', '/etc/x.xsd')).a = 1", "from_xml"),
    ("x = '${env:HOME}'", "${...} variable substitution"),
    ("x = concat('${spark', '.app.name}')", "${...}"),
    ("x = '${a}' -- ${b}", "${...}"),
    ("x = :p", "parameter marker"),
    ("x = ?", "parameter marker"),
]


@pytest.mark.parametrize(("text", "named"), FORBIDDEN)
def test_forbidden_constructs_are_refused_by_name(text: str, named: str) -> None:
    with pytest.raises(ForbiddenFilterError) as caught:
        parse_predicate(text)
    assert named in str(caught.value)
    assert "a predicate over the table's columns" in str(caught.value)
    assert isinstance(caught.value, UnsupportedFilterError)
    assert isinstance(caught.value, ValueError)
    assert caught.value.text == text


@pytest.mark.parametrize(
    "text",
    [
        "EXISTS (SELECT 1 FROM text.`/etc/passwd`)",
        "reflect('java.lang.Thread', 'sleep', 3000L) IS NULL",
        "rand() < 0.5",
    ],
)
def test_every_entry_point_of_the_parse_refuses(text: str) -> None:
    # optimize(where=) picks partitions through referenced_columns; to_arrow parses unfolded.
    for parse in (parse_predicate, parse_unfolded, referenced_columns):
        with pytest.raises(ForbiddenFilterError):
            parse(text)


ALLOWED = [
    "x = 1",
    "x > 1 AND y < 2 OR NOT z = 3",
    "x BETWEEN 1 AND 10",
    "x NOT BETWEEN 1 AND 10",
    "x IN (1, 2, 3)",
    "x NOT IN ('a', 'b')",
    "x IS NULL OR y IS NOT NULL",
    "x <=> NULL",
    "x IS DISTINCT FROM 1",
    "s LIKE 'ab%'",
    "s NOT LIKE '%c' ESCAPE '!'",
    "s ILIKE 'A%'",
    "s RLIKE '^a.*'",
    "s REGEXP 'b'",
    "s LIKE ANY ('a%', 'b%')",
    "x = ANY (1, 2)",
    "startswith(s, 'a')",
    "isnan(d)",
    "abs(x) > 1",
    "`abs`(x) > 1",
    "ABS(x) > 1",
    "lower(s) = 'a' AND upper(s) <> 'B'",
    "length(trim(s)) > 2",
    "trim(BOTH 'a' FROM s) = 'b'",
    "position('a' IN s) > 1",
    "substring(s FROM 1 FOR 2) = 'ab'",
    "substr(s, 1, 2) = 'ab'",
    "concat(s, 'x') = 'ax'",
    "s || 'x' = 'ax'",
    "coalesce(x, 0) = 0",
    "nvl(x, 0) = 0",
    "ifnull(x, 0) = 0",
    "if(x > 1, true, false)",
    "CASE WHEN x > 1 THEN 'a' ELSE 'b' END = 'a'",
    "CASE x WHEN 1 THEN true ELSE false END",
    "CAST(x AS DECIMAL(10, 2)) > 1.5",
    "CAST(s AS INT) = 1",
    "TRY_CAST(s AS INT) = 1",
    "x::int > 1",
    "x::decimal(10, 2) > 1",
    "d = DATE'2024-01-01'",
    "ts >= TIMESTAMP'2024-01-01 00:00:00'",
    "ts > current_timestamp() - INTERVAL 1 DAY",
    "d > current_date()",
    "ts < now()",
    "d > date_add(DATE'2024-01-01', 3)",
    "year(d) = 2024 AND month(d) = 1",
    "extract(YEAR FROM d) = 2024",
    "date_trunc('MONTH', ts) = TIMESTAMP'2024-01-01'",
    "to_date(s) = DATE'2024-01-01'",
    "datediff(d, DATE'2024-01-01') < 10",
    "timestampadd(DAY, 1, ts) > ts",
    "timestampdiff(HOUR, ts, TIMESTAMP'2024-01-01 00:00:00') < 3",
    "int(s) = 1 AND string(x) = '1' AND date(s) = d",
    "left(s, 1) = 'a' AND right(s, 1) = 'b' AND replace(s, 'a', 'b') = 'b'",
    "s LIKE ALL ('a%', '%b') AND s NOT LIKE ANY ('c%')",
    "x > ALL (1, 2)",
    "x IN(1,2) AND NOT(y = 1)",
    "CAST(a AS ARRAY<INT>)[0] = 1",
    "current_user() = 'alice'",
    "current_database() = 'default'",
    "version() IS NOT NULL",
    "arr[0] = 1",
    "m['k'] = 1",
    "element_at(m, 'k') = 1",
    "array_contains(arr, 1)",
    "size(arr) > 0",
    "st.a = 1",
    "`a.b` = 1",
    "struct(a, b).a = 1",
    "named_struct('a', 1).a = x",
    "exists(arr, v -> v > 1)",
    "forall(arr, v -> v > 0)",
    "filter(arr, v -> v > 1) = array(2)",
    "transform(arr, (v, i) -> v + i)[0] = 1",
    "aggregate(arr, 0, (acc, v) -> acc + v) > 1",
    "reduce(arr, 0, (acc, v) -> acc + v) > 1",
    "zip_with(arr, arr, (a, b) -> a + b)[0] = 2",
    "map_filter(m, (k, v) -> v > 1) = map()",
    "array_sort(arr, (a, b) -> a - b)[0] = 1",
    "greatest(x, y) > 1",
    "least(x, y) < 1",
    "round(d, 2) = 1.5",
    "x % 2 = 0",
    "x DIV 2 = 1",
    "x & 1 = 1",
    "hash(x) > 0",
    "md5(s) = 'a'",
    "sha2(s, 256) = 'a'",
    "xxhash64(x) > 0",
    "regexp_extract(s, '(a)', 1) = 'a'",
    "split(s, ',')[0] = 'a'",
    "get_json_object(s, '$.a') = '1'",
    "from_json(s, 'a INT').a = 1",
    "xpath_string(s, 'a') = 'b'",
    "typeof(x) = 'int'",
    "assert_true(x > 0) IS NULL",
    "x = 1 -- a comment",
    "x = 1 /* a comment */ AND y = 2",
    "s = 'it''s'",
    "s = 'a\\'b'",
    "s = 'SELECT * FROM t'",
    "s = 'reflect(1)'",
    "s = '$ {not a variable}'",
    'x = "double quoted string"',
    "x = X'41'",
    "`weird name` = 1",
    "`select` = 1",
    "true",
    "NOT false",
    "(x = 1)",
]


@pytest.mark.parametrize("text", ALLOWED)
def test_ordinary_filters_pass(text: str) -> None:
    parse_predicate(text)
    referenced_columns(text)


def test_long_chains_and_deep_parentheses_pass_and_answer_as_written() -> None:
    """Passing the guard, they still mean what they say: every term of a 5,000-term chain
    counts, in the files' statistics and row by row, against a brute-force reference."""
    terms = range(0, 15_000, 3)  # x = 0 OR x = 3 OR ... OR x = 14997
    assert len(terms) == 5_000
    chain = " OR ".join(f"x = {v}" for v in terms)
    deep = "(" * 100 + "x = 1" + ")" * 100
    types = {"x": "int"}
    # Files by [min, max]: between two terms, about one, before the first, after the last.
    bounds = [(1, 2), (2, 4), (4, 5), (0, 0), (-10, -1), (7, 9), (14_996, 14_998), (14_998, 20_000)]
    files = pa.table(
        {
            "num_records": pa.array([2] * len(bounds), pa.int64()),
            "min": pa.array([{"x": low} for low, _ in bounds]),
            "max": pa.array([{"x": high} for _, high in bounds]),
            "null_count": pa.array([{"x": 0}] * len(bounds)),
        }
    )
    values = [*range(-3, 15_003), None]
    rows = pa.table({"x": pa.array(values, pa.int32())})
    cases = [  # the filter, the values it matches, the files it keeps (worked by hand)
        (chain, set(terms), [False, True, False, True, False, True, True, False]),
        (deep, {1}, [True, False, False, False, False, False, False, False]),
    ]
    for text, matches, by_hand in cases:
        assert [any(low <= v <= high for v in matches) for low, high in bounds] == by_hand
        kept = might_match_mask(bind(parse_predicate(text), types), files, types).tolist()
        assert kept == by_hand, text[:40]
        exact = exact_predicate(parse_unfolded(text), types)
        got = row_mask(exact, rows, types).to_pylist()
        assert got == [None if x is None else x in matches for x in values], text[:40]


def test_spark_rendered_column_sql_is_not_checked() -> None:
    # Spark's own SQL for a Column filter may call the caller's UDFs: planning must not refuse.
    with spark_rendered():
        parse_predicate("myudf(x) > 1 AND y = 2")
    with pytest.raises(ForbiddenFilterError):
        parse_predicate("myudf(x) > 1 AND y = 2")


def test_refused_names_are_spark_builtins_or_named_on_purpose() -> None:
    # The kinds are subsets of Spark's list; the lists the guard adds are real Spark functions.
    builtins = spark_functions.BUILTIN
    for kind in ("AGGREGATE", "WINDOW", "GENERATOR", "NONDETERMINISTIC"):
        assert getattr(spark_functions, kind) <= builtins
    assert builtins >= REFLECTION
    assert {"rand", "randn", "uuid", "shuffle", "reflect"} <= spark_functions.NONDETERMINISTIC
    assert {"abs", "exists", "filter", "aggregate", "current_user", "now"} <= builtins
    assert "aggregate" not in spark_functions.AGGREGATE  # the higher-order function
