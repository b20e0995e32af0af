"""JVM options for the tests' short-lived Spark processes (children, a local cluster).

A driver that runs one small job spends most of its CPU starting up; the JIT's
first tier and the serial collector start it sooner (a crash child's optimize:
10.5 s -> 9.1 s). The in-process test session keeps the defaults: there they
made no difference.
"""

QUICK_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
