"""Exact verdicts for math answers that math-verify would judge the same way, without sympy.

math-verify spends milliseconds parsing LaTeX into sympy. For three families of plain answers
its verdict is known in advance, so :func:`exact_verdict` decides them exactly (``True`` or
``False``) and returns ``None`` for everything else (math-verify then decides):

1. **Rationals** (:func:`~videorl_kit.rewards.math.simple_rational`: ``-3``, ``0.25``, ``3/4``,
   ``\\frac{3}{4}``). Equal values are equal. Without a decimal point both sides are exact
   sympy Integers/Rationals, compared exactly: unequal is unequal. With one, math-verify
   compares after rounding to 6 decimals, so only a clear gap (more than 1e-5, both values
   below 1e6 with at most 15 significant digits, where the float parse is exact enough) is
   decided; a close call goes to math-verify.
2. **Radicals** written compactly: ``-2\\sqrt{8}``, ``\\sqrt{72}``, ``5`` (at least one side
   with a root). ``a√b = c√d`` exactly when the signs and ``a²b`` and ``c²d`` agree; the
   squares are kept below 1e9 so that math-verify's 15-digit numeric check separates any two
   different values (they differ by more than a part in 1e9).
3. **Polynomials** with integer coefficients written compactly: ``3x+5``, ``5+3x``,
   ``2x^2-x``, ``n^{10}+1`` (one variable per term, from the letters in :data:`_VARIABLES`).
   math-verify reads each as the polynomial it is, so they are equal exactly when their
   coefficients are.

4. **Multiples of pi**: ``\\frac{3\\pi}{4}``, ``\\frac{3}{4}\\pi``, ``3\\pi/4``, ``-\\pi``. Two of
   them are equal exactly when their rational coefficients are; against a rational, or when
   the coefficients are nearly equal, only a clear numeric gap (as for decimals) is decided.
5. **Tuples and intervals** of rationals or ``±\\infty``: ``(3, 4)``,
   ``\\left[-2, \\infty\\right)``.
   With the same brackets they are equal exactly when every item is (each item decided as in
   1; an undecided item leaves the pair to math-verify); a plain rational never equals one.
6. **Products** of compact one-variable polynomials: ``(x-3)(x+3)``, ``2(x+1)``, which
   math-verify expands; compared with the expanded coefficients of family 3.

A hedge ``X or Y`` of such answers with different values is False (math-verify reads the set
{X, Y}, which is not the gold's value). Anything else, including a pair from two different
families, spaces inside a radical or polynomial, or an upper-case variable (math-verify folds
``X`` to ``x``), is left to math-verify. ``tests/rewards/test_math_exact.py`` checks the
verdicts against math-verify.

Example:
    >>> exact_verdict("\\\\frac{1}{2}", "0.5"), exact_verdict("3x+5", "5+3x")
    (True, True)
    >>> exact_verdict("2\\\\sqrt{8}", "\\\\sqrt{32}"), exact_verdict("3/4", "7")
    (True, False)
    >>> exact_verdict("\\\\pi", "3.14159") is None
    True
"""

from __future__ import annotations

import re
from fractions import Fraction

__all__ = ["exact_verdict", "in_exact_family"]

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

_RADICAL_RE = re.compile(r"(?P<neg>-)?(?P<coef>\d{1,4})?\\sqrt\{(?P<rad>\d{1,6})\}")
_INTEGER_RE = re.compile(r"(?P<neg>-)?(?P<int>\d{1,9})")
_SQUARE_LIMIT = 10**9

#: Variable letters math-verify keeps as plain symbols: not ``e`` (Euler's number), ``i``/``j``
#: (imaginary units), and not a letter its unit stripping drops from the end of an answer
#: (``2+3t`` reads as ``2+3``: ``c d g h l m o s t`` are units there).
_VARIABLES = "abfknpqruvwxyz"
_TERM = rf"(?:\d{{1,9}})?[{_VARIABLES}](?:\^(?:\d|\{{\d{{1,2}}\}}))?|\d{{1,9}}"
_POLYNOMIAL_RE = re.compile(rf"[+-]?(?:{_TERM})(?:[+-](?:{_TERM})){{0,15}}")
_POLY_TERM_RE = re.compile(
    rf"(?P<sign>[+-]?)(?P<coef>\d{{1,9}})?(?:(?P<var>[{_VARIABLES}])"
    r"(?:\^(?:(?P<exp>\d)|\{(?P<bexp>\d{1,2})\}))?)?"
)

_PI_RE = re.compile(
    r"(?P<neg>-)?(?:"
    r"\\[dt]?frac\{(?P<fn>\d{1,9})?\\pi\}\{(?P<fd>\d{1,9})\}"  # \frac{3\pi}{4}, \frac{\pi}{4}
    r"|\\[dt]?frac\{(?P<cn>\d{1,9})\}\{(?P<cd>\d{1,9})\}\\pi"  # \frac{3}{4}\pi
    r"|(?P<sn>\d{1,9})?\\pi(?:/(?P<sd>\d{1,9}))?"  # 3\pi, \pi, 3\pi/4
    r")"
)
#: A tuple or interval once ``\\left`` and ``\\right`` are removed.
_SEQUENCE_RE = re.compile(r"(?P<open>[(\[])(?P<body>[^()\[\]{}]{1,200})(?P<close>[)\]])")
_INFINITY_RE = re.compile(r"\s{0,4}(?P<sign>[+-]?)\s{0,4}\\infty\s{0,4}")
_MAX_ITEMS = 8
_FACTOR_RE = re.compile(r"\(([^()]{1,80})\)")
_PRODUCT_RE = re.compile(r"(?P<coef>-?\d{1,4})?(?P<factors>(?:\([^()]{1,80}\)){1,4})")
_DEGREE_LIMIT = 12


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


def _radical(text: str) -> tuple[int, int, bool] | None:
    """``(sign, square, has_root)`` of ``±a\\sqrt{b}`` (value sign·√square) or of an integer."""
    m = _RADICAL_RE.fullmatch(text)
    if m is not None:
        coef = int(m.group("coef") or "1")
        square, has_root = coef * coef * int(m.group("rad")), True
    else:
        m = _INTEGER_RE.fullmatch(text)
        if m is None:
            return None
        value = int(m.group("int"))
        square, has_root = value * value, False
    if square > _SQUARE_LIMIT:
        return None
    sign = 0 if square == 0 else (-1 if m.group("neg") else 1)
    return sign, square, has_root


def _polynomial(text: str) -> dict[tuple[str, int], int] | None:
    """Coefficients ``{(variable, power): c}`` (constant: ``("", 0)``) of a compact polynomial."""
    if _POLYNOMIAL_RE.fullmatch(text) is None:
        return None
    coefficients: dict[tuple[str, int], int] = {}
    for m in _POLY_TERM_RE.finditer(text):
        if m.end() == m.start():
            continue
        sign, coef, var, exp, bexp = m.group("sign", "coef", "var", "exp", "bexp")
        value = int(coef) if coef is not None else 1
        if sign == "-":
            value = -value
        power = int(exp or bexp or "1") if var is not None else 0
        key = (var, power) if var is not None and power != 0 else ("", 0)
        coefficients[key] = coefficients.get(key, 0) + value
    return {key: c for key, c in coefficients.items() if c != 0}


def _pi_coefficient(text: str) -> Fraction | None:
    """``q`` of a compact multiple of pi ``q·π`` (see the module docstring), else None."""
    m = _PI_RE.fullmatch(text)
    if m is None:
        return None
    if m.group("fd") is not None:
        num, den = m.group("fn") or "1", m.group("fd")
    elif m.group("cd") is not None:
        num, den = m.group("cn"), m.group("cd")
    else:
        num, den = m.group("sn") or "1", m.group("sd") or "1"
    if int(den) == 0:
        return None
    value = Fraction(int(num), int(den))
    return -value if m.group("neg") else value


_PI = Fraction(3141592653589793238462643383, 10**27)


def _pi_verdict(
    gold_text: str, gold: Fraction | None, pred_text: str, pred: Fraction | None
) -> bool | None:
    """Two multiples of pi, or one and a rational (``None`` marks the multiple's side)."""
    if gold is not None and pred is not None:
        if gold == pred:
            return True
        gap = abs(gold - pred) * _PI
    else:
        rational_text = gold_text if gold is None else pred_text
        rational = rational_value(rational_text)
        coefficient = gold if gold is not None else pred
        if rational is None or coefficient is None or "$" in rational_text:
            return None
        if not _float_exact(rational_text, rational):
            return None
        gap = abs(rational - coefficient * _PI)
    return False if gap > _DECIMAL_GAP else None


Item = Fraction | float  # a rational, or ±inf


def _sequence(text: str) -> tuple[str, list[tuple[str, Item]]] | None:
    """``(brackets, [(item text, value)])`` of a tuple/interval of 2–8 rationals or ±infinity."""
    if len(text) > 400:
        return None
    m = _SEQUENCE_RE.fullmatch(text.replace("\\left", "").replace("\\right", ""))
    if m is None:
        return None
    parts = m.group("body").split(",")
    brackets = m.group("open") + m.group("close")
    if not 2 <= len(parts) <= _MAX_ITEMS:
        return None
    if len(parts) > 2 and brackets not in ("()", "[]"):  # not a tuple, nor an interval
        return None
    items: list[tuple[str, Item]] = []
    for part in parts:
        inf = _INFINITY_RE.fullmatch(part)
        if inf is not None:
            if len(parts) > 2:  # infinity only as an interval's endpoint
                return None
            items.append((part, float("-inf") if inf.group("sign") == "-" else float("inf")))
            continue
        value = rational_value(part)
        if value is None or "$" in part:
            return None
        items.append((part.strip(), value))
    return brackets, items


def _sequence_verdict(
    gold: tuple[str, list[tuple[str, Item]]], pred: tuple[str, list[tuple[str, Item]]]
) -> bool | None:
    if gold[0] != pred[0] or len(gold[1]) != len(pred[1]):
        return None  # other brackets or lengths: math-verify's reading decides
    verdicts = []
    for (gold_text, gold_value), (pred_text, pred_value) in zip(gold[1], pred[1], strict=True):
        if isinstance(gold_value, float) or isinstance(pred_value, float):
            verdicts.append(gold_value == pred_value)
        else:
            verdicts.append(_rational_verdict(gold_text, gold_value, pred_text, pred_value))
    if None in verdicts:
        return None
    return all(verdicts)


Univariate = tuple[str, dict[int, int]]  # variable ("" for a constant), {power: coefficient}


def _univariate(text: str) -> Univariate | None:
    """A compact polynomial in at most one variable, as ``(variable, {power: c})``."""
    poly = _polynomial(text)
    if poly is None:
        return None
    variables = {var for var, _ in poly if var}
    if len(variables) > 1:
        return None
    return (variables.pop() if variables else ""), {power: c for (_, power), c in poly.items()}


def _product(text: str) -> dict[tuple[str, int], int] | None:
    """Expanded coefficients (as :func:`_polynomial`'s) of ``c(p)(q)…`` with one variable."""
    m = _PRODUCT_RE.fullmatch(text)
    if m is None:
        return None
    variable = ""
    result: dict[int, int] = {0: int(m.group("coef") or "1")}
    for factor_text in _FACTOR_RE.findall(m.group("factors")):
        factor = _univariate(factor_text)
        if factor is None or (variable and factor[0] and factor[0] != variable):
            return None
        variable = variable or factor[0]
        expanded: dict[int, int] = {}
        for p1, c1 in result.items():
            for p2, c2 in factor[1].items():
                expanded[p1 + p2] = expanded.get(p1 + p2, 0) + c1 * c2
        result = expanded
    if not variable or max(result) > _DEGREE_LIMIT:
        return None
    return {((variable, p) if p else ("", 0)): c for p, c in result.items() if c != 0}


def _polynomial_or_product(text: str) -> dict[tuple[str, int], int] | None:
    poly = _polynomial(text)
    return poly if poly is not None else _product(text)


def in_exact_family(text: str) -> bool:
    """Whether ``text`` is in one of the families of the module docstring (without ``$``):
    a ground truth math-verify is known to read.

    Example:
        >>> in_exact_family("2x+1"), in_exact_family("(3, 4)"), in_exact_family("\\\\sin x")
        (True, True, False)
    """
    if "$" in text:
        return False
    return (
        rational_value(text) is not None
        or _radical(text) is not None
        or _polynomial_or_product(text) is not None
        or _pi_coefficient(text) is not None
        or _sequence(text) is not None
    )


def exact_verdict(gold_text: str, pred_text: str) -> bool | None:
    """math-verify's verdict on ``pred_text`` against ``gold_text`` when known exactly, else None.

    See the module docstring for the families and why each verdict is math-verify's.
    """
    if " or " in pred_text:
        return _hedge_verdict(gold_text, pred_text)
    gold_value = rational_value(gold_text)
    if gold_value is not None:
        pred_value = rational_value(pred_text)
        if pred_value is not None:
            return _rational_verdict(gold_text, gold_value, pred_text, pred_value)
    gold_root = _radical(gold_text)
    if gold_root is not None:
        pred_root = _radical(pred_text)
        if pred_root is not None and (gold_root[2] or pred_root[2]):
            return gold_root[:2] == pred_root[:2]
    gold_poly = _polynomial_or_product(gold_text)
    if gold_poly is not None:
        pred_poly = _polynomial_or_product(pred_text)
        if pred_poly is not None:
            return gold_poly == pred_poly
    gold_pi, pred_pi = _pi_coefficient(gold_text), _pi_coefficient(pred_text)
    if gold_pi is not None or pred_pi is not None:
        return _pi_verdict(gold_text, gold_pi, pred_text, pred_pi)
    gold_seq, pred_seq = _sequence(gold_text), _sequence(pred_text)
    if gold_seq is not None and pred_seq is not None:
        return _sequence_verdict(gold_seq, pred_seq)
    if (gold_seq is None) != (pred_seq is None):  # a tuple/interval against a plain rational
        rational_text = gold_text if gold_seq is None else pred_text
        if rational_value(rational_text) is not None and "$" not in rational_text:
            return False
    return None


def _hedge_verdict(gold_text: str, pred_text: str) -> bool | None:
    """``X or Y``: math-verify reads the set {X, Y}; against a single gold value it is False.

    Its set comparison turns the gold into {g}: equal only if sympy finds {g} = {X, Y}, which
    cannot happen when X and Y are different values (at least one of them is not g; sympy's
    equality decisions are sound), and the parsed strings differ (``X, Y`` has a comma, the
    gold has none). Decided only when every part and the gold are in the families above and the
    parts are pairwise different by :func:`exact_verdict`.
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
