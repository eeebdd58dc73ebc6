"""The reward functions of a TRL run: the kit's per-task functions, plus DAPO's overlong shaping.

Each task gets :class:`videorl_kit.rewards.trl_functions.TaskRewardFunction` (its spec's
verifier per row, ``None`` for other tasks' rows and for unverifiable or error verdicts, which
TRL then masks; ``<task>/accuracy``, ``<task>/format`` and ``<task>/masked`` logged). When the
algorithm asks for overlong shaping, :class:`OverlongShaped` adds TRL's own
``get_soft_overlong_punishment`` (times ``overlong_penalty``) to every reward a task function
gives, so masked rows stay masked.

Example:
    >>> from types import SimpleNamespace as NS
    >>> from trl.rewards import get_soft_overlong_punishment
    >>> from videorl_kit.rewards.trl_functions import TaskRewardFunction
    >>> count = TaskRewardFunction.from_spec(NS(id="count", problem_type="numerical"))
    >>> shaped = OverlongShaped(count, get_soft_overlong_punishment(10, 5), weight=1.0)
    >>> shaped(prompts=["p"] * 3, completions=["<answer>3</answer>"] * 3,
    ...        completion_ids=[[0] * 4, [0] * 8, [0] * 4], task_id=["count", "count", "x"],
    ...        answer=["3", "3", "3"])
    [1.0, 0.4, None]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from videorl_kit.rewards.trl_functions import (
    ResultsObserver,
    TaskRewardFunction,
    trl_reward_functions,
)
from videorl_kit.train.plan import TrainPlan


class OverlongShaped:
    """A task's reward function with DAPO's length penalty added to the rewards it gives."""

    def __init__(
        self,
        base: TaskRewardFunction,
        overlong: Callable[[list[list[int]]], list[float]],
        weight: float,
    ):
        self.base = base
        self.overlong = overlong
        self.weight = weight
        self.__name__ = base.__name__

    def __call__(
        self,
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] = (),
        completion_ids: list[list[int]] | None = None,
        **columns: Any,
    ) -> list[float | None]:
        rewards = self.base(prompts=prompts, completions=completions, **columns)
        penalties = self.overlong(completion_ids or [[] for _ in completions])
        return [
            None if reward is None else reward + self.weight * penalty
            for reward, penalty in zip(rewards, penalties, strict=True)
        ]


def task_rewards(plan: TrainPlan, on_results: ResultsObserver | None = None) -> list[Any]:
    """One reward function per task of ``plan``, shaped when the algorithm asks for it;
    ``on_results`` sees every call's verdicts (the run's completion log)."""
    specs = [entry.spec for entry in plan.loaded.tasks]
    functions: list[Any] = trl_reward_functions(specs, on_results)
    shaping = plan.loaded.options.get("overlong_reward")
    if not shaping:
        return functions
    from trl.rewards import get_soft_overlong_punishment

    overlong = get_soft_overlong_punishment(
        plan.recipe.rollout.max_new_tokens, shaping["soft_punish_cache"]
    )
    return [OverlongShaped(f, overlong, shaping["weight"]) for f in functions]
