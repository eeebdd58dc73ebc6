"""Issue 19 §2: properties over generated answers for each family the red team broke.

The graded cases are in ``golden/families_issue19.jsonl``. Here every fix that accepts more right
answers comes with a property showing that the hedges next to it still score 0: two disagreeing
``\\boxed{}`` answers, both verdicts, two letters, two boxes, two intervals, two numbers, a
comparison cycle. And every fix that refuses a wrong answer comes with a property over its
family (exponents, sign words, negated verdicts, answers only inside ``<think>``).
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from videorl_kit.rewards.extract import extract_answer
from videorl_kit.rewards.numeric import MAX_EXPONENT, find_numbers, number_words_as_digits
from videorl_kit.rewards.router import reward_function_for
from videorl_kit.rewards.units import restates

NUMERIC = reward_function_for("numerical")
MRA = reward_function_for("regression")
BOOLEAN = reward_function_for("boolean")
CHOICE = reward_function_for("multiple_choice")
CRITIC = reward_function_for("critic")
TEMPORAL = reward_function_for("temporal_grounding")
SPATIAL = reward_function_for("spatial_grounding")
OPEN = reward_function_for("open_ended")
MATH = reward_function_for("math")
OPTIONS = ["A. Red", "B. Blue", "C. Green", "D. Yellow", "E. Black"]

#: Per type: a gold, a right answer and a wrong answer (each as a box's content).
RIGHT_AND_WRONG = {
    "multiple_choice": ("B", ["B", "(B)", "B. Blue"], ["A", "C", "D. Yellow"]),
    "numerical": ("12", ["12", "twelve", "12.0"], ["13", "11", "1.5"]),
    "regression": ("10", ["10", "10.0"], ["14", "3", "100"]),
    "boolean": ("yes", ["yes", "Yes", "true"], ["no", "No", "false"]),
    "critic": ("Response 1", ["Response 1", "1"], ["Response 2", "Tie"]),
    "open_ended": ("kitchen", ["kitchen", "the kitchen"], ["bedroom", "garden"]),
    "ocr": ("EXIT", ["EXIT"], ["ENTER", "EXIT 12"]),
    "temporal_grounding": ('{"time": [10, 20]}', ["[10, 20]"], ["[1, 5]", "[30, 40]"]),
    "spatial_grounding": ('{"boxes": [0, 0, 10, 10]}', ["[0, 0, 10, 10]"], ["[5, 5, 9, 9]"]),
}
JOINS = [" ", "\n", " or ", ", then ", ". Hmm, actually ", " and also "]


@pytest.mark.parametrize("ptype", list(RIGHT_AND_WRONG), ids=str)
@given(data=st.data(), join=st.sampled_from(JOINS), right_first=st.booleans(), tag=st.booleans())
def test_disagreeing_boxes_are_a_hedge_in_every_type(
    ptype: str, data: st.DataObject, join: str, right_first: bool, tag: bool
) -> None:
    gold, rights, wrongs = RIGHT_AND_WRONG[ptype]
    right, wrong = data.draw(st.sampled_from(rights)), data.draw(st.sampled_from(wrongs))
    first, second = (right, wrong) if right_first else (wrong, right)
    body = f"\\boxed{{{first}}}{join}\\boxed{{{second}}}"
    response = f"<answer>{body}</answer>" if tag else body
    options = OPTIONS if ptype == "multiple_choice" else None
    result = reward_function_for(ptype)(response, gold, options)
    assert result.accuracy == 0.0, (response, result.details)
    # one box, the right one, still scores: the rule refuses hedges, not boxes
    single = reward_function_for(ptype)(f"\\boxed{{{right}}}", gold, options)
    assert single.accuracy > 0.0, (right, single.details)


YES_WORDS = ["yes", "Yes", "YES", "true", "True", "correct", "yeah", "yep"]
NO_WORDS = ["no", "No", "NO", "false", "False", "incorrect", "nope", "nah"]
VERDICT_JOINS = [" ", "\n", ". ", "! ", ", ", "\n\n", " - ", "; "]


@given(
    yes=st.sampled_from(YES_WORDS),
    no=st.sampled_from(NO_WORDS),
    join=st.sampled_from(VERDICT_JOINS),
    yes_first=st.booleans(),
    end=st.sampled_from(["", ".", "!"]),
)
def test_both_verdicts_score_zero_for_either_gold(
    yes: str, no: str, join: str, yes_first: bool, end: str
) -> None:
    first, second = (yes, no) if yes_first else (no, yes)
    response = f"<answer>{first}{join}{second}{end}</answer>"
    for gold in ("yes", "no"):
        assert BOOLEAN(response, gold).accuracy == 0.0, (response, gold)


@given(
    first=st.sampled_from(YES_WORDS + NO_WORDS),
    second=st.sampled_from(YES_WORDS + NO_WORDS),
    marker=st.sampled_from(["Actually,", "Wait,", "No wait,", "On second thought,", "Correction:"]),
)
def test_a_corrected_verdict_reads_as_the_correction(first: str, second: str, marker: str) -> None:
    response = f"{first}! {marker} {second}."
    corrected = "yes" if second in YES_WORDS else "no"
    other = "no" if corrected == "yes" else "yes"
    assert BOOLEAN(response, corrected).accuracy == 1.0, response
    assert BOOLEAN(response, other).accuracy == 0.0, response


@given(
    word=st.sampled_from(YES_WORDS),
    frame=st.sampled_from(
        ["I would not say {}", "I can't say {}", "I wouldn't answer {}", "I cannot say {}",
         "I would never say {}", "I don't think the answer is {}"]
    ),
)  # fmt: skip
def test_a_negated_yes_never_scores_as_yes(word: str, frame: str) -> None:
    response = frame.format(word)
    assert BOOLEAN(response, "yes").accuracy == 0.0, response


@given(
    mantissa=st.integers(1, 999),
    exponent=st.integers(MAX_EXPONENT + 1, 10**9),
    form=st.sampled_from(
        [
            "{m}e{e}",
            "{m}E+{e}",
            "{m} × 10^{e}",
            "{m}*10^{{{e}}}",
            "{m}e{e}.0",
            "{m}*10**{e}",  # Python's power: was read as {m} in every numeric type
            "{m} * 10 ** {e}",
            "{m}·10^{{{e}}}",
        ]
    ),
)
def test_an_exponent_beyond_range_is_never_dropped(mantissa: int, exponent: int, form: str) -> None:
    response = form.format(m=mantissa, e=exponent)
    for fn in (NUMERIC, MRA, MATH):
        assert fn(response, str(mantissa)).accuracy == 0.0, response


@given(mantissa=st.integers(1, 999), exponent=st.integers(-MAX_EXPONENT, MAX_EXPONENT))
def test_an_exponent_in_range_is_read_exactly(mantissa: int, exponent: int) -> None:
    numbers = find_numbers(f"{mantissa}e{exponent}")
    assert [n.value for n in numbers] == [mantissa * Fraction(10) ** exponent]


@given(value=st.integers(1, 10**12), style=st.sampled_from([".", "'", "’"]))
def test_other_locales_thousands_read_as_the_number(value: int, style: str) -> None:
    written = f"{value:,}".replace(",", style)
    assume(style != "." or written.count(".") != 1)  # one dot group may be a decimal
    assert NUMERIC(f"<answer>{written}</answer>", str(value)).accuracy == 1.0, written
    assert NUMERIC(f"<answer>{written}</answer>", str(2 * value + 1)).accuracy == 0.0, written
    other = f"{value + 7:,}".replace(",", style)
    hedge = f"<answer>{written} or {other}</answer>"
    assert NUMERIC(hedge, str(value)).accuracy == 0.0, hedge


@given(value=st.integers(1, 10**6), word=st.sampled_from(["minus", "negative", "Minus"]))
def test_a_sign_word_is_never_dropped(value: int, word: str) -> None:
    response = f"<answer>{word} {value}</answer>"
    assert NUMERIC(response, str(-value)).accuracy == 1.0, response
    assert NUMERIC(response, str(value)).accuracy == 0.0, response
    assert MRA(response, str(value)).accuracy == 0.0, response
    assert MATH(response, str(-value)).accuracy == 1.0, response
    assert MATH(response, str(value)).accuracy == 0.0, response


@given(mantissa=st.integers(1, 99), exponent=st.integers(1, 6))
def test_python_and_dot_powers_of_ten_are_powers(mantissa: int, exponent: int) -> None:
    value = str(mantissa * 10**exponent)
    for form in ("{m}*10**{e}", "{m} * 10 ** {e}", "{m}·10^{e}"):
        response = form.format(m=mantissa, e=exponent)
        for fn in (NUMERIC, MATH):
            assert fn(response, value).accuracy == 1.0, (fn, response)
            assert fn(response, str(mantissa)).accuracy == 0.0, (fn, response)


@given(value=st.integers(0, 10**6), wrap=st.sampled_from(["**", "__"]))
def test_bold_around_a_math_answer_is_the_answer(value: int, wrap: str) -> None:
    assert MATH(f"{wrap}{value}{wrap}", str(value)).accuracy == 1.0
    assert MATH(f"{wrap}{value}{wrap} or {wrap}{value + 1}{wrap}", str(value)).accuracy == 0.0


@given(
    a=st.integers(0, 50),
    b=st.integers(0, 50),
    c=st.integers(0, 100),
    d=st.integers(0, 100),
    lead=st.sampled_from(["So there are", "Therefore there are", "In total, there are", "Thus"]),
)
def test_a_conclusion_decides_and_a_hedged_one_does_not(
    a: int, b: int, c: int, d: int, lead: str
) -> None:
    assume(c != d)
    reasoning = f"I see {a} cats and {b} dogs."
    assert NUMERIC(f"{reasoning} {lead} {c} animals.", str(c)).accuracy == 1.0
    hedge = f"{reasoning} {lead} {c} or {d} animals."
    assert NUMERIC(hedge, str(c)).accuracy == 0.0, hedge
    assert NUMERIC(hedge, str(d)).accuracy == 0.0, hedge
    later = f"{reasoning} {lead} {c} animals. Maybe {d}."
    assert NUMERIC(later, str(c)).accuracy == 0.0, later


@given(
    a=st.integers(0, 50),
    b=st.integers(0, 50),
    c=st.integers(0, 100),
    d=st.integers(0, 100),
    word=st.sampled_from(["so", "therefore", "thus", "hence", "making", "which makes"]),
    hedge=st.sampled_from(["maybe {c}", "not {c}", "{c} or {d}", "{c}, or {d}", "{c}, and {d}"]),
)
def test_a_concluding_clause_decides_unless_it_hedges(
    a: int, b: int, c: int, d: int, word: str, hedge: str
) -> None:
    assume(c not in (a, b, d))
    reasoning = f"First {a}, then {b} more join"
    for fn in (NUMERIC, MRA):
        right = f"{reasoning}, {word} {c}."
        assert fn(right, str(c)).accuracy == 1.0, right
    hedged = f"{reasoning}, {word} {hedge.format(c=c, d=d)}."
    assert NUMERIC(hedged, str(c)).accuracy == 0.0, hedged
    if "not" not in hedge:  # "..., so not 5." rejects 5 and states nothing else
        assert NUMERIC(hedged, str(d)).accuracy == 0.0, hedged


@given(
    metres=st.integers(1, 500),
    other=st.integers(1, 50_000),
    unit_pair=st.sampled_from([("m", "cm", 100), ("km", "m", 1000), ("kg", "g", 1000)]),
)
def test_a_restatement_counts_only_when_it_converts(
    metres: int, other: int, unit_pair: tuple[str, str, int]
) -> None:
    big, small, factor = unit_pair
    assume(other != metres)  # one value written twice is one value, whatever its units
    response = f"It is {metres} {big} ({other} {small})."
    converts = restates(Fraction(metres), big, Fraction(other), small, str(other))
    assert converts == (abs(metres * factor - other) <= max(Fraction(1, 2), metres * factor / 100))
    expected = 1.0 if converts else 0.0
    assert NUMERIC(response, str(metres)).accuracy == expected, response
    if not converts:
        assert NUMERIC(response, str(other)).accuracy == 0.0, response


BOX = st.tuples(
    st.integers(0, 500), st.integers(0, 500), st.integers(1, 500), st.integers(1, 500)
).map(lambda t: (t[0], t[1], t[0] + t[2], t[1] + t[3]))


@given(
    box=BOX, other=BOX, label=st.sampled_from(["", "<|object_ref_start|>the dog<|object_ref_end|>"])
)
def test_qwen_boxes_read_as_one_box_and_two_are_a_hedge(
    box: tuple[int, ...], other: tuple[int, ...], label: str
) -> None:
    x1, y1, x2, y2 = box
    gold = f'{{"boxes": [{x1}, {y1}, {x2}, {y2}]}}'
    qwen = f"{label}<|box_start|>({x1},{y1}),({x2},{y2})<|box_end|>"
    assert SPATIAL(qwen, gold).accuracy == 1.0, qwen
    named = f"x1={x1}, y1={y1}, x2={x2}, y2={y2}"
    assert SPATIAL(named, gold).accuracy == 1.0, named
    assert SPATIAL(qwen + qwen, gold).accuracy == 1.0, "the same box twice agrees"
    assume(other != box)
    a1, b1, a2, b2 = other
    two = f"{qwen} or <|box_start|>({a1},{b1}),({a2},{b2})<|box_end|>"
    assert SPATIAL(two, gold).accuracy == 0.0, two
    mixed = f"[{x1}, {y1}, {x2}, {y2}] or maybe ({a1}, {b1}, {a2}, {b2})"
    assert SPATIAL(mixed, gold).accuracy == 0.0, mixed


INTERVAL = st.tuples(st.integers(0, 3000), st.integers(1, 3000)).map(
    lambda t: (t[0] / 10, (t[0] + t[1]) / 10)
)


@given(interval=INTERVAL, other=INTERVAL, form=st.integers(0, 3))
def test_written_intervals_read_and_two_are_a_hedge(
    interval: tuple[float, float], other: tuple[float, float], form: int
) -> None:
    s, e = interval
    gold = f'{{"time": [{s}, {e}]}}'
    written = [
        f"Start time: {s} seconds\nEnd time: {e} seconds",
        f"{s}, {e}",
        f"The action starts at {s} s and ends at {e} s.",
        f"00:{int(s // 60):02d}:{s % 60:06.3f} --> 00:{int(e // 60):02d}:{e % 60:06.3f}".replace(
            ".", ","
        ),
    ][form]
    assert TEMPORAL(written, gold).accuracy == pytest.approx(1.0), written
    assume(other != interval)
    s2, e2 = other
    hedge = f"Start time: {s} seconds\nEnd time: {e} seconds\nStart time: {s2} seconds"
    if s2 != s:
        assert TEMPORAL(hedge, gold).accuracy == 0.0, hedge
    both = f"{written}, or from {s2} to {e2} seconds"
    assert TEMPORAL(both, gold).accuracy == 0.0, both


@given(
    letters=st.lists(st.sampled_from("ABCDE"), min_size=2, max_size=4),
    sep=st.sampled_from([" ", "\n", ", ", ". ", "", " / "]),
    wrap=st.sampled_from(["{}", "**{}**", "({})", "[{}]", "Option {}", "【{}】", "__{}__"]),
)
def test_a_list_of_letters_is_a_hedge_unless_it_repeats_one(
    letters: list[str], sep: str, wrap: str
) -> None:
    assume(sep or wrap in ("({})", "[{}]", "【{}】"))  # "AB", "**A****B**" are words
    response = sep.join(wrap.format(letter) for letter in letters)
    result = CHOICE(f"<answer>{response}</answer>", letters[0], OPTIONS)
    assert result.accuracy == (1.0 if len(set(letters)) == 1 else 0.0), response


@given(
    first=st.sampled_from(["1", "2"]),
    sign=st.sampled_from([">", ">>", "≻", "over"]),
    bold=st.booleans(),
)
def test_a_comparison_chooses_its_left_side_and_a_cycle_chooses_none(
    first: str, sign: str, bold: bool
) -> None:
    second = "2" if first == "1" else "1"
    mark = "**" if bold else ""
    left, right = f"{mark}Response {first}{mark}", f"{mark}Response {second}{mark}"
    response = f"{left} {sign} {right}"
    assert CRITIC(response, f"Response {first}").accuracy == 1.0, response
    assert CRITIC(response, f"Response {second}").accuracy == 0.0, response
    cycle = f"{response} {sign} {left}"
    assert CRITIC(cycle, f"Response {first}").accuracy == 0.0, cycle
    flipped = f"{response}, or maybe {right} {sign} {left}"
    assert CRITIC(flipped, f"Response {first}").accuracy == 0.0, flipped


NUMBER_WORDS = {
    1: "one",
    2: "two",
    3: "three",
    4: "four",
    5: "five",
    12: "twelve",
    21: "twenty-one",
}


@given(
    count=st.sampled_from(list(NUMBER_WORDS)),
    other=st.sampled_from(list(NUMBER_WORDS)),
    noun=st.sampled_from(["people", "cars", "dogs"]),
    frame=st.sampled_from(["{}", "There are {}.", "{}.", "The answer is {}."]),
)
def test_a_count_alone_answers_a_count_with_its_noun(
    count: int, other: int, noun: str, frame: str
) -> None:
    gold = f"{count} {noun}"
    assert OPEN(frame.format(NUMBER_WORDS[count]), gold).accuracy == 1.0
    assert OPEN(frame.format(count), gold).accuracy == 1.0
    assume(other != count)
    assert OPEN(frame.format(NUMBER_WORDS[other]), gold).accuracy == 0.0
    assert OPEN(f"{count} or {other} {noun}", gold).accuracy == 0.0
    assert OPEN(f"{count} cats", f"{count} {noun}").accuracy == 0.0


def test_number_words_as_digits_keeps_what_is_not_one_whole_number() -> None:
    assert number_words_as_digits("one two") == "one two"
    assert number_words_as_digits("half an hour") == "half an hour"
    assert number_words_as_digits("minus three") == "minus 3"


@given(
    inside=st.sampled_from(["The answer is 5.", "\\boxed{5}", "Final answer: 5", "5"]),
    after=st.sampled_from(["", "\n", "  ", "<|im_end|>", "<|endoftext|>\n"]),
    think=st.sampled_from([("<think>", "</think>"), ("<thought>", "</thought>"), ("", "</think>")]),
)
def test_an_answer_only_inside_think_is_unanswered(
    inside: str, after: str, think: tuple[str, str]
) -> None:
    response = f"{think[0]}Let me count. {inside}{think[1]}{after}"
    assert extract_answer(response).answer is None, response
    assert NUMERIC(response, "5").accuracy == 0.0, response
    stated = NUMERIC(f"{response} 5", "5")
    assert stated.accuracy == 1.0, response


@given(interval=INTERVAL, other=INTERVAL, sep=st.sampled_from(["_", "", "-", " "]))
def test_start_and_end_keys_in_any_spelling(
    interval: tuple[float, float], other: tuple[float, float], sep: str
) -> None:
    start, end = interval
    gold = f'{{"time": [{start}, {end}]}}'
    response = f"start{sep}time: {start}\nend{sep}time: {end}"
    assert TEMPORAL(response, gold).accuracy == 1.0, response
    assume(other[1] != end)
    hedge = f"{response}\nend{sep}time: {other[1]}"
    assert TEMPORAL(hedge, gold).accuracy == 0.0, hedge


@pytest.mark.parametrize(
    ("response", "expected"),
    [(r"\fbox{4}", 1.0), (r"\fbox{3} \boxed{4}", 0.0), (r"\boxed{4} \fbox{ 4 }", 1.0)],
)
def test_fbox_is_a_box(response: str, expected: float) -> None:
    for fn in (MATH, NUMERIC):
        assert fn(response, "4").accuracy == expected, (fn, response)


def test_a_flood_of_boxes_is_a_hedge_read_in_linear_time() -> None:
    import time

    flood = "\\boxed{" * 200_000
    start = time.perf_counter()
    assert reward_function_for("multiple_choice")(flood, "B", OPTIONS).accuracy == 0.0
    assert time.perf_counter() - start < 0.5
    same = "\\boxed{4} " * 300  # one answer repeated past MAX_BOX_OPENINGS: degenerate, 0
    assert NUMERIC(same, "4").accuracy == 0.0
    assert NUMERIC("\\boxed{4} " * 20, "4").accuracy == 1.0


DOUBT = ["maybe", "probably", "I think", "perhaps", "likely"]


@pytest.mark.parametrize("ptype", ["multiple_choice", "numerical", "boolean", "open_ended"])
@given(data=st.data(), doubt=st.sampled_from(DOUBT))
def test_a_word_of_doubt_never_raises_a_score(ptype: str, data: st.DataObject, doubt: str) -> None:
    """Policy (docs/verifiers.md): doubt on a wrong value scores 0, doubt between a right and a
    wrong value is a hedge, and doubt alone is no answer."""
    gold, rights, wrongs = RIGHT_AND_WRONG[ptype]
    right, wrong = data.draw(st.sampled_from(rights)), data.draw(st.sampled_from(wrongs))
    options = OPTIONS if ptype == "multiple_choice" else None
    score = reward_function_for(ptype)
    assert score(f"<answer>{doubt} {wrong}</answer>", gold, options).accuracy == 0.0
    for between in (f"{right}, {doubt} {wrong}", f"{doubt} {right}, {doubt} {wrong}"):
        assert score(f"<answer>{between}</answer>", gold, options).accuracy == 0.0, between
    assert score(f"<answer>{doubt}</answer>", gold, options).accuracy == 0.0


@pytest.mark.parametrize(
    ("ptype", "answer"),
    [("numerical", "probably 12"), ("numerical", "~12"), ("numerical", "12?"),
     ("boolean", "probably yes"), ("boolean", "I think yes"),
     ("multiple_choice", "I think B"), ("multiple_choice", "B, I think")],
)  # fmt: skip
def test_doubt_on_one_letter_number_or_verdict_commits_to_it(ptype: str, answer: str) -> None:
    gold = RIGHT_AND_WRONG[ptype][0]
    options = OPTIONS if ptype == "multiple_choice" else None
    assert reward_function_for(ptype)(f"<answer>{answer}</answer>", gold, options).accuracy == 1.0
