"""The reward of one task spec, routed per row: :class:`TaskReward`.

This is the one way to score a sample of a spec: the verifier of the row's problem type
(the spec's ``verifier``, or for ``problem_type: from_row`` the spec's ``verifiers`` entry
for that type, else the type's default verifier), with the spec's format rule and reward
weights. ``reward score --spec``, the TRL reward functions, evaluation and the OpenRLHF
reward module all score through it.

A :class:`TaskReward` never raises on model output or on a row's data: a problem type the
task cannot score is an ``unverifiable`` result naming it. Configuration errors (a bad
verifier or weights in the spec) raise when it is built. It is picklable and thread-safe:
every reward function is built up front and nothing changes afterwards.

Example:
    >>> from types import SimpleNamespace as NS
    >>> spec = NS(id="mixed", problem_type="from_row", verifier=None,
    ...           verifiers={"numerical": NS(name="numeric", version=2, params={"abs_tol": 0.5})},
    ...           reward=NS(format="answer_tag", weights=NS(accuracy=0.9, format=0.1)))
    >>> task = TaskReward.from_spec(spec)
    >>> task.score("<answer>3.4</answer>", "3", problem_type="numerical").overall
    1.0
    >>> task.score("<answer>B</answer>", "B", ["A. red", "B. blue"], "multiple choice").overall
    1.0
    >>> task.score("<answer>3</answer>", "3").details["reason"]
    "no problem type given, and task mixed takes each row's problem type"
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from videorl_kit.core.problem_types import FROM_ROW, ProblemType, canonical_problem_type
from videorl_kit.rewards.result import RewardResult
from videorl_kit.rewards.router import RewardFunction, reward_function_from_spec


class TaskReward:
    """Scores responses of one task, each with the reward function of its row's problem type.

    Build it with :meth:`from_spec`. ``functions`` maps every problem type the task scores
    to its :class:`~videorl_kit.rewards.router.RewardFunction`; ``fixed_type`` is the task's
    single problem type (None when the spec routes per row).
    """

    def __init__(
        self,
        task_id: str,
        functions: Mapping[ProblemType, RewardFunction],
        fixed_type: ProblemType | None = None,
    ) -> None:
        self.task_id = task_id
        self.functions = dict(functions)
        self.fixed_type = fixed_type

    @classmethod
    def from_spec(cls, spec: Any) -> TaskReward:
        """The reward of ``spec`` (a ``TaskSpec``, or any object with its attributes).

        Raises ``ValueError`` / ``LookupError`` for a verifier, format rule or weights
        the registry refuses.

        Example:
            >>> from types import SimpleNamespace as NS
            >>> task = TaskReward.from_spec(NS(id="count", problem_type="numerical"))
            >>> task.fixed_type.value, sorted(t.value for t in task.functions)
            ('numerical', ['numerical'])
        """
        if str(spec.problem_type) == FROM_ROW:
            functions = {t: reward_function_from_spec(spec, t) for t in ProblemType}
            return cls(spec.id, functions)
        function = reward_function_from_spec(spec)
        return cls(spec.id, {function.problem_type: function}, function.problem_type)

    def __repr__(self) -> str:
        routing = self.fixed_type.value if self.fixed_type else FROM_ROW
        return f"TaskReward({self.task_id!r}, problem_type={routing!r})"

    def function_for(self, problem_type: ProblemType | str | None) -> RewardFunction:
        """The reward function of a row with ``problem_type`` (None: the task's own type).

        Raises ``ValueError`` naming the problem when the task cannot score that type.

        Example:
            >>> from types import SimpleNamespace as NS
            >>> task = TaskReward.from_spec(NS(id="count", problem_type="numerical"))
            >>> task.function_for("number").verifier_name
            'numeric'
            >>> task.function_for("ocr")
            Traceback (most recent call last):
            ...
            ValueError: problem type 'ocr' is not task count's numerical
        """
        if problem_type is None or problem_type == "":
            if self.fixed_type is None:
                raise ValueError(
                    f"no problem type given, and task {self.task_id} takes each row's problem type"
                )
            return self.functions[self.fixed_type]
        ptype = canonical_problem_type(str(problem_type))
        function = self.functions.get(ptype)
        if function is None:
            assert self.fixed_type is not None
            raise ValueError(
                f"problem type {str(problem_type)!r} is not task {self.task_id}'s "
                f"{self.fixed_type.value}"
            )
        return function

    def score(
        self,
        response: Any,
        answer: Any,
        options: Any = None,
        problem_type: ProblemType | str | None = None,
    ) -> RewardResult:
        """Score one response against its row's gold, options and problem type.

        A problem type the task cannot score gives an ``unverifiable`` result whose
        ``details["reason"]`` says why; nothing here raises.
        """
        try:
            function = self.function_for(problem_type)
        except ValueError as exc:
            return RewardResult.unverifiable(str(exc), task_id=self.task_id)
        return function(response, answer, options)

    def score_sample(self, sample: Any, response: Any) -> RewardResult:
        """Score ``response`` to a :class:`~videorl_kit.spec.data.Sample` of this task.

        Example:
            >>> from types import SimpleNamespace as NS
            >>> task = TaskReward.from_spec(NS(id="yn", problem_type="boolean"))
            >>> row = NS(answer="yes", options=None, problem_type="boolean", skip_reason=None)
            >>> task.score_sample(row, "<answer>Yes</answer>").overall
            1.0
        """
        if getattr(sample, "skip_reason", None):
            return RewardResult.unverifiable(
                f"sample is skipped: {sample.skip_reason}", task_id=self.task_id
            )
        return self.score(response, sample.answer, sample.options, sample.problem_type)
