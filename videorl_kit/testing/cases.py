"""Golden case files: graded responses, one JSON object per line, and the lines a check writes.

The layout is the kit's own (``tests/rewards/golden/<problem_type>.jsonl``): ``id``,
``problem_type``, ``response``, ``answer``, optional ``options``, ``expected_accuracy``,
optional ``expected_format`` (0 or 1), ``expected_status`` (``ok`` or ``unverifiable``),
``tol``, ``params`` (the verifier's params for this case) and a one-line ``reason``. Unknown
keys are errors, so a typo never drops a field silently. :func:`case_line` writes a line in
this layout, which is how ``reward check`` shows a counterexample: paste it into the file.

Example:
    >>> line = case_line("c-1", "numerical", "<answer>12</answer>", "12", None, 1.0, "a gold")
    >>> print(line)  # doctest: +NORMALIZE_WHITESPACE
    {"id": "c-1", "problem_type": "numerical", "response": "<answer>12</answer>", "answer": "12",
     "expected_accuracy": 1.0, "reason": "a gold"}
    >>> parse_case(line).expected_accuracy
    1.0
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from videorl_kit.core.errors import UserError
from videorl_kit.core.problem_types import canonical_problem_type
from videorl_kit.core.safe_text import to_json
from videorl_kit.rewards.result import RewardResult

#: Weights of the reward function cases are graded with (the router's defaults).
CASE_WEIGHTS = (0.9, 0.1)


class CaseFileError(UserError, ValueError):
    """A case file that cannot be read; the message names every bad line."""


class GoldenCase(BaseModel):
    """One graded response. Unknown keys are errors (a typo must not silently drop a field).

    Example:
        >>> GoldenCase(id="x", problem_type="mcq", response="B", answer="B",
        ...            expected_accuracy=1, reason="a letter").problem_type
        'multiple_choice'
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    problem_type: str
    response: str
    answer: str | dict[str, Any] | list[Any]
    options: list[str] | None = None
    expected_accuracy: float = Field(ge=0.0, le=1.0)
    expected_format: Literal[0.0, 1.0] | None = None
    expected_status: Literal["ok", "unverifiable"] = "ok"
    tol: float = Field(default=1e-6, ge=0.0, le=0.05)
    params: dict[str, Any] | None = None
    reason: str = Field(min_length=3)

    @field_validator("problem_type")
    @classmethod
    def _known_type(cls, value: str) -> str:
        return canonical_problem_type(value).value

    @field_validator("reason")
    @classmethod
    def _one_line(cls, value: str) -> str:
        if "\n" in value:
            raise ValueError("reason must be one line")
        return value

    def model_post_init(self, __context: Any) -> None:
        if self.expected_status == "unverifiable" and self.expected_accuracy != 0.0:
            raise ValueError("an unverifiable case must expect accuracy 0")


def parse_case(line: str) -> GoldenCase:
    """One line of a case file as a :class:`GoldenCase` (``ValueError`` when it is not one)."""
    return GoldenCase.model_validate(json.loads(line))


def load_cases(path: Path | str) -> list[GoldenCase]:
    """Every case of ``path``; one :class:`CaseFileError` lists every bad line (``file:line``).

    Example:
        >>> import tempfile, pathlib
        >>> bad = pathlib.Path(tempfile.mkdtemp()) / "x.jsonl"
        >>> _ = bad.write_text('{"id": "a"}\\n')
        >>> load_cases(bad)
        Traceback (most recent call last):
        ...
        videorl_kit.testing.cases.CaseFileError: x.jsonl:1: ...
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CaseFileError(f"{path}: no such case file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CaseFileError(f"{path}: cannot read ({exc})") from None
    cases: list[GoldenCase] = []
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            cases.append(parse_case(line))
        except (ValueError, ValidationError) as exc:
            problems.append(f"{path.name}:{number}: {exc}".replace("\n", " "))
    if problems:
        raise CaseFileError("\n".join(problems))
    return cases


def answer_text(answer: str | dict[str, Any] | list[Any]) -> str:
    """A case's answer as the text the reward function reads (JSON for structures)."""
    return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)


def disagreements(case: GoldenCase, result: RewardResult) -> list[str]:
    """How ``result`` differs from what ``case`` expects (empty when it agrees).

    Example:
        >>> case = parse_case(case_line("c", "boolean", "yes", "yes", None, 1.0, "plain yes"))
        >>> disagreements(case, RewardResult(0.0, 0.0, 0.0))
        ['accuracy 0.000000 != expected 1.0']
    """
    problems = []
    if result.status != case.expected_status:
        problems.append(f"status {result.status!r} != expected {case.expected_status!r}")
    if abs(result.accuracy - case.expected_accuracy) > case.tol:
        problems.append(f"accuracy {result.accuracy:.6f} != expected {case.expected_accuracy}")
    if case.expected_format is not None and result.format != case.expected_format:
        problems.append(f"format {result.format} != expected {case.expected_format}")
    w_acc, w_fmt = CASE_WEIGHTS
    if (
        result.status == "ok"
        and abs(result.overall - (w_acc * result.accuracy + w_fmt * result.format)) > 1e-9
    ):
        problems.append(f"overall {result.overall} is not {w_acc}*accuracy + {w_fmt}*format")
    return problems


def case_line(
    case_id: str,
    problem_type: str,
    response: str,
    answer: str,
    options: list[str] | None,
    expected_accuracy: float,
    reason: str,
    *,
    expected_status: str = "ok",
    params: dict[str, Any] | None = None,
) -> str:
    """One line of a case file, ready to paste (lone surrogates escaped, reason on one line).

    Example:
        >>> print(case_line("x", "boolean", "<answer>?</answer>", "", None, 0.0,
        ...                 "an empty gold", expected_status="unverifiable"))
        ... # doctest: +NORMALIZE_WHITESPACE
        {"id": "x", "problem_type": "boolean", "response": "<answer>?</answer>", "answer": "",
         "expected_accuracy": 0.0, "expected_status": "unverifiable", "reason": "an empty gold"}
    """
    row: dict[str, Any] = {
        "id": case_id,
        "problem_type": problem_type,
        "response": response,
        "answer": answer,
    }
    if options is not None:
        row["options"] = list(options)
    if params:
        row["params"] = params
    row["expected_accuracy"] = float(expected_accuracy)
    if expected_status != "ok":
        row["expected_status"] = expected_status
    row["reason"] = " ".join(reason.split()) or "found by reward check"
    return to_json(row)
