"""JVM options for the tests' short-lived Spark processes (children, a local cluster).

A driver that runs one small job spends most of its CPU starting up; the JIT's
first tier and the serial collector start it sooner (a crash child's optimize:
10.5 s -> 9.1 s). The in-process test session keeps the defaults: there they
made no difference.
"""

from typing import Any

QUICK_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def local_cluster_session(app_name: str) -> Any:
    """A ``local-cluster[2,1,1024]`` session (two executor JVMs) started quickly."""
    from zorder.spark import local_session

    spark = local_session(
        master="local-cluster[2,1,1024]",
        app_name=app_name,
        conf={
            "spark.executor.memory": "768m",
            "spark.driver.extraJavaOptions": QUICK_JVM_OPTIONS,
            "spark.executor.extraJavaOptions": QUICK_JVM_OPTIONS,
        },
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def executors(spark: Any) -> int:
    """How many executors the session's cluster has (its driver not counted)."""
    return int(spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size()) - 1
