"""Benchmark GRPO training on the tiny model (not a test; prints figures, writes a curve).

Two parts, on the synthetic data (``videorl-kit synth``; no download):

(a) **Seconds per GRPO step: native video, frames as images, decoding every step.** The same
    recipe, samples, seed and steps run through TRL's ``GRPOTrainer`` (the kit's TRL backend)
    three ways, side by side: ``native`` (``trl.video: native``, the default for Qwen-VL:
    each video reaches the model as a video, frames read from the Lance cache), ``frames``
    (``trl.video: frames_as_images``: one image per cached frame) and ``decode`` (native, but
    every row's media decoded, sampled and resized again from the source files each time the
    trainer reads them: ``decode_video`` / ``decode_image`` under the same budgets, checked
    equal to the cached frames first). The figures are ratios of the median wall-clock
    seconds per optimiser step after the first (one step's end to the next: the batch's
    media are read, then TRL generates, scores and updates; TRL's own ``step_time`` leaves
    the reading out, so it is printed beside as the model's share). Each run is its own
    process, every way twice, interleaved. EasyVideoR1 reports 1.47x per step from its cache
    on 32 GPUs with Qwen3-VL-8B; there decoding happens three times a step (dataset,
    rollout, actor), here once (each distinct video of a batch once).
(b) **Learning check.** The tiny model, warmed up by a short supervised pass on gold answers
    (teacher forcing on ``<answer>gold</answer>``, so its completions start in format), is
    trained with GRPO on one synthetic task for a few hundred CPU steps; its mean reward per
    step is plotted to ``benchmarks/train_learning_curve.png`` and summarised (first and last
    20 steps).

Usage:
    python benchmarks/bench_train.py                        # (a), then (b) with 300 steps
    python benchmarks/bench_train.py --part speed --steps 8
    python benchmarks/bench_train.py --part learning --learning-steps 300 --json out.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script from a checkout
    sys.path.insert(0, str(REPO))

CURVE = REPO / "benchmarks" / "train_learning_curve.png"

SPEED_RECIPE = """\
id: bench-speed
model: {model}
tasks: [{tasks}]
store: {store}
algorithm: {{name: grpo, params: {{kl_coef: 0.0}}}}
rollout: {{group_size: 4, max_new_tokens: 16}}
optim: {{lr: 1.0e-5, prompts_per_step: 2, micro_batch_size: 8, steps: {steps}}}
trl: {{save_steps: 100000, video: {video}}}
output_dir: {output}
seed: 0
"""

MODES = {"native": ("native", False), "frames": ("frames_as_images", False),
         "decode": ("native", True)}  # fmt: skip
"""The ways a speed run reads its media: (trl.video, decode every step)."""

LEARNING_SPEC = """\
include: {parent}
id: bench-learn
data: {{path: {data}, media_root: {media}, allow_absolute_paths: true}}
budget:
  video: {{fps: 2.0, min_frames: 2, max_frames: 2, min_pixels: 784, max_pixels: 3136, patch: 28}}
"""

LEARNING_RECIPE = """\
id: bench-learning
model: {model}
tasks: [{spec}]
store: {store}
algorithm: {{name: grpo, params: {{kl_coef: 0.0}}}}
rollout: {{group_size: 8, max_new_tokens: 16, temperature: 1.0}}
optim: {{lr: {lr}, prompts_per_step: 2, micro_batch_size: 16, steps: {steps}}}
trl: {{save_steps: 100000}}
output_dir: {output}
seed: 0
"""


def _synth(folder: Path, n_per_task: int, tasks: list[str]) -> Path:
    from videorl_kit.synth import generate_suite

    generate_suite(folder, n_per_task=n_per_task, seed=0, tasks=tasks)
    return folder


# -- (a) cache vs decode ----------------------------------------------------------------------


class DecodingSource:
    """Cache keys -> frames decoded again from the source files, under the cached budgets."""

    def __init__(self, store: Path):
        from videorl_kit.store import FrameStore

        frames = FrameStore.open(store)
        self.meta = {key: frames.get(key) for key in frames.keys()}  # noqa: SIM118

    def decode(self, key: str) -> Any:
        from videorl_kit.media.decode import decode_image, decode_video

        cached = self.meta[key]
        if cached.modality == "image":
            image = decode_image(cached.source_uri, cached.budget)
            return dataclasses.replace(cached, frames=image.frames)
        video = decode_video(cached.source_uri, cached.budget, decoder=cached.decoder)
        return dataclasses.replace(cached, frames=video.frames, timestamps_s=video.timestamps_s)

    def __call__(self, keys: list[str]) -> list[Any]:
        return [self.decode(key) for key in keys]

    def check_equal_to_cache(self) -> None:
        """Decoding again gives the cached frames exactly (same samples both ways)."""
        import numpy as np

        for key, cached in self.meta.items():
            again = self.decode(key)
            if not np.array_equal(again.frames, cached.frames):
                raise SystemExit(f"decoded frames differ from the cache for {cached.source_uri}")


def _train(recipe: Path, source: Any = None) -> tuple[list[dict[str, Any]], list[float]]:
    """Run a recipe through the kit's TRL backend; ``source`` replaces where frames come from.

    Returns the step records and the wall-clock seconds of every step after the first.
    """
    from transformers import TrainerCallback

    from videorl_kit.adapters.trl import TrlBackend
    from videorl_kit.train.metrics import read_metrics
    from videorl_kit.train.plan import plan_training
    from videorl_kit.train.run import run_training

    ends: list[float] = []

    class StepClock(TrainerCallback):
        def on_step_end(self, *args: Any, **kwargs: Any) -> None:
            ends.append(time.perf_counter())

    plan = plan_training(recipe)
    run_training(plan, TrlBackend(frame_source=source, callbacks=[StepClock()]))
    records = [r for r in read_metrics(plan.output_dir / "metrics.jsonl") if "loss" in r]
    return records, [later - earlier for earlier, later in pairwise(ends)]


def data_seconds(recipe: Path, sources: dict[str, Any], repeats: int) -> dict[str, float]:
    """Median seconds to read one step's rows (2 prompts x 4 completions, as TRL reads them)
    through the training dataset, per frame source; sources interleaved in every repeat."""
    from videorl_kit.adapters.trl.dataset import build_train_dataset
    from videorl_kit.train.plan import plan_training

    plan = plan_training(recipe)
    video = plan.recipe.trl.video or "native"
    datasets = {
        label: build_train_dataset(plan, source, video=video) for label, source in sources.items()
    }
    n = len(next(iter(datasets.values())))
    times: dict[str, list[float]] = {label: [] for label in sources}
    for repeat in range(repeats):
        first, second = (2 * repeat) % n, (2 * repeat + 1) % n
        indices = [first] * 4 + [second] * 4
        for label, dataset in datasets.items():
            started = time.perf_counter()
            dataset[indices]
            times[label].append(time.perf_counter() - started)
    return {label: statistics.median(values) for label, values in times.items()}


def _train_in_subprocess(recipe: Path, *, decode: bool) -> tuple[list[dict[str, Any]], list[float]]:
    """Run :func:`_train` on ``recipe`` in a fresh Python process; return what it returns."""
    command = [sys.executable, __file__, "--single-run", str(recipe)]
    done = subprocess.run(
        [*command, "--decode"] if decode else command,
        capture_output=True, text=True, check=False, cwd=REPO,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"training run {recipe.name} failed:\n{done.stderr[-3000:]}")
    records, walls = json.loads(done.stdout.strip().splitlines()[-1])
    return records, walls


def single_run(recipe: Path, decode: bool) -> None:
    """``--single-run``: train ``recipe`` (frames decoded again if ``decode``), print what
    :func:`_train` returns as JSON."""
    from videorl_kit.train.recipe import load_recipe

    loaded = load_recipe(recipe)
    source = DecodingSource(loaded.resolve(loaded.recipe.store))
    print(json.dumps(_train(recipe, source if decode else None)))


def bench_speed(work: Path, steps: int, budget: str) -> dict[str, Any]:
    from videorl_kit.store import build_cache
    from videorl_kit.train.tiny_model import build_tiny_model

    synth = _synth(work / "synth", 8, ["count", "boolean", "image_count"])
    folder = REPO / "task_specs" / ("tiny" if budget == "tiny" else "")
    names = (
        ["tiny-count", "tiny-boolean", "tiny-image-count"]
        if budget == "tiny"
        else ["synth-count", "synth-boolean", "synth-image-count"]
    )
    specs = []
    for name in names:  # the shipped specs, pointed at this run's data
        spec = work / f"{name}.yaml"
        data = name.split("-", 1)[1].replace("-", "_")
        spec.write_text(
            f"include: {folder / (name + '.yaml')}\n"
            f"data: {{path: {synth / (data + '.jsonl')}, media_root: {synth}, "
            "allow_absolute_paths: true}\n"  # this run's data and the shipped base live elsewhere
        )
        specs.append(spec)
    store = work / "store"
    build_cache(specs, store, workers=1)
    model = build_tiny_model(work / "model", "qwen2.5-vl", seed=0).path
    figures: dict[str, Any] = {"budget": budget, "steps": steps}
    source = DecodingSource(store)
    source.check_equal_to_cache()
    # each run in a fresh process (step times drift upward across runs in one process), every
    # way twice, interleaved, so that background load hits all alike
    walls: dict[str, list[float]] = {mode: [] for mode in MODES}
    model_times: dict[str, list[float]] = {mode: [] for mode in MODES}
    for repeat in (1, 2):
        for mode, (video, decode) in MODES.items():
            label = f"{mode}-{repeat}"
            recipe = work / f"speed-{label}.yaml"
            recipe.write_text(SPEED_RECIPE.format(
                model=model, tasks=", ".join(str(s) for s in specs), store=store,
                steps=steps, output=work / f"run-{label}", video=video,
            ))  # fmt: skip
            records, run_walls = _train_in_subprocess(recipe, decode=decode)
            walls[mode] += run_walls
            model_times[mode] += [r["step_time"] for r in records[1:]]
            figures[f"{label}_wall_seconds_per_step"] = run_walls
            figures.setdefault(f"{mode}_rewards", [r.get("reward") for r in records])
    figures["same_rewards"] = figures["native_rewards"] == figures["decode_rewards"]
    for mode in MODES:
        figures[f"seconds_per_step_{mode}"] = statistics.median(walls[mode])
        figures[f"trl_step_time_{mode}"] = statistics.median(model_times[mode])
    native = figures["seconds_per_step_native"]
    figures["decode_over_cache"] = figures["seconds_per_step_decode"] / native
    figures["frames_over_native"] = figures["seconds_per_step_frames"] / native
    data_recipe = work / "speed-data.yaml"  # never trained: only its dataset is read
    data_recipe.write_text(SPEED_RECIPE.format(
        model=model, tasks=", ".join(str(s) for s in specs), store=store, steps=steps,
        output=work / "run-data", video="native",
    ))  # fmt: skip
    data = data_seconds(data_recipe, {"cache": None, "decode": source}, 10)
    figures["data_seconds_per_step_cache"] = data["cache"]
    figures["data_seconds_per_step_decode"] = data["decode"]
    figures["data_decode_over_cache"] = data["decode"] / data["cache"]
    return figures


# -- (b) learning check -----------------------------------------------------------------------


def warm_up(model_dir: Path, plan: Any, out: Path, steps: int, lr: float) -> Path:
    """A short supervised pass on gold answers (prompts exactly as native GRPO will see them)."""
    import torch
    from transformers import AutoModelForImageTextToText, AutoProcessor

    from videorl_kit.adapters.trl.dataset import build_train_dataset
    from videorl_kit.adapters.trl.native_video import SampleInputs
    from videorl_kit.media.processor_inputs import processor_outputs

    torch.manual_seed(0)
    processor = AutoProcessor.from_pretrained(model_dir, padding_side="left")
    model = AutoModelForImageTextToText.from_pretrained(model_dir)
    dataset = build_train_dataset(plan, video="native")
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    order = torch.randperm(len(dataset)).tolist()
    for step in range(steps):
        row = dataset[order[step % len(order)]]
        media = row["media"]
        n_prompt = len(SampleInputs.build(processor, row["prompt"], media).prompt_ids)
        prompt = processor.apply_chat_template(
            row["prompt"], add_generation_prompt=True, tokenize=False
        )
        answer = f"<answer>{row['answer']}</answer><|im_end|>"
        inputs = processor_outputs(
            processor, prompt + answer, media.videos, media.video_metadata, media.images
        )
        labels = inputs["input_ids"].clone()
        labels[:, :n_prompt] = -100
        loss = model(**inputs, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % 20 == 0:
            print(f"  warm-up step {step}: loss {loss.item():.3f}", flush=True)
    model.save_pretrained(out)
    processor.save_pretrained(out)
    return out


def plot_learning(records: list[dict[str, Any]], title: str, path: Path) -> None:
    """Mean reward per GRPO step (and its 20-step moving average) with the format rate."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    steps = [r["step"] for r in records]
    rewards = [r["reward"] for r in records]
    window = 20
    smooth = [statistics.mean(rewards[max(0, i - window + 1) : i + 1]) for i in range(len(rewards))]
    formats = [r.get("bench-learn/format") for r in records]
    figure, axes = plt.subplots(figsize=(8, 4.5))
    axes.plot(steps, rewards, color="tab:blue", alpha=0.3, linewidth=1, label="mean reward")
    axes.plot(steps, smooth, color="tab:blue", linewidth=2, label=f"{window}-step average")
    axes.plot(
        [s for s, f in zip(steps, formats, strict=True) if f is not None],
        [f for f in formats if f is not None], color="tab:orange", alpha=0.6, linewidth=1,
        label="format rate",
    )  # fmt: skip
    axes.set(title=title, xlabel="GRPO step", ylabel="per step", ylim=(0, 1.05))
    axes.grid(alpha=0.3)
    axes.legend(loc="lower right", fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def bench_learning(
    work: Path, steps: int, warmup_steps: int, lr: float, curve: Path = CURVE
) -> dict[str, Any]:
    from videorl_kit.store import build_cache
    from videorl_kit.train.plan import plan_training
    from videorl_kit.train.tiny_model import build_tiny_model

    synth = _synth(work / "synth", 48, ["boolean"])
    spec = work / "learn.yaml"
    spec.write_text(LEARNING_SPEC.format(
        parent=REPO / "task_specs" / "synth-boolean.yaml", data=synth / "boolean.jsonl",
        media=synth,
    ))  # fmt: skip
    store = work / "store-learn"
    build_cache([spec], store, workers=1)
    base = build_tiny_model(work / "base", "qwen2.5-vl", seed=0).path
    recipe = work / "learning.yaml"
    recipe.write_text(LEARNING_RECIPE.format(
        model=base, spec=spec, store=store, steps=steps, output=work / "run-learn", lr=lr,
    ))  # fmt: skip
    warm = warm_up(base, plan_training(recipe), work / "warm", warmup_steps, lr=1e-3)
    recipe.write_text(recipe.read_text().replace(f"model: {base}", f"model: {warm}"))
    started = time.perf_counter()
    records, _ = _train(recipe)
    seconds = time.perf_counter() - started
    rewards = [r["reward"] for r in records]
    formats = [r.get("bench-learn/format") for r in records]
    accuracy = [r.get("bench-learn/accuracy") for r in records]
    title = f"Tiny Qwen2.5-VL, GRPO on synth-boolean after {warmup_steps} warm-up steps"
    plot_learning(records, title, curve)
    head, tail = rewards[:20], rewards[-20:]

    def mean(values: list[Any]) -> float:
        present = [v for v in values if v is not None]
        return statistics.mean(present) if present else float("nan")

    return {
        "task": "synth-boolean (48 rows, 2 frames of 56x56 px)",
        "warmup_steps": warmup_steps,
        "learning_rate": lr,
        "grpo_steps": len(records),
        "seconds": seconds,
        "reward_first_20": mean(head),
        "reward_last_20": mean(tail),
        "format_first_20": mean(formats[:20]),
        "format_last_20": mean(formats[-20:]),
        "accuracy_first_20": mean(accuracy[:20]),
        "accuracy_last_20": mean(accuracy[-20:]),
        "curve": str(curve),
        "reward_per_step": rewards,
        "format_per_step": formats,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("speed", "learning", "both"), default="both")
    parser.add_argument("--steps", type=int, default=8, help="GRPO steps per speed run")
    parser.add_argument(
        "--budget",
        choices=("tiny", "synth"),
        default="synth",
        help="frame budgets of the speed runs: task_specs/tiny or task_specs",
    )
    parser.add_argument("--learning-steps", type=int, default=300)
    parser.add_argument("--warmup-steps", type=int, default=150)
    parser.add_argument("--learning-lr", type=float, default=1e-4, help="GRPO learning rate")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--curve", type=Path, default=CURVE, help="learning curve PNG")
    parser.add_argument("--single-run", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--decode", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.single_run:
        single_run(args.single_run, args.decode)
        return
    figures: dict[str, Any] = {"machine": f"{platform.platform()}, {platform.processor()}"}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.part in ("speed", "both"):
            figures["speed"] = speed = bench_speed(work, args.steps, args.budget)
            print(
                f"(a) median wall seconds per GRPO step: native video from the cache "
                f"{speed['seconds_per_step_native']:.2f}; frames as images from the cache "
                f"{speed['seconds_per_step_frames']:.2f}; native, decoded every step "
                f"{speed['seconds_per_step_decode']:.2f}\n"
                f"    decode / cache = {speed['decode_over_cache']:.2f}x; frames / native = "
                f"{speed['frames_over_native']:.2f}x (same rewards cache and decode: "
                f"{speed['same_rewards']}; TRL step_time, without the reading: native "
                f"{speed['trl_step_time_native']:.2f}, frames {speed['trl_step_time_frames']:.2f},"
                f" decode {speed['trl_step_time_decode']:.2f})\n"
                f"    reading one step's rows: cache {speed['data_seconds_per_step_cache']:.3f} s, "
                f"decoding {speed['data_seconds_per_step_decode']:.3f} s "
                f"({speed['data_decode_over_cache']:.1f}x)"
            )
        if args.part in ("learning", "both"):
            figures["learning"] = learn = bench_learning(
                work, args.learning_steps, args.warmup_steps, args.learning_lr, args.curve
            )
            print(
                f"(b) mean reward, first 20 steps {learn['reward_first_20']:.3f} -> last 20 "
                f"{learn['reward_last_20']:.3f} ({learn['grpo_steps']} GRPO steps, "
                f"{learn['seconds']:.0f} s); curve: {learn['curve']}"
            )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
