"""The reward behind a bundle's ``reward_func.py``: :class:`BundleReward`.

OpenRLHF 0.11.2 calls ``reward_func(queries, prompts, labels)`` with one sample per call, in
threads, inside every vLLM rollout actor. If the call raises, the sample's reward is left
``None`` and the training step dies later with an unrelated message; so this reward never
raises. A label it cannot read, a query without the prompt's assistant header, an empty
response, a verifier that fails or a gold answer it cannot read each give reward 0, a
warning in the log naming the sample and the reason, and a 1 under ``error/<reason>`` in
``extra_logs``.

``extra_logs`` has the same keys for every sample (OpenRLHF stacks them across a batch):
``accuracy``, ``format``, one ``error/<reason>`` per reason, and per task
``task/<id>/accuracy`` (the sample's accuracy if it belongs to the task, else 0) and
``task/<id>/share`` (1 or 0). A logged batch mean of ``task/<id>/accuracy`` divided by
that of ``task/<id>/share`` is the task's accuracy.

``rewards`` is the spec's ``overall`` (weighted accuracy and format); ``scores`` is the
accuracy, so dynamic filtering drops prompt groups whose answers are all right or all wrong.

Example:
    >>> from videorl_kit.adapters.openrlhf.labels import encode_label
    >>> from videorl_kit.spec.models import TaskSpec
    >>> spec = TaskSpec.model_validate({"id": "count", "version": 1,
    ...     "problem_type": "numerical", "data": {"path": "rows.jsonl"},
    ...     "prompt": {"template": "{{ question }}"}})
    >>> reward = BundleReward([spec], ChatMarkers("<|im_start|>assistant\\n", ("<|im_end|>",)))
    >>> prompt = "<|im_start|>user\\nHow many?<|im_end|>\\n<|im_start|>assistant\\n"
    >>> label = encode_label("count", "count-0", "numerical", "3", None)
    >>> out = reward([prompt + "<answer>3</answer><|im_end|>"], [prompt], [label])
    >>> out["rewards"], out["scores"], out["extra_logs"]["task/count/accuracy"]
    (1.0, 1.0, 1.0)
    >>> out = reward([prompt + "<answer>3</answer>"], [prompt], ["not json"])
    >>> out["rewards"], out["extra_logs"]["error/label"]
    (0.0, 1.0)
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from videorl_kit.adapters.openrlhf.chat import ChatMarkers, ResponseSplitError, split_response
from videorl_kit.adapters.openrlhf.labels import LabelError, decode_label
from videorl_kit.core.errors import UserError
from videorl_kit.core.safe_text import escape_controls
from videorl_kit.rewards.task import TaskReward
from videorl_kit.spec.models import TaskSpec

logger = logging.getLogger("videorl_kit.openrlhf.reward")

ERROR_REASONS = (
    "label",
    "response_split",
    "empty_response",
    "verifier",
    "unverifiable",
    "internal",
)
"""Why a sample got reward 0 without being graded; each is an ``error/<reason>`` log key."""

WARNINGS_PER_REASON = 20
"""Warnings logged per reason before further ones are only counted in ``extra_logs``."""

TASKS_FILE_FORMAT = "videorl-kit/openrlhf-tasks"
"""The ``format`` field of ``tasks.resolved.json``."""


@dataclass(frozen=True)
class SampleReward:
    """The reward of one sample, and why it is 0 when it was not graded."""

    reward: float
    accuracy: float = 0.0
    format: float = 0.0
    task_id: str | None = None
    error: str | None = None
    reason: str | None = None


def write_tasks_file(
    path: Path,
    specs: Sequence[TaskSpec],
    markers: ChatMarkers,
    *,
    per_task: Sequence[dict[str, Any]] | None = None,
    **fields: Any,
) -> None:
    """Write ``tasks.resolved.json``: each spec resolved, with its source and provenance (and
    the matching ``per_task`` entries), the chat markers and any other top-level ``fields``.

    Example:
        >>> import tempfile
        >>> from videorl_kit.spec.models import TaskSpec
        >>> spec = TaskSpec.model_validate({"id": "yn", "version": 1, "problem_type": "boolean",
        ...     "data": {"path": "rows.jsonl"}, "prompt": {"template": "{{ question }}"}})
        >>> path = Path(tempfile.mkdtemp()) / "tasks.resolved.json"
        >>> write_tasks_file(path, [spec], ChatMarkers("A:"), recipe="demo")
        >>> list(BundleReward.from_file(path).tasks)
        ['yn']
    """
    extras = per_task if per_task is not None else [{} for _ in specs]
    tasks = [
        {
            "id": spec.id,
            **extra,
            "source_file": str(spec.source_file) if spec.source_file else None,
            "provenance": spec.provenance,
            "spec": spec.resolved_dict(),
        }
        for spec, extra in zip(specs, extras, strict=True)
    ]
    document = {
        "format": TASKS_FILE_FORMAT,
        "format_version": 1,
        **fields,
        "chat": markers.to_dict(),
        "tasks": tasks,
    }
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


class BundleReward:
    """Scores one rollout sample of a bundle's tasks; thread-safe, never raises when called.

    ``specs`` are the bundle's resolved task specs (each scored through
    :class:`~videorl_kit.rewards.task.TaskReward`, so per-row problem types route to their
    verifiers); ``markers`` locate the response in OpenRLHF's query.
    """

    def __init__(self, specs: Iterable[TaskSpec], markers: ChatMarkers) -> None:
        self.tasks = {spec.id: TaskReward.from_spec(spec) for spec in specs}
        if not self.tasks:
            raise ValueError("a bundle reward needs at least one task")
        self.markers = markers
        self._zero_logs = {"accuracy": 0.0, "format": 0.0}
        self._zero_logs.update({f"error/{reason}": 0.0 for reason in ERROR_REASONS})
        for task_id in self.tasks:
            self._zero_logs[f"task/{task_id}/accuracy"] = 0.0
            self._zero_logs[f"task/{task_id}/share"] = 0.0
        self._warned: Counter[str] = Counter()
        self._lock = threading.Lock()

    @classmethod
    def from_file(cls, path: str | Path) -> BundleReward:
        """The reward of a bundle's ``tasks.resolved.json``.

        Raises :class:`~videorl_kit.core.errors.UserError` naming the file and the problem.
        """
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("format") != TASKS_FILE_FORMAT:
                raise ValueError(f"format is {data.get('format')!r}, not {TASKS_FILE_FORMAT!r}")
            specs = [TaskSpec.model_validate(task["spec"]) for task in data["tasks"]]
            return cls(specs, ChatMarkers.from_dict(data["chat"]))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UserError(f"{path}: not a readable tasks.resolved.json: {exc}") from None

    def score(self, query: Any, prompt: Any, label: Any) -> SampleReward:
        """The reward of one sample (``query`` = prompt + response as OpenRLHF decodes it)."""
        try:
            return self._score(query, prompt, label)
        except Exception as exc:  # a bug here must not stall a training run
            return SampleReward(0.0, error="internal", reason=f"{type(exc).__name__}: {exc}")

    def _score(self, query: Any, prompt: Any, label: Any) -> SampleReward:
        try:
            row = decode_label(label)
        except LabelError as exc:
            return SampleReward(0.0, error="label", reason=str(exc))
        task = self.tasks.get(row.task_id)
        if task is None:
            known = ", ".join(sorted(self.tasks))
            reason = f"unknown task {row.task_id!r} (the bundle's tasks: {known})"
            return SampleReward(0.0, error="label", reason=reason)
        try:
            response = split_response(str(query), str(prompt), self.markers)
        except ResponseSplitError as exc:
            return SampleReward(0.0, task_id=row.task_id, error="response_split", reason=str(exc))
        if not response.strip():
            return SampleReward(0.0, task_id=row.task_id, error="empty_response", reason="empty")
        result = task.score(response, row.answer, row.options, row.problem_type)
        if result.status == "unverifiable":
            reason = str(result.details.get("reason", "gold answer cannot be read"))
            return SampleReward(0.0, task_id=row.task_id, error="unverifiable", reason=reason)
        if result.details.get("error"):
            reason = str(result.details["error"])
            return SampleReward(0.0, task_id=row.task_id, error="verifier", reason=reason)
        return SampleReward(result.overall, result.accuracy, result.format, row.task_id)

    def logs(self, sample: SampleReward) -> dict[str, float]:
        """``extra_logs`` of one sample: the same keys for every sample (see the module doc)."""
        logs = dict(self._zero_logs)
        logs["accuracy"], logs["format"] = sample.accuracy, sample.format
        if sample.error is not None:
            logs[f"error/{sample.error}"] = 1.0
        if sample.task_id is not None:
            logs[f"task/{sample.task_id}/accuracy"] = sample.accuracy
            logs[f"task/{sample.task_id}/share"] = 1.0
        return logs

    def _warn(self, sample: SampleReward, label: Any) -> None:
        assert sample.error is not None
        with self._lock:
            self._warned[sample.error] += 1
            count = self._warned[sample.error]
        if count <= WARNINGS_PER_REASON:
            where = f"task {sample.task_id}" if sample.task_id else f"label {str(label)[:200]!r}"
            more = " (further ones are only counted)" if count == WARNINGS_PER_REASON else ""
            shown = escape_controls(f"{where}: {sample.error}: {sample.reason}")  # a log line
            logger.warning("reward 0 for %s%s", shown, more)

    def __call__(
        self, queries: Sequence[Any], prompts: Sequence[Any], labels: Sequence[Any]
    ) -> dict[str, Any]:
        """OpenRLHF's ``reward_func`` contract: one sample per call (as 0.11.2 always sends),
        answered with ``rewards``, ``scores`` and ``extra_logs``; any other call is a logged 0."""
        label: Any = None
        try:
            if not len(queries) == len(prompts) == len(labels) == 1:
                sizes = f"{len(queries)}, {len(prompts)}, {len(labels)}"
                raise ValueError(f"expected one query, prompt and label, got {sizes}")
            label = labels[0]
            sample = self.score(queries[0], prompts[0], label)
        except Exception as exc:
            sample = SampleReward(0.0, error="internal", reason=f"bad call: {exc}")
        if sample.error is not None:
            self._warn(sample, label)
        return {
            "rewards": sample.reward,
            "scores": sample.accuracy,
            "extra_logs": self.logs(sample),
        }
