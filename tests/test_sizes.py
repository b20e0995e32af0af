"""Size limits of docs/ARCHITECTURE.md, checked on the source: a module a reader can hold.

No module over 700 lines; no function over 80 lines of code (its docstring,
blank lines and comments aside). Signatures are left to review: a count of
parameters shaped signatures to sit just under it.
"""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src" / "zorder"

MAX_MODULE_LINES = 700
MAX_FUNCTION_LINES = 80


def code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> int:
    """Lines of ``node`` holding code: its docstring, blank lines and comments not counted."""
    body = lines[node.lineno - 1 : node.end_lineno]
    counted = sum(1 for line in body if line.strip() and not line.strip().startswith("#"))
    first = node.body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
        and first.end_lineno is not None
    ):
        counted -= first.end_lineno - first.lineno + 1
    return counted


def functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function and method with the class it belongs to ("" for none)."""
    found: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []

    def visit(node: ast.AST, owner: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, child.name)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                found.append((owner, child))
                visit(child, owner)
            else:
                visit(child, owner)

    visit(tree, "")
    return found


def oversized(root: Path) -> list[str]:
    """Each breach of the limits under ``root``, as path, name and measure."""
    breaches = []
    for path in sorted(root.rglob("*.py")):
        module = ".".join(path.relative_to(root).with_suffix("").parts)
        text = path.read_text()
        lines = text.splitlines()
        if len(lines) > MAX_MODULE_LINES:
            breaches.append(f"{module}: {len(lines)} lines")
        for owner, node in functions(ast.parse(text)):
            name = f"{module}.{owner + '.' if owner else ''}{node.name}"
            size = code_lines(node, lines)
            if size > MAX_FUNCTION_LINES:
                breaches.append(f"{name}: {size} lines of code")
    return breaches


def test_modules_functions_and_signatures_stay_within_the_limits() -> None:
    assert oversized(SOURCE) == []


def test_the_limits_are_found_when_broken(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    long_body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    (package / "long.py").write_text(
        f'def long():\n    """Docstring."""\n    # a comment\n{long_body}\n'
    )
    (package / "big.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    assert oversized(package) == [
        f"big: {MAX_MODULE_LINES + 1} lines",
        f"long.long: {MAX_FUNCTION_LINES + 1} lines of code",
    ]
