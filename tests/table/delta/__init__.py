"""Tests of the Delta format's own part of the table layer (zorder.table.delta)."""
