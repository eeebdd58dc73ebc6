"""``boolean`` and ``preference`` (critic) verifiers."""

from __future__ import annotations

import pytest

from videorl_kit.rewards.boolean import BooleanParams, BooleanVerifier
from videorl_kit.rewards.preference import PreferenceParams, PreferenceVerifier

BOOL = BooleanVerifier(BooleanParams())
PREF = PreferenceVerifier(PreferenceParams())


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("Yes", "yes"),
        ("yes.", "Yes"),
        ("Yes, it is.", "yes"),
        ("True", "yes"),
        ("No, the man does not run.", "no"),
        ("false", "No"),
        ("It is not true", "no"),
        ("It isn't true.", "no"),
        ("The statement is true", "yes"),
        ("The answer is yes", "yes"),
        ("是", "yes"),
        ("不是", "no"),
        ("yes", "1"),  # 1/0 golds are a data convention
        ("no", "0"),
    ],
)
def test_boolean_answers(answer: str, gold: str) -> None:
    assert BOOL.score(answer, gold).accuracy == 1.0


@pytest.mark.parametrize("answer", ["yes and no", "Yes/No", "yes or no", "Both yes and no"])
def test_boolean_hedges_score_zero(answer: str) -> None:
    outcome = BOOL.score(answer, "yes")
    assert outcome.accuracy == 0.0 and "hedge" in outcome.details["reason"]


def test_boolean_one_and_zero_are_yes_and_no() -> None:
    # Issue 10: a careful grader reads a lone 1 as yes and 0 as no (as peer U does).
    assert BOOL.score("1", "Yes").accuracy == 1.0
    assert BOOL.score("0.", "no").accuracy == 1.0
    assert BOOL.score("1", "no").accuracy == 0.0
    for other in ("11", "2", "1 or 0", "10"):
        assert BOOL.score(other, "yes").accuracy == 0.0, other


def test_boolean_words_inside_other_words_do_not_count() -> None:
    assert BOOL.score("Yesterday it rained", "yes").accuracy == 0.0


def test_boolean_gold_that_is_not_yes_no_is_unverifiable() -> None:
    assert BOOL.score("yes", "maybe").status == "unverifiable"


@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("Response 1", "Response 1"),
        ("Response A", "Response 1"),
        ("Response 1", "Response A"),  # peer V scores this 0 (plain equality)
        ("response b", "Response 2"),
        ("2", "Response 2"),
        ("Tie", "Tie"),
        ("It is a tie.", "tie"),
        ("Response 1 and Response 2 are equally good", "Tie"),
        ("Response 1 is better than Response 2.", "Response 1"),
        ("I prefer the second response.", "Response 2"),
        ("Response 2 is worse.", "Response 1"),
        ("Response 2 is slightly better, though Response 1 is more concise.", "Response 2"),
        ("Response 1. Response 2 has factual errors.", "Response 1"),
        ("**Response 2**", "Response 2"),
        ("The better answer is Response 2", "Response 2"),
    ],
)
def test_preference_judgements(answer: str, gold: str) -> None:
    outcome = PREF.score(answer, gold)
    assert outcome.accuracy == 1.0, outcome.details


@pytest.mark.parametrize(
    "answer",
    [
        "Response 1 and Response 2",
        "Response 1, Response 2",
        "Response 1 is better. Actually Response 2 is better.",
        "Response 1 is better, but it is a tie",
        "Both are fine",
        "",
    ],
)
def test_preference_without_a_clear_choice_scores_zero(answer: str) -> None:
    assert PREF.score(answer, "Response 1").accuracy == 0.0


def test_preference_gold_must_be_a_label() -> None:
    assert PREF.score("Response 1", "something else").status == "unverifiable"
