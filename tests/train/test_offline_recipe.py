"""A recipe's ``offline:`` section: strict checks (all at once), the backends' refusals naming
the backend, and the checks against the store at ``validate`` and ``train``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from videorl_kit.cli import BACKENDS, app
from videorl_kit.core.errors import UserError
from videorl_kit.spec.loader import SpecError
from videorl_kit.train.demo import write_demo_recipe
from videorl_kit.train.offline.importer import import_trajectories
from videorl_kit.train.plan import plan_training
from videorl_kit.train.recipe import load_recipe

GOLD = {"synth-count-0000": "2", "synth-count-0001": "2", "synth-image-count-0000": "1",
        "synth-image-count-0001": "4"}  # fmt: skip


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """The demo task, its store and recipe (group size 2)."""
    return write_demo_recipe(tmp_path_factory.mktemp("offline-recipe"))


@pytest.fixture
def recipe(demo, tmp_path) -> Path:
    """A copy of the demo folder, so each test can change its recipe and store."""
    shutil.copytree(demo.parent, tmp_path / "demo", ignore=shutil.ignore_patterns("runs"))
    return tmp_path / "demo" / demo.name


def with_offline(recipe: Path, section: str, extra: str = "") -> Path:
    recipe.write_text(recipe.read_text() + f"offline: {section}\n{extra}")
    return recipe


def import_rows(recipe: Path, rows: list[dict], source: str = "curated") -> None:
    file = recipe.parent / f"{source}.jsonl"
    file.write_text("".join(json.dumps({"task_id": "demo", **r}) + "\n" for r in rows))
    import_trajectories([file], recipe.parent / "store", source=source)


def issues(recipe: Path) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_recipe(recipe, backends=BACKENDS)
    return [f"{i.line} {i.path}: {i.message}" for i in caught.value.issues]


def test_every_problem_of_the_section_is_reported_at_once(recipe):
    with_offline(recipe, "{source: curated, per_group: 2, when: below_accuracy, is_cap: 3,"
                         " correction: none}")  # fmt: skip
    found = issues(recipe)
    assert len(found) == 3
    assert found[0].startswith("11 offline.per_group: per_group 2 leaves no online member in a "
                               "group of rollout.group_size 2; choose 1 to 1")  # fmt: skip
    assert "offline.accuracy_threshold: when: below_accuracy needs accuracy_threshold" in found[1]
    assert "offline.is_cap: is_cap is only read with correction: truncated_is" in found[2]


def test_correction_has_no_default_and_unknown_keys_are_refused(recipe):
    with_offline(recipe, "{source: curated, min_reward: 1.5, selct: best}")
    found = issues(recipe)
    assert any("offline.correction: missing required field" in line for line in found)
    assert any("offline.min_reward" in line for line in found)
    assert any("offline.selct" in line and "did you mean 'select'" in line for line in found)


def test_trl_refuses_mixing_into_rloo_naming_the_backend(recipe):
    text = recipe.read_text().replace("algorithm: {name: grpo}", "algorithm: {name: rloo}")
    recipe.write_text(text)
    with_offline(recipe, "{source: curated, correction: none}")
    [problem] = issues(recipe)
    assert "backend trl mixes offline members into GRPOTrainer's groups; algorithm rloo" in problem


def test_openrlhf_refusals_name_the_backend(recipe):
    text = recipe.read_text().replace("algorithm: {name: grpo}", "algorithm: {name: gspo}")
    recipe.write_text(text + "openrlhf: {nodes: 1, gpus_per_node: 1, vllm_engines: 1, video: native, "
                      "extra_args: {--eval.dataset: x.jsonl}}\n")  # fmt: skip
    with_offline(recipe, "{source: curated, correction: truncated_is}")
    with pytest.raises(SpecError) as caught:
        load_recipe(recipe, backend="openrlhf", backends=BACKENDS)
    found = [i.message for i in caught.value.issues]
    assert any(m.startswith("backend openrlhf: truncated_is is OpenRLHF's token-level clip "
                            "correction") and "policy loss gspo" in m for m in found)  # fmt: skip
    assert any(m.startswith("backend openrlhf: --eval.dataset with offline mixing") for m in found)
    recipe.write_text(recipe.read_text().replace(
        "--eval.dataset: x.jsonl", "--algo.advantage.is_correction_level: token"
    ).replace("correction: truncated_is", "correction: recompute"))  # fmt: skip
    with pytest.raises(SpecError) as caught:
        load_recipe(recipe, backend="openrlhf", backends=BACKENDS)
    [problem] = caught.value.issues
    assert problem.path == "offline.correction"
    assert "--algo.advantage.is_correction_level token" in problem.message
    assert load_recipe(recipe, backend="trl").recipe.offline.correction == "recompute"


def test_validate_checks_the_section_against_the_store_and_shows_counts(recipe):
    with_offline(recipe, "{source: [curated, 'eval:*'], min_reward: 1.0, correction: none}")
    runner = CliRunner()
    done = runner.invoke(app, ["validate", str(recipe)])
    assert done.exit_code == 1
    assert f"{recipe}:11: offline.source: no graded trajectory of the tasks (demo) from source " \
           "['curated', 'eval:*'] with reward ≥ 1.0 is in the store" in done.stdout  # fmt: skip
    import_rows(recipe, [
        {"sample_id": "synth-count-0000", "response": "<answer>2</answer>"},
        {"sample_id": "synth-count-0000", "response": "<think>two</think><answer>2</answer>"},
        {"sample_id": "synth-count-0001", "response": "<answer>7</answer>"},  # wrong: left out
    ])  # fmt: skip
    done = runner.invoke(app, ["validate", str(recipe)])
    assert done.exit_code == 0, done.stdout
    assert f"{recipe}: offline: demo: 2 trajectories for 1 of 4 ready samples (1 with at " \
           "least 1)" in done.stdout  # fmt: skip
    done = runner.invoke(app, ["validate", str(recipe), "--json"])
    assert json.loads(done.stdout)["specs"][0]["notes"][0].startswith("offline: demo: 2 traj")


def test_truncated_is_is_refused_naming_how_many_trajectories_lack_log_probs(recipe):
    from videorl_kit.train.offline.tokens import load_tokenizer

    tokenizer = load_tokenizer("tiny:qwen2.5-vl")
    rows = []
    for sample, gold in GOLD.items():
        text = f"<answer>{gold}</answer>"
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        rows.append({"sample_id": sample, "response": text, "token_ids": ids,
                     "tokenizer": "tiny:qwen2.5-vl", "logprobs": [-0.1] * len(ids)})  # fmt: skip
    rows[0].pop("logprobs")
    rows[1].pop("logprobs")
    import_rows(recipe, rows)
    with_offline(recipe, "{source: curated, correction: truncated_is, is_cap: 2.0}")
    done = CliRunner().invoke(app, ["validate", str(recipe)])
    assert done.exit_code == 1
    assert "offline.correction: truncated_is needs behaviour log-probs, but 2 of the 4 " \
           "trajectories this run can use have none" in done.stdout  # fmt: skip
    with pytest.raises(UserError, match="2 of the 4 trajectories this run can use have none"):
        plan_training(recipe)
    recipe.write_text(recipe.read_text().replace("truncated_is, is_cap: 2.0", "recompute"))
    assert plan_training(recipe).recipe.offline.correction == "recompute"


def test_train_checks_the_store_it_trains_on(recipe, tmp_path):
    other = tmp_path / "other-store"
    shutil.copytree(recipe.parent / "store", other)  # without the trajectories imported next
    import_rows(recipe, [{"sample_id": "synth-count-0000", "response": "<answer>2</answer>"}])
    with_offline(recipe, "{source: curated, correction: none}")
    assert plan_training(recipe).recipe.offline.source == ["curated"]
    with pytest.raises(UserError, match=r"offline\.source: no graded trajectory"):
        plan_training(recipe, store=other)
