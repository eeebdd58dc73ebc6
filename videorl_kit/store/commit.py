"""The one way a build commits to the Lance tables: bounded, idempotent, recorded.

Every row a build writes goes through one :class:`BatchCommitter`, whichever engine decoded
it:

* **Rows** (the local engine's frames rows, every engine's failures) are buffered and
  committed when the buffer holds ``batch_items`` items, ``batch_bytes`` bytes of frames, or
  has waited ``batch_seconds``. Each commit is one Lance transaction per table: frames go in
  with ``merge_insert("cache_key").when_not_matched_insert_all()`` (insert if absent, so
  re-running a batch adds nothing; ``cache repair`` builds with ``replace_frames=True`` and
  overwrites the damaged row of a key), failures with an upsert on ``failure_id`` (so
  ``attempts`` grows on a retry). Frames rows and failures named for removal
  (:meth:`BatchCommitter.remove_frames`, :meth:`BatchCommitter.resolve_failure`) are deleted
  in the same commit.
* **Fragments** written elsewhere (the Ray engine's workers write the frames data files) are
  committed with :meth:`BatchCommitter.commit_fragments`: one ``Append`` transaction, after
  which the duplicate keys it may have added (another builder committed the same key
  meanwhile) are settled at once, keeping the earliest row (:func:`settle_keys`).
* Every commit is made under the store's write lock (:mod:`videorl_kit.store.lock`): two
  builds of one store decode side by side and take turns to commit, and each commit re-reads
  the table, so a key the other build committed first is not inserted again.
* After **every** commit the store's state file records the tables' new versions
  (:mod:`videorl_kit.store.integrity`), so a manifest lost later is noticed, and
  ``on_commit`` hears of it (:class:`CommitEvent`).

Lance makes a commit visible atomically: a crash loses at most the uncommitted buffer (or
chunk) and never leaves a partial row.

Example:
    >>> import tempfile
    >>> from videorl_kit.store.tables import StoreTables
    >>> committer = BatchCommitter(StoreTables.create(tempfile.mkdtemp()), batch_items=2)
    >>> committer.flush()
    >>> committer.n_commits
    0
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import lance
import pyarrow as pa

from videorl_kit.store.defaults import (
    DEFAULT_BATCH_BYTES,
    DEFAULT_BATCH_ITEMS,
    DEFAULT_BATCH_SECONDS,
)
from videorl_kit.store.lock import retry_conflicts, write_lock
from videorl_kit.store.schema import (
    FAILURES_SCHEMA,
    FAILURES_TABLE,
    FRAMES_SCHEMA,
    FRAMES_TABLE,
)
from videorl_kit.store.tables import StoreTables


@dataclass(frozen=True)
class CommitEvent:
    """Reported after each commit (for progress displays and tests): the frames rows it
    added (net of settled duplicates), the failure rows it wrote, the frames-table version
    it made."""

    frames_rows: int
    failure_rows: int
    frames_version: int


def sql_quote(value: str) -> str:
    """A SQL string literal for Lance filters.

    Example:
        >>> sql_quote("it's")
        "'it''s'"
    """
    return "'" + value.replace("'", "''") + "'"


def sql_in(column: str, values: list[str]) -> str:
    """``column IN ('a', 'b')`` for Lance ``delete``/``filter`` expressions.

    Example:
        >>> sql_in("cache_key", ["a", "b"])
        "cache_key IN ('a', 'b')"
    """
    return f"{column} IN ({', '.join(sql_quote(v) for v in values)})"


def settle_keys(frames_uri: str, keys: list[str] | None = None) -> tuple[set[str], int]:
    """Keep one row per cache key of ``keys`` (None: every key); return (missing keys, removed).

    A key with several rows keeps the one with the lowest row address, i.e. the row
    committed first (Lance numbers new fragments upwards), whichever builder wrote it; the
    other copies are deleted in one transaction. Rows of one key are the same decode of
    the same content, so which copy stays does not change what readers get.

    Example:
        >>> import tempfile
        >>> store = StoreTables.create(tempfile.mkdtemp())
        >>> settle_keys(store.uri("frames"), ["k1"])
        ({'k1'}, 0)
    """
    if keys is not None and not keys:
        return set(), 0
    dataset = lance.dataset(frames_uri)
    where = sql_in("cache_key", sorted(set(keys))) if keys else None
    found = dataset.to_table(columns=["cache_key"], filter=where, with_row_address=True)
    addresses: dict[str, list[int]] = {}
    for key, address in zip(
        found.column("cache_key").to_pylist(), found.column("_rowaddr").to_pylist(), strict=True
    ):
        addresses.setdefault(key, []).append(int(address))
    missing = set(keys or ()) - set(addresses)
    doubled = sorted(key for key, found_at in addresses.items() if len(found_at) > 1)
    later = sorted(a for key in doubled for a in sorted(addresses[key])[1:])
    if later:
        dataset.delete(
            f"{sql_in('cache_key', doubled)} AND _rowaddr IN ({', '.join(map(str, later))})"
        )
    return missing, len(later)


class BatchCommitter:
    """Commits a build's rows and fragments (see the module notes) and counts what it did."""

    def __init__(
        self,
        tables: StoreTables,
        *,
        batch_items: int = DEFAULT_BATCH_ITEMS,
        batch_bytes: int = DEFAULT_BATCH_BYTES,
        batch_seconds: float = DEFAULT_BATCH_SECONDS,
        on_commit: Callable[[CommitEvent], None] | None = None,
        replace_frames: bool = False,
    ):
        self.tables = tables
        self.batch_items = max(1, batch_items)
        self.batch_bytes = batch_bytes
        self.batch_seconds = batch_seconds
        self.on_commit = on_commit
        self.replace_frames = replace_frames
        self._frames: dict[str, dict[str, Any]] = {}
        self._removed_frames: set[str] = set()
        self._failures: dict[str, dict[str, Any]] = {}
        self._resolved: set[str] = set()
        self._bytes = 0
        self._since = time.monotonic()
        self.n_commits = 0
        self.bytes_committed = 0

    # -- buffering ---------------------------------------------------------------------------
    def add_frames(self, row: dict[str, Any]) -> None:
        """Buffer one frames row (``created_at`` is filled at commit time)."""
        if row["cache_key"] not in self._frames:
            self._frames[row["cache_key"]] = row
            self._bytes += len(row["frames"])
        self.maybe_commit()

    def add_failure(self, row: dict[str, Any]) -> None:
        """Buffer one failures row (replaces any buffered row with the same ``failure_id``)."""
        self._failures[row["failure_id"]] = row
        self._resolved.discard(row["failure_id"])
        self.maybe_commit()

    def resolve_failure(self, failure_id: str) -> None:
        """Delete failure ``failure_id`` with the next commit (its item is now cached)."""
        self._resolved.add(failure_id)
        self._failures.pop(failure_id, None)

    def remove_frames(self, cache_key: str) -> None:
        """Delete the frames row of ``cache_key`` with the next commit (repair removes it)."""
        self._removed_frames.add(cache_key)
        self._frames.pop(cache_key, None)

    @property
    def buffered(self) -> int:
        """Items waiting for the next commit."""
        return len(self._frames) + len(self._failures)

    def maybe_commit(self) -> bool:
        """Commit if the buffer reached its item, byte or time bound; True if it committed."""
        due = (
            self.buffered >= self.batch_items
            or self._bytes >= self.batch_bytes
            or (self.buffered and time.monotonic() - self._since >= self.batch_seconds)
        )
        if due:
            self.flush()
        return bool(due)

    # -- committing --------------------------------------------------------------------------
    def flush(self) -> None:
        """Commit everything buffered (no new table version when nothing is buffered).

        Commits under the store's write lock (:mod:`videorl_kit.store.lock`), so two builds
        of one store take turns here (and only here); each Lance operation re-reads its
        table, so a row the other build committed meanwhile is not inserted twice.
        """
        committed = bool(self._frames or self._failures or self._resolved or self._removed_frames)
        if not committed:
            self._since = time.monotonic()
            return
        with write_lock(self.tables.root):
            frames_rows, failure_rows = self._write(datetime.now(UTC))
            self._frames.clear()
            self._removed_frames.clear()
            self._failures.clear()
            self._resolved.clear()
            self._bytes = 0
            self._since = time.monotonic()
            self._committed(frames_rows, failure_rows)

    def _write(self, now: datetime) -> tuple[int, int]:
        """The Lance commits of :meth:`flush`; returns (frames rows, failure rows) written."""
        frames_rows = failure_rows = 0
        if self._removed_frames:
            where = sql_in("cache_key", sorted(self._removed_frames))
            retry_conflicts(lambda: self.tables.table(FRAMES_TABLE).delete(where))
        if self._frames:
            rows = [{**row, "created_at": now} for row in self._frames.values()]
            table = pa.Table.from_pylist(rows, schema=FRAMES_SCHEMA)

            def merge_frames() -> dict[str, Any]:
                merge = self.tables.table(FRAMES_TABLE).merge_insert("cache_key")
                if self.replace_frames:
                    merge = merge.when_matched_update_all()
                return dict(merge.when_not_matched_insert_all().execute(table))

            result = retry_conflicts(merge_frames)
            frames_rows = int(
                result.get("num_inserted_rows", 0) + result.get("num_updated_rows", 0)
            )
            self.bytes_committed += self._bytes
        if self._failures:
            failures = pa.Table.from_pylist(list(self._failures.values()), schema=FAILURES_SCHEMA)
            retry_conflicts(
                lambda: (
                    self.tables.table(FAILURES_TABLE)
                    .merge_insert("failure_id")
                    .when_matched_update_all()
                    .when_not_matched_insert_all()
                    .execute(failures)
                )
            )
            failure_rows = len(self._failures)
        if self._resolved:
            where = sql_in("failure_id", sorted(self._resolved))
            retry_conflicts(lambda: self.tables.table(FAILURES_TABLE).delete(where))
        return frames_rows, failure_rows

    def commit_fragments(
        self, fragments: list[Any], keys: list[str], nbytes: dict[str, int]
    ) -> tuple[set[str], int]:
        """Append frames ``fragments`` written elsewhere (one ``Append`` commit), then settle
        their ``keys``; return (keys not in the table afterwards, duplicate rows removed).

        ``nbytes`` gives the bytes of each key's frames cell (for :attr:`bytes_committed`).
        """
        if not fragments:
            return set(keys), 0
        uri = self.tables.uri(FRAMES_TABLE)
        operation = lance.LanceOperation.Append(fragments)

        def append() -> int:
            read_version = self.tables.table(FRAMES_TABLE).version
            return int(lance.LanceDataset.commit(uri, operation, read_version=read_version).version)

        with write_lock(self.tables.root):
            version = retry_conflicts(append)
            missing, removed = retry_conflicts(lambda: settle_keys(uri, keys))
            present = [key for key in keys if key not in missing]
            self.bytes_committed += sum(nbytes.get(key, 0) for key in present)
            self._committed(len(present) - removed, 0, version)
        return missing, removed

    def settle_duplicates(self) -> int:
        """Delete every later copy of a cache key in the frames table; return how many.

        Only a build killed between an ``Append`` and its settling leaves copies. Not a
        build commit: it is not counted in :attr:`n_commits`.
        """
        with write_lock(self.tables.root):
            removed = retry_conflicts(lambda: settle_keys(self.tables.uri(FRAMES_TABLE), None))[1]
            if removed:
                self.tables.record_versions()
        return removed

    def _committed(
        self, frames_rows: int, failure_rows: int, frames_version: int | None = None
    ) -> None:
        self.n_commits += 1
        self.tables.record_versions()  # a later open notices if this version goes missing
        if self.on_commit is not None:
            if frames_version is None:
                frames_version = int(self.tables.table(FRAMES_TABLE).version)
            self.on_commit(CommitEvent(frames_rows, failure_rows, frames_version))
