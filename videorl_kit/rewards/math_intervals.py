"""Inequalities in one variable written as the intervals they describe.

``x > 2`` and ``(2, \\infty)`` are the same set, and a careful grader accepts either for the
other; math-verify compares an interval with a relation only one way round. So before the
``math`` verifier compares, an answer or ground truth that is a plain inequality in one variable
(``x > 2``, ``x \\ge 2``, ``5 \\geq x``, ``-1 \\le x < 3``, ``x > 2 \\text{ and } x < 5``, or
several joined by "or": ``x < -1 \\text{ or } x > 2``) is rewritten as interval notation
(``(2, \\infty)``, ``[2, \\infty)``, ``(-\\infty, 5]``, ``[-1, 3)``, ``(2, 5)``,
``(-\\infty, -1) \\cup (2, \\infty)``). A comma between chains is left alone (a system or a
list of solutions?).
The same goes for set-builder notation whose condition is such an inequality in the variable
it names, over the reals: ``\\{x \\mid x > -1\\}``, ``\\{x : x > -1\\}``, ``\\{t \\in
\\mathbb{R} \\mid -1 < t \\le 3\\}``, ``{x | x > 1, x < 3}`` (a comma in the condition is
"and"). Another domain (``\\mathbb{Z}``, ``\\mathbb{N}``: a set of integers) or a condition on
another variable is left as it is.
Bounds are kept as written (numbers, ``\\frac{1}{2}``, ``\\sqrt{2}``, ``\\pi``); anything else
(two variables, ``x \\neq 2``, ``|x| < 3``, inconsistent directions like ``1 < x > 3``) is left
as it is.

Example:
    >>> inequality_as_interval("x > 2"), inequality_as_interval("-1 \\\\le x < 3")
    ('(2, \\\\infty)', '[-1, 3)')
    >>> inequality_as_interval("5 \\\\geq x"), inequality_as_interval("x = 2") is None
    ('(-\\\\infty, 5]', True)
    >>> inequality_as_interval("\\\\{x \\\\mid x > -1\\\\}")
    '(-1, \\\\infty)'
"""

from __future__ import annotations

import re

#: Longest text looked at (an inequality answer is short).
MAX_INEQUALITY_CHARS = 200

_OPERATORS = (
    (re.compile(r"\\leqslant|\\leq|\\le(?![a-zA-Z])|⩽|≤|<="), "≤"),
    (re.compile(r"\\geqslant|\\geq|\\ge(?![a-zA-Z])|⩾|≥|>="), "≥"),
    (re.compile(r"\\lt(?![a-zA-Z])"), "<"),
    (re.compile(r"\\gt(?![a-zA-Z])"), ">"),
)
_NOISE_RE = re.compile(r"\$|\\left|\\right|\\[,;!: ()\[\]]|\s")
_OR_RE = re.compile(
    r"\\(?:text|mathrm)\s{0,3}\{\s{0,3}or\s{0,3}\}|\\(?:lor|vee)(?![a-zA-Z])|\bor\b"
)
_AND_RE = re.compile(
    r"\\(?:text|mathrm)\s{0,3}\{\s{0,3}and\s{0,3}\}|\\(?:land|wedge)(?![a-zA-Z])|\band\b"
)
_BOUND = r"[^<>≤≥=]{1,60}?"
_CHAIN_RE = re.compile(
    rf"(?:(?P<low>{_BOUND})(?P<op1>[<>≤≥]))?(?P<var>[a-zA-Z])(?:(?P<op2>[<>≤≥])(?P<high>{_BOUND}))?"
)
_LATEX_COMMAND_RE = re.compile(r"\\[a-zA-Z]+")
_INFINITY = "\\infty"
#: Sizing and spacing commands around set-builder braces (``\\left\\{``, ``\\middle|``, ``\\,``).
_SET_NOISE_RE = re.compile(r"\$|\\(?:left|right|middle|big|Big)(?![a-zA-Z])|\\[,;!: ]")
#: The real numbers, as a set-builder domain (``ℝ`` is folded to ``R`` before a verifier reads).
_REALS = (
    r"(?:\\mathbb\s{0,3}(?:\{\s{0,3}R\s{0,3}\}|R)|\\Bbb\s{0,3}(?:\{\s{0,3}R\s{0,3}\}|R)"
    r"|\\mathbf\s{0,3}\{\s{0,3}R\s{0,3}\}|\\R(?![a-zA-Z])|\\reals(?![a-zA-Z])|R(?![a-zA-Z]))"
)
_IN = r"\s{0,8}(?:\\in(?![a-zA-Z])|∈)\s{0,8}"
#: ``\\{x \\in \\mathbb{R} \\mid <condition>\\}``, also with ``:``, ``|``, ``\\colon`` and plain
#: braces.
_SET_BUILDER_RE = re.compile(
    r"\s{0,8}(?:\\\{|\\lbrace(?![a-zA-Z])|\{)\s{0,8}(?P<var>[a-zA-Z])"
    rf"(?:{_IN}{_REALS})?\s{{0,8}}(?:\\mid(?![a-zA-Z])|\\vert(?![a-zA-Z])|\||∣|:|\\colon(?![a-zA-Z]))"
    r"(?P<condition>.{1,200}?)(?:\\\}|\\rbrace(?![a-zA-Z])|\})\s{0,8}",
    re.DOTALL,
)


def _bound(text: str | None) -> str | None:
    """A bound written with numbers and LaTeX commands only (no variable), else None."""
    if text is None:
        return None
    text = text.strip()
    if not text or re.search(r"[a-zA-Z]", _LATEX_COMMAND_RE.sub("", text)):
        return None
    return text


#: A bound and whether it is included: ``("2", True)`` for ``x \\ge 2``.
Bound = tuple[str, bool]


def _chain_bounds(chain: str) -> tuple[str, Bound | None, Bound | None] | None:
    """``(variable, lower, upper)`` of one inequality chain (``a < x \\le b``), or None."""
    for pattern, symbol in _OPERATORS:
        chain = pattern.sub(symbol, chain)
    m = _CHAIN_RE.fullmatch(_NOISE_RE.sub("", chain))
    if m is None or (m.group("op1") is None and m.group("op2") is None):
        return None
    low, high = _bound(m.group("low")), _bound(m.group("high"))
    if (low is None) != (m.group("low") is None) or (high is None) != (m.group("high") is None):
        return None  # a bound with a variable or other letters in it
    op1, op2 = m.group("op1"), m.group("op2")
    lower: Bound | None = None
    upper: Bound | None = None
    if op1 is not None:  # "low op1 x": < or ≤ gives a lower bound, > or ≥ an upper one
        if op1 in "<≤":
            lower = (low or "", op1 == "≤")
        else:
            upper = (low or "", op1 == "≥")
    if op2 is not None:  # "x op2 high": < or ≤ gives an upper bound, > or ≥ a lower one
        if op2 in "<≤":
            if upper is not None:
                return None
            upper = (high or "", op2 == "≤")
        else:
            if lower is not None:
                return None
            lower = (high or "", op2 == "≥")
    return m.group("var"), lower, upper


def _one_interval(part: str) -> tuple[str, str] | None:
    """``(variable, interval)`` of chains joined by "and" (``x > 2 \\text{ and } x < 5``)."""
    variable: str | None = None
    lower: Bound | None = None
    upper: Bound | None = None
    for chain in _AND_RE.split(part):
        found = _chain_bounds(chain)
        if found is None or variable not in (None, found[0]):
            return None
        variable = found[0]
        if found[1] is not None:
            if lower is not None:
                return None
            lower = found[1]
        if found[2] is not None:
            if upper is not None:
                return None
            upper = found[2]
    if variable is None:
        return None
    left = f"[{lower[0]}" if lower and lower[1] else f"({lower[0]}" if lower else f"(-{_INFINITY}"
    right = f"{upper[0]}]" if upper and upper[1] else f"{upper[0]})" if upper else f"{_INFINITY})"
    return variable, f"{left}, {right}"


def _union(text: str) -> tuple[str, str] | None:
    """``(variable, interval notation)`` of chains joined by "or", or None."""
    parts = [_one_interval(part) for part in _OR_RE.split(text)]
    intervals = [p for p in parts if p is not None]
    if len(intervals) != len(parts) or len({variable for variable, _ in intervals}) != 1:
        return None
    return intervals[0][0], " \\cup ".join(interval for _, interval in intervals)


def _set_builder(text: str) -> tuple[str, str] | None:
    """``(variable, condition)`` of set-builder notation over the reals, or None. A part of
    the condition that only says the variable is real (``x \\in \\mathbb{R}``) is dropped;
    commas between the other parts are "and"."""
    m = _SET_BUILDER_RE.fullmatch(_SET_NOISE_RE.sub(" ", text))
    if m is None:
        return None
    variable = m.group("var")
    real = re.compile(rf"\s{{0,8}}{variable}{_IN}{_REALS}\s{{0,8}}")
    parts = [p for p in m.group("condition").split(",") if not real.fullmatch(p)]
    return variable, " \\text{ and } ".join(parts)


def inequality_as_interval(text: str) -> str | None:
    """``text`` as interval notation when it is a plain one-variable inequality (chains joined
    by "and" meet, parts joined by "or" unite), bare or as the condition of set-builder
    notation over the reals, else None (see the module docstring).

    Example:
        >>> inequality_as_interval("x < -1 \\\\text{ or } x > 2")
        '(-\\\\infty, -1) \\\\cup (2, \\\\infty)'
        >>> inequality_as_interval("\\\\{t \\\\in \\\\mathbb{R} : -1 < t \\\\le 3\\\\}")
        '(-1, 3]'
        >>> inequality_as_interval("\\\\{n \\\\in \\\\mathbb{Z} \\\\mid n > -1\\\\}") is None
        True
    """
    if len(text) > MAX_INEQUALITY_CHARS or not any(c in text for c in "<>≤≥⩽⩾\\"):
        return None
    builder = _set_builder(text)
    found = _union(builder[1] if builder else text)
    if found is None or (builder is not None and found[0] != builder[0]):
        return None
    return found[1]
