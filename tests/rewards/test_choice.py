"""The ``choice`` verifier: letters, option text, articles and hedges."""

from __future__ import annotations

import pytest

from videorl_kit.rewards.choice import ChoiceParams, ChoiceVerifier, parse_choice, parse_options

OPTIONS = ["A. Red", "B. Blue", "C. Green", "D. A dog"]


@pytest.fixture(scope="module")
def verifier() -> ChoiceVerifier:
    return ChoiceVerifier(ChoiceParams())


@pytest.mark.parametrize(
    "answer",
    [
        "C",
        "c",
        "(C)",
        "[C]",
        "C.",
        "C:",
        "C) Green",
        "C. Green",
        "Option C",
        "option: C",
        "Choice C",
        "The answer is C",
        "The correct option is (C).",
        "\\boxed{C}",
        "**C**",
        "C because the lid is green",
        "Green",
        "green.",
        "选项 C",
        "a person opens the door, so (C)",
    ],
)
def test_forms_that_name_option_c(verifier: ChoiceVerifier, answer: str) -> None:
    outcome = verifier.score(answer, "C", OPTIONS)
    assert outcome.accuracy == 1.0, outcome.details


@pytest.mark.parametrize(
    "answer",
    ["A or B", "A, B, C, D", "A/B", "A and B", "C or maybe D", "(A) or (C)", "C, D"],
)
def test_hedges_score_zero(verifier: ChoiceVerifier, answer: str) -> None:
    outcome = verifier.score(answer, "C", OPTIONS)
    assert outcome.accuracy == 0.0
    assert "hedge" in outcome.details["reason"]


@pytest.mark.parametrize(
    "answer",
    [
        "A man opens the door.",  # article, not option A
        "a dog runs",
        "I think so",
        "e.g. this one",
        "Cat",
        "",
    ],
)
def test_articles_pronouns_and_words_are_not_letters(verifier: ChoiceVerifier, answer: str) -> None:
    outcome = verifier.score(answer, "A")
    assert outcome.accuracy == 0.0


def test_article_that_is_an_option_text_names_that_option(verifier: ChoiceVerifier) -> None:
    assert verifier.score("A dog", "D", OPTIONS).accuracy == 1.0


def test_bare_a_followed_by_a_verb_names_option_a(verifier: ChoiceVerifier) -> None:
    assert verifier.score("A is correct", "A").accuracy == 1.0


def test_letter_contradicting_its_option_text_scores_zero(verifier: ChoiceVerifier) -> None:
    outcome = verifier.score("C) Red", "C", OPTIONS)
    assert outcome.accuracy == 0.0
    assert "contradicts" in outcome.details["reason"]


def test_gold_may_be_option_text(verifier: ChoiceVerifier) -> None:
    assert verifier.score("B", "Blue", OPTIONS).accuracy == 1.0
    assert verifier.score("(B) Blue", "blue", OPTIONS).accuracy == 1.0


def test_text_gold_without_options_needs_the_same_text(verifier: ChoiceVerifier) -> None:
    # Peer V scores this 0 (a non-letter MC gold never matches); the text is the answer.
    assert verifier.score("Blue", "Blue").accuracy == 1.0
    assert verifier.score("B", "Blue").accuracy == 0.0


def test_gold_letter_outside_the_options_is_unverifiable(verifier: ChoiceVerifier) -> None:
    assert verifier.score("B", "F", OPTIONS).status == "unverifiable"


def test_gold_text_matching_no_option_is_unverifiable(verifier: ChoiceVerifier) -> None:
    assert verifier.score("B", "Purple", OPTIONS).status == "unverifiable"


def test_empty_gold_is_unverifiable(verifier: ChoiceVerifier) -> None:
    assert verifier.score("B", "  ").status == "unverifiable"


def test_letter_outside_the_options_scores_zero(verifier: ChoiceVerifier) -> None:
    outcome = verifier.score("F", "A", OPTIONS)
    assert outcome.accuracy == 0.0 and "not an option" in outcome.details["reason"]


def test_letters_beyond_j_work_without_options(verifier: ChoiceVerifier) -> None:
    assert verifier.score("(Q)", "Q").accuracy == 1.0


def test_option_text_can_be_switched_off() -> None:
    strict = ChoiceVerifier(ChoiceParams(accept_option_text=False))
    assert strict.score("Green", "C", OPTIONS).accuracy == 0.0
    assert strict.score("C", "C", OPTIONS).accuracy == 1.0


def test_answer_matching_two_options_is_ambiguous() -> None:
    assert parse_choice("red", parse_options(("A. Red", "B. red"))) == (
        None,
        "answer matches several options",
    )


def test_multiline_answer_reads_the_last_line(verifier: ChoiceVerifier) -> None:
    assert verifier.score("The lid looks green to me.\nC", "C").accuracy == 1.0


def test_unlabelled_options_are_labelled_by_position() -> None:
    assert parse_options(("Red", "Blue")) == (("A", "red"), ("B", "blue"))
