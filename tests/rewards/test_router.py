"""Reward functions: weights, statuses, error containment, batch API, specs, pickling."""

from __future__ import annotations

import pickle
from types import SimpleNamespace as NS

import pytest

from videorl_kit.core.problem_types import ProblemType
from videorl_kit.core.verifiers import NoParams, UnknownVerifierError, register_verifier
from videorl_kit.rewards.base import VerifyOutcome
from videorl_kit.rewards.result import RewardResult
from videorl_kit.rewards.router import reward_function_for, reward_function_from_spec


def test_overall_is_the_weighted_sum() -> None:
    fn = reward_function_for("multiple_choice")
    assert fn("<answer>B</answer>", "B").overall == 1.0
    assert fn("The answer is B", "B").overall == pytest.approx(0.9)
    assert fn("<answer>A</answer>", "B").overall == pytest.approx(0.1)
    custom = reward_function_for("multiple_choice", weights=(0.5, 0.5))
    assert custom("The answer is B", "B").overall == 0.5


@pytest.mark.parametrize(
    "weights", [(1.0, 0.5), (-0.1, 1.0), (0.0, 0.0), (float("nan"), 0.1), (1.0,)]
)
def test_bad_weights_are_configuration_errors(weights: tuple[float, ...]) -> None:
    with pytest.raises(ValueError, match="weights"):
        reward_function_for("boolean", weights=weights)


def test_unverifiable_gold_is_never_a_silent_zero() -> None:
    result = reward_function_for("numerical")("<answer>5</answer>", "five or six")
    assert result.status == "unverifiable"
    assert (result.accuracy, result.overall) == (0.0, 0.0)
    assert result.format == 1.0
    assert "reason" in result.details


def test_hedged_answer_scores_zero_even_if_one_block_is_right() -> None:
    result = reward_function_for("multiple_choice")("<answer>A</answer><answer>B</answer>", "B")
    assert (result.accuracy, result.format, result.status) == (0.0, 0.0, "ok")
    assert "hedge" in result.details["reason"]


def test_empty_answer_block_scores_zero() -> None:
    # Visual-RFT#176: empty <answer></answer> scored 1 under two-way substring matching.
    for ptype, gold in [("open_ended", "kitchen"), ("ocr", "x"), ("multiple_choice", "A")]:
        assert reward_function_for(ptype)("<answer></answer>", gold).overall == 0.0


def test_special_tokens_in_responses_are_ignored() -> None:
    fn = reward_function_for("boolean")
    result = fn("<|video_pad|><think>x</think><answer>yes<|im_end|></answer><|endoftext|>", "yes")
    assert (result.accuracy, result.format) == (1.0, 1.0)


def test_aliases_and_defaults() -> None:
    fn = reward_function_for("spatial-temporal grounding")
    assert fn.problem_type is ProblemType.SPATIOTEMPORAL_GROUNDING
    assert (fn.verifier_name, fn.verifier_version) == ("spatiotemporal_iou", 2)


def test_verifier_argument_forms() -> None:
    assert reward_function_for("numerical", verifier="numeric").verifier_name == "numeric"
    fn = reward_function_for("numerical", verifier=("numeric", 2, {"abs_tol": 0.5}))
    assert fn("<answer>3.4</answer>", "3").accuracy == 1.0
    assert reward_function_for("numerical", verifier=("mra", None)).verifier_name == "mra"


def test_configuration_errors_are_raised_at_build_time() -> None:
    with pytest.raises(ValueError, match="unknown problem type"):
        reward_function_for("poetry")
    with pytest.raises(UnknownVerifierError):
        reward_function_for("numerical", verifier=("numerik", 2, {}))
    with pytest.raises(ValueError, match="does not handle problem type"):
        reward_function_for("boolean", verifier=("numeric", 2, {}))
    with pytest.raises(ValueError, match="abs_tol"):
        reward_function_for("numerical", verifier=("numeric", 2, {"abs_tol": "lots"}))
    with pytest.raises(ValueError, match="format rule"):
        reward_function_for("numerical", format_rule="strict")


@register_verifier(name="test_crashy", version=1, problem_types=["open_ended"])
class CrashyVerifier:
    """Raises on every answer (tests the router's containment)."""

    def __init__(self, params: NoParams) -> None:
        self.params = params

    def score(self, answer_text, gold, options=None):
        raise KeyError("boom")


@register_verifier(name="test_out_of_range", version=1, problem_types=["open_ended"])
class OutOfRangeVerifier:
    """Returns an accuracy outside [0, 1] (tests the router's validation)."""

    def __init__(self, params: NoParams) -> None:
        self.params = params

    def score(self, answer_text, gold, options=None):
        return VerifyOutcome(7.0, "ok", {})


def test_a_verifier_that_raises_gives_status_error_with_its_exception() -> None:
    result = reward_function_for("open_ended", verifier="test_crashy")("<answer>x</answer>", "y")
    assert (result.status, result.accuracy, result.overall) == ("error", 0.0, 0.0)
    assert result.masked and result.format == 1.0  # the format is still reported
    assert result.details["error_type"] == "KeyError"
    assert result.details["error"] == "KeyError: 'boom'"
    assert result.details["verifier"] == "test_crashy@1"


def test_a_verifier_returning_nonsense_is_an_error() -> None:
    result = reward_function_for("open_ended", verifier="test_out_of_range")("x", "y")
    assert (result.status, result.accuracy) == ("error", 0.0)
    assert "accuracy" in result.details["error"]


@pytest.mark.parametrize("response", [None, 42, b"bytes", ["<answer>B</answer>"], {"a": 1}])
def test_non_string_responses_never_raise(response: object) -> None:
    result = reward_function_for("multiple_choice")(response, "B")
    assert isinstance(result, RewardResult)
    assert 0.0 <= result.overall <= 1.0


def test_grounding_gold_may_be_a_dict() -> None:
    fn = reward_function_for("temporal_grounding")
    assert fn('<answer>{"time": [0, 10]}</answer>', {"time": [0, 10]}).accuracy == 1.0


def test_options_may_be_a_json_string() -> None:
    fn = reward_function_for("multiple_choice")
    assert fn("<answer>Blue</answer>", "B", '["A. Red", "B. Blue"]').accuracy == 1.0


def test_score_batch_keeps_order_and_accepts_dicts_and_tuples() -> None:
    fn = reward_function_for("multiple_choice")
    items = [
        {"response": "<answer>A</answer>", "answer": "A"},
        ("<answer>B</answer>", "C"),
        ("<answer>Blue</answer>", "B", ["A. Red", "B. Blue"]),
        "not an item",
    ]
    results = fn.score_batch(items)
    assert [r.accuracy for r in results] == [1.0, 0.0, 1.0, 0.0]
    threaded = fn.score_batch(items, max_workers=3)
    assert [r.to_dict() for r in threaded] == [r.to_dict() for r in results]


def test_reward_function_from_spec_reads_attributes_only() -> None:
    spec = NS(
        problem_type=ProblemType.NUMERICAL,
        verifier=NS(name="numeric", version=2, params={"abs_tol": 1.0}),
        reward=NS(format="none", weights=NS(accuracy=0.7, format=0.3)),
    )
    fn = reward_function_from_spec(spec)
    assert (fn.format_rule, fn.weights) == ("none", (0.7, 0.3))
    assert fn("about 11", "12").overall == pytest.approx(1.0)


def test_reward_function_from_a_real_spec_file(tmp_path) -> None:
    from videorl_kit.spec import load_spec

    (tmp_path / "data.jsonl").write_text("", encoding="utf-8")
    spec_file = tmp_path / "count.yaml"
    spec_file.write_text(
        "id: test-count\nversion: 1\nproblem_type: numerical\n"
        "data: {path: data.jsonl}\n"
        "verifier: {name: numeric, version: 2, params: {abs_tol: 0.5}}\n"
        "reward: {format: answer_tag, weights: {accuracy: 0.8, format: 0.2}}\n"
        'prompt: {template: "{{ question }}"}\n',
        encoding="utf-8",
    )
    fn = reward_function_from_spec(load_spec(spec_file))
    assert fn.weights == (0.8, 0.2)
    assert fn("<answer>12.4</answer>", "12").overall == pytest.approx(1.0)


def test_explain_shows_every_step() -> None:
    steps = reward_function_for("mcq").explain("A man enters. The answer is (C).", "C")
    assert steps["extraction"]["final_statement"] == "(C)"
    assert steps["format"]["reason"] == "no <answer> block"
    assert steps["result"]["details"]["pred"] == "C"
    assert steps["result"]["overall"] == pytest.approx(0.9)


def test_reward_function_round_trips_through_pickle() -> None:
    fn = reward_function_for("numerical", verifier=("numeric", 2, {"abs_tol": 0.5}))
    clone = pickle.loads(pickle.dumps(fn))
    for response, gold in [("<answer>3.4</answer>", "3"), ("3 or 4", "3"), ("x", "y")]:
        assert clone(response, gold) == fn(response, gold)


def test_result_validation() -> None:
    with pytest.raises(ValueError):
        RewardResult(1.5, 0.0, 0.0)
    with pytest.raises(ValueError):
        RewardResult(1.0, 0.0, 0.9, "unverifiable")
    with pytest.raises(ValueError):
        RewardResult(0.0, 0.0, 0.0, "maybe")  # type: ignore[arg-type]
