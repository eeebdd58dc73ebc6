"""``numeric`` (tolerance) and ``mra`` (mean relative accuracy) verifiers."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from videorl_kit.rewards.numeric import (
    MraParams,
    MraVerifier,
    NumericParams,
    NumericVerifier,
    chinese_number,
    find_numbers,
    mean_relative_accuracy,
    read_single_number,
)


@pytest.fixture(scope="module")
def exact() -> NumericVerifier:
    return NumericVerifier(NumericParams())


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("21", "21"),
        ("twenty-one", "21"),
        ("Twenty one", "21"),
        ("one hundred and five", "105"),
        ("three thousand two hundred", "3200"),
        ("1,000", "1000"),
        ("1,234,567", "1234567"),
        ("3/4", "0.75"),
        ("\\frac{3}{4}", "0.75"),
        ("75%", "0.75"),
        ("75 percent", "75"),
        ("12 m", "12"),
        ("12m", "12"),
        ("$5", "5"),
        ("-3", "-3"),
        ("−3", "-3"),
        ("minus three", "-3"),
        ("1e3", "1000"),
        ("1.5 × 10^3", "1500"),
        ("2 million", "2000000"),
        (".5", "0.5"),
        ("3.0", "3"),
        ("3 (three)", "3"),
        ("There are 12 apples.", "12"),
        ("I counted 3 red and 2 blue, so the answer is 5", "5"),
        ("十二", "12"),
        ("none", "0"),
        ("0.333", "0.33"),  # gold precision: rounds to the gold's decimals
        ("1/3", "0.33"),
    ],
)
def test_readable_numbers_match(exact: NumericVerifier, answer: str, gold: str) -> None:
    outcome = exact.score(answer, gold)
    assert outcome.accuracy == 1.0, outcome.details


@pytest.mark.parametrize(
    ("answer", "reason_part"),
    [
        ("3 or 4", "several different numbers"),
        ("3-4", "several different numbers"),
        ("3, 4, 5", "several different numbers"),
        ("one two", "several different numbers"),
        ("a few", "no number found"),
        ("", "no number found"),
    ],
)
def test_hedges_and_non_numbers_score_zero(
    exact: NumericVerifier, answer: str, reason_part: str
) -> None:
    outcome = exact.score(answer, "3")
    assert outcome.accuracy == 0.0
    assert reason_part in outcome.details["reason"]


def test_default_tolerance_is_exact(exact: NumericVerifier) -> None:
    # Peer V accepts 3.15 for 3.14 (|diff| < 0.015); a declared tolerance is needed here.
    assert exact.score("3.15", "3.14").accuracy == 0.0
    assert exact.score("3.4", "3").accuracy == 0.0


def test_gold_precision_never_applies_to_integer_golds(exact: NumericVerifier) -> None:
    assert exact.score("3.2", "3").accuracy == 0.0


def test_declared_absolute_and_relative_tolerances() -> None:
    assert NumericVerifier(NumericParams(abs_tol=0.5)).score("3.4", "3").accuracy == 1.0
    assert NumericVerifier(NumericParams(abs_tol=0.5)).score("3.6", "3").accuracy == 0.0
    assert NumericVerifier(NumericParams(rel_tol=0.1)).score("105", "100").accuracy == 1.0
    assert NumericVerifier(NumericParams(rel_tol=0.1)).score("111", "100").accuracy == 0.0


def test_percent_reads_both_ways(exact: NumericVerifier) -> None:
    assert exact.score("50%", "50").accuracy == 1.0
    assert exact.score("50%", "0.5").accuracy == 1.0
    assert exact.score("0.5", "50%").accuracy == 1.0
    assert exact.score("5%", "50").accuracy == 0.0


def test_unparseable_gold_is_unverifiable(exact: NumericVerifier) -> None:
    assert exact.score("3", "three or four").status == "unverifiable"
    assert exact.score("3", "").status == "unverifiable"
    assert exact.score("3", "n/a").status == "unverifiable"


def test_numbers_glued_to_letters_are_units_not_numbers() -> None:
    assert [n.value for n in find_numbers("12 m^2")] == [Fraction(12)]
    assert find_numbers("x2 and m3") == []


def test_answer_too_long_for_a_number() -> None:
    assert read_single_number("1 " + "x" * 5000).number is None


def test_chinese_numerals() -> None:
    assert chinese_number("三百零五") == 305
    assert chinese_number("两万") == 20_000
    assert chinese_number("abc") is None


# ---------------------------------------------------------------- MRA


@pytest.mark.parametrize(
    ("pred", "gold", "expected"),
    [
        ("10", "10", 1.0),
        ("10.5", "10", 1.0),  # relative error 0.05: on the last threshold (counted)
        ("11", "10", 0.9),
        ("9", "10", 0.9),
        ("12", "10", 0.7),
        ("14", "10", 0.3),
        ("15", "10", 0.1),
        ("16", "10", 0.0),
        ("5", "4", 0.6),  # peer U gives 0 (no MRA)
        ("1,050", "1000", 1.0),
        ("nine", "10", 0.9),
    ],
)
def test_mra_counts_boundaries_exactly(pred: str, gold: str, expected: float) -> None:
    assert MraVerifier(MraParams()).score(pred, gold).accuracy == expected


def test_mra_strict_mode_excludes_boundaries() -> None:
    strict = MraVerifier(MraParams(inclusive=False))
    assert strict.score("11", "10").accuracy == 0.8
    assert strict.score("10.5", "10").accuracy == 0.9


def test_mra_float_accumulation_does_not_leak_in() -> None:
    # 0.1 + 0.2 style errors: thresholds are exact fractions.
    assert mean_relative_accuracy(Fraction("0.3"), Fraction("0.1") + Fraction("0.2")) == 1.0
    assert mean_relative_accuracy(Fraction(13), Fraction(10), inclusive=True) == 0.5


def test_mra_gold_zero_is_handled_explicitly() -> None:
    mra = MraVerifier(MraParams())
    assert mra.score("0", "0").accuracy == 1.0
    assert mra.score("0.001", "0").accuracy == 0.0


def test_mra_hedge_scores_zero() -> None:
    assert MraVerifier(MraParams()).score("10 or 11", "10").accuracy == 0.0


@given(
    gold=st.fractions(min_value=-1000, max_value=1000, max_denominator=100),
    delta=st.fractions(min_value=-2000, max_value=2000, max_denominator=100),
    inclusive=st.booleans(),
)
@example(gold=Fraction(10), delta=Fraction(1), inclusive=True)
@example(gold=Fraction(4), delta=Fraction(1), inclusive=False)
def test_mra_closed_form_equals_the_ten_threshold_definition(
    gold: Fraction, delta: Fraction, inclusive: bool
) -> None:
    if gold == 0:
        return
    pred = gold + delta
    rel = abs(pred - gold) / abs(gold)
    thresholds = [Fraction(50 + 5 * k, 100) for k in range(10)]
    passed = [rel <= 1 - t if inclusive else rel < 1 - t for t in thresholds]
    assert mean_relative_accuracy(pred, gold, inclusive=inclusive) == sum(passed) / 10
