"""The TRL dataset: frames read from the cache (sources gone), timestamps in the prompt, each
modality at its own cached size through the processor, mixing weights."""

from __future__ import annotations

import io
import shutil
from collections import Counter
from pathlib import Path

from rich.console import Console
from transformers import AutoProcessor, TrainerState

from tests.train import world
from videorl_kit.adapters.trl.callbacks import RichProgressCallback
from videorl_kit.adapters.trl.dataset import build_train_dataset, keep_cached_sizes
from videorl_kit.store import FrameStore
from videorl_kit.train.plan import plan_training
from videorl_kit.train.plot import plot_run


def plan_for(train_world: Path, tmp_path: Path, **settings):
    recipe = train_world / f"ds-{tmp_path.name}.yaml"
    store = train_world / "store-qwen2.5-vl"
    recipe.write_text(world.recipe_text("qwen2.5-vl", store, tmp_path / "run", **settings))
    return plan_training(recipe)


def test_frames_come_from_the_cache_never_the_sources(train_world: Path, tmp_path: Path) -> None:
    """With every source video and image moved away, each row still gets its frames."""
    plan = plan_for(train_world, tmp_path)
    synth = train_world / "synth"
    hidden = tmp_path / "hidden"
    shutil.move(synth / "videos", hidden / "videos")
    shutil.move(synth / "images", hidden / "images")
    try:
        dataset = build_train_dataset(plan)
        store = FrameStore.open(plan.store)
        for index in range(len(dataset)):
            row = dataset[index]
            assert len(row["images"]) == sum(
                p["type"] == "image" for m in row["prompt"] for p in m["content"]
            )
        first_video = next(
            r for r in (dataset[i] for i in range(len(dataset))) if r["task_id"] == "count"
        )
        texts = [p["text"] for p in first_video["prompt"][-1]["content"] if p["type"] == "text"]
        cached = [store.get(k) for k in store if store.get(k).modality == "video"]
        assert texts[0] == "<0.0 seconds>"
        assert any(
            [f"<{t:.1f} seconds>" for t in item.timestamps_s] == texts[:-1] for item in cached
        )
    finally:
        shutil.move(hidden / "videos", synth / "videos")
        shutil.move(hidden / "images", synth / "images")


def test_images_and_videos_keep_their_own_pixel_budgets(
    train_world: Path, tmp_path: Path, tiny_models: dict[str, Path]
) -> None:
    plan = plan_for(train_world, tmp_path)
    processor = AutoProcessor.from_pretrained(tiny_models["qwen2.5-vl"])
    assert keep_cached_sizes(processor, plan) == (784, 9 * 784)
    dataset = build_train_dataset(plan)
    sizes = {}
    for index in range(len(dataset)):
        row = dataset[index]
        kind = "image" if row["task_id"] in ("image-count", "routing") else "video"
        for image in row["images"]:
            out = processor.image_processor(images=[image], return_tensors="pt")
            _t, h, w = out["image_grid_thw"][0].tolist()
            assert (h * 14, w * 14) == (image.size[1], image.size[0]), "resized again"
            sizes.setdefault(kind, set()).add(image.size[0] * image.size[1])
    assert max(sizes["video"]) <= 4 * 784 < max(sizes["image"]) <= 9 * 784


def test_tasks_are_mixed_by_weight(train_world: Path, tmp_path: Path) -> None:
    recipe = train_world / f"mix-{tmp_path.name}.yaml"
    text = world.recipe_text("qwen2.5-vl", train_world / "store-qwen2.5-vl", tmp_path / "run")
    text = text.replace(
        "  - specs-qwen2.5-vl/*.yaml\n",
        "  - {spec: specs-qwen2.5-vl/count.yaml, weight: 3}\n"
        "  - {spec: specs-qwen2.5-vl/boolean.yaml, weight: 1}\n",
    )
    recipe.write_text(text)
    dataset = build_train_dataset(plan_training(recipe))
    dataset.reset_format()  # the rows without their frames
    counts = Counter(dataset["task_id"])
    assert counts["count"] > counts["boolean"] >= 2  # every task seen, the heavier one more


def test_progress_bar_shows_step_reward_kl_and_eta() -> None:
    out = io.StringIO()
    callback = RichProgressCallback(Console(file=out, width=120, force_terminal=False))
    state = TrainerState(max_steps=3, global_step=0)
    callback.on_train_begin(None, state, None)
    for step, reward in ((1, 0.25), (2, 0.5), (3, 0.75)):
        state.global_step = step
        callback.on_log(None, state, None, logs={"reward": reward, "kl": 0.01 * step})
        callback.on_step_end(None, state, None)
    callback.on_train_end(None, state, None)
    text = out.getvalue()
    assert "step 3/3" in text and "reward 0.750" in text and "kl 0.030" in text and "ETA" in text
    assert "GRPO step" in text


def test_progress_bar_names_the_trainer_used() -> None:
    """The backend labels the bar with its trainer's name: RLOO is not shown as GRPO."""
    from videorl_kit.adapters.trl.config import trainer_class

    out = io.StringIO()
    label = "rloo".upper()
    assert "RLOOTrainer" in [c.__name__ for c in trainer_class("rloo").__mro__]
    callback = RichProgressCallback(Console(file=out, width=120), label=label)
    state = TrainerState(max_steps=2, global_step=0)
    callback.on_train_begin(None, state, None)
    state.global_step = 1
    callback.on_step_end(None, state, None)
    callback.on_train_end(None, state, None)
    assert "RLOO step 1/2" in out.getvalue() and "GRPO" not in out.getvalue()


def test_plot_writes_curves_from_metrics(train_world: Path, tmp_path: Path) -> None:
    from videorl_kit.train.metrics import MetricsLog

    log = MetricsLog(tmp_path / "metrics.jsonl")
    for step in range(1, 4):
        log.append(step, {"rewards/count/mean": step / 3, "rewards/parity/mean": 0.5,
                          "count/format": 1.0, "kl": 0.01 * step,
                          "completions/mean_length": 5.0 + step})  # fmt: skip
    written = plot_run(tmp_path)
    assert sorted(p.name for p in written) == [
        "format_rate.png", "kl.png", "response_length.png", "reward_per_task.png",
    ]  # fmt: skip
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in written)


def test_grpo_dataset_trains_with_your_own_grpo_trainer(
    train_world: Path, tmp_path: Path, tiny_models: dict[str, Path]
) -> None:
    """The README's few lines: the public helper, the kit's reward functions, stock TRL."""
    from transformers import AutoModelForImageTextToText
    from trl import GRPOConfig, GRPOTrainer

    from videorl_kit.adapters.trl import grpo_dataset, trl_reward_functions
    from videorl_kit.spec import load_spec

    specs = [
        load_spec(train_world / "specs-qwen2.5-vl" / f"{t}.yaml") for t in ("count", "boolean")
    ]
    dataset = grpo_dataset(specs, train_world / "store-qwen2.5-vl", weights=[1, 1])
    assert len(dataset) >= 4  # 2 ready samples per task, interleaved until both are exhausted
    assert set(dataset[: len(dataset)]["task_id"]) == {"count", "boolean"}
    row = dataset[0]
    assert all(image.mode == "RGB" for image in row["images"])
    model = tiny_models["qwen2.5-vl"]
    processor = AutoProcessor.from_pretrained(model, padding_side="left")
    low, high = keep_cached_sizes(processor, specs)
    assert processor.image_processor.size == {"shortest_edge": low, "longest_edge": high}
    vision = ["<|image_pad|>", "<|video_pad|>", "<|vision_start|>", "<|vision_end|>"]
    args = GRPOConfig(
        output_dir=str(tmp_path / "out"), use_cpu=True, bf16=False, max_steps=1, seed=0,
        per_device_train_batch_size=4, num_generations=2, max_completion_length=4,
        report_to=[], logging_steps=1, save_strategy="no",
        generation_kwargs={"suppress_tokens": processor.tokenizer.convert_tokens_to_ids(vision)},
    )  # fmt: skip
    trainer = GRPOTrainer(
        model=AutoModelForImageTextToText.from_pretrained(model),
        reward_funcs=trl_reward_functions(specs),
        args=args,
        train_dataset=dataset,
        processing_class=processor,
    )
    trainer.train()
    logged = trainer.state.log_history[0]
    assert {"rewards/count/mean", "rewards/boolean/mean"} & set(logged)
    assert "count/masked" in logged or "boolean/masked" in logged
