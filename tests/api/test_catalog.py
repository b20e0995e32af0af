"""What a table argument means: a name in a catalog, or a path."""

from __future__ import annotations

from pathlib import Path

import pytest

from zorder.api.catalog import is_table_name


def test_what_is_a_name_and_what_is_a_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "here").mkdir()
    assert is_table_name("events")
    assert is_table_name("db.events")
    assert is_table_name("spark_catalog.db.`odd name`")
    assert not is_table_name("here")  # an existing directory
    assert not is_table_name("./events")
    assert not is_table_name("s3://bucket/events")
    assert not is_table_name("file:events")
    assert not is_table_name("brk[x]")  # no identifier: a relative path, checked as paths are
    assert not is_table_name("not a name")
    assert not is_table_name(tmp_path / "events")  # a PathLike is a path
