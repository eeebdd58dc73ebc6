"""Format rule ``answer_tag`` and ``none``."""

from __future__ import annotations

import pytest

from videorl_kit.rewards.format import check_format, format_score


@pytest.mark.parametrize(
    "response",
    [
        "<answer>B</answer>",
        "  <answer> B </answer>\n",
        "<think>reasoning</think><answer>B</answer>",
        "<think></think>\n\n<answer>42</answer>",
        "<think>x</think><answer>B</answer><|im_end|>",
        "<THINK>x</THINK><ANSWER>B</ANSWER>",
    ],
)
def test_well_formed_responses_get_format_1(response: str) -> None:
    assert format_score(response) == 1.0


@pytest.mark.parametrize(
    ("response", "reason"),
    [
        ("The answer is B", "no <answer> block"),
        ("<answer></answer>", "empty <answer> block"),
        ("<answer>  </answer>", "empty <answer> block"),
        ("<answer>A</answer><answer>B</answer>", "2 <answer> blocks (exactly one allowed)"),
        ("<answer>B</answer><answer>B</answer>", "2 <answer> blocks (exactly one allowed)"),
        (
            "<think>a</think><think>b</think><answer>B</answer>",
            "2 <think> blocks (at most one allowed)",
        ),
        ("Sure! <answer>B</answer>", "text before the first tag"),
        ("Hmm <think>x</think><answer>B</answer>", "text before the first tag"),
        ("<think>x</think> so: <answer>B</answer>", "text between </think> and <answer>"),
        ("<answer>B</answer> Hope this helps", "text after </answer>"),
        ("<answer>B</answer><think>x</think>", "tags out of order or unbalanced"),
        ("<answer>B", "tags out of order or unbalanced"),
    ],
)
def test_malformed_responses_get_format_0_with_a_reason(response: str, reason: str) -> None:
    check = check_format(response)
    assert check.score == 0.0
    assert check.reason == reason


def test_rule_none_always_gives_1() -> None:
    assert format_score("", rule="none") == 1.0
    assert format_score("anything at all", rule="none") == 1.0


def test_unknown_rule_is_a_configuration_error() -> None:
    with pytest.raises(ValueError, match="unknown format rule"):
        check_format("<answer>B</answer>", rule="strict")
