"""Append model responses and their rewards to a store's ``trajectories`` table.

Inserts are idempotent on ``trajectory_id`` (``merge_insert(...).when_not_matched_insert_all``),
so appending the same trajectories twice adds nothing: callers derive the id from what makes
a trajectory unique (for an eval run: the run, the task, the sample and the response).

Example:
    >>> import tempfile
    >>> from videorl_kit.store.tables import StoreTables
    >>> tables = StoreTables.create(tempfile.mkdtemp())
    >>> row = {"trajectory_id": "t1", "sample_id": "s", "task_id": "demo", "response": "B",
    ...        "reward_overall": 1.0, "source": "eval:run-1"}
    >>> append_trajectories(tables, [row]), append_trajectories(tables, [row])
    (1, 0)
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from videorl_kit.store.schema import CACHE_SCHEMA_VERSION, TRAJECTORIES_SCHEMA, TRAJECTORIES_TABLE
from videorl_kit.store.tables import StoreTables


def append_trajectories(tables: StoreTables, rows: Sequence[dict[str, Any]]) -> int:
    """Insert the rows whose ``trajectory_id`` is new; return how many were inserted.

    Each row needs ``trajectory_id``, ``sample_id``, ``task_id``, ``response`` and ``source``;
    the other columns of the table default to null, ``created_at`` to now.
    """
    if not rows:
        return 0
    now = datetime.now(UTC)
    filled = [
        {name: row.get(name) for name in TRAJECTORIES_SCHEMA.names}
        | {
            "created_at": row.get("created_at") or now,
            "cache_schema_version": CACHE_SCHEMA_VERSION,
        }
        for row in rows
    ]
    dataset = tables.table(TRAJECTORIES_TABLE)
    before = dataset.count_rows()
    table = pa.Table.from_pylist(filled, schema=TRAJECTORIES_SCHEMA)
    dataset.merge_insert("trajectory_id").when_not_matched_insert_all().execute(table)
    return tables.table(TRAJECTORIES_TABLE).count_rows() - before
