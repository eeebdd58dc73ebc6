"""Run any Hugging Face vision-language model with transformers (CPU or GPU), in batches.

The model is an ``AutoModelForImageTextToText`` with its ``AutoProcessor``, loaded from a
local folder. Cached frames go to the processor as videos together with their
``VideoMetadata`` (source fps, selected frame indices) and with ``do_sample_frames=False``
and ``do_resize=False``: the cache already sampled and resized them, under the spec's
budget (:func:`~videorl_kit.media.processor_inputs.processor_outputs`, as for training). A
processor without a video processor gets every frame as an image after its timestamp, as in
training (:mod:`videorl_kit.media.chat`). Prompts are left-padded and generated together;
sampling parameters come from the spec (temperature 0 is greedy), and sampled decoding is
seeded per batch.

Cheap checks happen when the backend is created (the folder exists, its config is a
vision-language model, its fingerprint); the weights load on the first batch, after the
cache is built.

Example (sampling parameters as ``generate`` gets them):
    >>> generate_kwargs(GenerationParams(temperature=0.7, top_p=0.8, max_new_tokens=64))
    {'max_new_tokens': 64, 'repetition_penalty': 1.0, 'do_sample': True, 'temperature': 0.7,
     'top_p': 0.8}
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from videorl_kit.core.errors import UserError
from videorl_kit.eval.backends.base import LocalModelBackend
from videorl_kit.eval.requests import GenerationRequest
from videorl_kit.media.processor_inputs import processor_outputs
from videorl_kit.spec.eval_section import GenerationParams


def generate_kwargs(params: GenerationParams) -> dict[str, Any]:
    """``model.generate`` keyword arguments for the spec's sampling parameters.

    Example:
        >>> generate_kwargs(GenerationParams())["do_sample"]
        False
        >>> sorted(generate_kwargs(GenerationParams(temperature=0.7, top_k=20)))
        ['do_sample', 'max_new_tokens', 'repetition_penalty', 'temperature', 'top_k', 'top_p']
    """
    kwargs: dict[str, Any] = {
        "max_new_tokens": params.max_new_tokens,
        "repetition_penalty": params.repetition_penalty,
        "do_sample": params.temperature > 0,
    }
    if params.temperature > 0:
        kwargs.update(temperature=params.temperature, top_p=params.top_p)
        if params.top_k is not None:
            kwargs["top_k"] = params.top_k
    return kwargs


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
        except (OSError, ValueError) as exc:
            raise UserError(f"--model {self.path}: cannot load: {exc}") from None
        tokenizer = getattr(processor, "tokenizer", None)
        if tokenizer is not None:
            tokenizer.padding_side = "left"
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
        texts, videos, metadata, pictures = [], [], [], []
        for request in requests:
            messages, shown = request.chat(frames_as_images=not as_video)
            texts.append(
                processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
            )
            pictures += shown
            if as_video:
                videos += [video.frames for video in request.videos]
                metadata += [video.metadata for video in request.videos]
        return processor_outputs(processor, texts, videos, metadata, pictures)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[str]:
        """Generate all requests in one batch; decode only the new tokens."""
        import torch

        if not requests:
            return []
        self._load()
        inputs = self.model_inputs(requests).to(self.device)
        params = requests[0].generation
        kwargs = generate_kwargs(params)
        tokenizer = getattr(self._processor, "tokenizer", self._processor)
        pad = getattr(tokenizer, "pad_token_id", None)
        if pad is None:
            pad = getattr(tokenizer, "eos_token_id", None)
        if params.temperature > 0:
            torch.manual_seed(requests[0].seed)
        with torch.inference_mode():
            output = self._model.generate(**inputs, **kwargs, pad_token_id=pad)
        new_tokens = output[:, inputs["input_ids"].shape[1] :]
        return list(tokenizer.batch_decode(new_tokens, skip_special_tokens=True))

    def close(self) -> None:
        """Drop the model."""
        self._model = None
        self._processor = None
