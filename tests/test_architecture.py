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
    "curves": 1,
    "stats": 2,
    "skipping": 3,
    "table": 4,
    "advice": 4,
    "worker_daemon": 5,
    "spark": 5,
    "api": 6,
    "plot": 7,
    "demo": 8,
    "bench": 9,
    "bench_delta_rs": 9,
    "cli": 10,
    "__main__": 11,
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
    "table": {"pyspark", "py4j", "typer", "matplotlib", "rich"},
    "advice": {"pyspark", "py4j", "deltalake", "duckdb", "typer", "matplotlib", "rich"},
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


@pytest.mark.parametrize(("module", "path"), modules(), ids=[name for name, _ in modules()])
def test_imports_point_down(module: str, path: Path) -> None:
    part = part_of(module)
    wrong = []
    for imported in imports_of(path):
        top = imported.split(".")[0]
        if top == "zorder":
            target = part_of(imported)
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
                wrong.append(imported)
        elif top in FORBIDDEN.get(part, set()):
            wrong.append(imported)
    assert wrong == [], f"{module} ({part}) imports {wrong}"


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
