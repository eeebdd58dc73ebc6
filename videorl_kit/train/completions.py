"""A run's ``completions.jsonl``: sampled prompts, responses, extracted answers, golds, rewards.

Every ``logging.completions_every`` steps (and at step 1) the TRL backend writes up to
``logging.completions_per_step`` completions per task, one JSON object per line:

``step``, ``task``, ``sample_id``, ``problem_type``, ``prompt`` (the task prompt's text; no
media), ``response``, ``extracted`` (the answer the verifier graded), ``gold``, ``reward``
(the spec's ``overall``), ``accuracy``, ``format``, ``status`` (``ok`` | ``unverifiable`` |
``error``) and ``reason`` (why a 0 or a mask, when the verifier says). TRL's own
``log_completions`` prints a table; this file keeps them with the run, and
``videorl-kit inspect RUN`` shows the latest.

:class:`CompletionLog` is a reward-results observer
(:attr:`~videorl_kit.rewards.trl_functions.TaskRewardFunction.on_results`): it reads the
step from TRL's ``trainer_state`` column and writes on the main process only.

Example:
    >>> import tempfile, pathlib
    >>> from types import SimpleNamespace as NS
    >>> from videorl_kit.rewards.result import RewardResult
    >>> log = CompletionLog(pathlib.Path(tempfile.mkdtemp()) / COMPLETIONS_FILE, every=10)
    >>> result = RewardResult(1.0, 1.0, 1.0, details={"extracted": "3"})
    >>> log("count", [[{"role": "user", "content": [{"type": "text", "text": "How many?"}]}]],
    ...     ["<answer>3</answer>"], [result],
    ...     {"trainer_state": NS(global_step=0, is_world_process_zero=True),
    ...      "sample_id": ["s1"], "answer": ["3"], "problem_type": ["numerical"]})
    >>> [(r["step"], r["prompt"], r["extracted"], r["reward"]) for r in read_completions(log.path)]
    [(1, 'How many?', '3', 1.0)]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from videorl_kit.rewards.trl_functions import completion_text

COMPLETIONS_FILE = "completions.jsonl"


def prompt_text(prompt: Any) -> str:
    """The task prompt's text of a chat prompt (the last text part of the last user turn; the
    frames' timestamp markers and the media are left out), or a plain prompt as it is.

    Example:
        >>> prompt_text([{"role": "user", "content": [{"type": "text", "text": "<0.0 seconds>"},
        ...     {"type": "image"}, {"type": "text", "text": "How many?"}]}])
        'How many?'
    """
    if isinstance(prompt, str):
        return prompt
    users = [m for m in prompt or () if isinstance(m, dict) and m.get("role") == "user"]
    if not users:
        return ""
    content = users[-1].get("content")
    if isinstance(content, str):
        return content
    texts = [p.get("text", "") for p in content or () if isinstance(p, dict) and "text" in p]
    return texts[-1] if texts else ""


class CompletionLog:
    """Writes sampled completions to ``path`` every ``every`` steps (see the module doc)."""

    def __init__(self, path: Path, every: int, per_step: int = 8):
        self.path = Path(path)
        self.every = every
        self.per_step = per_step

    def due(self, step: int) -> bool:
        """Whether ``step`` (1-based) logs completions.

        Example:
            >>> [s for s in range(1, 25) if CompletionLog(Path("x"), every=10).due(s)]
            [1, 10, 20]
        """
        return self.every > 0 and (step == 1 or step % self.every == 0)

    def __call__(
        self,
        task_id: str,
        prompts: Sequence[Any] | None,
        completions: Sequence[Any],
        results: Sequence[Any],
        columns: dict[str, Any],
    ) -> None:
        """Record up to ``per_step`` of this task's completions if the step is due."""
        state = columns.get("trainer_state")
        if state is None or not getattr(state, "is_world_process_zero", True):
            return
        step = int(state.global_step) + 1  # the step these completions train
        if not self.due(step):
            return
        lines = []
        for i, result in enumerate(results):
            if result is None:
                continue
            if len(lines) == self.per_step:
                break
            lines.append(
                {
                    "step": step,
                    "task": task_id,
                    "sample_id": _at(columns, "sample_id", i),
                    "problem_type": _at(columns, "problem_type", i),
                    "prompt": prompt_text(prompts[i]) if prompts is not None else "",
                    "response": completion_text(completions[i]),
                    "extracted": result.details.get("extracted"),
                    "gold": _at(columns, "answer", i),
                    "reward": result.overall,
                    "accuracy": result.accuracy,
                    "format": result.format,
                    "status": result.status,
                    "reason": result.details.get("reason"),
                }
            )
        if lines:
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write("".join(json.dumps(line, default=str) + "\n" for line in lines))

    def truncate_after(self, step: int) -> None:
        """Drop records of steps after ``step`` (a resumed run logs them again)."""
        if self.path.exists():
            kept = [r for r in read_completions(self.path) if r["step"] <= step]
            self.path.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")


def _at(columns: dict[str, Any], name: str, index: int) -> Any:
    values = columns.get(name)
    return values[index] if values is not None and index < len(values) else None


def read_completions(path: Path) -> list[dict[str, Any]]:
    """Every record of a ``completions.jsonl`` (a half-written last line is skipped)."""
    records = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: nested too deeply to be a record
            continue
        if isinstance(record, dict) and isinstance(record.get("step"), int):
            records.append(record)
    return records


def latest_completions(
    path: Path, step: int | None = None
) -> tuple[int | None, list[dict[str, Any]]]:
    """The records of ``step`` (default: the last logged step) and that step.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / COMPLETIONS_FILE
        >>> _ = path.write_text('{"step": 1, "task": "a"}\\n{"step": 10, "task": "b"}\\n')
        >>> latest_completions(path)
        (10, [{'step': 10, 'task': 'b'}])
    """
    records = read_completions(path)
    if not records:
        return None, []
    chosen = step if step is not None else max(r["step"] for r in records)
    return chosen, [r for r in records if r["step"] == chosen]
