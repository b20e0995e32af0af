"""The run plan both engines execute, in no engine's types.

A ``write`` or an ``optimize`` is planned in :mod:`zorder.api.cluster` into a
:class:`~zorder.plan.runs.RunPlan`: its :class:`~zorder.plan.jobs.ClusterJob` (the
table, the clustering plan, file and row-group sizes, bloom filters, partitions, the
engine chosen by :func:`~zorder.plan.engines.choose_engine`) and its input (the files an
optimize rewrites, a write's rows). An engine, :class:`zorder.spark.engine.SparkRun`
or :class:`zorder.arrow.engine.ArrowRun` (a :class:`~zorder.plan.runs.RunEngine`),
executes it into a run's directory, and :func:`~zorder.plan.runs.execute_and_commit`
commits what either wrote through the one commit path. The phases a run names for the
status line and its timings are :mod:`zorder.plan.progress`; the modes the operations
accept, :mod:`zorder.plan.modes`.

Nothing here loads pyspark: a write's rows may be a DataFrame, named for type checking
only.
"""
