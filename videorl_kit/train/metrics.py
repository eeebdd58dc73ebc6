"""A run's ``metrics.jsonl``: one JSON object per logged step, and what is read back from it.

Every backend appends ``{"step": N, <metric>: value, ...}`` lines through :class:`MetricsLog`
(non-finite numbers become ``null``). Per-task names are ``rewards/<task>/mean`` (the mean
reward of the task's scored completions), ``<task>/accuracy``, ``<task>/format`` (the share
of its graded completions in the required format) and ``<task>/masked`` (the share masked as
unverifiable or error); ``kl``, ``completions/mean_length``, ``loss`` and ``grad_norm`` are
the engine's own.

Example:
    >>> import tempfile, pathlib
    >>> log = MetricsLog(pathlib.Path(tempfile.mkdtemp()) / "metrics.jsonl")
    >>> log.append(1, {"rewards/count/mean": 0.5, "kl": float("nan")})
    >>> read_metrics(log.path)
    [{'step': 1, 'rewards/count/mean': 0.5, 'kl': None}]
    >>> task_summaries(read_metrics(log.path))[0].last_reward
    0.5
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

METRICS_FILE = "metrics.jsonl"
REWARD_PREFIX = "rewards/"


def reward_key(task: str) -> str:
    """The metric name of a task's mean reward.

    Example:
        >>> reward_key("count"), format_key("count")
        ('rewards/count/mean', 'count/format')
    """
    return f"{REWARD_PREFIX}{task}/mean"


def format_key(task: str) -> str:
    """The metric name of a task's format rate."""
    return f"{task}/format"


def accuracy_key(task: str) -> str:
    """The metric name of a task's mean accuracy."""
    return f"{task}/accuracy"


def _plain(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item"):  # numpy / torch scalars
        return _plain(value.item())
    return value


class MetricsLog:
    """Appends logged steps to ``metrics.jsonl`` (line-buffered, safe to read while training)."""

    def __init__(self, path: Path):
        self.path = path

    def append(self, step: int, metrics: Mapping[str, Any]) -> None:
        """Write one line: ``{"step": step, **metrics}``."""
        record = {"step": int(step), **{k: _plain(v) for k, v in metrics.items()}}
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    def truncate_after(self, step: int) -> None:
        """Drop lines logged after ``step`` (a resumed run logs those steps again).

        Example:
            >>> import tempfile, pathlib
            >>> log = MetricsLog(pathlib.Path(tempfile.mkdtemp()) / "m.jsonl")
            >>> for s in (1, 2, 3): log.append(s, {"loss": s})
            >>> log.truncate_after(2); [r["step"] for r in read_metrics(log.path)]
            [1, 2]
        """
        if not self.path.exists():
            return
        kept = [r for r in read_metrics(self.path) if r["step"] <= step]
        self.path.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")


def read_metrics(path: Path) -> list[dict[str, Any]]:
    """Every record of a ``metrics.jsonl`` (a half-written last line is skipped)."""
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: nested too deeply to be a record
            continue
        if isinstance(record, dict) and isinstance(record.get("step"), int):
            records.append(record)
    return records


def task_ids(records: list[dict[str, Any]]) -> list[str]:
    """Tasks with a reward series, in order of first appearance.

    Example:
        >>> task_ids([{"step": 1, "rewards/a/mean": 1, "rewards/a/std": 0, "reward": 1}])
        ['a']
    """
    found: dict[str, None] = {}
    for record in records:
        for key in record:
            if key.startswith(REWARD_PREFIX) and key.endswith("/mean"):
                found.setdefault(key[len(REWARD_PREFIX) : -len("/mean")], None)
    return list(found)


def series(records: list[dict[str, Any]], key: str) -> tuple[list[int], list[float]]:
    """Steps and values of one metric (steps where it is missing or null are left out).

    Example:
        >>> series([{"step": 1, "kl": 0.1}, {"step": 2, "kl": None}, {"step": 3, "kl": 0.3}], "kl")
        ([1, 3], [0.1, 0.3])
    """
    pairs = [(r["step"], float(r[key])) for r in records if r.get(key) is not None]
    return [s for s, _ in pairs], [v for _, v in pairs]


@dataclass(frozen=True)
class TaskSummary:
    """One task's rewards over a run: first and last logged means, the mean over the run."""

    task: str
    n_logged: int
    first_reward: float | None
    last_reward: float | None
    mean_reward: float | None
    mean_format: float | None
    mean_accuracy: float | None


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def task_summaries(records: list[dict[str, Any]]) -> list[TaskSummary]:
    """A :class:`TaskSummary` per task of ``records``."""
    summaries = []
    for task in task_ids(records):
        _, rewards = series(records, reward_key(task))
        summaries.append(
            TaskSummary(
                task=task,
                n_logged=len(rewards),
                first_reward=rewards[0] if rewards else None,
                last_reward=rewards[-1] if rewards else None,
                mean_reward=_mean(rewards),
                mean_format=_mean(series(records, format_key(task))[1]),
                mean_accuracy=_mean(series(records, accuracy_key(task))[1]),
            )
        )
    return summaries
