"""Score responses with the spec's verifiers, choosing the verifier by each row's problem type.

A row of the spec's own problem type is scored by the spec's verifier; a row of another type
(a numerical question in a multiple-choice benchmark, OVO-Bench's counting rows) by the
registry's default verifier for that type, with the spec's format rule and weights. Reward
functions are built once per problem type and reused.

Example:
    >>> from videorl_kit.spec.models import TaskSpec
    >>> spec = TaskSpec.model_validate({"id": "t", "version": 1, "problem_type": "mcq",
    ...     "data": {"path": "x.jsonl"}, "prompt": {"template": "{{ question }}"}})
    >>> scorer = TaskScorer(spec)
    >>> scorer.score("multiple_choice", "<answer>B</answer>", "B", ["A. x", "B. y"]).accuracy
    1.0
    >>> scorer.score("numerical", "<answer>4</answer>", "4", None).details["verifier"]
    'numeric@1'
"""

from __future__ import annotations

from videorl_kit.errors import UserError
from videorl_kit.rewards.result import RewardResult
from videorl_kit.rewards.router import (
    RewardFunction,
    reward_function_for,
    reward_function_from_spec,
)
from videorl_kit.spec.models import TaskSpec


class TaskScorer:
    """Reward functions of one task, one per problem type met."""

    def __init__(self, spec: TaskSpec):
        self.spec = spec
        self._functions: dict[str, RewardFunction] = {}

    def function(self, problem_type: str) -> RewardFunction:
        """The reward function for rows of ``problem_type`` (built on first use)."""
        found = self._functions.get(problem_type)
        if found is not None:
            return found
        spec = self.spec
        try:
            if problem_type == spec.problem_type.value:
                found = reward_function_from_spec(spec)
            else:
                weights = (spec.reward.weights.accuracy, spec.reward.weights.format)
                found = reward_function_for(problem_type, None, spec.reward.format, weights)
        except (ValueError, LookupError) as exc:
            raise UserError(f"{spec.id}: cannot score {problem_type!r} rows: {exc}") from None
        self._functions[problem_type] = found
        return found

    def score(
        self, problem_type: str, response: str, answer: str, options: list[str] | None
    ) -> RewardResult:
        """The verdict on one response (never raises on the response itself)."""
        return self.function(problem_type)(response, answer, options)
