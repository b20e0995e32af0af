"""Whether a commit reached the table's log, found out when deltalake's call raised.

deltalake may raise after it wrote the log entry (a storage error, a
failing post-commit step, an interrupt): the commit is then looked for in
the versions made since the one it was made on (:class:`Watched`), by
what it adds or sets (its recognizer). Commits themselves, and what a run's
files become on each outcome, are in :mod:`zorder.table.delta.commit`.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from zorder.table.clustering import CommitClustering
from zorder.table.runs import WrittenFile
from zorder.table.storage import Storage

__all__ = ["CommitAttempt", "Recognizer", "Watched", "adding", "setting"]

_log = logging.getLogger(__name__)


@dataclass
class CommitAttempt:
    """What is known of whether one commit reached the table's log.

    ``committed`` is False until deltalake is asked to commit (nothing in the
    log can reference the files yet), None while it is and whenever its
    outcome could not be found out, True once the log holds the commit;
    ``version`` is the version it became, when known.
    """

    committed: bool | None = False
    version: int | None = None


# Given one version's actions: whether they are the commit looked for.
Recognizer = Callable[[Sequence[Mapping[str, Any]]], bool]


@dataclass(frozen=True)
class Watched:
    """One commit, watched: each deltalake call that may make it records its outcome in
    ``attempt``, read from the versions after ``since`` (all, for a new table) when the
    call raised."""

    attempt: CommitAttempt
    storage: Storage
    since: int | None
    ours: Recognizer

    @property
    def uri(self) -> str:
        return self.storage.uri

    @contextlib.contextmanager
    def call(self) -> Iterator[None]:
        """Around the call. It returned: committed. It raised: if the log holds the commit, it
        stands (an error is logged and swallowed, the caller going on as after the commit;
        an interrupt is raised on); if not, nothing was committed; if the log cannot be
        read, the outcome stays unknown. Either of the last two raises the call's error."""
        attempt = self.attempt
        attempt.committed = None
        try:
            yield
        except BaseException as error:
            unknown = False
            try:
                found = self.find()
            except Exception as unreadable:
                unknown = True
                error.add_note(f"the log of {self.uri} could not be read ({unreadable})")
            if unknown:
                raise
            if found is None:
                attempt.committed = False
                raise
            attempt.committed, attempt.version = True, found
            if not isinstance(error, Exception):
                raise
            _log.warning(
                "deltalake raised %s (%s) after it committed version %d of %s; the commit stands",
                type(error).__name__,
                error,
                found,
                self.uri,
            )
            return
        attempt.committed = True

    def find(self) -> int | None:
        """The first version after ``since`` that is the commit; None when none in the log
        is. Raises when the log cannot be read."""
        import pyarrow.fs as pafs

        filesystem, root = self.storage.filesystem()
        version = 0 if self.since is None else self.since + 1
        while True:
            path = f"{root.rstrip('/')}/_delta_log/{version:020d}.json"
            if filesystem.get_file_info(path).type == pafs.FileType.NotFound:
                return None  # versions are consecutive: there is none after it either
            with filesystem.open_input_stream(path) as stream:
                lines = stream.read().decode().splitlines()
            if self.ours([json.loads(line) for line in lines if line.strip()]):
                return version
            version += 1

    def version(self, read: Callable[[], int] | int) -> int:
        """The version the commit became: as found in the log after an error, else ``read``
        (or what it reads)."""
        found = self.attempt.version
        if found is None:
            found = read if isinstance(read, int) else read()
        self.attempt.version = found
        return found


def adding(files: Sequence[WrittenFile], clustering: CommitClustering | None) -> Recognizer:
    """Recognizes the commit that adds any of ``files`` or records the run's ``txn``."""
    paths = {f.path for f in files}
    transaction = clustering.run.transaction_id if clustering is not None else None

    def ours(actions: Sequence[Mapping[str, Any]]) -> bool:
        for action in actions:
            add, txn = action.get("add"), action.get("txn")
            if isinstance(add, dict) and unquote(str(add.get("path"))) in paths:
                return True
            if transaction and isinstance(txn, dict) and txn.get("appId") == transaction:
                return True
        return False

    return ours


def setting(properties: Mapping[str, str]) -> Recognizer:
    """Recognizes the commit whose metadata sets ``properties``."""

    def ours(actions: Sequence[Mapping[str, Any]]) -> bool:
        for action in actions:
            metadata = action.get("metaData")
            if isinstance(metadata, dict):
                configuration = metadata.get("configuration") or {}
                if all(configuration.get(k) == v for k, v in properties.items()):
                    return True
        return False

    return ours
