"""Tables by name: a catalog identifier resolved through the session's catalog.

What is a name (:func:`is_table_name`) is decided without Spark: a string with
a URI scheme (``s3://``, ``file:``), a ``/``, or naming an existing directory is
a path; anything else that an identifier spells is a catalog identifier
(``events``, ``db.events``, ``spark_catalog.db.events``, parts in backticks as
Spark writes them), and other text a relative path. The rest
asks the session: ``DESCRIBE TABLE EXTENDED`` gives a table's provider and
location, whichever catalog serves it (Delta's ``DeltaCatalog``, a Hive
metastore, Glue or Unity through their connectors); a new table is registered
with ``CREATE TABLE ... USING delta LOCATION``, which needs Delta's catalog.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from zorder.errors import InvalidArgumentError, NotADeltaTableError, UnsupportedTableError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["CatalogTable", "is_table_name", "lookup", "new_table_location", "register"]

_PART = r"(?:`(?:[^`]|``)+`|[A-Za-z_][A-Za-z0-9_]*)"
_NAME = re.compile(rf"{_PART}(?:\.{_PART}){{0,2}}")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"


def is_table_name(location: str | os.PathLike[str]) -> bool:
    """Whether ``location`` names a catalog table rather than a path (see the module)."""
    if not isinstance(location, str):
        return False
    if _SCHEME.match(location) or "/" in location or "\\" in location:
        return False
    # Text no identifier spells (brk[x], a%41) is a relative path, checked as paths are.
    return _NAME.fullmatch(location) is not None and not os.path.isdir(location)


def _check_name(name: str) -> None:
    if not _NAME.fullmatch(name):
        raise InvalidArgumentError(
            f"{name!r} is neither a path (it has no '/' or scheme and no such directory "
            "exists) nor a table name: a name is one to three identifiers joined by dots "
            "(events, db.events, spark_catalog.db.events; `odd name` in backticks); for a "
            f"relative path write ./{name}"
        )


@dataclass(frozen=True)
class CatalogTable:
    """A table the session's catalog knows: its name as given, provider and location."""

    name: str
    provider: str
    location: str
    kind: str  # MANAGED or EXTERNAL, as the catalog says


def lookup(spark: SparkSession | None, name: str) -> CatalogTable | None:
    """The catalog's table ``name`` (None where the catalog has none by that name), a Delta
    table; UnsupportedTableError for another provider, InvalidArgumentError without a
    session or for text that is not a name."""
    _check_name(name)
    if spark is None:
        raise InvalidArgumentError(
            f"{name!r} names a catalog table (it is no path: no '/', no scheme, no such "
            "directory), which needs a Spark session to resolve: pass spark= (CLI: --master "
            f"and --conf for the catalog), or give a path such as ./{name}"
        )
    if not spark.catalog.tableExists(name):
        return None
    rows = spark.sql(f"DESCRIBE TABLE EXTENDED {name}").collect()
    details = {str(r[0]).strip(): str(r[1] or "").strip() for r in rows if r[0]}
    provider = details.get("Provider", "").lower()
    location = details.get("Location", "")
    if provider != "delta":
        raise UnsupportedTableError(
            f"table {name} in the session's catalog is a {provider or 'catalog'} table"
            f"{f' at {location}' if location else ''}, not a Delta table; zorder works on "
            "Delta tables (USING delta)"
        )
    if not location:
        raise NotADeltaTableError(f"the session's catalog gives table {name} no location")
    return CatalogTable(name, provider, location, details.get("Type", "").upper())


def new_table_location(spark: SparkSession, name: str, location: str | None) -> str:
    """Where a new table ``name`` is written: ``location``, else where the catalog puts a
    managed table of that name (its database's location, then the table's name). Refused
    before anything is written where the session cannot register a Delta table."""
    _check_name(name)
    catalog = str(spark.conf.get("spark.sql.catalog.spark_catalog", "") or "")
    if catalog != DELTA_CATALOG:
        raise InvalidArgumentError(
            f"cannot create table {name}: the session's catalog is not Delta's "
            f"(spark.sql.catalog.spark_catalog={catalog or 'unset'}; set it to "
            f"{DELTA_CATALOG} with spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension"
            "), or write to a path"
        )
    if location is not None:
        return location
    parts: list[str] = [str(p).strip("`") for p in re.findall(_PART, name)]
    if len(parts) == 3:
        if parts[0] != "spark_catalog":
            raise InvalidArgumentError(
                f"cannot create table {name} without location=: only the session catalog "
                "(spark_catalog) gives a managed table's location here"
            )
        parts = parts[1:]
    database = parts[0] if len(parts) == 2 else spark.catalog.currentDatabase()
    rows = spark.sql(f"DESCRIBE DATABASE EXTENDED `{database}`").collect()
    details = {str(r[0]).strip(): str(r[1] or "").strip() for r in rows}
    root = details.get("Location") or details.get("Database Location") or ""
    if not root:
        raise InvalidArgumentError(
            f"the catalog gives database {database} no location: pass location= for {name}"
        )
    return root.rstrip("/") + "/" + parts[-1].lower()


def register(spark: SparkSession, name: str, location: str) -> None:
    """Record the Delta table written at ``location`` as ``name`` in the session's catalog."""
    quoted = location.replace("\\", "\\\\").replace("'", "\\'")
    spark.sql(f"CREATE TABLE IF NOT EXISTS {name} USING delta LOCATION '{quoted}'")
