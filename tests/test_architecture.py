"""The dependency rule of docs/ARCHITECTURE.md, checked on the source: imports point down.

Every ``import`` in every module counts, those inside functions too (a lazy
import is still a dependency), so a layer cannot reach up by deferring it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src" / "zorder"

# Each part of the package and its rank: a module may import its own part and lower ranks.
RANKS = {
    "errors": 0,
    "sizes": 1,
    "columns": 1,
    "curves": 2,
    "stats": 3,
    "skipping": 4,
    "table": 5,
    "advice": 5,
    "plan": 6,
    "worker_daemon": 7,
    "spark": 7,
    "arrow": 7,
    "api": 8,
    "plot": 9,
    "demo": 10,
    "bench": 11,
    "bench_delta_rs": 11,
    "cli": 12,
    "__main__": 13,
}
# The top-level package re-exports the public API on first use (PEP 562).
TOP_LEVEL_MAY_IMPORT = {"errors", "curves", "api"}

# Third-party libraries each part may not import, at any level.
FORBIDDEN = {
    "errors": {"pyspark", "deltalake", "duckdb", "typer", "matplotlib", "rich", "pyarrow"},
    "sizes": {"pyspark", "deltalake", "duckdb", "typer", "matplotlib", "rich"},
    "columns": {"pyspark", "deltalake", "duckdb", "typer", "matplotlib", "rich"},
    "curves": {"pyspark", "deltalake", "duckdb", "typer", "matplotlib", "rich"},
    "stats": {"pyspark", "deltalake", "duckdb", "typer", "matplotlib", "rich"},
    "skipping": {"pyspark", "deltalake", "duckdb", "typer", "matplotlib", "rich"},
    "table": {"pyspark", "py4j", "duckdb", "typer", "matplotlib", "rich"},
    "arrow": {"pyspark", "py4j", "typer", "matplotlib", "rich"},
    "advice": {"pyspark", "py4j", "deltalake", "duckdb", "typer", "matplotlib", "rich"},
    # pyspark only for type names, under TYPE_CHECKING (test_the_plan_names_spark_types_only)
    "plan": {"duckdb", "typer", "matplotlib", "rich"},
    "spark": {"typer", "matplotlib"},
    "api": {"typer", "matplotlib"},
}


def part_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted(SOURCE.rglob("*.py")):
        name = ".".join(("zorder", *path.relative_to(SOURCE).with_suffix("").parts))
        found.append((name.removesuffix(".__init__"), path))
    return found


def imports_of(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == "zorder" and node.level == 0:
            # A submodule (from zorder import worker_daemon), else a public name of the API.
            for alias in node.names:
                submodule = (SOURCE / alias.name).is_dir() or (SOURCE / f"{alias.name}.py").exists()
                names.append(f"zorder.{alias.name}" if submodule else "zorder")
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    return names


def test_every_part_has_a_rank() -> None:
    parts = {part_of(name) for name, _ in modules()} - {"__init__"}
    assert parts <= set(RANKS), sorted(parts - set(RANKS))


def wrong_imports(module: str, imported: list[str]) -> list[str]:
    """The imports of ``module`` that break the rule."""
    part = part_of(module)
    wrong = []
    for name in imported:
        top = name.split(".")[0]
        if top == "zorder":
            target = part_of(name)
            if target == part:
                continue
            if target == "__init__":  # the top-level package: its names are the public API
                target = "api"
            if part == "__init__":
                allowed = target in TOP_LEVEL_MAY_IMPORT
            else:
                allowed = RANKS[target] < RANKS[part] or (
                    RANKS[target] == RANKS[part] and target == "worker_daemon"
                )
            if not allowed:
                wrong.append(name)
        elif top in FORBIDDEN.get(part, set()):
            wrong.append(name)
    return wrong


@pytest.mark.parametrize(("module", "path"), modules(), ids=[name for name, _ in modules()])
def test_imports_point_down(module: str, path: Path) -> None:
    wrong = wrong_imports(module, imports_of(path))
    assert wrong == [], f"{module} ({part_of(module)}) imports {wrong}"


def test_the_top_level_package_counts_as_the_api() -> None:
    assert part_of("zorder") == "__init__"
    assert RANKS["api"] < RANKS["cli"]


def test_the_rule_catches_an_upward_import(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text(
        "def f():\n    from zorder.api.read import read\n    import pyspark\n"
        "    from zorder import write, worker_daemon\n"
    )
    assert imports_of(module) == ["zorder.api.read", "pyspark", "zorder", "zorder.worker_daemon"]
    # The same imports in a pure module break the rule three times over; in the CLI, never.
    assert wrong_imports("zorder.curves.bad", imports_of(module)) == [
        "zorder.api.read",
        "pyspark",
        "zorder",
        "zorder.worker_daemon",
    ]
    assert wrong_imports("zorder.cli.fine", imports_of(module)) == []
    assert wrong_imports("zorder.table.bad", ["duckdb", "deltalake"]) == ["duckdb"]


def import_graph() -> dict[str, set[str]]:
    """Each module and the zorder modules it imports, at any level (a package counts as its
    ``__init__``; ``from package import module`` as the module)."""
    known = {name for name, _ in modules()}
    graph: dict[str, set[str]] = {}
    for name, path in modules():
        edges = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    edges.add(full if full in known else node.module)
            elif isinstance(node, ast.Import):
                edges |= {alias.name for alias in node.names}
        graph[name] = {e for e in edges if e in known and e != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of two or more modules (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_itself_round_about() -> None:
    # The top-level package re-exports the API on first use: it and the modules that call
    # zorder.write & co. (the CLI, the demo) are one lazy loop by design, left out here.
    graph = {
        name: {t for t in targets if t != "zorder"}
        for name, targets in import_graph().items()
        if name != "zorder"
    }
    assert cycles(graph) == []


def test_the_cycle_check_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def _type_only_imports(tree: ast.Module) -> set[int]:
    """The line numbers of imports under a module-level ``if TYPE_CHECKING:``."""
    lines = set()
    for node in tree.body:
        test = node.test if isinstance(node, ast.If) else None
        if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
            lines |= {
                n.lineno for n in ast.walk(node) if isinstance(n, ast.ImportFrom | ast.Import)
            }
    return lines


def pyspark_loaded_by(path: Path) -> list[int]:
    """The lines of ``path`` that import pyspark or py4j other than for type checking."""
    tree = ast.parse(path.read_text())
    typing_only = _type_only_imports(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        spark = any(n.split(".")[0] in {"pyspark", "py4j"} for n in names)
        if spark and node.lineno not in typing_only:
            found.append(node.lineno)
    return found


def test_the_plan_names_spark_types_only() -> None:
    """The run plan is built in no engine's types: pyspark is named for type checking (a
    write's rows may be a DataFrame), never imported."""
    plan = sorted((SOURCE / "plan").glob("*.py"))
    assert plan
    assert {path.name: pyspark_loaded_by(path) for path in plan} == {p.name: [] for p in plan}


def test_the_plan_rule_catches_a_pyspark_import(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pyspark.sql import DataFrame\n"
        "def f():\n    import pyspark\n"
    )
    assert pyspark_loaded_by(module) == [5]
