"""The delta-rs contender of :mod:`zorder.bench`, run in a child process of its own.

``python -m zorder.bench_delta_rs SOURCE DEST FILES`` ingests the Parquet rows
at SOURCE into a new Delta table at DEST with delta-rs, Z-orders it on the
four network columns into about FILES files, and prints one JSON line with
the seconds of each step. Its own process, so that its peak memory is its own.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence

__all__ = ["z_order_with_delta_rs"]


def z_order_with_delta_rs(source: str, dest: str, files: int) -> dict[str, float]:
    """Ingest ``source``'s Parquet rows with delta-rs, then ``optimize.z_order`` them."""
    import pyarrow.dataset as ds
    from deltalake import DeltaTable, write_deltalake

    from zorder.demo import NETWORK_COLUMNS

    dataset = ds.dataset(source, format="parquet")
    started = time.perf_counter()
    write_deltalake(dest, dataset.to_table())
    ingest_s = time.perf_counter() - started
    table = DeltaTable(dest)
    target = max(1, sum(os.path.getsize(name) for name in dataset.files) // files)
    started = time.perf_counter()
    table.optimize.z_order(list(NETWORK_COLUMNS), target_size=target)
    return {"ingest_s": ingest_s, "seconds": time.perf_counter() - started}


def _main(argv: Sequence[str]) -> None:
    if len(argv) != 3:
        raise SystemExit("usage: python -m zorder.bench_delta_rs SOURCE DEST FILES")
    print(json.dumps(z_order_with_delta_rs(argv[0], argv[1], int(argv[2]))))


if __name__ == "__main__":
    _main(sys.argv[1:])
