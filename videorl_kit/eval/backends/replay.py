"""Score outputs produced elsewhere: one ``{"id", "response"}`` JSON object per line.

A line may also name its ``task`` (the spec id); it must when the same id exists in two of
the evaluated tasks. The whole file is checked before anything is scored, and every problem
is reported at once: lines that are not JSON objects or lack ``id``/``response``, ids that
are in no evaluated task, ids that are ambiguous, duplicates, and evaluated samples that
have no prediction. With ``--limit``, predictions for rows past the limit are ignored.

Example:
    >>> import json, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "p.jsonl"
    >>> _ = path.write_text(json.dumps({"id": "a", "response": "<answer>B</answer>"}) + "\\n")
    >>> [(line.number, line.task, line.id) for line in read_prediction_lines(path)]
    [(1, None, 'a')]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from videorl_kit.core.errors import UserError
from videorl_kit.eval.backends.base import Backend
from videorl_kit.eval.requests import GenerationRequest
from videorl_kit.eval.results import ModelInfo
from videorl_kit.media.hashing import file_content_hash

_SHOWN = 5


@dataclass(frozen=True)
class PredictionLine:
    """One parsed line of a predictions file."""

    number: int
    task: str | None
    id: str
    response: str


def read_prediction_lines(path: Path) -> list[PredictionLine]:
    """Parse every line; a :class:`UserError` lists every malformed line (up to 5 shown)."""
    if not path.is_file():
        raise UserError(f"--predictions {path}: file not found")
    lines: list[PredictionLine] = []
    problems: list[str] = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"--predictions {path}: cannot read: {exc}") from None
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.append(f"line {number}: invalid JSON ({exc.msg})")
            continue
        if not isinstance(item, dict):
            problems.append(f"line {number}: not a JSON object")
            continue
        sample_id, response, task = item.get("id"), item.get("response"), item.get("task")
        if not isinstance(sample_id, str | int) or isinstance(sample_id, bool):
            problems.append(f"line {number}: 'id' must be a string or an integer")
            continue
        if not isinstance(response, str):
            problems.append(f"line {number}: 'response' must be a string")
            continue
        if task is not None and not isinstance(task, str):
            problems.append(f"line {number}: 'task' must be a string")
            continue
        lines.append(PredictionLine(number, task, str(sample_id), response))
    if problems:
        shown = "; ".join(problems[:_SHOWN]) + (" ..." if len(problems) > _SHOWN else "")
        raise UserError(f"--predictions {path}: {len(problems)} malformed lines: {shown}")
    return lines


def _listing(items: list[str]) -> str:
    more = f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else ""
    return ", ".join(items[:_SHOWN]) + more


def match_predictions(
    path: Path, lines: list[PredictionLine], expected: dict[str, list[str]], *, limited: bool
) -> dict[tuple[str, str], str]:
    """Map each evaluated ``(task, sample id)`` to its response, or raise listing every problem.

    ``expected`` is task id -> evaluated sample ids. ``limited`` (``--limit`` given) tolerates
    predictions for ids past the evaluated rows.

    Example:
        >>> line = PredictionLine(1, None, "s1", "A")
        >>> match_predictions(Path("p.jsonl"), [line], {"t": ["s1"]}, limited=False)
        {('t', 's1'): 'A'}
    """
    owners: dict[str, list[str]] = {}
    for task, ids in expected.items():
        for sample_id in ids:
            owners.setdefault(sample_id, []).append(task)
    found: dict[tuple[str, str], PredictionLine] = {}
    unknown, ambiguous, duplicates = [], [], []
    for line in lines:
        if line.task is not None:
            if line.task not in expected:
                unknown.append(f"line {line.number}: task {line.task!r}")
                continue
            key = (line.task, line.id)
            if line.id not in set(expected[line.task]):
                if not limited:
                    unknown.append(f"line {line.number}: {line.task}/{line.id}")
                continue
        else:
            tasks = owners.get(line.id, [])
            if len(tasks) > 1:
                ambiguous.append(f"line {line.number}: {line.id!r} (in {', '.join(tasks)})")
                continue
            if not tasks:
                if not limited:
                    unknown.append(f"line {line.number}: {line.id!r}")
                continue
            key = (tasks[0], line.id)
        if key in found:
            duplicates.append(
                f"line {line.number}: {key[0]}/{key[1]} (first on line {found[key].number})"
            )
            continue
        found[key] = line
    missing = [f"{t}/{s}" for t, ids in expected.items() for s in ids if (t, s) not in found]
    problems = []
    if unknown:
        problems.append(f"{len(unknown)} unknown ids ({_listing(unknown)})")
    if ambiguous:
        problems.append(
            f'{len(ambiguous)} ids in several tasks, add a "task" field ({_listing(ambiguous)})'
        )
    if duplicates:
        problems.append(f"{len(duplicates)} duplicates ({_listing(duplicates)})")
    if missing:
        problems.append(f"{len(missing)} samples without a prediction ({_listing(missing)})")
    if problems:
        raise UserError(f"--predictions {path}: " + "; ".join(problems))
    return {key: line.response for key, line in found.items()}


class ReplayBackend(Backend):
    """Responses read from a predictions file, checked against the evaluated samples."""

    kind = "replay"
    needs_media = False

    def __init__(
        self, path: str | Path, expected: dict[str, list[str]], *, limited: bool,
        label: str | None = None,
    ):  # fmt: skip
        self.path = Path(path)
        self.responses = match_predictions(
            self.path, read_prediction_lines(self.path), expected, limited=limited
        )
        self.label = label
        self.sha256 = file_content_hash(self.path)

    def info(self) -> ModelInfo:
        """The predictions file is the model: its sha256 is the fingerprint."""
        return ModelInfo(
            backend="replay",
            path=str(self.path.resolve()),
            name=self.label,
            fingerprint=self.sha256,
            fingerprint_files=[self.path.name],
            details={"n_predictions": len(self.responses)},
        )

    def generate(self, requests: Sequence[GenerationRequest]) -> list[str]:
        """The recorded response of each request."""
        return [self.responses[(r.task_id, r.sample_id)] for r in requests]
