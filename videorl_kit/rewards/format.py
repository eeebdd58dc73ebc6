"""Format rules: does the response have the shape the prompt asked for?

``answer_tag`` (default): after removing special tokens (``<|im_end|>``, ...), the response is

    [whitespace] [<think> reasoning </think> whitespace] <answer> content </answer> [whitespace]

with exactly one non-empty answer block, at most one think block (``<thought>`` counts as
``<think>``), no other tags and **no text before** ``<think>``/``<answer>`` or after
``</answer>``. Format is 1 or 0: the content's type is the verifier's business (a wrong-type
answer loses accuracy, not format), so the format reward cannot be farmed with empty or
duplicated tags.

``none``: format is always 1 (for prompts that do not ask for tags).

Example:
    >>> format_score("<think>hmm</think>\\n<answer>B</answer>")
    1.0
    >>> format_score("<answer>A</answer><answer>B</answer>")
    0.0
    >>> check_format("Sure! <answer>B</answer>").reason
    'text before the first tag'
    >>> format_score("The answer is B", rule="none")
    1.0
"""

from __future__ import annotations

from dataclasses import dataclass

from videorl_kit.rewards.extract import Extraction, extract_answer

FORMAT_RULES: tuple[str, ...] = ("answer_tag", "none")

_WITH_THINK = (("think", False), ("think", True), ("answer", False), ("answer", True))
_ANSWER_ONLY = (("answer", False), ("answer", True))


@dataclass(frozen=True, slots=True)
class FormatCheck:
    """Format score (0 or 1) and, when 0, the reason."""

    score: float
    reason: str | None = None


_PASS = FormatCheck(1.0)


def _blank(text: str, start: int, end: int) -> bool:
    return start >= end or text[start:end].isspace()


def check_format(response: str | Extraction, rule: str = "answer_tag") -> FormatCheck:
    """Apply format ``rule`` to a raw response (or an existing :class:`Extraction`).

    Raises ``ValueError`` for an unknown rule (a configuration error, not model output).

    Example:
        >>> check_format("<answer> </answer>")
        FormatCheck(score=0.0, reason='empty <answer> block')
    """
    if rule == "none":
        return _PASS
    if rule != "answer_tag":
        raise ValueError(f"unknown format rule {rule!r}; valid rules: {', '.join(FORMAT_RULES)}")
    ex = response if isinstance(response, Extraction) else extract_answer(response)
    tags, text = ex.tags, ex.text
    n = len(tags)
    shape = tuple((t.kind, t.closing) for t in tags) if n in (2, 4) else ()
    if shape not in (_WITH_THINK, _ANSWER_ONLY):
        n_answer = sum(1 for t in tags if t.kind == "answer" and not t.closing)
        n_think = sum(1 for t in tags if t.kind == "think" and not t.closing)
        if n_answer == 0:
            return FormatCheck(0.0, "no <answer> block")
        if n_answer > 1:
            return FormatCheck(0.0, f"{n_answer} <answer> blocks (exactly one allowed)")
        if n_think > 1:
            return FormatCheck(0.0, f"{n_think} <think> blocks (at most one allowed)")
        return FormatCheck(0.0, "tags out of order or unbalanced")
    if not _blank(text, 0, tags[0].start):
        return FormatCheck(0.0, "text before the first tag")
    a_open, a_close = tags[-2], tags[-1]
    if len(tags) == 4 and not _blank(text, tags[1].end, a_open.start):
        return FormatCheck(0.0, "text between </think> and <answer>")
    if not _blank(text, a_close.end, len(text)):
        return FormatCheck(0.0, "text after </answer>")
    if _blank(text, a_open.end, a_close.start):
        return FormatCheck(0.0, "empty <answer> block")
    return _PASS


def format_score(response: str | Extraction, rule: str = "answer_tag") -> float:
    """Just the score of :func:`check_format` (1.0 or 0.0).

    Example:
        >>> format_score("<answer>42</answer>\\n")
        1.0
    """
    return check_format(response, rule).score
