"""Bounded-batch, idempotent commits of build results into the Lance tables.

Decoded rows are buffered and committed when the buffer holds ``batch_items`` items,
``batch_bytes`` bytes of frames, or has waited ``batch_seconds``. Each commit is one Lance
transaction per table: frames go in with ``merge_insert("cache_key")
.when_not_matched_insert_all()`` (insert if absent, so re-running a batch adds nothing),
failures with an upsert on ``failure_id`` (so ``attempts`` grows on a retry). Lance makes
a commit visible atomically: a crash loses at most the uncommitted buffer and never leaves
a partial row.

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

import pyarrow as pa

from videorl_kit.store.schema import (
    FAILURES_SCHEMA,
    FAILURES_TABLE,
    FRAMES_SCHEMA,
    FRAMES_TABLE,
)
from videorl_kit.store.tables import StoreTables

DEFAULT_BATCH_ITEMS = 16
DEFAULT_BATCH_BYTES = 256 * 1024 * 1024
DEFAULT_BATCH_SECONDS = 30.0


@dataclass(frozen=True)
class CommitEvent:
    """Reported after each commit (for progress displays and tests)."""

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


class BatchCommitter:
    """Buffers frames and failure rows; commits them in bounded, idempotent batches."""

    def __init__(
        self,
        tables: StoreTables,
        *,
        batch_items: int = DEFAULT_BATCH_ITEMS,
        batch_bytes: int = DEFAULT_BATCH_BYTES,
        batch_seconds: float = DEFAULT_BATCH_SECONDS,
        on_commit: Callable[[CommitEvent], None] | None = None,
    ):
        self.tables = tables
        self.batch_items = max(1, batch_items)
        self.batch_bytes = batch_bytes
        self.batch_seconds = batch_seconds
        self.on_commit = on_commit
        self._frames: dict[str, dict[str, Any]] = {}
        self._failures: dict[str, dict[str, Any]] = {}
        self._resolved: set[str] = set()
        self._bytes = 0
        self._since = time.monotonic()
        self.n_commits = 0
        self.frames_inserted = 0
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
        """Commit everything buffered (no new table version when nothing is buffered)."""
        now = datetime.now(UTC)
        frames_rows = failure_rows = 0
        if self._frames:
            rows = [{**row, "created_at": now} for row in self._frames.values()]
            table = pa.Table.from_pylist(rows, schema=FRAMES_SCHEMA)
            dataset = self.tables.table(FRAMES_TABLE)
            result = dataset.merge_insert("cache_key").when_not_matched_insert_all().execute(table)
            frames_rows = int(result.get("num_inserted_rows", 0))
            self.frames_inserted += frames_rows
            self.bytes_committed += self._bytes
        if self._failures:
            table = pa.Table.from_pylist(list(self._failures.values()), schema=FAILURES_SCHEMA)
            dataset = self.tables.table(FAILURES_TABLE)
            (
                dataset.merge_insert("failure_id")
                .when_matched_update_all()
                .when_not_matched_insert_all()
                .execute(table)
            )
            failure_rows = len(self._failures)
        if self._resolved:
            self.tables.table(FAILURES_TABLE).delete(sql_in("failure_id", sorted(self._resolved)))
        committed = bool(self._frames or self._failures or self._resolved)
        self._frames.clear()
        self._failures.clear()
        self._resolved.clear()
        self._bytes = 0
        self._since = time.monotonic()
        if committed:
            self.n_commits += 1
            if self.on_commit is not None:
                version = int(self.tables.table(FRAMES_TABLE).version)
                self.on_commit(CommitEvent(frames_rows, failure_rows, version))
