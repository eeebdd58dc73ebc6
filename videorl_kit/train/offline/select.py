"""Which stored trajectories a run may mix into its groups: :class:`OfflinePool`.

:func:`load_pool` reads, with polars over the store, the graded trajectories of the run's tasks
whose source matches ``offline.source`` and whose overall reward is at least
``offline.min_reward``, for samples that are ready in the store, and orders each sample's
candidates by ``offline.select``: ``best`` (highest reward, then newest), ``newest``, or
``random`` (a fresh draw per group, seeded by the run's seed, the step and the group, so a
resumed run draws what an uninterrupted one would). :meth:`OfflinePool.choose` gives a group
its ``k`` distinct candidates (fewer when the sample has fewer).

:func:`store_problems` is the store check of ``validate`` and ``train``: counts per task, an
error when no task has a candidate, and, for ``correction: truncated_is``, an error naming how
many of the trajectories the run could use lack behaviour log-probs.

Example:
    >>> import tempfile
    >>> from videorl_kit.train.offline.section import OfflineSection
    >>> pool = OfflinePool(OfflineSection(source="c", select="random", per_group=2,
    ...                                   correction="none"), {}, {"t": 3})
    >>> pool.choose("t", "s", 2, "0:1:0"), pool.coverage()[0].ready_samples
    ([], 3)
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from videorl_kit.store.samples import STATUS_READY
from videorl_kit.store.schema import SAMPLES_TABLE
from videorl_kit.store.tables import StoreTables
from videorl_kit.train.offline.section import OfflineSection
from videorl_kit.train.offline.stats import scan_trajectories

CANDIDATE_COLUMNS = (
    "trajectory_id",
    "task_id",
    "sample_id",
    "source",
    "response",
    "reward_overall",
    "reward_accuracy",
    "token_ids",
    "tokenizer_id",
    "behaviour_logprobs",
    "policy_id",
    "created_at",
)


@dataclass(frozen=True)
class Candidate:
    """A stored trajectory a group may receive."""

    trajectory_id: str
    task_id: str
    sample_id: str
    source: str
    response: str
    reward_overall: float
    reward_accuracy: float
    token_ids: list[int] | None = None
    tokenizer_id: str | None = None
    behaviour_logprobs: list[float] | None = None
    policy_id: str | None = None
    created_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data (a line of a bundle's ``offline.jsonl``)."""
        return asdict(self)


@dataclass(frozen=True)
class TaskCoverage:
    """What a run's pool holds for one task."""

    task_id: str
    n_trajectories: int
    n_samples: int
    n_samples_full: int
    ready_samples: int
    n_usable: int
    n_usable_without_logprobs: int

    def describe(self, per_group: int) -> str:
        """One line for ``validate`` and ``train``.

        Example:
            >>> print(TaskCoverage("count", 9, 4, 3, 8, 5, 0).describe(2))
            count: 9 trajectories for 4 of 8 ready samples (3 with at least 2)
        """
        return (
            f"{self.task_id}: {self.n_trajectories} trajectories for {self.n_samples} of "
            f"{self.ready_samples} ready samples ({self.n_samples_full} with at least {per_group})"
        )


def _draw_seed(key: str) -> int:
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big")


class OfflinePool:
    """Each (task, sample)'s candidates, in ``select`` order."""

    def __init__(
        self,
        section: OfflineSection,
        candidates: dict[tuple[str, str], list[Candidate]],
        ready: dict[str, int],
    ) -> None:
        self.section = section
        self.by_sample = candidates
        self.ready = ready

    def candidates(self, task_id: str, sample_id: str) -> list[Candidate]:
        """Every candidate of a sample, in ``select`` order."""
        return self.by_sample.get((task_id, sample_id), [])

    def has(self, task_id: str, sample_id: str) -> bool:
        """Whether the sample has at least one candidate."""
        return bool(self.by_sample.get((task_id, sample_id)))

    def choose(self, task_id: str, sample_id: str, k: int, draw: str) -> list[Candidate]:
        """Up to ``k`` distinct candidates for one group; ``draw`` keys a ``random`` draw (the
        kit uses ``"<seed>:<step>:<group>"``, so it is the same after a resume)."""
        found = self.candidates(task_id, sample_id)
        if self.section.select != "random" or len(found) <= k:
            return found[:k]
        rng = random.Random(_draw_seed(f"{draw}:{task_id}:{sample_id}"))
        return rng.sample(found, k)

    def usable(self, task_id: str, sample_id: str) -> list[Candidate]:
        """The candidates a run can ever give this sample (``best`` / ``newest``: the first
        ``per_group``; ``random``: all)."""
        found = self.candidates(task_id, sample_id)
        return found if self.section.select == "random" else found[: self.section.per_group]

    def coverage(self) -> list[TaskCoverage]:
        """A :class:`TaskCoverage` per task of the run, in task order."""
        rows = []
        for task_id, ready in self.ready.items():
            keys = [key for key in self.by_sample if key[0] == task_id]
            usable = [c for key in keys for c in self.usable(*key)]
            rows.append(
                TaskCoverage(
                    task_id=task_id,
                    n_trajectories=sum(len(self.by_sample[key]) for key in keys),
                    n_samples=len(keys),
                    n_samples_full=sum(
                        len(self.by_sample[k]) >= self.section.per_group for k in keys
                    ),
                    ready_samples=ready,
                    n_usable=len(usable),
                    n_usable_without_logprobs=sum(c.behaviour_logprobs is None for c in usable),
                )
            )
        return rows


def _ready_sample_ids(store: str | Path, task_ids: Sequence[str]) -> Any:
    import polars as pl

    dataset = StoreTables.open(store).table(SAMPLES_TABLE)
    return (
        pl.scan_pyarrow_dataset(dataset)
        .filter((pl.col("status") == STATUS_READY) & pl.col("task_id").is_in(list(task_ids)))
        .select("task_id", "sample_id")
        .collect()
    )


def load_pool(store: str | Path, section: OfflineSection, task_ids: Sequence[str]) -> OfflinePool:
    """The run's :class:`OfflinePool` (see the module doc)."""
    import polars as pl

    ready = _ready_sample_ids(store, task_ids)
    frame = scan_trajectories(store, tasks=task_ids, sources=section.source).filter(
        pl.col("reward_status") == "ok"
    )
    if section.min_reward is not None:
        frame = frame.filter(pl.col("reward_overall") >= section.min_reward - 1e-9)
    frame = frame.select(CANDIDATE_COLUMNS).join(
        ready.lazy(), on=["task_id", "sample_id"], how="inner"
    )
    if section.select == "best":
        order = (["reward_overall", "created_at", "trajectory_id"], [True, True, False])
    elif section.select == "newest":
        order = (["created_at", "trajectory_id"], [True, False])
    else:
        order = (["trajectory_id"], [False])
    rows = frame.sort(order[0], descending=order[1]).collect().to_dicts()
    candidates: dict[tuple[str, str], list[Candidate]] = {}
    for row in rows:
        row["created_at"] = None if row["created_at"] is None else row["created_at"].isoformat()
        candidates.setdefault((row["task_id"], row["sample_id"]), []).append(Candidate(**row))
    counts = ready.group_by("task_id").len()
    per_task = dict(zip(counts["task_id"].to_list(), counts["len"].to_list(), strict=True))
    return OfflinePool(section, candidates, {t: per_task.get(t, 0) for t in task_ids})


def store_problems(
    store: str | Path, section: OfflineSection, task_ids: Sequence[str]
) -> tuple[list[tuple[str, str]], list[str]]:
    """``(problems, notes)``: each problem a ``(field path, message)``; notes are the counts
    per task. A store that does not open is one problem."""
    try:
        pool = load_pool(store, section, task_ids)
    except Exception as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return [("offline", f"the section is checked against the store {store}: {first}")], []
    coverage = pool.coverage()
    notes = [f"offline: {row.describe(section.per_group)}" for row in coverage]
    problems = []
    if not any(row.n_trajectories for row in coverage):
        floor = "" if section.min_reward is None else f" with reward ≥ {section.min_reward}"
        problems.append(
            (
                "offline.source",
                f"no graded trajectory of the tasks "
                f"({', '.join(task_ids)}) from source {section.source}{floor} is in the "
                f"store {store}; import some (videorl-kit trajectories import) or "
                "widen the selection",
            )
        )
    if section.correction == "truncated_is":
        missing = sum(row.n_usable_without_logprobs for row in coverage)
        usable = sum(row.n_usable for row in coverage)
        if missing:
            problems.append(
                (
                    "offline.correction",
                    f"truncated_is needs behaviour log-probs, but "
                    f"{missing} of the {usable} trajectories this run can use have none; "
                    "import them with token_ids, tokenizer and logprobs, narrow "
                    "offline.source, or choose recompute",
                )
            )
    return problems, notes
