"""The README's engine snippets (deltalake, DuckDB, Polars), as users copy them."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_snippets() -> dict[str, str]:
    blocks = re.findall(r"```python\n(# engine: (\w+)\n.*?)```", README.read_text(), re.S)
    return {name: code for code, name in blocks}


def test_the_readme_shows_every_engine() -> None:
    assert set(readme_snippets()) == {"deltalake", "duckdb", "polars"}
