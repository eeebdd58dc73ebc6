"""OCR (1 − WER), open-ended (exact / ROUGE, parity with rouge_score) and the sequence kernels."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from videorl_kit.rewards.ocr import WerParams, WerVerifier, ocr_words
from videorl_kit.rewards.open_ended import (
    RougeParams,
    RougeVerifier,
    rouge_f_measures,
    rouge_tokens,
)
from videorl_kit.rewards.sequence import edit_distance, lcs_length

WER = WerVerifier(WerParams())
ROUGE = RougeVerifier(RougeParams())


def _dp_edit(a: list[str], b: list[str]) -> int:
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def _dp_lcs(a: list[str], b: list[str]) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, 1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


#: Few letters (many matches), tokens rapidfuzz would hash alike ("" and "\x00") and any text.
token = st.one_of(st.sampled_from(["a", "b", "c", "d", "", "\x00", "é", "答"]), st.text(max_size=3))
words = st.lists(token, max_size=40)


@given(words, words)
def test_edit_distance_equals_the_textbook_dp(a: list[str], b: list[str]) -> None:
    assert edit_distance(a, b) == _dp_edit(a, b)


@given(words, words)
def test_lcs_equals_the_textbook_dp(a: list[str], b: list[str]) -> None:
    assert lcs_length(a, b) == _dp_lcs(a, b)


def test_ocr_is_case_and_punctuation_insensitive() -> None:
    assert WER.score("HELLO, world!", "hello world").accuracy == 1.0
    assert WER.score("Don't stop", "dont stop").accuracy == 1.0


def test_ocr_one_wrong_word_of_two_is_half() -> None:
    # Peer V scores this 0 (plain equality).
    assert WER.score("Hello Word", "hello world").accuracy == 0.5


def test_ocr_floor_at_zero_and_empty_answer() -> None:
    assert WER.score("a b c d e f", "x y").accuracy == 0.0
    assert WER.score("", "hello").accuracy == 0.0


def test_ocr_empty_gold_is_unverifiable() -> None:
    assert WER.score("hello", "  ").status == "unverifiable"
    assert WER.score("hello", "!!!").status == "unverifiable"


def test_ocr_counts_cjk_characters_as_words() -> None:
    assert ocr_words("你好 world") == ["你", "好", "world"]
    assert WER.score("你好", "你们").accuracy == 0.5


def test_ocr_case_sensitive_mode() -> None:
    strict = WerVerifier(WerParams(case_sensitive=True))
    assert strict.score("Hello", "hello").accuracy == 0.0


def test_open_ended_short_gold_is_exact_match() -> None:
    # Peer V gives 0.667 (ROUGE-2 of a one-word answer is 0).
    assert ROUGE.score("Paris", "paris").accuracy == 1.0
    assert ROUGE.score("The kitchen.", "kitchen").accuracy == 1.0
    assert ROUGE.score("The answer is: kitchen", "kitchen").accuracy == 1.0
    assert ROUGE.score("in the kitchen", "kitchen").accuracy == 1.0  # states it (issue 10)
    assert ROUGE.score("in the bedroom", "kitchen").accuracy == 0.0
    assert ROUGE.score("not in the kitchen", "kitchen").accuracy == 0.0
    assert ROUGE.score("", "kitchen").accuracy == 0.0


def test_open_ended_empty_gold_is_unverifiable() -> None:
    assert ROUGE.score("x", "").status == "unverifiable"


def test_open_ended_long_gold_uses_mean_rouge() -> None:
    outcome = ROUGE.score("The cat leaps on the table", "A cat jumps onto the table.")
    assert outcome.accuracy == pytest.approx(0.4)
    assert outcome.details["mode"] == "rouge"


SENTENCES = st.lists(
    st.sampled_from(["the", "cat", "dog", "runs", "on", "a", "table", "3", "Red", "it's", "café"]),
    max_size=25,
).map(" ".join)


@given(SENTENCES, SENTENCES)
def test_rouge_matches_rouge_score_without_stemmer(pred: str, ref: str) -> None:
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=False)
    expected = scorer.score(ref, pred)
    ours = rouge_f_measures(rouge_tokens(pred), rouge_tokens(ref))
    for value, key in zip(ours, ("rouge1", "rouge2", "rougeL"), strict=True):
        assert value == pytest.approx(expected[key].fmeasure, abs=1e-12)


def test_rouge_tokens_follow_rouge_score() -> None:
    assert rouge_tokens("It's 3 o'clock, Café!") == ["it", "s", "3", "o", "clock", "caf"]
