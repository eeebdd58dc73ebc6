"""`videorl-kit train RECIPE --plan`: the argv, sizing, budgets and memory estimate of a run,
computed without its store, its data or its model files, and written to plan.json; an
unpinned hf:// model is refused for OpenRLHF before anything asks the Hub."""

from __future__ import annotations

import json
import math
import shlex
import time
from pathlib import Path

import pytest
from huggingface_hub import constants as hub_constants
from typer.testing import CliRunner

from tests.train import world
from videorl_kit.cli import app
from videorl_kit.train.cluster_plan import GIB, memory_per_gpu

REPO = Path(__file__).resolve().parents[2]
RECIPE_7B = REPO / "recipes" / "qwen2.5-vl-7b-grpo.yaml"
PARAMS_7B = 8_292_166_656
runner = CliRunner()
ONE_GPU = "openrlhf: {nodes: 1, gpus_per_node: 1, vllm_engines: 1, zero_stage: 2, video: native}\n"


def world_recipe(train_world: Path, name: str, output: Path | str) -> Path:
    """A recipe over the training world's qwen2.5-vl tasks, its OpenRLHF run on one GPU."""
    path = train_world / f"{name}.yaml"
    store = train_world / "store-qwen2.5-vl"
    path.write_text(world.recipe_text("qwen2.5-vl", store, output) + ONE_GPU)
    return path


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No network and an empty Hub cache: nothing can be found or fetched."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # huggingface_hub reads the variable once, when first imported (here, at collection): the
    # constant is set too, and restored, so later tests of this process may use the Hub
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
    monkeypatch.delenv("WORLD_SIZE", raising=False)


def plan_json(args: list[str]) -> dict:
    result = runner.invoke(app, ["train", *args, "--plan", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_the_7b_openrlhf_recipe_plans_without_store_model_or_network(
    offline: None, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    start = time.monotonic()
    plan = plan_json([str(RECIPE_7B), "--store", str(tmp_path / "no-store"), "--output", str(run)])
    assert time.monotonic() - start < 10
    assert json.loads((run / "plan.json").read_text()) == plan
    assert sorted(p.name for p in run.iterdir()) == ["plan.json"]

    argv = plan["launch"]["argv"]
    assert flag(argv, "--actor.model_name_or_path") == "<MODEL_DIR>"
    assert flag(argv, "--data.max_len") == "<MAX_LEN>"
    assert flag(argv, "--data.max_images_per_prompt") == "<MAX_IMAGES>"
    assert flag(argv, "--train.num_episodes") == "<NUM_EPISODES>"  # sample count unknown
    assert flag(argv, "--data.prompt_dataset") == (
        f"{run}/data/train.video-r1-260k-video.jsonl,{run}/data/train.video-r1-260k-image.jsonl"
    )
    assert flag(argv, "--data.prompt_probs") == "0.75,0.25"
    assert flag(argv, "--train.agent_func_path") == f"{run}/agent_func.py"  # native video
    for name, value in [("--actor.num_gpus_per_node", "8"), ("--vllm.num_engines", "8"),
                        ("--ds.zero_stage", "3"), ("--train.batch_size", "256"),
                        ("--data.max_samples", "16000"), ("--rollout.n_samples_per_prompt", "8"),
                        ("--algo.kl.init_coef", "0.04"), ("--ds.param_dtype", "bf16")]:  # fmt: skip
        assert flag(argv, name) == value, name
    assert "--train.colocate_all" in argv
    assert plan["placeholders"]["<MAX_LEN>"]["estimate"] == 1792 + 64 + 768

    sizing = plan["sizing"]
    assert (sizing["nodes"], sizing["gpus_per_node"], sizing["gpus"]) == (1, 8, 8)
    assert sizing["vllm"]["engines"] * sizing["vllm"]["tensor_parallel"] == 8
    assert sizing["micro_batches_per_gpu_per_step"] == 8  # 256 completions / 4 / 8 GPUs

    assert plan["steps"]["epochs"] == "unknown" and plan["steps"]["samples"] is None
    assert plan["steps"]["prompts_consumed"] == 500 * 32

    budget = plan["budget"]
    assert budget["completions_per_step"] == 32 * 8
    assert budget["max_frames_per_sample"] == 16
    # 16 frames of at most 100352 px: 8 temporal patches of 128 tokens; images 1003520 px
    assert {t["task"]: t["video_tokens"] for t in budget["per_task"]} == {
        "video-r1-260k-video": 1024, "video-r1-260k-image": 1024}  # fmt: skip
    assert budget["max_visual_tokens_per_sample"] == 1280
    assert budget["max_prompt_tokens"] == 1280 + 512
    assert budget["max_completion_tokens"] == 768
    assert budget["max_tokens_per_step"] == 256 * (1792 + 768)

    memory = plan["memory"]
    assert memory["estimate"] is True
    assert memory["model"]["params"] == PARAMS_7B
    parts = memory["per_gpu_gib"]
    assert parts["weights"] == round(2 * PARAMS_7B / 8 / GIB, 1)  # ZeRO-3 over 8 GPUs
    assert parts["optimizer"] == round(12 * PARAMS_7B / 8 / GIB, 1)
    assert parts["reference"] == parts["weights"]  # KL 0.04: a bf16 reference, sharded
    assert 20 < parts["total"] < 80
    assert memory["inputs"]["gradient_checkpointing"] is False

    missing = {m["what"].split(":")[0]: m["command"] for m in plan["missing"]}
    store = missing["store " + str(tmp_path / "no-store")]
    assert store == (
        f"videorl-kit build-cache {REPO}/task_specs/datasets/video-r1-260k-video.yaml "
        f"{REPO}/task_specs/datasets/video-r1-260k-image.yaml --store {tmp_path / 'no-store'}"
    )
    data = missing["data of video-r1-260k-video, video-r1-260k-image"]
    assert data == (
        "hf download Video-R1/Video-R1-data --repo-type dataset --revision "
        "f344b446ede75b5639cf7a7f583c262ed4caca61 -- Video-R1-260k.json"
    )
    model = missing["model hf"]
    assert "hf download Qwen/Qwen2.5-VL-7B-Instruct --revision REV --local-dir DIR" in model


def test_the_plan_prints_tables(offline: None, tmp_path: Path) -> None:
    result = runner.invoke(app, ["train", str(RECIPE_7B), "--plan", "--output", str(tmp_path)])
    assert result.exit_code == 0, result.output
    for text in ("plan: qwen2-5-vl-7b-grpo (openrlhf)", "memory per GPU (estimate)",
                 "missing for a full run", "<MAX_LEN>", f"plan written to {tmp_path}"):  # fmt: skip
        assert text in result.output, text


def test_a_tiny_trl_recipe_plans_then_trains_in_the_same_folder(
    offline: None, train_world: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    recipe = world_recipe(train_world, f"plan-{tmp_path.name}", run)
    plan = plan_json([str(recipe)])
    assert plan["backend"] == "trl" and plan["missing"] == []
    assert plan["sizing"]["processes"] == 1
    assert plan["sizing"]["gradient_accumulation_steps"] == 2  # 8 completions / 4 per pass
    argv = shlex.split(plan["launch"]["command"])  # the planned run: its folder and store too
    assert argv[:3] == ["videorl-kit", "train", str(recipe)], argv
    assert argv[argv.index("--output") + 1] == str(run) and "--store" in argv, argv
    assert plan["launch"]["config"]["num_generations"] == 4
    samples = plan["steps"]["samples_per_task"]
    assert plan["steps"]["samples_from"].startswith("ready samples in the store")
    assert sum(samples.values()) == plan["steps"]["samples"] > 0
    assert plan["steps"]["epochs"] == round(3 * 2 / plan["steps"]["samples"], 2)
    assert plan["budget"]["max_frames_per_sample"] == 2
    assert plan["memory"]["model"] is None  # the tiny model is written by the run

    # a plan's folder is no conflict: the dry run writes the tiny model, the next plan reads it
    result = runner.invoke(app, ["train", str(recipe), "--dry-run"])
    assert result.exit_code == 0, result.output
    again = plan_json([str(recipe)])
    from safetensors import safe_open

    with safe_open(str(run / "base-model" / "model.safetensors"), "pt") as weights:
        n_params = sum(math.prod(weights.get_slice(k).get_shape()) for k in weights.keys())  # noqa: SIM118
    assert again["memory"]["model"]["params"] == n_params
    assert again["memory"]["per_gpu_gib"]["total"] < 1


def test_an_unpinned_hub_model_is_refused_for_openrlhf_without_asking_the_hub(
    train_world: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://10.255.255.1")  # unroutable: a request would hang
    recipe = world_recipe(train_world, f"hub-{tmp_path.name}", "run")
    start = time.monotonic()
    result = runner.invoke(app, ["train", str(recipe), "--backend", "openrlhf", "--dry-run",
                                 "--model", "hf://Qwen/Qwen2.5-VL-7B-Instruct",
                                 "--output", str(tmp_path / "run")])  # fmt: skip
    assert time.monotonic() - start < 10
    assert result.exit_code == 1
    message = str(result.exception)
    assert "\n" not in message
    assert message.startswith("model hf://Qwen/Qwen2.5-VL-7B-Instruct: not pinned; ")
    assert "pin a revision (hf://ORG/NAME@REV)" in message
    assert "--local-dir DIR" in message
    assert not (tmp_path / "run").exists()
    # --plan lists it as missing instead
    plan = plan_json([str(recipe), "--backend", "openrlhf", "--output", str(tmp_path / "p"),
                      "--model", "hf://Qwen/Qwen2.5-VL-7B-Instruct"])  # fmt: skip
    assert any(m["what"].endswith("not pinned; OpenRLHF trains a downloaded folder")
               for m in plan["missing"])  # fmt: skip


def test_plan_argv_is_the_bundle_argv_once_the_placeholders_are_filled(
    offline: None, train_world: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    recipe = world_recipe(train_world, f"bundle-{tmp_path.name}", run)
    plan = plan_json([str(recipe), "--backend", "openrlhf"])
    result = runner.invoke(app, ["train", str(recipe), "--backend", "openrlhf", "--dry-run"])
    assert result.exit_code == 0, result.output
    bundle = json.loads((run / "argv.json").read_text())
    bundle = bundle["argv"] if isinstance(bundle, dict) else bundle
    planned = plan["launch"]["argv"]
    assert "<NUM_EPISODES>" not in planned  # the store is built: the count is known
    filled = [
        bundle[i] if value in plan["placeholders"] else value for i, value in enumerate(planned)
    ]
    assert filled == bundle


def test_plan_flags_that_do_not_go_together(offline: None, tmp_path: Path) -> None:
    for extra, text in [(["--json"], "--json goes with --plan"),
                        (["--plan", "--dry-run"], "leave out --dry-run and --resume")]:  # fmt: skip
        result = runner.invoke(app, ["train", str(RECIPE_7B), *extra, "--output", str(tmp_path)])
        assert result.exit_code == 1
        assert text in str(result.exception)


def test_memory_shrinks_with_each_zero_stage_and_with_adam_offload() -> None:
    totals = [memory_per_gpu(PARAMS_7B, shards=8, zero_stage=s).total for s in (0, 1, 2, 3)]
    assert totals == sorted(totals, reverse=True) and len(set(totals)) == 4
    assert totals[0] == round(16 * PARAMS_7B / GIB, 1)
    offloaded = memory_per_gpu(PARAMS_7B, shards=8, zero_stage=3, adam_offload=True)
    assert offloaded.optimizer == 0 and offloaded.total < totals[3]


def test_a_task_the_store_lacks_is_missing_and_the_data_rows_give_the_epochs(
    offline: None, train_world: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "other"
    folder.mkdir()
    (folder / "synth").symlink_to(train_world / "synth")
    for task, frames in (("count", 2), ("count-b", 4)):  # count-b: a budget the store lacks
        spec = world.spec_text(task, "numerical", "synth/count.jsonl", 28)
        (folder / f"{task}.yaml").write_text(
            spec.replace("max_frames: 2,", f"max_frames: {frames},")
        )
    recipe = folder / "recipe.yaml"
    text = world.recipe_text("qwen2.5-vl", train_world / "store-qwen2.5-vl", tmp_path / "run")
    recipe.write_text(text.replace("specs-qwen2.5-vl/*.yaml", "count*.yaml"))
    plan = plan_json([str(recipe)])
    store = train_world / "store-qwen2.5-vl"
    assert plan["missing"] == [{
        "what": f"store {store}: tasks not cached: count-b",
        "command": f"videorl-kit build-cache {folder / 'count-b.yaml'} --store {store}",
    }]  # fmt: skip
    rows = len((train_world / "synth" / "count.jsonl").read_text().splitlines())
    steps = plan["steps"]
    assert steps["samples_per_task"] == {"count": rows, "count-b": rows}
    assert steps["samples_from"].startswith("rows of the data files")
    assert steps["epochs"] == round(3 * 2 / (2 * rows), 2)
    assert plan["budget"]["max_frames_per_sample"] == 4
