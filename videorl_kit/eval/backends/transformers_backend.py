"""Run any Hugging Face vision-language model with transformers (CPU or GPU), in batches.

The model is an ``AutoModelForImageTextToText`` with its ``AutoProcessor``, loaded from a
local folder. Cached frames go to the processor as videos together with their
``VideoMetadata`` (source fps, selected frame indices) and with ``do_sample_frames=False``
and ``do_resize=False``: the cache already sampled and resized them, under the spec's
budget (:func:`~videorl_kit.media.processor_inputs.chat_inputs`, as for training). A
processor without a video processor gets every frame as an image after its timestamp, as in
training (:mod:`videorl_kit.media.chat`). Prompts are left-padded and generated together.
A Qwen2.5-VL places its tokens by Qwen's own M-RoPE rule, as vLLM and training do
(:mod:`videorl_kit.media.mrope`).

Sampling parameters come from the spec alone (temperature 0 is greedy): the model folder's
``generation_config.json`` may ship its own (Qwen2.5-VL's says ``top_k=1``, which would make
every sampled run greedy), so ``generate`` runs its greedy search over scores that
:func:`sampling_processors` have already turned into one draw per sample: the spec's
temperature, top-k and top-p, then each sample's own seeded noise (:class:`SeededDraw`). A
sampled answer thus depends on its sample's seed, not on the batch it runs in: a resumed run
or another ``--batch-size`` gives the same answers.

Cheap checks happen when the backend is created (the folder exists, its config is a
vision-language model, its fingerprint); the weights load on the first batch, after the
cache is built.

Example (the processors that draw a sampled token):
    >>> [type(p).__name__ for p in sampling_processors(
    ...     GenerationParams(temperature=0.7, top_p=0.8, top_k=20), seeds=[1, 2], device="cpu")]
    ['TemperatureLogitsWarper', 'TopKLogitsWarper', 'TopPLogitsWarper', 'SeededDraw']
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from videorl_kit.core.errors import UserError
from videorl_kit.eval.backends.base import LocalModelBackend
from videorl_kit.eval.requests import GenerationRequest
from videorl_kit.media.mrope import use_qwen_positions
from videorl_kit.media.processor_inputs import chat_inputs
from videorl_kit.spec.eval_section import GenerationParams


def sampling_processors(params: GenerationParams, seeds: Sequence[int], device: Any) -> list:
    """Logits processors after which greedy search picks a token drawn as the spec samples
    (none for greedy decoding): temperature, top-k, top-p, then one seeded draw per row.

    Example:
        >>> sampling_processors(GenerationParams(), seeds=[0], device="cpu")
        []
    """
    if params.temperature == 0:
        return []
    from transformers import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

    processors: list = [TemperatureLogitsWarper(params.temperature)]
    if params.top_k is not None:
        processors.append(TopKLogitsWarper(params.top_k))
    if params.top_p < 1.0:
        processors.append(TopPLogitsWarper(params.top_p))
    return [*processors, SeededDraw(seeds, device)]


class SeededDraw:
    """A logits processor that adds each row's own noise, seeded per sample, so that the
    argmax is a draw from ``softmax(scores)`` (the exponential form of the Gumbel-max trick:
    ``argmax(scores - log E)``, ``E ~ Exp(1)``). Row ``i`` draws from its own generator, one
    vector per step, whatever else is in the batch.

    Example:
        >>> import torch
        >>> scores = torch.log(torch.tensor([[0.2, 0.8, 0.0]]))
        >>> picks = [int(SeededDraw([seed], "cpu")(None, scores).argmax()) for seed in range(2000)]
        >>> 0.75 < picks.count(1) / 2000 < 0.85, 2 in picks
        (True, False)
    """

    def __init__(self, seeds: Sequence[int], device: Any):
        import torch

        self.generators = [torch.Generator(device).manual_seed(int(seed)) for seed in seeds]

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        """``scores`` plus one row of noise per sample."""
        import torch

        noise = torch.stack(
            [
                torch.empty(scores.shape[-1], device=scores.device).exponential_(generator=g)
                for g in self.generators
            ]
        )
        tiny = torch.finfo(noise.dtype).tiny
        return scores - torch.log(noise.clamp_min(tiny)).to(scores.dtype)


class TransformersBackend(LocalModelBackend):
    """An HF image-text-to-text model and its processor, generating in batches."""

    kind = "transformers"

    def __init__(self, model_path: str | Path, *, device: str | None = None):
        super().__init__(model_path)
        self.device = device
        self._model: Any = None
        self._processor: Any = None

    def _load(self) -> None:
        if self._model is not None:
            return
        import torch
        from transformers import AutoModelForImageTextToText, AutoProcessor

        device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
        dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
        try:
            model = AutoModelForImageTextToText.from_pretrained(self.path, dtype=dtype)
            processor = AutoProcessor.from_pretrained(self.path)
        except Exception as exc:  # damaged weights, missing processor files, no memory...
            # ...stop the run: left to the per-sample net, every sample would fail alone and
            # the run would end "complete" with nothing scored
            reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
            raise UserError(f"--model {self.path}: cannot load: {reason}") from None
        tokenizer = getattr(processor, "tokenizer", None)
        if tokenizer is not None:
            tokenizer.padding_side = "left"
        use_qwen_positions(model)  # Qwen2.5-VL: Qwen's and vLLM's M-RoPE rule, as in training
        self._model = model.to(device).eval()
        self._processor = processor
        self.device = device

    @property
    def processor(self) -> Any:
        """The loaded processor (loads the model on first use)."""
        self._load()
        return self._processor

    @property
    def video_capable(self) -> bool:
        """Whether the processor takes videos (else frames go in as images)."""
        return getattr(self.processor, "video_processor", None) is not None

    def details(self) -> dict[str, Any]:
        """The device the model runs on."""
        return {"device": self.device}

    def model_inputs(self, requests: Sequence[GenerationRequest]) -> Any:
        """The processor's batch for ``requests`` (left-padded, media as cached)."""
        processor = self.processor
        as_video = self.video_capable
        conversations, videos, metadata, pictures = [], [], [], []
        for request in requests:
            messages, shown = request.chat(frames_as_images=not as_video)
            conversations.append(messages)
            pictures += shown
            if as_video:
                videos += [video.frames for video in request.videos]
                metadata += [video.metadata for video in request.videos]
        return chat_inputs(processor, conversations, videos, metadata, pictures)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[str]:
        """Generate all requests (one task: the same sampling parameters) in one batch;
        decode only the new tokens."""
        import torch

        if not requests:
            return []
        from transformers import LogitsProcessorList

        self._load()
        inputs = self.model_inputs(requests).to(self.device)
        params = requests[0].generation
        seeds = [request.seed for request in requests]
        tokenizer = getattr(self._processor, "tokenizer", self._processor)
        pad = getattr(tokenizer, "pad_token_id", None)
        if pad is None:
            pad = getattr(tokenizer, "eos_token_id", None)
        with torch.inference_mode():
            output = self._model.generate(
                **inputs,
                max_new_tokens=params.max_new_tokens,
                repetition_penalty=params.repetition_penalty,
                do_sample=False,  # the draw is made by the processors, per sample
                logits_processor=LogitsProcessorList(
                    sampling_processors(params, seeds, self.device)
                ),
                pad_token_id=pad,
            )
        new_tokens = output[:, inputs["input_ids"].shape[1] :]
        return list(tokenizer.batch_decode(new_tokens, skip_special_tokens=True))

    def close(self) -> None:
        """Drop the model."""
        self._model = None
        self._processor = None
