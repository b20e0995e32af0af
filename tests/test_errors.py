"""The error contract: ``except ZorderError`` catches refusals only, never a bug.

Every error zorder raises on purpose is a specific subclass from
:mod:`zorder.errors`; a broken invariant is an :class:`InternalError`, which is
not a ``ZorderError``; control-flow exceptions are not ``ZorderError`` s either.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import zorder.errors
from zorder.errors import InternalError, ZorderError

SOURCE = Path(zorder.errors.__file__).parent


def _bare_raises(tree: ast.AST) -> list[int]:
    """Lines raising ``ZorderError(...)`` itself rather than one of its subclasses."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Raise) or not isinstance(node.exc, ast.Call):
            continue
        called = node.exc.func
        name = called.attr if isinstance(called, ast.Attribute) else getattr(called, "id", None)
        if name == "ZorderError":
            found.append(node.lineno)
    return found


def test_no_module_raises_the_base_class() -> None:
    bare = {
        str(path.relative_to(SOURCE)): lines
        for path in sorted(SOURCE.rglob("*.py"))
        if (lines := _bare_raises(ast.parse(path.read_text(), str(path))))
    }
    assert bare == {}, "raise a specific subclass from zorder.errors (InternalError for a bug)"


def test_the_walk_finds_a_bare_raise() -> None:
    tree = ast.parse(
        "def f():\n    raise ZorderError('x')\n\ndef g():\n    raise errors.ZorderError('y')\n"
    )
    assert _bare_raises(tree) == [2, 5]
    assert _bare_raises(ast.parse("raise zorder.errors.InvalidArgumentError('z')")) == []


def test_a_bug_is_not_a_refusal() -> None:
    assert not issubclass(InternalError, ZorderError)
    assert issubclass(InternalError, RuntimeError)


def test_every_public_error_is_in_the_hierarchy() -> None:
    for name in zorder.errors.__all__:
        value = getattr(zorder.errors, name)
        if name in ("InternalError", "UnsafeCommitWarning"):
            continue
        assert issubclass(value, ZorderError), name
        # ... and a builtin a caller would have caught before the hierarchy.
        builtins = [c for c in inspect.getmro(value) if c.__module__ == "builtins"]
        assert builtins[0] is not Exception or value is ZorderError, name


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("zorder.arrow.engine", "NeedsSparkError"),
        ("zorder.table.delta.transactions", "AlreadyRecordedError"),
    ],
)
def test_control_flow_is_not_a_zorder_error(module: str, name: str) -> None:
    import importlib

    value = getattr(importlib.import_module(module), name)
    assert not issubclass(value, ZorderError)
    assert name not in zorder.errors.__all__


def test_a_missing_table_is_still_not_a_delta_table() -> None:
    # Code written against the older class keeps catching it, as FileNotFoundError too.
    assert issubclass(zorder.errors.TableNotFoundError, zorder.errors.NotADeltaTableError)
    assert issubclass(zorder.errors.TableNotFoundError, FileNotFoundError)
