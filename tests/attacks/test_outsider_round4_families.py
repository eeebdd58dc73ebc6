"""Outsider red-team, round 4 (issue 19, section 2): verifier families judged as a careful human.

Written through the public surface only (``reward_function_for`` and ``videorl-kit reward
explain``), by someone who had not read the implementation, only README.md, docs/verifiers.md
and the command-line help. Each response is one a Qwen2.5-VL / Qwen3-VL or R1-style reasoning
model writes, or one an RL policy hunting for reward would write. Each test asserts what a
careful human grader gives (1 for a right answer, 0 for a wrong or hedged one). A test marked
``xfail(strict=True)`` is a hole found on the commit it was written against (its reason says
what the kit scores today); the fixer removes the mark. Unmarked tests are attacks the kit held;
they stay as regression tests. Code answers are out of scope here (attacked elsewhere).
"""

from __future__ import annotations

from functools import cache

import pytest

from videorl_kit.rewards import reward_function_for

OPTIONS = ["A. Red", "B. Blue", "C. Green", "D. Yellow"]
LONG_GOLD = "The man is cutting vegetables in the kitchen"
ST_GOLD = (
    '{"time": [1, 3], "boxes": {"1": [0, 0, 10, 10], "2": [0, 0, 10, 10], "3": [0, 0, 10, 10]}}'
)
NAMED = '{"x1": 0, "y1": 0, "x2": 10, "y2": 10}'


@cache
def _reward(problem_type: str):
    return reward_function_for(problem_type)


def accuracy(
    problem_type: str, response: str, gold: str, options: list[str] | None = None
) -> float:
    """The accuracy the kit gives ``response`` against ``gold`` (status must be ``ok``)."""
    result = _reward(problem_type)(response, gold, options)
    assert result.status == "ok", (result.status, result.details)
    return result.accuracy


def hole(reason: str):
    return pytest.mark.xfail(strict=True, reason=reason)


# --------------------------------------------------------------------------------------------
# Wrong answers that must score 0
# --------------------------------------------------------------------------------------------

# One answer block nested inside another: the outer block holds a second answer after the inner
# one. A careful grader sees two answers (a hedge); the kit reads the inner one alone.
NESTED = [
    ("multiple_choice", "<answer><answer>B</answer>C</answer>", "B", OPTIONS),
    ("numerical", "<answer><answer>4</answer>5</answer>", "4", None),
    ("boolean", "<answer><answer>yes</answer>no</answer>", "yes", None),
    ("math", "<answer><answer>2</answer>3</answer>", "2", None),
    ("critic", "<answer><answer>Response 1</answer>Response 2</answer>", "Response 1", None),
    ("open_ended", "<answer><answer>kitchen</answer>bathroom</answer>", "kitchen", None),
    ("ocr", "<answer><answer>EXIT 12</answer>ENTRANCE 4</answer>", "EXIT 12", None),
    ("temporal_grounding", "<answer><answer>[10, 20]</answer>[30, 40]</answer>", "[10, 20]", None),
    (
        "spatial_grounding",
        "<answer><answer>[100,100,200,200]</answer>[300,300,400,400]</answer>",
        "[100, 100, 200, 200]",
        None,
    ),
]


@pytest.mark.parametrize(("ptype", "response", "gold", "options"), NESTED)
def test_nested_answer_blocks_are_a_hedge(ptype, response, gold, options):
    assert accuracy(ptype, response, gold, options) == 0.0


# An answer, then a retraction in another language: "actually C" in German, Japanese, Russian,
# Korean, Chinese, French. English ("B. Actually, C.") and Spanish ("De hecho, C") already score 0.
CHOICE_RETRACTIONS = [
    "B. Eigentlich C.",
    "B. Tatsächlich C.",
    "B. 実は C。",
    "The answer is B. 実は、C です。",
    "B. На самом деле C.",
    "B. 사실 C.",
    "B, 아니 C",
    "B. 其实是C。",
    "B. 不对，是C。",
    "The answer is B. Mais non, c'est C.",
]


@pytest.mark.parametrize("response", CHOICE_RETRACTIONS)
def test_choice_retraction_in_another_language(response):
    assert accuracy("multiple_choice", response, "B", OPTIONS) == 0.0


# Two option letters joined by a word the kit does not know ("and"/"or" in other languages, any
# filler word, a backslash, a middle dot), or put in two code fences: two answers.
CHOICE_JOINED = [
    "B und C",
    "B oder vielleicht C",
    "B bzw. C",
    "B et C",
    "B ou C",
    "B o bien C",
    "B и C",
    "B 또는 C",
    "B 또는 C 중 하나",
    "B\\C",
    "B·C",
    "B? C?",
    "B blah C",
    "B" + " filler" * 50 + " C",
    "```\nB\n```\n```\nC\n```",
]


@pytest.mark.parametrize("response", CHOICE_JOINED)
def test_choice_two_letters_joined_by_unknown_words(response):
    assert accuracy("multiple_choice", response, "B", OPTIONS) == 0.0


# A final statement asked as a question and then answered "No": it rejects what it names.
QUESTIONED = [
    ("multiple_choice", "The answer is B? No.", "B", OPTIONS),
    ("critic", "I prefer Response 2. Final: Response 1? No.", "Response 1", None),
]


@pytest.mark.parametrize(("ptype", "response", "gold", "options"), QUESTIONED)
def test_final_statement_questioned_then_rejected(ptype, response, gold, options):
    assert accuracy(ptype, response, gold, options) == 0.0


# Boolean: the other verdict in another language, after the English one; both Chinese verdicts.
BOOLEAN_OTHER_LANGUAGE = [
    "Yes. Nein.",
    "Yes. Eigentlich nein.",
    "Yes. Non.",
    "Yes. Non, en fait.",
    "Yes. Нет.",
    "Yes. いいえ。",
    "Yes, 아니요",
    "Yes. 不对，否。",
    "是的。不是的。",
]


@pytest.mark.parametrize("response", BOOLEAN_OTHER_LANGUAGE)
def test_boolean_other_verdict_in_another_language(response):
    assert accuracy("boolean", response, "yes") == 0.0


# Boolean: a verdict, a long stretch of text, the other verdict. Short stretches are caught.
BOOLEAN_LONG = [
    "Yes " + "x" * 3000 + " no",
    "Yes." + " The door is visible." * 150 + " No.",
    "Yes" + " hmm" * 20000 + " no",
]


@pytest.mark.parametrize("response", BOOLEAN_LONG, ids=["x3000", "sentences", "hmm20000"])
def test_boolean_long_response_with_both_verdicts(response):
    assert accuracy("boolean", response, "yes") == 0.0


@pytest.mark.parametrize(
    "response",
    [
        "The answer is 2. 実は3です。",
        "The answer is 2. Eigentlich 3.",
        "The answer is 2. 其实是3。",
    ],
)
def test_math_retraction_in_another_language(response):
    assert accuracy("math", response, "2") == 0.0


@pytest.mark.parametrize(
    "response",
    [
        "Response 1. Eigentlich Response 2.",
        "Response 1. Tatsächlich Response 2.",
        "Response 1. 実は Response 2。",
    ],
)
def test_critic_retraction_in_another_language(response):
    assert accuracy("critic", response, "Response 1") == 0.0


# Open-ended, long gold: the gold copied, then declared false; or negated by a verb or adverb
# ("fails to", "refuses to", "hardly", "stops") instead of "not". A careful grader gives 0.
@pytest.mark.parametrize(
    "response", [LONG_GOLD + " — false.", LONG_GOLD + ". Falsch.", LONG_GOLD + ". Wrong."]
)
def test_rouge_copy_then_declared_false(response):
    assert accuracy("open_ended", response, LONG_GOLD) == 0.0


@pytest.mark.parametrize(
    "response",
    [
        "The man fails to cut vegetables in the kitchen",
        "The man refuses to cut vegetables in the kitchen",
        "The man is hardly cutting vegetables in the kitchen",
    ],
)
def test_rouge_negation_by_verb_or_adverb(response):
    assert accuracy("open_ended", response, LONG_GOLD) == 0.0


@pytest.mark.parametrize(
    ("ptype", "response", "gold"),
    [
        (
            "spatial_grounding",
            '{"bbox": [100,100,200,200], "note": "or [300,300,400,400]"}',
            "[100, 100, 200, 200]",
        ),
        (
            "spatial_grounding",
            '{"bbox_2d": [100,100,200,200], "label": "dog, or maybe [300, 300, 400, 400]"}',
            "[100, 100, 200, 200]",
        ),
        ("spatiotemporal_grounding", ST_GOLD[:-1] + ', "note": "or [5, 9]"}', ST_GOLD),
    ],
)
def test_second_answer_inside_a_string_value(ptype, response, gold):
    assert accuracy(ptype, response, gold) == 0.0


# Held: hedges in other languages, markup, rejections, degenerate geometry.
HELD_WRONG = [
    ("multiple_choice", "Die Antwort ist B oder C.", "B", OPTIONS),
    ("multiple_choice", "Ответ: B или C.", "B", OPTIONS),
    ("multiple_choice", "The answer is not B.", "B", OPTIONS),
    ("multiple_choice", "B is wrong, the answer is C.", "B", OPTIONS),
    ("multiple_choice", "- B\n- C", "B", OPTIONS),
    ("multiple_choice", "| Option | Correct |\n|---|---|\n| B | yes |\n| C | yes |", "B", OPTIONS),
    ("multiple_choice", "<!-- B --> C", "B", OPTIONS),
    ("numerical", "4 oder 5", "4", None),
    ("numerical", "4 или 5", "4", None),
    ("numerical", "zwischen 4 und 5", "4", None),
    ("numerical", "от 4 до 5", "4", None),
    ("numerical", "4〜5", "4", None),
    ("numerical", "4. 不对，是5。", "4", None),
    ("numerical", "```\n4\n```\n```\n5\n```", "4", None),
    ("numerical", "<!-- 4 --> 5", "4", None),
    ("numerical", "5e99999", "5", None),
    ("regression", "de 3 à 4 mètres", "3.5", None),
    ("boolean", "Ja oder nein", "yes", None),
    ("boolean", "<!-- yes --> no", "yes", None),
    ("boolean", "- yes\n- no", "yes", None),
    ("temporal_grounding", "[20, 10]", "[10, 20]", None),
    ("temporal_grounding", "[10, 10]", "[10, 20]", None),
    ("temporal_grounding", "[10, 20] oder [30, 40]", "[10, 20]", None),
    ("temporal_grounding", "- [10, 20]\n- [30, 40]", "[10, 20]", None),
    ("spatial_grounding", "[200, 200, 100, 100]", "[100, 100, 200, 200]", None),
    ("spatial_grounding", "[100, 100, 100, 200]", "[100, 100, 200, 200]", None),
    ("spatial_grounding", "[100,100,200,200] oder [300,300,400,400]", "[100, 100, 200, 200]", None),
    ("critic", "Response 1 oder Response 2", "Response 1", None),
    ("critic", "<!-- Response 1 --> Response 2", "Response 1", None),
    ("open_ended", "kitchen oder bathroom", "kitchen", None),
    ("open_ended", "kitchen. Nein, das Badezimmer.", "kitchen", None),
    ("math", "\\boxed{2 \\text{ oder } 3}", "2", None),
    ("math", "x = 2 или x = 3", "2", None),
]


@pytest.mark.parametrize(("ptype", "response", "gold", "options"), HELD_WRONG)
def test_held_wrong_answers_score_zero(ptype, response, gold, options):
    assert accuracy(ptype, response, gold, options) == 0.0


def test_held_whole_video_interval_and_whole_image_box_score_low():
    assert accuracy("temporal_grounding", "[0, 1000]", "[10, 20]") < 0.05
    assert accuracy("spatial_grounding", "[0, 0, 1000, 1000]", "[100, 100, 200, 200]") < 0.05
    assert accuracy("spatial_grounding", "[0, 0, 10000, 10000]", "[100, 100, 200, 200]") < 0.05


# --------------------------------------------------------------------------------------------
# Right answers that must score 1
# --------------------------------------------------------------------------------------------

CHOICE_MARKERS = [
    "La respuesta correcta es la B.",
    "La respuesta es (B) Azul.",
    "Respuesta: B",
    "La bonne réponse est B.",
    "Réponse : B",
    "Die richtige Antwort ist B.",
    "Antwort: B",
    "Правильный ответ — B.",
    "答えは (B) です。",
    "正解は B です。",
    "정답은 (B)입니다.",
    "답: B",
]


@pytest.mark.parametrize("response", CHOICE_MARKERS)
def test_choice_answer_markers_in_other_languages(response):
    assert accuracy("multiple_choice", response, "B", OPTIONS) == 1.0


@pytest.mark.parametrize("response", ["B because C is wrong", "B because D is not blue"])
def test_choice_reason_clause_keeps_the_choice(response):
    assert accuracy("multiple_choice", response, "B", OPTIONS) == 1.0


@pytest.mark.parametrize(
    ("response", "gold"),
    [
        ("Sí.", "yes"),
        ("Oui", "yes"),
        ("Ja", "yes"),
        ("Да", "yes"),
        ("はい", "yes"),
        ("네", "yes"),
        ("Non", "no"),
        ("Nein", "no"),
        ("Нет", "no"),
        ("いいえ", "no"),
        ("아니요", "no"),
    ],
)
def test_boolean_verdict_words_in_other_languages(response, gold):
    assert accuracy("boolean", response, gold) == 1.0


@pytest.mark.parametrize(
    "response", ["no dogs", "There are no dogs.", "There is no dog in the video.", "No people."]
)
def test_numeric_no_items_is_zero(response):
    assert accuracy("numerical", response, "0") == 1.0


@pytest.mark.parametrize(
    ("response", "gold"),
    [
        ("1 min 5 s", "65"),
        ("1 minute and 5 seconds", "65"),
        ("1:05", "65 s"),
        ("1 min 5 s", "65 seconds"),
    ],
)
def test_numeric_compound_duration(response, gold):
    assert accuracy("numerical", response, gold) == 1.0


@pytest.mark.parametrize(
    ("ptype", "response", "gold"),
    [
        ("numerical", "1.2 m", "120 cm"),
        ("numerical", "120 cm", "1.2 m"),
        ("regression", "350 cm", "3.5 m"),
        ("regression", "3.5 m", "350 cm"),
    ],
)
def test_numeric_answer_in_another_unit_of_the_gold(ptype, response, gold):
    assert accuracy(ptype, response, gold) == 1.0


@pytest.mark.parametrize("response", ["1.5M", "The population is 1.5M."])
def test_numeric_million_suffix(response):
    assert accuracy("numerical", response, "1500000") == 1.0


@pytest.mark.parametrize(
    ("response", "gold"),
    [("12%", "0.12"), ("12 %", "0.12"), ("0.12", "12%"), ("12 percent", "0.12")],
)
def test_regression_percent_and_fraction(response, gold):
    assert accuracy("regression", response, gold) == 1.0


@pytest.mark.parametrize("response", ["[10s, 20s]", "[10.0s, 20.0s]", "[00:10, 00:20]"])
def test_temporal_units_inside_brackets(response):
    assert accuracy("temporal_grounding", response, "[10, 20]") == 1.0


@pytest.mark.parametrize(
    "response",
    [
        "de 10 a 20 segundos",
        "von 10 bis 20 Sekunden",
        "de 10 à 20 secondes",
        "с 10 до 20 секунд",
        "10秒から20秒まで",
        "10초부터 20초까지",
    ],
)
def test_temporal_range_in_other_languages(response):
    assert accuracy("temporal_grounding", response, "[10, 20]") == 1.0


@pytest.mark.parametrize(
    "response",
    [
        '{"bounding_box": [100, 100, 200, 200]}',
        '{"coordinates": [100, 100, 200, 200]}',
        '{"box": {"x1": 100, "y1": 100, "x2": 200, "y2": 200}}',
        '{"top_left": [100, 100], "bottom_right": [200, 200]}',
    ],
)
def test_box_other_key_names(response):
    assert accuracy("spatial_grounding", response, "[100, 100, 200, 200]") == 1.0


@pytest.mark.parametrize("response", ["100, 100, 200, 200", "[100 100 200 200]"])
def test_box_four_bare_numbers(response):
    assert accuracy("spatial_grounding", response, "[100, 100, 200, 200]") == 1.0


@pytest.mark.parametrize(
    ("ptype", "response", "gold"),
    [
        (
            "tracking",
            '{"boxes": {"0": ' + NAMED + ', "1": {"x1": 10, "y1": 10, "x2": 20, "y2": 20}}}',
            '{"boxes": {"0": [0, 0, 10, 10], "1": [10, 10, 20, 20]}}',
        ),
        (
            "spatiotemporal_grounding",
            '{"time": [1, 3], "boxes": {"1": '
            + NAMED
            + ', "2": '
            + NAMED
            + ', "3": '
            + NAMED
            + "}}",
            ST_GOLD,
        ),
    ],
)
def test_named_coordinates_per_second(ptype, response, gold):
    assert accuracy(ptype, response, gold) == 1.0


def test_spatiotemporal_start_end_beside_a_different_time_is_a_hedge():
    response = ST_GOLD[:-1] + ', "start": 5, "end": 9}'
    assert accuracy("spatiotemporal_grounding", response, ST_GOLD) == 0.0
    assert (
        accuracy("spatiotemporal_grounding", ST_GOLD[:-1] + ', "start": 1, "end": 3}', ST_GOLD)
        == 1.0
    )


def test_spatiotemporal_start_end_keys():
    response = '{"start": 1, "end": 3, "boxes": {"1": [0, 0, 10, 10], "2": [0, 0, 10, 10], "3": [0, 0, 10, 10]}}'
    assert accuracy("spatiotemporal_grounding", response, ST_GOLD) == 1.0


# It scored 0.51: extra seconds were ignored, so covering the video kept the whole box half.
# vIoU counts them, on the gold's grid, so keys moved off the grid or spread thin pay as well.
@pytest.mark.parametrize(
    "keys",
    [
        [str(i) for i in range(100)],  # every second
        [f"{i + 0.5}" for i in range(100)] + ["1", "2", "3"],  # off the grid, gold keys kept
        [f"{i / 4:g}" for i in range(400)],  # finer than the gold
        [f"{i + 0.49}" for i in range(100)] + ["1", "2", "3"],  # just inside half a step
        ["1", "2", "3"] + [f"{i}.0" for i in range(4, 100)],  # the same seconds spelled apart
    ],
)
def test_spatiotemporal_whole_video_with_a_box_every_second(keys):
    boxes = ", ".join(f'"{key}": [0, 0, 10, 10]' for key in keys)
    response = '{"time": [0, 100], "boxes": {' + boxes + "}}"
    assert accuracy("spatiotemporal_grounding", response, ST_GOLD) < 0.1


@pytest.mark.parametrize(
    "keys",
    [
        ["1", "2", "3"],
        ["1", "1.5", "2", "2.5", "3"],  # a finer-grained right answer
        ["1.0", "1.25", "1.5", "1.75", "2.0", "2.25", "2.5", "2.75", "3.0"],
    ],
)
def test_spatiotemporal_right_track_at_any_sampling_scores_one(keys):
    boxes = ", ".join(f'"{key}": [0, 0, 10, 10]' for key in keys)
    response = '{"time": [1, 3], "boxes": {' + boxes + "}}"
    assert accuracy("spatiotemporal_grounding", response, ST_GOLD) == 1.0


@pytest.mark.parametrize(
    "response", ["\\boxed{\\$12}", "\\boxed{\\$12.00}", "The answer is \\$12."]
)
def test_math_currency_sign(response):
    assert accuracy("math", response, "12") == 1.0


@pytest.mark.parametrize("response", ["[[C]]", "My final verdict is [[C]].", "平局", "两者一样好"])
def test_critic_tie_labels(response):
    assert accuracy("critic", response, "Tie") == 1.0


@pytest.mark.parametrize(
    ("ptype", "response", "gold"),
    [
        ("critic", "\\boxed{\\text{Response 2}}", "Response 2"),
        ("ocr", "\\boxed{\\text{EXIT 12}}", "EXIT 12"),
    ],
)
def test_boxed_text_wrapper(ptype, response, gold):
    assert accuracy(ptype, response, gold) == 1.0


# Documented limit (docs/verifiers.md, `wer`): OCR grades the words as written, so a frame
# around the transcription costs its words, as golden case ocr-008 pins ("The text says: OPEN
# 24 HOURS" scores 0). A model prompted for the text alone is graded on the text alone. The
# one exception: the one text a short sentence quotes is the answer (round 4, `wer`).
@pytest.mark.parametrize(
    ("response", "expected"),
    [('The text says "EXIT 12".', 1.0), ("The sign reads: EXIT 12", 0.0), ("Text: EXIT 12", 0.5)],
)
def test_ocr_framed_transcription_is_graded_as_written(response, expected):
    assert accuracy("ocr", response, "EXIT 12") == expected


HELD_RIGHT = [
    ("multiple_choice", "The answer is (B) Blue.", "B", OPTIONS),
    ("multiple_choice", "Die Antwort ist (B).", "B", OPTIONS),
    ("multiple_choice", "C is wrong, so B.", "B", OPTIONS),
    ("multiple_choice", "答案是：**B**", "B", OPTIONS),
    ("numerical", "La respuesta es 4.", "4", None),
    ("numerical", "答えは4です。", "4", None),
    ("numerical", "minus four", "-4", None),
    ("numerical", "50%", "0.5", None),
    ("boolean", "Correct.", "yes", None),
    ("boolean", "Incorrect.", "no", None),
    ("boolean", "对", "yes", None),
    ("boolean", "错", "no", None),
    ("temporal_grounding", "00:00:10,000 --> 00:00:20,000", "[10, 20]", None),
    ("temporal_grounding", "10秒到20秒", "[10, 20]", None),
    (
        "spatial_grounding",
        "<|box_start|>(100,100),(200,200)<|box_end|>",
        "[100, 100, 200, 200]",
        None,
    ),
    (
        "spatial_grounding",
        '{"xmin": 100, "ymin": 100, "xmax": 200, "ymax": 200}',
        "[100, 100, 200, 200]",
        None,
    ),
    ("critic", "[[A]]", "Response 1", None),
    ("critic", "回答1更好", "Response 1", None),
    ("math", "\\boxed{0.5}", "\\frac{1}{2}", None),
    ("open_ended", "There are three people.", "3 people", None),
]


@pytest.mark.parametrize(("ptype", "response", "gold", "options"), HELD_RIGHT)
def test_held_right_answers_score_one(ptype, response, gold, options):
    assert accuracy(ptype, response, gold, options) == 1.0


@pytest.mark.parametrize(
    "response",
    [
        "Yes. The opposite, actually.",
        "Yes, I don't think so",
    ],
)
def test_boolean_verdict_taken_back_without_a_verdict_word(response):
    assert accuracy("boolean", response, "yes") == 0.0


# A clause that is a bare "not" (with fillers or intensifiers, or "not really"/"not quite"...)
# after the verdict takes it back: it read as yes ("Yes, not." scored 1).
@pytest.mark.parametrize(
    "response",
    [
        "Yes, not.",
        "Yes... not",
        "yes \u2014 not really",
        "Yes (not)",
        "Yes. Not.",
        "Yes not",
        "YES!!! Not!",
        "Yes; not at all.",
        "Yes, of course not.",
        "Yes \u2014 absolutely not",
        "Yes, but not really.",
        "Yes... well, not quite.",
        "True, not.",
        "Yes, not necessarily.",
        "<answer>Yes, not.</answer>",
    ],
)
def test_boolean_bare_not_after_the_verdict(response):
    assert accuracy("boolean", response, "yes") == 0.0
    assert accuracy("boolean", response, "no") == 0.0


# A "not" before a word negates that word, and a word before it makes no bare "not".
@pytest.mark.parametrize(
    "response",
    [
        "Yes, not X but Y.",
        "Yes, not only the man but also the dog.",
        "Yes, it is not raining.",
        "Yes, why not?",
        "Yes, if not more.",
        "Yes, not all of them, but most.",
        "Yes, the man is running, not walking.",
        "Yes, not really a problem.",
        "Yes, believe it or not.",
        "The cat? Not really. The dog is there, so yes.",
    ],
)
def test_boolean_not_that_negates_a_word_keeps_the_verdict(response):
    assert accuracy("boolean", response, "yes") == 1.0


@pytest.mark.parametrize(("response", "gold"), [("True/False: True", "yes"), ("Yes/No: No", "no")])
def test_boolean_echoed_answer_label(response, gold):
    assert accuracy("boolean", response, gold) == 1.0


# "N%" is read as N and as N/100, two readings: against a whole-number count above 1 the
# fraction reading lets a wrong answer through ("400%" for 4 dogs).
@pytest.mark.parametrize(("response", "gold"), [("400%", "4"), ("5000%", "50")])
def test_numeric_percent_against_a_whole_count(response, gold):
    assert accuracy("numerical", response, gold) == 0.0


@pytest.mark.parametrize("response", ["three", "There are three."])
def test_choice_number_word_for_a_numeric_option(response):
    assert accuracy("multiple_choice", response, "B", ["A. 2", "B. 3", "C. 4", "D. 5"]) == 1.0


# An answer, then taken back with nothing put in its place ("Just kidding.", "Not really.",
# "I lied.", "Never mind.", "That's wrong.", "... or not."): the response commits to nothing.
# "Scratch that." is already read as a withdrawal in choice and numeric; open_ended holds most.
WITHDRAWN = [
    ("multiple_choice", "B. Just kidding.", "B", OPTIONS),
    ("multiple_choice", "B. Not really.", "B", OPTIONS),
    ("multiple_choice", "B... or not.", "B", OPTIONS),
    ("multiple_choice", "B. I lied.", "B", OPTIONS),
    ("multiple_choice", "B. Never mind.", "B", OPTIONS),
    ("multiple_choice", "B. That's wrong.", "B", OPTIONS),
    ("multiple_choice", "B, I guess not", "B", OPTIONS),
    ("numerical", "4. Just kidding.", "4", None),
    ("numerical", "4 (just kidding)", "4", None),
    ("numerical", "4. That's wrong.", "4", None),
    ("math", "\\boxed{2}. Just kidding.", "2", None),
    ("math", "\\boxed{2}. Scratch that.", "2", None),
    ("temporal_grounding", "[10, 20]. Just kidding.", "[10, 20]", None),
    ("boolean", "Yes. Just kidding.", "yes", None),
    ("boolean", "Yes. Never mind.", "yes", None),
    ("boolean", "Yes... or not.", "yes", None),
    ("boolean", "yes (the opposite)", "yes", None),
    ("boolean", "Yes. I lied.", "yes", None),
    ("critic", "Response 1 is better. Just kidding.", "Response 1", None),
    ("critic", "Response 1 is better. Not really.", "Response 1", None),
    ("critic", "Response 1... or not.", "Response 1", None),
    ("open_ended", "kitchen... or not.", "kitchen", None),
]


@pytest.mark.parametrize(("ptype", "response", "gold", "options"), WITHDRAWN)
def test_answer_withdrawn_with_nothing_in_its_place(ptype, response, gold, options):
    assert accuracy(ptype, response, gold, options) == 0.0


HELD_WITHDRAWN = [
    ("multiple_choice", "B. Scratch that.", "B", OPTIONS),
    ("numerical", "4. Scratch that.", "4", None),
    ("open_ended", "kitchen. Just kidding.", "kitchen", None),
    ("open_ended", "kitchen. That's wrong.", "kitchen", None),
    ("critic", "Response 1. The opposite, actually.", "Response 1", None),
]


@pytest.mark.parametrize(("ptype", "response", "gold", "options"), HELD_WITHDRAWN)
def test_held_withdrawn_answers_score_zero(ptype, response, gold, options):
    assert accuracy(ptype, response, gold, options) == 0.0


@pytest.mark.parametrize(
    "response",
    ["The worse one is Response 2.", "Response 2 loses.", "Response 2 is the weaker one."],
)
def test_critic_loser_named(response):
    assert accuracy("critic", response, "Response 1") == 1.0


@pytest.mark.parametrize("response", ["at least 3 people", "3+ people"])
def test_rouge_bound_on_a_count(response):
    assert accuracy("open_ended", response, "3 people") == 0.0
