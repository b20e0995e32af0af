"""The public functions follow one rule for the session and one default for each option."""

from __future__ import annotations

import inspect

import pytest

import zorder

SPARK_FIRST = ("read", "optimize")
SPARK_KEYWORD = (
    "scan",
    "to_arrow",
    "explain",
    "skipping_effectiveness",
    "describe",
    "vacuum",
    "restore",
    "advise",
)
PLANS_A_FILTER = ("scan", "to_arrow", "explain", "skipping_effectiveness")


@pytest.mark.parametrize("name", SPARK_FIRST)
def test_spark_s_own_work_takes_the_session_first(name: str) -> None:
    first = next(iter(inspect.signature(getattr(zorder, name)).parameters.values()))
    assert first.name == "spark"
    assert first.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD


@pytest.mark.parametrize("name", SPARK_KEYWORD)
def test_the_others_take_it_as_a_keyword_defaulting_to_none(name: str) -> None:
    parameter = inspect.signature(getattr(zorder, name)).parameters["spark"]
    assert parameter.kind is inspect.Parameter.KEYWORD_ONLY
    assert parameter.default is None


@pytest.mark.parametrize("name", PLANS_A_FILTER)
def test_ansi_means_the_session_s_else_on_everywhere(name: str) -> None:
    parameter = inspect.signature(getattr(zorder, name)).parameters["ansi"]
    assert parameter.kind is inspect.Parameter.KEYWORD_ONLY
    assert parameter.default is None
    assert inspect.signature(zorder.Table).parameters["ansi"].default is None


def test_every_operation_is_in_one_of_the_lists() -> None:
    functions = {n for n in zorder.__all__ if n[0].islower() and callable(getattr(zorder, n))}
    assert functions - {"write", "foreach_batch"} == {*SPARK_FIRST, *SPARK_KEYWORD}
