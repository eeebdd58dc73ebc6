"""Critic / preference: the ``preference`` verifier (``Response 1`` / ``Response 2`` / ``Tie``).

Labels: ``Response 1`` (also ``Response A``, ``Response one``, ``the first response``, ``1``,
``A``, ``回答1``), ``Response 2`` (``B``, ``second``, ``回答2``), ``Tie`` (``tie``, ``a tie``,
``draw``, ``equally good``, ``both are equally ...``, ``equal quality``, ``neither is better``,
``Response 1 is as good as Response 2``).

Reading a judgement (after the final-statement refinement, with clauses that only reject a
label dropped: ``Not a tie: Response 2 wins`` and ``Response 2, not Response 1`` prefer
Response 2; ``not a tie`` alone names nothing):

1. The whole answer is a label: that label.
2. Otherwise *claims* are collected: overall preferences (``Response 1 is better``, ``I
   prefer Response 2``, ``Response 2 wins``, ``Response 1 is worse`` = prefers 2, ``回答1更好``),
   preferences in one quality (``Response 2 is more accurate``, ``Response 1 is less clear``)
   and tie statements (``they are equal``, ``neither is better``). Exactly one response
   preferred overall and no tie statement: that response. Only tie statements: ``Tie``
   (``Response 1 and Response 2 are equally good`` is an unambiguous tie). Neither: the one
   response preferred in qualities (``Response 2 is better, though Response 1 is more
   concise`` prefers 2; ``Response 1 is more accurate, while Response 2 is more detailed`` is
   no verdict).
3. No claims: a leading label ending its sentence (``Response 1. Response 2 has errors.``) or
   followed by its reason (``Response 1, because Response 2 ...``) counts; anything else that
   mentions both responses without a clear choice (``Response 1 and Response 2``,
   ``Response 1, Response 2``) is a hedge and scores 0, as are contradicting claims.

Example:
    >>> v = PreferenceVerifier(PreferenceParams())
    >>> v.score("Response 1", "Response A").accuracy
    1.0
    >>> v.score("Response 1 is better than Response 2.", "Response 1").accuracy
    1.0
    >>> v.score("Response 1 and Response 2 are equally good", "Tie").accuracy
    1.0
    >>> v.score("Response 1 and Response 2", "Response 1").details["reason"]
    'mentions both responses without a clear choice'
"""

from __future__ import annotations

import re
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from videorl_kit.core.verifiers import register_verifier
from videorl_kit.rewards.base import VerifyOutcome
from videorl_kit.rewards.extract import clean_answer
from videorl_kit.rewards.text import clean_gold, refine_answer, stated_answer

#: Only this many leading characters of a judgement are read.
MAX_PREFERENCE_CHARS = 1000

_R1 = (
    r"(?:response|assistant)\s{0,3}(?:#\s{0,2})?(?:1|a|one)\b"
    r"|(?:answer|output|candidate)\s{0,3}(?:#\s{0,2})?(?:1|one)\b"
    r"|(?:the\s{1,3})?first\s{1,3}(?:response|answer|one)\b"
    r"|(?:回答|响应|答案)\s{0,2}(?:1|一|A)(?![0-9A-Za-z])|第一个(?:回答|响应)"
)
_R2 = (
    r"(?:response|assistant)\s{0,3}(?:#\s{0,2})?(?:2|b|two)\b"
    r"|(?:answer|output|candidate)\s{0,3}(?:#\s{0,2})?(?:2|two)\b"
    r"|(?:the\s{1,3})?second\s{1,3}(?:response|answer|one)\b"
    r"|(?:回答|响应|答案)\s{0,2}(?:2|二|B)(?![0-9A-Za-z])|第二个(?:回答|响应)"
)
_R1_RE = re.compile(_R1, re.IGNORECASE)
#: A label joined to the subject of a claim that follows: "Response 2 and [Response 1 is ...]".
_JOINED_SUBJECT_RE = re.compile(
    rf"(?:(?P<r1>{_R1})|(?P<r2>{_R2}))\s{{0,3}}(?:[,/&]|\band\b|\bor\b)\s{{0,3}}$", re.I
)
_MENTION_RE = re.compile(rf"(?P<r1>{_R1})|(?P<r2>{_R2})", re.IGNORECASE)
#: Qualities a judgement compares ("as good as", "more helpful", "less accurate").
_QUALITY = (
    r"(?:good|helpful|accurate|correct|strong|useful|clear|relevant|informative|complete"
    r"|detailed|precise|faithful|thorough|concise|coherent|well[\s-]written)"
)
_DEGREE = r"(?:clearly\s{1,3}|slightly\s{1,3}|much\s{1,3}|far\s{1,3}|a\s{1,3}bit\s{1,3})?"
_IS = rf"(?:is|was|seems|appears)\s{{1,3}}{_DEGREE}"
#: Overall verdicts ("Response 1 is better", "Response 2 wins") ...
_BETTER = (
    rf"{_IS}(?:better|superior|preferred|preferable|stronger"
    r"|the\s{1,3}better(?:\s{1,3}(?:one|response))?)"
    r"|wins\b|is\s{1,3}the\s{1,3}winner|(?:outperforms|beats|surpasses)\b"
    r"|更(?:好|准确|优|佳|合适)"
)
#: ... and claims about one quality ("Response 2 is more accurate", "Response 1 is less
#: clear"), which decide only when no overall verdict is given: "Response 2 is better, though
#: Response 1 is more concise" prefers Response 2.
_BETTER_IN = rf"{_IS}(?:clearer|closer|more\s{{1,3}}{_QUALITY}|correct|right|accurate)\b"
#: Qualities compared with "as ... as" ("as good as", "just as helpful as").
_AS_QUALITY = rf"as\s{{1,3}}{_QUALITY}\s{{1,3}}as\b"
_WORSE = (
    rf"{_IS}(?:worse|inferior|weaker)"
    rf"|(?:is|was)\s{{1,3}}not\s{{1,3}}(?:quite\s{{1,3}})?{_AS_QUALITY}"
    rf"|isn['’]t\s{{1,3}}(?:quite\s{{1,3}})?{_AS_QUALITY}"
)
_WORSE_IN = rf"{_IS}less\s{{1,3}}{_QUALITY}"
#: One response set against the other: "Response 1 > Response 2", "Response 2 < Response 1",
#: "Response 1 over Response 2", "回答1优于回答2", "回答2不如回答1".
_OVER = r"(?:>{1,2}|≻|›|\b(?:over|not|beats|outranks)\b|优于|優於|胜过|勝過|强于|強於|好于|好於)"
_UNDER = (
    r"(?:<{1,2}|≺|‹|\b(?:loses\s{1,3}to|is\s{1,3}beaten\s{1,3}by|falls\s{1,3}short\s{1,3}of"
    r"|trails(?:\s{1,3}behind)?)\b|不如|劣于|劣於|差于|差於)"
)
_CLAIM_RE = re.compile(
    rf"(?P<subject>{_R1}|{_R2})\s{{0,3}}(?:(?P<better>{_BETTER})|(?P<worse>{_WORSE})"
    rf"|(?P<better_in>{_BETTER_IN})|(?P<worse_in>{_WORSE_IN}))"
    rf"|\b(?:prefer|choose|select|pick|go\s{{1,3}}with)\s{{1,3}}(?P<object>{_R1}|{_R2})"
    # "the better one is Response 2", "the preferred response: Response 1"
    r"|\bthe\s{1,3}(?:better|best|preferred|stronger|superior|winning)"
    r"(?:\s{1,3}(?:one|response|answer|choice))?\s{0,3}(?:is|would\s{1,3}be|[:：])\s{0,3}"
    rf"(?P<object2>{_R1}|{_R2})"
    rf"|(?P<left>{_R1}|{_R2})[\s*]{{0,4}}(?:(?P<over>{_OVER})|(?P<under>{_UNDER}))[\s*]{{0,4}}"
    rf"(?=(?P<right>{_R1}|{_R2}))",  # the right side may start the next claim: "1 > 2 > 1"
    re.IGNORECASE,
)
#: A judgement's own label in front of it: "Winner: Response 1", "Verdict - Response 2".
_VERDICT_LABEL_RE = re.compile(
    r"\s{0,4}(?:the\s{1,3}|my\s{1,3})?(?:overall\s{1,3})?(?:winner|verdict|judge?ment|decision"
    r"|choice|preference|preferred(?:\s{1,3}(?:response|answer))?"
    r"|(?:better|best)\s{1,3}(?:response|answer)|better|result)\s{0,3}[*_]{0,3}\s{0,3}[:：=-]\s{0,4}",
    re.IGNORECASE,
)
_COMPARED = r"(?:better|preferable|superior|worse|stronger|beats|outperforms|wins|stands\s{1,3}out)"
_LATEX_TEXT_RE = re.compile(r"\\text(?:bf|it|rm|normal)?\s{0,2}\{([^{}]{0,200})\}")
_LOSER_HINT_RE = re.compile(r"\b(?:loses|loser|losing|weaker|inferior\s+one|worse\s+one)\b", re.I)
_LOSER_FIRST_RE = re.compile(
    rf"\bthe\s{{1,3}}(?:worse|weaker|losing|inferior)\s{{1,3}}(?:one|response|answer)\s{{1,3}}"
    rf"(?:is|was)\s{{1,3}}(?P<label>{_R1}|{_R2})",
    re.IGNORECASE,
)
_LOSER_AFTER_RE = re.compile(
    rf"(?P<label>{_R1}|{_R2})\s{{1,3}}(?:loses|is\s{{1,3}}the\s{{1,3}}(?:loser|(?:worse|weaker"
    rf"|losing|inferior)\s{{1,3}}(?:one|response|answer)))\b",
    re.IGNORECASE,
)
_MT_BENCH_TIE_RE = re.compile(r"\[\[\s{0,2}[Cc]\s{0,2}\]\]")
_TIE_RE = re.compile(
    # Chinese: "平局", "两者一样好", "不相上下"
    r"平局|平手|打平|不相上下|(?:两者|两个|二者|兩者|兩個)?(?:一样|一樣|同样|同樣)(?:好|差)"
    r"|\b(?:tie|tied|draw)\b|\bequally\b|\bequal\s{1,3}(?:quality|in\s{1,3}quality)\b"
    # "neither is better", "neither one beats the other" (within its clause: "Neither is
    # perfect; Response 2 is better" is a preference)
    rf"|\bneither\b(?:(?!\bbut\b)[^.;,:\n]){{0,40}}\b{_COMPARED}\b"
    # "no response is better", "none of them is better"
    r"|\b(?:no|none\s{1,3}of\s{1,3}(?:them|the\s{1,3}(?:two|responses|answers)))"
    rf"(?:\s{{1,3}}(?:response|answer|one))?\s{{1,3}}(?:is\s{{1,3}})?{_COMPARED}\b"
    # "they are equal", "the two are the same", "I rate them the same", "identical in quality"
    r"|(?:\b(?:are|is|rate|score|judge|grade|rank)|['’]re)\s{1,3}(?:them\s{1,3}|both(?:\s{1,3}"
    r"(?:responses|answers))?\s{1,3})?(?:about\s{1,3}|basically\s{1,3}|essentially\s{1,3})?"
    r"(?:equal|identical|the\s{1,3}same)\b(?!\s{1,3}(?:mistake|error|length|size|format)\b)"
    r"|\bsame\s{1,3}quality\b|\bno\s{1,3}(?:clear\s{1,3})?winner\b|\bno\s{1,3}preference\b"
    r"|\bno\s{1,3}(?:real\s{1,3}|clear\s{1,3}|significant\s{1,3})?difference\b"
    r"|\bprefer\s{1,3}neither\b"
    r"|\b(?:equivalent|indistinguishable|evenly\s{1,3}matched)\b|\bon\s{1,3}(?:a\s{1,3})?par\b"
    rf"|(?:{_R1}|{_R2})[\s*]{{0,4}}(?:={{1,2}}|≈|≡)[\s*]{{0,4}}(?:{_R1}|{_R2})"
    rf"|(?<!not\s)(?<!n't\s)(?<!n’t\s)(?<!quite\s)\b(?:just\s{{1,3}})?{_AS_QUALITY}",
    re.IGNORECASE,
)
#: "as good as Response 1, if not better": leans to one side without choosing it.
_LEANING_RE = re.compile(
    r"\bif\s{1,3}not\s{1,3}(?:better|worse)\b|\bor\s{1,3}even\s{1,3}better\b"
    r"|>=|<=|≥|≤|⪰|⪯",
    re.I,
)
_EXACT_LABELS = {
    **dict.fromkeys(["1", "a", "first", "one"], "1"),
    **dict.fromkeys(["2", "b", "second", "two"], "2"),
    **dict.fromkeys(["tie", "a tie", "its a tie", "it is a tie", "draw", "equal"], "tie"),
}
_LEADING_RE = re.compile(
    rf"\s{{0,3}}(?:(?P<r1>{_R1})|(?P<r2>{_R2})|(?P<tie>tie\b))(?P<rest>.*)", re.I | re.S
)
_REASON_CLAUSE_RE = re.compile(r"[,;]?\s{0,3}(?:because|since|as|given\s{1,3}that)\b", re.I)
#: A label and a bare verb, the rest of its claim left out: "Response 1 is not better;
#: Response 2 is." (what is left once the rejection is dropped).
_ELLIPSIS_RE = re.compile(r"\s{0,3}(?:is|was|does|did|wins|has)\b[\s.!]{0,4}", re.I)
_NON_WORD_RE = re.compile(r"[^\w\s]")
_LABEL_PREFIX_RE = re.compile(r"^(?:response|answer|option|assistant)\s{1,3}")


#: The other response offered as possible or as a fallback beside a judgement (round 4):
#: "Response 1. Maybe Response 2.", "Response 2 could also be argued", "second choice
#: Response 2", "也许回答2".
_OFFERED_LABEL = (
    r"(?:response|answer|assistant|output)\s{0,3}(?P<{n}>[12ab])\b"
    r"|(?:回答|回复)\s{0,2}(?P<{n}c>[12])"
)
_OFFERED_RE = re.compile(
    r"(?:(?<![\w'’])(?:maybe|perhaps|possibly|probably|alternatively|otherwise|else"
    r"|failing\s{1,3}that|second\s{1,3}(?:choice|guess|pick|option)(?:\s{1,3}(?:is|would\s{1,3}be))?)"
    r"|也许|也許|也可能是|也可能|可能是|或许|或許)[\s,:：，]{0,3}(?:"
    + _OFFERED_LABEL.replace("{n}", "a")
    + r")|(?:"
    + _OFFERED_LABEL.replace("{n}", "b")
    + r")\s{1,3}(?:could|might|may)\s{1,3}(?:also|as\s{1,3}well|too)?",
    re.IGNORECASE,
)
#: MT-bench's judge answers ``[[A]]``, ``[[B]]`` or ``[[C]]`` (a tie).
_MT_BENCH_TIE_RE = re.compile(r"\[\[\s{0,2}C\s{0,2}\]\]")


def _offered_other(text: str, judgement: str) -> str | None:
    """The other response, when ``text`` offers it as possible beside ``judgement``."""
    for m in _OFFERED_RE.finditer(text):
        raw = next(g for g in m.groups() if g).casefold()
        side = "1" if raw in ("1", "a") else "2"
        if side != judgement:
            return side
    return None


def _side(label: str) -> str:
    return "1" if _R1_RE.fullmatch(label) else "2"


def parse_preference(text: str) -> tuple[str | None, str | None]:
    """``("1" | "2" | "tie", None)`` or ``(None, reason)`` for a judgement.

    Example:
        >>> parse_preference("I prefer the second response.")
        ('2', None)
        >>> parse_preference("Response 2 is worse.")
        ('1', None)
    """
    text = clean_answer(text[:MAX_PREFERENCE_CHARS])
    if "\\text" in text:  # "\boxed{\text{Response 2}}": the LaTeX text wrapper is no word
        text = clean_answer(_LATEX_TEXT_RE.sub(r"\1", text))
    if _LOSER_HINT_RE.search(text):  # "The worse one is Response 2", "Response 2 loses"
        text = _LOSER_FIRST_RE.sub(r"\g<label> is worse", text)
        text = _LOSER_AFTER_RE.sub(r"\g<label> is worse", text)
    if "[[" in text:  # MT-Bench's verdicts: [[A]], [[B]], and [[C]] for a tie
        text = _MT_BENCH_TIE_RE.sub("Tie", text)
    label_prefix = _VERDICT_LABEL_RE.match(text)
    if label_prefix and label_prefix.end() < len(text):
        text = clean_answer(text[label_prefix.end() :])  # "Winner: Response 1"
    if not text:
        return None, "empty answer"
    if _MT_BENCH_TIE_RE.fullmatch(text):
        return "tie", None
    label = exact_label(text)
    if label is not None:
        return label, None
    judgement, reason = _judgement(text)
    if judgement in ("1", "2"):
        other = _offered_other(text, judgement)
        if other is not None:
            return None, f"hedged answer (Response {other} offered as possible)"
    stray = [label for label in _bare_labels(text) if label != judgement]
    if (
        judgement is not None and stray
    ):  # "Response 1\nResponse 2", "Response 1 is better. And Response 2."
        return (
            None,
            f"hedged answer (also {'Tie' if stray[0] == 'tie' else 'Response ' + stray[0]})",
        )
    return judgement, reason


def _judgement(text: str) -> tuple[str | None, str | None]:
    """The claims and leading label of a judgement that is not one label."""
    if _LEANING_RE.search(text):
        return None, "leans to a response without choosing it"
    overall: set[str] = set()  # sides preferred by overall verdicts
    in_part: set[str] = set()  # sides preferred in one quality
    for m in _CLAIM_RE.finditer(text):
        if m.group("object") or m.group("object2"):
            overall.add(_side(m.group("object") or m.group("object2")))
            continue
        if m.group("left"):  # "Response 1 > Response 2"
            left, right = _side(m.group("left")), _side(m.group("right"))
            if left != right:
                overall.add(left if m.group("over") else right)
            continue
        side = _side(m.group("subject"))
        joined = _JOINED_SUBJECT_RE.search(text[max(0, m.start() - 60) : m.start()])
        if joined and ("1" if joined.group("r1") else "2") != side:
            return None, "a claim about both responses"  # "Response 2 and Response 1 is better"
        if m.group("worse") or m.group("worse_in"):
            side = "2" if side == "1" else "1"
        (overall if m.group("better") or m.group("worse") else in_part).add(side)
    tie = _TIE_RE.search(text) is not None
    preferred = overall if overall or tie else in_part
    if preferred and tie:
        return None, "both a preference and a tie"
    if len(preferred) > 1:
        return None, "prefers both responses"
    if preferred:
        return preferred.pop(), None
    if tie:
        return "tie", None
    mentioned = {("1" if m.group("r1") else "2") for m in _MENTION_RE.finditer(text)}
    lead = _LEADING_RE.match(text)
    if lead and lead.group("tie"):
        return ("tie", None) if not mentioned else (None, "unclear judgement")
    if lead and not lead.group("tie"):
        side = "1" if lead.group("r1") else "2"
        rest = lead.group("rest").lstrip(" \t*")
        if (
            not rest
            or rest[0] in ".:;!\n)"
            or (len(mentioned) == 1 and not rest[0].isalnum())
            or _REASON_CLAUSE_RE.match(rest)  # "Response 1, because Response 2 ..."
            or _ELLIPSIS_RE.fullmatch(rest)
        ):
            return side, None
    if len(mentioned) > 1:
        return None, "mentions both responses without a clear choice"
    return None, "no judgement found"


_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?。])\s+|\s*[\n;]\s*")
#: Where a list of labels splits: "Tie and Response 1", "Response 1, Response 2".
_LIST_SPLIT_RE = re.compile(r"\s*(?:[,/|&]|\band/or\b|\band\b|\bor\b)\s*", re.IGNORECASE)


def _bare_labels(text: str) -> list[str]:
    """The labels stated as whole sentences or lines, in lists of labels, or after the last
    comma or "and"/"or" of a sentence; in order, each once.

    Example:
        >>> _bare_labels("Tie and Response 1"), _bare_labels("Response 1. And Response 2")
        (['tie', '1'], ['1', '2'])
        >>> _bare_labels("Response 1 and Response 2 are equally good. Response 2 has errors.")
        []
    """
    found: list[str] = []
    for sentence in _SENTENCE_SPLIT_RE.split(text):
        labels = [exact_label(p) for p in _LIST_SPLIT_RE.split(sentence) if p.strip()]
        if None not in labels:
            found.extend(labels)  # type: ignore[arg-type]
        elif len(labels) > 1 and labels[-1] is not None:  # "Response 1 is better, Response 2"
            found.append(labels[-1])
    return list(dict.fromkeys(found))


def exact_label(text: str) -> str | None:
    """``"1"``, ``"2"`` or ``"tie"`` when the whole text is a label (``Response 2.``, ``A``,
    ``It's a tie``), else None.

    Example:
        >>> exact_label("**Response B**"), exact_label("Response 2 is better")
        ('2', None)
    """
    simple = _LABEL_PREFIX_RE.sub("", _NON_WORD_RE.sub("", text[:64].casefold()).strip())
    return _EXACT_LABELS.get(simple)


@lru_cache(maxsize=1024)
def _gold_label(gold: str) -> tuple[str | None, str]:
    value, reason = parse_preference(clean_gold(gold))
    return value, ("" if value else f"ground truth is not Response 1/2/Tie: {reason}")


class PreferenceParams(BaseModel):
    """Parameters of the ``preference`` verifier (none)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@register_verifier(
    name="preference", version=2, problem_types=("critic",), params_model=PreferenceParams
)
class PreferenceVerifier:
    """1 when the judgement (Response 1 / Response 2 / Tie) equals the gold; hedges 0."""

    def __init__(self, params: PreferenceParams) -> None:
        self.params = params

    def score(self, answer_text: str, gold: str, options: list[str] | None = None) -> VerifyOutcome:
        """Grade a critic's judgement."""
        gold_value, why = _gold_label(gold)
        if gold_value is None:
            return VerifyOutcome.unverifiable(why)
        judgement = refine_answer(answer_text)
        if exact_label(judgement) is None:  # a bare label has no clause to drop
            judgement = stated_answer(answer_text, judgement)
            if not judgement and answer_text.strip():
                return VerifyOutcome.wrong("the answer only rejects a judgement", gold=gold_value)
        pred, reason = parse_preference(judgement)
        if pred is None:
            return VerifyOutcome.wrong(reason or "no judgement", gold=gold_value)
        return VerifyOutcome.ok(1.0 if pred == gold_value else 0.0, pred=pred, gold=gold_value)
