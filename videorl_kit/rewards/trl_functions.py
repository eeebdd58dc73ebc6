"""Reward functions in TRL's shape, one per task: :class:`TaskRewardFunction`.

TRL's ``GRPOTrainer`` calls each reward function as ``f(prompts=..., completions=...,
completion_ids=..., **columns)``, where ``columns`` holds every dataset column but
``prompt`` as a list of one value per completion (plus ``trainer_state``, ``log_extra``,
``log_metric``). It logs ``rewards/<function name>/mean``, and a ``None`` means "not
applicable to this row". So the kit gives one function per task, named after the task,
that reads these dataset columns (the names :class:`~videorl_kit.store.torch_dataset.
CachedSampleDataset` items use too):

==================  =========================================================================
``task_id``         the row's task; rows of other tasks get ``None``. Without the column,
                    every row is the function's task (a one-task dataset)
``answer``          the gold answer (text; structured answers as JSON text). Required
``options``         multiple-choice options (list of strings, or None). Optional
``problem_type``    the row's problem type (aliases accepted). Required by a task whose spec
                    says ``problem_type: from_row``; optional otherwise
``breakdown``       the row's values of the columns its metrics are broken down by (a dict,
                    or its JSON text, e.g. ``{"problem_type": "ocr", "data_source": "x"}``).
                    Optional
==================  =========================================================================

Each completion is a string, or a conversational message list whose last message's
``content`` (a string, or a list of ``{"type": "text", "text": ...}`` parts) is the
response. The value is the task's ``overall`` reward (its weights and format rule); an
``unverifiable`` or ``error`` verdict is ``None``, so TRL masks it like a row of another
task. When TRL passes ``log_metric``, the function also logs ``<task>/accuracy``,
``<task>/format`` (means over its graded rows) and ``<task>/masked`` (the fraction of its
rows whose verdict was not ``ok``). With a ``breakdown`` column it logs the same per value
of each column too: ``<task>/by_<column>/<value>/{reward,accuracy,format}`` over the
graded rows with that value (a ``/`` in a value becomes ``_``), e.g. per problem type of a
mixed (``from_row``) task or per ``data_source``. ``on_results`` (optional) sees every call's
:class:`~videorl_kit.rewards.result.RewardResult` per completion (None for other tasks' rows):
the TRL backend samples completions from it for ``completions.jsonl``.

The functions are picklable and thread-safe (no state changes after construction).

Example:
    >>> from types import SimpleNamespace as NS
    >>> count = TaskRewardFunction.from_spec(NS(id="count", problem_type="numerical"))
    >>> count.__name__
    'count'
    >>> count(prompts=["p", "p", "p"],
    ...       completions=["<answer>3</answer>", [{"role": "assistant", "content": "4"}], "x"],
    ...       task_id=["count", "count", "other"], answer=["3", "3", "B"])
    [1.0, 0.0, None]
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from videorl_kit.rewards.result import RewardResult
from videorl_kit.rewards.task import TaskReward
from videorl_kit.spec import load_spec

ResultsObserver = Callable[
    [str, Sequence[Any] | None, Sequence[Any], list[RewardResult | None], dict[str, Any]], None
]
"""Sees one call of a task's function: task id, prompts, completions, results, columns."""

TASK_ID_COLUMN = "task_id"
ANSWER_COLUMN = "answer"
OPTIONS_COLUMN = "options"
PROBLEM_TYPE_COLUMN = "problem_type"
BREAKDOWN_COLUMN = "breakdown"
REWARD_COLUMNS: tuple[str, ...] = (
    TASK_ID_COLUMN,
    ANSWER_COLUMN,
    OPTIONS_COLUMN,
    PROBLEM_TYPE_COLUMN,
    BREAKDOWN_COLUMN,
)
"""The dataset columns the reward functions read (see the module docstring)."""


def completion_text(completion: Any) -> str:
    """The response text of one TRL completion: a string, or a conversational message list.

    Example:
        >>> completion_text("<answer>A</answer>")
        '<answer>A</answer>'
        >>> completion_text([{"role": "assistant", "content": [{"type": "text", "text": "B"}]}])
        'B'
    """
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    if not isinstance(completion, list | tuple) or not completion:
        return "" if completion is None else str(completion)
    content = completion[-1].get("content") if isinstance(completion[-1], dict) else None
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


class TaskRewardFunction:
    """One task's reward in TRL's shape: ``f(prompts, completions, **columns)`` -> rewards.

    Build it with :meth:`from_spec` or :func:`trl_reward_functions`. ``__name__`` is the
    task id, which TRL uses in its metric names.
    """

    def __init__(self, task: TaskReward, on_results: ResultsObserver | None = None) -> None:
        self.task = task
        self.on_results = on_results
        self.__name__ = task.task_id

    @classmethod
    def from_spec(cls, spec: Any, on_results: ResultsObserver | None = None) -> TaskRewardFunction:
        """The reward function of a loaded spec (or any object with a ``TaskSpec``'s attributes)."""
        return cls(TaskReward.from_spec(spec), on_results)

    def __repr__(self) -> str:
        return f"TaskRewardFunction({self.task!r})"

    def __call__(
        self, prompts: Sequence[Any] | None = None, completions: Sequence[Any] = (), **columns: Any
    ) -> list[float | None]:
        """One reward per completion: the task's ``overall``, or None (other task, masked)."""
        results = self.score_rows(completions, **columns)
        n_mine = sum(r is not None for r in results)
        graded = [r for r in results if r is not None and r.status == "ok"]
        log_metric = columns.get("log_metric")
        self._log(log_metric, n_mine, [(r.accuracy, r.format) for r in graded])
        groups = self._column(columns, BREAKDOWN_COLUMN, len(completions))
        if groups is not None and log_metric is not None:
            self._log_breakdown(log_metric, results, groups)
        if self.on_results is not None:
            self.on_results(self.task.task_id, prompts, completions, results, columns)
        return [r.overall if r is not None and r.status == "ok" else None for r in results]

    def score_rows(self, completions: Sequence[Any], **columns: Any) -> list[RewardResult | None]:
        """The :class:`~videorl_kit.rewards.result.RewardResult` of each completion, None for
        rows of other tasks (same columns as a call).

        Example:
            >>> from types import SimpleNamespace as NS
            >>> count = TaskRewardFunction.from_spec(NS(id="count", problem_type="numerical"))
            >>> [r and r.details["extracted"] for r in count.score_rows(
            ...     ["<answer>3</answer>", "4"], task_id=["count", "x"], answer=["3", "3"])]
            ['3', None]
        """
        n = len(completions)
        answers = self._column(columns, ANSWER_COLUMN, n, required=True)
        task_ids = self._column(columns, TASK_ID_COLUMN, n)
        options = self._column(columns, OPTIONS_COLUMN, n)
        types = self._column(columns, PROBLEM_TYPE_COLUMN, n, required=self.task.fixed_type is None)
        results: list[RewardResult | None] = []
        for i, completion in enumerate(completions):
            if task_ids is not None and task_ids[i] != self.task.task_id:
                results.append(None)
                continue
            results.append(
                self.task.score(
                    completion_text(completion),
                    answers[i],
                    None if options is None else options[i],
                    None if types is None else types[i],
                )
            )
        return results

    def _column(
        self, columns: dict[str, Any], name: str, n: int, *, required: bool = False
    ) -> Sequence[Any] | None:
        values = columns.get(name)
        if values is None:
            if required:
                raise ValueError(
                    f"reward function {self.task.task_id!r}: the dataset has no {name!r} column "
                    f"(TRL passes dataset columns as keyword arguments; reward functions read "
                    f"{', '.join(REWARD_COLUMNS)})"
                )
            return None
        if len(values) != n:
            raise ValueError(
                f"reward function {self.task.task_id!r}: column {name!r} has {len(values)} values "
                f"for {n} completions"
            )
        return values

    def _log(
        self, log_metric: Callable[[str, float], None] | None, n_mine: int,
        graded: list[tuple[float, float]],
    ) -> None:  # fmt: skip
        if log_metric is None or n_mine == 0:
            return
        name = self.task.task_id
        log_metric(f"{name}/masked", 1.0 - len(graded) / n_mine)
        if graded:
            log_metric(f"{name}/accuracy", sum(a for a, _ in graded) / len(graded))
            log_metric(f"{name}/format", sum(f for _, f in graded) / len(graded))

    def _log_breakdown(
        self,
        log_metric: Callable[[str, float], None],
        results: Sequence[RewardResult | None],
        groups: Sequence[Any],
    ) -> None:
        by_value: dict[tuple[str, str], list[RewardResult]] = {}
        for result, group in zip(results, groups, strict=True):
            if result is None or result.status != "ok" or not group:
                continue
            values = json.loads(group) if isinstance(group, str) else group
            for column, value in values.items():
                if value is not None:
                    by_value.setdefault((column, metric_part(value)), []).append(result)
        for (column, value), graded in sorted(by_value.items()):
            prefix = f"{self.task.task_id}/by_{column}/{value}"
            log_metric(f"{prefix}/reward", sum(r.overall for r in graded) / len(graded))
            log_metric(f"{prefix}/accuracy", sum(r.accuracy for r in graded) / len(graded))
            log_metric(f"{prefix}/format", sum(r.format for r in graded) / len(graded))


def metric_part(value: Any) -> str:
    """A column value as one segment of a metric name (``/`` would split it).

    Example:
        >>> metric_part("llava/video"), metric_part(3)
        ('llava_video', '3')
    """
    return str(value).replace("/", "_")


def trl_reward_functions(
    specs: Iterable[Any], on_results: ResultsObserver | None = None
) -> list[TaskRewardFunction]:
    """One TRL reward function per spec (loaded specs, or paths of spec files).

    Raises :class:`~videorl_kit.core.errors.UserError` for a spec that does not load and
    ``ValueError`` for two specs with one task id.

    Example:
        >>> fns = trl_reward_functions(["task_specs/synth-count.yaml",
        ...                             "task_specs/synth-boolean.yaml"])
        >>> [f.__name__ for f in fns]
        ['synth-count', 'synth-boolean']
    """

    functions = [
        TaskRewardFunction.from_spec(load_spec(s) if isinstance(s, str | Path) else s, on_results)
        for s in specs
    ]
    names = [f.__name__ for f in functions]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"two specs share the task id {', '.join(map(repr, duplicates))}")
    return functions
