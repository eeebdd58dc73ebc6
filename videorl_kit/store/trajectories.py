"""Append model responses and their rewards to a store's ``trajectories`` table; read them.

Inserts are idempotent on ``trajectory_id`` (``merge_insert(...).when_not_matched_insert_all``),
so appending the same trajectories twice adds nothing: callers derive the id from what makes
a trajectory unique (for an eval run: the run, the task, the sample and the response).

Example:
    >>> import tempfile
    >>> from videorl_kit.store.tables import StoreTables
    >>> tables = StoreTables.create(tempfile.mkdtemp())
    >>> row = {"trajectory_id": "t1", "sample_id": "s", "task_id": "demo", "response": "B",
    ...        "reward_overall": 1.0, "reward_details": '{"gold": "B"}', "source": "eval:run-1"}
    >>> append_trajectories(tables, [row]), append_trajectories(tables, [row])
    (1, 0)
    >>> [(t["response"], t["reward_details"]) for t in read_trajectories(tables.root)]
    [('B', {'gold': 'B'})]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from videorl_kit.store.commit import sql_in, sql_quote
from videorl_kit.store.lock import retry_conflicts, write_lock
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
    table = pa.Table.from_pylist(filled, schema=TRAJECTORIES_SCHEMA)
    with write_lock(tables.root):  # counted and inserted in one turn of the store's writers
        before = tables.table(TRAJECTORIES_TABLE).count_rows()
        retry_conflicts(
            lambda: (
                tables.table(TRAJECTORIES_TABLE)
                .merge_insert("trajectory_id")
                .when_not_matched_insert_all()
                .execute(table)
            )
        )
        return tables.table(TRAJECTORIES_TABLE).count_rows() - before


def read_trajectories(
    store_dir: str | Path, *, source: str | None = None, task_ids: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """The store's trajectories, as dicts in (task, sample, time) order, ``reward_details``
    parsed; only those of ``source`` (``eval:<run_id>`` for the responses of one eval run) and
    of ``task_ids`` when given.
    """
    conditions = []
    if source is not None:
        conditions.append(f"source = {sql_quote(source)}")
    if task_ids is not None:
        conditions.append(sql_in("task_id", list(task_ids)) if task_ids else "false")
    table = (
        StoreTables.open(store_dir)
        .table(TRAJECTORIES_TABLE)
        .to_table(filter=" AND ".join(conditions) or None)
    )
    rows = sorted(table.to_pylist(), key=lambda r: (r["task_id"], r["sample_id"], r["created_at"]))
    for row in rows:
        if row["reward_details"] is not None:
            row["reward_details"] = json.loads(row["reward_details"])
    return rows
