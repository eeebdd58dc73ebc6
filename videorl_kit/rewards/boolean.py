"""Yes/no questions: the ``boolean`` verifier.

The answer (after the final-statement refinement) is read as yes or no:

* a leading ``yes``/``true``/``correct`` or ``no``/``false``/``incorrect`` word decides
  (``Yes, it is`` is yes; ``No, that is not true`` is no); so does a leading Chinese
  ``是``/``对``/``有`` (yes) or ``不``/``否``/``没有`` (no);
* otherwise the one polarity among its boolean words (``not true`` reads no);
* ``yes and no``, ``yes/no``, ``yes or no``, or both polarities without a leading word are
  hedges and score 0; ``1``/``0`` are not yes/no answers (the question asks for words).

The ground truth is yes/no/true/false (``1``/``0`` accepted there, a common data convention);
anything else is unverifiable.

Example:
    >>> v = BooleanVerifier(BooleanParams())
    >>> v.score("Yes, it is.", "yes").accuracy, v.score("yes and no", "yes").accuracy
    (1.0, 0.0)
    >>> v.score("It is not true", "no").accuracy
    1.0
"""

from __future__ import annotations

import re
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from videorl_kit.rewards.base import VerifyOutcome
from videorl_kit.rewards.extract import clean_answer
from videorl_kit.rewards.registry import register_verifier
from videorl_kit.rewards.text import clean_gold, refine_answer

#: Only this many leading characters of an answer are read.
MAX_BOOLEAN_ANSWER_CHARS = 2000

_YES = frozenset({"yes", "true", "correct", "yeah", "yep", "affirmative"})
_NO = frozenset({"no", "false", "incorrect", "nope", "negative"})
_BOOL_WORD = r"yes|no|true|false|correct|incorrect|yeah|yep|nope|affirmative|negative"
_HEDGE_RE = re.compile(
    rf"\b(?P<a>{_BOOL_WORD})\s{{0,3}}(?:/|\bor\b|\band\b|,|\|)\s{{0,3}}(?:maybe\s{{1,3}})?"
    rf"(?P<b>{_BOOL_WORD})\b",
    re.IGNORECASE,
)
_WORD_RE = re.compile(rf"\b(?P<w>{_BOOL_WORD})\b", re.IGNORECASE)
_NEGATED_RE = re.compile(r"(?:\bnot|n['’]t)\s{1,3}$", re.IGNORECASE)
_LEAD_RE = re.compile(r"[\W_]*(?P<w>[A-Za-z]+)")
_CN_NO = ("不", "否", "错", "没有", "沒有")
_CN_YES = ("是", "对", "對", "正确", "正確", "没错", "有")


def _polarity(word: str) -> str | None:
    word = word.casefold()
    return "yes" if word in _YES else "no" if word in _NO else None


def parse_boolean(text: str) -> tuple[str | None, str | None]:
    """``("yes" | "no", None)`` or ``(None, reason)`` for an answer text.

    Example:
        >>> parse_boolean("No, the man does not run.")
        ('no', None)
        >>> parse_boolean("yes/no")
        (None, 'hedged answer (yes and no)')
    """
    text = clean_answer(text[:MAX_BOOLEAN_ANSWER_CHARS])
    if not text:
        return None, "empty answer"
    for m in _HEDGE_RE.finditer(text):
        a, b = _polarity(m.group("a")), _polarity(m.group("b"))
        if a and b and a != b:
            return None, f"hedged answer ({a} and {b})"
    if not text[0].isascii():
        if text.startswith(_CN_NO):  # checked first: "不是" starts with "不"
            return "no", None
        if text.startswith(_CN_YES):
            return "yes", None
    lead = _LEAD_RE.match(text)
    if lead:
        first = _polarity(lead.group("w"))
        if first and lead.group("w").casefold() != "negative":
            return first, None
    seen: set[str] = set()
    for m in _WORD_RE.finditer(text):
        pol = _polarity(m.group("w"))
        if pol is None:
            continue
        if _NEGATED_RE.search(text, max(0, m.start() - 8), m.start()):
            pol = "no" if pol == "yes" else "yes"
        seen.add(pol)
    if len(seen) == 1:
        return seen.pop(), None
    if len(seen) > 1:
        return None, "both yes and no in the answer"
    return None, "no yes/no answer found"


@lru_cache(maxsize=4096)
def _gold_boolean(gold: str) -> tuple[str | None, str]:
    text = clean_gold(gold)
    if text in ("1", "0"):
        return ("yes" if text == "1" else "no"), ""
    value, reason = parse_boolean(text)
    return value, ("" if value else f"ground truth is not yes/no: {reason}")


class BooleanParams(BaseModel):
    """Parameters of the ``boolean`` verifier (none)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@register_verifier(
    name="boolean",
    version=1,
    problem_types=("boolean",),
    params_model=BooleanParams,
)
class BooleanVerifier:
    """1 when the answer's yes/no equals the gold's; hedges score 0."""

    def __init__(self, params: BooleanParams) -> None:
        self.params = params

    def score(self, answer_text: str, gold: str, options: list[str] | None = None) -> VerifyOutcome:
        """Grade the extracted answer's yes/no against the gold."""
        gold_value, why = _gold_boolean(gold)
        if gold_value is None:
            return VerifyOutcome.unverifiable(why)
        pred, reason = parse_boolean(refine_answer(answer_text))
        if pred is None:
            return VerifyOutcome.wrong(reason or "no yes/no answer", gold=gold_value)
        return VerifyOutcome.ok(1.0 if pred == gold_value else 0.0, pred=pred, gold=gold_value)
