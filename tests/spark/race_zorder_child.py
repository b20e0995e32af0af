"""A zorder run to be killed mid-race: ``python -m tests.spark.race_zorder_child OP PATH MOMENT``.

OP is ``append`` (the Parquet files in ``PATH-input-APP`` appended, clustered
by a, b, with the ``txn`` of app id APP given as ``OP=append:APP``) or
``optimize`` (the whole table re-clustered by a, b). Both run in this process
(``engine="arrow"``: no JVM, so the kill lands within a second of the start).
MOMENT says where the run stops for the kill:

- ``before-commit``: prints ``COMMITTING``, then waits instead of committing;
- ``during-commit``: prints ``COMMITTING`` and commits at once (the kill races it);
- ``after-commit``: commits, prints ``COMMITTED``, then waits.

Test code only: the hooks wrap zorder's commit from outside.
"""

from __future__ import annotations

import sys
from unittest.mock import patch

import zorder
import zorder.plan.runs as runs_module
from tests.spark.crash_child import announcing_commit

BY = ["a", "b"]


def main(operation: str, path: str, moment: str) -> None:
    patch.object(runs_module, "commit_files", announcing_commit(moment)).start()
    print("STARTED", flush=True)
    op, _, app = operation.partition(":")
    if op == "append":
        zorder.write(
            f"{path}-input-{app}",
            path,
            by=BY,
            mode="append",
            num_files=2,
            engine="arrow",
            txn_app_id=app,
            txn_version=0,
        )
    else:
        zorder.optimize(None, path, by=BY, num_files=4, full=True, engine="arrow")
    print("DONE", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])
