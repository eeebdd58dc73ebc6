"""TaskReward: per-row routing of a spec's rewards, on the public sets' layout."""

from __future__ import annotations

import pickle
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.public_layout import MIXED_SPEC, write_mixed
from videorl_kit.rewards.router import reward_function_for, reward_function_from_spec
from videorl_kit.rewards.task import TaskReward
from videorl_kit.spec import load_spec
from videorl_kit.spec.data import iter_samples

# one good response per row of tests.public_layout.MIXED_ROWS, in order
GOOD = [
    "<think>green</think><answer>B</answer>",
    "<answer>3.4</answer>",  # within the spec's abs_tol 0.5 for numerical
    "<answer>stop</answer>",
    "<answer>a green bar moves from left to right</answer>",
    "<answer>40</answer>",
]


@pytest.fixture
def mixed(tmp_path: Path):
    spec = load_spec(write_mixed(tmp_path))
    return spec, list(iter_samples(spec))


def test_each_row_is_scored_by_its_own_types_verifier(mixed) -> None:
    spec, samples = mixed
    task = TaskReward.from_spec(spec)
    results = [task.score_sample(s, r) for s, r in zip(samples, GOOD, strict=True)]
    assert [r.overall for r in results] == [1.0] * 5
    assert [r.details["verifier"] for r in results] == [
        "choice@2", "numeric@2", "wer@2", "rouge@2", "mra@2",
    ]  # fmt: skip
    # a paraphrase of the free-form gold earns ROUGE credit; one fixed "choice" verifier (what
    # a single-type spec applied to every row) gave it 0
    paraphrase = "<answer>the green bar moves to the right</answer>"
    assert task.score_sample(samples[3], paraphrase).accuracy > 0.5
    assert reward_function_for("multiple_choice")(paraphrase, samples[3].answer).accuracy == 0.0
    # the spec's verifiers map is used (abs_tol 0.5), the registry default otherwise
    assert task.function_for("numerical").params.abs_tol == 0.5
    assert task.function_for("regression").verifier_name == "mra"
    wrong = task.score_sample(samples[4], "<answer>50</answer>")
    assert 0.0 < wrong.accuracy < 1.0  # MRA, not exact match


def test_weights_and_format_rule_come_from_the_spec(tmp_path: Path) -> None:
    text = MIXED_SPEC + "reward: {format: none, weights: {accuracy: 1.0, format: 0.0}}\n"
    spec = load_spec(write_mixed(tmp_path, spec=text))
    sample = next(iter_samples(spec))
    task = TaskReward.from_spec(spec)
    assert task.score_sample(sample, "B").overall == 1.0
    default = TaskReward.from_spec(load_spec(write_mixed(tmp_path / "d")))
    assert default.score_sample(sample, "B").overall == pytest.approx(0.9)


def test_rows_the_task_cannot_score_are_unverifiable_never_zero(mixed) -> None:
    spec, samples = mixed
    task = TaskReward.from_spec(spec)
    assert task.score("<answer>3</answer>", "3").status == "unverifiable"
    assert task.score("<answer>3</answer>", "3", problem_type="poetry").details["reason"] == (
        "unknown problem type 'poetry'; valid types: "
        + ", ".join(t.value for t in type(samples[0].problem_type))
    )
    one_type = TaskReward.from_spec(
        spec.model_copy(update={"problem_type": samples[0].problem_type, "verifiers": {}})
    )
    result = one_type.score("<answer>3</answer>", "3", problem_type="number")
    assert result.status == "unverifiable"
    assert result.details["reason"] == "problem type 'number' is not task mixed's multiple_choice"
    assert one_type.score("<answer>B</answer>", "B").overall == 1.0  # no type: the task's own


def test_a_skipped_sample_is_unverifiable(tmp_path: Path) -> None:
    spec = load_spec(write_mixed(tmp_path, [{"problem": "q", "solution": "<answer>1</answer>"}]))
    (sample,) = iter_samples(spec)
    result = TaskReward.from_spec(spec).score_sample(sample, "<answer>1</answer>")
    assert result.status == "unverifiable" and "no problem type" in result.details["reason"]


def test_reward_function_from_spec_per_row(mixed) -> None:
    spec, _ = mixed
    assert reward_function_from_spec(spec, "numerical").params.abs_tol == 0.5
    with pytest.raises(ValueError, match="routes per row"):
        reward_function_from_spec(spec)


def test_picklable_and_thread_safe(mixed) -> None:
    spec, samples = mixed
    task = pickle.loads(pickle.dumps(TaskReward.from_spec(spec)))
    jobs = [(s, r) for s, r in zip(samples, GOOD, strict=True)] * 40
    serial = [task.score_sample(s, r).to_dict() for s, r in jobs]
    with ThreadPoolExecutor(max_workers=8) as pool:
        threaded = list(pool.map(lambda job: task.score_sample(*job).to_dict(), jobs))
    assert threaded == serial
