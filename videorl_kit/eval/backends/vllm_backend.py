"""Generate with vLLM's async engine on a GPU, from the same cached frames.

vLLM is imported lazily (it is a CUDA-only install, in the ``vllm`` extra); without it the
backend stops with one line saying how to install it. The request construction is plain
functions, tested on CPU:

* :func:`chat_prompt` renders the chat template of the model's processor (one
  ``{"type": "video"}`` placeholder per video; vLLM expands it);
* :func:`engine_inputs` pairs it with ``multi_modal_data``: each video as ``(frames,
  metadata)`` (uint8 ``T×H×W×3`` frames with their source fps, selected frame indices and
  duration, which Qwen3-VL turns into timestamps) and images as arrays, plus
  ``mm_processor_kwargs`` ``do_sample_frames=False, do_resize=False`` (frames are already
  sampled and resized to the spec's budget);
* :func:`sampling_kwargs` maps the spec's sampling parameters to ``SamplingParams`` with a
  per-sample seed, so sampled answers do not depend on scheduling.

All requests of a batch are submitted at once (bounded by ``max_concurrency``); vLLM batches
them continuously. One event loop lives as long as the backend, like the engine.

Example:
    >>> from videorl_kit.spec.eval_section import GenerationParams
    >>> sampling_kwargs(GenerationParams(temperature=0.7, top_k=20), seed=5)["top_k"]
    20
"""

from __future__ import annotations

import asyncio
import importlib.util
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from videorl_kit.core.errors import UserError
from videorl_kit.eval.backends.base import LocalModelBackend
from videorl_kit.eval.requests import GenerationRequest
from videorl_kit.spec.eval_section import GenerationParams

MISSING_VLLM = (
    "the vllm backend needs vLLM, which is not installed here; on a GPU machine run "
    "pip install 'videorl-kit[vllm]' (vLLM ships CUDA builds only), or use --backend transformers"
)


def sampling_kwargs(params: GenerationParams, seed: int) -> dict[str, Any]:
    """``vllm.SamplingParams`` keyword arguments (temperature 0 is greedy; top_k only if set).

    Example:
        >>> sorted(sampling_kwargs(GenerationParams(), seed=1))
        ['max_tokens', 'presence_penalty', 'repetition_penalty', 'seed', 'temperature', 'top_p']
    """
    kwargs: dict[str, Any] = {
        "temperature": params.temperature,
        "top_p": params.top_p if params.temperature > 0 else 1.0,
        "max_tokens": params.max_new_tokens,
        "repetition_penalty": params.repetition_penalty,
        "presence_penalty": params.presence_penalty,
        "seed": seed,
    }
    if params.top_k is not None and params.temperature > 0:
        kwargs["top_k"] = params.top_k
    return kwargs


def chat_prompt(processor: Any, request: GenerationRequest) -> str:
    """The request's chat-templated prompt text (one placeholder per video and image)."""
    messages, _ = request.chat()
    return processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)


def engine_inputs(prompt: str, request: GenerationRequest) -> dict[str, Any]:
    """The prompt dict vLLM's ``generate`` takes: text, media and processor kwargs.

    Example:
        >>> import numpy as np
        >>> from videorl_kit.eval.requests import VideoInput
        >>> video = VideoInput(np.zeros((2, 28, 28, 3), np.uint8),
        ...     {"fps": 30.0, "total_num_frames": 60, "frames_indices": [0, 30]}, "k", (0.0, 1.0))
        >>> request = GenerationRequest("t", "s", "?", None, "boolean", None,
        ...     GenerationParams(), 0, videos=(video,))
        >>> inputs = engine_inputs("<prompt>", request)
        >>> inputs["multi_modal_data"]["video"][0][1]["frames_indices"]
        [0, 30]
        >>> inputs["mm_processor_kwargs"]
        {'do_sample_frames': False, 'do_resize': False}
    """
    media: dict[str, Any] = {}
    if request.videos:
        media["video"] = [(video.frames, dict(video.metadata)) for video in request.videos]
    if request.images:
        media["image"] = list(request.images)
    inputs: dict[str, Any] = {"prompt": prompt}
    if media:
        inputs["multi_modal_data"] = media
        inputs["mm_processor_kwargs"] = {"do_sample_frames": False, "do_resize": False}
    return inputs


class VllmBackend(LocalModelBackend):
    """vLLM's ``AsyncLLMEngine`` over a local model folder (GPU)."""

    kind = "vllm"

    def __init__(
        self,
        model_path: str | Path,
        *,
        tensor_parallel_size: int | None = None,
        max_model_len: int | None = None,
        gpu_memory_utilization: float = 0.9,
        max_concurrency: int = 64,
        seed: int = 0,
    ):
        if importlib.util.find_spec("vllm") is None:
            raise UserError(MISSING_VLLM)
        super().__init__(model_path)
        self.engine_options = {
            "tensor_parallel_size": tensor_parallel_size,
            "max_model_len": max_model_len,
            "gpu_memory_utilization": gpu_memory_utilization,
            "seed": seed,
        }
        self.max_concurrency = max_concurrency
        self._engine: Any = None
        self._processor: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def details(self) -> dict[str, Any]:
        """Engine options and request concurrency."""
        return {"engine": self.engine_options, "max_concurrency": self.max_concurrency}

    def _start(self) -> None:
        if self._engine is not None:
            return
        try:
            import torch
            from transformers import AutoProcessor
            from vllm import AsyncEngineArgs, AsyncLLMEngine
        except ImportError as exc:  # a broken install: say what is missing, on one line
            raise UserError(f"{MISSING_VLLM} ({exc})") from None
        options = dict(self.engine_options)
        tp = options.pop("tensor_parallel_size") or max(1, torch.cuda.device_count())
        args = AsyncEngineArgs(
            model=str(self.path),
            tensor_parallel_size=tp,
            limit_mm_per_prompt={"video": 1, "image": 1},
            **{k: v for k, v in options.items() if v is not None},
        )
        self._loop = asyncio.new_event_loop()
        self._engine = AsyncLLMEngine.from_engine_args(args)
        self._processor = AutoProcessor.from_pretrained(self.path)

    async def _one(self, request: GenerationRequest, semaphore: asyncio.Semaphore) -> str:
        from vllm import SamplingParams

        inputs = engine_inputs(chat_prompt(self._processor, request), request)
        params = SamplingParams(**sampling_kwargs(request.generation, request.seed))
        request_id = f"{request.task_id}/{request.sample_id}/{uuid.uuid4().hex[:8]}"
        final = None
        async with semaphore:
            async for output in self._engine.generate(inputs, params, request_id=request_id):
                final = output
        return final.outputs[0].text if final is not None and final.outputs else ""

    async def _all(self, requests: Sequence[GenerationRequest]) -> list[str]:
        semaphore = asyncio.Semaphore(self.max_concurrency)
        return list(await asyncio.gather(*(self._one(r, semaphore) for r in requests)))

    def generate(self, requests: Sequence[GenerationRequest]) -> list[str]:
        """Submit every request, collect the texts in request order."""
        if not requests:
            return []
        self._start()
        assert self._loop is not None
        return self._loop.run_until_complete(self._all(requests))

    def close(self) -> None:
        """Shut the engine and its event loop down."""
        if self._engine is not None and hasattr(self._engine, "shutdown"):
            self._engine.shutdown()
        if self._loop is not None:
            self._loop.close()
        self._engine, self._loop = None, None
