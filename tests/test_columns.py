"""One rule resolves a column name everywhere: exact case, else one case-insensitive match."""

from __future__ import annotations

from random import Random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zorder.columns import match_column, resolve_column, resolve_columns
from zorder.errors import ColumnNotFoundError

# Few letters in both cases, so that names often differ only in case.
names = st.text(alphabet="aAbB_", min_size=1, max_size=3)
candidate_lists = st.lists(names, max_size=8)


def reference(name: str, candidates: list[str]) -> str | None:
    """The rule, written as plainly as it is stated."""
    if name in candidates:
        return name
    loose = {c for c in candidates if c.lower() == name.lower()}
    return loose.pop() if len(loose) == 1 else None


@given(names, candidate_lists, st.randoms())
def test_the_rule_and_that_order_never_matters(
    name: str, candidates: list[str], rng: Random
) -> None:
    expected = reference(name, candidates)
    assert match_column(name, candidates) == expected
    shuffled = list(candidates)
    rng.shuffle(shuffled)
    assert match_column(name, iter(shuffled)) == expected
    if expected is None:
        with pytest.raises(ColumnNotFoundError, match=repr(name)):
            resolve_column(name, candidates)
    else:
        assert resolve_column(name, candidates) == expected


@given(st.lists(names, max_size=4), candidate_lists)
def test_resolve_columns_resolves_each_or_names_all_that_do_not(
    wanted: list[str], candidates: list[str]
) -> None:
    expected = [reference(name, candidates) for name in wanted]
    if None not in expected:
        assert resolve_columns(wanted, candidates) == expected
        return
    with pytest.raises(ColumnNotFoundError) as raised:
        resolve_columns(wanted, candidates)
    message = str(raised.value)
    for name, resolved in zip(wanted, expected, strict=True):
        if resolved is None:
            assert repr(name) in message
    assert message.endswith("table columns: " + ", ".join(dict.fromkeys(candidates)))


def test_exact_case_wins_over_other_spellings() -> None:
    assert resolve_column("id", ["ID", "id", "Id"]) == "id"
    assert resolve_column("Id", ["ID", "id", "Id"]) == "Id"
    assert resolve_column("iD", ["src", "ID"]) == "ID"
    assert resolve_column("id", ["id", "id"]) == "id"  # a Spark DataFrame may repeat a name


def test_an_unknown_name_is_worded_for_its_caller() -> None:
    with pytest.raises(
        ColumnNotFoundError, match=r"^unknown column 'i33' in filter; table columns: b, i8$"
    ):
        resolve_column("i33", {"b": "boolean", "i8": "tinyint"}, context="in filter")
    with pytest.raises(
        ColumnNotFoundError,
        match=r"^unknown partition columns 'x', 'y'; partition columns: day$",
    ):
        resolve_columns(
            ["x", "day", "y"], ["day"], kind="partition column", among="partition columns"
        )


def test_an_ambiguous_name_names_the_columns_it_might_mean() -> None:
    with pytest.raises(ColumnNotFoundError) as raised:
        resolve_column("id", ["ID", "x", "Id"], kind="clustering column")
    assert str(raised.value) == (
        "ambiguous clustering column 'id': it matches 'ID', 'Id', which differ only in case; "
        "write one of them exactly; table columns: ID, x, Id"
    )
    assert match_column("id", ["ID", "x", "Id"]) is None
    assert isinstance(raised.value, ValueError)  # what callers caught before
