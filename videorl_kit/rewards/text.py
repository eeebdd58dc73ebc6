"""Small text helpers shared by the verifiers (normalisation, refining an answer, gold cleanup).

Example:
    >>> normalize_text("  The Kitchen! ")
    'the kitchen'
    >>> refine_answer("I counted twice, so the answer is 5.")
    '5'
"""

from __future__ import annotations

import re

from videorl_kit.rewards.extract import find_final_statement, scan_tags, strip_special_tokens

_PUNCT_RE = re.compile(r"[^\w\s]|_")
_WS_RE = re.compile(r"\s+")
_ARTICLES_RE = re.compile(r"\b(?:a|an|the)\b")


def normalize_text(text: str, *, drop_articles: bool = False) -> str:
    """Case-folded text with punctuation removed and whitespace collapsed.

    Example:
        >>> normalize_text("A  red-ish, car.", drop_articles=True)
        'redish car'
    """
    text = text.casefold().replace("'", "").replace("’", "")
    text = _PUNCT_RE.sub(" ", text.replace("-", ""))
    if drop_articles:
        text = _ARTICLES_RE.sub(" ", text)
    return _WS_RE.sub(" ", text).strip()


def refine_answer(answer: str) -> str:
    """The final statement inside an answer (``<answer>so the answer is 5</answer>``), else it.

    Example:
        >>> refine_answer("B")
        'B'
    """
    final = find_final_statement(answer)
    return final if final else answer.strip()


def clean_gold(gold: object) -> str:
    """Ground truth as text: special tokens removed, the last ``<answer>`` block if tagged.

    Example:
        >>> clean_gold("<answer> B </answer>")
        'B'
        >>> clean_gold(5)
        '5'
    """
    if type(gold) is str and "<" not in gold:  # no special token, no tag: nothing to remove
        return gold.strip()
    text = gold if isinstance(gold, str) else ("" if gold is None else str(gold))
    text, _ = strip_special_tokens(text)
    last: str | None = None
    opened: int | None = None
    for tag in scan_tags(text):
        if tag.kind != "answer":
            continue
        if not tag.closing:
            opened = tag.end
        elif opened is not None:
            last, opened = text[opened : tag.start], None
    return (text if last is None else last).strip()
