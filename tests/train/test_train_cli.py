"""`videorl-kit train` and `plot` from the command line: bad input is one line, exit 1, nothing
written; a dry run writes the run's inputs; a real run ends with a table per task and its
plots come from metrics.jsonl."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.train import world
from videorl_kit.cli import app
from videorl_kit.train.metrics import read_metrics

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


@pytest.fixture
def recipe(train_world: Path, tmp_path: Path) -> Path:
    """A valid qwen2.5-vl recipe in the world folder, writing its run under tmp_path."""
    path = train_world / f"cli-{tmp_path.name}.yaml"
    store = train_world / "store-qwen2.5-vl"
    path.write_text(world.recipe_text("qwen2.5-vl", store, tmp_path / "run"))
    return path


def refused(args: list[str], output: Path) -> str:
    """Run `train`, expect exit 1 with a one-line error and no output folder; return it."""
    result = runner.invoke(app, ["train", *args])
    assert result.exit_code == 1, result.output
    message = str(result.exception)
    assert "\n" not in message, message
    assert not output.exists()
    return message


def test_missing_spec(recipe: Path, tmp_path: Path) -> None:
    text = recipe.read_text().replace("specs-qwen2.5-vl/*.yaml", "specs-qwen2.5-vl/nope.yaml")
    recipe.write_text(text)
    message = refused([str(recipe)], tmp_path / "run")
    assert ": tasks.0.spec: spec file not found: specs-qwen2.5-vl/nope.yaml" in message


def test_unknown_algorithm(recipe: Path, tmp_path: Path) -> None:
    recipe.write_text(recipe.read_text().replace("name: grpo", "name: grpp"))
    message = refused([str(recipe)], tmp_path / "run")
    assert "algorithm.name: unknown algorithm 'grpp'; did you mean 'grpo'?" in message


def test_algorithm_the_backend_cannot_run(recipe: Path, tmp_path: Path) -> None:
    recipe.write_text(
        recipe.read_text().replace("name: grpo, params: {kl_coef: 0.04}", "name: dapo")
    )
    message = refused([str(recipe)], tmp_path / "run")
    assert "backend 'trl' cannot do dynamic_sampling true for dapo" in message


def test_model_path_that_does_not_exist(recipe: Path, tmp_path: Path) -> None:
    message = refused([str(recipe), "--model", str(tmp_path / "no-model")], tmp_path / "run")
    assert message == f"model {tmp_path / 'no-model'}: does not exist (recipe {recipe})"


def test_store_built_under_another_budget(train_world: Path, tmp_path: Path) -> None:
    """Same task ids, another frame budget than the store holds: refused before any write."""
    folder = tmp_path / "other"
    folder.mkdir()
    (folder / "synth").symlink_to(train_world / "synth")
    spec = world.spec_text("count", "numerical", "synth/count.jsonl", 28)
    (folder / "count.yaml").write_text(spec.replace("max_frames: 2,", "max_frames: 3,"))
    recipe = folder / "recipe.yaml"
    text = world.recipe_text("qwen2.5-vl", train_world / "store-qwen2.5-vl", tmp_path / "run")
    recipe.write_text(text.replace("specs-qwen2.5-vl/*.yaml", "count.yaml"))
    message = refused([str(recipe)], tmp_path / "run")
    assert "no frames for the expected video budget" in message
    assert "build it with `videorl-kit build-cache SPEC... --store" in message


def test_used_output_folder_and_resume_without_a_run(recipe: Path, tmp_path: Path) -> None:
    used = tmp_path / "run"
    used.mkdir()
    (used / "notes.txt").write_text("mine")
    result = runner.invoke(app, ["train", str(recipe)])
    assert result.exit_code == 1
    assert "is not empty; pass --resume to continue the run in it" in str(result.exception)
    assert sorted(p.name for p in used.iterdir()) == ["notes.txt"]
    result = runner.invoke(app, ["train", str(recipe), "--resume"])
    assert "holds no run (recipe.resolved.yaml is missing)" in str(result.exception)


def test_dry_run_writes_inputs_and_trains_nothing(recipe: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["train", str(recipe), "--dry-run", "--max-steps", "7"])
    assert result.exit_code == 0, result.output
    run = tmp_path / "run"
    config = json.loads((run / "trl_config.json").read_text())
    assert config["trainer"] == "GRPOTrainer"
    assert config["config"]["max_steps"] == 7 and config["config"]["num_generations"] == 4
    assert config["config"]["gradient_accumulation_steps"] == 2  # 2 prompts x 4 / 4 per pass
    assert {"recipe.resolved.yaml", "specs.json", "versions.json", "base-model"} <= {
        p.name for p in run.iterdir()
    }
    assert not (run / "metrics.jsonl").exists() and not list(run.glob("checkpoint-*"))


def test_a_dry_run_computes_the_trl_config_once(
    recipe: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import videorl_kit.adapters.trl.backend as trl_backend

    calls = []
    real = trl_backend.config_kwargs

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(trl_backend, "config_kwargs", counted)
    result = runner.invoke(app, ["train", str(recipe), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "run" / "trl_config.json").exists()
    assert len(calls) == 1  # check and prepare share one computation


def test_console_script_prints_one_line(recipe: Path, tmp_path: Path) -> None:
    """The real console entry point (no test verifier registered there: one plain spec)."""
    text = recipe.read_text().replace("name: grpo", "name: nope")
    recipe.write_text(text.replace("specs-qwen2.5-vl/*.yaml", "specs-qwen2.5-vl/count.yaml"))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "videorl_kit", "train", str(recipe)],
        capture_output=True, text=True, env=env, cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 1
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith("error: ") and "unknown algorithm 'nope'" in done.stderr
    assert not (tmp_path / "run").exists()


def test_logging_backends_when_installed_and_asked_for(recipe: Path, tmp_path: Path) -> None:
    """TensorBoard (installed here) reaches TRL's report_to; W&B (not installed) is refused."""
    import importlib.util

    text = recipe.read_text()
    recipe.write_text(text + "logging: {tensorboard: true}\n")
    assert runner.invoke(app, ["train", str(recipe), "--dry-run"]).exit_code == 0
    config = json.loads((tmp_path / "run" / "trl_config.json").read_text())
    assert config["config"]["report_to"] == ["tensorboard"]
    if importlib.util.find_spec("wandb") is None:
        recipe.write_text(text + "logging: {wandb: true}\n")
        message = refused([str(recipe), "--output", str(tmp_path / "other")], tmp_path / "other")
        assert "logging.wandb is on but wandb is not installed (pip install wandb" in message


def test_a_sample_whose_frames_are_gone_is_named(train_world: Path, tmp_path: Path) -> None:
    """A store whose frames row of one sample was deleted: refused before any write."""
    import shutil

    import lance

    store = tmp_path / "store"
    shutil.copytree(train_world / "store-qwen2.5-vl", store)
    frames = lance.dataset(str(store / "frames.lance"))
    key = frames.to_table(columns=["cache_key"], filter="modality = 'video'").column(0)[0].as_py()
    frames.delete(f"cache_key = '{key}'")
    recipe = train_world / f"gone-{tmp_path.name}.yaml"
    recipe.write_text(world.recipe_text("qwen2.5-vl", store, tmp_path / "run"))
    message = refused([str(recipe)], tmp_path / "run")
    assert f"has no cached frames ({key}); build it with `videorl-kit build-cache" in message
    assert ": sample " in message


def test_train_prints_a_table_per_task_then_plot_draws_the_run(
    recipe: Path, tmp_path: Path
) -> None:
    """Two real GRPO steps from the command line: progress bar, per-task table, run folder."""
    run = tmp_path / "run"
    result = runner.invoke(app, ["train", str(recipe), "--max-steps", "2"])
    assert result.exit_code == 0, result.output
    assert "GRPO step 2/2" in result.stderr and "ETA" in result.stderr
    table = result.stdout[result.stdout.index("Rewards per task") :]
    assert {r["step"] for r in read_metrics(run / "metrics.jsonl")} == {1, 2}
    for task in ("count", "multiple-choice", "boolean", "image-count", "parity", "routing"):
        assert f" {task} " in table, table
    assert f"run: {run}" in result.stdout and f"plot it: videorl-kit plot {run}" in result.stdout
    plotted = runner.invoke(app, ["plot", str(run)])
    assert plotted.exit_code == 0, plotted.output
    assert sorted(Path(line).name for line in plotted.stdout.split()) == [
        "format_rate.png", "kl.png", "response_length.png", "reward_per_task.png",
    ]  # fmt: skip


def test_a_dry_run_folder_is_no_conflict_for_the_real_run(recipe: Path, tmp_path: Path) -> None:
    from videorl_kit.train.plan import plan_training

    assert runner.invoke(app, ["train", str(recipe), "--dry-run"]).exit_code == 0
    run = tmp_path / "run"
    assert json.loads((run / "dry_run.json").read_text())["model"] == "tiny:qwen2.5-vl"
    result = runner.invoke(app, ["train", str(recipe), "--resume"])
    assert result.exit_code == 1
    assert "holds a dry run only, nothing trained yet; run it again without --resume" in str(
        result.exception
    )
    assert runner.invoke(app, ["train", str(recipe), "--dry-run"]).exit_code == 0  # again
    assert plan_training(recipe).output_dir == run  # the real run plans in it: no conflict
    (run / "metrics.jsonl").write_text("")  # once something trained, it is a used folder
    result = runner.invoke(app, ["train", str(recipe)])
    assert "is not empty; pass --resume" in str(result.exception)


def test_paths_are_printed_normalised(train_world: Path, tmp_path: Path) -> None:
    """A recipe's relative output_dir (`../runs/x`) is printed without `..`."""
    folder = train_world / f"sub-{tmp_path.name}"
    folder.mkdir()
    recipe = folder / "recipe.yaml"
    text = world.recipe_text("qwen2.5-vl", train_world / "store-qwen2.5-vl", tmp_path / "run")
    text = text.replace("specs-qwen2.5-vl/", "../specs-qwen2.5-vl/")
    recipe.write_text(
        text.replace(f"output_dir: {tmp_path / 'run'}", f"output_dir: ../{tmp_path.name}-run")
    )
    result = runner.invoke(app, ["train", str(recipe), "--dry-run"])
    assert result.exit_code == 0, result.output
    expected = train_world / f"{tmp_path.name}-run"
    assert "trained nothing" in result.output and str(expected) in result.output
    assert "/../" not in result.output.replace("\n", "")


def test_too_few_prompts_are_warned_with_epochs(recipe: Path, tmp_path: Path) -> None:
    """The world holds 2 ready prompts per task (12); 2 prompts x 40 steps consume 80."""
    result = runner.invoke(app, ["train", str(recipe), "--dry-run", "--max-steps", "40"])
    assert result.exit_code == 0, result.output
    assert "warning: the 40 steps consume 80 prompts, the tasks hold 12: 6.7 epochs" in (
        result.output
    )
    assert "data: 12 ready prompts" in result.output and "6.67 epochs" in result.output
    recipe.write_text(recipe.read_text().replace("prompts_per_step: 2", "prompts_per_step: 16"))
    result = runner.invoke(app, ["validate", str(recipe)])
    assert result.exit_code == 0, result.output
    assert "warning: the tasks hold 12 prompts, fewer than one step needs" in result.output


def test_inspect_shows_the_latest_completions(tmp_path: Path) -> None:
    from videorl_kit.train.completions import COMPLETIONS_FILE

    run = tmp_path / "run"
    run.mkdir()
    result = runner.invoke(app, ["inspect", str(run)])
    assert result.exit_code == 1 and "no completions.jsonl" in str(result.exception)
    lines = [
        {"step": 1, "task": "count", "prompt": "How many?", "response": "<answer>2</answer>",
         "extracted": "2", "gold": "3", "reward": 0.0, "status": "ok"},
        {"step": 10, "task": "count", "prompt": "How many now?", "response": "<answer>3</answer>",
         "extracted": "3", "gold": "3", "reward": 1.0, "status": "ok"},
    ]  # fmt: skip
    (run / COMPLETIONS_FILE).write_text("".join(json.dumps(x) + "\n" for x in lines))
    result = runner.invoke(app, ["inspect", str(run)])
    assert result.exit_code == 0, result.output
    assert "step 10" in result.output and "How many now?" in result.output
    assert "How many?" not in result.output and "1.000" in result.output
    result = runner.invoke(app, ["inspect", str(run), "--step", "1", "--json"])
    assert [json.loads(x)["gold"] for x in result.output.splitlines()] == ["3"]
