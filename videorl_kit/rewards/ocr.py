"""OCR: the ``wer`` verifier, accuracy = max(0, 1 − word error rate).

Words are compared case-insensitively and punctuation-insensitively: text is case-folded,
apostrophes are dropped (``don't`` = ``dont``), other punctuation separates words, and each
CJK character counts as one word (scripts without spaces). The first
:data:`MAX_OCR_CHARS` characters of an answer are read. WER = word-level Levenshtein
distance / number of ground-truth words. An empty ground truth is unverifiable; an empty answer
scores 0.

Example:
    >>> v = WerVerifier(WerParams())
    >>> v.score("Hello Word", "hello world").accuracy
    0.5
    >>> v.score("HELLO, world!", "hello world").accuracy
    1.0
"""

from __future__ import annotations

import re
from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field

from videorl_kit.core.verifiers import register_verifier
from videorl_kit.rewards.base import VerifyOutcome
from videorl_kit.rewards.sequence import edit_distance
from videorl_kit.rewards.text import clean_gold

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_WORD_RE = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")
_SEPARATOR_RE = re.compile(r"[\W_]+")
#: A quoted span: "EXIT 12", “EXIT 12”, «EXIT 12», 「EXIT 12」.
_QUOTED_RE = re.compile(
    r'"([^"\n]{1,500})"|“([^”\n]{1,500})”|«([^»\n]{1,500})»|「([^」\n]{1,500})」'
)
#: At most this many words around a quote make a frame (``The sign says "EXIT 12".``).
MAX_FRAME_WORDS = 8


def quoted_reading(answer: str) -> str:
    """The text a short sentence quotes (round 4: ``The sign says "EXIT 12".`` reads ``EXIT
    12``; the frame's words were insertions), else ``answer``. Only one quoted text counts:
    two different quotes (``"EXIT 12" or "EXIT 13"``) are read as written, and so is a quote
    inside a frame of more than :data:`MAX_FRAME_WORDS` words.

    Example:
        >>> quoted_reading('The sign says "EXIT 12".'), quoted_reading('"A" or "B"')
        ('EXIT 12', '"A" or "B"')
    """
    if len(answer) > 2000 or not any(q in answer for q in '"“«「'):
        return answer
    found = [m for m in _QUOTED_RE.finditer(answer)]
    quotes = {next(g for g in m.groups() if g is not None).strip() for m in found}
    if len(quotes) != 1:
        return answer
    frame = _QUOTED_RE.sub(" ", answer)
    if len(ocr_words(frame, limit=MAX_FRAME_WORDS + 1)) > MAX_FRAME_WORDS:
        return answer
    return quotes.pop()


#: Only the first this-many characters of an answer are read.
MAX_OCR_CHARS = 200_000


def ocr_words(text: str, limit: int | None = None, *, casefold: bool = True) -> list[str]:
    """Words of ``text`` (at most ``limit``), punctuation-insensitive, case-folded by default.

    Example:
        >>> ocr_words("Don't STOP-me now! 你好")
        ['dont', 'stop', 'me', 'now', '你', '好']
    """
    text = text[:MAX_OCR_CHARS].replace("'", "").replace("’", "")
    # Splitting on separator runs is linear with a small constant even on 1 MB floods.
    parts = _SEPARATOR_RE.split(text, maxsplit=0 if limit is None else limit + 1)
    if limit is not None and len(parts) > limit + 1:
        parts = parts[: limit + 1]  # the last part is the unsplit remainder
    words: list[str] = []
    for part in parts:
        if not part:
            continue
        if casefold:
            part = part.casefold()
        if part.isascii():
            words.append(part)
        else:  # CJK characters are words of their own
            for m in _WORD_RE.finditer(part):
                words.append(m.group())
                if limit is not None and len(words) >= limit:
                    break
        if limit is not None and len(words) >= limit:
            break
    return words if limit is None else words[:limit]


#: LaTeX's ``\text{}`` around a transcription (``\boxed{\text{EXIT 12}}``) is no word of it.
_LATEX_TEXT_RE = re.compile(r"\\text(?:bf|it|rm|tt|normal)?\s{0,2}\{([^{}]{0,4000})\}")


@lru_cache(maxsize=8192)
def _gold_words(gold: str, casefold: bool) -> tuple[str, ...]:
    return tuple(ocr_words(clean_gold(gold), casefold=casefold))


class WerParams(BaseModel):
    """Parameters of the ``wer`` verifier."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: Compare letter case too (default: case-insensitive).
    case_sensitive: bool = Field(default=False)


@register_verifier(name="wer", version=2, problem_types=("ocr",), params_model=WerParams)
class WerVerifier:
    """max(0, 1 − WER), case- and punctuation-insensitive, word-level Levenshtein."""

    def __init__(self, params: WerParams) -> None:
        self.params = params

    def score(self, answer_text: str, gold: str, options: list[str] | None = None) -> VerifyOutcome:
        """1 − WER of the extracted answer against the gold text."""
        casefold = not self.params.case_sensitive
        gold_words = _gold_words(gold, casefold)
        if not gold_words:
            return VerifyOutcome.unverifiable("empty ground truth (no words)")
        n = len(gold_words)
        if "\\text" in answer_text:  # "\boxed{\text{EXIT 12}}"
            answer_text = _LATEX_TEXT_RE.sub(r"\1", answer_text)
        # WER >= (len(pred) - n) / n, so 2n predicted words already score 0: read no more.
        pred_words = ocr_words(quoted_reading(answer_text), limit=2 * n, casefold=casefold)
        if len(pred_words) >= 2 * n:
            return VerifyOutcome.wrong("answer has at least twice as many words as the gold")
        distance = edit_distance(pred_words, gold_words)
        wer = distance / n
        return VerifyOutcome.ok(max(0.0, 1.0 - wer), wer=wer, edits=distance, gold_words=n)
