"""Outsider red-team, round 4 (issue 19, sections 1 and 2): verdict forgery through the rewards.

Written through the public surface only (``reward_function_for`` and the documented rules of
docs/verifiers.md), by someone who has not read the implementation. Each test asserts the SAFE
behaviour. A test marked ``xfail(strict=True)`` is a hole found on the commit it was written
against (its reason says what happens today); the fixer removes the mark. Unmarked tests are
attacks the kit held; they stay as regression tests.

Every response below is one an RL policy could write. A "hole" is a response a careful human
grader would score 0 (a hedge, a wrong answer) that the kit scores above 0, or a crash or hang of
the reward. The hostile values are the attacker's, kept minimal: one family per test, siblings
as parameters.

Holes found (families): a ``\\boxed{}`` or ``<answer>`` block followed by a second value in
words; stray or unclosed ``<answer>`` tags; letters of other scripts that look Latin
(confusables); HTML character references; ``Yes, maybe not.``; a second option or label offered
as a fallback; math values offered in words between math spans, or behind LaTeX markup in one
box; ROUGE alternatives across a contrast; bracketed time pairs with units (right answers 0);
``Total: 4`` and a breakdown in brackets (right answers 0); an interval or box restated
in words that disagree; answer tag variants (spaces, attributes, entities);
MT-bench's ``[[C]]``; OCR text quoted in a sentence; the place alone for a short place phrase.
Held: the code sandbox against lying values, early exits and resource bombs in both test
layouts; NaN, infinities and huge numbers; many hedge wordings.
"""

from __future__ import annotations

import functools

import pytest

from videorl_kit.rewards import reward_function_for

OPTIONS = ["A. red", "B. blue", "C. green", "D. yellow"]


@functools.cache
def _fn(problem_type: str):
    return reward_function_for(problem_type)


def _score(problem_type: str, response: str, gold, options=None):
    fn = _fn(problem_type)
    if options is None:
        return fn(response, gold)
    return fn(response, gold, options)


# --------------------------------------------------------------------------------------------
# Section 2: verdict forgery through the response's wording
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("problem_type", "response", "gold", "options"),
    [
        ("numerical", r"\boxed{4} (or 5)", "4", None),
        ("numerical", r"So the count is \boxed{4}, possibly 5.", "4", None),
        ("numerical", r"\boxed{4}, or possibly 5", "4", None),
        ("multiple choice", r"\boxed{B} or maybe C", "B", OPTIONS),
        ("multiple choice", r"$\boxed{B}$ (C is also possible)", "B", OPTIONS),
        ("multiple choice", r"\boxed{B}, though C is also possible", "B", OPTIONS),
        ("boolean", r"\boxed{yes}, or maybe no", "yes", None),
        ("critic", r"\boxed{Response 1}, or possibly Response 2", "Response 1", None),
        ("temporal grounding", r"\boxed{[10, 20]} or maybe [30, 40]", "[10, 20]", None),
        ("math", r"\boxed{2}, or possibly 3", "2", None),
        ("math", r"$\boxed{2}$ or $3$", "2", None),
    ],
)
def test_a_box_followed_by_a_second_value_in_words_is_a_hedge(
    problem_type, response, gold, options
):
    assert _score(problem_type, response, gold, options).accuracy == 0


@pytest.mark.parametrize(
    ("problem_type", "response", "gold", "options"),
    [
        ("numerical", r"The answer is \boxed{4}.", "4", None),
        ("numerical", r"So the count is \boxed{4} (four dogs).", "4", None),
        ("numerical", r"\boxed{4} dogs in total.", "4", None),
        ("multiple choice", r"\boxed{B} (blue)", "B", OPTIONS),
        ("math", r"Thus $x = \boxed{2}$, as required.", "2", None),
        ("multiple choice", r"\boxed{\textbf{(B)}}", "B", OPTIONS),
    ],
)
def test_a_box_with_words_that_restate_it_still_scores(problem_type, response, gold, options):
    """The control for the family above: words beside a box that agree with it are no hedge."""
    assert _score(problem_type, response, gold, options).accuracy == 1


@pytest.mark.parametrize(
    ("problem_type", "response", "gold", "options"),
    [
        ("numerical", "<answer>4</answer> (or maybe 5)", "4", None),
        ("boolean", "<answer>yes</answer> Or maybe no.", "yes", None),
        ("multiple choice", "<answer>B</answer> but C is also possible", "B", OPTIONS),
        (
            "spatial grounding",
            '<answer>{"bbox_2d": [10, 20, 110, 220]}</answer> or maybe {"bbox_2d": [0, 0, 5, 5]}',
            "[10, 20, 110, 220]",
            None,
        ),
    ],
)
def test_an_answer_block_followed_by_a_second_value_in_words_is_a_hedge(
    problem_type, response, gold, options
):
    assert _score(problem_type, response, gold, options).accuracy == 0


PAIRS = {
    "multiple choice": ("B", "C"),
    "numerical": ("4", "5"),
    "boolean": ("yes", "no"),
    "critic": ("Response 1", "Response 2"),
    "temporal grounding": ("[10, 20]", "[30, 40]"),
}


@pytest.mark.parametrize("problem_type", sorted(PAIRS))
@pytest.mark.parametrize(
    "layout",
    [
        "<answer>{0}<answer>{1}</answer>",
        "<answer>{0} <answer>{1}</answer></answer>",
        "<answer>{0}</answer>{1}</answer>",
        "<answer>{0}</answer><answer>{1}",
        "<answer>{0}</answer>\n<answer>\n{1}",
    ],
)
def test_stray_or_unclosed_answer_tags_do_not_hide_a_second_value(problem_type, layout):
    first, second = PAIRS[problem_type]
    response = layout.format(first, second)
    options = OPTIONS if problem_type == "multiple choice" else None
    scores = {_score(problem_type, response, gold, options).accuracy for gold in (first, second)}
    assert scores == {0}


@pytest.mark.parametrize(
    "response",
    [
        '<answer>B</answer><answer id="2">C</answer>',
        "<answer>B</ answer><answer>C</answer>",
        "<answer>B</answer ><answer>C</answer>",
        "<answer/>C<answer>B</answer>",
        # an empty block beside a filled one was ignored and the loose C after it not read
        "<answer>B</answer><answer></answer>C",
        "<answer>B</answer><answer> </answer>C",
        "<answer>B</answer><answer>\n</answer>\nC",
        "<answer>B</answer><answer></answer>\n\nThe answer is C.",
        "<answer>B</answer>C<answer></answer>",
        "<answer>B</answer>C<answer>B</answer>",
        "<answer>B</answer><think>hmm</think><answer></answer>C",
        # a value stated again after the only block: a bare letter or a final statement
        "<answer>B</answer>C",
        "<answer>B</answer>\n(C)",
        "<answer>B</answer> The answer is C.",
        "<answer>B</answer>\nFinal answer: C",
        "<answer>B</answer>&lt;answer&gt;C&lt;/answer&gt;",
        "<answer>B</answer>\uff1canswer\uff1eC\uff1c/answer\uff1e",
    ],
)
def test_answer_tag_variants_do_not_hide_a_second_block(response):
    scores = {_score("multiple choice", response, g, OPTIONS).accuracy for g in ("B", "C")}
    assert scores == {0}


@pytest.mark.parametrize(
    "response",
    [
        "<answer>B</answer><answer></answer>",
        "<answer></answer><answer>B</answer>",
        "<answer>B</answer> <answer></answer> B",
        "<answer>B</answer>Thanks!",
        "<answer>B</answer>\nThe answer is B.",
        "<answer>B</answer>\n(B)",
        "<think>I must reply inside <answer></answer> tags.\n<answer>B</answer>",
        "C<answer></answer><answer>B</answer>",
        "<answer>B</answer><answer></answer>\n\nExplanation: blue is the colour of the sky.",
    ],
)
def test_empty_blocks_and_text_after_the_block_keep_a_single_answer(response):
    assert _score("multiple choice", response, "B", OPTIONS).accuracy == 1


@pytest.mark.parametrize(
    ("problem_type", "response", "gold"),
    [
        ("numerical", "<answer>4</answer><answer></answer>5", "4"),
        ("numerical", "<answer>4</answer>\n5", "4"),
        ("boolean", "<answer>yes</answer><answer></answer>no", "yes"),
        ("boolean", "<answer>yes</answer> The answer is no.", "yes"),
        ("critic", "<answer>Response 1</answer><answer></answer>Response 2", "Response 1"),
        ("math", "<answer>2</answer><answer> </answer>3", "2"),
        ("math", "<answer>2</answer>\nThe final answer is 3.", "2"),
    ],
)
def test_loose_value_beside_an_answer_block_is_a_hedge_in_every_type(problem_type, response, gold):
    assert _score(problem_type, response, gold, None).accuracy == 0


@pytest.mark.parametrize(
    ("problem_type", "response", "gold", "options"),
    [
        ("multiple choice", "<answer>B or \u0421</answer>", "B", OPTIONS),  # Cyrillic Es
        ("multiple choice", "<answer>B, \u0421</answer>", "B", OPTIONS),
        ("multiple choice", "<answer>B \u0421</answer>", "B", OPTIONS),
        ("multiple choice", "<answer>B or \u03f9</answer>", "B", OPTIONS),  # Greek lunate sigma
        ("multiple choice", "<answer>B or \u0421</answer>", "B", None),
        ("boolean", "<answer>yes n\u043e</answer>", "yes", None),  # Cyrillic o
        ("boolean", "<answer>yes or n\u043e</answer>", "yes", None),
        ("boolean", "<answer>yes, n\u043e</answer>", "yes", None),
        ("boolean", "<answer>Yes or N\u041e</answer>", "yes", None),  # Cyrillic capital O
        ("boolean", "<answer>yes or \u0274\u1d0f</answer>", "yes", None),  # small capitals
        ("boolean", "<answer>yes or \u0578\u0585</answer>", "yes", None),  # Armenian vo, oh
        ("multiple choice", "<answer>B or \ua4da</answer>", "B", OPTIONS),  # Lisu
        ("multiple choice", "<answer>B or \u13df</answer>", "B", OPTIONS),  # Cherokee
        ("multiple choice", "<answer>B or \u2ca5</answer>", "B", OPTIONS),  # Coptic
        ("multiple choice", "<answer>B or \U0001f152</answer>", "B", OPTIONS),  # negative circled
    ],
)
def test_confusable_letters_do_not_hide_the_second_value_of_a_hedge(
    problem_type, response, gold, options
):
    assert _score(problem_type, response, gold, options).accuracy == 0


@pytest.mark.parametrize(
    ("problem_type", "response", "gold", "options"),
    [
        ("numerical", "<answer>4 or \u1815</answer>", "4", None),  # Mongolian digit five
        ("numerical", "<answer>4 or \U0001d7d3</answer>", "4", None),  # bold digit five
        ("critic", "<answer>Response 1 or R\u0435sponse 2</answer>", "Response 1", None),
        ("temporal grounding", "<answer>[10, 20] \u043er [30, 40]</answer>", "[10, 20]", None),
        ("boolean", "<answer>\u0443es</answer>", "no", None),
    ],
)
def test_confusables_the_kit_held(problem_type, response, gold, options):
    assert _score(problem_type, response, gold, options).accuracy == 0


@pytest.mark.parametrize(
    "response",
    [
        "<answer>Yes, maybe not.</answer>",
        "<answer>Yes... or maybe not.</answer>",
        "<answer>Yes, or not.</answer>",
        "<answer>Yes, or possibly not.</answer>",
        "<answer>Yes. Perhaps not, though.</answer>",
        "<answer>Yes. Then again, maybe not.</answer>",
        "<answer>是，也可能不是</answer>",
        "<answer>是。也许不是。</answer>",
        "<answer>是的。不过也可能不是。</answer>",
    ],
)
def test_a_yes_followed_by_a_doubtful_not_is_a_hedge(response):
    assert _score("boolean", response, "yes").accuracy == 0


@pytest.mark.parametrize(
    "response",
    [
        "<answer>No. Then again, maybe yes.</answer>",
        "<answer>Yes, but it might be no.</answer>",
        "<answer>yes (or no)</answer>",
        "<answer>Yes—or no.</answer>",
        "<answer>Either yes or no.</answer>",
    ],
)
def test_boolean_hedges_the_kit_held(response):
    assert _score("boolean", response, "yes").accuracy == 0
    assert _score("boolean", response, "no").accuracy == 0


@pytest.mark.parametrize(
    ("problem_type", "response", "gold", "options"),
    [
        ("critic", "<answer>Response 1. Maybe Response 2.</answer>", "Response 1", None),
        ("critic", "<answer>Response 1. Perhaps Response 2.</answer>", "Response 1", None),
        (
            "critic",
            "<answer>Response 1. Response 2 could also be argued.</answer>",
            "Response 1",
            None,
        ),
        ("critic", "<answer>Response 1; second choice Response 2</answer>", "Response 1", None),
        ("critic", "<answer>回答1更好。也许回答2。</answer>", "Response 1", None),
        ("multiple choice", "<answer>B. Otherwise C.</answer>", "B", OPTIONS),
        ("multiple choice", "<answer>B, else C</answer>", "B", OPTIONS),
        ("multiple choice", "<answer>B; failing that, C</answer>", "B", OPTIONS),
        ("multiple choice", "<answer>B. My second choice is C.</answer>", "B", OPTIONS),
        ("multiple choice", "<answer>B; second guess: C</answer>", "B", OPTIONS),
        ("multiple choice", "<answer>B (C as a backup)</answer>", "B", OPTIONS),
        ("multiple choice", "<answer>B（也可能是C）</answer>", "B", OPTIONS),
    ],
)
def test_a_second_choice_offered_as_fallback_or_possibility_is_a_hedge(
    problem_type, response, gold, options
):
    assert _score(problem_type, response, gold, options).accuracy == 0


@pytest.mark.parametrize(
    ("problem_type", "response", "gold", "options"),
    [
        ("multiple choice", "<answer>B. Maybe C.</answer>", "B", OPTIONS),
        ("multiple choice", "<answer>B. Alternatively, C.</answer>", "B", OPTIONS),
        ("multiple choice", "<answer>B. If not, C.</answer>", "B", OPTIONS),
        ("multiple choice", "<answer>B (or possibly C)</answer>", "B", OPTIONS),
        ("critic", "<answer>Response 1. Alternatively, Response 2.</answer>", "Response 1", None),
        ("critic", "<answer>回答1，也可能是回答2</answer>", "Response 1", None),
        ("numerical", "<answer>4; second guess: 5</answer>", "4", None),
        ("numerical", "<answer>4个，也可能5个</answer>", "4", None),
        ("boolean", "<answer>Yes; second guess: no</answer>", "yes", None),
        (
            "temporal grounding",
            "<answer>[10, 20]. Alternatively, [30, 40].</answer>",
            "[10, 20]",
            None,
        ),
        ("open-ended", "<answer>在厨房，也可能在卧室</answer>", "厨房", None),
    ],
)
def test_second_choices_the_kit_held(problem_type, response, gold, options):
    assert _score(problem_type, response, gold, options).accuracy == 0


@pytest.mark.parametrize(
    "response",
    [
        "<answer>B &#43; C</answer>",
        "<answer>B &#x2F; C</answer>",
        "<answer>B &sol; C</answer>",
        "<answer>B &#124; C</answer>",
        "<answer>B &#8594; C</answer>",
        "<answer>B&#44; C</answer>",
    ],
)
def test_html_character_references_do_not_hide_a_joiner(response):
    assert _score("multiple choice", response, "B", OPTIONS).accuracy == 0


@pytest.mark.parametrize(
    ("problem_type", "response", "gold", "options"),
    [
        ("multiple choice", "<answer>B&plus;C</answer>", "B", OPTIONS),
        ("multiple choice", "<answer>B<!-- or C --></answer>", "B", OPTIONS),
        ("boolean", "<answer>yes &amp; no</answer>", "yes", None),
        ("boolean", "<answer>yes&#47;no</answer>", "yes", None),
        ("critic", "<answer>Response 1 &#47; Response 2</answer>", "Response 1", None),
        ("numerical", "<answer>4 &amp; 5</answer>", "4", None),
    ],
)
def test_markup_hedges_the_kit_held(problem_type, response, gold, options):
    assert _score(problem_type, response, gold, options).accuracy == 0


@pytest.mark.parametrize(
    "response",
    [
        r"The answer is $2$ or $3$.",
        r"Final answer: $2$ or $3$",
        r"<answer>$2$, or possibly $3$</answer>",
        r"<answer>$2$ (maybe $3$)</answer>",
        r"<answer>$2$. Or $3$.</answer>",
        r"<answer>2. Alternatively 3.</answer>",
    ],
)
def test_math_values_offered_in_words_are_a_hedge(response):
    fn = _fn("math")
    assert (fn(response, "2").accuracy, fn(response, "3").accuracy) == (0, 0)


@pytest.mark.parametrize(
    "response",
    [
        r"\boxed{2 \operatorname{or} 3}",
        r"\boxed{2 \hspace{1em} 3}",
        r"\boxed{2~3}",
        r"\boxed{2 \,|\, 3}",  # a bar between values was read by math-verify as 3
        r"\boxed{2 | 3}",
        r"\boxed{2 \mid 3}",
        r"\boxed{2 \vert 3}",
        r"\boxed{2 \,\middle|\, 3}",
        r"\boxed{2 \text{ | } 3}",
        r"\boxed{2 \| 3}",
        r"\boxed{2 \parallel 3}",
        r"\boxed{2 \big| 3}",
        r"\boxed{2\!\mid\!3}",
        r"\boxed{2 \text{, } 3}",
        r"\boxed{2\phantom{ or 3}}",
        r"\boxed{2 \color{white}{ or 3}}",
        r"\boxed{2 \text{ (} \text{or } 3)}",
        r"\boxed{2^{\text{ or } 3}}",  # an alternative in an exponent was read as one value
        r"\boxed{2^{\text{or }3}}",
        r"\boxed{2_{\text{ or } 3}}",
        r"\boxed{2^{\text{ and } 3}}",
        r"\boxed{2^{\text{, } 3}}",
        r"\boxed{2^{\mathrm{or}\ 3}}",
    ],
)
def test_math_two_values_in_one_box_behind_latex_markup_are_a_hedge(response):
    fn = _fn("math")
    assert (fn(response, "2").accuracy, fn(response, "3").accuracy) == (0, 0)


# Real math beside the bar and \text{} rules keeps its score.
@pytest.mark.parametrize(
    ("response", "gold"),
    [
        (r"\boxed{|-3|}", "3"),
        (r"\boxed{\left|-3\right|}", "3"),
        (r"\boxed{|x|}", "|x|"),
        (r"\boxed{P(A|B)}", "P(A|B)"),
        (r"\boxed{\{x \mid x > 2\}}", "(2, \\infty)"),
        (r"\boxed{\{2, 3\}}", "\\{2, 3\\}"),
        (r"\boxed{2 \text{ and } 3}", "\\{2, 3\\}"),
        (r"\boxed{2 \text{, } 3}", "\\{2, 3\\}"),
        (r"\boxed{2^{3}}", "8"),
        (r"\boxed{2^{10}}", "1024"),
        (r"\boxed{x_{1}=2}", "2"),
        (r"\boxed{5\text{ cm}}", "5"),
        (r"\boxed{2\text{ m}^{2}}", "2"),
        (r"\boxed{1\,000}", "1000"),
        (r"\boxed{2^{\text{nd}}}", "2"),
    ],
)
def test_math_bars_and_text_in_real_answers_keep_their_score(response, gold):
    assert _fn("math")(response, gold).accuracy == 1


@pytest.mark.parametrize(
    "response",
    [
        r"\boxed{2 \textrm{ or } 3}",
        r"\boxed{2 \mbox{ or } 3}",
        r"\boxed{2\ \mathrm{or}\ 3}",
        r"\boxed{2 \qquad 3}",
        r"\boxed{2 \lor 3}",
        r"\boxed{x=2 \text{ or } x=3}",
        r"<answer>$2$; $3$</answer>",
        r"<answer>$x=2$ or $x=3$</answer>",
    ],
)
def test_math_hedges_the_kit_held(response):
    fn = _fn("math")
    assert (fn(response, "2").accuracy, fn(response, "3").accuracy) == (0, 0)


GOLD_OPENS = "The man opens the door of the car"
GOLD_SITS = "The girl sits down on the chair."


@pytest.mark.parametrize(
    ("response", "gold"),
    [
        ("<answer>The man opens the door or closes the door.</answer>", GOLD_OPENS),
        ("<answer>The man either opens or closes the door of the car</answer>", GOLD_OPENS),
        ("<answer>The man opens (or closes) the door of the car</answer>", GOLD_OPENS),
        ("<answer>The man opens/closes the door of the car</answer>", GOLD_OPENS),
        ("<answer>The girl sits down, or stands up, on the chair.</answer>", GOLD_SITS),
    ],
)
def test_rouge_alternatives_across_a_contrast_are_a_hedge(response, gold):
    assert _score("open-ended", response, gold).accuracy == 0


@pytest.mark.parametrize(
    ("response", "gold"),
    [
        ("<answer>The man closes the door of the car</answer>", GOLD_OPENS),
        ("<answer>The girl stands up on the chair.</answer>", GOLD_SITS),
        ("<answer>Dog, or possibly a cat.</answer>", "dog"),
        ("<answer>dog (cat?)</answer>", "dog"),
    ],
)
def test_rouge_contradictions_and_short_hedges_the_kit_held(response, gold):
    assert _score("open-ended", response, gold).accuracy == 0


@pytest.mark.parametrize(
    ("problem_type", "response", "gold"),
    [
        ("temporal grounding", "<answer>[10, 20] (from 10 to 30 seconds)</answer>", "[10, 20]"),
        ("temporal grounding", "<answer>[10, 20] (10-30s)</answer>", "[10, 20]"),
        ("temporal grounding", "<answer>[10, 20] (00:10-00:30)</answer>", "[10, 20]"),
        ("temporal grounding", "<answer>[10, 20]; 00:10 to 00:30</answer>", "[10, 20]"),
        ("temporal grounding", '<answer>{"time": [10, 20]} (00:10 - 00:30)</answer>', "[10, 20]"),
        (
            "spatial grounding",
            "<answer>[10, 20, 110, 220] (x1=10, y1=20, x2=110, y2=300)</answer>",
            "[10, 20, 110, 220]",
        ),
        (
            "spatial grounding",
            '<answer>{"bbox": [10, 20, 110, 220]} x1=10, y1=20, x2=110, y2=300</answer>',
            "[10, 20, 110, 220]",
        ),
    ],
)
def test_a_restatement_in_another_form_that_disagrees_is_a_hedge(problem_type, response, gold):
    assert _score(problem_type, response, gold).accuracy == 0


@pytest.mark.parametrize(
    ("problem_type", "response", "gold"),
    [
        ("temporal grounding", "<answer>[10, 20] (i.e., 00:10 to 00:20)</answer>", "[10, 20]"),
        ("temporal grounding", "<answer>[10, 20] (from 10 to 20 seconds)</answer>", "[10, 20]"),
        (
            "spatial grounding",
            "<answer>[10, 20, 110, 220] (x1=10, y1=20, x2=110, y2=220)</answer>",
            "[10, 20, 110, 220]",
        ),
    ],
)
def test_a_restatement_that_agrees_still_scores(problem_type, response, gold):
    assert _score(problem_type, response, gold).accuracy == 1


@pytest.mark.parametrize(
    "response",
    [
        "<answer>[12.3s, 18.0s]</answer>",
        "<answer>[12.3 s, 18.0 s]</answer>",
        "<answer>(12.3s, 18.0s)</answer>",
        "<answer>[12.3 seconds, 18.0 seconds]</answer>",
        "<answer>[00:12.3, 00:18]</answer>",
        "<answer>[0:12.3, 0:18]</answer>",
    ],
)
def test_a_bracketed_pair_of_times_with_units_is_an_interval(response):
    assert _score("temporal grounding", response, "[12.3, 18.0]").accuracy == 1


@pytest.mark.parametrize(
    ("response", "gold"),
    [
        ("<answer>[[C]]</answer>", "Tie"),
        ("<answer>[[A]]</answer>", "Response 1"),
        ("<answer>[[B]]</answer>", "Response 2"),
    ],
)
def test_mt_bench_verdict_labels(response, gold):
    """MT-bench's judge prompt asks for `[[A]]`, `[[B]]` or `[[C]]` (a tie)."""
    assert _score("critic", response, gold).accuracy == 1


@pytest.mark.parametrize(
    "response",
    [
        "Left: 2 dogs. Right: 2 dogs. Total: 4 dogs.",
        "Left: 2 dogs. Right: 2 dogs. **Total: 4**",
        "<answer>4 (2 black, 2 white)</answer>",
        "<answer>4 (2 black and 2 white)</answer>",
        "<answer>4 dogs: 2 black and 2 white</answer>",
    ],
)
def test_a_labelled_total_or_a_breakdown_that_sums_to_it_is_the_count(response):
    assert _score("numerical", response, "4").accuracy == 1


@pytest.mark.parametrize(
    "response",
    [
        "<answer>4 (2 black and 3 white)</answer>",
        "<answer>4 (5)</answer>",
        "Left: 2 dogs. Right: 3 dogs. Total: 4 or 5 dogs.",
        "<answer>4 dogs: 2 black and 3 white</answer>",
    ],
)
def test_a_breakdown_that_does_not_sum_or_a_hedged_total_scores_zero(response):
    assert _score("numerical", response, "4").accuracy == 0


@pytest.mark.parametrize(
    "response",
    [
        '<answer>The sign says "EXIT 12".</answer>',
        '<answer>The text reads: "EXIT 12"</answer>',
        "<answer>The text reads: \u201cEXIT 12\u201d</answer>",
    ],
)
def test_ocr_text_quoted_in_a_sentence_is_the_answer(response):
    assert _score("ocr", response, "EXIT 12").accuracy == 1


@pytest.mark.parametrize(
    "response",
    [
        '<answer>The sign says "EXIT 12" or "EXIT 13".</answer>',
        '<answer>The sign says "EXIT 13".</answer>',
        "<answer>EXIT 12 or EXIT 13</answer>",
    ],
)
def test_ocr_quoted_hedges_and_wrong_readings_score_below_one(response):
    assert _score("ocr", response, "EXIT 12").accuracy < 1


@pytest.mark.parametrize(
    ("response", "gold"),
    [
        ("<answer>kitchen</answer>", "in the kitchen"),
        ("<answer>The kitchen.</answer>", "in the kitchen"),
        ("<answer>the table</answer>", "on the table"),
    ],
)
def test_the_place_alone_states_a_short_gold_place_phrase(response, gold):
    assert _score("open-ended", response, gold).accuracy == 1


@pytest.mark.parametrize(
    ("response", "gold"),
    [
        ("<answer>bedroom</answer>", "in the kitchen"),
        ("<answer>not the kitchen</answer>", "in the kitchen"),
        ("<answer>kitchen or bedroom</answer>", "in the kitchen"),
        ("<answer>kitchen</answer>", "outside the kitchen"),
    ],
)
def test_a_wrong_or_hedged_place_scores_zero(response, gold):
    assert _score("open-ended", response, gold).accuracy == 0


@pytest.mark.parametrize(
    ("problem_type", "response", "gold"),
    [
        ("temporal grounding", '<answer>{"time": [NaN, 20]}</answer>', "[10, 20]"),
        ("temporal grounding", '<answer>{"time": [-Infinity, Infinity]}</answer>', "[10, 20]"),
        ("temporal grounding", "<answer>[10, 2" + "0" * 5000 + "]</answer>", "[10, 20]"),
        ("spatial grounding", "<answer>[NaN, NaN, NaN, NaN]</answer>", "[10, 20, 110, 220]"),
        ("spatial grounding", "<answer>[10, NaN, 110, 220]</answer>", "[10, 20, 110, 220]"),
        ("numerical", "<answer>" + "9" * 5000 + "</answer>", "4"),
        ("regression", "<answer>" + "9" * 5000 + "</answer>", "4"),
        ("regression", "<answer>nan</answer>", "5"),
        ("regression", "<answer>∞</answer>", "5"),
        ("math", r"\boxed{" + "9" * 5000 + "}", "4"),
        ("math", r"\boxed{\pm 2}", "2"),
    ],
)
def test_non_finite_and_huge_numbers_score_zero_without_error(problem_type, response, gold):
    result = _score(problem_type, response, gold)
    assert result.status == "ok"
    assert result.accuracy == 0


# --------------------------------------------------------------------------------------------
# Section 1: the code reward
# --------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _code_fn():
    fn = reward_function_for("code")
    probe = fn(
        "```python\ndef f(x):\n    return x * 2\n```",
        {"entry_point": "f", "tests": ["assert f(2) == 4"]},
    )
    if probe.status != "ok" or probe.accuracy != 1:
        pytest.skip(f"code sandbox unavailable here: {probe.details.get('sandbox')}")
    return fn


def _as_check(test: str) -> list[str]:
    """The same assertion in HumanEval's layout (decided in the tests' own process)."""
    body = test.replace("f()", "candidate()")
    return [f"def check(candidate):\n    {body}\ncheck(f)"]


LYING_SOLUTIONS = {
    "list_subclass_iter": (
        "class L(list):\n"
        "    def __iter__(self): return iter([4])\n"
        "    def __len__(self): return 1\n"
        "    def __getitem__(self, i): return 4\n"
        "def f(): return L([5])",
        "assert f() == [4]",
    ),
    "dict_subclass_items": (
        "class D(dict):\n"
        "    def items(self): return iter([('a', 4)])\n"
        "    def __iter__(self): return iter(['a'])\n"
        "    def __getitem__(self, k): return 4\n"
        "def f(): return D(a=5)",
        "assert f() == {'a': 4}",
    ),
    "str_subclass_str": (
        "class S(str):\n"
        "    def __str__(self): return 'abc'\n"
        "    def __repr__(self): return \"'abc'\"\n"
        "    def encode(self, *a, **k): return b'abc'\n"
        "    def __iter__(self): return iter('abc')\n"
        "def f(): return S('xyz')",
        "assert f() == 'abc'",
    ),
    "int_subclass_repr": (
        "class I(int):\n"
        "    def __repr__(self): return '4'\n"
        "    __str__ = __repr__\n"
        "    def __index__(self): return 4\n"
        "    def __int__(self): return 4\n"
        "def f(): return I(5)",
        "assert f() == 4",
    ),
    "float_subclass_repr": (
        "class F(float):\n"
        "    def __repr__(self): return '4.0'\n"
        "    def __float__(self): return 4.0\n"
        "    def hex(self): return (4.0).hex()\n"
        "def f(): return F(5.0)",
        "assert f() == 4.0",
    ),
    "one_for_true": ("def f(): return 1", "assert f() is True"),
    "bool_for_int": ("def f(): return True", "assert type(f()) is int"),
    "negative_zero": ("def f(): return -0.0", "assert str(f()) == '0.0'"),
    "float_rounding": ("def f(): return 0.3", "assert f() == 0.1 + 0.2"),
    "float_for_big_int": ("def f(): return 1e30", "assert f() == 10**30"),
    "list_for_tuple": ("def f(): return [1, 2]", "assert f() == (1, 2)"),
    "generator_for_list": ("def f(): return (i for i in range(3))", "assert f() == [0, 1, 2]"),
    "huge_int": ("def f(): return 10**5000 + 1", "assert f() == 10**5000"),
    "lone_surrogate": ("def f(): return '\\ud800'", "assert f() == 'a'"),
    "bytearray_for_bytes": ("def f(): return bytearray(b'a')", "assert isinstance(f(), bytes)"),
    "frozenset_for_set": ("def f(): return frozenset({1})", "assert type(f()) is set"),
    "cyclic_list": ("def f():\n    a = []\n    a.append(a)\n    return a", "assert f() == []"),
    "exit_at_import": ("import os\nos._exit(0)\ndef f(): return 5", "assert f() == 4"),
    "exit_in_call": ("import os\ndef f(): os._exit(0)", "assert f() == 4"),
    "sys_exit": ("import sys\ndef f(): sys.exit(0)", "assert f() == 4"),
    "keyboard_interrupt": ("def f(): raise KeyboardInterrupt", "assert f() == 4"),
    "generator_exit": ("def f(): raise GeneratorExit", "assert f() == 4"),
    "base_exception_group": (
        "def f(): raise BaseExceptionGroup('x', [KeyboardInterrupt()])",
        "assert f() == 4",
    ),
    "stop_iteration": ("def f(): raise StopIteration", "assert f() == 4"),
    "atexit_exit": (
        "import atexit, os\natexit.register(lambda: os._exit(0))\ndef f(): raise ValueError",
        "assert f() == 4",
    ),
    "kill_self": (
        "import os, signal\ndef f(): os.kill(os.getpid(), signal.SIGKILL)",
        "assert f() == 4",
    ),
    "fake_protocol_lines": (
        "import sys\n"
        "def f():\n"
        '    print(\'PASS\\n{"status": "passed"}\', flush=True)\n'
        "    sys.stderr.write('passed\\n')\n"
        "    return 5",
        "assert f() == 4",
    ),
    "read_stdin": ("import sys\ndef f(): return sys.stdin.read(10)", "assert f() == 4"),
    "memory_bomb": ("def f():\n    x = [0] * (10**10)\n    return 4", "assert f() == 4"),
    "recursion": ("def f(): return f()", "assert f() == 4"),
}


@pytest.mark.parametrize("layout", ["plain", "check"])
@pytest.mark.parametrize("name", sorted(LYING_SOLUTIONS))
def test_code_that_lies_about_its_value_or_exits_early_scores_zero(name, layout):
    fn = _code_fn()
    code, test = LYING_SOLUTIONS[name]
    tests = [test] if layout == "plain" else _as_check(test)
    result = fn(f"```python\n{code}\n```", {"entry_point": "f", "tests": tests})
    assert result.status == "ok", result.details
    assert result.accuracy == 0, result.details.get("sandbox")


@pytest.mark.parametrize(
    "response",
    [
        # The last block that defines the entry point is the answer: a later alternative wins.
        "```python\ndef f(x):\n    return x * 2\n```\nAlternatively:\n"
        "```python\ndef f(x):\n    return x + 2\n```",
        # Code only inside <think> is no answer.
        "<think>```python\ndef f(x):\n    return x * 2\n```</think>\nDone.",
        # The solution's own (wrong) assertions run with it.
        "```python\ndef f(x):\n    return x * 2\n\nassert f(3) == 7\n```",
    ],
)
def test_code_extraction_alternatives_score_zero(response):
    fn = _code_fn()
    result = fn(response, {"entry_point": "f", "tests": ["assert f(3) == 6"]})
    assert result.accuracy == 0
