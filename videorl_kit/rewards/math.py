"""Math: the ``math`` verifier (symbolic equivalence with math-verify 0.9.0, no signals).

math-verify's own timeouts use ``signal.alarm``, which fails outside the main thread (Ray
workers, thread pools: the silent all-zero MATH scores of verl PR#5635). Here both
``parse(..., parsing_timeout=None)`` and ``verify(..., timeout_seconds=None)`` run with their
signal-based timeouts off, inside a daemon worker thread that the caller joins with a timeout.
A computation that runs past ``timeout_s`` scores 0 with ``details["reason"]`` saying so (the
thread finishes in the background); this works from any thread.

math-verify can spend seconds on short junk (``((((((``, long products of letters), so an answer
is reduced and screened first (:func:`math_candidate`): the last ``\\boxed{}`` content, else
the final statement, else the answer; longer than ``max_answer_chars`` → its last line; then it
must have balanced brackets nested at most :data:`MAX_NESTING` deep, at most
:data:`MAX_PLAIN_WORDS` plain words (letters not part of a LaTeX command), and no huge or
nested exponents or big factorials (sympy would compute those in C code holding the GIL, where
no thread timeout can stop it). Anything else scores 0 with the reason, without calling
math-verify. Residual risk: math-verify itself takes 1–100 ms on ordinary expressions (more on
the first call, which builds its parsers).

Ground truth: LaTeX or a plain expression, tried as is and then wrapped in ``$…$``. A gold that
does not parse is unverifiable. A one-variable inequality, in the answer or the gold, is
compared as the interval it describes (``x > 2`` = ``(2, \\infty)``, see
:mod:`videorl_kit.rewards.math_intervals`). A single option letter (``B``, ``(B)``; math sets
with choices) is compared as a letter, like the ``choice`` verifier. math-verify is imported
on first use.

Example:
    >>> v = MathVerifier(MathParams())
    >>> v.score("\\\\frac{1}{2}", "0.5").accuracy, v.score("x = 2", "2").accuracy
    (1.0, 1.0)
    >>> v.score("0.6", "1/2").accuracy
    0.0
"""

from __future__ import annotations

import gc
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from videorl_kit.core.errors import VideoRLKitError
from videorl_kit.core.verifiers import register_verifier
from videorl_kit.rewards.base import VerifyOutcome
from videorl_kit.rewards.choice import parse_choice
from videorl_kit.rewards.extract import FINAL_STATEMENT_WINDOW, matching_braces
from videorl_kit.rewards.math_exact import exact_verdict, in_exact_family, rational_value
from videorl_kit.rewards.math_intervals import inequality_as_interval
from videorl_kit.rewards.text import after_correction, clean_gold, refine_answer

#: Deepest bracket nesting an answer may have.
MAX_NESTING = 12
#: Most plain words (letter runs not following a backslash) an answer may have.
MAX_PLAIN_WORDS = 16
_BOXED_RE = re.compile(r"\\boxed\s{0,4}\{")
_PLAIN_WORD_RE = re.compile(r"(?<![\\A-Za-z])[A-Za-z]+")
#: Letter runs that are math, not prose ("sin x", "x mod 3", "pi", units are prose).
_MATH_NAME_LIST = (
    "sin cos tan cot sec csc log ln exp sqrt pi mod max min gcd lcm arcsin arccos arctan "
    "sinh cosh tanh det lim inf infty oo or and"
)
_MATH_NAMES = frozenset(_MATH_NAME_LIST.split())
#: Inputs that make sympy compute huge integers inside C code, where no thread timeout can
#: interrupt it (the GIL is held): big or nested exponents, big factorials.
_HUGE_RE = re.compile(
    r"(?:\^|\*\*)\s{0,4}[{(]?\s{0,4}[-+]?\s{0,4}\d{5,}"  # 2^{123456}, 10**99999
    r"|(?<![A-Za-z])\d\.?\d{0,300}[eE]\s{0,2}[-+]?\s{0,2}\d{4,}"  # 5e99999, 5E+123456789
    r"|\^[^+\-*/=,;<>]{0,200}?\^"  # 2^{2^{2}}, 2^2^2
    r"|\d{4,}\s{0,4}!"  # 12345!
    r"|[)}\]]\s{0,4}!"  # (10^5)!
    r"|\d{7,}\s{0,4}(?:\\times|\*|\\cdot)\s{0,4}\d{7,}\s{0,4}\^"  # big bases raised
)

#: A sign written as a word in front of a number or a bracket ("minus 4", "negative \\frac12").
_SIGN_WORD_RE = re.compile(r"(?<![\\A-Za-z])(?:minus|negative)\s{1,3}(?=[\d.(\\])", re.IGNORECASE)
#: A number in scientific notation with an exponent of at most three digits (``2.5e-3``).
_SCIENTIFIC_RE = re.compile(r"(?<![\w.\\])(\d{1,30}(?:\.\d{1,30})?)[eE]([-+]?\d{1,3})(?![\w.])")
#: Markdown bold around a value (``**4**``, ``__4__``), never Python's power (``2**10``).
_BOLD_RE = re.compile(r"(?<![\w)}\]])(\*\*|__)(?=\S)([^*_\n]{1,256}?)(?<=\S)\1(?![\w({])")
#: Python's ``**`` between two operands (never markdown bold around an answer, ``**4**``).
_PY_POWER_RE = re.compile(r"(?<=[\w)}\]])\s{0,2}\*\*\s{0,2}(?=[\w({+-])")

#: Words that offer another value: "or 3", "maybe 3", "或者 3".
_ALT_WORDS = (
    r"(?:(?:or|maybe|possibly|perhaps|probably|alternatively|otherwise)\b"
    r"|或者|或是|或|还是|還是|也可能|可能)"
)
_TEXT_CMD = r"\\(?:text|textrm|textit|textbf|mathrm|mbox)\s{0,2}\{"
#: Another value offered in words inside a ``\text{}`` (``2 \text{ (or 3)}``), in brackets
#: around one (``2 \quad (\text{or } 3)``, ``2 (maybe 3)``) or as a logical or (``2 \lor 3``):
#: math-verify drops the words or reads one side, so these are written as the list
#: ``2 \text{ or } 3``, which it reads as both values (a hedge against one value).
_TEXT_ALT_RE = re.compile(
    rf"{_TEXT_CMD}\s{{0,3}}\(?\s{{0,3}}{_ALT_WORDS}\s{{0,3}}([^{{}}()\s][^{{}}()]{{0,63}}?)\s{{0,3}}\)?\s{{0,3}}\}}",
    re.IGNORECASE,
)
_PAREN_ALT_RE = re.compile(
    rf"\(\s{{0,3}}(?:{_TEXT_CMD}\s{{0,3}}{_ALT_WORDS}\s{{0,3}}\}}|{_ALT_WORDS})"
    r"\s{0,3}([^()]{1,64}?)\s{0,3}\)",
    re.IGNORECASE,
)
_LOGICAL_OR_RE = re.compile(r"\\(?:lor|vee)(?![A-Za-z])")
#: "or" in Chinese alone in a ``\text{}`` (``2 \text{ 或 } 3``), and a value in brackets made
#: of text (``2 \text{ (}3\text{)}``): both offer another value.
_TEXT_OR_RE = re.compile(rf"{_TEXT_CMD}\s{{0,3}}(?:或者|或是|或|还是|還是)\s{{0,3}}\}}")
_TEXT_PAREN_RE = re.compile(
    rf"{_TEXT_CMD}\s{{0,3}}\(\s{{0,3}}\}}\s{{0,3}}([^{{}}()]{{1,64}}?)\s{{0,3}}{_TEXT_CMD}\s{{0,3}}\)\s{{0,3}}\}}"
)
#: Rows of an environment or lines (``\\``): ``\begin{cases} 2 \\ 3 \end{cases}``.
_ENV_RE = re.compile(r"\\(?:begin|end)\s{0,2}\{[A-Za-z*]{1,16}\}(?:\s{0,2}\{[lcr|\s]{0,32}\})?")
_ROW_RE = re.compile(r"\\\\(?:\[[^\]]{0,16}\])?")


#: LaTeX that hides or spaces out a second value in one box (round 4): ``\\phantom{ or 3}``
#: and ``\\color{white}{ or 3}`` render nothing or next to nothing but their content is still
#: there; ``\\operatorname{or}`` is the word "or"; ``\\hspace{1em}``, ``~``, ``\\quad`` set two
#: values apart as a space does (``\\,`` is left alone: ``1\\,000`` is a thousand).
_HIDDEN_RE = re.compile(
    r"\\(?:[hv]?phantom|textcolor\s{0,2}\{[^{}]{0,20}\}|color\s{0,2}\{[^{}]{0,20}\})\s{0,2}\{([^{}]{0,64})\}"
)
_WORD_OR_RE = re.compile(r"\\(?:operatorname|mathrm|textrm|mbox|text)\s{0,2}\{\s{0,3}or\s{0,3}\}")
_SPACING_RE = re.compile(
    r"(?<!\\)\\(?:hspace\*?\s{0,2}\{[^{}]{0,16}\}|quad|qquad|[;:](?![A-Za-z]))|~"
)
#: A ``\\text{}`` holding only a bracket: ``2 \\text{ (} \\text{or } 3)``.
_TEXT_BRACKET_RE = re.compile(r"\\text\s{0,2}\{\s{0,3}([()])\s{0,3}\}")


_THIN_THOUSANDS_RE = re.compile(r"(?<=\d)\\,(?=\d{3}(?!\d))")
#: A ``\\text{}`` holding only a comma or semicolon joins two values as ``and`` does.
_TEXT_COMMA_RE = re.compile(r"\\(?:text|textrm|mathrm|mbox)\s{0,2}\{\s{0,3}[,;]\s{0,3}\}")


def visible_values(text: str) -> str:
    r"""``text`` with LaTeX that hides or spaces out a value written plainly (see
    :data:`_HIDDEN_RE`): ``2\phantom{ or 3}`` is ``2  or 3 ``, ``2 \hspace{1em} 3`` is ``2   3``.

    Example:
        >>> visible_values(r"2\phantom{ or 3}"), visible_values(r"2 \operatorname{or} 3")
        ('2  or 3 ', '2 \\text{ or } 3')
    """
    if "\\" not in text and "~" not in text:
        return text
    if "phantom" in text or "color" in text:
        text = _HIDDEN_RE.sub(r" \1 ", text)
    if "or" in text:
        text = _WORD_OR_RE.sub(r"\\text{ or }", text)
    if "\\text" in text:
        text = _TEXT_BRACKET_RE.sub(r" \1", text)
        text = _TEXT_COMMA_RE.sub(r"\\text{ and }", text)  # "2 \text{, } 3": both values
    return _SPACING_RE.sub(" ", text)


def written_alternatives(text: str) -> str:
    r"""``text`` with another value offered in words written as a list (see
    :data:`_TEXT_ALT_RE`): ``2 \text{ (or 3)}`` is ``2 \text{ or } 3``.

    Example:
        >>> written_alternatives(r"2 \text{ (or 3)}"), written_alternatives(r"2 \lor 3")
        ('2  \\text{ or } 3', '2 \\text{ or } 3')
        >>> written_alternatives(r"2 \text{ cm}"), written_alternatives("2 (not 3)")
        ('2 \\text{ cm}', '2 (not 3)')
    """
    if "\\" in text:
        if "or" in text or "vee" in text:
            text = _LOGICAL_OR_RE.sub(r"\\text{ or }", text)
        text = _TEXT_ALT_RE.sub(r" \\text{ or } \1", text)
        if not text.isascii():
            text = _TEXT_OR_RE.sub(r"\\text{ or }", text)
        text = _TEXT_PAREN_RE.sub(r" \\text{ or } \1", text)
    if "(" in text:
        text = _PAREN_ALT_RE.sub(r" \\text{ or } \1", text)
    return text


def different_rows(answer: str, gold: str) -> bool:
    r"""Whether ``answer`` gives different values on different rows (``\\``: cases, arrays,
    aligned lines) where the gold has no rows: math-verify would read one row. A ``cases``
    row is its value before ``&`` (the condition after it is not a second value).

    Example:
        >>> different_rows(r"\begin{cases} 2 \\ 3 \end{cases}", "3")
        True
        >>> different_rows(r"\begin{cases} 2 & x>0 \\ 2.0 & x<0 \end{cases}", "2")
        False
    """
    if "\\\\" not in answer or "\\\\" in gold:
        return False
    cases = "cases" in answer
    rows = set()
    for row in _ROW_RE.split(_ENV_RE.sub(" ", answer)):
        value = row.split("&", 1)[0] if cases else row.replace("&", " ")
        value = " ".join(value.split())
        if value:
            number = rational_value(value)
            rows.add(value if number is None else number)
    return len(rows) > 1


_GOLD_CACHE_SIZE = 16384
#: A math gold that is an option letter (upper-case A–Z, optional brackets/period).
_GOLD_LETTER_RE = re.compile(r"[(\[]?([A-Z])[)\]]?\.?")
_lock = threading.Lock()
_math_verify: tuple[Callable[..., Any], Callable[..., Any]] | None = None
_gold_cache: OrderedDict[str, list[Any]] = OrderedDict()
_gold_lock = threading.Lock()


def _load_math_verify() -> tuple[Callable[..., Any], Callable[..., Any]]:
    """Import math-verify once (in the calling thread) and silence its no-timeout warning."""
    global _math_verify
    with _lock:
        if _math_verify is None:
            import math_verify.grader as grader
            import math_verify.parser as parser

            # We pass timeouts of None on purpose and bound the time ourselves (module doc).
            parser.TIMEOUT_WARNING_SHOWN = True
            grader.TIMEOUT_WARNING_SHOWN = True
            _math_verify = (parser.parse, grader.verify)
            # The import creates ~60k long-lived objects (sympy, antlr). Settle them now, in
            # one full collection during a call that is slow anyway, instead of leaving a
            # backlog that makes a later, unrelated call pay a full collection (~70 ms).
            gc.collect()
        return _math_verify


class MathTimeout(VideoRLKitError):
    """math-verify did not finish within the time bound."""


def run_with_timeout(func: Callable[[], Any], timeout_s: float) -> Any:
    """Run ``func()`` in a daemon thread; its result, its exception, or :class:`MathTimeout`.

    No signals: works from any thread. A timed-out call keeps running in the background.

    Example:
        >>> run_with_timeout(lambda: 6 * 7, 1.0)
        42
    """
    box: list[Any] = []

    def target() -> None:
        try:
            box.append((True, func()))
        except BaseException as exc:  # handed to the caller
            box.append((False, exc))

    worker = threading.Thread(target=target, name="videorl-math-verify", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive() or not box:
        raise MathTimeout(f"math-verify took longer than {timeout_s:g}s")
    ok, value = box[0]
    if not ok:
        raise value
    return value


def _parse_both_ways(parse: Callable[..., Any], text: str) -> list[Any]:
    """Parse as LaTeX math first when it looks like bare LaTeX, else as text first."""
    prose = sum(1 for w in _PLAIN_WORD_RE.findall(text) if len(w) > 1 and w not in _MATH_NAMES)
    as_math_first = "$" not in text and "\\boxed" not in text and prose < 2
    attempts = (f"${text}$", text) if as_math_first else (text, f"${text}$")
    for attempt in attempts:
        parsed = parse(attempt, parsing_timeout=None)
        if parsed or "$" in text:
            return list(parsed)
    return []


def _nesting_problem(text: str) -> str | None:
    depth = 0
    for ch in text:
        if ch in "([{":
            depth += 1
            if depth > MAX_NESTING:
                return f"brackets nested deeper than {MAX_NESTING}"
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                return "unbalanced brackets"
    return "unbalanced brackets" if depth else None


_CURRENCY_RE = re.compile(r"\\\$\s{0,2}(?=[-+]?\s{0,2}\.?\d)")


def math_candidate(answer: str, max_chars: int) -> tuple[str | None, str | None]:
    """The expression to hand to math-verify, or ``(None, reason)`` (see the module doc).

    Example:
        >>> math_candidate(r"so x = \\boxed{\\frac{1}{2}}.", 256)
        ('\\\\frac{1}{2}', None)
        >>> math_candidate("(" * 40, 256)[1]
        'brackets nested deeper than 12'
    """
    text = answer.strip()
    tail = text[-FINAL_STATEMENT_WINDOW:]
    boxes = list(_BOXED_RE.finditer(tail))
    if boxes:
        braces = matching_braces(tail)
        for m in reversed(boxes):
            close = braces.get(m.end() - 1)
            if close is not None:
                text = tail[m.end() : close].strip()
                break
    else:
        text = refine_answer(tail) if len(text) > 40 else text
        text = after_correction(text)  # "2. Eigentlich 3." states 3
    if "\\$" in text:  # a currency sign: "\$12" is 12 (math-verify found no answer)
        text = _CURRENCY_RE.sub("", text)
    if "**" in text or "__" in text:  # markdown bold: "**4**" is 4
        text = _BOLD_RE.sub(r"\2", text).strip()
    if len(text) > max_chars:
        text = text[text.rfind("\n") + 1 :].strip()
        if len(text) > max_chars:
            return None, f"answer too long for a math expression ({len(text)} chars)"
    if not text:
        return None, "empty answer"
    problem = _nesting_problem(text)
    if problem:
        return None, problem
    if "inus" in text or "egative" in text:  # a sign word: "minus 4" is -4, never 4
        text = _SIGN_WORD_RE.sub("-", text)
    if "e" in text or "E" in text:  # scientific notation, which math-verify misreads (1e3)
        text = _SCIENTIFIC_RE.sub(r"\1\\cdot 10^{\2}", text)
    if "**" in text:  # Python's power, which math-verify reads as its base (5*10**3 is 5)
        text = _PY_POWER_RE.sub("^", text)
    if "\\," in text:  # a thin space between digit groups: "1\,000" is a thousand
        text = _THIN_THOUSANDS_RE.sub("", text)
    text = visible_values(text)  # "2\phantom{ or 3}": a hidden value is still a value
    text = written_alternatives(text)  # "2 \text{ (or 3)}": the other value is kept
    if "·" in text or "⋅" in text:  # a middle dot between factors
        text = text.replace("·", "*").replace("⋅", "*")
    if _HUGE_RE.search(text):
        return None, "exponent or factorial too large to evaluate safely"
    words = _PLAIN_WORD_RE.findall(text)
    if len(words) > MAX_PLAIN_WORDS:
        return None, f"{len(words)} plain words: not a math expression"
    prose = sum(1 for w in words if len(w) > 1 and w.lower() not in _MATH_NAMES)
    if prose >= 2 and not any(ch.isdigit() or ch in "\\=+^" for ch in text):
        return None, "no mathematical content"
    return text, None


_VALUE_SEPARATOR_RE = re.compile(r"(?:\s|;|\$|\\[()\[\]])+")


#: Words that offer another value between plain values (round 4: ``$2$, or possibly $3$``,
#: ``2. Alternatively 3.``, ``$2$ (maybe $3$)``; math-verify read the last one).
_OFFER_WORD = (
    r"(?<![A-Za-z\\])(?:or|maybe|possibly|perhaps|probably|alternatively|otherwise|else)"
    r"(?![A-Za-z])"
)
_OFFER_WORDS_RE = re.compile(_OFFER_WORD, re.IGNORECASE)
_OFFER_SEPARATOR_RE = re.compile(
    rf"(?:\s|[;,()]|\$|\.(?=\s|$)|\\[()\[\]]|{_OFFER_WORD})+", re.IGNORECASE
)


def offered_values(text: str) -> bool:
    """Whether ``text`` is plain rationals set apart by words that offer another value, two or
    more of them different (``$2$, or possibly $3$``, ``2. Alternatively 3.``): a hedge.

    Example:
        >>> offered_values("$2$, or possibly $3$"), offered_values("2 or 2.0")
        (True, False)
    """
    if not _OFFER_WORDS_RE.search(text):
        return False
    text = text.replace("\\text{ or }", " or ")  # written by :func:`written_alternatives`
    parts = [p for p in _OFFER_SEPARATOR_RE.split(text) if p]
    if not 2 <= len(parts) <= 64:
        return False
    values = {rational_value(p) for p in parts}
    return None not in values and len(values) > 1


def several_values(text: str) -> bool:
    """Whether ``text`` is only plain rationals, two or more of them different, set apart by
    spaces, lines, ``;`` or math delimiters (``3 4``, ``3\\n4``, ``$3$ $4$``): a hedge, where
    math-verify would read the last one. A list with commas is a tuple or set, an answer.

    Example:
        >>> several_values("$3$ $4$"), several_values("3\\n3"), several_values("3, 4")
        (True, False, False)
    """
    parts = [p for p in _VALUE_SEPARATOR_RE.split(text) if p]
    if not 2 <= len(parts) <= 64:
        return False
    values = {rational_value(p) for p in parts}
    return None not in values and len(values) > 1


#: A bar set between values, with the spacing around it: ``|``, ``\mid``, ``\vert``,
#: ``\middle|``, ``\text{ | }`` (``2 \,|\, 3``: math-verify read the last value).
_BAR_RE = re.compile(
    r"(?:\s|\\[,!;: ])*(?:\\(?:middle|[bB]igg?[lrm]?)\s{0,2}(?:\||\\\|)"
    r"|\\[lr]?[vV]ert(?![A-Za-z])|\\mid(?![A-Za-z])|\\parallel(?![A-Za-z])|\\\|"
    r"|\\(?:text|textrm|mathrm|mbox)\s{0,2}\{\s{0,3}\|\s{0,3}\}|\|)(?:\s|\\[,!;: ])*"
)


def _has_bar(text: str) -> bool:
    return "|" in text or "\\mid" in text or "ert" in text or "\\parallel" in text


def barred_values(text: str) -> bool:
    r"""Whether ``text`` is plain rationals, two or more of them different, set apart by a
    bar (``2 \,|\, 3``, ``2 \mid 3``, ``2 \vert 3``, ``2 \| 3``, ``2 \big| 3``): a hedge
    against a gold without one.
    Absolute values (``|-3|``, ``|x|``), conditional probability (``P(A|B)``) and set-builder
    bars (``\{x \mid x > 2\}``) hold something else beside the bar and are left alone.

    Example:
        >>> barred_values(r"2 \,|\, 3"), barred_values("|-3|"), barred_values("P(A|B)")
        (True, False, False)
    """
    return _has_bar(text) and several_values(_BAR_RE.sub(" ", text))


#: A ``\text{}`` (or ``\mathrm{}``, ``\mbox{}``...) whose words offer or join another value:
#: ``or``, ``and``, ``maybe``, ``either``, a comma, a semicolon, a slash or a bar.
_TEXT_JOINER_RE = re.compile(
    r"\\(?:text|textrm|textit|textbf|mathrm|mbox|operatorname)\s{0,2}\{([^{}]{0,64})\}"
)
_JOINER_WORD_RE = re.compile(
    rf"(?<![A-Za-z])(?:{_ALT_WORDS}|and|either)(?![A-Za-z])|[,;/|]|或者|或|还是|還是|和",
    re.IGNORECASE,
)


def nested_alternative(text: str) -> bool:
    r"""Whether a ``\text{}`` joining or offering another value sits inside a group of the
    expression (an exponent, a subscript, a fraction's part, a root): ``2^{\text{ or } 3}``
    (math-verify read the power 2^3 or the value 3), ``2_{\text{ or } 3}``, ``\frac{1}{2
    \text{ or } 3}``. At the top level such words make a list (:func:`written_alternatives`),
    and inside escaped braces they describe a set (``\{x \mid x > 2 \text{ or } x < 0\}``).

    Example:
        >>> nested_alternative(r"2^{\text{ or } 3}"), nested_alternative(r"2 \text{ or } 3")
        (True, False)
        >>> nested_alternative(r"x_{\text{max}} = 2"), nested_alternative(r"10^{\text{th}}")
        (False, False)
    """
    if "{" not in text:
        return False
    for m in _TEXT_JOINER_RE.finditer(text):
        if not _JOINER_WORD_RE.search(m.group(1)):
            continue
        depth = 0
        for i in range(m.start()):
            ch = text[i]
            if (ch == "{" or ch == "}") and (i == 0 or text[i - 1] != "\\"):
                depth += 1 if ch == "{" else -1
        if depth > 0:
            return True
    return False


def _parsed_gold(gold_text: str, timeout_s: float) -> list[Any]:
    """math-verify's parse of a ground truth, from a bounded LRU cache (all rollouts of a
    prompt share their gold)."""
    with _gold_lock:
        cached = _gold_cache.get(gold_text)
        if cached is not None:
            _gold_cache.move_to_end(gold_text)
            return cached
    parse, _ = _load_math_verify()
    parsed = run_with_timeout(lambda: _parse_both_ways(parse, gold_text), timeout_s)
    with _gold_lock:
        _gold_cache[gold_text] = parsed
        while len(_gold_cache) > _GOLD_CACHE_SIZE:
            _gold_cache.popitem(last=False)
    return parsed


_INFINITY = str.maketrans({"∞": "\\infty "})


def _as_set(text: str) -> str:
    """``∞`` written as ``\\infty`` (math-verify reads only that), and a one-variable
    inequality as its interval (:func:`inequality_as_interval`)."""
    if "∞" in text:
        text = text.translate(_INFINITY)
    return inequality_as_interval(text) or text


class MathParams(BaseModel):
    """Parameters of the ``math`` verifier."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: Wall-clock bound for parsing + verifying one answer (seconds).
    timeout_s: float = Field(default=5.0, gt=0, le=120)
    #: Longest expression handed to math-verify (longer answers: their last line, else 0).
    max_answer_chars: int = Field(default=256, ge=1, le=10_000)


@register_verifier(name="math", version=2, problem_types=("math",), params_model=MathParams)
class MathVerifier:
    """Symbolic equivalence via math-verify, bounded in time without signals."""

    def __init__(self, params: MathParams) -> None:
        self.params = params

    def score(self, answer_text: str, gold: str, options: list[str] | None = None) -> VerifyOutcome:
        """Grade a math answer (LaTeX, expression or number) against the gold."""
        gold_text = clean_gold(gold)
        if not gold_text:
            return VerifyOutcome.unverifiable("empty ground truth")
        letter_match = _GOLD_LETTER_RE.fullmatch(gold_text)
        if letter_match:
            gold_letter = letter_match.group(1)
            pred_letter, reason = parse_choice(refine_answer(answer_text[-2000:]))
            if pred_letter is None:
                return VerifyOutcome.wrong(reason or "no option letter", gold=gold_letter)
            return VerifyOutcome.ok(
                1.0 if pred_letter == gold_letter else 0.0, pred=pred_letter, gold=gold_letter
            )
        timeout_s = self.params.timeout_s
        gold_text = _as_set(gold_text)
        gold_text = written_alternatives(gold_text)
        answer, why = math_candidate(answer_text, self.params.max_answer_chars)
        offered = (  # "2 or 3" names both roots of a set gold ({2, 3}), and two values of one
            answer is not None and rational_value(gold_text) is not None and offered_values(answer)
        )
        if answer is not None and several_values(answer):
            return VerifyOutcome.wrong("several different values (hedge)", gold=gold_text)
        if answer is not None and nested_alternative(answer):
            return VerifyOutcome.wrong(
                "another value offered inside an exponent or a group (hedge)", gold=gold_text
            )
        if answer is not None and barred_values(answer) and not _has_bar(gold_text):
            return VerifyOutcome.wrong("values set apart by a bar (hedge)", gold=gold_text)
        if offered:  # plain rationals both: decided without sympy, as the exact path would
            return VerifyOutcome.wrong(
                "several different values (hedge)", gold=gold_text, fast_path=True
            )
        if answer is not None and different_rows(answer, gold_text):
            return VerifyOutcome.wrong("different values on different rows (hedge)", gold=gold_text)
        if answer is not None:
            answer = _as_set(answer)
            verdict = exact_verdict(gold_text, answer)  # plain rationals: no sympy needed
            if verdict is not None:
                return VerifyOutcome.ok(
                    1.0 if verdict else 0.0, pred=answer, gold=gold_text, fast_path=True
                )
        elif in_exact_family(gold_text):  # a plain rational gold; nothing to compare
            return VerifyOutcome.wrong(why or "no answer", gold=gold_text, fast_path=True)
        try:
            gold_parsed = _parsed_gold(gold_text[:10_000], timeout_s)
        except MathTimeout:
            return VerifyOutcome.unverifiable(f"parsing the ground truth took over {timeout_s:g}s")
        if (
            gold_parsed
            and isinstance(gold_parsed[0], str)
            and (_nesting_problem(gold_text) or not any(ch.isalnum() for ch in gold_text))
        ):
            gold_parsed = []  # math-verify fell back to the raw string of junk
        if not gold_parsed:
            return VerifyOutcome.unverifiable(
                f"math-verify cannot parse the ground truth {gold_text[:80]!r}"
            )
        if answer is None:
            return VerifyOutcome.wrong(why or "no answer", gold=str(gold_parsed[-1]))
        shown = gold_parsed[-1]
        if answer == gold_text and isinstance(shown, str) and shown.strip():
            # The answer parses exactly as the gold did, and verify() compares the two parsed
            # strings too (equal, non-empty): it would say True.
            return VerifyOutcome.ok(1.0, pred=shown, gold=shown)
        parse, verify = _load_math_verify()

        def check() -> tuple[list[Any], bool]:
            pred = _parse_both_ways(parse, answer)
            return pred, bool(pred) and bool(verify(gold_parsed, pred, timeout_seconds=None))

        try:
            pred_parsed, correct = run_with_timeout(check, timeout_s)
        except MathTimeout as exc:
            return VerifyOutcome.wrong(f"timeout: {exc}", gold=str(gold_parsed[-1]))
        if not pred_parsed:
            return VerifyOutcome.wrong("math-verify found no answer", gold=str(gold_parsed[-1]))
        return VerifyOutcome.ok(
            1.0 if correct else 0.0, pred=str(pred_parsed[-1]), gold=str(gold_parsed[-1])
        )
