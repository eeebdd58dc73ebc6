"""The one extraction pipeline every verifier and the format rule share.

Steps (each recorded in :class:`Extraction` so ``reward explain`` can show them):

1. **Sanitise**: special tokens ``<|name|>`` such as ``<|video_pad|>`` or ``<|im_end|>`` are
   removed (in a response with more than :data:`MAX_GENERIC_SPECIAL` of them, only the
   :data:`FLOOD_SPECIAL_TOKENS`, which bounds the work on adversarial floods).
2. **Tags**: ``<answer>``, ``</answer>``, ``<think>``, ``</think>`` (``<thought>`` counts as
   ``<think>``) are found by exact, case-insensitive search of the whole text, after tags
   written another way (``< answer >``, ``<answer id=2>``, ``&lt;answer&gt;``, ``＜answer＞``)
   are rewritten as plain ones (:func:`canonical_tags`; the format rule then fails). Answer
   tags that do not pair up make one block (:func:`_merge_unbalanced_answers`). A response
   with more than :data:`MAX_TAGS`
   tags is degenerate: no answer (and format 0). A ``</think>``
   without an opening tag closes an implicit think block that starts at the beginning (the
   chat template may have put ``<think>`` in the prompt). An unterminated ``<think>`` ends at
   the first ``<answer>`` after it (the model forgot ``</think>`` and then answered); with no
   ``<answer>`` after it, it runs to the end of the text (a truncated response: all of it is
   reasoning, no answer).
3. **Answer block**: closed ``<answer>`` blocks *outside* think blocks. Two or more different
   non-empty blocks are a **hedge** (no answer, scores 0). Empty blocks alongside one non-empty
   block are ignored, unless loose text follows them or sits between blocks: then the stretch
   from the first non-empty block on is one answer, loose text included
   (:func:`_merge_around_loose_text`: ``<answer>B</answer><answer></answer>C`` is ``B C``, a
   hedge); only empty blocks give the empty answer (scores 0, no fallback). A value stated
   again after the block (a bare letter or number, or a final statement: ``<answer>B</answer>
   The answer is C.``) is kept in :attr:`Extraction.restated` and must agree with the block.
4. **Final statement** (only when there is no answer block): in the text outside think blocks
   (its last :data:`FINAL_STATEMENT_WINDOW` characters), the last of ``\\boxed{X}``,
   ``the (final|correct|best) answer/option is X``, ``answer: X``, ``final: X``, ``final
   verdict/count/total: X``, ``I choose X``, ``答案是 X``, ``so the total/result/count is X``.
   ``X`` runs to the end of its sentence on that line (or is the next non-empty line).
5. **Body**: otherwise the text outside think blocks, stray tags removed, is the answer.
   If there is nothing outside the think block, there is no answer: a conclusion reached only
   inside the reasoning was never stated (``<think>... the answer is 4</think>`` is
   unanswered).
6. **Boxes**: the ``\\boxed{X}`` contents of the answer block(s), or, without one, of the text
   outside think blocks, are collected (:attr:`Extraction.boxed`, when two or more differ):
   the router grades each, and boxes that disagree are a hedge. A box outside the answer
   block (and outside think blocks) is collected with the block's boxes even alone: it must
   agree with the block (``<answer>B</answer> \\boxed{C}`` is a hedge).

Text inside ``<think>`` never counts.

Example:
    >>> ex = extract_answer("<think>Maybe A?</think> The answer is (C).")
    >>> ex.answer, ex.source
    ('(C)', 'final_statement')
    >>> extract_answer("<answer>A</answer><answer>B</answer>").hedge
    True
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal, NamedTuple

#: Special tokens removed (by plain C-speed replacement) when a response is flooded with them.
FLOOD_SPECIAL_TOKENS: tuple[str, ...] = (
    "<|video_pad|>",
    "<|image_pad|>",
    "<|im_end|>",
    "<|endoftext|>",
    "<|vision_start|>",
    "<|vision_end|>",
)
#: Up to this many ``|>`` in a response, every ``<|name|>`` token is removed.
MAX_GENERIC_SPECIAL = 4096
_SPECIAL_NAME_RE = re.compile(r"[A-Za-z0-9_.:\-]{1,64}")
#: Tag literals, lower case: (literal, kind, closing). A tag is one of these in any case.
TAG_LITERALS: tuple[tuple[str, str, bool], ...] = (
    ("<answer>", "answer", False),
    ("</answer>", "answer", True),
    ("<think>", "think", False),
    ("</think>", "think", True),
    ("<thought>", "think", False),
    ("</thought>", "think", True),
)
#: Letters that match a tag's ASCII letter case-insensitively (as ``re.IGNORECASE`` has it)
#: without lower-casing to it; İ is also the one letter whose lower case is two characters.
_CASELESS_EXTRAS = {0x130: "i", 0x131: "i", 0x17F: "s"}

#: Final statements are searched in this many trailing characters of the non-think text.
FINAL_STATEMENT_WINDOW = 8192
#: A response with more answer/think tags than this is degenerate: no answer, format 0.
MAX_TAGS = 256
#: A phrase with nothing after it on its line takes the next non-empty line within this reach.
_NEXT_LINE_REACH = 400
#: Longest ``\\boxed{...}`` content read (braces are counted up to this many characters).
MAX_BOXED_CHARS = 4096

_BE = r"(?:is|was|would\s{1,4}be|should\s{1,4}be|will\s{1,4}be|must\s{1,4}be)"
FINAL_STATEMENT_RE = re.compile(
    r"(?P<boxed>\\boxed\s{0,4}\{)"
    r"|(?P<phrase>"
    r"\b(?:final|correct|right|best)\s{1,4}(?:answer|option|choice)\b[*_]{0,3}\s{0,4}"
    rf"(?:{_BE}\b\s{{0,4}}[:：]?|[:：=])"
    rf"|\banswer\b[*_]{{0,3}}\s{{0,4}}(?:{_BE}\b\s{{0,4}}[:：]?|[:：=])"
    r"|\bfinal\s{1,4}(?:verdict|decision|judge?ment|count|number|total|result|value)\b[*_]{0,3}"
    rf"\s{{0,4}}(?:{_BE}\b\s{{0,4}}[:：]?|[:：=])"
    r"|\bfinal\s{0,4}[*_]{0,3}[:：]"
    r"|\bI\s{1,4}(?:would\s{1,4})?(?:choose|select|pick|go\s{1,4}with)\b\s{0,4}[:：]?"
    r"|\b(?:so|therefore|thus|hence)\b,?\s{1,4}(?:the\s{1,4})?(?:total|result|count|number|sum"
    r"|value|final\s{1,4}count)\s{1,4}(?:is|was|would\s{1,4}be|comes\s{1,4}to)\b\s{0,4}[:：]?"
    # Chinese: "答案是：B", "答案应该是 B", "答：B", "我选 B", "所以选 B" (not "选项")
    r"|答案\s{0,4}(?:(?:应该|應該|应当|應當|应|應)?\s{0,2}(?:是|为|為)\s{0,4}[:：]?|[:：])"
    r"|答\s{0,2}[:：]"
    # Spanish, French, German, Russian, Japanese, Korean: "La respuesta correcta es la B",
    # "La bonne réponse est B", "Die richtige Antwort ist B", "Правильный ответ — B",
    # "答えは B", "正解は B", "정답은 B", "답: B"
    r"|\b(?:la\s{1,3})?(?:respuesta|réponse|reponse)(?:\s{1,3}(?:correcta|correcte|final|finale"
    r"|juste))?\s{0,4}(?:(?:es|est|sería|serait)\b\s{0,4}(?:la\s{1,3}|le\s{1,3}|l['’])?[:：]?|[:：])"
    r"|\bla\s{1,3}bonne\s{1,3}réponse\s{0,4}(?:est\b\s{0,4}[:：]?|[:：])"
    r"|\b(?:die\s{1,3})?(?:richtige\s{1,3}|korrekte\s{1,3})?antwort\s{0,4}"
    r"(?:(?:ist|lautet)\b\s{0,4}[:：]?|[:：])"
    r"|(?:правильный\s{1,3})?ответ\s{0,4}(?:[:：—–-]|это\b)"
    r"|(?:答え|正解)\s{0,2}(?:は|[:：])|정답\s{0,2}(?:은|는|[:：])|(?<![가-힣])답\s{0,2}[:：]"
    r"|(?:(?<=[我故以此该該应應当當,，:：\s])|^)(?:选择|選擇|选|選)(?![项項择擇题題])\s{0,4}[:：]?"
    r")",
    re.IGNORECASE,
)
#: The same statements on lower-cased text, tried only where a keyword occurs (str.find is
#: far faster than running the regex at every position of a long reasoning text).
_STATEMENT_AT_RE = re.compile(FINAL_STATEMENT_RE.pattern.replace(r"\bI\s", r"\bi\s"))
STATEMENT_KEYWORDS = (
    "\\boxed",
    "final",
    "correct",
    "right",
    "best",
    "answer",
    "i ",
    "答",
    "选",
    "respuesta",
    "réponse",
    "reponse",
    "antwort",
    "ответ",
    "正解",
    "정답",
    "답",
    "選",
    "so",
    "therefore",
    "thus",
    "hence",
)
_SENTENCE_END_RE = re.compile(r"(?<=[.!?。！？])\s")
_BRACE_RE = re.compile(r"[{}]")
_WRAPPERS = " \t\r\n*_`\"'“”‘’$【】「」『』《》〈〉"
_TRAILING_PUNCT = ".;,;。；，:"

Source = Literal["answer_tag", "final_statement", "body", "none"]
#: At most this many different ``\\boxed{}`` contents are kept; more is a hedge by itself.
MAX_BOXES = 16
#: More ``\\boxed`` openings than this in the graded text are a degenerate response, a hedge
#: without reading each box (reading 100k nested boxes of a 1 MB input took ~200 ms).
MAX_BOX_OPENINGS = 256


class Tag(NamedTuple):
    """One ``<answer>``/``<think>`` tag found in the text (``kind`` is ``answer`` or ``think``)."""

    start: int
    end: int
    kind: str
    closing: bool


class Extraction(NamedTuple):
    """Every step of extracting the final answer from one response.

    ``answer`` is what verifiers grade (None: no answer, e.g. a hedge or an empty response).
    ``boxed`` holds the different ``\\boxed{}`` contents of the graded text when there are two
    or more (at most :data:`MAX_BOXES` + 1; empty otherwise): the router grades each of them,
    and boxes that disagree are a hedge.

    Example:
        >>> ex = extract_answer("<think>x</think><answer> B </answer>")
        >>> ex.answer, ex.source, ex.answer_blocks, ex.think_blocks
        ('B', 'answer_tag', ('B',), 1)
    """

    text: str
    special_tokens_removed: int
    tags: tuple[Tag, ...]
    think_blocks: int
    unterminated_think: bool
    answer_blocks: tuple[str, ...]
    outside_think: str
    final_statement: str | None
    answer: str | None
    source: Source
    hedge: bool
    reason: str | None
    boxed: tuple[str, ...] = ()
    tag_variants: int = 0
    trailing: str = ""
    restated: tuple[str, ...] = ()  # a value stated again after the answer block

    def steps(self) -> dict[str, object]:
        """The steps as a JSON-friendly dict (long texts shortened), for ``reward explain``."""
        return {
            "special_tokens_removed": self.special_tokens_removed,
            "think_blocks": self.think_blocks,
            "unterminated_think": self.unterminated_think,
            "outside_think": shorten(self.outside_think),
            "answer_blocks": [shorten(b) for b in self.answer_blocks],
            "final_statement": None
            if self.final_statement is None
            else shorten(self.final_statement),
            "answer": None if self.answer is None else shorten(self.answer),
            "source": self.source,
            "hedge": self.hedge,
            "reason": self.reason,
            **({"boxed": [shorten(b, 200) for b in self.boxed]} if self.boxed else {}),
            **({"tag_variants": self.tag_variants} if self.tag_variants else {}),
            **({"trailing": shorten(self.trailing, 200)} if self.trailing else {}),
            **({"restated": [shorten(r, 200) for r in self.restated]} if self.restated else {}),
        }


def shorten(text: str, limit: int = 300) -> str:
    """``text`` cut to ``limit`` characters with a marker saying how much was left out.

    Example:
        >>> shorten("abcdef", 4)
        'abcd… (+2 chars)'
    """
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… (+{len(text) - limit} chars)"


def strip_special_tokens(text: str) -> tuple[str, int]:
    """Remove chat-template special tokens; returns the text and how many were removed.

    Example:
        >>> strip_special_tokens("<|video_pad|><answer>B</answer><|im_end|>")
        ('<answer>B</answer>', 2)
    """
    if "|" not in text or "<|" not in text:  # one-character search first: memchr-fast
        return text, 0
    n_close = text.count("|>")
    if n_close == 0:
        return text, 0
    removed = 0
    if n_close > MAX_GENERIC_SPECIAL:
        for token in FLOOD_SPECIAL_TOKENS:
            if token in text:
                removed += text.count(token)
                text = text.replace(token, "")
        return text, removed
    pieces: list[str] = []
    cursor = 0
    pos = text.find("|>")
    while pos >= 0:
        start = text.rfind("<|", max(cursor, pos - 65), pos)
        if start >= 0 and _SPECIAL_NAME_RE.fullmatch(text, start + 2, pos):
            pieces.append(text[cursor:start])
            cursor = pos + 2
            removed += 1
        pos = text.find("|>", pos + 2)
    if not removed:
        return text, 0
    pieces.append(text[cursor:])
    return "".join(pieces), removed


def scan_tags(text: str, limit: int = MAX_TAGS) -> tuple[Tag, ...]:
    """Answer/think tags in ``text``, in order (``thought`` counts as ``think``).

    Tags are matched without regard to case (exactly as ``re.IGNORECASE`` matches them) by a
    search for each literal in a lower-cased copy of the text of the same length, so a flood of
    ``<`` costs no more than plain text. At most the first ``limit + 1`` tags are returned
    (callers treat more than ``limit`` tags as a degenerate response).

    Example:
        >>> [(t.kind, t.closing) for t in scan_tags("<think>a</think><ANSWER>b</Answer>")]
        [('think', False), ('think', True), ('answer', False), ('answer', True)]
    """
    if "<" not in text:
        return ()
    if not text.isascii() and any(chr(c) in text for c in _CASELESS_EXTRAS):
        text = text.translate(_CASELESS_EXTRAS)
    low = text.lower()
    tags: list[Tag] = []
    for literal, kind, closing in TAG_LITERALS:
        # a tag never overlaps another; the first limit + 1 of each literal hold the first
        # limit + 1 of all of them
        found = 0
        pos = low.find(literal)
        while pos >= 0 and found <= limit:
            tags.append(Tag(pos, pos + len(literal), kind, closing))
            found += 1
            pos = low.find(literal, pos + len(literal))
    tags.sort()
    return tuple(tags[: limit + 1])


def clean_answer(text: str) -> str:
    """Strip whitespace, markdown emphasis, quotes and one trailing ``.``/``;``/``,``.

    Example:
        >>> clean_answer(" **(C).** ")
        '(C)'
    """
    text = text.strip(_WRAPPERS)
    if text and text[-1] in _TRAILING_PUNCT and not text.endswith("..."):
        text = text[:-1]
    return text.strip(_WRAPPERS)


def boxed_content(text: str, open_brace: int) -> str | None:
    """Content of the balanced ``{...}`` whose ``{`` is at ``open_brace`` (None if unbalanced).

    Example:
        >>> boxed_content(r"\\boxed{\\frac{1}{2}} end", 6)
        '\\\\frac{1}{2}'
    """
    depth = 0
    stop = min(len(text), open_brace + MAX_BOXED_CHARS + 2)
    for i in range(open_brace, stop):
        ch = text[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[open_brace + 1 : i]
    return None


def _phrase_value(text: str, end: int) -> str:
    """The value after a final-statement phrase ending at ``end``: rest of its sentence/line."""
    line_end = text.find("\n", end)
    if line_end < 0:
        line_end = len(text)
    value = text[end:line_end]
    if not value.strip():  # "The answer is:\nB" -> next non-empty line (close by)
        for candidate in text[line_end : line_end + _NEXT_LINE_REACH].split("\n")[1:]:
            if candidate.strip():
                value = candidate
                break
    value = value.strip()
    if value.startswith("\\boxed"):
        brace = value.find("{")
        inner = boxed_content(value, brace) if brace >= 0 else None
        if inner is not None:
            return inner.strip()
    cut = _SENTENCE_END_RE.search(value)
    if cut:
        value = value[: cut.start()]
    if not value.isascii():  # "答えは B です。", "정답은 (B)입니다.": the copula is no answer
        value = _COPULA_RE.sub("", value)
    return clean_answer(value)


_COPULA_RE = re.compile(
    r"\s{0,3}(?:です|でした|だ|입니다|이에요|예요|이다)\s{0,3}[。.!！]?\s{0,3}$"
)


#: Keyword positions visited one by one from the end before collecting the rest at once.
_LAZY_STARTS = 8


def _keyword_starts(low: str, keywords: list[str]) -> Iterator[int]:
    """Every position where one of ``keywords`` starts in ``low``, from the last one backwards.

    Usually the last one or two are all a caller needs, so they are found lazily (``rfind``);
    after :data:`_LAZY_STARTS` of them (a flood of keywords), the rest are collected at once.
    """
    last = {keyword: low.rfind(keyword) for keyword in keywords}
    last = {keyword: pos for keyword, pos in last.items() if pos >= 0}
    for _ in range(_LAZY_STARTS):
        if not last:
            return
        start = max(last.values())
        yield start
        for keyword in [k for k, pos in last.items() if pos == start]:
            before = low.rfind(keyword, 0, start + len(keyword) - 1)  # starts before ``start``
            if before >= 0:
                last[keyword] = before
            else:
                del last[keyword]
    if not last:
        return
    bound = max(last.values())  # every start still to visit is <= bound
    starts: set[int] = set()
    for keyword in last:
        pos = low.find(keyword)
        while 0 <= pos <= bound:
            starts.add(pos)
            pos = low.find(keyword, pos + 1)
    yield from sorted(starts, reverse=True)


def find_final_statement(text: str) -> str | None:
    """The last final statement in the tail of ``text`` (see the module docstring).

    Example:
        >>> find_final_statement("A man enters. The answer is B. Option A is wrong.")
        'B'
        >>> find_final_statement(r"so we get \\boxed{42}.")
        '42'
        >>> find_final_statement("no conclusion here") is None
        True
    """
    offset = max(0, len(text) - FINAL_STATEMENT_WINDOW)
    tail = text[offset:] if offset else text
    low = tail.lower()
    if len(low) != len(tail):  # only U+0130 changes length when lower-cased
        low = tail.replace("\u0130", "I").lower()
    present = [keyword for keyword in STATEMENT_KEYWORDS if keyword in low]
    if not present:
        return None
    # The last statement with a value wins. Most often that is at the last keyword: try it
    # first, then walk all keyword positions backwards.
    last = max(map(low.rfind, present))
    m = _STATEMENT_AT_RE.match(low, last)
    if m is not None and m.group("boxed") is None:
        value = _phrase_value(tail, m.end())
        if value:
            value = _with_negation(tail, low, last, m.end(), value)
            return _taken_back(tail, value, _sentence_end(tail, m.end()))
    braces: dict[int, int] | None = None
    for start in _keyword_starts(low, present):
        m = _STATEMENT_AT_RE.match(low, start)
        if m is None:
            continue
        if m.group("boxed") is not None:
            if braces is None:
                braces = matching_braces(tail)
            close = braces.get(m.end() - 1)
            if close is None or close - m.end() > MAX_BOXED_CHARS:
                continue
            value = clean_answer(tail[m.end() : close])
            if value:
                value = _taken_back(tail, value, close + 1)
        elif start == last:
            continue  # tried above
        else:
            value = _phrase_value(tail, m.end())
            if value:
                value = _with_negation(tail, low, start, m.end(), value)
                value = _taken_back(tail, value, _sentence_end(tail, m.end()))
        if value:
            return value
    return None


#: Words that take back what came before them when they stand alone in their clause ("A? No,
#: D.", "B. Just kidding.", "B. Nein, C."): corrections, and withdrawals that put nothing in
#: its place (a response that ends with one states no answer). English, German, French,
#: Spanish, Russian, Japanese, Korean and Chinese.
TAKE_BACK_ALONE = (
    r"no|nope|wait|no\s{1,3}wait|wait\s{1,3}no|actually\s{1,3}no|correction|oops|scratch\s{1,3}that"
    r"|on\s{1,3}second\s{1,3}thought|i\s{1,3}mean|just\s{1,3}kidding|jk|kidding|not\s{1,3}really"
    r"|i\s{1,3}lied|never\s{0,3}mind|ignore\s{1,3}(?:that|this|the\s{1,3}above)"
    r"|disregard\s{1,3}(?:that|this|the\s{1,3}above|it)|(?:that|this)(?:['’]s|\s{1,3}is)\s{1,3}"
    r"(?:wrong|incorrect|not\s{1,3}right|not\s{1,3}it|false)|(?:\.{2,3}|…)?\s{0,3}or\s{1,3}not"
    r"|i\s{1,3}guess\s{1,3}not|(?:the\s{1,3})?opposite(?:,?\s{1,3}actually)?|psych"
    r"|nein|doch\s{1,3}nicht|(?:mais\s{1,3})?non|pas\s{1,3}vraiment|нет|не\s{1,3}совсем"
    r"|no\s{1,3}es\s{1,3}así|いいえ|いや|違う|아니(?:요|오|야)?|不对|不對|错了|錯了|不是的"
)
#: Words that open a correction: what follows them replaces what came before ("B. Actually,
#: D.", "B. Eigentlich C.", "B. 実は C。").
TAKE_BACK_PREFIX = (
    r"(?:actually|in\s{1,3}fact|eigentlich|tatsächlich|en\s{1,3}fait|en\s{1,3}réalité"
    r"|à\s{1,3}vrai\s{1,3}dire|en\s{1,3}realidad|de\s{1,3}hecho|на\s{1,3}самом\s{1,3}деле"
    r"|вообще-то|скорее)\b"
    r"|実は|本当は|사실은?|아니(?:요|오)?(?=[\s,，、])|其实|其實|实际上|實際上|不对|不對"
)
#: A sentence after a final statement that takes it back: "The answer is B. Actually, C.",
#: "\boxed{2}. Just kidding.", "The answer is B? No." (the sentence is then read with it).
_AFTERWORD_RE = re.compile(
    rf"\s{{0,8}}(?:(?:{TAKE_BACK_ALONE})\s{{0,4}}(?:[,.!;:?、，。！…—–-]|$)|(?:{TAKE_BACK_PREFIX}))",
    re.IGNORECASE,
)
#: Longest sentence after a final statement read as its afterword.
_AFTERWORD_CHARS = 200
#: ... and at most this many words after its first word (a correction states its new
#: answer briefly).
_AFTERWORD_WORDS = 6
#: What follows "Actually," or "Wait," when it confirms or goes on reasoning, not corrects.
_CONFIRMS_RE = re.compile(
    r"(?:yes|yeah|yep|right|correct|indeed|sure|confirmed|i|i['’]m|we|let|let['’]s|to\s+be\s+sure"
    r"|that['’]s\s+right|that\s+is\s+right|it['’]s\s+right|this\s+is\s+right|double|again)\b",
    re.IGNORECASE,
)


def _afterword(tail: str, end: int) -> str:
    """The sentence right after position ``end`` of ``tail`` when it takes back the final
    statement before it ("Actually, C.", "Just kidding.", "Eigentlich C."), else ``""``."""
    rest = tail[end : end + 2 * _AFTERWORD_CHARS].lstrip(" \t$.)]}")
    if not rest.strip():
        return ""
    m = _AFTERWORD_RE.match(rest)
    if not m:
        return ""
    cut = _SENTENCE_END_RE.search(rest, 1)
    sentence = rest[: cut.start()] if cut else rest
    new = sentence[m.end() :].strip(" \t,.!;:、，。！")
    if len(sentence) > _AFTERWORD_CHARS or len(new.split()) > _AFTERWORD_WORDS:
        return ""  # a long sentence after "Actually," explains; it does not correct
    if _CONFIRMS_RE.match(new):
        return ""  # "Actually, I am sure.", "Wait, let me check... yes, B.": no correction
    return sentence.strip()


def _sentence_end(text: str, end: int) -> int:
    """Where the sentence that starts at ``end`` (the value of a final statement) ends."""
    line_end = text.find("\n", end)
    if line_end < 0:
        line_end = len(text)
    if not text[end:line_end].strip():  # the value is on the next line: its line ends it
        nxt = text.find("\n", line_end + 1)
        return len(text) if nxt < 0 else nxt
    cut = _SENTENCE_END_RE.search(text, end, line_end)
    return cut.start() if cut else line_end


def _taken_back(tail: str, value: str, end: int) -> str:
    """``value``, followed by the sentence after it when that sentence takes it back."""
    after = _afterword(tail, end)
    if not after:
        return value
    return f"{value}{'' if value[-1] in '.?!。？！' else '.'} {after}"


#: How far back a negation of a final statement is looked for, within its clause.
_NEGATION_REACH = 80
_CLAUSE_BOUNDARY_RE = re.compile(r"[.!?;,:\n。！？；，]|\bbut\b")
_NEGATION_RE = re.compile(r"\b(?:not|never|cannot)\b|n['’]t\b|\bi\s{1,3}doubt\b|不|并非|並非")


def _with_negation(tail: str, low: str, start: int, end: int, value: str) -> str:
    """``value``, or the whole clause when a negation in it governs the statement: "I don't
    think the answer is B" states no B, so the verifier gets the clause and its negation."""
    clause_start = max(0, start - _NEGATION_REACH)
    for boundary in _CLAUSE_BOUNDARY_RE.finditer(low, clause_start, start):
        clause_start = boundary.end()
    if not _NEGATION_RE.search(low, clause_start, start):
        return value
    return f"{clean_answer(tail[clause_start:end])} {value}"


def matching_braces(text: str) -> dict[int, int]:
    """Map the position of each balanced ``{`` to its ``}`` (one linear pass).

    Example:
        >>> matching_braces("a{b{c}}{")
        {3: 5, 1: 6}
    """
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for m in _BRACE_RE.finditer(text):
        if m.group() == "{":
            stack.append(m.start())
        elif stack:
            pairs[stack.pop()] = m.start()
    return pairs


def _complement(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` without the (sorted, non-overlapping) ``spans``; cut points become spaces."""
    if not spans:
        return text
    pieces: list[str] = []
    cursor = 0
    for start, end in spans:
        pieces.append(text[cursor:start])
        cursor = max(cursor, end)
    pieces.append(text[cursor:])
    return " ".join(pieces)


def _norm_block(text: str) -> str:
    return " ".join(text.split()).casefold()


def extract_answer(response: str, *, tag_variants: bool = True) -> Extraction:
    """Run the extraction pipeline on one raw response (never raises on a ``str``).

    ``tag_variants=False`` reads only plain tags (``code_exec``: a string literal such as
    ``"< answer>"`` in the code is left as written).

    Example:
        >>> extract_answer("A man opens the door.").answer
        'A man opens the door.'
        >>> extract_answer("<answer></answer>").answer
        ''
        >>> extract_answer("reasoning...</think>Final answer: 12 m").answer
        '12 m'
    """
    text, n_special = strip_special_tokens(response if isinstance(response, str) else "")
    if "\\fbox" in text:  # LaTeX's other box reads as \boxed: "\fbox{3} \boxed{4}" hedges
        text = _FBOX_RE.sub(r"\\boxed{", text)
    text, n_variants = canonical_tags(text) if tag_variants else (text, 0)
    tags = scan_tags(text)
    if len(tags) > MAX_TAGS:
        return Extraction(
            text=text,
            special_tokens_removed=n_special,
            tags=tags,
            think_blocks=0,
            unterminated_think=False,
            answer_blocks=(),
            outside_think="",
            final_statement=None,
            answer=None,
            source="none",
            hedge=False,
            reason=f"more than {MAX_TAGS} <answer>/<think> tags (degenerate response)",
        )

    blocks = _merge_unbalanced_answers(text, _blocks(text, tags))
    filled_block = next((a for a in blocks.answers if a), "")
    blocks, loose = _merge_around_loose_text(text, blocks)
    outside = _complement(text, blocks.think_regions)
    answer, source, final, reason = _choose_answer(text, blocks, outside)
    boxed: tuple[str, ...] = ()
    if answer and "\\boxed" in text:
        if source == "answer_tag":
            boxed = different_boxes(" ".join(blocks.answers))
            beside = _complement(text, sorted(blocks.think_regions + blocks.answer_regions))
            if "\\boxed" in beside:  # a box outside the block must agree with the block
                boxed = different_boxes(f"{' '.join(blocks.answers)} {beside}", at_least=1)
        else:
            boxed = different_boxes(outside)
    trailing = ""
    restated: tuple[str, ...] = ()
    if answer and source == "answer_tag" and blocks.answer_regions:
        end = blocks.answer_regions[-1][1]
        if not any(s <= end < e for s, e in blocks.think_regions):
            trailing = trailing_offer(_complement(text[end:], []))
            restated = _restated_after(text, end, blocks.think_regions, answer)
        if loose:  # merged blocks: a final statement in the loose text must agree with them
            value = _restated_value(_TAG_RE.sub(" ", loose).strip(), filled_block)
            restated = (filled_block, *value) if value else ()
    elif answer and source == "final_statement" and "\\boxed" in outside:
        trailing = trailing_offer(_after_last_box(outside, answer))
    return Extraction(
        text=text,
        special_tokens_removed=n_special,
        tags=tags,
        think_blocks=len(blocks.think_parts),
        unterminated_think=blocks.unterminated,
        answer_blocks=blocks.answers,
        outside_think=outside,
        final_statement=final,
        answer=answer,
        source=source,
        hedge=source == "answer_tag" and answer is None,
        reason=reason,
        boxed=boxed,
        tag_variants=n_variants,
        trailing=trailing,
        restated=restated,
    )


#: Words that offer another value after an answer: ``\boxed{4} (or 5)``, ``<answer>B</answer>
#: but C is also possible``, ``\boxed{B}. Maybe C.``
_OFFER_RE = re.compile(
    r"(?i)(?<![a-z])(?:or|maybe|possibly|perhaps|might|could|also|alternatively|otherwise|else"
    r"|failing\s{1,3}that|second\s{1,3}(?:choice|guess)|backup|fallback)(?![a-z])"
    r"|或|也许|也可能|可能|还是"
)
_OFFER_SENTENCE_END_RE = re.compile(r"[.!?。！？](?=\s|$)|\n\s*\n")
#: How far after the answer the words offering another value are looked for.
OFFER_REACH = 160


def trailing_offer(after: str) -> str:
    """The words right after an answer when they may offer another value: the rest of its
    sentence, and each next sentence that opens with such a word (``Maybe 5.``); ``""`` when
    none holds one. The router grades the answer with these words, and a second value offered
    there makes the answer a hedge.

    Example:
        >>> trailing_offer(", or possibly 5."), trailing_offer(" dogs in total.")
        (', or possibly 5.', '')
        >>> trailing_offer(". Maybe C. Thanks!")
        '. Maybe C.'
    """
    rest = after[:OFFER_REACH]
    out = ""
    first = True
    while rest.strip():
        lead = len(rest) - len(rest.lstrip())
        out, rest = out + rest[:lead], rest[lead:]
        m = _OFFER_SENTENCE_END_RE.search(rest)
        sentence = rest if m is None else rest[: m.end()]
        if not first and _OFFER_RE.match(sentence) is None:
            break
        out += sentence
        rest = "" if m is None else rest[m.end() :]
        first = False
    return out.strip() if _OFFER_RE.search(out) else ""


def _after_last_box(text: str, answer: str) -> str:
    """The text after the last ``\\boxed{}`` of ``text`` when that box is ``answer``."""
    last = None
    for m in _BOXED_RE.finditer(text):
        last = m
    if last is None:
        return ""
    close = matching_braces(text).get(last.end() - 1)
    if close is None or clean_answer(text[last.end() : close]) != answer:
        return ""
    return text[close + 1 :]


#: An answer or think tag written another way: spaces inside the brackets, attributes, a
#: self-closing slash, HTML entities or full-width brackets (``< answer>``, ``<answer id=2>``,
#: ``</answer >``, ``<answer/>``, ``&lt;answer&gt;``, ``＜answer＞``).
_TAG_VARIANT_RE = re.compile(
    r"(?:<|＜|&lt;|‹)[ \t]{0,3}(/?)[ \t]{0,3}(answer|think|thought)\b([^<>＜＞\n]{0,40}?)"
    r"[ \t]{0,3}/?[ \t]{0,3}(?:>|＞|&gt;|›)",
    re.IGNORECASE,
)


#: Tags written another way are looked for in texts up to this many characters (a longer
#: response is degenerate; the search would cost ~0.1 s per megabyte of ``<``).
MAX_TAG_VARIANT_CHARS = 65_536


def canonical_tags(text: str) -> tuple[str, int]:
    """``text`` with answer/think tags written another way rewritten as plain tags, and how
    many were rewritten (the format rule fails a response that needed any: the prompt asked
    for the plain tags).

    A second answer block must not hide behind a variant of the tag: ``<answer>B</answer>
    <answer id="2">C</answer>`` is two blocks, a hedge.

    Example:
        >>> canonical_tags("<answer>B</answer>< answer>C</answer >")
        ('<answer>B</answer><answer>C</answer>', 2)
    """
    if len(text) > MAX_TAG_VARIANT_CHARS or not (
        "<" in text or "＜" in text or "&lt;" in text or "‹" in text
    ):
        return text, 0
    count = 0

    def plain(m: re.Match[str]) -> str:
        nonlocal count
        tag = f"<{m.group(1)}{m.group(2).lower()}>"
        if m.group(0).lower() != tag:
            count += 1
        return tag

    out = _TAG_VARIANT_RE.sub(plain, text)
    return (out, count) if count else (text, 0)


def _merge_unbalanced_answers(text: str, blocks: _Blocks) -> _Blocks:
    """Answer tags that do not pair up one after another (a block opened inside another, a
    stray ``</answer>``, a second block never closed) make one answer block running from the
    first answer tag to the last ``</answer>`` (or to the end), its tags removed: a second
    value cannot hide behind a stray tag (``<answer>B<answer>C</answer>`` is ``B C``, a
    hedge). A single unterminated ``<answer>`` (a truncated response) is read as before."""
    think = blocks.think_regions
    answer_tags = [
        (a, b)
        for a, b in blocks.stray_tags
        if text.startswith("<a", a) or text.startswith("</a", a)
        if not any(s <= a < e for s, e in think)
    ]
    kinds = "".join("c" if text.startswith("</", a) else "o" for a, _ in answer_tags)
    if not kinds or "o" not in kinds or kinds == "o" or re.fullmatch(r"(?:oc)+", kinds):
        return blocks
    if kinds[0] == "o":
        start = answer_tags[0][0]
    else:  # a stray </answer> first: the block starts after the reasoning before it
        start = max((e for s, e in think if e <= answer_tags[0][0]), default=0)
    end = answer_tags[-1][1] if kinds[-1] == "c" else len(text)
    pieces: list[str] = []
    cursor = start
    for a, b in answer_tags:
        if a < start:
            continue
        pieces.append(text[cursor:a])
        cursor = b
    pieces.append(text[cursor:end])
    merged = "\n".join(p.strip() for p in pieces if p.strip())
    return blocks._replace(answers=(merged,), answer_regions=[(start, end)])


def _merge_around_loose_text(text: str, blocks: _Blocks) -> tuple[_Blocks, str]:
    """Two or more answer blocks with loose text among them, or an empty (or whitespace-only)
    block after a filled one with loose text after it, make one answer block: everything
    from the first filled block on (to the last ``</answer>``, or to the end of the text when
    a later block is empty), outside think blocks, tags removed. The loose text is part of the
    answer, so a second value cannot hide beside an empty block or between blocks
    (``<answer>B</answer><answer></answer>C`` and ``<answer>B</answer>C<answer>B</answer>`` are
    ``B C``, a hedge; an empty block used to be dropped and the text after it not read).
    Also returns the loose text ("" when nothing was merged): a final statement there must
    agree with the blocks (:func:`_restated_value`)."""
    answers, regions = blocks.answers, blocks.answer_regions
    if len(answers) < 2 or len(regions) != len(answers):
        return blocks, ""
    if not any(answers) or len({_norm_block(a) for a in answers if a}) > 1:
        return blocks, ""  # only empty blocks, or different filled ones (a hedge): as before
    first = next(i for i, a in enumerate(answers) if a)  # text before it is a preamble
    start = regions[first][0]
    end = len(text) if not all(answers[first:]) else regions[-1][1]
    think = [(s, e) for s, e in blocks.think_regions if start <= s < end]
    loose = _complement(
        text[start:end],
        [
            (s - start, min(e, end) - start)
            for s, e in sorted(think + [r for r in regions if r[1] <= end])
        ],
    )
    if not _TAG_RE.sub(" ", loose).strip():
        return blocks, ""  # nothing but blocks (and reasoning) there
    inner = _complement(text[start:end], [(s - start, min(e, end) - start) for s, e in think])
    merged = "\n".join(
        line.strip() for line in _TAG_RE.sub("\n", inner).splitlines() if line.strip()
    )
    return blocks._replace(answers=(merged,), answer_regions=[(start, end)]), loose


#: A bare value standing alone after an answer block: one capital letter or one number
#: (``<answer>B</answer> C``, ``<answer>4</answer>\n5``; a unit such as ``m`` is no value).
_BARE_VALUE_RE = re.compile(r"[\s(\[*_]*(?:[A-Z]|[-+−]?\d[\d.,/]*)[\s)\].*_!]*")


def _restated_after(
    text: str, end: int, think: list[tuple[int, int]], answer: str
) -> tuple[str, ...]:
    """The value stated again after the answer block that ends at ``end`` (outside think
    blocks), when it differs from ``answer``: a final statement (``<answer>B</answer> The
    answer is C.``) or a bare capital letter or number standing alone (``<answer>B</answer>C``). The
    router grades it beside the answer, and one that disagrees makes a hedge."""
    after = _complement(text[end:], [(max(s, end) - end, e - end) for s, e in think if e > end])
    return _restated_value(_TAG_RE.sub(" ", after).strip(), answer)


def _restated_value(after: str, answer: str) -> tuple[str, ...]:
    """``(value,)`` when ``after`` (text beside an answer) is a bare letter or number or holds
    a final statement whose value differs from ``answer``, else ``()``."""
    if not after:
        return ()
    if _BARE_VALUE_RE.fullmatch(after):
        value: str | None = clean_answer(after)
    else:
        value = find_final_statement(after)
    if not value or _norm_block(value) == _norm_block(answer):
        return ()
    return (value,)


_BOXED_RE = re.compile(r"\\boxed\s{0,4}\{")
_TAG_RE = re.compile(r"</?(?:answer|think|thought)>", re.IGNORECASE)
_FBOX_RE = re.compile(r"\\fbox\s{0,4}\{")


def different_boxes(text: str, at_least: int = 2) -> tuple[str, ...]:
    """The different ``\\boxed{X}`` contents of ``text``, in order, when there are
    ``at_least`` of them (two by default; compared with whitespace collapsed and case folded;
    at most :data:`MAX_BOXES` + 1).

    With ``at_least=1`` a single box is returned too: the router then grades it against the
    answer block beside it (a box outside the block must agree with the block).

    Example:
        >>> different_boxes(r"\\boxed{3} or \\boxed{4}")
        ('3', '4')
        >>> different_boxes(r"\\boxed{3}, \\boxed{ 3 }"), different_boxes(r"\\boxed{3}", 1)
        ((), ('3',))
    """
    if text.count("\\boxed") > MAX_BOX_OPENINGS:  # degenerate: a hedge outright
        return tuple(
            f"\\boxed #{i + 1} of more than {MAX_BOX_OPENINGS}" for i in range(MAX_BOXES + 1)
        )
    found: dict[str, str] = {}
    braces: dict[int, int] | None = None
    for m in _BOXED_RE.finditer(text):
        if braces is None:
            braces = matching_braces(text)
        close = braces.get(m.end() - 1)
        if close is None or close - m.end() > MAX_BOXED_CHARS:
            continue
        content = clean_answer(text[m.end() : close])
        if content:
            found.setdefault(_norm_block(content), content)
            if len(found) > MAX_BOXES:
                break
    return tuple(found.values()) if len(found) >= at_least else ()


class _Blocks(NamedTuple):
    """Where the think and answer blocks of a response are (spans are ``(start, end)``)."""

    think_parts: list[tuple[int, int]]  # contents of think blocks
    think_regions: list[tuple[int, int]]  # whole think blocks, tags included
    stray_tags: list[tuple[int, int]]  # answer tags and stray </think> outside think blocks
    answers: tuple[str, ...]  # contents of closed answer blocks outside think blocks, stripped
    unterminated: bool  # a think block that was never closed
    answer_regions: list[tuple[int, int]]  # whole closed answer blocks, tags included


def _blocks(text: str, tags: tuple[Tag, ...]) -> _Blocks:
    """Step 2 and 3 of the module docstring: read the tags into think and answer blocks."""
    think_regions: list[tuple[int, int]] = []
    think_parts: list[tuple[int, int]] = []
    stray_tags: list[tuple[int, int]] = []
    answers: list[str] = []
    answer_regions: list[tuple[int, int]] = []
    answer_start = 0
    think_open: int | None = None  # content start of the open think block
    think_start = 0
    answer_open: int | None = None
    outer_open: int | None = None  # an <answer> block that another <answer> re-opened
    outer_start = 0
    if tags and tags[0].kind == "think" and tags[0].closing:
        think_open = 0  # implicit <think> at the start (the prompt may have opened it)
    # Past the last </think>, a think block is never closed: its first <answer> ends it.
    last_think_close = max((t.start for t in tags if t.kind == "think" and t.closing), default=-1)
    implicit_close = False
    for tag in tags:
        if think_open is not None:
            if tag.kind == "think" and tag.closing:
                think_parts.append((think_open, tag.start))
                think_regions.append((think_start, tag.end))
                think_open = None
                continue
            if tag.kind != "answer" or tag.closing or tag.start < last_think_close:
                continue  # everything inside a think block is reasoning
            think_parts.append((think_open, tag.start))  # an unterminated think ends here
            think_regions.append((think_start, tag.start))
            think_open = None
            implicit_close = True
        if tag.kind == "think":
            if not tag.closing and answer_open is None:
                think_open, think_start = tag.end, tag.start
            elif tag.closing:
                stray_tags.append((tag.start, tag.end))
            continue  # a think tag inside an answer block is part of the content
        stray_tags.append((tag.start, tag.end))
        if not tag.closing:
            if answer_open is not None and outer_open is None:
                outer_open, outer_start = answer_open, answer_start
            answer_open, answer_start = tag.end, tag.start  # a re-opened block restarts
        elif answer_open is not None:
            answers.append(text[answer_open : tag.start].strip())
            answer_regions.append((answer_start, tag.end))
            answer_open = None
        elif outer_open is not None:
            # "<answer><answer>B</answer>C</answer>": the outer block closes after the inner
            # one; it holds the inner answer and more, all of it the answer (C is a second one)
            answers[-1] = _TAG_RE.sub(" ", text[outer_open : tag.start]).strip()
            answer_regions[-1] = (outer_start, tag.end)
            outer_open = None
    unterminated = think_open is not None or implicit_close
    if think_open is not None:
        think_parts.append((think_open, len(text)))
        think_regions.append((think_start, len(text)))
    return _Blocks(
        think_parts, think_regions, stray_tags, tuple(answers), unterminated, answer_regions
    )


def _choose_answer(
    text: str, blocks: _Blocks, outside: str
) -> tuple[str | None, Source, str | None, str | None]:
    """Steps 3 to 5 of the module docstring: ``(answer, source, final statement, reason)``."""
    if blocks.answers:
        filled = [b for b in blocks.answers if b]
        distinct = {_norm_block(b) for b in filled} if len(filled) > 1 else set(filled)
        if len(distinct) > 1:
            return (
                None,
                "answer_tag",
                None,
                f"{len(distinct)} different non-empty <answer> blocks (hedge)",
            )
        answer = filled[0] if filled else ""
        return answer, "answer_tag", None, None if answer else "empty <answer> block"
    final = find_final_statement(outside)
    if final:
        return final, "final_statement", final, None
    body = _complement(text, sorted(blocks.think_regions + blocks.stray_tags)).strip()
    if body:
        return body, "body", final, None
    if not blocks.think_parts:
        return None, "none", final, "empty response"
    if blocks.unterminated:
        return None, "none", final, "unterminated <think> block and no answer"
    return None, "none", final, "nothing outside the <think> block (no final answer)"
