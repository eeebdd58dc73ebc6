"""Numbers: the ``numeric`` verifier (1/0 within a tolerance) and ``mra`` (mean relative accuracy).

Reading a number (:func:`find_numbers`): digits with thousands separators (``1,000``,
``1 000 000``; other locales' ``1.000.000``, ``1.234,5``, ``1'000'000``, ``10,00,000``; a
single ``1.000`` is one or a thousand), decimals (``.5``), signs (``-3``, ``−3``, ``minus 3``;
``3 below zero``), scientific notation (``1e3``, ``1.5 × 10^3``; an exponent beyond
:data:`MAX_EXPONENT` makes no number, never a dropped exponent), powers (``10^3``,
``2^{10}``, ``10**3``, ``10³``), fractions (``3/4``,
``\\frac{3}{4}``), percentages (``50%``, ``50 percent``), a scale word (``2 million``), English
number words (``twenty-one``, ``one hundred and five``, ``minus three``) and quantity words
(``a dozen``, ``half a dozen``, ``a couple``, ``a hundred``, ``two and a half``). A unit after
the number is ignored (``12 m``, ``$5``); digits glued to letters are not numbers (``m2``, ``x3``).
Full-width digits, vulgar fractions and superscripts reach it folded by the router (``１２``,
``3 1/2`` for ``3½``, ``10^3`` for ``10³``).
Values are exact rationals (:class:`fractions.Fraction`), so no float rounding sneaks in.

An answer must contain exactly one distinct value, after the final-statement refinement
(``there are 3 red and 2 blue, so the answer is 5`` reads 5) and after dropping clauses that
only reject a number (``4, not 5`` and ``not 5 but 4`` read 4; ``not 5`` alone reads nothing):
``3 or 4``, ``3-4`` and lists score 0. ``3 (three)`` is one value, and so is a value restated
in other units (``2 m (200 cm)``, :mod:`videorl_kit.rewards.units`); a last sentence that
concludes with one value decides (``... So there are 4 dogs in total.``). A percentage matches
both readings (``50%`` = 50 or 0.5).

Example:
    >>> v = NumericVerifier(NumericParams())
    >>> v.score("twenty-one", "21").accuracy, v.score("3 or 4", "3").accuracy
    (1.0, 0.0)
    >>> MraVerifier(MraParams()).score("11", "10").accuracy
    0.9
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from fractions import Fraction
from functools import lru_cache
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from videorl_kit.core.verifiers import register_verifier
from videorl_kit.rewards.base import VerifyOutcome
from videorl_kit.rewards.extract import STATEMENT_KEYWORDS
from videorl_kit.rewards.text import clean_gold, stated_answer
from videorl_kit.rewards.units import UNIT_PATTERN, convert, restates

#: An answer longer than this is not "a number" (after the final-statement refinement).
MAX_NUMERIC_ANSWER_CHARS = 4096

_NUM_RE = re.compile(
    r"(?<![A-Za-z0-9_.^/\\])"
    r"(?P<sign>[-+−]|\b(?:minus|negative)\s{1,3}(?=[\d.]))?\s{0,2}"
    r"(?:"
    r"(?P<whole>\d{1,30})[ \u00a0]{1,2}"  # a mixed number, "3 1/2"
    r"(?P<mnum>\d{1,3})\s{0,2}/\s{0,2}(?P<mden>\d{1,3})(?!\d|\.\d|/)"
    r"|(?P<fnum>\d{1,30})\s{0,2}/\s{0,2}(?P<fden>\d{1,30})(?!\d|\.\d|/)"
    r"|\\[dt]?frac\s{0,2}\{\s{0,2}(?P<lnum>-?\d{1,30})\s{0,2}\}\s{0,2}\{\s{0,2}(?P<lden>\d{1,30})\s{0,2}\}"
    # thousands grouped as other locales group them: "1.000.000" and "1.234,5" (a decimal
    # number has one point), "1'000'000" (Swiss), "10,00,000" (Indian lakh)
    r"|(?P<dots>\d{1,3}(?:\.\d{3}){2,12}(?:,\d{1,30})?|\d{1,3}\.\d{3},\d{1,30})(?![\d.,'’]\d)"
    r"|(?P<quotes>\d{1,3}(?:['’]\d{3}){1,12})(?P<qfrac>\.\d{1,30})?(?![\d.,'’]\d)"
    r"|(?P<lakh>\d{1,2}(?:,\d{2}){1,6},\d{3})(?P<lfrac>\.\d{1,30})?(?![\d.,]\d)"
    r"|(?P<num>(?:\d{1,3}(?:,\d{3}){1,12}(?![\d,]\d)|\d{1,3}(?: \d{3}){1,12}(?!\d| \d)|\d{1,300})"
    r"(?:\.\d{1,300})?|\.\d{1,300})"
    # an exponent is read whole or the number is not read ("5e99999" is never 5): atomic
    r"(?>(?P<exp>[eE][-+]?\d+)?)"
    r"(?>(?:\s{0,2}(?:[x×*·⋅]|\\times|\\cdot)\s{0,2}10\s{0,2}(?:\^|\*\*)\s{0,2}\{?\s{0,2}"
    r"(?P<exp10>[-+−]?\d+)\s{0,2}\}?)?)"
    r")"
    r"(?![\d])(?!\.\d)"
    r"(?>(?:\s{0,2}(?:\^|\*\*)\s{0,2}\{?\s{0,2}(?P<power>[-+−]?\d+)\s{0,2}\}?(?![\d.]))?)"
    r"(?P<scale>\s{0,2}(?:hundred|thousand|million|billion|dozen)\b|[kK](?![\w.])|(?-i:M)(?!\w|\.\w))?"
    r"(?P<pct>\s{0,2}(?:%|percent\b|per\s?cent\b))?",
    re.IGNORECASE,
)

_UNIT_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
)
_UNITS = {w: i for i, w in enumerate(_UNIT_WORDS.split())}
_TENS_WORDS = "twenty thirty forty fifty sixty seventy eighty ninety"
_TENS = {w: 10 * (i + 2) for i, w in enumerate(_TENS_WORDS.split())}
_TENS["fourty"] = 40
#: Single number words and their values ("three" -> 3, "twenty" -> 20).
NUMBER_WORD_VALUES: dict[str, int] = {**_UNITS, **_TENS}
_SCALES = {"thousand": 1000, "million": 10**6, "billion": 10**9}
_DIGIT_SCALES = {"hundred": 100, "dozen": 12, "k": 1000, "m": 10**6, **_SCALES}
#: Quantity words: "a dozen" (12), "two dozen", "half a dozen", "a baker's dozen" (13), "a
#: couple" and "a pair" (2), "a trio" (3), "a quartet" (4), "a couple of dozen", "a single"
#: (1), "a hundred", "two and a half", "a half"; "once", "twice", "thrice"; "a score of" (20)
#: and "four score and seven" (87), but not "a score of 3" (a game's score) nor a bare
#: "score". "a"/"an" counts one only in front of them.
_PLAIN_WORDS = [*_UNITS, *_TENS, "hundred", *_SCALES]
_SCORE = (
    r"score(?=\s{1,3}(?:of|and)\b)"
    rf"(?!\s{{1,3}}of\s{{1,3}}(?:[-+−]?\d|(?:{'|'.join(_PLAIN_WORDS)})\b))"
)
_QUANTITY_ALT = (
    r"half|dozen|an?\s{1,3}(?:couple|pair|single|trio|quartet)|an?\s{1,3}baker['’]s\s{1,3}dozen"
    r"|twice|thrice|once(?!\s{1,3}(?:the|a|an|he|she|it|they|we|you|i|this|that|again|more)\b)"
    rf"|an?(?=\s{{1,3}}(?:hundred|thousand|million|billion|dozen|half|{_SCORE})\b)"
)
_WORD_ALT = "|".join(sorted(_PLAIN_WORDS, key=len, reverse=True)) + "|" + _QUANTITY_ALT
_WORDS_RE = re.compile(
    rf"(?<![\w-])(?P<neg>(?:minus|negative)\s{{1,3}})?"
    rf"(?P<words>(?:{_WORD_ALT})"
    rf"(?:(?:\s{{1,3}}(?:and|of)\s{{1,3}}|\s{{1,3}}|-)(?:{_WORD_ALT}|{_SCORE})){{0,12}})"
    rf"(?![\w-])",
    re.IGNORECASE,
)
_WORD_SPLIT_RE = re.compile(r"[\s-]+")
#: Words that count a small group or a number of times.
_GROUP_WORDS = {"single": 1, "once": 1, "couple": 2, "pair": 2, "twice": 2, "trio": 3}
_GROUP_WORDS |= {"thrice": 3, "quartet": 4}
_HALF = Fraction(1, 2)


class Number(NamedTuple):
    """One number read from text: exact value, whether it had a percent sign, its position,
    and other values the same writing may mean (``1.000``: a thousand in European notation;
    ``2 m (200 cm)``: the value restated in another unit).
    """

    value: Fraction
    percent: bool
    start: int
    alts: tuple[Fraction, ...] = ()


def _words_to_values(words: str) -> list[Fraction]:
    """Values of a run of number words; a word that cannot continue the number starts a new one.

    Example:
        >>> [str(v) for v in _words_to_values("one hundred and five")]
        ['105']
        >>> [str(v) for v in _words_to_values("one two")]
        ['1', '2']
        >>> [str(v) for v in _words_to_values("half a dozen")], _words_to_values("two and a half")
        (['6'], [Fraction(5, 2)])
    """
    values: list[Fraction] = []
    total: Fraction | int = 0
    current: Fraction | int = 0
    last = ""  # category of the previous word: unit, teen, ten, hundred, scale, dozen, ...
    started = halve = after_and = False

    def flush() -> None:
        nonlocal total, current, started, last, halve
        if started:
            value = Fraction(total + current)
            if halve:  # "half a dozen"; "half" alone is one half
                value = value * _HALF if value else _HALF
            values.append(value)
        total = current = 0
        started = halve = False
        last = ""

    for word in _WORD_SPLIT_RE.split(words.casefold()):
        if not word or word in ("a", "an", "of"):
            continue  # "a dozen", "a couple of dozen": the count one is implied
        if word == "and":
            after_and = True
            continue
        if word in ("baker's", "baker’s"):
            last = "baker"  # "a baker's dozen" is thirteen
            continue
        if word in _UNITS:
            value = _UNITS[word]
            cat = "unit" if 1 <= value <= 9 else "teen"
            if last in ("unit", "teen", "dozen", "couple", "half") or (
                last == "ten" and cat == "teen"
            ):
                flush()
            current += value
        elif word in _TENS:
            cat = "ten"
            if last in ("unit", "teen", "ten", "dozen", "couple", "half"):
                flush()
            current += _TENS[word]
        elif word == "hundred":
            cat = "hundred"
            if last == "hundred" or (current % 100 == 0 and current):
                flush()
            current = (current or 1) * 100
        elif word == "dozen":
            cat = "dozen"
            if last == "dozen":
                flush()
            current = (current or 1) * (13 if last == "baker" else 12)
        elif word == "score":
            cat = "hundred"  # "four score and seven": units after it add, as after "hundred"
            if last == "hundred":
                flush()
            current = (current or 1) * 20
        elif word in _GROUP_WORDS:  # "a couple", "a pair", "a trio", "twice"
            cat = "couple"
            if last in ("unit", "teen", "ten", "couple"):
                flush()
            current += _GROUP_WORDS[word]
        elif word == "half":
            cat = "half"
            if started and after_and and last == "dozen":
                current += 6  # "a dozen and a half"
            elif started and after_and and last not in ("", "half"):
                current += _HALF  # "two and a half"
            elif started and last == "unit":
                current *= _HALF  # "one half"
            else:
                flush()
                halve = True  # "half a dozen", "a half"
        else:
            cat = "scale"
            scale = _SCALES[word]
            if last == "scale" and current == 0:
                flush()
            total += (current or 1) * scale
            current = 0
        started = True
        last = cat
        after_and = False
    flush()
    return values


_NUM_GROUPS = (
    "sign", "whole", "mnum", "mden", "fnum", "fden", "lnum", "lden", "num", "exp", "exp10",
    "power", "scale", "pct",
)  # fmt: skip
#: Largest power read (bits of the base times the exponent): ``10^300`` is fine, ``9^999999``
#: is not a number anyone means (and would take long to compute).
MAX_POWER_BITS = 4096
#: Largest decimal exponent read (``1e1000``, ``2 × 10^-1000``): about the same size. A number
#: with a larger one (``5e99999``) is not read at all, so its exponent is never dropped.
MAX_EXPONENT = 1200
#: A number written ``d.ddd`` (one to three digits, a point, three digits: ``1.000``,
#: ``12.500``) is a decimal in English and a grouped thousand in much of Europe; an answer so
#: written matches a gold under either reading (the gold is read as a decimal).
_EUROPEAN_THOUSAND_RE = re.compile(r"[1-9]\d{0,2}\.\d{3}")


def _grouped_value(digits: str, point: str, comma_is_point: bool = False) -> Fraction | None:
    """Exact value of digits grouped by ``.``, ``'``, ``’`` or ``,`` (``point`` the decimal
    mark's group if any, ``comma_is_point``: ``1.234,5`` has a decimal comma).

    Example:
        >>> _grouped_value("1.000.000", ""), _grouped_value("1.234,5", "", True)
        (Fraction(1000000, 1), Fraction(2469, 2))
    """
    if comma_is_point:
        digits, _, frac = digits.partition(",")
        point = "." + frac if frac else ""
    plain = "".join(ch for ch in digits if ch.isdigit())
    return _decimal_fraction(plain + point, None)


def _exponent(text: str | None) -> int | None:
    """The value of an exponent's digits, or None beyond :data:`MAX_EXPONENT` (or none)."""
    if text is None:
        return 0
    digits = text.replace("−", "-")
    if len(digits.lstrip("+-")) > 6:
        return None
    value = int(digits)
    return value if abs(value) <= MAX_EXPONENT else None


def _decimal_fraction(digits: str, exp: str | None) -> Fraction | None:
    """Exact value of ``123``, ``1.5``, ``.5`` with an optional ``e-3`` exponent."""
    whole, _, frac = digits.partition(".")
    if not frac and not exp and whole:
        try:
            return Fraction(int(whole))  # integers: no gcd, no string parsing
        except ValueError:
            return None
    try:
        value = Fraction(int(whole or "0") * 10 ** len(frac) + int(frac or "0"), 10 ** len(frac))
        if exp:
            value *= Fraction(10) ** int(exp[1:])
    except (ValueError, ZeroDivisionError):
        return None
    return value


def find_numbers(text: str, limit: int = 64) -> list[Number]:
    """Numbers in ``text`` in order of position (at most ``limit``).

    Example:
        >>> [(str(n.value), n.percent) for n in find_numbers("1,000 m and 3/4, 50%")]
        [('1000', False), ('3/4', False), ('50', True)]
        >>> [str(n.value) for n in find_numbers("minus twenty-one, 1.5e3")]
        ['-21', '1500']
    """
    found: list[Number] = []
    spans: list[tuple[int, int]] = []
    for m in _NUM_RE.finditer(text):
        groups = m.group(*_NUM_GROUPS)
        sign, whole, mnum, mden, fnum, fden, lnum, lden, num, exp, exp10, power, scale, pct = groups
        if whole is not None:  # "3 1/2" (a folded "3½") is three and a half
            numerator, den = int(mnum), int(mden)
            if not 0 < numerator < den:  # "3 5/4", "2 1/0": no mixed number, two numbers
                found.append(Number(Fraction(int(whole)), False, m.start()))
                if den:
                    found.append(Number(Fraction(numerator, den), False, m.start("mnum")))
                spans.append(m.span())
                continue
            value = int(whole) + Fraction(numerator, den)
        elif fnum is not None or lnum is not None:
            den = int(fden if fnum is not None else lden)
            if den == 0:
                continue
            value = Fraction(int(fnum if fnum is not None else lnum), den)
        elif num is None:  # grouped as another locale groups thousands
            dots, quotes, lakh = m.group("dots", "quotes", "lakh")
            if dots is not None:
                grouped = _grouped_value(dots, "", comma_is_point=True)
            else:
                point = m.group("qfrac") if quotes is not None else m.group("lfrac")
                grouped = _grouped_value(quotes or lakh, point or "")
            if grouped is None:
                continue
            value = grouped
        else:
            e, e10 = _exponent(exp and exp[1:]), _exponent(exp10)
            if e is None or e10 is None:
                spans.append(m.span())  # "5e99999": beyond any value meant; not 5 either
                continue
            value_or_none = _decimal_fraction(num.replace(",", "").replace(" ", ""), None)
            if value_or_none is None:
                continue
            value = value_or_none
            if e + e10:
                value *= Fraction(10) ** (e + e10)
        if power:
            exponent = _exponent(power)
            size = max(value.numerator.bit_length(), value.denominator.bit_length())
            if (
                exponent is None
                or size * abs(exponent) > MAX_POWER_BITS
                or (value == 0 and exponent < 0)
            ):
                spans.append(m.span())
                continue
            value **= exponent
        if scale:
            value *= _DIGIT_SCALES[scale.strip().casefold()]
        negative = sign is not None and (sign in "-−" or sign[:1] in "mMnN")
        if negative:
            value = -value
        alts: tuple[Fraction, ...] = ()
        if (
            num is not None
            and not (exp or exp10 or power or scale or pct)
            and _EUROPEAN_THOUSAND_RE.fullmatch(num)
        ):
            alts = (value * 1000,)  # "1.000": a thousand, where that is the gold
        found.append(Number(value, pct is not None, m.start(), alts))
        spans.append(m.span())
        if len(found) >= limit:
            break
    if len(found) < limit and not text.isascii():
        for m in _CN_RE.finditer(text):
            for cn_value in chinese_numbers(m.group()):
                found.append(Number(Fraction(cn_value), False, m.start()))
    if len(found) < limit and _has_number_word(text):
        for m in _WORDS_RE.finditer(text):
            if any(s < m.end() and m.start() < e for s, e in spans):
                continue  # "2 million": the scale word belongs to the digits
            for value in _words_to_values(m.group("words")):
                found.append(Number(-value if m.group("neg") else value, False, m.start()))
            if len(found) >= limit:
                break
    if len(found) > 1:
        found.sort(key=lambda n: n.start)
    return found[:limit]


def number_words_as_digits(text: str) -> str:
    """``text`` with each run of English number words that means one whole number written in
    digits (``twenty-one people`` → ``21 people``, ``a dozen eggs`` → ``12 eggs``); other
    runs (``half``, ``one two``) are left as written.

    Example:
        >>> number_words_as_digits("twenty-one people and a dozen eggs, half a pie")
        '21 people and 12 eggs, half a pie'
    """
    if not _has_number_word(text):
        return text

    def digits(m: re.Match[str]) -> str:
        values = _words_to_values(m.group("words"))
        if len(values) != 1 or values[0].denominator != 1:
            return m.group()
        return (m.group("neg") or "") + str(values[0].numerator)

    return _WORDS_RE.sub(digits, text)


_WORD_HINT_RE = re.compile(
    r"zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|teen|ty\b|hundred|"
    r"thousand|million|billion|dozen|couple|half|pair|score|single|once|twice|thrice|trio|quartet",
    re.IGNORECASE,
)


#: The same hint on lower-cased ASCII text (equivalent there, and far faster than IGNORECASE).
_WORD_HINT_LOWER_RE = re.compile(_WORD_HINT_RE.pattern)


def _has_number_word(text: str) -> bool:
    if text.isascii():
        return _WORD_HINT_LOWER_RE.search(text.lower()) is not None
    return _WORD_HINT_RE.search(text) is not None


_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6}
_CN_DIGITS |= {"七": 7, "八": 8, "九": 9}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000}
_CN_RE = re.compile(r"[零〇一二两三四五六七八九十百千万]{1,16}")


def chinese_number(text: str) -> int | None:
    """Value of a Chinese numeral (``十二`` = 12, ``三百零五`` = 305), None if malformed.

    Digits alone are read one by one when there are three or more or a zero among them (a
    year, ``二〇二三`` = 2023); two nonzero digits side by side name two values (``四五个``
    is "four or five", see :func:`chinese_numbers`): None.

    Example:
        >>> chinese_number("十二"), chinese_number("两千零一十"), chinese_number("三万")
        (12, 2010, 30000)
        >>> chinese_number("二〇二三"), chinese_number("四五"), chinese_number("十二三")
        (2023, None, None)
    """
    if len(text) > 1 and all(ch in _CN_DIGITS for ch in text):
        if len(text) == 2 and not any(_CN_DIGITS[ch] == 0 for ch in text):
            return None
        return int("".join(str(_CN_DIGITS[ch]) for ch in text))
    total = section = digit = 0
    seen = False
    previous = 0
    for ch in text:
        if ch in _CN_DIGITS:
            if previous:  # "十二三": twelve or thirteen
                return None
            digit = previous = _CN_DIGITS[ch]
            seen = True
            continue
        previous = 0
        if ch in _CN_UNITS:
            section += (digit or 1) * _CN_UNITS[ch]
            digit = 0
            seen = True
        elif ch == "万":
            total += (section + digit or 1) * 10_000
            section = digit = 0
        else:
            return None
    value = total + section + digit
    return value if seen or total else None


def chinese_numbers(text: str) -> list[int]:
    """The values a run of Chinese numerals names: one (:func:`chinese_number`), or two for
    an approximate pair of neighbouring digits (``四五`` = 4 or 5, ``十二三`` = 12 or 13,
    ``三四百`` = 300 or 400: each reading leaves out one of the two digits), else none.

    Example:
        >>> chinese_numbers("十二"), chinese_numbers("四五"), chinese_numbers("三四百")
        ([12], [4, 5], [300, 400])
    """
    value = chinese_number(text)
    if value is not None:
        return [value]
    for i in range(len(text) - 1):
        if _CN_DIGITS.get(text[i]) and _CN_DIGITS.get(text[i + 1]):
            readings = (chinese_number(text[: i + 1] + text[i + 2 :]),)
            readings += (chinese_number(text[:i] + text[i + 1 :]),)
            return [v for v in readings if v is not None]
    return []


def _readings(number: Number) -> tuple[Fraction, ...]:
    return (number.value, number.value / 100) if number.percent else (number.value,)


class Reading(NamedTuple):
    """The single number an answer states (or why there is none)."""

    number: Number | None
    reason: str | None


_PLAIN_NUMBER_RE = re.compile(r"\s{0,4}(-?\d{1,30})(?:\.(\d{1,30}))?\s{0,4}")
_ZERO_WORDS_RE = re.compile(
    r"\s{0,4}(?:none|nothing|nobody|no\s{1,3}one|not\s{1,3}any|zero)[.!]?\s{0,4}", re.IGNORECASE
)


#: "no dogs", "There are no dogs.", "I see no people in the video." (a count of zero).
_NO_ITEMS_RE = re.compile(
    r"\s{0,4}(?:(?:there\s{1,3}(?:is|are|was|were)|i\s{1,3}(?:see|count)|we\s{1,3}(?:see|count))"
    r"\s{1,3})?no\s{1,3}[a-z]{2,20}(?:\s{1,3}[a-z]{1,20}){0,6}\s{0,4}[.!]?\s{0,4}",
    re.IGNORECASE,
)
#: ... but not "no idea", "no more than", "no answer", nor a hedge or a number.
_NOT_NO_ITEMS_RE = re.compile(
    r"\d|\bno\s{1,3}(?:idea|clue|answer|way|doubt|more|less|fewer|longer|one\s{1,3}knows)\b"
    r"|\b(?:or|but|maybe|perhaps|possibly|except|than)\b",
    re.IGNORECASE,
)


def read_single_number(text: str) -> Reading:
    """The one distinct number ``text`` states; several different numbers are a hedge,
    unless a value is restated in other units in parentheses (``2 m (200 cm)``: one value,
    either reading counts), the text is a worked equation whose result (after the last ``=``)
    is one number, or its last sentence with a number is a conclusion stating one value
    (``I see 2 cats and 2 dogs. So there are 4 dogs in total.``).

    Example:
        >>> read_single_number("3 (three) apples").number.value
        Fraction(3, 1)
        >>> read_single_number("3 or 4").reason
        'several different numbers (3, 4)'
        >>> read_single_number("3 + 4 = 7").number.value
        Fraction(7, 1)
        >>> read_single_number("2 m (200 cm)").number[::3]
        (Fraction(2, 1), (Fraction(200, 1),))
        >>> read_single_number("Two cats, one dog. So there are 3 pets in total.").number.value
        Fraction(3, 1)
    """
    plain = _PLAIN_NUMBER_RE.fullmatch(text)
    if plain:  # the common case, without the full scan
        value = _plain_value(plain)
        if value is not None:
            return Reading(Number(value, False, 0, _european_alts(plain, value)), None)
    if _ZERO_WORDS_RE.fullmatch(text) or (  # "none" answers a count of zero
        len(text) < 120 and _NO_ITEMS_RE.fullmatch(text) and not _NOT_NO_ITEMS_RE.search(text)
    ):  # "no dogs", "There are no dogs in the video."
        return Reading(Number(Fraction(0), False, 0), None)
    if len(text) > MAX_NUMERIC_ANSWER_CHARS:
        return Reading(None, f"answer too long for a number ({len(text)} chars)")
    if "below" in text or "Below" in text:  # "4 degrees below zero" is -4
        text = _BELOW_ZERO_RE.sub(r"-\g<n>\g<unit>", text)
    numbers = find_numbers(text, limit=16)
    if not numbers:
        return Reading(None, "no number found")
    if len(numbers) > 1 and len({(n.value, n.percent) for n in numbers}) > 1:
        if "(" in text:
            restated = _without_restatements(text)
            if restated is not None:
                return restated
        if "=" in text:  # a worked equation, "3 + 4 = 7": its result is the answer
            result = find_numbers(text.rpartition("=")[2], limit=2)
            if len(result) == 1:
                return Reading(result[0], None)
        concluded = _concluded_number(text)
        if concluded is not None:
            return Reading(concluded, None)
        whole = _total_with_breakdown(text, numbers)
        if whole is not None:
            return Reading(whole, None)
        shown = ", ".join(_fmt(n.value) + ("%" if n.percent else "") for n in numbers[:4])
        return Reading(None, f"several different numbers ({shown})")
    return Reading(numbers[0], None)


#: ``4 below zero``, ``4 degrees below zero``, ``4 °C below zero``: a negative number.
_BELOW_ZERO_RE = re.compile(
    r"(?<![\w.,])(?P<n>\d{1,30}(?:\.\d{1,30})?)(?P<unit>\s{1,3}(?:degrees?|°)?"
    r"(?:\s{0,2}(?:celsius|fahrenheit|c|f)\b)?)?\s{1,3}below\s{1,3}(?:zero|0)\b",
    re.IGNORECASE,
)
#: A value and its unit, then the same value in other units in parentheses: ``2 m (200 cm)``,
#: ``5 miles (about 8 km)``, ``20 °C (i.e. 68 °F)``.
_RESTATED_RE = re.compile(
    rf"(?<![\w.])(?P<a>[-−]?\d[\d,]{{0,30}}(?:\.\d{{1,30}})?)\s{{0,2}}(?P<ua>{UNIT_PATTERN})"
    r"(?![\w/^])\.?\s{0,3}\(\s{0,3}"
    r"(?:(?:i\.?\s?e\.?|that\s{1,3}is|about|approximately|approx\.?|roughly|around|nearly"
    r"|almost|or|=|≈|~)\s{0,3},?\s{0,3})?"
    rf"(?P<b>[-−]?\d[\d,]{{0,30}}(?:\.\d{{1,30}})?)\s{{0,2}}(?P<ub>{UNIT_PATTERN})(?![\w/^])\.?"
    r"\s{0,3}\)"
)


def _without_restatements(text: str) -> Reading | None:
    """The one value of ``text`` once values restated in other units in parentheses are
    dropped (each kept as another reading of the value before it), or None."""
    alts: list[Fraction] = []
    pieces: list[str] = []
    cursor = 0
    for m in _RESTATED_RE.finditer(text):
        first = find_numbers(m.group("a"), limit=2)
        second = find_numbers(m.group("b"), limit=2)
        if len(first) != 1 or len(second) != 1:
            continue
        value, other = first[0].value, second[0].value
        if not restates(value, m.group("ua"), other, m.group("ub"), m.group("b")):
            continue
        alts.append(other)
        pieces.append(text[cursor : m.end("ua")])
        cursor = m.end()
    if not alts:
        return None
    pieces.append(text[cursor:])
    reading = read_single_number(" ".join(pieces))
    number = reading.number
    if number is None or len(set(alts)) > 1:
        return None
    return Reading(number._replace(alts=(*number.alts, *alts)), None)


_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?。！？])\s+|\s*\n\s*")
#: A sentence that concludes: it starts with a conclusion word, or says "in total".
_CONCLUSION_RE = re.compile(
    r"\s{0,8}(?:so|therefore|thus|hence|overall|altogether|finally|in\s{1,3}(?:total|all"
    r"|conclusion|sum)|all\s{1,3}in\s{1,3}all|as\s{1,3}a\s{1,3}result|that\s{1,3}makes"
    r"|this\s{1,3}makes|which\s{1,3}makes|that\s{1,3}gives|this\s{1,3}gives)\b"
    r"|.{0,200}?\b(?:in\s{1,3}total|in\s{1,3}all|altogether|all\s{1,3}together)\b"
    # a labelled total (round 4): "Total: 4 dogs.", "**Total: 4**", "Sum = 4"
    r"|[*_]{0,3}\s{0,3}(?:grand\s{1,3})?(?:total|sum)(?:\s{1,3}count)?\s{0,3}[*_]{0,3}\s{0,3}[:=]",
    re.IGNORECASE,
)

#: The last clause of a sentence when it opens with a conclusion word after a comma, a
#: semicolon or a dash ("First 3, then 2 more join, so 5.", "3 and 5; therefore 4 people").
_CONCLUDING_CLAUSE_RE = re.compile(
    r".*[,;:—–]\s{0,3}(?:and\s{1,3})?(?:so|therefore|thus|hence|which\s{1,3}makes"
    r"|that\s{1,3}makes|making|giving|for\s{1,3}a\s{1,3}total\s{1,3}of)\b,?(?P<rest>[^,;:—–]*)\Z",
    re.IGNORECASE | re.DOTALL,
)
#: A concluding clause that does not commit: negated or hedged ("so not 4", "so maybe 4").
_UNSURE_CLAUSE_RE = re.compile(
    r"\b(?:not|no|never|maybe|perhaps|possibly|probably|or|either|about|around|roughly)\b"
    r"|n['’]t\b",
    re.IGNORECASE,
)


#: A count followed by its parts: ``4 (2 black, 2 white)``, ``4 dogs: 2 black and 2 white``.
_BREAKDOWN_OPEN_RE = re.compile(r"[^\d(:;.]{0,24}?[(:]")
_BREAKDOWN_UNSURE_RE = re.compile(
    r"\b(?:or|maybe|perhaps|possibly|probably|either|about|around|roughly|not|than|more|less"
    r"|fewer|at|plus|minus|times|per)\b|n['’]t\b|[-+*/×÷=<>%~]",
    re.IGNORECASE,
)


def _total_with_breakdown(text: str, numbers: list[Number]) -> Number | None:
    """The first number of ``text`` when the others are its parts, listed after it in
    brackets or after a colon, and sum to it (round 4: ``4 (2 black, 2 white)`` is 4; parts
    that do not sum to it, ``4 (2 and 3)``, or a word of doubt leave the hedge)."""
    first, parts = numbers[0], numbers[1:]
    if len(parts) < 2 or first.percent or any(n.percent for n in parts):
        return None
    if first.value.denominator != 1 or any(n.value.denominator != 1 for n in parts):
        return None
    head = find_numbers(text[: first.start + 1], limit=2)
    rest = text[first.start :]
    after = re.match(r"[-−]?\d[\d,.]*", rest)
    if not head or after is None:
        return None
    tail = rest[after.end() :]
    opening = _BREAKDOWN_OPEN_RE.match(tail)
    if opening is None or _BREAKDOWN_UNSURE_RE.search(tail):
        return None
    if sum(n.value for n in parts) != first.value:
        return None
    return first


def _concluded_number(text: str) -> Number | None:
    """The one value of the last sentence of ``text`` that holds a number, when that sentence
    is a conclusion (:data:`_CONCLUSION_RE`) stating exactly one value, or ends with a
    committed concluding clause (:data:`_CONCLUDING_CLAUSE_RE`) stating one, else None."""
    for sentence in reversed(_SENTENCE_SPLIT_RE.split(text)):
        numbers = find_numbers(sentence, limit=16)
        if not numbers:
            continue
        if _CONCLUSION_RE.match(sentence):
            if len({(n.value, n.percent) for n in numbers}) == 1:
                return numbers[0]
            if "=" in sentence:  # "So 2 + 2 = 4 dogs in total."
                result = find_numbers(sentence.rpartition("=")[2], limit=2)
                if len(result) == 1:
                    return result[0]
        clause = _CONCLUDING_CLAUSE_RE.match(sentence)  # "First 3, then 2 more, so 5."
        if clause is None or _UNSURE_CLAUSE_RE.search(clause.group("rest")):
            return None
        numbers = find_numbers(clause.group("rest"), limit=16)
        if numbers and len({(n.value, n.percent) for n in numbers}) == 1:
            return numbers[0]
        return None
    return None


def _european_alts(plain: re.Match[str], value: Fraction) -> tuple[Fraction, ...]:
    """``(value · 1000,)`` for a plain ``d.ddd`` number (a European thousand), else ``()``."""
    whole, frac = plain.group(1, 2)
    if (
        frac is not None
        and len(frac) == 3
        and _EUROPEAN_THOUSAND_RE.fullmatch(f"{whole.lstrip('-')}.{frac}")
    ):
        return (value * 1000,)
    return ()


def _plain_value(plain: re.Match[str]) -> Fraction | None:
    """Value of a :data:`_PLAIN_NUMBER_RE` match (the sign applies to the whole number)."""
    whole, frac = plain.group(1, 2)
    if frac is None:
        return _decimal_fraction(whole, None)
    if whole.startswith("-"):  # "-5.5" is -(5.5), not -5 + 0.5
        value = _decimal_fraction(f"{whole[1:]}.{frac}", None)
        return None if value is None else -value
    return _decimal_fraction(f"{whole}.{frac}", None)


#: A number with thousands separators and nothing else (``1,234``, ``-12,000.5``).
_THOUSANDS_RE = re.compile(r"\s{0,4}(-?)(\d{1,3}(?:,\d{3}){1,12})(\.\d{1,30})?\s{0,4}")


#: One number with at most one plain word on each side (``about 12 items``, ``3.5 m``), ASCII.
_WORDY_NUMBER_RE = re.compile(
    r"(?:(?P<before>[A-Za-z]{1,20}) )?(?P<sign>-?)(?P<num>[0-9]{1,30}(?:\.[0-9]{1,30})?)"
    r"(?: (?P<after>[A-Za-z]{1,20}))?"
)
#: Words that would add a number (``twelve``), scale or mark a percentage next to a number.
_NUMBER_WORDS = frozenset([*_PLAIN_WORDS, *_GROUP_WORDS, "percent", "dozen", "half", "score"])
#: Words in front of a number that reject it ("not 5") or give its sign ("minus 4"): the full
#: path reads those.
_NEGATING_WORDS = frozenset(["not", "no", "never", "nor", "isnt", "but", "minus", "negative"])
#: Words beside a number that make it a bound ("over 4", "4 max"): :func:`_open_range` reads
#: those.
_BOUND_WORDS = frozenset(
    {"over", "under", "above", "below", "beyond", "minimum", "maximum", "min", "max", "plus"}
    | {"tops"}
)


def _wordy_number(text: str) -> Fraction | int | None:
    """The value :func:`find_numbers` reads from ``word number word`` text, or None.

    With plain words that are not number/scale/percent words, :data:`_NUM_RE` matches only the
    number (a letter before it blocks a match at the space; after it, no exponent, ``× 10^``,
    scale or percent can follow), :data:`_WORDS_RE` matches no word, and there is no Chinese
    numeral; and with no final-statement keyword in the text, ``refine_answer`` leaves it as it is.
    """
    m = _WORDY_NUMBER_RE.fullmatch(text)
    if m is None:
        return None
    before, after = m.group("before", "after")
    if before is None and after is None:
        return None
    if before is not None and (
        before.lower() in _NUMBER_WORDS
        or before.lower() in _NEGATING_WORDS
        or before.lower() in _BOUND_WORDS
    ):
        return None
    if after is not None and (
        after.lower() in _NUMBER_WORDS or (after.lower() in _BOUND_WORDS and after != "min")
    ):
        return None  # "4 dozen", "4 max" (but "4 min" is minutes)
    if _EUROPEAN_THOUSAND_RE.fullmatch(m.group("num")):
        return None  # "about 1.000" may be a European thousand: the full path reads it
    low = text.lower()
    for keyword in STATEMENT_KEYWORDS:
        if keyword in low:
            return None
    value = _exact(m.group("num"))
    return -value if value is not None and m.group("sign") else value


def _exact(digits: str) -> Fraction | int | None:
    """``_decimal_fraction(digits, None)`` as a value; an integer stays an ``int`` (cheaper)."""
    if "." not in digits:
        return int(digits)
    return _decimal_fraction(digits, None)


#: ``(value, percent, reason, other readings)`` of the one number an answer states; value
#: None: no number. Other readings: ``1.000`` may be a thousand, ``2 m (200 cm)`` is also 200.
AnswerValue = tuple[Fraction | int | None, bool, str | None, tuple[Fraction, ...]]
_NO_VALUE: AnswerValue = (None, False, "no number found", ())


#: A bound instead of a value: "at least 4", "no more than 3", "up to 10", "a minimum of 4",
#: "over 4", "4 or more", "4 at most", "4 (at least)", "4 plus", "4+", "≥ 4", "至少4", "4个以上"
#: ("over"/"under"/"min" right after a number are left out: "3 over 4" is no bound, "4 min"
#: is minutes). Searched in lower case, each only where its words occur, in the first and last
#: 4096 characters of a longer answer.
_BOUND_BEFORE_RE = re.compile(
    r"(?:at\s{1,3}(?:the\s{1,3})?(?:very\s{1,3})?(?:least|most)"
    r"|at\s{1,3}(?:a\s{1,3})?(?:minimum|maximum)"
    r"|(?:more|less|fewer|greater|higher|lower)\s{1,3}than|up\s{1,3}to"
    r"|(?:a\s{1,3})?(?:minimum|maximum|max)\s{1,3}of"
    r"|(?<![\d.,])(?<![\d.,]\s)(?<![\d.,]\s\s)(?:minimum|maximum|min\b\.?|max\b\.?|over|under|above"
    r"|below|beyond|upwards\s{1,3}of|in\s{1,3}excess\s{1,3}of|north\s{1,3}of))"
    r"\s{0,3}[:=]?\s{0,3}[-+]?\d"
)
_BOUND_AFTER_RE = re.compile(
    r"(?<![\d.,])\d[\d.,]{0,40}\s{0,3}(?:\+(?![\s\d(]{0,40}[\d(])"
    r"|[,(\[]?\s{0,3}(?:or\s{1,3}(?:more|less|fewer|above|below|greater|higher|lower|over"
    r"|under)|and\s{1,3}(?:above|up|more|over|upwards|below|under|down|less|fewer)"
    r"|at\s{1,3}(?:the\s{1,3})?(?:very\s{1,3})?(?:least|most)"
    r"|at\s{1,3}(?:a\s{1,3})?(?:minimum|maximum)|minimum|maximum|max|tops)\b"
    r"|-?\s{0,3}plus\b(?![\s-]{0,3}[\w(]))"
)
_BOUND_SIGN_RE = re.compile(r"(?:≥|≤|>=|<=|⩾|⩽)\s{0,3}[-+]?\d")
#: A closed range written with dots: "4..5", "4...5" (a range commits to no value either).
_DOTS_RANGE_RE = re.compile(r"(?<![\d.])\d{1,30}\s{0,3}(?:\.{2,}|…)\s{0,3}[-+]?\d")
_CN_NUMERAL = "0-9零〇一二两兩三四五六七八九十百千万萬"
#: Chinese bounds: "至少4", "不少于4个", "最多四个", "超过4"; "4个以上", "十多个", "4余人".
_CN_BOUND_RE = re.compile(
    r"(?:至少|最少|起码|起碼|最多|至多|顶多|頂多|最高|最低|不少于|不少於|不多于|不多於|不超过|不超過"
    r"|不低于|不低於|不高于|不高於|不到|不足|超过|超過|多于|多於|少于|少於|大于|大於|小于|小於|高于|高於"
    rf"|低于|低於)\s{{0,3}}(?:是|为|為|有)?\s{{0,3}}[约約]?\s{{0,3}}[{_CN_NUMERAL}]"
    rf"|[{_CN_NUMERAL}]\s{{0,2}}(?:[个個名人只位张張台辆輛条條块塊本次岁歲件头頭匹棵朵颗顆米秒分天年层層"
    r"排组組对對双雙]|小时|小時|分钟|分鐘)?\s{0,2}(?:以上|以下|多|余|餘|出头|出頭|开外|開外|不止)"
)


_PAST_ZERO_RE = re.compile(r"\b(?:below|above|under|over)\s{1,3}zero\b", re.IGNORECASE)


def _open_range(text: str) -> str | None:
    """The range ``text`` states instead of a value (open or with dots), or None.

    Example:
        >>> [_open_range(t) for t in ("At least 4.", "4 or more", "2+2", "4", "4 at most")]
        ['at least 4', '4 or more', None, None, '4 at most']
        >>> [_open_range(t) for t in ("minimum of 4", "4 (at least)", "4 plus", "4..5")]
        ['minimum of 4', '4 (at least', '4 plus', '4..5']
        >>> [_open_range(t) for t in ("至少4个", "4个以上", "3 over 4", "4 min", "2 plus 2")]
        ['至少4', '4个以上', None, None, None]
    """
    low = text.lower() if len(text) <= 8192 else f"{text[:4096]}\n{text[-4096:]}".lower()
    searches = (
        (_BOUND_BEFORE_RE, ("least", "most", "than", "up", "min", "max", "over", "under",
                            "above", "below", "beyond", "of")),
        (_BOUND_AFTER_RE, ("or", "and", "+", "least", "most", "min", "max", "tops", "plus")),
        (_BOUND_SIGN_RE, ("≥", "≤", "=", "⩾", "⩽")),
        (_DOTS_RANGE_RE, ("..", "…")),
    )  # fmt: skip
    for pattern, words in searches:
        found = pattern.search(low) if any(w in low for w in words) else None
        if found:
            return found.group().strip()
    if not low.isascii():
        found = _CN_BOUND_RE.search(low)
        if found:
            return found.group().strip()
    return None


def _answer_number(answer_text: str) -> AnswerValue:
    """``read_single_number(stated_answer(answer_text))``, without the scans
    for plain numbers.

    A text made of one number (digits, sign, point, thousands commas, spaces, or one plain word
    on either side, see :func:`_wordy_number`) holds no final statement, and
    :func:`find_numbers` reads exactly that one number from it. Integers come back as ``int``
    (equal to the ``Fraction`` the general path gives).
    """
    if not answer_text:
        return _NO_VALUE
    plain = _PLAIN_NUMBER_RE.fullmatch(answer_text)
    if plain is not None:
        if plain.group(2) is None:
            return int(plain.group(1)), False, None, ()
        value = _plain_value(plain)
        if value is not None:
            return value, False, None, _european_alts(plain, value)
    grouped = _THOUSANDS_RE.fullmatch(answer_text)
    if grouped is not None:
        sign, digits, frac = grouped.group(1, 2, 3)
        value = _exact(digits.replace(",", "") + (frac or ""))
        if value is not None:
            return (-value if sign else value), False, None, ()
    value = _wordy_number(answer_text)
    if value is not None:
        return value, False, None, ()
    asserted = stated_answer(answer_text)
    if not asserted:
        return None, False, "the answer only rejects numbers", ()
    open_range = _open_range(asserted)
    worded = asserted if len(asserted) <= 8192 else f"{asserted[:4096]}\n{asserted[-4096:]}"
    if open_range is None and _has_number_word(worded):  # "at least four", "four plus"
        worded = _PAST_ZERO_RE.sub(" ", worded)  # "4 degrees below zero" is -4, no bound
        open_range = _open_range(number_words_as_digits(worded))
    if open_range:  # "at least 4", "4 or more", "4..5": every value past a bound, or between
        return None, False, f"a range commits to no value ({open_range})", ()
    reading = read_single_number(asserted)
    number = reading.number
    if number is None:
        return None, False, reading.reason, ()
    return number.value, number.percent, None, number.alts


def _fmt(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    return f"{value.numerator / value.denominator:.10g}"  # float(value), without its layers


class _Gold(NamedTuple):
    """A parsed numeric ground truth with what scoring needs from it (cached per gold)."""

    number: Number | None
    reason: str | None
    readings: tuple[tuple[Fraction, int, int], ...]  # (value, numerator, denominator)
    places: int | None
    shown: str  # the value as the details show it
    shown_pct: str  # the same with "%" for a percentage


@lru_cache(maxsize=16384)
def _gold_info(gold: str) -> _Gold:
    text = clean_gold(gold)
    if not text:
        return _Gold(None, "empty ground truth", (), None, "", "")
    reading = read_single_number(text)
    number = reading.number
    if number is None:
        reason = f"ground truth is not a single number: {reading.reason}"
        return _Gold(None, reason, (), None, "", "")
    shown = _fmt(number.value)
    pct = shown + "%" if number.percent else shown
    readings = tuple((r, r.numerator, r.denominator) for r in _readings(number))
    return _Gold(number, None, readings, _decimals(text), shown, pct)


_DECIMALS_RE = re.compile(r"\s*[-+−]?\d[\d,]*\.(\d{1,30})\s*")


def _decimals(text: str) -> int | None:
    """Number of decimal places written in a plain decimal ground truth (None otherwise)."""
    m = _DECIMALS_RE.fullmatch(text)
    return len(m.group(1)) if m else None


class NumericParams(BaseModel):
    """Parameters of the ``numeric`` verifier."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: Absolute tolerance: ``|pred - gold| <= abs_tol`` counts as correct.
    abs_tol: float = Field(default=0.0, ge=0.0, allow_inf_nan=False)
    #: Relative tolerance: ``|pred - gold| <= rel_tol * |gold|`` counts as correct.
    rel_tol: float = Field(default=1e-9, ge=0.0, allow_inf_nan=False)
    #: Relative tolerance when the answer or the gold is not a whole number: a tiny difference
    #: there is float noise or rounding in the last digits (``6.99999`` or ``7.00001`` for 7,
    #: ``3.1416`` for ``3.14159``). A whole-number answer to a whole-number gold (a count) is
    #: never matched this way: ``100001`` is not ``100000``.
    fractional_rel_tol: float = Field(default=1e-5, ge=0.0, allow_inf_nan=False)
    #: A gold written with d decimals (``0.33``) also accepts answers that round to it at d
    #: decimals (``1/3``, ``0.333``). Never applies to integer golds.
    match_gold_precision: bool = True


def _round_to(value: Fraction, places: int) -> Fraction:
    try:
        dec = Decimal(value.numerator) / Decimal(value.denominator)
        return Fraction(dec.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN))
    except (InvalidOperation, OverflowError):
        return value


@register_verifier(
    name="numeric",
    version=2,
    problem_types=("numerical", "regression"),
    params_model=NumericParams,
)
class NumericVerifier:
    """1 when the single stated number equals the gold within the declared tolerance."""

    def __init__(self, params: NumericParams) -> None:
        self.params = params
        self._abs_tol = Fraction(params.abs_tol)
        self._rel_tol = Fraction(params.rel_tol)
        self._fractional_rel_tol = Fraction(str(params.fractional_rel_tol))

    def _close(
        self, pred: Fraction | int, gold: Fraction, gn: int, gd: int, gold_places: int | None
    ) -> bool:
        # Exact, in integers: with p = pn/pd and g = gn/gd, |p − g|·pd·gd = |pn·gd − gn·pd|.
        pn, pd = pred.numerator, pred.denominator
        if pn == gn and pd == gd:  # both in lowest terms
            return True
        cross = abs(pn * gd - gn * pd)
        abs_tol, rel_tol = self._abs_tol, self._rel_tol
        # |p − g| <= abs_tol  and  |p − g| <= rel_tol·|g|, cross-multiplied
        if cross * abs_tol.denominator <= abs_tol.numerator * pd * gd:
            return True
        if cross * rel_tol.denominator <= rel_tol.numerator * abs(gn) * pd:
            return True
        if pd != 1 or gd != 1:  # not both whole numbers
            frac_tol = self._fractional_rel_tol
            if cross * frac_tol.denominator <= frac_tol.numerator * abs(gn) * pd:
                return True
        return bool(
            self.params.match_gold_precision
            and gold_places
            and _round_to(pred, gold_places) == gold  # type: ignore[arg-type]
        )

    def score(self, answer_text: str, gold: str, options: list[str] | None = None) -> VerifyOutcome:
        """Grade the extracted answer's single number against the gold number."""
        info = _gold_info(gold)
        if info.number is None:
            return VerifyOutcome.unverifiable(info.reason or "unreadable ground truth")
        value, percent, reason, alts = _answer_number(durations_in_one_unit(answer_text, gold))
        if value is None:
            return VerifyOutcome.wrong(reason or "no number", gold=info.shown)
        alts = (*alts, *in_gold_unit(answer_text, gold))  # "1.2 m" for the gold "120 cm"
        places = info.places
        hit = False
        # "N%" is also N/100, but not against a whole count above 1: "400%" is not 4 dogs
        as_fraction = percent and any(abs(g) <= 1 or gd != 1 for g, _, gd in info.readings)
        for p in ((value, value / 100) if as_fraction else (value,)) + alts:
            for g, gn, gd in info.readings:
                if self._close(p, g, gn, gd, places):
                    hit = True
                    break
            if hit:
                break
        pred_shown = _fmt(value)  # type: ignore[arg-type]
        return VerifyOutcome.ok(
            1.0 if hit else 0.0,
            pred=pred_shown + "%" if percent else pred_shown,
            gold=info.shown_pct,
        )


_MIN_SEC_RE = re.compile(
    r"(?<![\d.])(\d{1,6})\s{0,2}(?:min|mins|minutes?)\s{0,3}(?:and\s{1,3})?"
    r"(\d{1,2}(?:\.\d{1,6})?)\s{0,2}(?:s|sec|secs|seconds?)\b",
    re.IGNORECASE,
)
_HOUR_MIN_RE = re.compile(
    r"(?<![\d.])(\d{1,6})\s{0,2}(?:h|hr|hrs|hours?)\s{0,3}(?:and\s{1,3})?"
    r"(\d{1,2})\s{0,2}(?:min|mins|minutes?)\b",
    re.IGNORECASE,
)
_CLOCK_RE = re.compile(r"(?<![\d:.])(\d{1,3}):([0-5]\d)(?:\.(\d{1,6}))?(?![\d:])")
_SECONDS_GOLD_RE = re.compile(r"\d\s{0,2}(?:s|sec|secs|seconds?)\s{0,2}$", re.IGNORECASE)


def durations_in_one_unit(answer: str, gold: str) -> str:
    """``answer`` with a compound duration written as one number: ``1 min 5 s`` is ``65 s``,
    ``1 h 5 min`` is ``65 min``, and ``1:05`` is ``65 s`` when the gold is in seconds.

    Example:
        >>> durations_in_one_unit("1 min 5 s", "65"), durations_in_one_unit("1:05", "65 s")
        ('65 s', '65 s')
    """
    if "min" in answer or "MIN" in answer or "Min" in answer:
        answer = _MIN_SEC_RE.sub(lambda m: f"{_fmt(60 * int(m[1]) + Fraction(m[2]))} s", answer)
        answer = _HOUR_MIN_RE.sub(lambda m: f"{60 * int(m[1]) + int(m[2])} min", answer)
    if ":" in answer and _SECONDS_GOLD_RE.search(clean_gold(gold)):
        answer = _CLOCK_RE.sub(
            lambda m: f"{_fmt(60 * int(m[1]) + Fraction(m[2] + ('.' + m[3] if m[3] else '')))} s",
            answer,
        )
    return answer


_VALUE_UNIT_RE = re.compile(
    rf"\s{{0,4}}(?P<n>-?\d{{1,12}}(?:\.\d{{1,12}})?)\s{{0,2}}(?P<u>{UNIT_PATTERN})\s{{0,2}}[.]?\s{{0,4}}"
)


def in_gold_unit(answer: str, gold: str) -> tuple[Fraction, ...]:
    """The answer's value in the gold's unit, when both are a number with a unit of one kind
    and the units differ (``1.2 m`` for the gold ``120 cm`` is 120), else ``()``.

    Example:
        >>> in_gold_unit("1.2 m", "120 cm"), in_gold_unit("1.2 m", "120")
        ((Fraction(120, 1),), ())
    """
    if len(answer) > 64:
        return ()
    a, g = _VALUE_UNIT_RE.fullmatch(answer), _VALUE_UNIT_RE.fullmatch(clean_gold(gold))
    if a is None or g is None or a["u"] == g["u"]:
        return ()
    value = convert(Fraction(a["n"]), a["u"], g["u"])
    return () if value is None else (value,)


class MraParams(BaseModel):
    """Parameters of the ``mra`` verifier."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: Gold 0 has no relative error: ``exact`` scores 1 only for exactly 0.
    zero_gold: Literal["exact"] = "exact"
    #: Count a relative error exactly on a threshold (``<=``, as VSI-Bench's released scorer
    #: does); ``False`` uses the strict ``<`` of the paper's formula.
    inclusive: bool = True


#: Exact rationals whose numerator/denominator the integer fast paths use.
_RATIONAL_TYPES = (int, Fraction)

#: 1 - θ for θ in {0.50, 0.55, ..., 0.95}, as exact fractions.
MRA_MARGINS: tuple[Fraction, ...] = tuple(Fraction(50 - 5 * k, 100) for k in range(10))


def mean_relative_accuracy(pred: Fraction, gold: Fraction, *, inclusive: bool = False) -> float:
    """MRA = mean over θ ∈ {0.50, …, 0.95} of ``|pred − gold| / |gold| < 1 − θ``, exactly.

    Exact rational arithmetic, so a relative error of exactly ``1 − θ`` is decided by the
    comparison alone, never by float noise (EasyVideoR1 accumulates float thresholds and adds
    ``1e-8``). The verifier counts boundaries (``inclusive=True``, ``<=``) by default; the strict
    form is available. Gold 0: 1.0 when ``pred == 0``, else 0.0.

    Example:
        >>> [mean_relative_accuracy(Fraction(p), Fraction(10)) for p in (10, 11, 12, 14, 15, 16)]
        [1.0, 0.8, 0.6, 0.2, 0.0, 0.0]
        >>> [mean_relative_accuracy(Fraction(p), Fraction(10), inclusive=True) for p in (11, 15)]
        [0.9, 0.1]
    """
    # θ_k = 0.50 + 0.05·k passes when rel < 1 − θ_k, i.e. k < 10 − 20·rel: count those k
    # in 0..9 in closed form, exactly, instead of ten comparisons.
    if type(pred) in _RATIONAL_TYPES and type(gold) in _RATIONAL_TYPES:
        # in lowest terms: zero has numerator 0, equal values have equal terms
        pn, pd, gn, gd = pred.numerator, pred.denominator, gold.numerator, gold.denominator
        if gn == 0:
            return 1.0 if pn == 0 else 0.0
        if pn == gn and pd == gd:
            return 1.0
        # x = 10 − y with y = 20·|p − g| / |g| = num / den in integers (p = pn/pd, g = gn/gd)
        num = 20 * abs(pn * gd - gn * pd)
        den = pd * abs(gn)
        # floor(x) + 1 = 11 − ceil(y); ceil(x) = 10 − floor(y)
        passed = 11 + (-num // den) if inclusive else 10 - num // den
    else:
        if gold == 0:
            return 1.0 if pred == 0 else 0.0
        if pred == gold:
            return 1.0
        x = 10 - 20 * (abs(Fraction(pred) - gold) / abs(Fraction(gold)))
        passed = math.floor(x) + 1 if inclusive else math.ceil(x)
    return max(0, min(len(MRA_MARGINS), passed)) / len(MRA_MARGINS)


@register_verifier(
    name="mra",
    version=2,
    problem_types=("regression", "numerical"),
    params_model=MraParams,
)
class MraVerifier:
    """Mean relative accuracy over θ ∈ {0.50, 0.55, …, 0.95} (VSI-Bench style), exact arithmetic."""

    def __init__(self, params: MraParams) -> None:
        self.params = params

    def score(self, answer_text: str, gold: str, options: list[str] | None = None) -> VerifyOutcome:
        """Grade the extracted answer's single number by relative error to the gold."""
        info = _gold_info(gold)
        if info.number is None:
            return VerifyOutcome.unverifiable(info.reason or "unreadable ground truth")
        value, percent, reason, alts = _answer_number(durations_in_one_unit(answer_text, gold))
        if value is None:
            return VerifyOutcome.wrong(reason or "no number", gold=info.shown)
        alts = (*alts, *in_gold_unit(answer_text, gold))  # "350 cm" for the gold "3.5 m"
        gold_value = info.number.value
        inclusive = self.params.inclusive
        best = mean_relative_accuracy(value, gold_value, inclusive=inclusive)
        # a percentage and a fraction of 1 are one quantity ("12%" for 0.12, "0.12" for 12%)
        if percent and not info.number.percent and abs(gold_value) <= 1:
            alts = (*alts, value / 100)
        elif info.number.percent and not percent and abs(value) <= 1:
            alts = (*alts, value * 100)
        for alt in alts:  # "1.000" (a thousand?), "2 m (200 cm)": the reading nearer the gold
            accuracy = mean_relative_accuracy(alt, gold_value, inclusive=inclusive)
            if accuracy > best:
                best, value = accuracy, alt
        return VerifyOutcome.ok(
            best,
            pred=_fmt(value),  # type: ignore[arg-type]
            gold=info.shown,
        )
