"""``reward: {answer_source: answer_tag}``: grade only the ``<answer>`` block, no fallback.

Checked on the reward function itself, through a spec file loaded by the real loader, and
through ``videorl-kit reward score --spec`` and ``reward explain --spec``.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from typer.testing import CliRunner

from videorl_kit.cli import app
from videorl_kit.rewards.router import reward_function_for, reward_function_from_spec
from videorl_kit.rewards.task import TaskReward
from videorl_kit.rewards.trl_functions import TaskRewardFunction
from videorl_kit.spec import SpecError, load_spec

from .specs import write_spec

runner = CliRunner()

UNTAGGED = [
    "The person waves, so the answer is B.",  # final statement
    "Final answer: B",
    "B",  # body
    "<think>the answer is B</think> B",  # body after the think block
]
TAGGED = [
    "<answer>B</answer>",
    "<think>hmm</think><answer>B</answer>",
    "<think>unclosed reasoning <answer>B</answer>",  # an unclosed think ends at <answer>
    "Sure. <answer>B</answer> Done.",  # badly formatted, but the block is there
]


@pytest.mark.parametrize("response", UNTAGGED)
def test_answer_tag_source_gives_no_answer_without_a_block(response: str) -> None:
    auto = reward_function_for("multiple_choice")
    strict = reward_function_for("multiple_choice", answer_source="answer_tag")
    assert auto(response, "B").accuracy == 1.0  # the default falls back
    result = strict(response, "B")
    assert (result.accuracy, result.status) == (0.0, "ok")
    assert result.details["reason"] == "no <answer> block (answer_source: answer_tag)"
    assert result.details["extracted"] is None


def test_an_answer_stated_only_inside_think_is_unanswered_in_both_modes() -> None:
    for source in ("auto", "answer_tag"):
        fn = reward_function_for("multiple_choice", answer_source=source)
        result = fn("<think>So the answer is B.</think>", "B")
        assert (result.accuracy, result.status, result.details["extracted"]) == (0.0, "ok", None)


@pytest.mark.parametrize("response", TAGGED)
def test_answer_tag_source_grades_the_block(response: str) -> None:
    strict = reward_function_for("multiple_choice", answer_source="answer_tag")
    assert strict(response, "B").accuracy == 1.0
    assert strict(response, "C").accuracy == 0.0


def test_answer_tag_source_keeps_hedges_and_empty_blocks_at_zero() -> None:
    strict = reward_function_for("numerical", answer_source="answer_tag")
    assert strict("<answer>3</answer><answer>4</answer>", "3").accuracy == 0.0
    assert strict("<answer></answer> the answer is 3", "3").accuracy == 0.0


def test_answer_source_is_validated_kept_by_pickle_and_explained() -> None:
    with pytest.raises(ValueError, match="unknown answer source 'strict'"):
        reward_function_for("boolean", answer_source="strict")
    strict = pickle.loads(pickle.dumps(reward_function_for("boolean", answer_source="answer_tag")))
    assert strict.answer_source == "answer_tag" and "answer_source='answer_tag'" in repr(strict)
    steps = strict.explain("Yes, it is.", "yes")
    assert steps["answer_source"] == "answer_tag"
    assert steps["extraction"]["answer"] is None and steps["result"]["accuracy"] == 0.0


def _spec(tmp_path: Path, reward: str) -> Path:
    return write_spec(tmp_path, "strict", "multiple_choice", f"reward: {reward}\n", "B")


def test_the_spec_option_reaches_the_reward_function(tmp_path: Path) -> None:
    strict = reward_function_from_spec(load_spec(_spec(tmp_path, "{answer_source: answer_tag}")))
    assert strict.answer_source == "answer_tag"
    assert strict("The answer is B.", "B").accuracy == 0.0
    default = reward_function_from_spec(load_spec(_spec(tmp_path, "{format: answer_tag}")))
    assert default.answer_source == "auto"
    assert default("The answer is B.", "B").accuracy == 1.0


def test_per_row_task_rewards_and_trl_functions_use_it(tmp_path: Path) -> None:
    spec = load_spec(
        write_spec(tmp_path, "mixed", "from_row", "reward: {answer_source: answer_tag}\n", "3")
    )
    task = TaskReward.from_spec(spec)
    assert task.score("So the answer is 3.", "3", problem_type="numerical").accuracy == 0.0
    assert task.score("<answer>3</answer>", "3", problem_type="numerical").accuracy == 1.0
    assert all(fn.answer_source == "answer_tag" for fn in task.functions.values())
    trl = TaskRewardFunction.from_spec(spec)
    rewards = trl(
        prompts=["p", "p"],
        completions=["The answer is B.", "<answer>B</answer>"],
        answer=["B", "B"],
        problem_type=["multiple_choice", "multiple_choice"],
    )
    assert rewards == [0.0, 1.0]


def test_an_unknown_answer_source_is_a_spec_error_naming_the_field(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as info:
        load_spec(_spec(tmp_path, "{answer_source: tags_only}"))
    message = str(info.value)
    assert "strict.yaml:" in message and "reward.answer_source" in message
    assert "'auto'" in message and "'answer_tag'" in message


def test_reward_score_and_explain_with_the_spec_use_it(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "{answer_source: answer_tag}")
    rollouts = tmp_path / "rollouts.jsonl"
    rollouts.write_text(
        json.dumps({"response": "The answer is B.", "answer": "B"})
        + "\n"
        + json.dumps({"response": "<answer>B</answer>", "answer": "B"})
        + "\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["reward", "score", str(rollouts), "--spec", str(spec), "--json"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    assert [r["accuracy"] for r in rows] == [0.0, 1.0]
    explained = runner.invoke(
        app,
        ["reward", "explain", "--spec", str(spec), "--response", "B", "--answer", "B", "--json"],
    )
    assert explained.exit_code == 0, explained.output
    steps = json.loads(explained.stdout)
    assert steps["answer_source"] == "answer_tag" and steps["result"]["accuracy"] == 0.0
