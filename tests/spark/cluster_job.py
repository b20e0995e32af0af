"""write, optimize and read on a real multi-process cluster; prints one JSON line.

``python -m tests.spark.cluster_job PATH``: a ``local-cluster[2,1,1024]``
master, so two executor JVMs (each with its own Python workers) do the work,
all bound to 127.0.0.1. Anything that relied on driver-local state (a
variable set on the driver, a file only the driver can see) would fail here.
"""

from __future__ import annotations

import json
import sys

import zorder
from tests.spark.jvm import executors, local_cluster_session
from zorder.demo import network_frame


def main(path: str) -> None:
    spark = local_cluster_session("zorder-local-cluster")
    df = network_frame(spark, 20_000, seed=11)
    by = ["src_ip", "dst_ip", "src_port", "dst_port"]
    written = zorder.write(df, path, by=by, num_files=8)
    # In Spark, on the cluster: an optimize this small would otherwise run in process.
    optimized = zorder.optimize(spark, path, by=by, curve="hilbert", num_files=6, engine="spark")
    ip = df.select("src_ip").first()[0]  # type: ignore[index]
    where = f"src_ip = '{ip}'"
    result = {
        "executors": executors(spark),
        "written_files": written.files_added,
        "optimized_files": optimized.files_added,
        "rows": zorder.read(spark, path).count(),
        "matches": zorder.read(spark, path, where).count(),
        "expected_matches": df.where(where).count(),
        "files_scanned": zorder.explain(path, where).files_scanned,
    }
    print(json.dumps(result), flush=True)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
