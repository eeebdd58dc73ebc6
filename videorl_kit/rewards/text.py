"""Small text helpers shared by the verifiers (normalisation, refining an answer, gold cleanup).

Example:
    >>> normalize_text("  The Kitchen! ")
    'the kitchen'
    >>> refine_answer("I counted twice, so the answer is 5.")
    '5'
    >>> asserted_answer("not A; it is B")
    'B'
    >>> stated_answer("The answer is not A. It is B.")
    'B'
"""

from __future__ import annotations

import html
import re
import sys
import unicodedata

from videorl_kit.rewards.extract import (
    TAKE_BACK_ALONE,
    TAKE_BACK_PREFIX,
    find_final_statement,
    scan_tags,
    strip_special_tokens,
)

_PUNCT_RE = re.compile(r"[^\w\s]|_")
_WS_RE = re.compile(r"\s+")
_ARTICLES_RE = re.compile(r"\b(?:a|an|the)\b")
_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺"
#: Where a run of superscript digits starts (``^`` is put there: ``10³`` is ``10^3``).
_SUPERSCRIPT_START_RE = re.compile(f"(?<![{_SUPERSCRIPTS}])(?=[{_SUPERSCRIPTS}])")
_VULGAR_FRACTIONS = "¼½¾⅐⅑⅒⅓⅔⅕⅖⅗⅘⅙⅚⅛⅜⅝⅞↉"
#: A vulgar fraction after a digit is the fraction part of a mixed number: ``3½`` is
#: ``3 1/2``, never ``31/2``.
_MIXED_NUMBER_RE = re.compile(f"(?<=[0-9０-９])(?=[{_VULGAR_FRACTIONS}])")
_FOLD_TABLE = str.maketrans(_SUPERSCRIPTS, "0123456789-+")
_FRACTION_SLASH = "\u2044"
#: Characters that render as nothing (Unicode's default-ignorable code points: zero-width
#: space, non-joiner and joiner, word joiner, byte order mark, soft hyphen, bidirectional
#: controls, variation selectors, Hangul fillers, tag characters). A reader sees the text
#: without them, so the verifiers read it so: ``B\u200bC`` is ``BC``, never ``B``.
_INVISIBLE_BMP = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
)
INVISIBLE_RE = re.compile(f"[{_INVISIBLE_BMP}\U0001d173-\U0001d17a\U000e0000-\U000e0fff]")
#: The same without the characters beyond U+FFFF, which only a text stored four bytes per
#: character can hold (searching for them costs four times as much).
_INVISIBLE_BMP_RE = re.compile(f"[{_INVISIBLE_BMP}]")  # one character: sre's fast search
#: The same characters one by one (str.replace is far faster than re.sub on a flood of them).
_INVISIBLE_RANGES = (
    (0xAD, 0xAD), (0x34F, 0x34F), (0x61C, 0x61C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0),
)  # fmt: skip
_INVISIBLE_CHARS = tuple(
    chr(c) for first, last in _INVISIBLE_RANGES for c in range(first, last + 1)
)
#: Invisible characters beyond U+FFFF (tag characters) are removed from texts up to this long
#: (removing a flood of them, one by one with a regex, costs ~100 ms per megabyte).
MAX_ASTRAL_INVISIBLE_CHARS = 65_536
_INVISIBLE_ASTRAL_RE = re.compile("[\U0001d173-\U0001d17a\U000e0000-\U000e0fff]+")


def _invisible_re(text: str) -> re.Pattern[str]:
    """:data:`INVISIBLE_RE`, or its cheaper part when ``text`` holds no character beyond U+FFFF
    (CPython stores such a text in at most two bytes per character: its size tells)."""
    return INVISIBLE_RE if sys.getsizeof(text) >= 4 * len(text) else _INVISIBLE_BMP_RE


#: Longer texts are not folded: no verifier reads that much of an answer as letters or numbers
#: (OCR and ROUGE read such answers as written), and folding a megabyte of superscripts or
#: vulgar fractions takes half a second.
MAX_FOLD_CHARS = 8192


def remove_invisible(text: str) -> str:
    """``text`` without the characters that render as nothing (:data:`INVISIBLE_RE`).

    The router applies it to the whole response before extraction (except for verifiers that
    read raw text, such as ``code_exec``), so a tag or a ``\\boxed{}`` split by one is still
    seen as written on the screen.

    Example:
        >>> remove_invisible("<ans\\u200bwer>B</answer>"), remove_invisible("plain")
        ('<answer>B</answer>', 'plain')
    """
    if text.isascii():
        return text
    pattern = _invisible_re(text)
    if not pattern.search(text):
        return text
    for char in _INVISIBLE_CHARS:  # str.replace is far faster than re.sub on a flood of them
        if char in text:
            text = text.replace(char, "")
    if pattern is INVISIBLE_RE and len(text) <= MAX_ASTRAL_INVISIBLE_CHARS:
        text = _INVISIBLE_ASTRAL_RE.sub("", text)  # the ones beyond U+FFFF (tag characters)
    return text


# Letters of other scripts that render like a Latin letter (a curated subset of Unicode TR39's
# confusables: Cyrillic, Greek, Armenian, Cherokee, Lisu, Coptic, Latin small capitals), read
# as that letter so that a second value cannot hide behind one (``B or С`` with a Cyrillic Es).
_CONFUSABLE_PAIRS = {
    # Cyrillic
    "А": "A",
    "В": "B",
    "С": "C",
    "Е": "E",
    "Н": "H",
    "І": "I",
    "Ј": "J",
    "К": "K",
    "М": "M",
    "О": "O",
    "Р": "P",
    "Ѕ": "S",
    "Т": "T",
    "Х": "X",
    "У": "Y",
    "Ү": "Y",
    "Ԁ": "D",
    "Ԍ": "G",
    "Ԛ": "Q",
    "Ԝ": "W",
    "Ӏ": "I",
    "а": "a",
    "с": "c",
    "е": "e",
    "і": "i",
    "ј": "j",
    "о": "o",
    "р": "p",
    "ѕ": "s",
    "х": "x",
    "у": "y",
    "ԁ": "d",
    "ԛ": "q",
    "ԝ": "w",
    "һ": "h",
    "ӏ": "l",
    "ү": "y",
    "ɡ": "g",
    # Greek
    "Α": "A",
    "Β": "B",
    "Ε": "E",
    "Ζ": "Z",
    "Η": "H",
    "Ι": "I",
    "Κ": "K",
    "Μ": "M",
    "Ν": "N",
    "Ο": "O",
    "Ρ": "P",
    "Τ": "T",
    "Υ": "Y",
    "Χ": "X",
    "Ϲ": "C",
    "Ϳ": "J",
    "ϲ": "c",
    "ο": "o",
    "ϳ": "j",
    # Armenian
    "Օ": "O",
    "Ս": "U",
    "ո": "n",
    "ս": "u",
    "օ": "o",
    "հ": "h",
    "զ": "q",
    "ց": "g",
    "ա": "w",
    # Cherokee (capitals)
    "Ꭺ": "A",
    "Ᏼ": "B",
    "Ꮯ": "C",
    "Ꭰ": "D",
    "Ꭼ": "E",
    "Ꮐ": "G",
    "Ꮋ": "H",
    "Ꭻ": "J",
    "Ꮶ": "K",
    "Ꮮ": "L",
    "Ꮇ": "M",
    "Ꮲ": "P",
    "Ꮪ": "S",
    "Ꭲ": "T",
    "Ꮩ": "V",
    "Ꮃ": "W",
    "Ꮓ": "Z",
    "Ꮢ": "R",
    # Lisu
    "ꓮ": "A",
    "ꓐ": "B",
    "ꓚ": "C",
    "ꓓ": "D",
    "ꓰ": "E",
    "ꓝ": "F",
    "ꓖ": "G",
    "ꓧ": "H",
    "ꓲ": "I",
    "ꓙ": "J",
    "ꓗ": "K",
    "ꓡ": "L",
    "ꓟ": "M",
    "ꓠ": "N",
    "ꓳ": "O",
    "ꓑ": "P",
    "ꓣ": "R",
    "ꓢ": "S",
    "ꓔ": "T",
    "ꓴ": "U",
    "ꓦ": "V",
    "ꓪ": "W",
    "ꓫ": "X",
    "ꓬ": "Y",
    "ꓜ": "Z",
    # Coptic
    "Ⲁ": "A",
    "Ⲃ": "B",
    "Ⲥ": "C",
    "Ⲉ": "E",
    "Ⲏ": "H",
    "Ⲓ": "I",
    "Ⲕ": "K",
    "Ⲙ": "M",
    "Ⲛ": "N",
    "Ⲟ": "O",
    "Ⲣ": "P",
    "Ⲧ": "T",
    "Ⲩ": "Y",
    "Ⲭ": "X",
    "ⲥ": "c",
    "ⲟ": "o",
    "ⲣ": "p",
    # Latin small capitals and IPA letters
    "ᴀ": "A",
    "ʙ": "B",
    "ᴄ": "C",
    "ᴅ": "D",
    "ᴇ": "E",
    "ꜰ": "F",
    "ɢ": "G",
    "ʜ": "H",
    "ɪ": "I",
    "ᴊ": "J",
    "ᴋ": "K",
    "ʟ": "L",
    "ᴍ": "M",
    "ɴ": "N",
    "ᴏ": "O",
    "ᴘ": "P",
    "ʀ": "R",
    "ꜱ": "S",
    "ᴛ": "T",
    "ᴜ": "U",
    "ᴠ": "V",
    "ᴡ": "W",
    "ʏ": "Y",
    "ᴢ": "Z",
}
_CONFUSABLES: dict[int, str] = {ord(k): v for k, v in _CONFUSABLE_PAIRS.items()}
# Enclosed letters that NFKC leaves alone: negative circled, negative squared, regional indicators.
for _base in (0x1F150, 0x1F170, 0x1F1E6):
    _CONFUSABLES.update({_base + i: chr(ord("A") + i) for i in range(26)})
_CONFUSABLE_RE = re.compile("[" + "".join(map(chr, _CONFUSABLES)) + "]")
#: Look-alikes that are symbols, not letters (enclosed letters such as 🅒): folded anywhere.
_SYMBOL_CONFUSABLES = {k: v for k, v in _CONFUSABLES.items() if not chr(k).isalpha()}
_LETTER_RUN_RE = re.compile(r"[^\W\d_]+")
#: A word of two or more Cyrillic or Greek letters is a word of that language (``Нет``,
#: ``Да``), never folded; a lone look-alike or one mixed into a Latin word is.
_NATIVE_WORD_RE = re.compile("[\u0370-\u03ff\u0400-\u04ff]{2,}")


def _fold_confusables(text: str) -> str:
    """Look-alike letters read as Latin, except in whole Cyrillic or Greek words."""

    def fold(match: re.Match[str]) -> str:
        word = match.group(0)
        return word if _NATIVE_WORD_RE.fullmatch(word) else word.translate(_CONFUSABLES)

    return _LETTER_RUN_RE.sub(fold, text).translate(_SYMBOL_CONFUSABLES)


#: An HTML character reference with its semicolon (``&#43;``, ``&#x2F;``, ``&sol;``).
_HTML_REF_RE = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")


def _html_ref(match: re.Match[str]) -> str:
    return html.unescape(match.group(0))


def fold_compat(text: str) -> str:
    """Unicode compatibility forms folded to plain ones (NFKC): full-width ``Ｂ``, ``１２``,
    ``３．５``, circled ``Ⓑ``, no-break spaces, vulgar fractions (``½`` is ``1/2``, ``3½`` is
    ``3 1/2``). A run of superscript digits is an exponent and becomes ``^`` plus the digits
    first (``10³`` is ``10^3``, never ``103``). Characters that render as nothing
    (:data:`INVISIBLE_RE`: zero-width spaces and joiners, soft hyphens, ...) are removed at
    any length; texts longer than :data:`MAX_FOLD_CHARS` are otherwise returned as they are.

    The router folds every answer, ground truth and option once before a verifier reads them
    (verifiers registered with ``raw_text=True``, such as ``code_exec``, get them as written).

    HTML character references are the characters they name (``B &#43; C`` is ``B + C``), and
    letters of other scripts that look like a Latin letter are that letter (``B or С`` with a
    Cyrillic Es is ``B or C``; ``_CONFUSABLES``), in texts up to :data:`MAX_FOLD_CHARS`.

    Example:
        >>> fold_compat("（Ｃ）"), fold_compat("１，０００"), fold_compat("10³"), fold_compat("B")
        ('(C)', '1,000', '10^3', 'B')
        >>> fold_compat("B &#43; C"), fold_compat("B or \u0421")
        ('B + C', 'B or C')
        >>> fold_compat("3½"), fold_compat("¾"), fold_compat("B\u200bC")
        ('3 1/2', '3/4', 'BC')
    """
    if len(text) <= MAX_FOLD_CHARS and "&" in text and ";" in text and _HTML_REF_RE.search(text):
        text = _HTML_REF_RE.sub(_html_ref, text)
    if text.isascii():
        return text
    text = remove_invisible(text)  # at any length: a hedge must not hide behind them
    if len(text) > MAX_FOLD_CHARS:
        return text
    if _CONFUSABLE_RE.search(text):
        text = _fold_confusables(text)
    if _SUPERSCRIPT_START_RE.search(text):
        text = _SUPERSCRIPT_START_RE.sub("^", text).translate(_FOLD_TABLE)
    if _MIXED_NUMBER_RE.search(text):
        text = _MIXED_NUMBER_RE.sub(" ", text)
    return unicodedata.normalize("NFKC", text).replace(_FRACTION_SLASH, "/")


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
        >>> refine_answer("B"), refine_answer("The answer is D.")
        ('B', 'D')
    """
    final = find_final_statement(answer)
    return final if final else answer.strip()


#: Negating words as :func:`normalize_text` leaves them (apostrophes dropped: ``doesnt``).
NEGATION_WORDS = frozenset(
    re.findall(
        r"\w+",
        "not no never nobody nothing none neither nor cannot without isnt arent wasnt werent "
        "doesnt dont didnt cant wont couldnt shouldnt hasnt havent hadnt",
    )
)

#: Where an answer splits into clauses: ``; ! ? ( ) [ ]``, ``, :`` not before a digit and ``.``
#: before a space or the end (not inside ``3.5``, ``1,000``, ``1:30``), a dash between spaces,
#: and the word "but". A short bracketed item (``(C)``, ``[B]``, ``(12)``, ``(three)``) is part
#: of its clause, not a clause of its own.
_CLAUSE_RE = re.compile(
    r"(?P<item>[(\[]{1,2}\s{0,2}[\w.]{1,12}\s{0,2}[)\]]{1,2})"
    r"|[;!?()\[\]]|[,:](?!\d)|\.(?=\s|$)|\s[-–—]\s|—|\bbut\b|\bbecause\b",
    re.IGNORECASE,
)
_CUT = "\x00"
#: "not" that does not reject: "not only A but also B", "not as good as", "not wrong".
_NOT_REJECTING = r"(?!\s{1,3}(?:only|as|quite\s{1,3}as|wrong|incorrect|false|bad)\b)"
#: The subject of a rejecting clause: up to four words ("it", "the total", "Response 2").
_SUBJECT = r"(?:\w{1,20}\s{1,3}){0,3}\w{1,20}"
#: A clause that only rejects something, at its start: "not A", "nor is it A", a subject with
#: "is/are/does/can not" ("it is not 5", "the total is not 8", "Response 2 isn't better", "he
#: does not dive", "it can't be A"), a superseded guess ("I first thought B") ...
_REJECTS_AT_START_RE = re.compile(
    r"\s{0,8}(?:(?:and|or|so)\s{1,3})?"
    rf"(?:{_SUBJECT}(?:\s{{1,3}}(?:is|am|was|are|were|does|do|did|can|could|must|should|would"
    r"|will)|['’](?:s|m|re))\s{1,3}"
    rf"|(?:definitely|certainly|clearly|surely|absolutely)\s{{1,3}})?not\b{_NOT_REJECTING}"
    rf"|\s{{0,8}}{_SUBJECT}\s{{1,3}}(?:isn|wasn|aren|weren|doesn|don|didn|can|couldn|mustn"
    rf"|shouldn|wouldn|won)['’]t\b{_NOT_REJECTING}"
    rf"|\s{{0,8}}{_SUBJECT}\s{{1,3}}cannot\b"
    r"|\s{0,8}nor\b"
    # "neither A nor B" (short items: "neither is better nor worse" is a judgement)
    r"|\s{0,8}neither\s{1,3}(?:(?:option|choice|response)\s{1,3})?\S{1,20}\s{1,3}nor\s{1,3}"
    r"(?:(?:option|choice|response)\s{1,3})?\S{1,20}\s{0,8}$"
    r"|\s{0,8}i\s{1,3}(?:first\s{1,3}|initially\s{1,3}|originally\s{1,3}|at\s{1,3}first\s{1,3})?"
    r"(?:thought|assumed|guessed|counted|believed|picked|chose|said)\b"
    r"|\s{0,8}no\s{1,3}(?:tie|draw|option\s{1,3}[a-z]|[a-z])\s{0,8}$"  # "no tie", "no D"
    r"|\s{0,8}(?:答案|它|这|這|那|正确答案|正確答案)?\s{0,2}(?:而|并|並)?(?:不是|并非|並非|不选|不選)",
    re.IGNORECASE,
)
#: ... or at its end ("A is wrong", "B is not correct", "C is not", "D isn't").
_REJECTS_AT_END_RE = re.compile(
    r"\b(?:(?:is|was|are|seems)\s{1,3}(?:wrong|incorrect|false"
    r"|not\s{1,3}(?:correct|right|it|the\s{1,3}answer))|(?:is|was)\s{1,3}not|isn['’]t"
    r"|(?:is|are|was|were|can\s{1,3}be|has\s{1,3}been)\s{1,3}(?:ruled\s{1,3}out|eliminated"
    r"|excluded))\s{0,8}$",
    re.IGNORECASE,
)
#: A correction takes back every clause before it: a clause that is only "no", "wait",
#: "correction", "scratch that", "I mean" ("A? No, D."), or one that starts with "actually"
#: or "in fact" ("B. Actually, D.").
_CORRECTION_RE = re.compile(
    rf"\s{{0,8}}(?:(?:{TAKE_BACK_ALONE})\s{{0,8}}$|(?:{TAKE_BACK_PREFIX})[\s,、，]{{0,3}})",
    re.IGNORECASE,
)
#: Words without which no clause is a rejection or correction (a quick test before splitting).
_REJECTION_HINT_RE = re.compile(
    r"not|n['’]t|wrong|incorrect|false|\bno\b|nor\b|instead|rather|cannot|\bi\s|ruled"
    r"|eliminated|excluded|wait|actually|in\s{1,3}fact|correction|oops|scratch|不是|并非|並非"
    r"|不选|不選|kidding|\bjk\b|mind|ignore|disregard|opposite|psych|nein|nicht|\bnon\b"
    r"|нет|совсем|así|eigentlich|tatsächlich|fait|réalité|vrai|realidad|hecho|самом|вообще"
    r"|скорее|いいえ|いや|違う|아니|사실|実は|本当は|不对|不對|错了|錯了|其实|其實|实际上|實際上",
    re.IGNORECASE,
)
#: A last clause that withdraws the answer and puts nothing in its place ("Just kidding.",
#: "Never mind.", "... or not.", "That's wrong."): see :func:`withdrawn`.
_WITHDRAWAL_RE = re.compile(
    r"\s{0,8}(?:just\s{1,3}kidding|jk|kidding|not\s{1,3}really|i\s{1,3}lied|never\s{0,3}mind"
    r"|scratch\s{1,3}that|ignore\s{1,3}(?:that|this|the\s{1,3}above)"
    r"|disregard\s{1,3}(?:that|this|the\s{1,3}above|it)|(?:that|this)(?:['’]s|\s{1,3}is)\s{1,3}"
    r"(?:wrong|incorrect|not\s{1,3}right|not\s{1,3}it|false)|(?:\.{2,3}|…)?\s{0,3}or\s{1,3}not"
    r"|i\s{1,3}guess\s{1,3}not|(?:the\s{1,3})?opposite(?:,?\s{1,3}actually)?|psych"
    r"|pas\s{1,3}vraiment|не\s{1,3}совсем)\s{0,8}[.!…]{0,3}\s{0,8}$",
    re.IGNORECASE,
)


_WITHDRAWAL_TAIL = 120
_WITHDRAWAL_HINT_RE = re.compile(
    r"kidding|jk|really|lied|mind|scratch|ignore|disregard|wrong|incorrect|right|false|\bit\b"
    r"|not|opposite|psych|vraiment|совсем",
    re.IGNORECASE,
)


def withdrawn(answer: str) -> bool:
    """True when the answer's last clause withdraws it with nothing in its place.

    Example:
        >>> withdrawn("[10, 20]. Just kidding."), withdrawn("Yes. Never mind."), withdrawn("4")
        (True, True, False)
    """
    text = answer.strip()
    if len(text) > MAX_ASSERTED_CHARS:
        return False
    end = text.rstrip(" \t\n.!…)")
    if not end or not end[-1].isalpha():  # JSON, a number, a box: no withdrawal ends it
        return False
    tail = text[-_WITHDRAWAL_TAIL:]  # only the last clauses matter: a bounded, fast look
    if not _WITHDRAWAL_HINT_RE.search(tail, max(0, len(tail) - 60)):
        return False
    pieces = [p for p in clauses(tail) if p.strip(" \t\n.!…")]
    if len(pieces) < 2:
        return False
    if _WITHDRAWAL_RE.fullmatch(pieces[-1]):
        return True
    return len(pieces) > 2 and bool(_WITHDRAWAL_RE.fullmatch(",".join(pieces[-2:])))


_CORRECTION_AT_RE = re.compile(
    rf"(?:^|(?<=[.!?;,:。！？；，、\n]))\s{{0,8}}(?:{TAKE_BACK_PREFIX})[\s,、，]{{0,3}}",
    re.IGNORECASE,
)


def after_correction(answer: str) -> str:
    """What follows the last correction of ``answer`` ("2. Eigentlich 3." is ``3.``), else it.

    Example:
        >>> after_correction("2. Actually, 3."), after_correction("2")
        ('3.', '2')
    """
    if len(answer) > MAX_ASSERTED_CHARS or not _REJECTION_HINT_RE.search(answer):
        return answer
    ends = [m.end() for m in _CORRECTION_AT_RE.finditer(answer)]
    rest = answer[ends[-1] :].strip() if ends else ""
    return rest or answer


#: Phrases that reject what follows them: "C rather than D", "4 instead of 5", "A and not B".
_REJECTING_LINK_RE = re.compile(
    r"\s{0,3},?\s{0,3}\b(?:instead\s{1,3}of|rather\s{1,3}than|and\s{1,3}not|but\s{1,3}not)\b\s{0,3}",
    re.IGNORECASE,
)
#: A statement frame in front of the answer: "it is", "it's", "the answer is", "I think it's",
#: "so" (after a dropped rejection: "It is not A or B, so C").
_FRAME_RE = re.compile(
    # Chinese, before a letter, number or bracket: "是 B", "而是 B", "我认为是 B", "应该选 B"
    r"\s{0,8}(?:我?(?:认为|認為|觉得|覺得|想)?\s{0,2}(?:应该|應該|应当|應當|肯定|一定)?\s{0,2}"
    r"(?:而|就)?(?:是|选择|選擇|选|選|为|為)\s{0,2}[:：]?\s{0,2}(?=[A-Za-z0-9(\[（【「])|"
    r"\s{0,8}(?:(?:so|therefore|thus|hence|then|instead)\b,?\s{1,3})?"
    r"(?:i\s{1,3}(?:think|believe|guess|would\s{1,3}say)\s{1,3}(?:that\s{1,3})?)?"
    r"(?:(?:it|that|this)\s{0,3}(?:is|was|'s|’s|must\s{1,3}be|has\s{1,3}to\s{1,3}be"
    r"|should\s{1,3}be|would\s{1,3}be)\s{1,3}(?:actually\s{1,3}|really\s{1,3}|clearly\s{1,3})?"
    r"|the\s{1,3}(?:correct\s{1,3}|right\s{1,3}|final\s{1,3}|best\s{1,3})?"
    r"(?:answer|option|choice)\s{1,3}(?:is|was|would\s{1,3}be|should\s{1,3}be)\s{1,3})?)",
    re.IGNORECASE,
)
#: Longest answer whose clauses are examined (longer text is returned as it is).
MAX_ASSERTED_CHARS = 2000


def clauses(text: str) -> list[str]:
    """``text`` cut into clauses (see :data:`_CLAUSE_RE`); a short bracketed item stays in its
    clause.

    Example:
        >>> clauses("not (B); it is (C).")
        ['not (B)', ' it is (C)', '']
        >>> clauses("6 (not 7) chairs")
        ['6 ', 'not 7', ' chairs']
    """
    return _CLAUSE_RE.sub(lambda m: m.group() if m.group("item") else _CUT, text).split(_CUT)


def asserted_answer(answer: str) -> str:
    """What an answer asserts: clauses that only reject something ("not A", "it is not 5",
    "the total is not 8", "nor is it A", "A is wrong", "isn't C", what follows "instead of",
    "rather than", "and not") are dropped, and so is what a correction takes back ("A? No, D",
    "B. Actually, D"); then a leading "it is" / "the answer is" / "I think it's" frame. ``""``
    when every clause is a rejection (the answer names nothing).

    Clauses are those of :func:`clauses`. A hedge stays a hedge ("A or B, not C" asserts
    "A or B"), and the frame is kept in front of more than one clause ("I think it's B, but it
    could be C").

    Example:
        >>> asserted_answer("4, not 5"), asserted_answer("not 5 but 4")
        ('4', '4')
        >>> asserted_answer("C (not D)"), asserted_answer("It isn't C, it's D.")
        ('C', 'D')
        >>> asserted_answer("not B"), asserted_answer("not (B); it is (C).")
        ('', '(C)')
        >>> asserted_answer("A or B, not C"), asserted_answer("It is Paris.")
        ('A or B', 'Paris.')
        >>> asserted_answer("A? No, D."), asserted_answer("I first thought B, but it's actually D")
        ('D', 'D')
    """
    text = answer.strip()
    if len(text) > MAX_ASSERTED_CHARS:
        return text
    if _REJECTION_HINT_RE.search(text):
        pieces = [p for p in clauses(_REJECTING_LINK_RE.sub(", not ", text)) if p.strip()]
        kept: list[str] = []
        for piece in pieces:
            correction = _CORRECTION_RE.match(piece)
            if correction:  # "A? No, D.": what came before is taken back
                kept, piece = [], piece[correction.end() :]
            if piece.strip() and not (
                _REJECTS_AT_START_RE.match(piece) or _REJECTS_AT_END_RE.search(piece)
            ):
                kept.append(piece)
        if kept != pieces:
            if not kept:
                return ""
            text = ", ".join(p.strip() for p in kept)
    frame = _FRAME_RE.match(text)
    if frame and 0 < frame.end() < len(text):
        rest = text[frame.end() :]
        if len(clauses(rest.rstrip(" \t.!"))) == 1:  # "it's B, but maybe C" stays
            text = rest
    return text.strip()


def stated_answer(answer: str, refined: str | None = None) -> str:
    """What an answer states: :func:`asserted_answer` of its final statement
    (:func:`refine_answer`; pass ``refined`` when it is at hand). A final statement that only
    rejects ("The answer is not A. Nor is it B. It is C.") is read on to the end of the answer.

    Example:
        >>> stated_answer("The answer is not A. Nor is it B. It is C.")
        'C'
        >>> stated_answer("I think the answer is B, not A."), stated_answer("The answer is not A.")
        ('B', '')
    """
    if refined is None:
        refined = refine_answer(answer)
    stated = asserted_answer(refined)
    if stated or refined == answer.strip() or len(answer) > MAX_ASSERTED_CHARS:
        return stated
    at = answer.rfind(refined)  # -1: the statement's value was cleaned: read the whole answer
    return asserted_answer(answer[max(at, 0) :])


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
