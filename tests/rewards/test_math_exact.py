"""The exact math verdicts agree with math-verify itself (the slow path they replace)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from videorl_kit.rewards.math import MathParams, MathVerifier, _load_math_verify, _parse_both_ways
from videorl_kit.rewards.math_exact import exact_verdict, in_exact_family, rational_value


def math_verify_verdict(gold: str, pred: str) -> bool:
    """What the verifier's slow path decides: math-verify parse of both, then verify()."""
    parse, verify = _load_math_verify()
    gold_parsed = _parse_both_ways(parse, gold)
    pred_parsed = _parse_both_ways(parse, pred)
    assert gold_parsed and not isinstance(gold_parsed[0], str), gold  # the gold is readable
    return bool(pred_parsed) and bool(verify(gold_parsed, pred_parsed, timeout_seconds=None))


def _int(lo: int = -40, hi: int = 40) -> st.SearchStrategy[str]:
    return st.integers(lo, hi).map(str)


_decimal = st.builds(
    lambda whole, frac: f"{whole}.{frac}",
    st.integers(-99, 99),
    st.sampled_from(["5", "25", "0", "333", "75", "333333"]),
)
_fraction = st.builds(
    lambda cmd, neg, num, den: f"{neg}{cmd}{{{num}}}{{{den}}}" if cmd else f"{neg}{num}/{den}",
    st.sampled_from(["", "\\frac", "\\dfrac"]),
    st.sampled_from(["", "-"]),
    st.integers(0, 30),
    st.integers(1, 12),
)
rationals = st.one_of(_int(), _decimal, _fraction)
radicals = st.builds(
    lambda neg, coef, rad: f"{neg}{coef}\\sqrt{{{rad}}}",
    st.sampled_from(["", "-"]),
    st.sampled_from(["", "0", "1", "2", "3", "6", "12"]),
    st.sampled_from([0, 1, 2, 3, 4, 8, 12, 18, 27, 50, 72, 200]),
)
_term = st.builds(
    lambda coef, var, power: f"{coef}{var}{power}",
    st.sampled_from(["", "0", "1", "2", "3", "12"]),
    st.sampled_from(["x", "y", "n", "k", "t", "s"]),
    st.sampled_from(["", "^2", "^{2}", "^3", "^0", "^{10}"]),
)
polynomials = st.builds(
    lambda first, rest: first + "".join(sign + term for sign, term in rest),
    st.one_of(_term, _int(0, 9), _term.map(lambda t: "-" + t)),
    st.lists(st.tuples(st.sampled_from(["+", "-"]), st.one_of(_term, _int(0, 9))), max_size=3),
)
pi_multiples = st.builds(
    lambda neg, form, num, den: neg + form.format(n=num, d=den),
    st.sampled_from(["", "-"]),
    st.sampled_from(
        ["\\frac{{{n}\\pi}}{{{d}}}", "\\frac{{{n}}}{{{d}}}\\pi", "{n}\\pi/{d}", "{n}\\pi", "\\pi"]
    ),
    st.integers(1, 12),
    st.integers(1, 8),
)
_item = st.one_of(_int(-9, 9), _fraction, st.sampled_from(["\\infty", "-\\infty", "2.5"]))
sequences = st.builds(
    lambda left, items, right, spaced, sized: (
        ("\\left" if sized else "")
        + left
        + (", " if spaced else ",").join(items)
        + ("\\right" if sized else "")
        + right
    ),
    st.sampled_from(["(", "["]),
    st.lists(_item, min_size=2, max_size=3),
    st.sampled_from([")", "]"]),
    st.booleans(),
    st.booleans(),
)
_linear = st.builds(
    lambda var, sign, c: f"{var}{sign}{c}", st.just("x"), st.sampled_from(["+", "-"]), _int(1, 5)
)
products = st.builds(
    lambda coef, factors: coef + "".join(f"({f})" for f in factors),
    st.sampled_from(["", "2", "-1"]),
    st.lists(_linear, min_size=1, max_size=3),
)
family = st.one_of(rationals, radicals, polynomials, pi_multiples, sequences, products)


def _equivalent(text: str, draw_index: int) -> str:
    """A differently written answer of the same value, for a good share of equal pairs."""
    value = rational_value(text)
    if value is not None and value.denominator in (1, 2, 4, 5, 8, 10):
        return (
            str(float(value))
            if draw_index % 2
            else f"\\frac{{{value.numerator}}}{{{value.denominator}}}"
        )
    if "+" in text:
        first, _, rest = text.partition("+")
        return f"{rest}+{first}" if not first.startswith("-") else text
    return text


@settings(max_examples=80)
@given(family, family, st.integers(0, 3))
def test_exact_verdicts_are_math_verify_verdicts(gold: str, other: str, pick: int) -> None:
    pred = _equivalent(gold, pick) if pick < 2 else other if pick == 2 else f"{gold} or {other}"
    verdict = exact_verdict(gold, pred)
    if verdict is not None:
        assert verdict == math_verify_verdict(gold, pred), (gold, pred)


@settings(max_examples=40)
@given(family)
def test_golds_of_the_families_are_read_by_math_verify(gold: str) -> None:
    if in_exact_family(gold):
        parse, _ = _load_math_verify()
        parsed = _parse_both_ways(parse, gold)
        assert parsed and not isinstance(parsed[0], str), gold


@pytest.mark.parametrize(
    ("gold", "pred", "expected"),
    [
        ("\\frac{1}{2}", "0.5", True),
        ("3/4", "7", False),
        ("\\frac{1}{3}", "0.333", False),  # math-verify rounds to 6 places: 0.333 is not 1/3
        ("\\frac{1}{3}", "0.333333", None),  # a close call: left to math-verify
        ("2\\sqrt{8}", "\\sqrt{32}", True),
        ("3\\sqrt{2}", "\\sqrt{17}", False),
        ("2\\sqrt{4}", "4", True),
        ("-\\sqrt{2}", "\\sqrt{2}", False),
        ("3x+5", "5+3x", True),
        ("x^2-1", "-1+x^{2}", True),
        ("2x+1", "2x-1", False),
        ("x", "X", None),  # math-verify folds X to x: not decided here
        ("x + 1", "1 + x", None),  # spaces: left to math-verify
        ("\\pi", "3.14159", None),
        ("$5", "7", None),  # a stray dollar in the gold: math-verify decides if it is readable
        ("\\frac{3\\pi}{4}", "\\frac{3}{4}\\pi", True),
        ("\\frac{3\\pi}{4}", "3\\pi/4", True),
        ("\\frac{3\\pi}{4}", "2", False),
        ("\\pi", "\\frac{355}{113}", None),  # equal to 6 decimals: math-verify decides
        ("(-\\infty, 4]", "\\left(-\\infty, 4\\right]", True),
        ("(3, 4)", "(4,3)", False),
        ("(3, 4)", "7", False),
        ("(3, 4)", "[3, 4]", None),  # other brackets: tuple or interval is math-verify's call
        ("x^2-9", "(x-3)(x+3)", True),
        ("x^2-9", "(x-3)(x+4)", False),
        ("2x+2", "2(x+1)", True),
    ],
)
def test_examples(gold: str, pred: str, expected: bool | None) -> None:
    assert exact_verdict(gold, pred) is expected
    if expected is not None:
        assert math_verify_verdict(gold, pred) is expected


def test_verifier_reports_the_fast_path() -> None:
    verifier = MathVerifier(MathParams())
    outcome = verifier.score("5+3x", "3x+5")
    assert (outcome.accuracy, outcome.details.get("fast_path")) == (1.0, True)
    outcome = verifier.score("\\sqrt{17}", "3\\sqrt{2}")
    assert (outcome.accuracy, outcome.details.get("fast_path")) == (0.0, True)


def test_identical_answer_needs_no_second_parse() -> None:
    outcome = MathVerifier(MathParams()).score("\\sin^2 x + \\cos^2 x", "\\sin^2 x + \\cos^2 x")
    assert outcome.accuracy == 1.0


def test_rational_value() -> None:
    assert rational_value("-\\dfrac{6}{8}") == Fraction(-3, 4)
    assert rational_value("1/0") is None
