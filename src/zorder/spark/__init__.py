"""Spark layer: sessions, key Column builders and the layout transform.

``local_session`` and ``remote_session`` load on first use (PEP 562), so that a
module of this layer whose pyspark imports are only for type checking
(:mod:`zorder.spark.progress`) loads without pyspark.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zorder.spark.session import local_session, remote_session

__all__ = ["local_session", "remote_session"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from zorder.spark import session

        return getattr(session, name)
    raise AttributeError(f"module 'zorder.spark' has no attribute {name!r}")
