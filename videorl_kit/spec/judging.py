"""A judge model's turn and its reading: the prompt a spec's ``eval.judge`` renders for one
answer, and the verdict read back from the judge's text.

The prompt is a sandboxed Jinja template (as every spec template) over ``question``,
``options``, ``gold``, ``answer`` (the final answer the kit extracted from the response) and
``response`` (the whole response). The verdict is read by a fixed rule, never by a pattern
from the spec: ``judgement_01`` takes the last ``Judgement: 1`` or ``Judgement: 0`` (else a
final ``1`` or ``0``), ``correct_incorrect`` the last ``Correct`` or ``Incorrect``; a text
with neither has no verdict (the question is then reported as not scored, never as 0).

Example:
    >>> parse_verdict("The answer matches.\\nJudgement: 1", "judgement_01")
    1.0
    >>> parse_verdict("Incorrect, the gold is B.", "correct_incorrect")
    0.0
    >>> parse_verdict("I cannot tell.", "judgement_01") is None
    True
"""

from __future__ import annotations

import re
from typing import Any

from videorl_kit.spec.eval_section import JudgeSpec, JudgeVerdict
from videorl_kit.spec.prompt import render_template

#: What a judge template sees in ``validate`` (made-up values of every variable).
JUDGE_SYNTHETIC_VARIABLES: dict[str, Any] = {
    "question": "What happens in the video?",
    "options": None,
    "gold": "The man opens the door.",
    "answer": "He opens the door.",
    "response": "<think>...</think><answer>He opens the door.</answer>",
}

_JUDGEMENT = re.compile(r"judge?ment\s*[:：]\s*([01])\b", re.IGNORECASE)
_CORRECTNESS = re.compile(r"\b(correct|incorrect)\b", re.IGNORECASE)
#: Judge outputs are read from their last 4,000 characters (the verdict comes last).
_TAIL = 4000


def judge_prompt(
    judge: JudgeSpec,
    *,
    question: str,
    options: list[str] | None,
    gold: str,
    answer: str,
    response: str,
) -> str:
    """The judge's turn for one answer (a :class:`~videorl_kit.core.errors.UserError` when the
    template does not render).

    Example:
        >>> spec = JudgeSpec(problem_types=["open_ended"],
        ...     prompt="Q: {{ question }}\\nGold: {{ gold }}\\nAnswer: {{ answer }}")
        >>> judge_prompt(spec, question="Where?", options=None, gold="Kitchen",
        ...     answer="the kitchen", response="the kitchen")
        'Q: Where?\\nGold: Kitchen\\nAnswer: the kitchen'
    """
    return render_template(
        judge.prompt, question=question, options=options, gold=gold, answer=answer,
        response=response,
    )  # fmt: skip


def parse_verdict(text: str, rule: JudgeVerdict) -> float | None:
    """1.0 (correct), 0.0 (wrong) or None (no verdict) read from a judge's output.

    Example:
        >>> parse_verdict("reasoning ... 0", "judgement_01")
        0.0
        >>> parse_verdict("Judgement: 0 ... on reflection, Judgement: 1", "judgement_01")
        1.0
    """
    tail = text[-_TAIL:]
    if rule == "judgement_01":
        found = _JUDGEMENT.findall(tail)
        if found:
            return float(found[-1])
        stripped = tail.rstrip().rstrip(".")
        if stripped.endswith(("0", "1")) and not stripped[-2:-1].isdigit():
            return float(stripped[-1])
        return None
    words = _CORRECTNESS.findall(tail)
    if not words:
        return None
    return 1.0 if words[-1].lower() == "correct" else 0.0
