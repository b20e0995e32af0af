"""Delta Lake tables through the ``deltalake`` package: the log is never hand-written.

- :mod:`~zorder.table.delta.snapshot`: a pinned version, from the log alone (no data
  read); :mod:`~zorder.table.delta.versions` chooses it (time travel);
  :mod:`~zorder.table.delta.actions` reads its add actions,
  :mod:`~zorder.table.delta.vectors` its deletion vectors;
  :mod:`~zorder.table.delta.schema` holds its schema's forms.
- :mod:`~zorder.table.delta.commit`: committing a run's files;
  :mod:`~zorder.table.delta.conflicts`: a rewrite checked against the commits since its
  snapshot; :mod:`~zorder.table.delta.outcome`: whether a commit reached the log;
  :mod:`~zorder.table.delta.transactions`: a writer's own ``txn``.
- :mod:`~zorder.table.delta.evolution`: new nullable columns added before an append's
  data (``schema_mode="merge"``), in a commit of their own.
- :mod:`~zorder.table.delta.maintenance`: vacuum, the commits the log holds;
  :mod:`~zorder.table.delta.restore`: a restore, checked, then committed by deltalake;
  :mod:`~zorder.table.delta.retention`: how long the table keeps old files.
- :mod:`~zorder.table.delta.features`, :mod:`~zorder.table.delta.mapping`,
  :mod:`~zorder.table.delta.timestamps`: pure rules over the log's contents (protocol
  features, column mapping, timestamp partition text).

Delta's ``PROTOCOL.md`` is the contract; the facade :mod:`zorder.table` exports what
the layers above share.
"""
