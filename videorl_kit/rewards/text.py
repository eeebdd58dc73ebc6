"""Small text helpers shared by the verifiers (normalisation, refining an answer, gold cleanup).

Example:
    >>> normalize_text("  The Kitchen! ")
    'the kitchen'
    >>> refine_answer("I counted twice, so the answer is 5.")
    '5'
    >>> asserted_answer("not A; it is B")
    'B'
"""

from __future__ import annotations

import re
import unicodedata

from videorl_kit.rewards.extract import find_final_statement, scan_tags, strip_special_tokens

_PUNCT_RE = re.compile(r"[^\w\s]|_")
_WS_RE = re.compile(r"\s+")
_ARTICLES_RE = re.compile(r"\b(?:a|an|the)\b")
_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺"
_SUPERSCRIPT_RUN_RE = re.compile(f"[{_SUPERSCRIPTS}]+")
_FROM_SUPERSCRIPT = str.maketrans(_SUPERSCRIPTS, "0123456789-+")
#: Longer texts are not folded: no verifier reads that much of an answer as letters or numbers,
#: and folding a megabyte would take longer than grading it.
MAX_FOLD_CHARS = 8192


def fold_compat(text: str) -> str:
    """Unicode compatibility forms folded to plain ones (NFKC): full-width ``Ｂ``, ``１２``,
    ``３．５``, circled ``Ⓑ``, no-break spaces. A run of superscript digits is an exponent and
    becomes ``^`` plus the digits first (``10³`` is ``10^3``, never ``103``). Texts longer than
    :data:`MAX_FOLD_CHARS` are returned as they are.

    Example:
        >>> fold_compat("（Ｃ）"), fold_compat("１，０００"), fold_compat("10³"), fold_compat("B")
        ('(C)', '1,000', '10^3', 'B')
    """
    if text.isascii() or len(text) > MAX_FOLD_CHARS:
        return text
    if _SUPERSCRIPT_RUN_RE.search(text):
        text = _SUPERSCRIPT_RUN_RE.sub(lambda m: "^" + m.group().translate(_FROM_SUPERSCRIPT), text)
    return unicodedata.normalize("NFKC", text)


def normalize_text(text: str, *, drop_articles: bool = False) -> str:
    """Case-folded text with punctuation removed and whitespace collapsed.

    Example:
        >>> normalize_text("A  red-ish, car.", drop_articles=True)
        'redish car'
    """
    text = fold_compat(text).casefold().replace("'", "").replace("’", "")
    text = _PUNCT_RE.sub(" ", text.replace("-", ""))
    if drop_articles:
        text = _ARTICLES_RE.sub(" ", text)
    return _WS_RE.sub(" ", text).strip()


def refine_answer(answer: str) -> str:
    """The final statement inside an answer (``<answer>so the answer is 5</answer>``), else it;
    compatibility forms folded (:func:`fold_compat`).

    Example:
        >>> refine_answer("B"), refine_answer("The answer is Ｄ．")
        ('B', 'D')
    """
    answer = fold_compat(answer)
    final = find_final_statement(answer)
    return final if final else answer.strip()


#: Where an answer splits into clauses: ``; ! ? ( ) [ ]``, ``, :`` not before a digit and ``.``
#: before a space or the end (not inside ``3.5``, ``1,000``, ``1:30``), a dash between spaces,
#: and the word "but".
_CLAUSE_SPLIT_RE = re.compile(
    r"[;!?()\[\]]|[,:](?!\d)|\.(?=\s|$)|\s[-–—]\s|—|\bbut\b", re.IGNORECASE
)
#: A clause that only rejects something, at its start ("not A", "it is not 5", "isn't C") ...
_REJECTS_AT_START_RE = re.compile(
    r"\s{0,8}(?:(?:and|or|so)\s{1,3})?"
    r"(?:(?:it|that|this|there|the\s{1,3}(?:correct\s{1,3}|right\s{1,3}|final\s{1,3})?"
    r"(?:answer|option|choice|response))\s{0,3}(?:is|was|are|were|'s|’s)\s{1,3}"
    r"|(?:definitely|certainly|clearly|surely|absolutely)\s{1,3})?not\b"
    r"|\s{0,8}(?:it|that|this|there)\s{0,3}(?:isn|wasn|aren|weren)['’]t\b"
    r"|\s{0,8}no\s{1,3}(?:tie|draw|option\s{1,3}[a-z]|[a-z])\s{0,8}$"  # "no tie", "no D"
    r"|\s{0,8}(?:而|并)?(?:不是|并非)",
    re.IGNORECASE,
)
#: ... or at its end ("A is wrong", "B is not correct", "C is not", "D isn't").
_REJECTS_AT_END_RE = re.compile(
    r"\b(?:(?:is|was|are|seems)\s{1,3}(?:wrong|incorrect|false"
    r"|not\s{1,3}(?:correct|right|it|the\s{1,3}answer))|(?:is|was)\s{1,3}not|isn['’]t)\s{0,8}$",
    re.IGNORECASE,
)
#: Words without which no clause is a rejection (a quick test before splitting).
_REJECTION_HINT_RE = re.compile(
    r"not|n['’]t|wrong|incorrect|false|no |instead|rather|不是|并非", re.IGNORECASE
)
#: Phrases that reject what follows them: "C rather than D", "4 instead of 5", "A and not B".
_REJECTING_LINK_RE = re.compile(
    r"\s{0,3},?\s{0,3}\b(?:instead\s{1,3}of|rather\s{1,3}than|and\s{1,3}not|but\s{1,3}not)\b\s{0,3}",
    re.IGNORECASE,
)
#: A statement frame in front of the answer: "it is", "it's", "the answer is", "I think it's",
#: "so" (after a dropped rejection: "It is not A or B, so C").
_FRAME_RE = re.compile(
    r"\s{0,8}(?:(?:so|therefore|thus|hence|then|instead)\b,?\s{1,3})?"
    r"(?:i\s{1,3}(?:think|believe|guess|would\s{1,3}say)\s{1,3}(?:that\s{1,3})?)?"
    r"(?:(?:it|that|this)\s{0,3}(?:is|was|'s|’s)\s{1,3}"
    r"|the\s{1,3}(?:correct\s{1,3}|right\s{1,3}|final\s{1,3}|best\s{1,3})?"
    r"(?:answer|option|choice)\s{1,3}(?:is|was|would\s{1,3}be|should\s{1,3}be)\s{1,3})?",
    re.IGNORECASE,
)
#: Longest answer whose clauses are examined (longer text is returned as it is).
MAX_ASSERTED_CHARS = 2000


def asserted_answer(answer: str) -> str:
    """What an answer asserts: clauses that only reject something ("not A", "it is not 5",
    "A is wrong", "isn't C", what follows "instead of", "rather than", "and not") are dropped,
    then a leading "it is" / "the answer is" / "I think it's" frame. ``""`` when every clause is
    a rejection (the answer names nothing).

    Clauses end at ``; ! ? ( ) [ ]``, at ``, :`` not before a digit, at ``.`` before a space or
    the end, at a spaced dash and at "but". A hedge stays a hedge ("A or B, not C" asserts
    "A or B"), and the frame is kept in front of more than one clause ("I think it's B, but it
    could be C").

    Example:
        >>> asserted_answer("4, not 5"), asserted_answer("not 5 but 4")
        ('4', '4')
        >>> asserted_answer("C (not D)"), asserted_answer("It isn't C, it's D.")
        ('C', 'D')
        >>> asserted_answer("not B")
        ''
        >>> asserted_answer("A or B, not C"), asserted_answer("It is Paris.")
        ('A or B', 'Paris.')
    """
    text = answer.strip()
    if len(text) > MAX_ASSERTED_CHARS:
        return text
    if _REJECTION_HINT_RE.search(text):
        pieces = _CLAUSE_SPLIT_RE.split(_REJECTING_LINK_RE.sub(", not ", text))
        kept = [
            p
            for p in pieces
            if p.strip() and not (_REJECTS_AT_START_RE.match(p) or _REJECTS_AT_END_RE.search(p))
        ]
        if len(kept) < sum(1 for p in pieces if p.strip()):
            if not kept:
                return ""
            text = ", ".join(p.strip() for p in kept)
    frame = _FRAME_RE.match(text)
    if frame and 0 < frame.end() < len(text):
        rest = text[frame.end() :]
        if not _CLAUSE_SPLIT_RE.search(rest.rstrip(" \t.!")):  # "it's B, but maybe C" stays
            text = rest
    return text.strip()


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
