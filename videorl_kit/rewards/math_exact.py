"""Exact verdicts for plain rational answers, which math-verify would judge the same way.

math-verify spends milliseconds parsing LaTeX into sympy. For plain rationals (``-3``,
``0.25``, ``3/4``, ``\\frac{3}{4}``: the answers of the synthetic math task, and the most
common shape of competition-math answers) its verdict is known in advance, so
:func:`exact_verdict` decides them exactly (``True`` or ``False``) and returns ``None`` for
everything else (math-verify then decides). Equal values are equal. Without a decimal point
both sides are exact sympy Integers/Rationals, compared exactly: unequal is unequal. With one,
math-verify compares after rounding to 6 decimals, so only a clear gap (more than 1e-5, both
values below 1e6 with at most 15 significant digits, where the float parse is exact enough) is
decided; a close call goes to math-verify.

A hedge ``X or Y`` of rationals with different values is False (math-verify reads the set
{X, Y}, which is not the gold's value). Anything else is left to math-verify.
``benchmarks/profile_math.py`` measures what this buys on a GRPO workload;
``tests/rewards/test_math_exact.py`` checks the verdicts against math-verify.

Example:
    >>> exact_verdict("\\\\frac{1}{2}", "0.5"), exact_verdict("3/4", "7")
    (True, False)
    >>> exact_verdict("\\\\pi", "3.14159") is None
    True
"""

from __future__ import annotations

import re
from fractions import Fraction

__all__ = ["exact_verdict", "in_exact_family", "rational_value"]

_RATIONAL_RE = re.compile(
    r"\s{0,4}\$?\s{0,4}(?P<neg>-)?\s{0,4}(?:"
    r"(?P<int>\d{1,30})(?:\.(?P<dec>\d{1,30}))?"
    r"|\\[dt]?frac\s{0,4}\{\s{0,4}(?P<fn>\d{1,30})\s{0,4}\}\s{0,4}\{\s{0,4}(?P<fd>\d{1,30})\s{0,4}\}"
    r"|(?P<sn>\d{1,30})\s{0,4}/\s{0,4}(?P<sd>\d{1,30})"
    r")\s{0,4}\$?\s{0,4}"
)
#: A decided gap between a decimal and another rational (math-verify rounds to 6 decimals).
_DECIMAL_GAP = Fraction(1, 10**5)
_DECIMAL_LIMIT = 10**6
_DIGITS_RE = re.compile(r"\d")


def rational_value(text: str) -> Fraction | None:
    """Exact value of a plain rational (``-3``, ``0.25``, ``3/4``, ``\\frac{3}{4}``), else None.

    Example:
        >>> rational_value(r"\\frac{6}{8}"), rational_value("0.75"), rational_value("x")
        (Fraction(3, 4), Fraction(3, 4), None)
    """
    m = _RATIONAL_RE.fullmatch(text)
    if m is None:
        return None
    if m.group("int") is not None:
        dec = m.group("dec") or ""
        value = Fraction(int(m.group("int") + dec), 10 ** len(dec))
    else:
        num, den = (
            (m.group("fn"), m.group("fd")) if m.group("fn") else (m.group("sn"), m.group("sd"))
        )
        if int(den) == 0:
            return None
        value = Fraction(int(num), int(den))
    return -value if m.group("neg") else value


def _rational_verdict(
    gold_text: str, gold: Fraction, pred_text: str, pred: Fraction
) -> bool | None:
    if gold == pred:
        return True
    if "$" in gold_text:  # a stray dollar may keep math-verify from reading the gold at all
        return None
    if "." not in gold_text and "." not in pred_text:
        return False  # exact Integers/Rationals on both sides
    if not (_float_exact(gold_text, gold) and _float_exact(pred_text, pred)):
        return None
    return False if abs(gold - pred) > _DECIMAL_GAP else None


def _float_exact(text: str, value: Fraction) -> bool:
    """Whether math-verify's float reading of ``text`` is close enough to ``value`` that a
    gap above :data:`_DECIMAL_GAP` stays a gap (below 1e6, at most 15 significant digits)."""
    return abs(value) < _DECIMAL_LIMIT and len(_DIGITS_RE.findall(text)) <= 15


def in_exact_family(text: str) -> bool:
    """Whether ``text`` is a plain rational (without ``$``): a ground truth math-verify is
    known to read.

    Example:
        >>> in_exact_family("-3/4"), in_exact_family("2x+1")
        (True, False)
    """
    return "$" not in text and rational_value(text) is not None


def exact_verdict(gold_text: str, pred_text: str) -> bool | None:
    """math-verify's verdict on ``pred_text`` against ``gold_text`` when known exactly, else None.

    See the module docstring for why each verdict is math-verify's.
    """
    if " or " in pred_text:
        return _hedge_verdict(gold_text, pred_text)
    gold_value, pred_value = rational_value(gold_text), rational_value(pred_text)
    if gold_value is None or pred_value is None:
        return None
    return _rational_verdict(gold_text, gold_value, pred_text, pred_value)


def _hedge_verdict(gold_text: str, pred_text: str) -> bool | None:
    """``X or Y``: math-verify reads the set {X, Y}; against a single gold value it is False.

    Its set comparison turns the gold into {g}: equal only if sympy finds {g} = {X, Y}, which
    cannot happen when X and Y are different values (at least one of them is not g; sympy's
    equality decisions are sound), and the parsed strings differ (``X, Y`` has a comma, the
    gold has none). Decided only when every part and the gold are plain rationals and the parts
    are pairwise different by :func:`exact_verdict`.
    """
    parts = pred_text.split(" or ")
    if not 2 <= len(parts) <= 4 or not in_exact_family(gold_text):
        return None
    for part in parts:
        if not part or part != part.strip() or not in_exact_family(part):
            return None
    for i, first in enumerate(parts):
        for second in parts[i + 1 :]:
            if exact_verdict(first, second) is not False:
                return None
    return False
