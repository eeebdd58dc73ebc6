"""Hypothesis properties of the reward system that are the kit's own (anchors E5).

The verifier contract every verifier keeps (never raises on any response or gold, bounded
time on 1 MB floods, determinism in and across processes, thread safety, picklability, the
gold's forms, wrong answers, hedges, unreadable golds) is checked for each built-in verifier by
the shared suite, ``reward check`` (tests/rewards/test_reward_check.py). Here: what only the
kit's verifiers promise: IoU laws, monotonicity of MRA and of the per-second means, invariance
of the answer slot to case and whitespace, number formats, multiple-choice traps (distracting
reasoning, hedges of up to four letters score exactly 0) and the format rule.
"""

from __future__ import annotations

import json
from functools import cache

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from videorl_kit.core.problem_types import ProblemType
from videorl_kit.rewards.grounding import box_iou, interval_iou, parse_interval_answer
from videorl_kit.rewards.numeric import MraParams, MraVerifier
from videorl_kit.rewards.router import RewardFunction, reward_function_for

#: A valid gold per problem type (and the options of multiple choice).
GOLDS: dict[ProblemType, tuple[str, list[str] | None]] = {
    ProblemType.MULTIPLE_CHOICE: ("C", ["A. Red", "B. Blue", "C. Green", "D. A dog"]),
    ProblemType.NUMERICAL: ("12", None),
    ProblemType.REGRESSION: ("10", None),
    ProblemType.BOOLEAN: ("yes", None),
    ProblemType.TEMPORAL_GROUNDING: ('{"time": [10, 20]}', None),
    ProblemType.SPATIAL_GROUNDING: ('{"boxes": [0, 0, 10, 10]}', None),
    ProblemType.SPATIOTEMPORAL_GROUNDING: (
        '{"time": [1, 3], "boxes": {"1": [0, 0, 10, 10], "2": [0, 0, 10, 10]}}',
        None,
    ),
    ProblemType.TRACKING: ('{"boxes": {"1": [0, 0, 10, 10], "2": [5, 5, 15, 15]}}', None),
    ProblemType.OCR: ("hello world", None),
    ProblemType.OPEN_ENDED: ("a man walks his dog in the park", None),
    ProblemType.MATH: ("\\frac{1}{2}", None),
    ProblemType.CRITIC: ("Response 1", None),
}


@cache
def reward_fn(ptype: ProblemType) -> RewardFunction:
    return reward_function_for(ptype)


# ---------------------------------------------------------------- multiple choice (D2 traps)

filler = st.lists(
    st.sampled_from(
        ["A man", "a dog", "e.g.", "Option A is wrong.", "I think", "B?", "(D)", "Cats", "the"]
    ),
    max_size=6,
).map(" ".join)


@given(letter=st.sampled_from("ABCDEFGH"), reasoning=filler, template=st.integers(0, 3))
@example(letter="C", reasoning="A man opens the door.", template=1)
@example(letter="B", reasoning="e.g. option E", template=2)
def test_choice_extracts_the_stated_letter_despite_distracting_reasoning(
    letter: str, reasoning: str, template: int
) -> None:
    responses_by_template = [
        f"<think>{reasoning}</think><answer>{letter}</answer>",
        f"{reasoning} The answer is ({letter}).",
        f"<think>{reasoning}</think>\nThe answer is {letter}. Option A is incorrect.",
        f"{reasoning}\nFinal answer: {letter}",
    ]
    result = reward_fn(ProblemType.MULTIPLE_CHOICE)(responses_by_template[template], letter)
    assert result.accuracy == 1.0, result.details


@given(
    letters=st.lists(st.sampled_from("ABCD"), min_size=2, max_size=4, unique=True),
    sep=st.sampled_from([" or ", ", ", "/", " and "]),
)
def test_choice_hedges_score_zero(letters: list[str], sep: str) -> None:
    fn = reward_fn(ProblemType.MULTIPLE_CHOICE)
    for gold in letters:
        assert fn(f"<answer>{sep.join(letters)}</answer>", gold).accuracy == 0.0


def _recase(text: str, pattern: list[bool]) -> str:
    return "".join(
        ch.upper() if pattern[i % len(pattern)] else ch.lower() for i, ch in enumerate(text)
    )


@pytest.mark.parametrize(
    ("ptype", "answer", "gold"),
    [
        (ProblemType.MULTIPLE_CHOICE, "c", "C"),
        (ProblemType.MULTIPLE_CHOICE, "green", "C"),
        (ProblemType.BOOLEAN, "yes", "yes"),
        (ProblemType.BOOLEAN, "no, it is not", "yes"),
        (ProblemType.NUMERICAL, "twelve", "12"),
        (ProblemType.CRITIC, "response 1", "Response 1"),
        (ProblemType.OCR, "hello world", "hello world"),
        (ProblemType.OPEN_ENDED, "paris", "Paris"),
    ],
)
@given(
    pattern=st.lists(st.booleans(), min_size=1, max_size=5),
    left=st.sampled_from(["", " ", "\n", "  \t"]),
    right=st.sampled_from(["", " ", "\n", " \n "]),
)
def test_case_and_whitespace_in_the_answer_slot_do_not_change_the_score(
    ptype: ProblemType, answer: str, gold: str, pattern: list[bool], left: str, right: str
) -> None:
    gold_options = GOLDS[ptype][1]
    fn = reward_fn(ptype)
    base = fn(f"<answer>{answer}</answer>", gold, gold_options)
    varied = fn(f"<answer>{left}{_recase(answer, pattern)}{right}</answer>", gold, gold_options)
    assert (varied.accuracy, varied.format, varied.overall) == (
        base.accuracy,
        base.format,
        base.overall,
    )


# ---------------------------------------------------------------- numbers


@given(value=st.integers(0, 10**6))
def test_numeric_formatting_variants_agree(value: int) -> None:
    fn = reward_fn(ProblemType.NUMERICAL)
    gold = str(value)
    for written in (f"{value}", f"{value}.0", f"{value:,}", f"{value} m", f"about {value} items"):
        assert fn(f"<answer>{written}</answer>", gold).accuracy == 1.0, written


@given(
    gold=st.integers(1, 10_000),
    a=st.integers(0, 20_000),
    b=st.integers(0, 20_000),
)
def test_mra_is_monotone_in_relative_error(gold: int, a: int, b: int) -> None:
    mra = MraVerifier(MraParams())
    near, far = sorted((a, b), key=lambda p: abs(p - gold))
    assert mra.score(str(near), str(gold)).accuracy >= mra.score(str(far), str(gold)).accuracy
    assert mra.score(str(gold), str(gold)).accuracy == 1.0


# ---------------------------------------------------------------- IoU laws

coords = st.floats(0, 1000, allow_nan=False, allow_infinity=False)


@st.composite
def intervals(draw: st.DrawFn) -> tuple[float, float]:
    a, b = draw(coords), draw(coords)
    return (min(a, b), max(a, b))


@st.composite
def boxes(draw: st.DrawFn) -> tuple[float, float, float, float]:
    (x1, x2), (y1, y2) = draw(intervals()), draw(intervals())
    return (x1, y1, x2, y2)


@given(intervals(), intervals())
def test_interval_iou_is_symmetric_bounded_and_one_on_identity(a, b) -> None:
    assert interval_iou(a, b) == interval_iou(b, a)
    assert 0.0 <= interval_iou(a, b) <= 1.0
    assert interval_iou(a, a) == 1.0


@given(intervals(), st.floats(0.001, 100))
def test_disjoint_intervals_have_iou_zero(a, gap: float) -> None:
    shifted = (a[1] + gap, a[1] + gap + 1)
    assert interval_iou(a, shifted) == 0.0


@given(boxes(), boxes())
def test_box_iou_is_symmetric_bounded_and_one_on_identity(a, b) -> None:
    assert box_iou(a, b) == box_iou(b, a)
    assert 0.0 <= box_iou(a, b) <= 1.0
    assert box_iou(a, a) == 1.0


def _fmt_time(seconds: int, style: str) -> str:
    if style == "s":
        return str(seconds)
    m, s = divmod(seconds, 60)
    if style == "mm:ss":
        return f"{m:02d}:{s:02d}"
    h, m = divmod(m, 60)
    return f"{h:02d}:{m:02d}:{s:02d}"


@given(
    start=st.integers(0, 3599),
    length=st.integers(0, 3000),
    style=st.sampled_from(["s", "mm:ss", "hh:mm:ss"]),
    template=st.sampled_from(
        ["from {a} to {b} seconds", "{a}-{b}", "{a} to {b}", '["{a}", "{b}"]']
    ),
)
def test_time_ranges_round_trip(start: int, length: int, style: str, template: str) -> None:
    end = start + length
    if style == "mm:ss" and end >= 6000:
        end = start
    if style == "s" and "seconds" not in template and "[" not in template:
        template = template + " s"
    text = template.format(a=_fmt_time(start, style), b=_fmt_time(end, style))
    assert parse_interval_answer(text) == (float(start), float(end))


@st.composite
def tracks(draw: st.DrawFn) -> dict[str, list[float]]:
    seconds = draw(st.lists(st.integers(0, 30), min_size=1, max_size=8, unique=True))
    return {str(s): list(draw(boxes())) for s in seconds}


@pytest.mark.parametrize(
    "ptype", [ProblemType.TRACKING, ProblemType.SPATIOTEMPORAL_GROUNDING], ids=str
)
@given(gold=tracks(), pred=tracks(), drop=st.data())
def test_omitting_seconds_never_increases_the_reward(ptype, gold, pred, drop) -> None:
    gold = {k: v for k, v in gold.items() if v[0] < v[2] and v[1] < v[3]}
    if not gold:
        return
    fn = reward_fn(ptype)
    time_part = {"time": [0, 10]} if ptype is ProblemType.SPATIOTEMPORAL_GROUNDING else {}
    pred = {**pred, **{k: v for k, v in gold.items() if drop.draw(st.booleans())}}
    gold_text = json.dumps({**time_part, "boxes": gold})
    full = fn(f"<answer>{json.dumps({**time_part, 'boxes': pred})}</answer>", gold_text)
    kept = drop.draw(st.lists(st.sampled_from(sorted(pred)), unique=True)) if pred else []
    if time_part:  # vIoU: a box outside the gold's seconds costs; only gold seconds are dropped
        kept = sorted(set(kept) | (set(pred) - set(gold)))
    fewer = {k: pred[k] for k in kept}
    partial = fn(f"<answer>{json.dumps({**time_part, 'boxes': fewer})}</answer>", gold_text)
    assert partial.accuracy <= full.accuracy + 1e-12


@given(gold=tracks(), pred=tracks(), extra=tracks())
def test_an_extra_second_never_increases_the_spatiotemporal_reward(gold, pred, extra) -> None:
    gold = {k: v for k, v in gold.items() if v[0] < v[2] and v[1] < v[3]}
    if not gold:
        return
    fn = reward_fn(ProblemType.SPATIOTEMPORAL_GROUNDING)
    gold_text = json.dumps({"time": [0, 10], "boxes": gold})
    more = {**pred, **{k: v for k, v in extra.items() if k not in gold and k not in pred}}
    base = fn(json.dumps({"time": [0, 10], "boxes": pred}), gold_text)
    added = fn(json.dumps({"time": [0, 10], "boxes": more}), gold_text)
    assert added.accuracy <= base.accuracy + 1e-12


# ---------------------------------------------------------------- format rule


@given(think=st.text(max_size=40), answer=st.text(min_size=1, max_size=40))
def test_one_think_and_one_answer_pass_duplicates_fail(think: str, answer: str) -> None:
    fn = reward_fn(ProblemType.OPEN_ENDED)
    tags = ("<answer>", "</answer>", "<think>", "</think>", "<|", "<thought>", "</thought>")
    if any(t in (think + answer).lower() for t in tags) or not answer.strip():
        return
    assert fn(f"<think>{think}</think><answer>{answer}</answer>", "x").format == 1.0
    assert fn(f"<answer>{answer}</answer>", "x").format == 1.0
    assert fn(f"<answer>{answer}</answer><answer>{answer}</answer>", "x").format == 0.0
    assert (
        fn(f"<think>{think}</think><think>{think}</think><answer>{answer}</answer>", "x").format
        == 0.0
    )
