"""One TRL reward function per task, each scoring only its own task's rows.

TRL calls every reward function on every completion with the dataset's columns as keyword
arguments; a function returns ``None`` for rows that are not its business, and TRL then
leaves them out of that function's mean (``rewards/<task>/mean``). A row whose verdict is
``unverifiable`` (the gold cannot be read) or ``error`` also gets ``None``: when every
function says ``None`` TRL gives the completion no advantage, so it cannot move the policy.

Each function also logs ``format/<task>`` (share of its completions in the required format)
and ``accuracy/<task>`` through TRL's ``log_metric``. DAPO's overlong shaping, when the
algorithm asks for it, is TRL's own ``get_soft_overlong_punishment`` added to each scored
completion's reward, so masked rows stay masked.

Example:
    >>> from videorl_kit.rewards import reward_function_for
    >>> fn = TaskReward("count", reward_function_for("numerical"))
    >>> fn(prompts=[None, None], completions=[[{"content": "<answer>3</answer>"}]] * 2,
    ...    completion_ids=[[1], [1]], task_id=["count", "other"], answer=["3", "1"],
    ...    options=[None, None])
    [1.0, None]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from videorl_kit.rewards.router import (
    RewardFunction,
    reward_function_from_spec,
)
from videorl_kit.train.plan import TrainPlan


def completion_text(completion: Any) -> str:
    """The text of a TRL completion (a message list for chat prompts, else a string).

    Example:
        >>> completion_text([{"role": "assistant", "content": "<answer>B</answer>"}])
        '<answer>B</answer>'
    """
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        content = completion[-1].get("content", "")
        if isinstance(content, list):
            return "".join(p.get("text", "") for p in content if isinstance(p, dict))
        return str(content)
    return str(completion)


class TaskReward:
    """The reward function of one task; its ``__name__`` is the task id (TRL's metric name)."""

    def __init__(
        self,
        task_id: str,
        score: RewardFunction,
        overlong: Callable[[list[list[int]]], list[float]] | None = None,
        overlong_weight: float = 1.0,
    ):
        self.__name__ = task_id
        self.task_id = task_id
        self.score = score
        self.overlong = overlong
        self.overlong_weight = overlong_weight

    def __call__(
        self,
        prompts: list[Any],
        completions: list[Any],
        completion_ids: list[list[int]],
        task_id: list[str],
        answer: list[str],
        options: list[Any],
        log_metric: Callable[[str, float], None] | None = None,
        **_: Any,
    ) -> list[float | None]:
        mine = [i for i, task in enumerate(task_id) if task == self.task_id]
        rewards: list[float | None] = [None] * len(completions)
        if not mine:
            return rewards
        penalties = self.overlong([completion_ids[i] for i in mine]) if self.overlong else None
        formats, accuracies = [], []
        for n, i in enumerate(mine):
            result = self.score(completion_text(completions[i]), answer[i], options[i])
            formats.append(result.format)
            if result.status != "ok":
                continue
            accuracies.append(result.accuracy)
            shaped = result.overall
            if penalties is not None:
                shaped += self.overlong_weight * penalties[n]
            rewards[i] = shaped
        if log_metric is not None:
            log_metric(f"format/{self.task_id}", sum(formats) / len(formats))
            if accuracies:
                log_metric(f"accuracy/{self.task_id}", sum(accuracies) / len(accuracies))
        return rewards


def task_rewards(plan: TrainPlan) -> list[TaskReward]:
    """One :class:`TaskReward` per task of ``plan``, with the algorithm's overlong shaping."""
    from trl.rewards import get_soft_overlong_punishment

    shaping = plan.loaded.options.get("overlong_reward")
    overlong = (
        get_soft_overlong_punishment(
            plan.recipe.rollout.max_new_tokens, shaping["soft_punish_cache"]
        )
        if shaping
        else None
    )
    weight = shaping["weight"] if shaping else 1.0
    return [
        TaskReward(entry.spec.id, reward_function_from_spec(entry.spec), overlong, weight)
        for entry in plan.loaded.tasks
    ]
