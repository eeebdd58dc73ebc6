"""``trajectories export``: the store's trajectories as one Parquet file, for use elsewhere.

Each row is a trajectory joined with its sample: the rendered prompt (and system prompt), the
question, gold answer, options and problem type next to the response, its rewards (the
verifier's details as JSON text), the model, token ids with their tokenizer, behaviour
log-probs, source and time. The file loads with ``datasets.load_dataset("parquet",
data_files=FILE)`` and polars / pandas / pyarrow. Filters: ``min_reward`` (graded trajectories
whose overall reward is at least this), task ids and source globs.

Example:
    >>> import tempfile, pathlib, pyarrow.parquet as pq
    >>> from videorl_kit.store.tables import StoreTables
    >>> from videorl_kit.store.trajectories import append_trajectories
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> tables = StoreTables.create(folder / "store")
    >>> _ = append_trajectories(tables, [
    ...     {"trajectory_id": f"t{i}", "sample_id": "s", "task_id": "count", "response": "3",
    ...      "reward_overall": i / 2, "reward_status": "ok", "source": "curated"}
    ...     for i in range(3)])
    >>> export_trajectories(folder / "store", folder / "out.parquet", min_reward=0.5).n_rows
    2
    >>> pq.read_table(folder / "out.parquet").column("reward_overall").to_pylist()
    [0.5, 1.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from videorl_kit.core.errors import UserError
from videorl_kit.store.schema import SAMPLES_TABLE
from videorl_kit.store.tables import StoreTables
from videorl_kit.train.offline.stats import scan_trajectories

SAMPLE_COLUMNS = ("prompt", "system_prompt", "question", "answer", "options", "problem_type")
"""Columns of the sample joined onto each exported trajectory."""


@dataclass(frozen=True)
class ExportReport:
    """What an export wrote."""

    out: str
    n_rows: int
    n_tasks: int

    def as_dict(self) -> dict[str, object]:
        """Plain data for ``--json``."""
        return dict(vars(self))


def export_trajectories(
    store: str | Path,
    out: str | Path,
    *,
    min_reward: float | None = None,
    tasks: Sequence[str] = (),
    sources: Sequence[str] = (),
) -> ExportReport:
    """Write the selected trajectories, joined with their samples, to ``out`` (Parquet)."""
    import polars as pl

    out = Path(out)
    if out.suffix.lower() != ".parquet":
        raise UserError(f"--out {out}: the export is a .parquet file")
    frame = scan_trajectories(store, tasks=tasks, sources=sources)
    if min_reward is not None:
        frame = frame.filter(
            (pl.col("reward_status") == "ok") & (pl.col("reward_overall") >= min_reward)
        )
    samples = pl.scan_pyarrow_dataset(StoreTables.open(store).table(SAMPLES_TABLE)).select(
        "task_id", "sample_id", *SAMPLE_COLUMNS
    )
    joined = (
        frame.drop("cache_schema_version")
        .join(samples, on=["task_id", "sample_id"], how="left")
        .sort("task_id", "sample_id", "created_at", "trajectory_id")
        .collect()
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.partial")
    joined.write_parquet(partial)
    partial.replace(out)  # a reader never sees half a file
    return ExportReport(str(out), joined.height, joined["task_id"].n_unique())
