"""Native video on the TRL backend: training gives the model what evaluation gives it.

One task whose four samples hold a video, an image, both, and neither, cached once per model
family. A GRPO step through the kit's TRL backend (``trl.video: native``) records what the
model's log-prob forward receives; ``videorl-kit eval --backend transformers`` on the same
spec and store records what its model receives. For every sample: the same prompt token ids,
the same ``pixel_values_videos`` / ``video_grid_thw`` / timing (``second_per_grid_ts`` for
Qwen2.5-VL, ``<t seconds>`` markers in the ids for Qwen3-VL), the same image tensors and
token types; and the trainer's log-probs of each sampled response equal the evaluator's
model's (float32, CPU). Mixed micro-batches: the vision-balance rule keeps log-probs equal
and reaches every vision-tower parameter.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.train import world
from videorl_kit.adapters.trl import TrlBackend
from videorl_kit.train.metrics import read_metrics
from videorl_kit.train.plan import plan_training
from videorl_kit.train.run import run_training
from videorl_kit.train.tiny_model import FAMILIES

VISION_KEYS = ("pixel_values_videos", "video_grid_thw", "second_per_grid_ts", "pixel_values",
               "image_grid_thw")  # fmt: skip
KINDS = ("video", "image", "both", "text")


def write_mixed_task(root: Path, family: str) -> Path:
    """A spec whose rows are a video, an image, a video and an image, and text alone."""
    synth = root / "synth"
    count = [json.loads(line) for line in (synth / "count.jsonl").read_text().splitlines()]
    images = [json.loads(line) for line in (synth / "image_count.jsonl").read_text().splitlines()]
    rows = [
        {"id": "video", "problem": "How many?", "answer": "2", "videos": count[0]["videos"]},
        {"id": "image", "problem": "How many?", "answer": "1", "images": images[0]["images"]},
        {"id": "both", "problem": "Same number?", "answer": "1", "videos": count[1]["videos"],
         "images": images[1]["images"]},
        {"id": "text", "problem": "What is 2 + 2?", "answer": "4"},
    ]  # fmt: skip
    folder = root / f"native-{family}"
    folder.mkdir()
    (folder / "synth").symlink_to(synth)
    (folder / "mixed.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = folder / "mixed.yaml"
    verifier = "verifier: {name: test_even_length, version: 1}\n"  # rewards vary: gradients
    spec.write_text(
        world.spec_text("mixed-media", "open_ended", "mixed.jsonl", world.PATCH[family], verifier)
    )
    return spec


def recipe(spec: Path, store: Path, output: Path, family: str, **trl: Any) -> Path:
    settings = ", ".join(f"{k}: {json.dumps(v)}" for k, v in {"save_steps": 50, **trl}.items())
    path = output.parent / f"{output.name}.yaml"
    path.write_text(
        f"id: native-{family.replace('.', '-')}\nmodel: tiny:{family}\ntasks: [{spec}]\n"
        f"store: {store}\nalgorithm: {{name: grpo, params: {{kl_coef: 0.0}}}}\n"
        "rollout: {group_size: 2, max_new_tokens: 3, temperature: 1.0}\n"
        "optim: {lr: 1.0e-3, prompts_per_step: 4, micro_batch_size: 1, steps: 1}\n"
        f"trl: {{{settings}}}\noutput_dir: {output}\nseed: 0\n"
    )
    return path


class ForwardRecorder:
    """A TRL callback recording, during the first optimiser step, every log-prob forward of
    the policy: its keyword arguments and the log-probs it returned."""

    def __new__(cls) -> Any:
        from transformers import TrainerCallback

        class Recorder(TrainerCallback):
            def __init__(self) -> None:
                self.calls: list[dict[str, Any]] = []
                self.model: Any = None
                self._handle: Any = None

            def on_train_begin(self, args, state, control, model=None, **kwargs):
                self.model = model

                def hook(module, call_args, call_kwargs, output):
                    if "labels" not in call_kwargs:
                        return  # a generation forward
                    record = {k: v.detach().clone() for k, v in call_kwargs.items()
                              if isinstance(v, torch.Tensor)}  # fmt: skip
                    record["log_probs"] = output.log_probs.detach().clone()
                    self.calls.append(record)

                self._handle = model.register_forward_hook(hook, with_kwargs=True)

            def on_step_end(self, args, state, control, **kwargs):
                if self._handle is not None:
                    self._handle.remove()
                    self._handle = None

        return Recorder()


def eval_inputs(spec: Path, store: Path, model: Path, out: Path) -> tuple[dict, Any]:
    """Run ``videorl-kit eval --backend transformers`` (one sample per batch); return the
    model inputs its backend built per sample id, and the backend (its model loaded)."""
    from videorl_kit.eval import runner
    from videorl_kit.eval.runner import EvalConfig, run_eval

    recorded: dict[str, Any] = {}
    backends: list[Any] = []
    make_backend = runner.make_backend

    def recording(config, tasks):
        backend = make_backend(config, tasks)
        model_inputs = backend.model_inputs

        def record(requests):
            inputs = model_inputs(requests)
            recorded[requests[0].sample_id] = inputs
            return inputs

        backend.model_inputs = record
        backend.close = lambda: None  # keep the model for the log-prob comparison
        backends.append(backend)
        return backend

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runner, "make_backend", recording)
        run_eval(EvalConfig(specs=[str(spec)], out=str(out), backend="transformers",
                            model=str(model), store=str(store), batch_size=1))  # fmt: skip
    return recorded, backends[0]


@pytest.fixture(scope="module", params=FAMILIES)
def parity(request, train_world: Path, tmp_path_factory) -> dict[str, Any]:
    """One native GRPO step and one transformers-backend eval of the same cached samples."""
    from videorl_kit.store import build_cache

    family = request.param
    root = tmp_path_factory.mktemp(f"native-{family}")
    (root / "synth").symlink_to(train_world / "synth")
    spec = write_mixed_task(root, family)
    store = root / "store"
    build_cache([spec], store, workers=1)
    recorder = ForwardRecorder()
    run = root / "run"
    run_training(plan_training(recipe(spec, store, run, family)), TrlBackend(callbacks=[recorder]))
    inputs, backend = eval_inputs(spec, store, run / "base-model", root / "eval")
    return {"family": family, "run": run, "calls": recorder.calls, "eval": inputs,
            "backend": backend, "model": recorder.model, "store": store}  # fmt: skip


def _rows(call: dict[str, Any]) -> list[dict[str, Any]]:
    """Each row of a recorded forward: its prompt ids (padding dropped), its completion ids and
    the trainer's log-probs of them, its prompt token types."""
    labels, mask = call["labels"], call["attention_mask"]
    start = int((labels != -100).int().argmax(dim=1).min())  # where the completions begin
    rows = []
    for row in range(labels.shape[0]):
        keep = mask[row, :start].bool()
        scored = labels[row] != -100
        rows.append({
            "prompt_ids": call["input_ids"][row, :start][keep].tolist(),
            "token_types": call["mm_token_type_ids"][row, :start][keep].tolist(),
            "completion_ids": labels[row][scored].tolist(),
            "log_probs": call["log_probs"][row][scored[1:]],  # shifted: token t+1 given t
        })  # fmt: skip
    return rows


def test_training_runs_native_video(parity: dict[str, Any]) -> None:
    config = json.loads((parity["run"] / "trl_config.json").read_text())
    assert config["video"] == "native"  # the default for the Qwen-VL families
    [record] = read_metrics(parity["run"] / "metrics.jsonl")
    assert record["grad_norm/vision"] > 0 and record["grad_norm/language"] > 0
    assert len(parity["calls"]) == 8  # 4 prompts x 2 completions, one per micro-batch


def test_the_log_prob_forward_gets_the_evaluators_ids_and_tensors(parity: dict[str, Any]) -> None:
    by_prompt = {
        tuple(inputs["input_ids"][0].tolist()): sample for sample, inputs in parity["eval"].items()
    }
    assert sorted(parity["eval"]) == sorted(KINDS)
    seen = set()
    for call in parity["calls"]:
        [row] = _rows(call)
        sample = by_prompt[tuple(row["prompt_ids"])]  # KeyError: ids the evaluator never built
        expected = parity["eval"][sample]
        seen.add(sample)
        assert row["token_types"] == expected["mm_token_type_ids"][0].tolist()
        for key in VISION_KEYS:
            assert (key in call) == (key in expected), (sample, key)
            if key in call:
                assert torch.equal(call[key], expected[key]), (sample, key)
    assert seen == set(KINDS)  # videos, images, both and neither were trained on


def test_timing_reaches_the_model_as_the_family_reads_it(parity: dict[str, Any]) -> None:
    """From the cached frames' timing: Qwen2.5-VL gets ``second_per_grid_ts`` = 2 frames /
    the sampled fps; Qwen3-VL a ``<t seconds>`` marker (the mean time of the patch's two
    frames) in the prompt ids. The trainer's forward got the same (test above)."""
    from videorl_kit.store import CachedSampleDataset

    item = next(i for i in CachedSampleDataset(parity["store"]) if i["sample_id"] == "video")
    meta = item["video_metadata"][0]
    times = [index / meta["fps"] for index in meta["frames_indices"]]
    video = parity["eval"]["video"]
    text = parity["backend"].processor.tokenizer.decode(video["input_ids"][0])
    if parity["family"] == "qwen2.5-vl":
        sampled_fps = len(times) / meta["total_num_frames"] * meta["fps"]
        assert video["second_per_grid_ts"].tolist() == pytest.approx([2 / sampled_fps])
        assert "seconds>" not in text
    else:
        assert "second_per_grid_ts" not in video
        assert f"<{(times[0] + times[1]) / 2:.1f} seconds>" in text


def test_the_trainers_log_probs_equal_the_evaluators_models(parity: dict[str, Any]) -> None:
    """Each response sampled in the step, scored by the evaluator's model on the evaluator's
    inputs: the same log-probs as the trainer's forward (before its first update)."""
    model = parity["backend"]._model
    by_prompt = {tuple(i["input_ids"][0].tolist()): i for i in parity["eval"].values()}
    worst = 0.0
    for call in parity["calls"]:
        [row] = _rows(call)
        inputs = dict(by_prompt[tuple(row["prompt_ids"])])
        completion = torch.tensor([row["completion_ids"]])
        n = completion.shape[1]
        inputs["input_ids"] = torch.cat([inputs["input_ids"], completion], 1)
        inputs["attention_mask"] = torch.cat(
            [inputs["attention_mask"], torch.ones_like(completion)], 1
        )
        inputs["mm_token_type_ids"] = torch.cat(
            [inputs["mm_token_type_ids"], torch.zeros_like(completion)], 1
        )
        with torch.inference_mode():
            logits = model(**inputs).logits[0, -n - 1 : -1].float()
        expected = logits.log_softmax(-1).gather(1, completion[0][:, None])[:, 0]
        worst = max(worst, (expected - row["log_probs"]).abs().max().item())
    print(f"\n{parity['family']}: trainer vs evaluator log-probs differ by at most {worst:.1e}")
    assert worst < 1e-5


def test_with_vision_balance_every_log_prob_forward_runs_the_tower_twice(
    train_world: Path, tmp_path: Path
) -> None:
    """``trl.balance_vision: true`` (what several processes get by default): micro-batches of
    two completions, whatever media they hold, each run the tower for images and videos."""
    from transformers import TrainerCallback

    from videorl_kit.store import build_cache

    (tmp_path / "synth").symlink_to(train_world / "synth")
    spec = write_mixed_task(tmp_path, "qwen2.5-vl")
    build_cache([spec], tmp_path / "store", workers=1)
    towers: list[int] = []

    class CountTowers(TrainerCallback):
        def on_train_begin(self, args, state, control, model=None, **kwargs):
            running: list[int] = []
            model.model.visual.register_forward_pre_hook(lambda *_: running.append(1))

            def before(module, call_args, call_kwargs):
                running.clear()

            def after(module, call_args, call_kwargs, output):
                if "labels" in call_kwargs:  # a log-prob forward, not generation
                    towers.append(len(running))

            model.register_forward_pre_hook(before, with_kwargs=True)
            model.register_forward_hook(after, with_kwargs=True)

    path = recipe(spec, tmp_path / "store", tmp_path / "run", "qwen2.5-vl", balance_vision=True)
    path.write_text(path.read_text().replace("micro_batch_size: 1", "micro_batch_size: 2"))
    run_training(plan_training(path), TrlBackend(callbacks=[CountTowers()]))
    assert towers == [2, 2, 2, 2]  # 8 completions in micro-batches of 2
