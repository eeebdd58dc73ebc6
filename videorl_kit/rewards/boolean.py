"""Yes/no questions: the ``boolean`` verifier.

The answer (after the final-statement refinement) is read as yes or no:

* ``1`` and ``y`` are yes, ``0`` and ``n`` are no (the whole answer);
* a verdict after the last conclusion word (``so``, ``therefore``, ``thus``, ``hence``, ``which
  means``) decides: ``There is no cat, so yes, it is empty`` is yes;
* a leading verdict decides, after intensifiers (``absolutely``, ``definitely``, ``certainly``,
  ``of course``, ``no doubt``, ``without a doubt``): ``Yes, it is`` and ``No doubt, yes`` are
  yes, ``No, that is not true``, ``Absolutely not``, ``Certainly not, the door stays shut``,
  ``Not at all``, ``By no means`` and ``I don't think so`` are no, and an
  intensifier alone (``Absolutely.``, ``Of course.``) is yes, and so is one set off before a
  plain statement (``Certainly, the door is open``); so is a short reply (``It is.``,
  ``Of course it does``; ``It is not.`` is no); so does a leading Chinese
  ``是``/``对``/``有`` (yes) or ``不``/``否``/``没有`` (no);
* otherwise the one polarity among its boolean words (``not true`` reads no); ``no`` in front
  of a word (``no cat``, ``no one``) describes, it is not a verdict;
* ``yes and no``, ``yes/no``, ``yes or no``, and both polarities anywhere in the deciding part
  (``yes no``, one per line, ``true false``, ``是，不是``, ``是或否``, ``对/错``, a verdict for
  each case: ``yes if it is open, no otherwise``, ``是，否则不是``) are hedges and score 0, as
  are ``it depends`` and ``是否`` (whether);
* a correction decides like a conclusion word (``Yes! Actually, no.`` is no), and a verdict word
  negated within its clause is the other verdict (``I would not say yes`` is no).

The ground truth is yes/no/true/false (``1``/``0`` accepted there, a common data convention);
anything else is unverifiable.

Example:
    >>> v = BooleanVerifier(BooleanParams())
    >>> v.score("Yes, it is.", "yes").accuracy, v.score("yes and no", "yes").accuracy
    (1.0, 0.0)
    >>> v.score("It is not true", "no").accuracy, v.score("Absolutely not.", "no").accuracy
    (1.0, 1.0)
    >>> v.score("There is no cat, so yes, it is empty.", "yes").accuracy
    1.0
"""

from __future__ import annotations

import re
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from videorl_kit.core.verifiers import register_verifier
from videorl_kit.rewards.base import VerifyOutcome
from videorl_kit.rewards.extract import clean_answer
from videorl_kit.rewards.text import clean_gold, refine_answer

#: Only this many leading characters of an answer are read.
MAX_BOOLEAN_ANSWER_CHARS = 2000

_YES = frozenset({"yes", "true", "correct", "yeah", "yep", "yup", "affirmative"})
_NO = frozenset({"no", "false", "incorrect", "nope", "nah", "negative"})
_BOOL_WORD = r"yes|no|true|false|correct|incorrect|yeah|yep|yup|nope|nah|affirmative|negative"
#: Whole answers that are a verdict by themselves (the common ones looked up first).
_WHOLE_ANSWERS = {
    **{w: "yes" for w in ("yes", "true", "1", "y")},
    **{w: "no" for w in ("no", "false", "0", "n")},
}
_HEDGE_RE = re.compile(
    rf"\b(?P<a>{_BOOL_WORD})\s{{0,3}}(?:/|\bor\b|\band\b|,|\|)\s{{0,3}}(?:maybe\s{{1,3}})?"
    rf"(?P<b>{_BOOL_WORD})\b",
    re.IGNORECASE,
)
_WORD_RE = re.compile(rf"\b(?P<w>{_BOOL_WORD})\b", re.IGNORECASE)
#: A verdict word negated within its clause: "not true", "I would not say yes", "I can't say
#: yes", "never said no" (up to three words between; searched in the 48 characters before it).
_NEGATED_RE = re.compile(
    r"(?:\bnot|n['’]t|\bcannot|\bnever)\b"
    r"(?:\s{1,3}(?!(?:but|and|so|yet|though|although)\b)[A-Za-z'’]{1,15}){0,4}\s{1,3}$",
    re.IGNORECASE,
)
_NEGATION_REACH = 64
_LEAD_RE = re.compile(r"[\W_]*(?P<w>[A-Za-z]+)")
#: Words that strengthen a verdict without being one ("absolutely not", "no doubt, yes").
_INTENSIFIERS_RE = re.compile(
    r"(?:[\W_]{0,4}(?:absolutely|definitely|certainly|surely|undoubtedly|clearly|obviously"
    r"|indeed|sure|of\s{1,3}course|no\s{1,3}doubt(?:\s{1,3}about\s{1,3}it)?"
    r"|without\s{1,3}(?:a\s{1,3})?doubt|for\s{1,3}sure)\b){1,3}[\W_]{0,4}",
    re.IGNORECASE,
)
#: A "not" verdict, alone or before its reason: "not", "not at all", "not really", "certainly
#: not; the cup is full" ("not the red door" negates a phrase: no verdict).
_NOT_VERDICT_RE = re.compile(
    r"not(?:\s{1,3}(?:at\s{1,3}all|really|quite|so|likely|exactly|a\s{1,3}chance|one\s{1,3}bit"
    r"|in\s{1,3}the\s{1,3}(?:slightest|least)))?\b\s{0,3}(?:$|[,;:.!?()—–-])",
    re.IGNORECASE,
)
#: Set phrases that answer yes or no: "by no means", "I don't think so", "I think so".
_PHRASE_VERDICT_RE = re.compile(
    r"(?:(?P<no>by\s{1,3}no\s{1,3}means|in\s{1,3}no\s{1,3}way|under\s{1,3}no\s{1,3}circumstances"
    r"|i\s{1,3}(?:do\s{1,3}not|don['’]t)\s{1,3}(?:think|believe|suppose)\s{1,3}so"
    r"|i\s{1,3}(?:think|believe|suppose|guess)\s{1,3}not)"
    r"|(?P<yes>i\s{1,3}(?:think|believe|suppose|guess)\s{1,3}so))\b\s{0,3}(?:$|[,;:.!?()—–-])",
    re.IGNORECASE,
)
_PHRASE_ANYWHERE_RE = re.compile(r"\b" + _PHRASE_VERDICT_RE.pattern, re.IGNORECASE)
#: An affirming word set off before a plain statement: "Absolutely, the door is open." is yes
#: ("Clearly, ..." describes; a negated statement after it is no verdict).
_AFFIRMING_RE = re.compile(
    r"[\W_]{0,4}(?:absolutely|definitely|certainly|of\s{1,3}course|indeed|sure|undoubtedly"
    r"|no\s{1,3}doubt|without\s{1,3}(?:a\s{1,3})?doubt|for\s{1,3}sure)\s{0,3}[,;:—–-]",
    re.IGNORECASE,
)
_NEGATION_RE = re.compile(r"\b(?:not|no|never|nobody|nothing|none|neither|nor)\b|n['’]t\b", re.I)
#: The last conclusion word before the verdict ("..., so yes") or correction ("Yes! Actually,
#: no.", "No, wait: yes"): what follows it decides.
_CONCLUSION_RE = re.compile(
    r"\b(?:so|therefore|thus|hence|which\s{1,3}means|in\s{1,3}conclusion"
    r"|actually|wait|on\s{1,3}second\s{1,3}thought|correction|scratch\s{1,3}that"
    r"|i\s{1,3}mean)\b",
    re.IGNORECASE,
)
#: Chinese clauses that are a verdict by themselves: "是，不是" states both.
#: Clauses also end at a joiner ("是或否": yes or no) and at "otherwise" ("是，否则不是").
_CN_CLAUSE_RE = re.compile(
    r"(?:[，,。.；;！!？?\s/、()（）]|或者|或|还是|還是|和|与|與|否则|否則|要不然|不然)+"
)
_CN_YES_CLAUSES = frozenset(["是", "是的", "对", "对的", "對", "正确", "正確", "没错"])
_CN_NO_CLAUSES = frozenset(
    [
        "不是",
        "不是的",
        "不",
        "否",
        "不对",
        "不对的",
        "不對",
        "错",
        "错的",
        "错误",
        "不正确",
        "不正確",
    ]
)
#: A short reply that confirms or denies: "it is", "of course it does", "it is not", "they don't",
#: "it certainly is", "it definitely does not".
_ADVERB = r"(?:\s{1,3}(?:certainly|definitely|surely|clearly|absolutely|indeed|obviously|really))?"
_SHORT_REPLY_RE = re.compile(
    rf"(?:it|that|this|there|they|he|she|i|we|you){_ADVERB}\s{{1,3}}"
    rf"(?:is|are|was|were|does|do|did|can|will|has|have){_ADVERB}"
    rf"(?P<neg>\s{{1,3}}not|n['’]t)?{_ADVERB}[\W_]{{0,4}}",
    re.IGNORECASE,
)
#: "no" followed by a word describes ("no cat", "no one"); it is not a verdict. A conjunction
#: or adverb after it leaves it a verdict: "yes if it is open, no otherwise", "no if closed".
_DESCRIPTIVE_NO_RE = re.compile(
    r"\s{1,3}(?!(?:otherwise|else|if|when|whenever|unless|because|since|though|although"
    r"|however|then|but|so)\b)[A-Za-z]",
    re.IGNORECASE,
)
#: An answer that makes its verdict depend on something names none: "it depends", "取决于".
_DEPENDS_RE = re.compile(
    r"\b(?:it|that|this)\s{1,3}(?:all\s{1,3})?depends\b|\bdepends\s{1,3}on\s{1,3}(?:whether|if)\b"
    r"|取决于|取決於|看情况|看情況|视情况|視情況",
    re.IGNORECASE,
)
_CN_NO = ("不", "否", "错", "没有", "沒有")
#: "not" left on its own under doubt after a verdict is the other verdict: "Yes, maybe not.",
#: "Yes, or not.", "Yes. Perhaps not, though." (a "not" before a word negates that word).
_DOUBTFUL_NOT_RE = re.compile(
    r"\b(?:(?<!\bbelieve\sit\s)(?<!\bbelieve\sme\s)or|maybe|perhaps|possibly|probably)(?:\s{1,3}(?:maybe|perhaps|possibly|probably))?"
    r"\s{1,3}not\b\s{0,3}(?:$|[,;:.!?)—–-])",
    re.IGNORECASE,
)
#: A clause that is a bare "not" after a verdict takes the verdict back: "Yes, not.", "Yes...
#: not", "yes — not really", "Yes (not)", "Yes, of course not.", "Yes, but not really." The
#: clause opens at a punctuation mark or right after the verdict word, may open with fillers or
#: intensifiers, and ends at the end or a punctuation mark, so a "not" before a word negates
#: that word ("Yes, not X but Y", "Yes, not only ...", "Yes, not really a problem") and a word
#: before it makes no bare "not" ("Yes, why not?", "Yes, if not more").
_FILLER = (
    r"well|but|and|so|actually|hmm+|oh|um+|uh+|wait|really|honestly|frankly|i\s{1,3}mean"
    r"|of\s{1,3}course|certainly|definitely|absolutely|surely|clearly|obviously|sure|indeed"
)
_BARE_NOT_RE = re.compile(
    r"(?:[,;:.!?()\[\]…—–-]|\b(?:yes|true|correct|yeah|yep|yup|affirmative)\b)[\s,;:.…—–-]{0,6}"
    rf"(?:(?:{_FILLER})\b[\s,;:.…—–-]{{1,4}}){{0,3}}"
    r"not(?:\s{1,3}(?:at\s{1,3}all|really|quite|so(?:\s{1,3}much)?|likely|exactly|necessarily"
    r"|actually|entirely|totally|completely|true|correct|right|the\s{1,3}case|a\s{1,3}chance"
    r"|one\s{1,3}bit|in\s{1,3}the\s{1,3}(?:slightest|least)|anymore|any\s{1,3}more))?"
    r"\b\s{0,3}(?:$|[,;:.!?()\[\]…—–-])",
    re.IGNORECASE,
)
#: Words of doubt or contrast that open a Chinese clause ("也可能不是": maybe not).
_CN_DOUBT_PREFIX_RE = re.compile(
    r"^(?:不过|不過|但是|但|可是|然而)?(?:也可能|也许|也許|可能|或许|或許|大概)?"
)
_CN_YES = ("是", "对", "對", "正确", "正確", "没错", "有")


#: Verdict words of other languages, read as their English ones (Spanish, French, German,
#: Russian, Japanese, Korean): "Sí.", "Nein", "はい", "아니요" are verdicts, and "Yes. Nein."
#: states both.
_FOREIGN_VERDICTS = {
    **dict.fromkeys(
        ("sí", "oui", "ja", "да", "はい", "네", "예", "vrai", "wahr", "verdadero"), "yes"
    ),
    **dict.fromkeys(
        ("non", "nein", "нет", "いいえ", "아니요", "아니오", "faux", "falsch", "falso"), "no"
    ),
}
_FOREIGN_RE = re.compile(
    r"(?<![\w-])(?:" + "|".join(sorted(_FOREIGN_VERDICTS, key=len, reverse=True)) + r")(?![\w-])",
    re.IGNORECASE,
)
#: The answer format echoed before the verdict: "True/False: True", "Yes/No: No".
_ECHOED_LABEL_RE = re.compile(
    r"\s{0,4}(?:yes\s{0,2}/\s{0,2}no|true\s{0,2}/\s{0,2}false|true\s{1,3}or\s{1,3}false"
    r"|yes\s{1,3}or\s{1,3}no)\s{0,2}[:：]\s{0,4}(?=\S)",
    re.IGNORECASE,
)


def _english_verdicts(text: str) -> str:
    """``text`` with the verdict words of other languages written as English ones."""
    if text.isascii() and not re.search(
        r"\b(?:oui|ja|non|nein|vrai|wahr|faux|falsch|falso)\b", text, re.I
    ):
        return text
    return _FOREIGN_RE.sub(lambda m: _FOREIGN_VERDICTS[m.group().casefold()], text)


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
        >>> parse_boolean("No doubt, yes."), parse_boolean("1")
        (('yes', None), ('yes', None))
    """
    rest = text[MAX_BOOLEAN_ANSWER_CHARS:][-MAX_BOOLEAN_ANSWER_CHARS:]
    text = clean_answer(_english_verdicts(text[:MAX_BOOLEAN_ANSWER_CHARS]))
    if not text:
        return None, "empty answer"
    label = _ECHOED_LABEL_RE.match(text)
    if label:  # "True/False: True": the format echoed, then the verdict
        text = text[label.end() :]
    verdict = _parse_head(text)
    if verdict[0] is not None and rest.strip():  # a long answer: its end may state the other
        other = _polarities(_english_verdicts(rest)) - {verdict[0]}
        if other:
            return None, "hedged answer (yes and no, far apart)"
    return verdict


def _parse_head(text: str) -> tuple[str | None, str | None]:
    """:func:`parse_boolean` of the (cleaned, bounded) text."""
    whole = _WHOLE_ANSWERS.get(text.casefold())
    if whole:
        return whole, None
    if _DEPENDS_RE.search(text):
        return None, "a conditional answer (it depends) states no verdict"
    if text.rstrip("。.!！?？") == "是否":
        return None, "是否 (whether) states no verdict"
    for m in _HEDGE_RE.finditer(text):
        a, b = _polarity(m.group("a")), _polarity(m.group("b"))
        if m.group("b").casefold() == "no" and _DESCRIPTIVE_NO_RE.match(text, m.end()):
            continue  # "yes, no doubt"
        if a and b and a != b:
            return None, f"hedged answer ({a} and {b})"
    conclusion = None
    for conclusion in _CONCLUSION_RE.finditer(text):  # noqa: B007 (the last one is wanted)
        pass
    if conclusion is not None:  # "there is no cat, so yes, it is empty": the verdict decides
        tail = text[conclusion.end() :]
        verdict = _verdict(tail)
        if verdict[0] is not None:
            return _unless_contradicted(verdict, tail)
    return _unless_contradicted(_verdict(text), text)


def _unless_contradicted(
    verdict: tuple[str | None, str | None], text: str
) -> tuple[str | None, str | None]:
    """``verdict``, unless ``text`` also states the other verdict ("yes no", "Yes. No.",
    "true false", "是，不是"): then a hedge."""
    value = verdict[0]
    if value is None:
        return verdict
    if value == "yes" and _DOUBTFUL_NOT_RE.search(text):
        return None, "hedged answer (yes and maybe not)"
    if value == "yes" and "not" in text.casefold() and _bare_not_after_yes(text):
        return None, "hedged answer (yes, then a bare 'not' takes it back)"
    other = "no" if value == "yes" else "yes"
    if not text.isascii():
        clauses = {_CN_DOUBT_PREFIX_RE.sub("", c) for c in _CN_CLAUSE_RE.split(text)}
        cn = {"yes"} if clauses & _CN_YES_CLAUSES else set()
        cn |= {"no"} if clauses & _CN_NO_CLAUSES else set()
        if len(cn) == 2 or other in cn:  # "是，不是", "Yes. 不对，否。"
            return None, "hedged answer (yes and no)"
    if other in _polarities(text):
        return None, "hedged answer (yes and no)"
    for phrase in _PHRASE_ANYWHERE_RE.finditer(text):  # "Yes, I don't think so"
        if ("no" if phrase.group("no") else "yes") == other:
            return None, "hedged answer (yes and no)"
    return verdict


def _bare_not_after_yes(text: str) -> bool:
    """Whether a bare "not" clause (:data:`_BARE_NOT_RE`) follows the first yes word of
    ``text`` (its start when it has none: "Of course. Not really.")."""
    start = 0
    for m in _WORD_RE.finditer(text):
        if _polarity(m.group("w")) == "yes":
            start = m.start()
            break
    return _BARE_NOT_RE.search(text, start) is not None


def _polarities(text: str) -> set[str]:
    """The polarities of the verdict words of ``text``: a negated word flips ("not true",
    "I would not say yes"), and "no" before a word ("no cat") describes and counts none."""
    seen: set[str] = set()
    for m in _WORD_RE.finditer(text):
        word = m.group("w")
        pol = _polarity(word)
        if pol is None:
            continue
        if word.casefold() == "no" and _DESCRIPTIVE_NO_RE.match(text, m.end()):
            continue  # "there is no cat": a description, not a verdict
        if _NEGATED_RE.search(text, max(0, m.start() - _NEGATION_REACH), m.start()):
            pol = "no" if pol == "yes" else "yes"
        seen.add(pol)
    return seen


def _verdict(text: str) -> tuple[str | None, str | None]:
    """The yes/no of ``text``: its leading verdict, else the one polarity of its words."""
    if text[:1] and not text[0].isascii():
        if text.startswith(_CN_NO):  # checked first: "不是" starts with "不"
            return "no", None
        if text.startswith(_CN_YES):
            return "yes", None
    affirmed = _AFFIRMING_RE.match(text) is not None
    intensifiers = _INTENSIFIERS_RE.match(text)
    if intensifiers:
        text = text[intensifiers.end() :]
        if not text.strip(" \t.!"):
            return "yes", None  # "Absolutely.", "Of course!", "No doubt about it."
        if _NOT_VERDICT_RE.match(text):
            return "no", None  # "absolutely not", "certainly not, the door stays closed"
    elif _NOT_VERDICT_RE.match(text):
        return "no", None  # "not at all", "not really, it is empty"
    phrase = _PHRASE_VERDICT_RE.match(text)
    if phrase:  # "by no means", "I don't think so"
        return ("no" if phrase.group("no") else "yes"), None
    reply = _SHORT_REPLY_RE.fullmatch(text)
    if reply:  # "(of course) it is", "it is not"
        return ("no" if reply.group("neg") else "yes"), None
    lead = _LEAD_RE.match(text)
    if lead:
        first = _polarity(lead.group("w"))
        if first and lead.group("w").casefold() != "negative":
            return first, None
    seen = _polarities(text)
    if len(seen) == 1:
        return seen.pop(), None
    if len(seen) > 1:
        return None, "both yes and no in the answer"
    if affirmed and not _NEGATION_RE.search(text):
        return "yes", None  # "Absolutely, the door is open."
    return None, "no yes/no answer found"


@lru_cache(maxsize=4096)
def _gold_boolean(gold: str) -> tuple[str | None, str]:
    value, reason = parse_boolean(clean_gold(gold))
    return value, ("" if value else f"ground truth is not yes/no: {reason}")


class BooleanParams(BaseModel):
    """Parameters of the ``boolean`` verifier (none)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@register_verifier(
    name="boolean",
    version=2,
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
