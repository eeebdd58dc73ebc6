"""A verifier that raises gives ``status: error`` (never accuracy 0 with ``ok``), counted and
shown by ``videorl-kit reward score``; trainers mask it like ``unverifiable``.

The raising verifier is a real registered one (no mock of the router): it fails only on answers
that ask it to, so one file mixes graded, erroring, unverifiable and malformed lines.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from typer.testing import CliRunner

from videorl_kit.cli import app
from videorl_kit.core.verifiers import NoParams, register_verifier
from videorl_kit.rewards.base import VerifyOutcome
from videorl_kit.rewards.result import RewardResult
from videorl_kit.rewards.router import reward_function_for
from videorl_kit.rewards.trl_functions import TaskRewardFunction
from videorl_kit.spec import load_spec

from .specs import write_spec

runner = CliRunner()


@register_verifier(name="test_fragile", version=1, problem_types=["open_ended"])
class FragileVerifier:
    """Exact match, but divides by zero on the answer 'divide' and indexes past a list on 'index'
    (stands for a verifier bug that only some inputs reach)."""

    def __init__(self, params: NoParams) -> None:
        self.params = params

    def score(self, answer_text: str, gold: str, options: list[str] | None = None) -> VerifyOutcome:
        if not gold:
            return VerifyOutcome.unverifiable("empty ground truth")
        if answer_text == "divide":
            return VerifyOutcome.ok(1 / len(""))
        if answer_text == "index":
            return VerifyOutcome.ok([1.0][len(answer_text)])
        return VerifyOutcome.ok(1.0 if answer_text == gold else 0.0)


def test_a_raising_verifier_gives_status_error_with_class_and_message() -> None:
    fn = reward_function_for("open_ended", verifier="test_fragile")
    result = fn("<answer>divide</answer>", "x")
    assert result.status == "error"
    assert (result.accuracy, result.overall, result.format) == (0.0, 0.0, 1.0)
    assert result.details["error_type"] == "ZeroDivisionError"
    assert result.details["error"] == "ZeroDivisionError: division by zero"
    assert result.masked
    other = fn("<answer>index</answer>", "x")
    assert (other.status, other.details["error_type"]) == ("error", "IndexError")
    assert fn("<answer>x</answer>", "x").status == "ok"
    assert not fn("<answer>x</answer>", "x").masked


def test_errors_are_contained_in_batches_and_survive_pickling() -> None:
    fn = pickle.loads(pickle.dumps(reward_function_for("open_ended", verifier="test_fragile")))
    results = fn.score_batch(
        [("<answer>x</answer>", "x"), ("<answer>divide</answer>", "x"), ("x", "")],
        max_workers=3,
    )
    assert [r.status for r in results] == ["ok", "error", "unverifiable"]
    assert [r.overall for r in results] == [1.0, 0.0, 0.0]


def test_result_rejects_a_nonzero_score_with_a_masked_status() -> None:
    with pytest.raises(ValueError, match="must score 0"):
        RewardResult(1.0, 1.0, 1.0, "error", {})
    with pytest.raises(ValueError, match="must score 0"):
        RewardResult(0.0, 1.0, 0.1, "unverifiable", {})
    with pytest.raises(ValueError, match="'ok', 'unverifiable' or 'error'"):
        RewardResult(0.0, 0.0, 0.0, "failed", {})  # type: ignore[arg-type]


@pytest.fixture
def scored(tmp_path: Path) -> tuple[Path, Path]:
    verifier = "verifier: {name: test_fragile, version: 1}\n"
    spec = write_spec(tmp_path, "fragile", "open_ended", verifier, "x")
    lines = [
        {"response": "<answer>x</answer>", "answer": "x"},
        {"response": "<answer>divide</answer>", "answer": "x"},
        {"response": "<answer>y</answer>", "answer": ""},
        "not json",
        {"response": "<answer>index</answer>", "answer": "x"},
    ]
    rollouts = tmp_path / "rollouts.jsonl"
    rollouts.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines),
        encoding="utf-8",
    )
    return spec, rollouts


def test_trl_reward_functions_mask_errors_with_none(scored: tuple[Path, Path]) -> None:
    spec, _ = scored
    trl = TaskRewardFunction.from_spec(load_spec(spec))
    rewards = trl(
        prompts=["p"] * 3,
        completions=["<answer>x</answer>", "<answer>divide</answer>", "<answer>y</answer>"],
        answer=["x", "x", "x"],
    )
    assert rewards == [1.0, None, 0.1]  # the wrong answer still earns its format


def test_reward_score_json_reports_error_lines(scored: tuple[Path, Path]) -> None:
    spec, rollouts = scored
    result = runner.invoke(app, ["reward", "score", str(rollouts), "--spec", str(spec), "--json"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    assert [r["status"] for r in rows] == ["ok", "error", "unverifiable", "unverifiable", "error"]
    assert rows[1]["details"]["error_type"] == "ZeroDivisionError"
    assert rows[4]["details"]["error"].startswith("IndexError: ")
    assert all(r["overall"] == 0.0 for r in rows[1:])


def test_reward_score_summary_counts_errors_next_to_unverifiable(scored: tuple[Path, Path]) -> None:
    spec, rollouts = scored
    result = runner.invoke(app, ["reward", "score", str(rollouts), "--spec", str(spec)])
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert "5 lines: 1 graded, 2 unverifiable (1 malformed), 2 errors;" in out
    assert result.stdout.count("│ error ") == 2  # the per-line status ...
    assert "IndexError:" in out  # ... and the exception as the line's note
