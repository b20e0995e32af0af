"""The in-process engine beside :mod:`zorder.spark`: a snapshot's files read with pyarrow
and DuckDB, deletion vectors and column mapping applied, rows filtered with Spark's meaning.

- :mod:`~zorder.arrow.files`: one file's rows, or many through DuckDB with a prefilter;
- :mod:`~zorder.arrow.rows`: a planned scan's matching rows (:func:`read_rows`);
- :mod:`~zorder.arrow.sample`: a small optimize's sample, drawn without a Spark job;
- :mod:`~zorder.arrow.sources`: a write's input at a path, described and read here;
- :mod:`~zorder.arrow.engine`: a write or an optimize run in this process
  (:class:`~zorder.arrow.engine.ArrowRun`), laid out (:mod:`~zorder.arrow.layout`)
  and written (:mod:`~zorder.arrow.writes`) as Spark's engine would.
"""

from zorder.arrow.rows import read_rows

__all__ = ["read_rows"]
