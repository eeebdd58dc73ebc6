"""Regressions from the peer's observed vectors (easyvideor1.md §1.7) and lmms-eval traps (D2).

Each case states our semantics; the comment says where the peer differs and why ours is right.
"""

from __future__ import annotations

import pytest

from videorl_kit.rewards.router import reward_function_for

# (type, response, gold, options, accuracy, format) -- format is binary here (no 0.5 tier).
PEER_TABLE = [
    ("multiple choice", "<think>x</think><answer>B</answer>", "B", None, 1.0, 1.0),
    ("multiple choice", "The answer is B", "B", None, 1.0, 0.0),
    ("multiple choice", "<answer>Blue</answer>", "B", None, 0.0, 1.0),  # no options: not a letter
    ("multiple choice", "<answer></answer>", "A", None, 0.0, 0.0),  # U gives format 0.5
    ("multiple choice", "<answer>Blue</answer>", "Blue", None, 1.0, 1.0),  # V gives 0
    ("numerical", "<answer>3.15</answer>", "3.14", None, 0.0, 1.0),  # V: 1 via abs 0.015
    ("numerical", "<answer>five</answer>", "5", None, 1.0, 1.0),  # U: 0 (float() fails)
    ("regression", "<answer>5</answer>", "4", None, 0.6, 1.0),  # U: 0 (no MRA)
    ("boolean", "<answer>1</answer>", "Yes", None, 1.0, 1.0),  # V: 0; 1 is yes (issue 10)
    (
        "temporal grounding",
        '<answer>{"time":[10,20]}</answer>',
        '{"time":[15,25]}',
        None,
        1 / 3,
        1.0,
    ),
    (
        "spatial-temporal grounding",
        '<answer>{"time":[1,2],"boxes":{"1":[0,0,10,10],"2":[0,0,5,5]}}</answer>',
        '{"time":[1,2],"boxes":{"1":[0,0,10,10]}}',
        None,
        0.75,  # peer: 1.0 (extra seconds ignored); ours: vIoU, second 2 is extra (1 of 2)
        1.0,
    ),
    (
        "tracking",
        '<answer>{"boxes":{"1":[0,0,10,10],"2":[5,5,15,15]}}</answer>',
        '{"boxes":{"1":[0,0,10,10],"2":[0,0,10,10]}}',
        None,
        (1 + 25 / 175) / 2,
        1.0,
    ),
    ("open-ended", "Paris", "paris", None, 1.0, 0.0),  # V: 0.667 (ROUGE on one word)
    ("ocr", "Hello Word", "hello world", None, 0.5, 0.0),  # V: 0 (equality)
    ("math", "the answer is 1/2", "1/2", None, 1.0, 0.0),  # U: 0 (needs tag or box)
    ("llava", "Response 1", "Response A", None, 1.0, 0.0),  # V: 0 (equality)
]


@pytest.mark.parametrize(
    ("ptype", "response", "gold", "options", "accuracy", "fmt"),
    PEER_TABLE,
    ids=lambda v: str(v)[:30],
)
def test_peer_table(ptype, response, gold, options, accuracy, fmt) -> None:
    result = reward_function_for(ptype)(response, gold, options)
    assert result.accuracy == pytest.approx(accuracy), result.details
    assert result.format == fmt


def test_spatiotemporal_one_confident_second_no_longer_gets_full_box_credit() -> None:
    # Peer: mean IoU over the *intersection* of keys, so one right second maximises reward.
    fn = reward_function_for("spatiotemporal grounding")
    gold = '{"time":[1,3],"boxes":{"1":[0,0,10,10],"2":[0,0,10,10],"3":[0,0,10,10]}}'
    result = fn('<answer>{"time":[1,3],"boxes":{"1":[0,0,10,10]}}</answer>', gold)
    assert result.accuracy == pytest.approx(0.5 + 0.5 / 3)


def test_mra_exact_boundaries_do_not_depend_on_float_noise() -> None:
    fn = reward_function_for("regression")
    assert [fn(f"<answer>{p}</answer>", "10").accuracy for p in (10.5, 11, 12, 14, 15, 16)] == [
        1.0,
        0.9,
        0.7,
        0.3,
        0.1,
        0.0,
    ]


# lmms-eval / VideoMathQA / MVBench extraction traps (anchors D2): gold C unless stated.
D2_TRAPS = [
    ("Answer: C", "C", 1.0),  # videomathqa maps this to A
    ("Best option: D", "D", 1.0),  # videomathqa maps this to B
    ("Based on the video, the answer is C", "C", 1.0),  # videomathqa: B
    ("a person opens the door, so (C)", "C", 1.0),  # mvbench mcq_acc: 0
    ("a person opens the door, so (C)", "A", 0.0),  # mvbench mcq_acc: 1 (article "a")
    ("e.g. the answer is B", "E", 0.0),  # mvbench mcq_acc: 1 ("e.g." read as E)
    ("A man opens the door. The answer is (C).", "C", 1.0),  # extract_mcq_answer: A
    ("The answer is B. Option A is incorrect.", "B", 1.0),  # extract_mcq_answer: A
    ("A, B, C, D", "A", 0.0),  # extract_mcq_answer: A; a hedge here
]


@pytest.mark.parametrize(("response", "gold", "accuracy"), D2_TRAPS)
def test_lmms_eval_extraction_traps(response: str, gold: str, accuracy: float) -> None:
    assert reward_function_for("multiple_choice")(response, gold).accuracy == accuracy


def test_math_from_a_worker_thread_is_not_silently_zero() -> None:
    # verl PR#5635: signal.alarm off the main thread made every MATH score 0.
    from concurrent.futures import ThreadPoolExecutor

    fn = reward_function_for("math")
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda r: fn(r, "\\frac{1}{2}"), ["<answer>0.5</answer>"] * 4))
    assert [r.accuracy for r in results] == [1.0] * 4
