"""Issue 19 §2, outside round 3: properties over the hedge families that still scored 1.

The graded cases are in ``golden/families_issue19_hedges.jsonl``; the attacker's own forms are
``tests/attacks/test_outsider_round3.py::test_hedge_scores_zero``. Here each family is generated:
every joiner between two different letters, every invisible separator, every open-range wording
in English and Chinese, a disagreeing box beside the answer block in every type, a second
interval or box under any other JSON key, both verdicts joined in Chinese or given per case,
and a second value offered inside one math box. Each property also checks the one right answer
next to the hedge still scores, so the rule refuses hedges, not answers.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from videorl_kit.rewards.router import reward_function_for
from videorl_kit.rewards.text import fold_compat

CHOICE = reward_function_for("multiple_choice")
NUMERIC = reward_function_for("numerical")
MRA = reward_function_for("regression")
BOOLEAN = reward_function_for("boolean")
TEMPORAL = reward_function_for("temporal_grounding")
SPATIAL = reward_function_for("spatial_grounding")
MATH = reward_function_for("math")
OPTIONS = ["A. Red", "B. Blue", "C. Green", "D. Yellow", "E. Black"]
TEXTS = {"A": "red", "B": "blue", "C": "green", "D": "yellow", "E": "black"}
LETTERS = st.sampled_from(sorted(TEXTS))

JOINERS = [
    "+", " + ", "＋", " & ", " vs ", " vs. ", " versus ", " plus ", "或", " 或 ", "或者",
    " 或者 ", "还是", " 还是 ", "和", " 与 ", "、", "/", " / ", " or ", ", ", "|", "~", " -> ",
    "→", "-", "–", " then ",
]  # fmt: skip


@given(first=LETTERS, second=LETTERS, join=st.sampled_from(JOINERS), brackets=st.booleans())
def test_two_letters_joined_by_any_joiner_score_zero(
    first: str, second: str, join: str, brackets: bool
) -> None:
    assume(first != second)
    a, b = (f"({first})", f"({second})") if brackets else (first, second)
    response = f"<answer>{a}{join}{b}</answer>"
    for gold in (first, second):
        assert CHOICE(response, gold, OPTIONS).accuracy == 0.0, (response, gold)
    assert CHOICE(f"<answer>{a}</answer>", first, OPTIONS).accuracy == 1.0


@given(
    first=LETTERS,
    second=LETTERS,
    form=st.sampled_from(["{L} ({t})", "{L}: {t}", "{L}. {t}", "({L}) {t}", "{L}) {t}"]),
    join=st.sampled_from([", ", "; ", "\n", " or ", " / ", " + "]),
    with_options=st.booleans(),
)
def test_a_list_of_two_option_statements_scores_zero(
    first: str, second: str, form: str, join: str, with_options: bool
) -> None:
    assume(first != second)
    items = [form.format(L=letter, t=TEXTS[letter]) for letter in (first, second)]
    response = f"<answer>{join.join(items)}</answer>"
    options = OPTIONS if with_options else None
    for gold in (first, second):
        assert CHOICE(response, gold, options).accuracy == 0.0, (response, gold)
    assert CHOICE(f"<answer>{items[0]}</answer>", first, options).accuracy == 1.0, items[0]


INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u180e", "\u2063"]


@given(first=LETTERS, second=LETTERS, mark=st.sampled_from(INVISIBLE))
def test_an_invisible_separator_joins_nothing_apart(first: str, second: str, mark: str) -> None:
    assume(first != second)
    response = f"<answer>{first}{mark}{second}</answer>"
    for gold in (first, second):
        assert CHOICE(response, gold, OPTIONS).accuracy == 0.0, (response, gold)
    # around one letter it is nothing: the letter still scores
    assert CHOICE(f"<answer>{mark}{first}{mark}</answer>", first, OPTIONS).accuracy == 1.0
    assert fold_compat(f"{first}{mark}{second}") == f"{first}{second}"


@given(n=st.integers(0, 10_000), mark=st.sampled_from(INVISIBLE))
def test_an_invisible_character_never_splits_a_number(n: int, mark: str) -> None:
    digits = str(n)
    assume(len(digits) > 1)
    glued = f"<answer>{digits[0]}{mark}{digits[1:]}</answer>"
    assert NUMERIC(glued, digits).accuracy == 1.0, glued  # it reads as written on the screen
    assert NUMERIC(glued, digits[0]).accuracy == 0.0, glued


BOUNDS = [
    "at least {n}", "at most {n}", "{n} at most", "{n} at least", "{n}, at the very least",
    "{n} at the most", "minimum of {n}", "a maximum of {n}", "max {n}", "{n} max",
    "{n} minimum", "{n} (at least)", "{n} (or more)", "{n} plus", "{n}-plus", "{n}+",
    "over {n}", "under {n}", "above {n}", "below {n}", "upwards of {n}", "in excess of {n}",
    "{n} and below", "{n} or fewer", "no fewer than {n}", "more than {n}", "up to {n}",
    "至少{n}", "至少 {n} 个", "最多{n}", "最少{n}个", "不少于{n}", "不超过{n}", "超过{n}",
    "多于{n}", "少于{n}", "大于{n}", "不低于{n}", "{n}以上", "{n}个以上", "{n}以下", "{n}多个",
    "{n}余人",
]  # fmt: skip


@given(n=st.integers(1, 500), bound=st.sampled_from(BOUNDS))
def test_an_open_range_commits_to_no_value(n: int, bound: str) -> None:
    response = f"<answer>{bound.format(n=n)}</answer>"
    assert NUMERIC(response, str(n)).accuracy == 0.0, response
    assert MRA(response, str(n)).accuracy == 0.0, response
    assert NUMERIC(f"<answer>{n}</answer>", str(n)).accuracy == 1.0


WORDS = [
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
]


@given(i=st.integers(0, len(WORDS) - 1), bound=st.sampled_from(BOUNDS[:27]))
def test_an_open_range_in_number_words_commits_to_no_value(i: int, bound: str) -> None:
    response = f"<answer>{bound.format(n=WORDS[i])}</answer>"
    assert NUMERIC(response, str(i + 1)).accuracy == 0.0, response
    assert NUMERIC(f"<answer>{WORDS[i]}</answer>", str(i + 1)).accuracy == 1.0


@given(
    n=st.integers(0, 500),
    gap=st.integers(1, 5),
    dots=st.sampled_from(["..", "...", " .. ", "…"]),
)
def test_a_range_with_dots_commits_to_no_value(n: int, gap: int, dots: str) -> None:
    response = f"<answer>{n}{dots}{n + gap}</answer>"
    for gold in (n, n + gap):
        assert NUMERIC(response, str(gold)).accuracy == 0.0, (response, gold)


CN_DIGITS = "一二三四五六七八九"


@given(
    i=st.integers(0, 7), unit=st.sampled_from(["", "十", "百"]), noun=st.sampled_from(["个", "人"])
)
def test_chinese_neighbouring_numerals_name_two_values(i: int, unit: str, noun: str) -> None:
    response = f"<answer>{CN_DIGITS[i]}{CN_DIGITS[i + 1]}{unit}{noun}</answer>"
    scale = {"": 1, "十": 10, "百": 100}[unit]
    for value in (i + 1, i + 2):
        assert NUMERIC(response, str(value * scale)).accuracy == 0.0, (response, value)
    single = f"<answer>{CN_DIGITS[i]}{unit}{noun}</answer>"
    assert NUMERIC(single, str((i + 1) * scale)).accuracy == 1.0, single


#: Per type: a gold, a right answer and a wrong answer (each as a box's content).
RIGHT_AND_WRONG = {
    "multiple_choice": ("B", "B", "C"),
    "numerical": ("12", "12", "13"),
    "regression": ("10", "10", "3"),
    "boolean": ("yes", "yes", "no"),
    "critic": ("Response 1", "Response 1", "Response 2"),
    "open_ended": ("kitchen", "kitchen", "garden"),
    "temporal_grounding": ('{"time": [10, 20]}', "[10, 20]", "[30, 40]"),
    "spatial_grounding": ('{"boxes": [0, 0, 10, 10]}', "[0, 0, 10, 10]", "[20, 20, 30, 30]"),
    "math": ("\\frac{1}{2}", "0.5", "0.6"),
}


@pytest.mark.parametrize("ptype", list(RIGHT_AND_WRONG), ids=str)
@given(
    boxed_block=st.booleans(),
    after=st.booleans(),
    join=st.sampled_from([" ", "\n", "\n\nSo: ", " Final: "]),
    box=st.sampled_from(["\\boxed", "\\fbox"]),
)
@settings(max_examples=12)
def test_a_box_beside_the_answer_block_must_agree_with_it(
    ptype: str, boxed_block: bool, after: bool, join: str, box: str
) -> None:
    gold, right, wrong = RIGHT_AND_WRONG[ptype]
    block = f"<answer>{f'{box}{{{right}}}' if boxed_block else right}</answer>"
    options = OPTIONS if ptype == "multiple_choice" else None
    fn = reward_function_for(ptype)
    beside = f"{box}{{{wrong}}}"
    response = f"{block}{join}{beside}" if after else f"{beside}{join}{block}"
    assert fn(response, gold, options).accuracy == 0.0, (response, gold)
    agreeing = f"{block}{join}{box}{{{right}}}"
    assert fn(agreeing, gold, options).accuracy == 1.0, agreeing
    # a box inside the reasoning never counts
    thought = f"<think>{beside}</think>{block}"
    assert fn(thought, gold, options).accuracy == 1.0, thought


KEY_NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_2", min_size=1, max_size=12)


@given(key=KEY_NAMES, nested=st.booleans(), start=st.integers(0, 50), length=st.integers(1, 50))
def test_a_second_interval_under_any_key_is_a_hedge(
    key: str, nested: bool, start: int, length: int
) -> None:
    assume(key != "time" and (start, start + length) != (10, 20))
    other: object = [start, start + length]
    if nested:
        other = {"start": start, "end": start + length}
    answer = json.dumps({"time": [10, 20], key: other})
    assert TEMPORAL(f"<answer>{answer}</answer>", "[10, 20]").accuracy == 0.0, answer
    same = json.dumps({"time": [10, 20], key: [10, 20]})
    assert TEMPORAL(f"<answer>{same}</answer>", "[10, 20]").accuracy == 1.0, same
    labelled = json.dumps({"time": [10, 20], key: "a label"})
    assert TEMPORAL(f"<answer>{labelled}</answer>", "[10, 20]").accuracy == 1.0, labelled


@given(
    key=KEY_NAMES,
    box=st.lists(st.integers(0, 100), min_size=2, max_size=2),
    size=st.integers(1, 50),
    wrap=st.booleans(),
)
def test_a_second_box_under_any_key_is_a_hedge(
    key: str, box: list[int], size: int, wrap: bool
) -> None:
    assume(key not in ("bbox", "boxes", "box", "bbox_2d"))
    other = [box[0], box[1], box[0] + size, box[1] + size]
    assume(other != [10, 10, 50, 50])
    answer = json.dumps({"bbox": [10, 10, 50, 50], key: [other] if wrap else other})
    assert SPATIAL(f"<answer>{answer}</answer>", "[10, 10, 50, 50]").accuracy == 0.0, answer
    point = json.dumps({"bbox": [10, 10, 50, 50], key: box})  # a point beside the box
    assert SPATIAL(f"<answer>{point}</answer>", "[10, 10, 50, 50]").accuracy == 1.0, point


@given(first=st.sampled_from(["time", "bbox"]), swap=st.booleans())
def test_one_key_given_twice_with_two_values_is_a_hedge(first: str, swap: bool) -> None:
    right, wrong = ("[10, 20]", "[30, 40]") if first == "time" else ("[1, 1, 5, 5]", "[6, 6, 9, 9]")
    a, b = (wrong, right) if swap else (right, wrong)
    response = f'<answer>{{"{first}": {a}, "{first}": {b}}}</answer>'
    fn, gold = (TEMPORAL, "[10, 20]") if first == "time" else (SPATIAL, "[1, 1, 5, 5]")
    assert fn(response, gold).accuracy == 0.0, response


YES_CN = ["是", "对", "是的", "正确"]
NO_CN = ["否", "不是", "错", "不对"]
CN_JOINS = ["或", "或者", "还是", "/", " 或 ", "、"]


@given(
    yes=st.sampled_from(YES_CN),
    no=st.sampled_from(NO_CN),
    join=st.sampled_from(CN_JOINS),
    yes_first=st.booleans(),
)
def test_chinese_yes_or_no_is_a_hedge(yes: str, no: str, join: str, yes_first: bool) -> None:
    first, second = (yes, no) if yes_first else (no, yes)
    response = f"<answer>{first}{join}{second}</answer>"
    for gold in ("yes", "no"):
        assert BOOLEAN(response, gold).accuracy == 0.0, (response, gold)


@given(
    yes_first=st.booleans(),
    cond=st.sampled_from(["if", "when", "unless"]),
    rest=st.sampled_from(["otherwise", "if not", "when it is closed", "else"]),
)
def test_a_verdict_for_each_case_is_a_hedge(yes_first: bool, cond: str, rest: str) -> None:
    first, second = ("yes", "no") if yes_first else ("no", "yes")
    response = f"<answer>{first} {cond} it is open, {second} {rest}</answer>"
    for gold in ("yes", "no"):
        assert BOOLEAN(response, gold).accuracy == 0.0, (response, gold)


@given(
    a=st.integers(0, 50),
    b=st.integers(0, 50),
    form=st.sampled_from(
        [
            "{a} \\text{ (or {b})}",
            "{a} \\text{ (maybe {b})}",
            "{a} \\text{ (possibly {b})}",
            "{a} \\quad (\\text{or } {b})",
            "{a} (or {b})",
            "{a} \\lor {b}",
            "{a} \\vee {b}",
            "{a} \\text{ 或 } {b}",
            "\\begin{cases} {a} \\\\ {b} \\end{cases}",
            "\\begin{array}{c} {a} \\\\ {b} \\end{array}",
            "{a} \\\\ {b}",
        ]
    ),
)
@settings(max_examples=40)
def test_two_values_in_one_math_box_score_zero(a: int, b: int, form: str) -> None:
    assume(a != b)
    response = f"\\boxed{{{form.replace('{a}', str(a)).replace('{b}', str(b))}}}"
    for gold in (a, b):
        assert MATH(response, str(gold)).accuracy == 0.0, (response, gold)
    assert MATH(f"\\boxed{{{a}}}", str(a)).accuracy == 1.0
