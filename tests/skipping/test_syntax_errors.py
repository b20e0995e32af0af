"""A filter's syntax errors, found by the parser alone."""

from __future__ import annotations

import pytest

from zorder.errors import FilterParseError
from zorder.skipping.sql import parse_filter


@pytest.mark.parametrize("where", ["a = 'x", "a = `x", 's = "x'])
def test_an_open_quote_is_a_syntax_error(where: str) -> None:
    with pytest.raises(FilterParseError, match="is not closed"):
        parse_filter(where)
