"""vLLM request construction, without vLLM: the chat prompt, the cached frames with their
timing metadata, the sampling parameters, the engine options (``--model-args``) and their
defaults per platform, the media limits; and the one-line error when vLLM is not installed."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from tests.eval.conftest import ROOT, cached_requests
from videorl_kit.core.errors import UserError
from videorl_kit.eval.backends.vllm_backend import (
    MISSING_VLLM,
    VllmBackend,
    chat_prompt,
    engine_inputs,
    media_limits,
    sampling_kwargs,
    video_normalization_differs,
)
from videorl_kit.eval.backends.vllm_options import (
    CPU_KV_CACHE_BYTES,
    VllmOptions,
    parse_model_args,
)
from videorl_kit.eval.requests import GenerationRequest, sample_seed
from videorl_kit.eval.tasks import load_tasks
from videorl_kit.spec.eval_section import GenerationParams

HAS_VLLM = importlib.util.find_spec("vllm") is not None


@pytest.fixture(scope="module")
def cached_request(synth_tree, tmp_path_factory) -> GenerationRequest:
    (task,) = load_tasks([synth_tree / "task_specs" / "synth-temporal.yaml"], limit=1)
    (request,) = cached_requests([task], tmp_path_factory.mktemp("vllm") / "store")
    return replace(request, system="You are careful.")


def test_engine_inputs_carry_the_cached_frames_and_their_timing(cached_request):
    inputs = engine_inputs("<prompt>", cached_request)
    ((frames, metadata),) = inputs["multi_modal_data"]["video"]
    video = cached_request.videos[0]
    assert np.array_equal(frames, video.frames) and frames.dtype == np.uint8 and frames.ndim == 4
    assert metadata["frames_indices"] == video.metadata["frames_indices"]
    assert len(metadata["frames_indices"]) == len(frames)
    assert metadata["fps"] > 0 and metadata["total_num_frames"] >= len(frames)
    assert metadata["duration"] > 0
    assert inputs["mm_processor_kwargs"] == {"do_sample_frames": False, "do_resize": False}
    assert "image" not in inputs["multi_modal_data"]


def test_the_chat_prompt_has_one_unexpanded_video_placeholder(cached_request, tiny_model):
    from transformers import AutoProcessor

    processor = AutoProcessor.from_pretrained(tiny_model)
    prompt = chat_prompt(processor, cached_request)
    assert prompt.count("<|video_pad|>") == 1  # vLLM expands it to the frames' tokens
    assert (
        prompt.index("You are careful.")
        < prompt.index("<|video_pad|>")
        < prompt.index(cached_request.prompt)
    )
    assert prompt.endswith("<|im_start|>assistant\n")


def test_sampling_parameters_follow_the_spec_with_a_per_sample_seed():
    greedy = sampling_kwargs(GenerationParams(max_new_tokens=64), seed=11)
    assert greedy == {
        "temperature": 0.0, "top_p": 1.0, "max_tokens": 64, "repetition_penalty": 1.0,
        "presence_penalty": 0.0, "seed": 11,
    }  # fmt: skip
    peer = GenerationParams(temperature=0.7, top_p=0.8, top_k=20, presence_penalty=1.5)
    sampled = sampling_kwargs(peer, seed=3)
    assert (sampled["temperature"], sampled["top_p"], sampled["top_k"]) == (0.7, 0.8, 20)
    assert sampled["presence_penalty"] == 1.5
    assert sample_seed(0, "t", "a") != sample_seed(0, "t", "b")


@pytest.mark.skipif(HAS_VLLM, reason="vLLM is installed here")
def test_without_vllm_the_backend_says_how_to_get_it(tiny_model, synth_tree, tmp_path):
    with pytest.raises(UserError) as caught:
        VllmBackend(tiny_model)
    assert str(caught.value) == MISSING_VLLM
    result = subprocess.run(
        [sys.executable, "-m", "videorl_kit", "eval",
         str(synth_tree / "task_specs" / "synth-count.yaml"), "--backend", "vllm",
         "--model", str(tiny_model), "--out", str(tmp_path / "run")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.strip() == f"error: {MISSING_VLLM}"
    assert not (tmp_path / "run").exists()


def test_model_args_keep_vllms_names_and_report_every_problem_at_once():
    options = parse_model_args(
        " tensor_parallel_size=2, max_model_len=32768,gpu_memory_utilization=0.85,"
        "kv_cache_memory_bytes=4GiB,dtype=bfloat16,enforce_eager=true,max_concurrency=8,"
    )
    assert options == VllmOptions(
        tensor_parallel_size=2, max_model_len=32768, gpu_memory_utilization=0.85,
        kv_cache_memory_bytes=4 * 2**30, dtype="bfloat16", enforce_eager=True,
        max_concurrency=8,
    )  # fmt: skip
    assert parse_model_args("kv_cache_memory_bytes=512M").kv_cache_memory_bytes == 512 * 2**20
    assert parse_model_args("kv_cache_memory_bytes=1000").kv_cache_memory_bytes == 1000
    assert parse_model_args(None) == parse_model_args("") == VllmOptions()
    with pytest.raises(UserError) as caught:
        parse_model_args("tp=2,max_model_len=8k,enforce_eager=yes,kv_cache_memory_bytes=lots,oops")
    message = str(caught.value)
    assert message.startswith("--model-args: unknown key 'tp' (known: tensor_parallel_size, ")
    for part in ("max_model_len=8k: not an integer", "enforce_eager=yes: not true or false",
                 "kv_cache_memory_bytes=lots: not a byte count", "'oops' is not key=value"):  # fmt: skip
        assert part in message


def test_engine_defaults_depend_on_where_vllm_runs():
    cpu = VllmOptions().engine_kwargs(on_cpu=True, gpus=0)
    assert cpu == {"tensor_parallel_size": 1, "kv_cache_memory_bytes": CPU_KV_CACHE_BYTES,
                   "enforce_eager": True}  # fmt: skip
    share = VllmOptions(gpu_memory_utilization=0.3, enforce_eager=False)
    assert share.engine_kwargs(on_cpu=True, gpus=0) == {
        "gpu_memory_utilization": 0.3, "enforce_eager": False, "tensor_parallel_size": 1,
    }  # fmt: skip
    assert VllmOptions().engine_kwargs(on_cpu=False, gpus=8) == {"tensor_parallel_size": 8}
    given = VllmOptions(tensor_parallel_size=2, max_concurrency=4)
    assert given.engine_kwargs(on_cpu=False, gpus=8) == {"tensor_parallel_size": 2}


def test_media_limits_count_what_one_sample_shows(synth_tree):
    specs = [
        synth_tree / "task_specs" / name
        for name in ("synth-temporal.yaml", "synth-image-count.yaml")
    ]
    assert media_limits(load_tasks(specs)) == {"video": 1, "image": 1}
    assert media_limits(load_tasks(specs[:1])) == {"video": 1, "image": 0}
    assert media_limits(load_tasks(specs, variant="no_visual")) == {"video": 0, "image": 0}


def test_model_args_are_for_the_vllm_backend_only(synth_tree, tiny_model, tmp_path):
    spec = str(synth_tree / "task_specs" / "synth-count.yaml")
    bad = subprocess.run(
        [sys.executable, "-m", "videorl_kit", "eval", spec, "--model", str(tiny_model),
         "--model-args", "max_model_len=4096", "--out", str(tmp_path / "run")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert bad.returncode == 1
    assert bad.stderr.strip() == (
        "error: --model-args is read by --backend vllm only, not transformers"
    )
    typo = subprocess.run(
        [sys.executable, "-m", "videorl_kit", "eval", spec, "--model", str(tiny_model),
         "--backend", "vllm", "--model-args", "max_len=4096", "--out", str(tmp_path / "run")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert typo.returncode == 1
    assert typo.stderr.strip().startswith("error: --model-args: unknown key 'max_len'")
    assert not (tmp_path / "run").exists()


def test_a_video_processor_with_its_own_statistics_is_noticed(tiny_models):
    from transformers import AutoProcessor

    qwen25 = AutoProcessor.from_pretrained(tiny_models["qwen2.5-vl"])
    qwen3 = AutoProcessor.from_pretrained(tiny_models["qwen3-vl"])
    assert not video_normalization_differs(qwen25)  # CLIP's statistics for both
    assert video_normalization_differs(qwen3)  # CLIP's for images, 0.5 for videos
    qwen3.image_processor.image_mean = list(qwen3.video_processor.image_mean)
    qwen3.image_processor.image_std = tuple(qwen3.video_processor.image_std)
    assert not video_normalization_differs(qwen3)
