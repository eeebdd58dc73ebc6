"""GRPO through TRL's real GRPOTrainer on the tiny models, with frames from the cache."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
import yaml

from tests.train import world
from videorl_kit.adapters.trl import TrlBackend
from videorl_kit.train.metrics import read_metrics
from videorl_kit.train.plan import plan_training
from videorl_kit.train.run import run_training
from videorl_kit.train.tiny_model import FAMILIES

TIMING = {"step_time", "train_runtime", "train_samples_per_second", "train_steps_per_second"}


def train(root: Path, family: str, name: str, **settings) -> Path:
    output = root / "runs" / name
    recipe = root / f"{name}.yaml"
    recipe.write_text(world.recipe_text(family, root / f"store-{family}", output, **settings))
    run_training(plan_training(recipe), TrlBackend())
    return output


@pytest.fixture(scope="module")
def runs(train_world: Path) -> dict[str, Path]:
    """Three GRPO steps per model family."""
    return {family: train(train_world, family, f"three-{family}") for family in FAMILIES}


@pytest.mark.parametrize("family", FAMILIES)
def test_three_grpo_steps_train_language_and_vision(runs: dict[str, Path], family: str) -> None:
    records = read_metrics(runs[family] / "metrics.jsonl")
    assert [r["step"] for r in records] == [1, 2, 3]
    for record in records:
        assert math.isfinite(record["loss"])
    varied = [r for r in records if r["frac_reward_zero_std"] < 1]
    assert varied, "no step had rewards that vary within a group"
    for record in varied:
        assert record["grad_norm/language"] > 0
        assert record["grad_norm/vision"] > 0


@pytest.mark.parametrize("family", FAMILIES)
def test_rewards_reach_each_tasks_own_verifier(runs: dict[str, Path], family: str) -> None:
    """`routing` rows would score ~0.5 under `parity`'s verifier; under their own they get 0."""
    records = read_metrics(runs[family] / "metrics.jsonl")
    parity = [r["rewards/parity/mean"] for r in records if r.get("rewards/parity/mean") is not None]
    routing = [
        r["rewards/routing/mean"] for r in records if r.get("rewards/routing/mean") is not None
    ]
    assert parity and routing, "both routing tasks must be drawn in three steps"
    assert max(parity) > 0
    assert routing == [0.0] * len(routing)
    assert all(
        r["routing/format"] == 1.0 for r in records if "routing/format" in r
    )  # format rule "none": every completion is in format


@pytest.mark.parametrize("family", FAMILIES)
def test_run_folder_holds_the_record(runs: dict[str, Path], family: str) -> None:
    run = runs[family]
    resolved = yaml.safe_load((run / "recipe.resolved.yaml").read_text())
    assert resolved["algorithm"]["backend_options"]["loss_type"] == "grpo"
    assert {t["id"] for t in resolved["tasks"]} == {
        "count", "multiple-choice", "boolean", "image-count", "parity", "routing",
    }  # fmt: skip
    specs = json.loads((run / "specs.json").read_text())
    assert all(len(t["sha256"]) == 64 and t["ready_samples"] == 2 for t in specs["tasks"])
    versions = json.loads((run / "versions.json").read_text())
    assert versions["packages"]["trl"].startswith("1.16")
    config = json.loads((run / "trl_config.json").read_text())
    assert config["trainer"] == "GRPOTrainer" and config["config"]["beta"] == 0.04
    assert (run / "checkpoint-3" / "trainer_state.json").is_file()
    assert (run / "model" / "model.safetensors").is_file()
    assert (run / "base-model" / "config.json").is_file()
    card = (run / "README.md").read_text()
    assert f"base_model: tiny:{family}" in card and "GRPO" in card  # the base model is named
    completions = [
        json.loads(line) for line in (run / "completions.jsonl").read_text().splitlines()
    ]
    assert completions and {c["step"] for c in completions} == {1}  # step 1, then every 10
    assert all(c["prompt"] and "gold" in c and "extracted" in c for c in completions)


def _weights(folder: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(folder / "model.safetensors")


def _training_records(run: Path) -> list[dict]:
    return [
        {k: v for k, v in r.items() if k not in TIMING}
        for r in read_metrics(run / "metrics.jsonl")
        if "loss" in r
    ]


def test_resume_gives_the_same_weights_and_metrics(train_world: Path) -> None:
    """2 steps, then --resume to 4, equals 4 uninterrupted steps with the same seed."""
    family = "qwen2.5-vl"
    straight = train(train_world, family, "straight", steps=4, save_steps=2)
    output = train_world / "runs" / "resumed"
    recipe = train_world / "resumed.yaml"
    recipe.write_text(
        world.recipe_text(family, train_world / f"store-{family}", output, steps=4, save_steps=2)
    )
    run_training(plan_training(recipe, max_steps=2), TrlBackend())
    assert [r["step"] for r in _training_records(output)] == [1, 2]
    run_training(plan_training(recipe, resume=True), TrlBackend())
    assert _training_records(output) == _training_records(straight)
    a, b = _weights(straight / "model"), _weights(output / "model")
    assert a.keys() == b.keys()
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=0, msg=key)
    assert not torch.equal(a[next(iter(a))], _weights(straight / "base-model")[next(iter(a))])
