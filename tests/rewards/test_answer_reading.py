"""How answers are read since issue 10: compatibility forms, rejected options, powers, grouped
thousands, quantity words, Python literals in grounding answers, inequalities as intervals;
round 3: short open-ended golds inside a sentence (and the attacks on that rule: two candidates
of one kind, lists, repeated golds, runs of phrases), set-builder notation as intervals.

The golden file ``families_issue10.jsonl`` holds the graded cases; here are the helpers' own
contracts, properties over generated answers, and the attacks on the Python-literal reader
(an RL policy may write code where a literal is expected, hoping it runs).
"""

from __future__ import annotations

import itertools
import time
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from videorl_kit.rewards.contrasts import contrast
from videorl_kit.rewards.grounding import python_literal
from videorl_kit.rewards.math_intervals import inequality_as_interval
from videorl_kit.rewards.numeric import _answer_number, find_numbers, read_single_number
from videorl_kit.rewards.router import reward_function_for
from videorl_kit.rewards.text import (
    MAX_FOLD_CHARS,
    asserted_answer,
    clauses,
    fold_compat,
    stated_answer,
)

CHOICE = reward_function_for("multiple_choice")
NUMERIC = reward_function_for("numerical")
TRACKING = reward_function_for("tracking")
MATH = reward_function_for("math")
FULL_WIDTH = str.maketrans(
    "0123456789.,-ABCDEFGHIJ", "０１２３４５６７８９．，－ＡＢＣＤＥＦＧＨＩＪ"
)
LETTERS = st.sampled_from("ABCDEFGH")


# ------------------------------------------------------------------ compatibility forms


def test_fold_compat_folds_widths_and_keeps_superscripts_as_powers() -> None:
    assert fold_compat("（Ｂ）．") == "(B)."
    assert fold_compat("１\u00a0０００") == "1 000"
    assert fold_compat("10⁻³ m²") == "10^-3 m^2"
    assert fold_compat("plain ascii") == "plain ascii"
    long = "Ｂ" * (MAX_FOLD_CHARS + 1)
    assert fold_compat(long) is long  # too long to be read as a letter or number anyway


@given(st.integers(min_value=-(10**9), max_value=10**9), st.booleans())
def test_full_width_numbers_read_as_their_ascii_forms(value: int, grouped: bool) -> None:
    text = f"{value:,}" if grouped else str(value)
    result = NUMERIC(f"<answer>{text.translate(FULL_WIDTH)}</answer>", str(value))
    assert result.accuracy == 1.0, text.translate(FULL_WIDTH)


@given(LETTERS)
def test_full_width_letters_name_their_option(letter: str) -> None:
    wide = letter.translate(FULL_WIDTH)
    assert CHOICE(f"<answer>{wide}</answer>", letter).accuracy == 1.0
    assert CHOICE(f"<answer>（{wide}）</answer>", letter).accuracy == 1.0


# ------------------------------------------------------------------ rejections


@pytest.mark.parametrize(
    ("answer", "asserted"),
    [
        ("not A; it is B", "B"),
        ("B, not A", "B"),
        ("Not B but D", "D"),
        ("6 (not 7) chairs", "6, chairs"),
        ("A is wrong; C is correct.", "C is correct"),
        ("It isn't C, it's D.", "D"),
        ("No tie: Response 2 wins.", "Response 2 wins"),
        ("It is not A or B, so C", "C"),
        ("not B", ""),
        ("A or B, not C", "A or B"),
        ("1,000, not 999", "1,000"),
        ("I think it's B, but it could be C", "I think it's B, but it could be C"),
        ("It is Paris.", "Paris."),
        ("3.5", "3.5"),
    ],
)
def test_asserted_answer(answer: str, asserted: str) -> None:
    assert asserted_answer(answer) == asserted


@given(LETTERS, LETTERS.filter(lambda x: x != "A"))
def test_rejecting_alone_names_nothing_and_hedges_stay_hedges(a: str, b: str) -> None:
    assert CHOICE(f"<answer>not {a}</answer>", a).accuracy == 0.0
    if a != b:
        for hedge in (f"{a} or {b}, not Z", f"{a}; {b}", f"{a}, but {b} is also possible"):
            assert CHOICE(f"<answer>{hedge}</answer>", a).accuracy == 0.0, hedge


@given(st.integers(0, 10**6), st.integers(0, 10**6))
def test_a_rejected_number_never_counts(value: int, rejected: int) -> None:
    for form in ("{v}, not {r}", "not {r} but {v}", "It's not {r}, it's {v}.", "{v} (not {r})"):
        response = f"<answer>{form.format(v=value, r=rejected)}</answer>"
        assert NUMERIC(response, str(value)).accuracy == 1.0, response
        if rejected != value:
            assert NUMERIC(response, str(rejected)).accuracy == 0.0, response
    assert NUMERIC(f"<answer>not {rejected}</answer>", str(rejected)).accuracy == 0.0


# ------------------------------------------------------------------ numbers


@given(st.integers(min_value=1000, max_value=10**12))
def test_space_grouped_thousands_read_as_one_number(value: int) -> None:
    for space in (" ", "\u00a0", "\u202f"):
        text = f"{value:,}".replace(",", space)
        assert read_single_number(fold_compat(text)).number.value == value  # type: ignore[union-attr]


@given(
    st.integers(1, 20), st.integers(0, 12), st.sampled_from(["{b}^{e}", "{b}^{{{e}}}", "{b}**{e}"])
)
def test_powers_read_as_their_value(base: int, exponent: int, form: str) -> None:
    text = form.format(b=base, e=exponent)
    assert [n.value for n in find_numbers(text)] == [Fraction(base) ** exponent], text


def test_superscript_powers_and_bounds_on_huge_powers() -> None:
    assert NUMERIC("<answer>10³</answer>", "1000").accuracy == 1.0
    assert NUMERIC("<answer>10³</answer>", "103").accuracy == 0.0
    assert find_numbers("9^9999") == []  # beyond MAX_POWER_BITS: not a number anyone means
    assert find_numbers("123456^999") == []
    assert find_numbers("0^-1") == []


NEAR_WORDS = st.sampled_from(
    ["about", "not", "no", "never", "but", "so", "dozen", "half", "twelve", "percent", "items",
     "m", "answer", "roughly", "x", "is", "couple", "instead", "pair", "score", "single", "nor",
     "a pair of", "a score of", "it is not", "minus", "negative", "below zero", "e5", "(200 cm)",
     "m (200 cm)"]
)  # fmt: skip


@given(
    st.one_of(st.none(), NEAR_WORDS),
    st.integers(-(10**7), 10**7),
    st.sampled_from(["{}", "{}.5", "{:,}", "{}.250"]),
    st.one_of(st.none(), NEAR_WORDS),
)
def test_numeric_fast_paths_read_what_the_plain_path_reads(
    before: str | None, value: int, form: str, after: str | None
) -> None:
    text = " ".join(w for w in (before, form.format(value), after) if w)
    fast_value, fast_percent, _, fast_alts = _answer_number(text)
    asserted = stated_answer(text)
    number = read_single_number(asserted).number if asserted else None
    if number is None:
        assert fast_value is None, text
    else:
        assert (fast_value, fast_percent, fast_alts) == (
            number.value,
            number.percent,
            number.alts,
        ), text


@pytest.mark.parametrize(
    ("words", "value"),
    [
        ("a dozen", 12),
        ("two dozen", 24),
        ("half a dozen", 6),
        ("a dozen and a half", 18),
        ("a couple", 2),
        ("a couple of dozen", 24),
        ("a hundred", 100),
        ("a thousand", 1000),
        ("two and a half", Fraction(5, 2)),
        ("one half", Fraction(1, 2)),
        ("half", Fraction(1, 2)),
        ("a pair of shoes", 2),
        ("a trio of birds", 3),
        ("a quartet", 4),
        ("a single car", 1),
        ("twice", 2),
        ("a score of years", 20),
        ("four score and seven", 87),
        ("a baker's dozen", 13),
    ],
)
def test_quantity_words(words: str, value: Fraction | int) -> None:
    assert [n.value for n in find_numbers(words)] == [value]


@pytest.mark.parametrize(
    "words",
    ["a few", "dozens", "the couple", "a lot", "several", "the score", "pairs", "once the door"],
)
def test_vague_quantities_are_no_numbers(words: str) -> None:
    assert find_numbers(words) == []


@given(st.integers(2, 10**6), st.integers(1, 9))
def test_tiny_differences_match_only_when_not_both_whole(gold: int, digit: int) -> None:
    near = f"{gold - 1}.99999{digit}"  # within 1e-5 relative of the gold
    assert NUMERIC(f"<answer>{near}</answer>", str(gold)).accuracy == 1.0
    assert NUMERIC(f"<answer>{gold + 1}</answer>", str(gold)).accuracy == 0.0  # counts stay exact


# ------------------------------------------------------------------ Python literals (attacks)


def test_python_literals_are_read_like_json() -> None:
    assert python_literal("{'boxes': {1: (0, 0, 1, 1)}, 'x': None,}") == {
        "boxes": {1: [0, 0, 1, 1]},
        "x": None,
    }


CODE_ATTACKS = [
    "{'boxes': __import__('os').system('touch {canary}')}",
    "{'boxes': open('{canary}', 'w').write('x')}",
    "{'boxes': (lambda: __import__('pathlib').Path('{canary}').touch())()}",
    "{'boxes': [exec(\"open('{canary}', 'w')\")]}",
    "{'boxes': {i: [0, 0, 1, 1] for i in range(10**9)}}",
    "{'boxes': {1: [0, 0, 1, 1] * 10**9}}",
    "{'boxes': {1: [0, 0, 1, 1]}, 'x': f'{{open(\"{canary}\", \"w\")}}'}",
    "{'boxes': {1: [0, 0, 1, 1]}, 'x': (y := 1)}",
    "{'boxes': {1: {0, 0, 1, 1}}}",
    "{'boxes': {1: [0, 0, 1, 1j]}}",
    "{'boxes': {1: [0, 0, 1, b'1']}}",
    "{'boxes': {1: [0, 0, 1, " + "9" * 5000 + "]}}",
    "{'boxes': " + "[" * 5000 + "]" * 5000 + "}",
]
#: Literals that parse but are no boxes: they score 0 like any wrong answer.
BAD_VALUES = [
    "{'boxes': {1: [0, 0, 1, 1e999]}}",
    "{'boxes': {1: [0, 0, 1, None]}}",
    "{'boxes': {1: [True, 0, 1, 1]}}",
    "{'boxes': " + "(" * 100 + ")" * 100 + "}",
    "{'boxes': {'-1': [0, 0, 1, 1]}}",
]


def _score_attack(attack: str, canary: Path) -> None:
    gold = {"boxes": {"1": [0, 0, 1, 1]}}
    started = time.perf_counter()
    result = TRACKING(f"<answer>{attack.replace('{canary}', str(canary))}</answer>", gold)
    assert time.perf_counter() - started < 1.0
    assert (result.status, result.accuracy) == ("ok", 0.0), result.details
    assert not canary.exists()


@pytest.mark.parametrize("attack", CODE_ATTACKS)
def test_code_in_a_grounding_answer_never_runs_and_scores_zero(attack: str, tmp_path: Path) -> None:
    _score_attack(attack, tmp_path / "pwned")
    with pytest.raises(ValueError, match="not a Python literal"):
        python_literal(attack.replace("{canary}", str(tmp_path / "pwned")))
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("value", BAD_VALUES)
def test_literals_that_are_no_boxes_score_zero(value: str, tmp_path: Path) -> None:
    _score_attack(value, tmp_path / "pwned")


def test_literal_reading_is_bounded_on_a_flood_of_dicts() -> None:
    flood = "{'boxes': {1: [0, 0, 1, 1]}} " * 40_000  # a hedge, if it were all read
    started = time.perf_counter()
    result = TRACKING(flood, {"boxes": {"1": [0, 0, 1, 1]}})
    assert time.perf_counter() - started < 1.0 and result.accuracy == 0.0


# ------------------------------------------------------------------ inequalities and intervals


@given(
    st.integers(-50, 50),
    st.integers(1, 50),
    st.sampled_from(["<", "\\le", "\\leq", "≤"]),
    st.sampled_from(["<", "\\le", "\\leq", "≤"]),
)
def test_double_inequalities_equal_their_interval(low: int, width: int, op1: str, op2: str) -> None:
    high = low + width
    interval = ("[" if op1 != "<" else "(") + f"{low}, {high}" + ("]" if op2 != "<" else ")")
    answer = f"{low} {op1} x {op2} {high}"
    assert inequality_as_interval(answer) == interval
    assert MATH(f"<answer>{answer}</answer>", interval).accuracy == 1.0
    wrong = interval.replace("(", "[") if interval.startswith("(") else interval.replace("[", "(")
    assert MATH(f"<answer>{answer}</answer>", wrong).accuracy == 0.0


@pytest.mark.parametrize(
    "text", ["x \\neq 2", "a < b", "|x| < 3", "1 < x > 3", "x = 2", "x < y < 3", "x^2 > 4"]
)
def test_other_relations_are_left_alone(text: str) -> None:
    assert inequality_as_interval(text) is None


# ------------------------------------------------------------------ round 2: one fold for every verifier


class _Echo:
    """A verifier that reports the text it was given (to see what the router hands over)."""

    def __init__(self, params: object) -> None:
        self.params = params

    def score(self, answer_text: str, gold: str, options: list[str] | None = None):
        from videorl_kit.rewards.base import VerifyOutcome

        return VerifyOutcome.ok(1.0, seen=[answer_text, gold, options])


def test_the_router_folds_answer_gold_and_options_unless_the_verifier_reads_raw_text() -> None:
    from videorl_kit.core.verifiers import register_verifier

    register_verifier(name="test_echo_folded", version=1, problem_types=["open_ended"])(_Echo)

    class _RawEcho(_Echo):
        pass

    register_verifier(name="test_echo_raw", version=1, problem_types=["open_ended"], raw_text=True)(
        _RawEcho
    )
    args = ("<answer>Ｘ３½ 10²</answer>", "ＧＯＬＤ", ["Ａ． ｏｎｅ", "B. two"])
    folded = reward_function_for("open_ended", "test_echo_folded")(*args)
    assert folded.details["seen"] == ["X3 1/2 10^2", "GOLD", ["A. one", "B. two"]]
    raw = reward_function_for("open_ended", "test_echo_raw")(*args)
    assert raw.details["seen"] == ["Ｘ３½ 10²", "ＧＯＬＤ", ["Ａ． ｏｎｅ", "B. two"]]


VULGAR = {"¼": Fraction(1, 4), "½": Fraction(1, 2), "¾": Fraction(3, 4), "⅓": Fraction(1, 3)}


@given(st.integers(0, 10**6), st.sampled_from(sorted(VULGAR)), st.booleans())
def test_vulgar_fractions_and_mixed_numbers_read_as_their_value(
    whole: int, fraction: str, spaced: bool
) -> None:
    value = whole + VULGAR[fraction]
    text = f"{whole}{' ' if spaced else ''}{fraction}".translate(FULL_WIDTH if spaced else {})
    number = read_single_number(fold_compat(text)).number
    assert number is not None and number.value == value, text
    assert NUMERIC(f"<answer>{text}</answer>", str(float(value))).accuracy == 1.0, text


def test_mixed_numbers_need_a_proper_fraction() -> None:
    assert [n.value for n in find_numbers("3 1/2 cups")] == [Fraction(7, 2)]
    assert [n.value for n in find_numbers("3 5/4")] == [3, Fraction(5, 4)]
    assert find_numbers("2 1/0") == [find_numbers("2")[0]]


# ------------------------------------------------------------------ round 2: rejections and corrections


@given(
    LETTERS,
    LETTERS,
    st.sampled_from(
        [
            "not {r}; it is {a}",
            "{a}, not {r}",
            "Not {r} but {a}",
            "It isn't {r}, it's {a}.",
            "{r} is wrong; {a} is correct.",
            "not ({r}); it is ({a})",
            "Definitely not [{r}]. It's [{a}].",
            "{r} is wrong. Final: {a}",
            "The answer is not {r}. Nor is it Z. It is {a}.",
            "{r}? No, {a}.",
            "It can't be {r}; it must be {a}.",
            "I first thought {r}, but it is actually {a}.",
            "{r}. Actually, {a}.",
        ]
    ),
)
def test_a_rejected_or_corrected_option_never_counts(a: str, r: str, form: str) -> None:
    response = f"<answer>{form.format(a=a, r=r)}</answer>"
    assert CHOICE(response, a).accuracy == 1.0, response
    if r != a:
        assert CHOICE(response, r).accuracy == 0.0, response


def test_clauses_keep_short_bracketed_items() -> None:
    assert clauses("not (B); it is [C]") == ["not (B)", " it is [C]"]
    assert clauses("C (not D) here") == ["C ", "not D", " here"]


SWIM = ["A. The girl jumps into the pool", "B. The boy swims a lap", "C. The boy dives"]


@pytest.mark.parametrize(
    ("answer", "letter"),
    [
        ("she jumps into the pool", "A"),
        ("he swims a lap", "B"),
        ("the boy swims a lap in the big pool", "B"),
        ("the boy", None),  # fits B and C
        ("he does not dive", None),  # negated
        ("the girl jumps and the boy dives", None),  # states two options
    ],
)
def test_option_text_named_by_paraphrase_or_sentence(answer: str, letter: str | None) -> None:
    for gold in "ABC":
        expected = 1.0 if gold == letter else 0.0
        assert CHOICE(f"<answer>{answer}</answer>", gold, SWIM).accuracy == expected, answer


# ------------------------------------------------------------------ round 2: critic, boolean


CRITIC = reward_function_for("critic")


@given(
    st.sampled_from(["1", "2"]),
    st.sampled_from(["is better", "wins", "is preferable", "outperforms the other"]),
    st.sampled_from(["more concise", "more detailed", "clearer", "less verbose"]),
    st.sampled_from(["{v}, though {c}", "{c}, but {v}", "{v}; {c}"]),
)
def test_an_overall_verdict_outweighs_a_conceded_quality(
    side: str, verdict: str, quality: str, form: str
) -> None:
    other = "2" if side == "1" else "1"
    text = form.format(v=f"Response {side} {verdict}", c=f"Response {other} is {quality}")
    assert CRITIC(f"<answer>{text}</answer>", f"Response {side}").accuracy == 1.0, text
    assert CRITIC(f"<answer>{text}</answer>", f"Response {other}").accuracy == 0.0, text


BOOLEAN = reward_function_for("boolean")


@given(
    st.sampled_from(["", "Certainly ", "Absolutely ", "Of course ", "Definitely ", "Surely "]),
    st.sampled_from(["not", "not at all", "not really", "not a chance"]),
    st.sampled_from([",", ";", ".", " -", ":", "!"]),
    st.sampled_from(["the door stays closed.", "nobody is there.", "it is empty."]),
)
def test_a_not_verdict_before_its_reason_is_no(
    intensifier: str, verdict: str, mark: str, reason: str
) -> None:
    text = f"{intensifier}{verdict}{mark} {reason}".capitalize()
    assert BOOLEAN(f"<answer>{text}</answer>", "no").accuracy == 1.0, text
    assert BOOLEAN(f"<answer>{text}</answer>", "yes").accuracy == 0.0, text


# ------------------------------------------------------------------ round 2: open-ended


ROUGE = reward_function_for("open_ended")
NOUNS = st.sampled_from(["dog", "car", "lion", "door", "cat", "umbrella"])


@given(
    NOUNS,
    st.sampled_from(["", "small ", "brown ", "big black ", "fluffy ", "wooden "]),
    st.sampled_from(["It is a {x}.", "The animal is a {x}.", "I see a {x}.", "a {x}"]),
)
def test_a_short_gold_stated_as_a_whole_phrase_counts(
    noun: str, adjectives: str, form: str
) -> None:
    text = form.format(x=adjectives + noun)
    assert ROUGE(f"<answer>{text}</answer>", noun).accuracy == 1.0, text


@given(NOUNS, st.sampled_from(["police", "soccer", "kitchen", "garden", "small"]))
def test_a_modifier_before_the_gold_keeps_what_it_is(noun: str, modifier: str) -> None:
    text = f"It is a {modifier} {noun}."  # compounds are right-headed: a police car is a car
    assert ROUGE(f"<answer>{text}</answer>", noun).accuracy == 1.0, text


@given(
    st.sampled_from(["hot dog", "sea lion", "teddy bear", "guinea pig", "snow man", "cat fish"])
    | st.builds("{} {}".format, st.sampled_from(["toy", "stuffed", "fake", "robot"]), NOUNS),
    st.sampled_from(["a {x}", "It is a {x}.", "I see a {x}."]),
)
def test_a_compound_naming_another_thing_or_a_likeness_is_not_the_gold(
    compound: str, form: str
) -> None:
    text = form.format(x=compound)
    gold = compound.split()[-1]
    assert ROUGE(f"<answer>{text}</answer>", gold).accuracy == 0.0, text


@given(NOUNS, st.sampled_from(["toy", "food", "house", "owner", "door", "park"]))
def test_the_gold_before_another_noun_only_describes_it(noun: str, head: str) -> None:
    text = f"It is a {noun} {head}."  # a cat toy is a toy
    assert ROUGE(f"<answer>{text}</answer>", noun).accuracy == 0.0, text


@given(
    st.sampled_from(
        [
            ("opens", "closes"),
            ("enters", "leaves"),
            ("stands up", "sits down"),
            ("turns left", "turns right"),
            ("walks toward", "walks away from"),
            ("starts", "stops"),
        ]
    ),
    st.booleans(),
)
def test_a_near_copy_with_an_opposite_action_scores_zero(pair: tuple[str, str], flip: bool) -> None:
    said, meant = pair[::-1] if flip else pair
    gold = f"The man in the grey coat {meant} the old wooden door."
    answer = f"The man in the grey coat {said} the old wooden door."
    assert ROUGE(f"<answer>{answer}</answer>", gold).accuracy == 0.0, answer
    both = f"The man in the grey coat {meant} and then {said} the old wooden door."
    assert ROUGE(f"<answer>{both}</answer>", gold).accuracy > 0.5, both  # both sides: no swap


@given(
    st.lists(
        st.sampled_from(
            ["the", "man", "woman", "opens", "closes", "left", "right", "up", "down", "door"]
        )
    )
)
def test_contrast_is_symmetric_and_never_fires_on_the_same_words(words: list[str]) -> None:
    assert contrast(words, words) is None
    other = [{"opens": "closes", "closes": "opens"}.get(w, w) for w in words]
    assert (contrast(words, other) is None) == (contrast(other, words) is None)


# ------------------------------------------------------------------ round 3: a short gold inside a sentence


ACTIONS = ["cutting vegetables", "peeling potatoes", "washing dishes", "playing guitar", "walking"]
COUNT_WORDS = {"two": 2, "three": 3, "five": 5, "seven": 7}
PLACES = st.sampled_from(
    [
        "in the kitchen",
        "on the stage",
        "at the table",
        "with a knife",
        "near the window",
        "in the morning",
        "by the swimming pool",
        "around the big table",
    ]
)
#: Candidates of one kind: an answer must never state two of them at once, nor one of them in a
#: list of them.
KINDS = {
    "action": ACTIONS,
    "count": ["2", "3", "five", "seven"],
    "thing": ["dog", "cat", "kitchen", "garden", "red car"],
}
#: Names: a name after a comma reads as the place around the gold ("Paris, France"), so
#: "Paris, London" states Paris (docs/verifiers.md); never both.
NAMES = ["Paris", "London", "Tokyo"]
PREPOSITIONS = [
    "in", "on", "at", "with", "by", "for", "from", "to", "into", "near", "behind", "under",
    "over", "around", "beside", "next to", "in the", "with a",
]  # fmt: skip
#: Ways an attacker joins two candidates of one kind, hoping either one is read as the answer.
PAIRINGS = [
    "{a} {b}",
    "{a}, {b}",
    "{a}/{b}",
    "{a}; {b}",
    "{a} & {b}",
    "{a} - {b}",
    "It is {a}, {b}.",
    "There are {a} {b}.",
    "{a} is {b}",
    "{a} are {b} in the kitchen",
    "{a} slowly {b}",
    "{a} now {b}",
    "She is {a} while {b}.",
    *(f"{{a}} {preposition} {{b}}" for preposition in PREPOSITIONS),
]


def _states(answer: str, gold: str) -> bool:
    return ROUGE(f"<answer>{answer}</answer>", gold).accuracy == 1.0


@given(
    st.sampled_from(ACTIONS),
    st.sampled_from(["She is", "The man is", "A child was", "They are", ""]),
    PLACES,
)
def test_an_action_stated_then_placed_counts(action: str, subject: str, place: str) -> None:
    text = f"{subject} {action} {place}.".strip()
    assert _states(text, action), text


@given(
    st.sampled_from(sorted(COUNT_WORDS)),
    st.sampled_from(["chairs", "people", "birds"]),
    st.sampled_from(["There are {n} {x} {p}.", "{N} {x} are sitting {p}.", "I see {n} {x} {p}."]),
    PLACES,
)
def test_a_count_stated_then_placed_counts(word: str, noun: str, form: str, place: str) -> None:
    text = form.format(n=word, N=word.capitalize(), x=noun, p=place)
    assert _states(text, str(COUNT_WORDS[word])), text
    assert _states(text.replace(word, str(COUNT_WORDS[word]), 1), word), text


@given(
    st.sampled_from(ACTIONS),
    st.sampled_from(ACTIONS),
    st.sampled_from([" and ", " while ", " or ", ", ", " then ", " before ", "; ", "/", " "]),
    PLACES,
)
def test_an_action_with_a_second_one_scores_zero(
    action: str, other: str, joiner: str, place: str
) -> None:
    assume(action != other)
    for text in (f"She is {action} {place}{joiner}{other}.", f"{other}{joiner}{action} {place}"):
        assert not _states(text, action), text


@given(st.sampled_from(sorted(COUNT_WORDS)), st.integers(0, 99), st.booleans())
def test_a_count_with_a_second_count_scores_zero(word: str, other: int, before: bool) -> None:
    assume(other != COUNT_WORDS[word])
    if before:
        text = f"{other} tables, {word} chairs around them"
    else:
        text = f"There are {word} chairs around {other} tables."
    assert not _states(text, str(COUNT_WORDS[word])), text


def test_no_answer_states_two_candidates_of_one_kind() -> None:
    both = [
        text
        for candidates in [*KINDS.values(), NAMES]
        for a, b in itertools.permutations(candidates, 2)
        for text in (pairing.format(a=a, b=b) for pairing in PAIRINGS)
        if _states(text, a) and _states(text, b)
    ]
    assert not both, both[:20]


@given(
    st.sampled_from(sorted(KINDS)).flatmap(
        lambda kind: st.tuples(
            st.sampled_from(KINDS[kind]), st.permutations(KINDS[kind]), st.integers(1, 5)
        )
    ),
    st.sampled_from([", ", " and ", " or ", "; ", " / ", " & ", ", or "]),
    st.integers(0, 5),
)
def test_a_list_holding_the_gold_scores_zero(
    drawn: tuple[str, list[str], int], separator: str, position: int
) -> None:
    gold, candidates, size = drawn
    others = [c for c in candidates if c != gold][:size]
    items = [*others[:position], gold, *others[position:]]
    text = separator.join(items)
    assert not _states(text, gold), text


@given(
    st.sampled_from([*ACTIONS, "5", "dog", "Paris"]),
    st.integers(2, 6),
    st.sampled_from([" ", ", ", " in the ", " and ", "! "]),
)
def test_a_repeated_gold_scores_zero(gold: str, times: int, separator: str) -> None:
    text = separator.join([f"She is {gold} in the kitchen"] + [gold] * (times - 1))
    assert not _states(text, gold), text


@given(st.sampled_from([*ACTIONS, "5"]), st.lists(PLACES, min_size=3, max_size=12))
def test_a_gold_buried_in_phrases_scores_zero(gold: str, places: list[str]) -> None:
    text = f"There are {gold} " + " ".join(places)
    assert not _states(text, gold), text


def test_a_flood_of_phrases_is_refused_quickly() -> None:
    text = "She is cutting vegetables " + "in the kitchen " * 50_000
    started = time.perf_counter()
    assert not _states(text, "cutting vegetables")
    assert time.perf_counter() - started < 1.0


# ------------------------------------------------------------------ round 3: set-builder notation


@given(
    st.integers(-50, 50),
    st.integers(1, 50),
    st.sampled_from(["<", "\\le"]),
    st.sampled_from(["<", "\\le"]),
    st.sampled_from("xyt"),
    st.sampled_from([("\\{", " \\mid ", "\\}"), ("\\{", " : ", "\\}"), ("{", " | ", "}")]),
    st.sampled_from(["", " \\in \\mathbb{R}", " \\in \\R", " ∈ ℝ"]),
)
def test_set_builder_notation_equals_its_interval(
    low: int, width: int, op1: str, op2: str, var: str, braces: tuple[str, str, str], domain: str
) -> None:
    high = low + width
    interval = ("[" if op1 != "<" else "(") + f"{low}, {high}" + ("]" if op2 != "<" else ")")
    opening, bar, closing = braces
    answer = f"{opening}{var}{domain}{bar}{low} {op1} {var} {op2} {high}{closing}"
    assert MATH(f"<answer>${answer}$</answer>", interval).accuracy == 1.0, answer
    wrong = interval.replace("(", "[") if interval.startswith("(") else interval.replace("[", "(")
    assert MATH(f"<answer>${answer}$</answer>", wrong).accuracy == 0.0, answer


@pytest.mark.parametrize(
    "text",
    [
        "\\{x \\in \\mathbb{Z} \\mid x > -1\\}",  # integers: no interval
        "\\{n \\in \\mathbb{N} : n > -1\\}",
        "\\{x \\mid y > -1\\}",  # a condition on another variable
        "\\{2x \\mid x > -1\\}",  # an image set
        "\\{x \\mid x \\neq 2\\}",
        "\\{x \\mid x > -1\\} \\cup \\{x \\mid x < -5\\}",
    ],
)
def test_other_set_builders_are_left_alone(text: str) -> None:
    assert inequality_as_interval(text) is None
    assert MATH(f"<answer>${text}$</answer>", "(-1, \\infty)").accuracy == 0.0
