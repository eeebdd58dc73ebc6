"""The exact math verdicts (plain rationals) agree with math-verify itself (the slow path)."""

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


def _equivalent(text: str, draw_index: int) -> str:
    """A differently written answer of the same value, for a good share of equal pairs."""
    value = rational_value(text)
    if value is not None and value.denominator in (1, 2, 4, 5, 8, 10):
        return (
            str(float(value))
            if draw_index % 2
            else f"\\frac{{{value.numerator}}}{{{value.denominator}}}"
        )
    return text


@settings(max_examples=80)
@given(rationals, rationals, st.integers(0, 3))
def test_exact_verdicts_are_math_verify_verdicts(gold: str, other: str, pick: int) -> None:
    pred = _equivalent(gold, pick) if pick < 2 else other if pick == 2 else f"{gold} or {other}"
    verdict = exact_verdict(gold, pred)
    if verdict is not None:
        assert verdict == math_verify_verdict(gold, pred), (gold, pred)


@settings(max_examples=40)
@given(rationals)
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
        ("x", "X", None),  # not rationals: math-verify decides
        ("3x+5", "5+3x", None),
        ("2\\sqrt{8}", "\\sqrt{32}", None),
        ("(3, 4)", "7", None),
        ("3", "-3 or 3", False),  # math-verify reads the set {-3, 3}
        ("\\pi", "3.14159", None),
        ("$5", "7", None),  # a stray dollar in the gold: math-verify decides if it is readable
    ],
)
def test_examples(gold: str, pred: str, expected: bool | None) -> None:
    assert exact_verdict(gold, pred) is expected
    if expected is not None:
        assert math_verify_verdict(gold, pred) is expected


def test_verifier_reports_the_fast_path() -> None:
    verifier = MathVerifier(MathParams())
    outcome = verifier.score("\\frac{6}{8}", "0.75")
    assert (outcome.accuracy, outcome.details.get("fast_path")) == (1.0, True)
    outcome = verifier.score("5+3x", "3x+5")  # not a rational: math-verify decides
    assert (outcome.accuracy, outcome.details.get("fast_path")) == (1.0, None)


def test_identical_answer_needs_no_second_parse() -> None:
    outcome = MathVerifier(MathParams()).score("\\sin^2 x + \\cos^2 x", "\\sin^2 x + \\cos^2 x")
    assert outcome.accuracy == 1.0


def test_rational_value() -> None:
    assert rational_value("-\\dfrac{6}{8}") == Fraction(-3, 4)
    assert rational_value("1/0") is None
