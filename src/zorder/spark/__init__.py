"""Spark layer: sessions, key Column builders and the layout transform."""

from __future__ import annotations

from zorder.spark.session import local_session, remote_session

__all__ = ["local_session", "remote_session"]
