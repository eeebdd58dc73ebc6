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
from videorl_kit.rewards.extract import Extraction, Tag, extract_answer, well_formed_extraction

#: (kind, closing) of each tag, flattened, of the two allowed shapes.
_WITH_THINK = ("think", False, "think", True, "answer", False, "answer", True)
_ANSWER_ONLY = ("answer", False, "answer", True)


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
    if n == 4:
        first, t_close, a_open, a_close = tags
        kinds = (first[2], first[3], t_close[2], t_close[3])
        if (*kinds, a_open[2], a_open[3], a_close[2], a_close[3]) != _WITH_THINK:
            return _bad_shape(tags)
        if t_close.end < a_open.start and not text[t_close.end : a_open.start].isspace():
            between = True
        else:
            between = False
    elif n == 2:
        first = a_open = tags[0]
        a_close = tags[1]
        if (a_open[2], a_open[3], a_close[2], a_close[3]) != _ANSWER_ONLY:
            return _bad_shape(tags)
        between = False
    else:
        return _bad_shape(tags)
    if first.start and not text[: first.start].isspace():
        return _TEXT_BEFORE
    if between:
        return _TEXT_BETWEEN
    if a_close.end < len(text) and not text[a_close.end :].isspace():
        return _TEXT_AFTER
    if a_open.end >= a_close.start or text[a_open.end : a_close.start].isspace():
        return _EMPTY_ANSWER
    return _PASS


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


_BY_REASON: dict[str | None, FormatCheck] = {
    None: _PASS,
    _TEXT_BEFORE.reason: _TEXT_BEFORE,
    _TEXT_BETWEEN.reason: _TEXT_BETWEEN,
    _TEXT_AFTER.reason: _TEXT_AFTER,
    _EMPTY_ANSWER.reason: _EMPTY_ANSWER,
}


def extract_with_format(response: str, rule: str = "answer_tag") -> tuple[Extraction, FormatCheck]:
    """``(extract_answer(response), check_format(that, rule))`` in one pass when it can.

    A well-formed response (see :func:`~videorl_kit.rewards.extract.well_formed_extraction`)
    gets both from the same few string operations; any other goes through the two steps.

    Example:
        >>> ex, fmt = extract_with_format("<think>x</think><answer>7</answer> ok")
        >>> ex.answer, fmt.reason
        ('7', 'text after </answer>')
    """
    if rule == "answer_tag" and type(response) is str:
        quick = well_formed_extraction(response)
        if quick is not None:
            return quick[0], _BY_REASON[quick[1]]
    ex = extract_answer(response)
    return ex, check_format(ex, rule)


def format_score(response: str | Extraction, rule: str = "answer_tag") -> float:
    """Just the score of :func:`check_format` (1.0 or 0.0).

    Example:
        >>> format_score("<answer>42</answer>\\n")
        1.0
    """
    return check_format(response, rule).score
