"""The shared extraction pipeline: answer blocks, think blocks, final statements, hedges."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from videorl_kit.rewards.extract import (
    MAX_TAGS,
    extract_answer,
    find_final_statement,
    scan_tags,
    strip_special_tokens,
)
from videorl_kit.rewards.format import check_format


def test_answer_block_wins_over_reasoning_and_final_statements() -> None:
    ex = extract_answer("<think>The answer is A.</think> The answer is C. <answer>B</answer>")
    assert (ex.answer, ex.source) == ("B", "answer_tag")


def test_text_inside_think_never_counts_when_an_answer_exists_outside() -> None:
    ex = extract_answer("<think>final answer: 7</think>\nThe answer is 9.")
    assert (ex.answer, ex.source) == ("9", "final_statement")


def test_answer_tags_inside_think_are_reasoning_not_answers() -> None:
    ex = extract_answer("<think>I could write <answer>A</answer></think><answer>B</answer>")
    assert ex.answer == "B"
    assert ex.answer_blocks == ("B",)


def test_two_different_non_empty_answer_blocks_are_a_hedge() -> None:
    ex = extract_answer("<answer>A</answer> or maybe <answer>B</answer>")
    assert ex.hedge and ex.answer is None
    assert "hedge" in (ex.reason or "")


def test_repeated_identical_answer_blocks_are_not_a_hedge() -> None:
    ex = extract_answer("<answer>B</answer><answer> b </answer>")
    assert not ex.hedge and ex.answer == "B"


def test_empty_answer_block_gives_the_empty_answer_without_fallback() -> None:
    ex = extract_answer("The answer is C. <answer></answer>")
    assert ex.answer == "" and ex.source == "answer_tag"
    assert ex.reason == "empty <answer> block"


def test_empty_block_next_to_a_filled_one_is_ignored() -> None:
    assert extract_answer("<answer></answer><answer>C</answer>").answer == "C"


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("Reasoning. The answer is B.", "B"),
        ("so the final answer is: 12 m", "12 m"),
        ("Final Answer: (C)", "(C)"),
        ("We get \\boxed{\\frac{1}{2}}.", "\\frac{1}{2}"),
        ("The answer is:\n\nB", "B"),
        ("Answer: C", "C"),
        ("Best option: D", "D"),
        ("A man opens the door. The answer is (C).", "(C)"),
        ("The answer is B. Option A is incorrect.", "B"),
        ("e.g. the answer is B", "B"),
        ("I choose option C", "option C"),
        ("答案是 D", "D"),
        ("There are 5 cats and 2 dogs, so the total is 7.", "7"),
    ],
)
def test_final_statement_forms(response: str, expected: str) -> None:
    ex = extract_answer(response)
    assert ex.source == "final_statement"
    assert ex.answer == expected


def test_the_last_final_statement_wins() -> None:
    assert find_final_statement("The answer is A. Wait, the answer is B.") == "B"


def test_without_tags_or_statement_the_body_is_the_answer() -> None:
    ex = extract_answer("  Blue  ")
    assert (ex.answer, ex.source) == ("Blue", "body")


def test_implicit_think_opened_by_the_prompt() -> None:
    ex = extract_answer("the answer is A, I think...</think>\n<answer>B</answer>")
    assert ex.answer == "B" and ex.think_blocks == 1


def test_unterminated_think_is_all_reasoning() -> None:
    ex = extract_answer("<think>the answer is B but let me check")
    assert ex.answer is None and ex.unterminated_think


def test_unterminated_think_ends_at_the_first_answer_block() -> None:
    ex = extract_answer("<think>The cup is blue, so B.\n<answer>B</answer>")
    assert (ex.answer, ex.source, ex.think_blocks) == ("B", "answer_tag", 1)
    assert ex.unterminated_think and ex.outside_think.strip() == "<answer>B</answer>"
    assert check_format(ex).reason == "unterminated <think> block"
    hedge = extract_answer("<think>maybe <answer>A</answer> no wait <answer>B</answer>")
    assert hedge.hedge and hedge.answer is None
    empty_first = extract_answer("<think>use <answer></answer> tags. 12\n<answer>12</answer>")
    assert empty_first.answer == "12"


def test_answer_tags_inside_a_closed_think_stay_reasoning() -> None:
    ex = extract_answer("<think>draft <answer>A</answer></think> <answer>B</answer>")
    assert ex.answer == "B"
    later_close = extract_answer("<think>draft <answer>A</answer> more</think> so the answer is C")
    assert (later_close.answer, later_close.source) == ("C", "final_statement")


def test_a_final_statement_only_inside_think_is_no_answer() -> None:
    """Issue 19: without a final answer after the reasoning the response is unanswered (a
    conclusion inside <think> was read as the answer before)."""
    for text in (
        "<think>Counting... the answer is 4.</think>",
        "<think>Counting... the answer is 4.</think>\n  ",
        "<think>\\boxed{4}</think><|im_end|>",
        "Counting... the answer is 4.</think>",  # the template opened <think>
        "<thought>Final answer: 4</thought>",
    ):
        ex = extract_answer(text)
        assert (ex.answer, ex.source) == (None, "none"), text
        assert ex.reason == "nothing outside the <think> block (no final answer)"


def test_stray_tags_are_removed_from_the_body() -> None:
    assert extract_answer("<answer>B").answer == "B"


def test_tags_are_case_insensitive() -> None:
    ex = extract_answer("<THINK>x</THINK><Answer>C</Answer>")
    assert ex.answer == "C" and ex.think_blocks == 1


def test_thought_counts_as_think() -> None:
    assert extract_answer("<thought>A</thought><answer>B</answer>").think_blocks == 1


def test_special_tokens_are_removed_before_anything_else() -> None:
    text, n = strip_special_tokens("<|video_pad|><|video_pad|><answer>B<|im_end|></answer>")
    assert (text, n) == ("<answer>B</answer>", 3)
    assert extract_answer("<answer>B</answer><|im_end|>").answer == "B"


def test_unknown_special_token_names_are_removed_too() -> None:
    assert strip_special_tokens("a<|my_tok|>b")[0] == "ab"


def test_flood_of_special_tokens_keeps_the_answer() -> None:
    ex = extract_answer("<|video_pad|>" * 50_000 + "<answer>B</answer>")
    assert ex.answer == "B"


def test_more_than_max_tags_is_a_degenerate_response() -> None:
    ex = extract_answer("<answer>B</answer>" * (MAX_TAGS // 2 + 1))
    assert ex.answer is None and "degenerate" in (ex.reason or "")


def test_scan_tags_reports_positions_in_order() -> None:
    tags = scan_tags("x<think>y</think><answer>z</answer>")
    assert [(t.start, t.kind, t.closing) for t in tags] == [
        (1, "think", False),
        (9, "think", True),
        (17, "answer", False),
        (26, "answer", True),
    ]


def test_answer_at_the_end_of_a_megabyte_is_found() -> None:
    ex = extract_answer("x" * 1_000_000 + "<answer>C</answer>")
    assert ex.answer == "C"


def test_non_string_input_is_an_empty_response() -> None:
    ex = extract_answer(None)  # type: ignore[arg-type]
    assert ex.answer is None and ex.reason == "empty response"


def test_steps_are_json_friendly_and_shortened() -> None:
    steps = extract_answer("<answer>" + "x" * 1000 + "</answer>").steps()
    assert steps["source"] == "answer_tag"
    assert "chars)" in str(steps["answer"])


#: What a tag is, written as a regular expression: the reference ``scan_tags`` must equal.
_TAG_DEFINITION = re.compile(r"<(/?)(answer|think|thought)>", re.IGNORECASE)


def _reference_tags(text: str, limit: int) -> list[tuple[int, int, str, bool]]:
    found = []
    for m in _TAG_DEFINITION.finditer(text):
        kind = "answer" if m.group(2)[0] in "aA" else "think"
        found.append((m.start(), m.end(), kind, m.group(1) == "/"))
        if len(found) > limit:
            break
    return found


_TAG_PIECES = st.sampled_from(
    ["<answer>", "</answer>", "<think>", "</think>", "<thought>", "</thought>", "<", ">", "/"]
)
#: Letters re.IGNORECASE matches to a tag's letters (İ ı -> i, ſ -> s, K Kelvin -> k), others.
_LETTERS = st.sampled_from(list("answerthinkougASWTHINK İıſ\u212ax\n"))


@given(
    st.lists(st.one_of(_TAG_PIECES, _TAG_PIECES.map(str.upper), _LETTERS), max_size=40),
    st.integers(min_value=0, max_value=6),
)
def test_scan_tags_finds_what_the_case_insensitive_definition_finds(pieces, limit) -> None:
    text = "".join(pieces)
    tags = [tuple(tag) for tag in scan_tags(text, limit)]
    assert tags == _reference_tags(text, limit)


def test_scan_tags_reads_odd_case_letters_as_the_definition_does() -> None:
    text = "<thİnk>a</thınk><anſwer>b</ANSWER><thin\u212a>"
    assert [tuple(tag) for tag in scan_tags(text)] == _reference_tags(text, MAX_TAGS)
    assert len(scan_tags(text)) == 5


def test_a_flood_of_tags_is_cut_at_the_first_tags_in_text_order() -> None:
    text = "<answer>B</answer>" * 1000
    assert [tuple(tag) for tag in scan_tags(text)] == _reference_tags(text, MAX_TAGS)
