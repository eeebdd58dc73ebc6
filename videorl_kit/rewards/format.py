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

from videorl_kit.core.reward_rules import FORMAT_RULES
from videorl_kit.rewards.extract import Extraction, Tag, extract_answer

#: (kind, closing) of each tag of the two allowed shapes.
_WITH_THINK = (("think", False), ("think", True), ("answer", False), ("answer", True))
_ANSWER_ONLY = _WITH_THINK[2:]


@dataclass(frozen=True, slots=True)
class FormatCheck:
    """Format score (0 or 1) and, when 0, the reason."""

    score: float
    reason: str | None = None


_PASS = FormatCheck(1.0)
#: The fixed-reason failures (immutable, so shared).
_TEXT_BEFORE = FormatCheck(0.0, "text before the first tag")
_TEXT_BETWEEN = FormatCheck(0.0, "text between </think> and <answer>")
_TEXT_AFTER = FormatCheck(0.0, "text after </answer>")
_EMPTY_ANSWER = FormatCheck(0.0, "empty <answer> block")
_NO_ANSWER = FormatCheck(0.0, "no <answer> block")
_OUT_OF_ORDER = FormatCheck(0.0, "tags out of order or unbalanced")
_UNTERMINATED_THINK = FormatCheck(0.0, "unterminated <think> block")
_TAG_VARIANT = FormatCheck(0.0, "a tag written another way (`< answer>`, `<answer id=..>`)")


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
    if ex.tag_variants:
        return _TAG_VARIANT
    if tuple((tag.kind, tag.closing) for tag in tags) not in (_WITH_THINK, _ANSWER_ONLY):
        return _bad_shape(tags)
    a_open, a_close = tags[-2:]
    if _has_text(text[: tags[0].start]):
        return _TEXT_BEFORE
    if len(tags) == 4 and _has_text(text[tags[1].end : a_open.start]):
        return _TEXT_BETWEEN
    if _has_text(text[a_close.end :]):
        return _TEXT_AFTER
    if not _has_text(text[a_open.end : a_close.start]):
        return _EMPTY_ANSWER
    return _PASS


def _has_text(piece: str) -> bool:
    """True unless ``piece`` is empty or whitespace."""
    return bool(piece) and not piece.isspace()


def _bad_shape(tags: tuple[Tag, ...]) -> FormatCheck:
    """Why tags that are not one of the two allowed shapes fail."""
    n_answer = sum(1 for t in tags if t.kind == "answer" and not t.closing)
    n_think = sum(1 for t in tags if t.kind == "think" and not t.closing)
    if n_answer == 0:
        return _NO_ANSWER
    if n_answer > 1:
        return FormatCheck(0.0, f"{n_answer} <answer> blocks (exactly one allowed)")
    if n_think > 1:
        return FormatCheck(0.0, f"{n_think} <think> blocks (at most one allowed)")
    if n_think > sum(1 for t in tags if t.kind == "think" and t.closing):
        return _UNTERMINATED_THINK
    return _OUT_OF_ORDER


def format_score(response: str | Extraction, rule: str = "answer_tag") -> float:
    """Just the score of :func:`check_format` (1.0 or 0.0).

    Example:
        >>> format_score("<answer>42</answer>\\n")
        1.0
    """
    return check_format(response, rule).score
