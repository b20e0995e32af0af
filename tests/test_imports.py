"""``import zorder`` and the pure layers load no Spark, Delta, plotting or CLI library."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("pyspark", "py4j", "deltalake", "matplotlib", "typer")


def loaded_after(statement: str) -> list[str]:
    """Heavy top-level packages in sys.modules after ``statement``, in a fresh interpreter."""
    probe = (
        f"import sys\n{statement}\n"
        "import json\n"
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r})))"
    )
    output = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    return list(json.loads(output.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "statement",
    [
        "import zorder",
        "import zorder.curves",
        "import zorder.skipping",
        "import zorder.stats",
        "import zorder.errors",
        "import zorder; zorder.interleave_bits([3, 6], 3); zorder.ZorderError",
    ],
)
def test_pure_imports_load_nothing_heavy(statement: str) -> None:
    assert loaded_after(statement) == []


def test_the_api_still_loads_on_first_use() -> None:
    assert "pyspark" in loaded_after("import zorder; zorder.write")


def test_every_public_name_resolves() -> None:
    import zorder

    missing = [name for name in zorder.__all__ if not hasattr(zorder, name)]
    assert missing == []
    assert set(zorder.__all__) <= set(dir(zorder))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        zorder.nope  # noqa: B018
