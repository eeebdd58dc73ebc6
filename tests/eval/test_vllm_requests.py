"""vLLM request construction, on CPU: the chat prompt, the cached frames with their timing
metadata, the sampling parameters; and the one-line error when vLLM is not installed."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

from tests.eval.conftest import ROOT
from videorl_kit.core.errors import UserError
from videorl_kit.eval.backends.vllm_backend import (
    MISSING_VLLM,
    VllmBackend,
    chat_prompt,
    engine_inputs,
    sampling_kwargs,
)
from videorl_kit.eval.requests import GenerationRequest, StoreMedia, sample_seed
from videorl_kit.eval.tasks import load_tasks
from videorl_kit.spec.eval_section import GenerationParams
from videorl_kit.spec.prompt import render_prompt
from videorl_kit.store import build_cache

HAS_VLLM = importlib.util.find_spec("vllm") is not None


@pytest.fixture(scope="module")
def cached_request(synth_tree, tmp_path_factory) -> GenerationRequest:
    (task,) = load_tasks([synth_tree / "task_specs" / "synth-temporal.yaml"], limit=1)
    store = tmp_path_factory.mktemp("vllm") / "store"
    build_cache([task.spec], store, workers=1)
    media = StoreMedia(store)
    sample = task.samples[0]
    videos, images = media.load(media.sample_rows([task.id])[(task.id, sample.sample_id)])
    return GenerationRequest(
        task.id, sample.sample_id, render_prompt(task.spec, sample), "You are careful.",
        sample.problem_type.value, sample.options, task.section.generation,
        sample_seed(0, task.id, sample.sample_id), videos=videos, images=images,
    )  # fmt: skip


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
