"""Multiple choice: the ``choice`` verifier (letters A–Z, or option text when options are given).

What counts as naming option C (case-insensitive, after the final-statement refinement of
:func:`~videorl_kit.rewards.text.refine_answer`): ``C``, ``(C)``, ``[C]``, ``C.``, ``C:``,
``C) Blue``, ``C. Blue``, ``Option C``, ``Choice: C``, ``C because ...``, ``The answer is C``,
``\\boxed{C}``; and, when ``options`` are given, the option text itself (``Blue``).

Clauses that only reject an option are dropped (``not A; it is B``, ``B, not A`` and ``A? No,
B`` name B; ``not B`` alone names nothing; :func:`~videorl_kit.rewards.text.stated_answer`), as
is a leading ``it is`` / ``the answer is`` frame. An answer that is no option's text may name
one by its words (:func:`_option_by_words`: ``she jumps into the pool``).

What does not: an English article or pronoun (``A man opens the door``, ``I think ...``) unless the
rest is that option's text; letters inside words or abbreviations (``e.g.``); letters in the
reasoning (only the extracted final answer is read). Hedges score 0: ``A or B``, ``A, B, C, D``,
``A/B``, ``A and B``, ``C or maybe D``, ``B, but C is also possible``, a letter contradicting its
option text (``C) Red`` when Red is option A), or text matching several options.

The ground truth may be a letter (``B``, ``(B)``, ``B. Blue``) or option text. Option text with
``options`` is mapped to its letter (no match: unverifiable); without options, the answer must
be the same text (normalised), since a letter cannot be mapped.

Example:
    >>> v = ChoiceVerifier(ChoiceParams())
    >>> v.score("(C)", "C").accuracy, v.score("A or B", "A").accuracy
    (1.0, 0.0)
    >>> v.score("Blue", "B", ["A. Red", "B. Blue"]).accuracy
    1.0
    >>> v.score("A man opens the door", "A").details["reason"]
    'no option letter found'
"""

from __future__ import annotations

import re
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from videorl_kit.core.verifiers import register_verifier
from videorl_kit.rewards.base import VerifyOutcome
from videorl_kit.rewards.extract import boxed_content, clean_answer
from videorl_kit.rewards.numeric import number_words_as_digits
from videorl_kit.rewards.text import (
    NEGATION_WORDS,
    clean_gold,
    normalize_text,
    refine_answer,
    stated_answer,
)

#: Longest answer text compared against option texts (longer text is no option).
MAX_OPTION_TEXT_CHARS = 2000

_DESIGNATOR_RE = re.compile(
    r"(?P<kw>(?:option|choice|answer|选项|选择|选)\s{0,3}[:：]?\s{0,3})?"
    r"(?:(?P<open>[(\[])\s{0,2})?(?P<letter>[A-Za-z])(?:\s{0,2}(?P<close>[)\]]))?"
    r"(?P<punct>[.:：。,;])?",
    re.IGNORECASE,
)
#: Words and signs that join two answers: "B or C", "B + C", "B vs C", "B 或者 C", "B 还是 C".
_JOINERS = (
    r"\bor\b|\band\b|\band/or\b|\bvs\b\.?|\bversus\b|\bplus\b|\bthen\b"
    r"|或者|或是|或|还是|還是|以及|和|与|與|及|跟"
)
_HEDGE_RE = re.compile(
    rf"\s{{0,3}}(?:,\s{{0,3}}(?:or\b|and\b)?|/|\||&|;|\+|、|~|→|->|{_JOINERS})\s{{0,3}}"
    r"(?:(?:maybe|possibly|perhaps|probably|likely|even|also)\s{1,3})?"
    r"(?:(?:option|choice)\s{0,3})?[(\[]?\s{0,2}(?P<letter>[A-Za-z])\s{0,2}[)\]]?(?![\w'’])",
    re.IGNORECASE,
)
#: Where an answer that lists options splits: "(A) and Blue", "A. Red / B", one per line.
_LIST_SPLIT_RE = re.compile(rf"\s*(?:[\n,;/|&+、]|{_JOINERS})\s*", re.IGNORECASE)
#: Another option named as possible after the answer: "B, but C is also possible", "B (C could
#: work too)", "B, or maybe C". Letters A–J only; a bare A or I counts only before "is"/"was" or
#: punctuation (else it is an article or a pronoun: "though I might be wrong").


def _other_letter(name: str) -> str:
    """Pattern of an option letter in running text, its groups prefixed with ``name``."""
    return (
        r"(?:option\s{1,3}|choice\s{1,3})?"
        rf"(?:\((?P<{name}b>[A-J])\)|(?P<{name}>[B-HJ])(?![\w'’])"
        rf"|(?P<{name}a>[AI])(?=\s{{0,3}}(?:is\b|was\b|[,.;)]|$)))"
    )


_ALTERNATIVE_RE = re.compile(
    rf"(?<![\w'’]){_other_letter('x')}[^.;\n]{{0,30}}?"
    r"\b(?i:also|too|might|could|may|possibly|perhaps|maybe|as\s{1,3}well)\b"
    r"|\b(?i:also|maybe|possibly|perhaps|probably|likely|or|could\s{1,3}be|might\s{1,3}be"
    r"|i\s{1,3}(?:think|guess|believe))\s{1,3}"
    rf"{_other_letter('y')}"
    # a fallback (round 4): "B. Otherwise C.", "B; failing that, C", "second guess: C",
    # "B（也可能是C）"
    r"|(?:(?<![\w'’])(?i:otherwise|else|failing\s{1,3}that|alternatively|backup|fallback"
    r"|second\s{1,3}(?:choice|guess|option|pick)(?:\s{1,3}(?:is|would\s{1,3}be))?)"
    r"|也可能是|也许是|也許是|或许是|或許是|可能是|也可能|也许|也許)[\s,:：，]{0,3}"
    rf"{_other_letter('z')}"
    rf"|(?<![\w'’]){_other_letter('w')}\s{{1,3}}(?i:as\s{{1,3}}(?:a\s{{1,3}})?(?:backup|fallback))"
)
#: After a bare "I" the hedge check found: the pronoun of a word of doubt ("B, I think").
_PRONOUN_I_RE = re.compile(r"\s{1,3}(?:think|guess|believe|suppose|reckon)\b", re.IGNORECASE)
_NEGATION_RE = re.compile(r"\b(?:not|never|wrong|incorrect|false)\b|n['’]t\b", re.IGNORECASE)
_TRAILING_BRACKET_RE = re.compile(r"[(\[]\s{0,2}([A-Za-z])\s{0,2}[)\]][\s.!。]{0,4}$")
_OPTION_LABEL_RE = re.compile(r"\s{0,4}[(\[]?([A-Za-z])\s{0,2}[.):：\]]\s{0,4}(.*)", re.DOTALL)
_BOXED_OR_TEXT_RE = re.compile(r"\\(?:boxed|text|textbf|mathrm)\s{0,2}\{")
_ARTICLE_LETTERS = frozenset("AI")
#: Words that may follow a bare "A"/"I" only when it names an option ("A is correct").
_DESIGNATOR_FOLLOWERS = frozenset(
    ["because", "since", "as", "is", "was", "would", "seems", "appears", "fits", "matches", "best"]
)
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#: Markdown emphasis (``**B**``, ``__B__``, ``*B*``), removed before reading letters.
_EMPHASIS_RE = re.compile(r"\*{1,3}|(?<![A-Za-z0-9])_{1,3}|_{1,3}(?![A-Za-z0-9])")
_CJK_BRACKET_CHARS = "【】「」『』〔〕"
_CJK_BRACKETS = str.maketrans(_CJK_BRACKET_CHARS, "()()()()")
_LISTED = (
    r"\s{0,4}(?:(?:option|choice|answer|选项|選項)\s{0,3}[:：]?\s{0,3})?[(\[]?\s{0,2}"
    r"(?<![A-Za-z])([A-Za-z])(?![A-Za-z])\s{0,2}[)\]]?"
)
#: An answer made only of option letters (with brackets, "Option", punctuation, line breaks):
#: two different ones are a hedge. Each item is an atomic group: no backtracking into it.
_DESIGNATOR_LIST_RE = re.compile(
    rf"(?:(?>{_LISTED}(?:[.,;:/|&+~<>→。，、\s\-–—]|{_JOINERS}|\bto\b|\bthrough\b|\bwith\b){{0,8}})){{2,12}}",
    re.IGNORECASE,
)
#: One item of a list of options: a letter with a note in brackets or after its label
#: ("B (blue)", "B. blue", "(B) the blue one", "B: blue").
_NOTED_LETTER_RE = re.compile(
    r"(?:(?:option|choice)\s{0,3})?(?:\(\s{0,2}([A-Za-z])\s{0,2}\)|\[\s{0,2}([A-Za-z])\s{0,2}\]"
    r"|([A-Za-z])(?:\s{0,2}(?=\()|[.):：]\s))\s{0,3}(?:\(([^()]{0,80})\)|([^()]{1,80}))?",
    re.IGNORECASE,
)
#: Longest answer checked for being a list of letters (twelve items at most).
_MAX_LIST_CHARS = 240
_LISTED_LETTER_RE = re.compile(_LISTED, re.IGNORECASE)
#: A letter followed by the Chinese word for "option" ("B选项", "B项") names that option.
_CN_OPTION_WORD_RE = re.compile(r"(?<![A-Za-z])([A-Za-z])\s{0,2}(?:选项|選項|项|項)")
#: The common short forms (``B``, ``(B)``, ``B.``, ``[b]``) read without the full parser.
_SIMPLE_RE = re.compile(r"\s{0,4}[(\[]?\s{0,2}([A-Za-z])\s{0,2}[)\]]?[.:]?\s{0,4}")


class ChoiceParams(BaseModel):
    """Parameters of the ``choice`` verifier."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: Accept the option text (e.g. ``Blue``) as naming its option when options are given.
    accept_option_text: bool = True


@lru_cache(maxsize=4096)
def parse_options(options: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """``(letter, normalised text)`` per option; labels from ``"A. Red"`` or by position.

    Example:
        >>> parse_options(("A. Red", "B. Blue"))
        (('A', 'red'), ('B', 'blue'))
        >>> parse_options(("Red", "Blue"))
        (('A', 'red'), ('B', 'blue'))
    """
    labelled = [_OPTION_LABEL_RE.fullmatch(o) for o in options]
    if options and all(labelled):
        return tuple(
            (m.group(1).upper(), normalize_text(m.group(2), drop_articles=True))
            for m in labelled
            if m
        )
    return tuple(
        (_LETTERS[i], normalize_text(o, drop_articles=True))
        for i, o in enumerate(options[: len(_LETTERS)])
    )


def _unwrap(text: str) -> str:
    """Remove ``\\boxed{}``/``\\text{}`` wrappers and markdown around a short answer."""
    text = clean_answer(text)
    for _ in range(3):
        m = _BOXED_OR_TEXT_RE.match(text)
        if not m:
            break
        inner = boxed_content(text, m.end() - 1)
        if inner is None:
            break
        text = clean_answer(inner + text[m.end() + len(inner) + 1 :])
    return text


def _option_by_text(text: str, options: tuple[tuple[str, str], ...]) -> tuple[str | None, int]:
    """Letter of the single option whose text equals ``text`` (normalised), and match count."""
    if not options or len(text) > MAX_OPTION_TEXT_CHARS:
        return None, 0
    norm = normalize_text(text, drop_articles=True)
    if not norm:
        return None, 0
    hits = [letter for letter, opt in options if opt and opt == norm]
    return (hits[0] if len(set(hits)) == 1 else None), len(set(hits))


#: Words that carry no content when an answer paraphrases an option ("he swims a lap").
_FUNCTION_WORDS = frozenset(
    re.findall(
        r"\w+",
        "he she it they him her them his its their this that these those there here is are was "
        "were be been being has have had does do did then",
    )
)


def _content_words(norm: str) -> frozenset[str]:
    return frozenset(w for w in norm.split() if w not in _FUNCTION_WORDS)


#: Most content words besides an option's that a sentence stating it may have.
MAX_EXTRA_OPTION_WORDS = 8


@lru_cache(maxsize=4096)
def _option_words(
    options: tuple[tuple[str, str], ...],
) -> tuple[tuple[str, frozenset[str], frozenset[str]], ...]:
    """``(letter, content words, words no other option has)`` per option."""
    words = [(letter, _content_words(text)) for letter, text in options]
    return tuple(
        (letter, mine, mine.difference(*(w for other, w in words if other != letter)))
        for letter, mine in words
    )


def _option_by_words(text: str, options: tuple[tuple[str, str], ...]) -> str | None:
    """The one option the answer's content words name (pronouns, articles and forms of
    "be"/"do"/"have" carry none): a paraphrase that uses only the option's words and at least
    half of them ("she jumps into the pool" for "The girl jumps into the pool"), or a short
    sentence that uses all of them ("the shirt is blue" for "Blue"). The answer must use more
    of that option's own words (those no other option has) than of any other option's: "the
    boy" names neither "The boy swims" nor "The boy dives", and "the girl jumps and the boy
    dives" names no option. None, too, when the answer negates anything ("the man does not
    wave").

    Example:
        >>> opts = parse_options(("A. The girl jumps into the pool", "B. The boy swims a lap"))
        >>> _option_by_words("she jumps into the pool", opts), _option_by_words("a lap", opts)
        ('A', None)
        >>> _option_by_words("the boy swims a lap in the pool", opts)
        'B'
    """
    if not options or len(text) > MAX_OPTION_TEXT_CHARS:
        return None
    norm = normalize_text(text, drop_articles=True)
    if any(w in NEGATION_WORDS for w in norm.split()):
        return None
    words = _content_words(norm)
    own_hits: dict[str, int] = {}
    fits: list[str] = []
    for letter, mine, own in _option_words(options):
        own_hits[letter] = len(own & words)
        paraphrase = words <= mine and 2 * len(words) >= len(mine)
        statement = mine <= words and len(words - mine) <= MAX_EXTRA_OPTION_WORDS
        if mine and (paraphrase or statement):
            fits.append(letter)
    for letter in fits:
        if own_hits[letter] and all(
            n < own_hits[letter] for o, n in own_hits.items() if o != letter
        ):
            return letter
    return None


def parse_choice(
    text: str, options: tuple[tuple[str, str], ...] = (), *, paraphrase: bool = False
) -> tuple[str | None, str | None]:
    """Read one option letter from an answer: ``(letter, None)`` or ``(None, reason)``.

    ``paraphrase``: an answer that is no option's text may still name the one option whose
    words it uses (:func:`_option_by_words`); answers are read so, ground truths are not.

    Example:
        >>> parse_choice("Option C: Blue")
        ('C', None)
        >>> parse_choice("A, B, C, D")
        (None, 'hedged answer (A and B)')
        >>> parse_choice("e.g. this")
        (None, 'no option letter found')
    """
    simple = _SIMPLE_RE.fullmatch(text)
    if simple:
        return simple.group(1).upper(), None
    if not text.isascii():
        if "项" in text or "項" in text:  # (checked first: a full scan of 1 MB costs ~20 ms)
            text = _CN_OPTION_WORD_RE.sub(r"\1", text)  # "B选项", "B项": option B
        if any(bracket in text for bracket in _CJK_BRACKET_CHARS):  # translate is ~50 ms/MB
            text = text.translate(_CJK_BRACKETS)  # "【B】" is "(B)"
    if "*" in text or "_" in text:
        text = _EMPHASIS_RE.sub("", text)  # "**B** and **C**" is "B and C"
    if len(text) <= _MAX_LIST_CHARS and _DESIGNATOR_LIST_RE.fullmatch(text):
        # only letters: "B C", "(B)(C)", "B. C.", "Option B\nOption C"
        letters = list(dict.fromkeys(m.group(1).upper() for m in _LISTED_LETTER_RE.finditer(text)))
        if len(letters) > 1:
            return None, f"hedged answer ({letters[0]} and {letters[1]})"
        return letters[0], None
    text = _unwrap(text)
    if not text:
        return None, "empty answer"
    listed = _listed_options(text, options)
    if len(listed) > 1:
        return None, f"hedged answer ({listed[0]} and {listed[1]})"
    m = _DESIGNATOR_RE.match(text)
    if m:
        letter = m.group("letter").upper()
        rest = text[m.end() :]
        bracketed = bool(m.group("open") or m.group("close"))
        glued = m.group("punct") or m.group("close")
        glued_text = glued and _option_by_text(rest, options)[1]  # "D.Yellow", "(D)Yellow"
        if (rest[:1].isalnum() or rest[:1] in ("'", "’")) and not glued_text:
            m = None  # "Cat", "I'm", "e.g.": a word, not a letter
        if m is not None:
            hedge = _HEDGE_RE.match(text, m.end("close") if m.group("close") else m.end("letter"))
            if hedge is None and m.group("punct"):  # "A. and B"
                hedge = _HEDGE_RE.match(text, m.end())
            if hedge and _PRONOUN_I_RE.match(text, hedge.end()) and hedge.group("letter") == "I":
                hedge = None  # "B, I think": the pronoun, not option I
            if hedge and _is_article(text, hedge):
                hedge = None  # "B. Then a man enters", "B and a dog": an article, not option A
            if hedge and hedge.group("letter").upper() != letter:
                return None, f"hedged answer ({letter} and {hedge.group('letter').upper()})"
            tail = rest.strip(" \t.:：,;)]")
            bare = not (m.group("kw") or bracketed or m.group("punct"))
            if tail:
                by_text, n_hits = _option_by_text(tail, options)
                if bare and letter in _ARTICLE_LETTERS:
                    whole, _ = _option_by_text(text, options)
                    if whole is not None:  # "A dog" is the text of the dog option
                        return whole, None
                if by_text is not None and by_text != letter:
                    return None, f"letter {letter} contradicts option text of {by_text}"
                first_word = tail.split(None, 1)[0].casefold()
                if (
                    bare
                    and letter in _ARTICLE_LETTERS
                    and by_text != letter
                    and first_word not in _DESIGNATOR_FOLLOWERS
                    and not rest.lstrip().startswith("(")  # "A (red)": a note, not a noun
                ):
                    m = None  # "A man ...", "I think ...": an article/pronoun, not option A
            if m is not None:
                other = _other_option(rest, letter)
                if other:
                    return None, f"hedged answer ({letter}, and {other} as possible)"
                second = _second_letter(rest, letter, options)
                if second:  # "B und C", "B bzw. C", "B blah C", "B? C?"
                    return None, f"hedged answer ({letter} and {second})"
                return letter, None
    by_text, n_hits = _option_by_text(text, options)
    if by_text is not None:
        return by_text, None
    if n_hits > 1:
        return None, "answer matches several options"
    if paraphrase:
        by_words = _option_by_words(text, options)
        if by_words is not None:
            other = _other_option(text, by_words)  # "Blue, maybe A"
            if other:
                return None, f"hedged answer ({by_words}, and {other} as possible)"
            return by_words, None
    closing = _TRAILING_BRACKET_RE.search(text[-40:])
    if closing:  # "... so (C)": a bracketed letter closing the answer designates it
        return closing.group(1).upper(), None
    last_nl = text.rfind("\n")
    if last_nl >= 0:
        last_line = text[last_nl + 1 :].strip()
        if last_line and len(last_line) < 200:
            return parse_choice(last_line, options, paraphrase=paraphrase)
    return None, "no option letter found"


_NEXT_WORD_RE = re.compile(r"\s{1,3}([A-Za-z]+)")
_ALTERNATIVE_JOIN_RE = re.compile(r"\b(?:or|vs|versus)\b|[/|或还還]", re.IGNORECASE)


def _is_article(text: str, hedge: re.Match[str]) -> bool:
    """Whether the second letter a hedge match found is an article or pronoun ("a", "I")
    before a word, not an option: unbracketed, joined by no "or" and followed by a word that
    does not designate ("B. Then a man enters" and "B and a dog" name no A; "B or a red one"
    and "B, A because ..." do)."""
    if hedge.group("letter") not in _ARTICLE_LETTERS | {"a", "i"}:
        return False
    if "(" in hedge.group() or "[" in hedge.group() or _ALTERNATIVE_JOIN_RE.search(hedge.group()):
        return False  # "B or a red one" still offers another option
    word = _NEXT_WORD_RE.match(text, hedge.end())
    return word is not None and word.group(1).casefold() not in _DESIGNATOR_FOLLOWERS


def _listed_options(text: str, options: tuple[tuple[str, str], ...]) -> list[str]:
    """The options of an answer made only of option statements (a letter, "Option B", an
    option's text, or a letter with its text or a note: "B (blue)", "B: blue") joined by
    "and", "or", "+", "vs", "或者", "还是", commas, slashes or line breaks; empty when any
    part is something else ("Salt and pepper" is one option's text). Without options, only
    letters (with or without notes) are read.

    Example:
        >>> opts = parse_options(("A. Red", "B. Blue", "C. Salt and pepper"))
        >>> _listed_options("A. Red and B", opts), _listed_options("(A) or Blue", opts)
        (['A', 'B'], ['A', 'B'])
        >>> _listed_options("Salt and pepper", opts), _listed_options("A, I think", opts)
        ([], [])
        >>> _listed_options("B (blue), C (green)", ())
        ['B', 'C']
    """
    if len(text) > MAX_OPTION_TEXT_CHARS or not _LIST_SPLIT_RE.search(text):
        return []
    if options:  # one option's text, labelled or not, is no list ("C. Salt and pepper")
        whole = _OPTION_LABEL_RE.fullmatch(text)
        if _option_by_text(whole.group(2) if whole else text, options)[1]:
            return []
    letters: list[str] = []
    for raw in _LIST_SPLIT_RE.split(text):
        part = raw.strip(" \t.:)]")
        if not part:
            continue
        named = _DESIGNATOR_RE.fullmatch(part)  # "B", "(B)", "Option B"
        labelled = _OPTION_LABEL_RE.fullmatch(part)
        letter = named.group("letter").upper() if named else _option_by_text(part, options)[0]
        if letter is None and labelled and options:  # "A. Red": a letter with its option's text
            by_text = _option_by_text(labelled.group(2), options)[0]
            letter = by_text if by_text == labelled.group(1).upper() else None
        noted = None if letter else _NOTED_LETTER_RE.fullmatch(raw.strip(" \t.;:"))
        if noted:  # "B (blue)", "B: blue", "(B) the blue one": a letter with a note
            letter = next(g for g in noted.groups()[:3] if g).upper()
        if letter is None:
            return []
        letters.append(letter)
    return list(dict.fromkeys(letters))


#: A letter standing alone after the one an answer opens with ("B und C", "B·C", "B\\C").
_LONE_LETTER_RE = re.compile(r"(?<![\w'’.\-])([A-Z])(?![\w'’\-])")
#: Words before a second letter that make it part of a reason, not a second answer.
_REASON_RE = re.compile(
    r"\b(?:because|since|as|while|whereas|unlike|than|so|given|if|when|but|not|nor|except)\b"
    r"|[(\[]",
    re.IGNORECASE,
)


def _second_letter(rest: str, letter: str, options: tuple[tuple[str, str], ...]) -> str | None:
    """A second option letter standing alone in the text after ``letter``, joined by words of
    any language ("B und C", "B bzw. C", "B 또는 C", "B? C?"), else None. A letter in a reason
    ("B because C is green") or an article or pronoun ("B. A man runs") is none."""
    allowed = frozenset(opt for opt, _ in options) if options else None
    for m in _LONE_LETTER_RE.finditer(rest[:_MAX_SECOND_LETTER_REACH]):
        other = m.group(1)
        if other == letter or (allowed is not None and other not in allowed):
            continue
        if other in _ARTICLE_LETTERS and _LOWER_WORD_RE.match(rest, m.end()):
            continue  # "B. A man runs", "B, I think"
        if _REASON_RE.search(rest, 0, m.start()):
            return None  # the rest gives a reason or compares: its letters are not answers
        return other
    return None


_MAX_SECOND_LETTER_REACH = 2000
_LOWER_WORD_RE = re.compile(r"\s{1,3}[a-z]")


def _other_option(rest: str, letter: str) -> str | None:
    """Another option letter that the text after ``letter`` names as possible, else None."""
    if len(rest) < 4:
        return None
    for m in _ALTERNATIVE_RE.finditer(rest[:300]):
        other = next(g for g in m.groups() if g)
        if other != letter and not _NEGATION_RE.search(m.group()):  # "D is wrong too"
            return other
    return None


@lru_cache(maxsize=4096)
def _option_letters(options: tuple[str, ...]) -> frozenset[str]:
    return frozenset(letter for letter, _ in parse_options(options))


@lru_cache(maxsize=16384)
def _parse_gold(gold: str, options: tuple[str, ...] | None) -> tuple[str | None, str | None, str]:
    """``(letter or None, gold text for text mode or None, reason)`` for a ground truth."""
    text = clean_gold(gold)
    if not text:
        return None, None, "empty ground truth"
    parsed = parse_options(options) if options else ()
    letter, _ = parse_choice(text, parsed)
    if letter is not None:
        if options and letter not in _option_letters(options):
            return None, None, f"ground truth letter {letter} is not among the options"
        return letter, None, ""
    if parsed:
        return None, None, f"ground truth {text[:80]!r} matches no option"
    return None, normalize_text(text, drop_articles=True) or None, ""


@register_verifier(
    name="choice",
    version=2,
    problem_types=("multiple_choice",),
    params_model=ChoiceParams,
)
class ChoiceVerifier:
    """Exact option match: one letter (or one option's text), hedges score 0."""

    def __init__(self, params: ChoiceParams) -> None:
        self.params = params

    def score(self, answer_text: str, gold: str, options: list[str] | None = None) -> VerifyOutcome:
        """Grade an extracted answer against a letter or option-text ground truth."""
        opts = tuple(options) if options else None
        gold_letter, gold_text, why = _parse_gold(gold, opts)
        if gold_letter is None and gold_text is None:
            return VerifyOutcome.unverifiable(why or "unreadable ground truth")
        parsed = parse_options(opts) if opts and self.params.accept_option_text else ()
        answer = refine_answer(answer_text)
        # "B", "(B)", "B." and an option's own text ("The door is not open") drop nothing
        if _SIMPLE_RE.fullmatch(answer) is None and not _option_by_text(answer, parsed)[1]:
            answer = stated_answer(answer_text, answer)
            if not answer and answer_text.strip():
                return VerifyOutcome.wrong("the answer only rejects options", gold=gold_letter)
        if gold_letter is None:  # text ground truth, no options to map letters
            pred_text = normalize_text(_unwrap(answer), drop_articles=True)
            return VerifyOutcome.ok(
                1.0 if pred_text == gold_text else 0.0, pred=pred_text[:200], gold=gold_text
            )
        letter, reason = parse_choice(answer, parsed, paraphrase=True)
        if letter is None and parsed and any(text.isdigit() for _, text in parsed):
            spelled = number_words_as_digits(answer)  # "three" for the option "3"
            if spelled != answer:
                letter, reason = parse_choice(spelled, parsed, paraphrase=True)
        if letter is None:
            return VerifyOutcome.wrong(reason or "no option letter found", gold=gold_letter)
        if opts and letter not in _option_letters(opts):
            return VerifyOutcome.wrong(f"letter {letter} is not an option", pred=letter)
        return VerifyOutcome.ok(
            1.0 if letter == gold_letter else 0.0, pred=letter, gold=gold_letter
        )
