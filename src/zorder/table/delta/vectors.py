"""Deletion vectors, as deltalake reads them: each file's deleted rows.

deltalake reads the vectors (inline, relative and absolute storage alike)
into keep masks; only tables with the ``deletionVectors`` reader feature
can hold any.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import unquote

import numpy as np
import numpy.typing as npt
import pyarrow as pa
from deltalake import DeltaTable
from deltalake.exceptions import DeltaError

from zorder.errors import UnsupportedTableError
from zorder.table.delta.features import DELETION_VECTORS

__all__ = ["deleted_positions"]


def deleted_positions(
    table: DeltaTable, actions: pa.Table, uri: str, version: int
) -> Mapping[str, npt.NDArray[np.int64]]:
    """Per file of ``actions`` (version ``version`` of the table at ``uri``) with a deletion
    vector, by its decoded path: its deleted rows' positions."""
    if DELETION_VECTORS not in (table.protocol().reader_features or ()):
        return {}
    try:
        vectors = pa.RecordBatchReader.from_stream(table.deletion_vectors()).read_all()
    except DeltaError as error:
        raise UnsupportedTableError(
            f"table {uri} (version {version}): its deletion vectors cannot be "
            f"read ({error}); nothing was read"
        ) from error
    if vectors.num_rows == 0:
        return {}
    masks = vectors.column("selection_vector").combine_chunks()
    kept = masks.values.to_numpy(zero_copy_only=False)
    bounds = masks.offsets.to_numpy()
    root = table.table_uri.rstrip("/") + "/"
    paths = {unquote(str(p)) for p in actions.column("path").to_pylist()}
    deleted: dict[str, npt.NDArray[np.int64]] = {}
    for index, file_uri in enumerate(vectors.column("filepath").to_pylist()):
        path = unquote(file_uri[len(root) :] if file_uri.startswith(root) else file_uri)
        if path not in paths:
            raise UnsupportedTableError(
                f"table {uri} (version {version}): deltalake gives a deletion "
                f"vector for {file_uri}, which is no data file of the version; nothing was read"
            )
        mask = kept[bounds[index] : bounds[index + 1]]
        deleted[path] = np.flatnonzero(~mask).astype(np.int64)
    return deleted
