"""Native video on TRL 1.16's GRPO (and RLOO): the trainer methods and the dataset transform.

TRL's GRPO carries images only (huggingface/trl#4144): its prompt tokenisation collects image
parts, and its log-prob forward re-runs the processor on the dataset's ``images``. With
``trl.video: native`` the kit's trainer subclass (:func:`~.config.trainer_class`) carries each
sample's videos as videos instead, from the cache to the model, through four methods of
:class:`NativeVideoMixin`:

1. ``_generate_and_score_completions``: before TRL's own, builds each distinct sample's model
   inputs once per generation batch (:class:`SampleInputs`, by
   :func:`~videorl_kit.media.processor_inputs.chat_inputs`, the evaluator's own call: the
   chat template on one ``video`` part per video and one ``image`` part per image, the
   processor on the cached frames with their timing: ``do_sample_frames`` and ``do_resize``
   off, source fps and frame indices as ``video_metadata``, so Qwen2.5-VL gets its
   ``second_per_grid_ts`` and Qwen3-VL its ``<t seconds>`` markers). They ride along with
   the batch as one list entry per completion (``native_inputs``), which TRL's shuffling and
   splitting of the batch keep aligned with the completions;
2. ``_tokenize_prompts``: gives generation those prompt ids and, concatenated in batch order,
   ``pixel_values_videos``, ``video_grid_thw``, ``second_per_grid_ts``, ``pixel_values``,
   ``image_grid_thw`` and the per-token ``mm_token_type_ids`` (left-padded by TRL);
3. ``_get_per_token_logps_and_entropies``: for each chunk of rows, passes the same tensors
   with ``mm_token_type_ids`` rebuilt over the padded prompt and completion (the processor's
   own for the prompt, zeros for the completion; checked against the ids), then TRL's own
   computation of the log-probs;
4. ``_compute_loss``: hands (3) the micro-batch's entries.

A batch may mix samples with videos, images, both or neither: a sample contributes the
tensors it has, in the order of its placeholders, as the model reads them.

Mixed micro-batches under ZeRO-3 / FSDP: when training runs on more than one process (or
``trl.balance_vision`` says so) every log-prob forward runs the vision tower for images and
for videos, on a zero dummy for a modality the micro-batch lacks, and adds ``0 · mean`` of the
dummy's outputs (:mod:`videorl_kit.adapters.vision_balance`).

The rows come from :class:`NativeVideoPrompts` (the dataset's ``set_transform``): ``prompt``
with one ``video`` part per video (no pixels inside), the reward columns, and ``media``
(:class:`SampleMedia`: cached frames, metadata, images). Without ``media`` in a batch's rows
the methods defer to TRL's (frames-as-images runs). TRL's vLLM generation sends images only:
native video generates with transformers.

Example:
    >>> from types import SimpleNamespace as NS
    >>> import numpy as np
    >>> cached = NS(frames=np.zeros((2, 28, 28, 3), np.uint8), frame_indices=[0, 15],
    ...     timestamps_s=[0.0, 0.5], source_fps=30.0, source_frames=60, duration_s=2.0,
    ...     height=28, width=28, decoder="pyav")
    >>> media = SampleMedia.from_cache([cached], [])
    >>> media.video_metadata[0]["frames_indices"], len(media.images)
    ([0, 15], 0)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from videorl_kit.adapters.vision_balance import VisionBalance
from videorl_kit.media.chat import video_messages
from videorl_kit.media.processor_inputs import chat_inputs, video_metadata_dict
from videorl_kit.store import FrameStore

MEDIA_COLUMN = "media"
"""The dataset column holding a row's :class:`SampleMedia` (native video runs only)."""

INPUTS_KEY = "native_inputs"
"""The batch key carrying one :class:`SampleInputs` per completion."""

VIDEO_TENSORS = ("pixel_values_videos", "video_grid_thw", "second_per_grid_ts")
IMAGE_TENSORS = ("pixel_values", "image_grid_thw")


@dataclass(frozen=True)
class SampleMedia:
    """One sample's cached media: videos (uint8 ``T×H×W×3``) with their ``VideoMetadata``
    keyword arguments, and images (``H×W×3``), in placeholder order."""

    videos: list[np.ndarray] = field(default_factory=list)
    video_metadata: list[dict[str, Any]] = field(default_factory=list)
    images: list[np.ndarray] = field(default_factory=list)

    @classmethod
    def from_cache(cls, videos: Sequence[Any], images: Sequence[Any]) -> SampleMedia:
        """From cached items (:class:`~videorl_kit.store.reader.CachedFrames`): each video's
        frames with the evaluator's metadata (:func:`video_metadata_dict`), each image's frame."""
        return cls(
            [v.frames for v in videos],
            [video_metadata_dict(v) for v in videos],
            [i.frames[0] for i in images],
        )


@dataclass
class SampleInputs:
    """One sample's model inputs, computed once and shared by its group's completions."""

    prompt_ids: list[int]
    mm_token_type_ids: list[int]
    tensors: dict[str, Any]

    @classmethod
    def build(cls, processor: Any, messages: list[dict[str, Any]], media: SampleMedia) -> Any:
        """Run :func:`chat_inputs` on one sample (its messages and media)."""
        outputs = chat_inputs(
            processor, [messages], media.videos, media.video_metadata, media.images
        )
        ids = outputs["input_ids"][0].tolist()
        types = outputs.get("mm_token_type_ids")
        tensors = {k: outputs[k] for k in (*VIDEO_TENSORS, *IMAGE_TENSORS) if k in outputs}
        return cls(ids, types[0].tolist() if types is not None else [0] * len(ids), tensors)


def gather_tensors(samples: Sequence[SampleInputs], device: Any = None) -> dict[str, Any]:
    """The vision tensors of ``samples``, concatenated in order (keys none of them has are
    left out), as the model reads a batch.

    Example:
        >>> import torch
        >>> a = SampleInputs([1], [0], {"video_grid_thw": torch.tensor([[2, 4, 4]])})
        >>> gather_tensors([a, SampleInputs([2], [0], {}), a])["video_grid_thw"].tolist()
        [[2, 4, 4], [2, 4, 4]]
    """
    import torch

    keys = [k for k in (*VIDEO_TENSORS, *IMAGE_TENSORS) if any(k in s.tensors for s in samples)]
    return {
        key: torch.cat([s.tensors[key] for s in samples if key in s.tensors]).to(device)
        for key in keys
    }


def forward_token_types(
    samples: Sequence[SampleInputs], input_ids: Any, logits_to_keep: int
) -> Any:
    """``mm_token_type_ids`` over rows of prompt + completion ids: each row's prompt types
    right-aligned before the last ``logits_to_keep`` columns (prompts are left-padded),
    zeros elsewhere. Raises ``ValueError`` when a row's prompt ids are not where expected.

    Example:
        >>> import torch
        >>> sample = SampleInputs([7, 8, 9], [0, 2, 0], {})
        >>> forward_token_types([sample], torch.tensor([[0, 7, 8, 9, 5, 6]]), 2).tolist()
        [[0, 0, 2, 0, 0, 0]]
    """
    import torch

    types = torch.zeros_like(input_ids)
    end = input_ids.shape[1] - logits_to_keep
    for row, sample in enumerate(samples):
        start = end - len(sample.prompt_ids)
        if start < 0 or input_ids[row, start:end].tolist() != sample.prompt_ids:
            raise ValueError(
                f"row {row}: the prompt ids of the forward do not match its sample's "
                f"(native video inputs out of step with the batch)"
            )
        types[row, start:end] = torch.tensor(sample.mm_token_type_ids, dtype=types.dtype)
    return types


class _WithInputs:
    """A model call with extra keyword arguments (a chunk's vision tensors) added."""

    def __init__(self, model: Any, extra: dict[str, Any]):
        self.model = model
        self.extra = extra

    def __call__(self, **kwargs: Any) -> Any:
        return self.model(**kwargs, **self.extra)


class NativeVideoMixin:
    """The native-video methods of the kit's TRL trainer subclass (see the module doc).

    Set on the trainer after construction: ``native_processor`` (the processor, with its
    chat template) and ``vision_balance`` (a :class:`VisionBalance` or None) with
    ``balance_vision`` (whether log-prob forwards run it).
    """

    native_processor: Any = None
    vision_balance: VisionBalance | None = None
    balance_vision: bool = False
    _native_generation: list[SampleInputs] | None = None
    _native_forward: list[SampleInputs] | None = None

    # -- 1. per-sample inputs, once per generation batch -------------------------------------

    def native_inputs(self, rows: Sequence[dict[str, Any]]) -> list[SampleInputs]:
        """One :class:`SampleInputs` per row; the rows of one sample (its group) share one."""
        processor = self.native_processor or self.processing_class  # type: ignore[attr-defined]
        built: dict[tuple[Any, ...], SampleInputs] = {}
        out = []
        for row in rows:
            key = (row.get("task_id"), row.get("sample_id"), id(row[MEDIA_COLUMN]))
            if row.get("sample_id") is not None:
                key = key[:2]
            if key not in built:
                built[key] = SampleInputs.build(processor, row["prompt"], row[MEDIA_COLUMN])
            out.append(built[key])
        return out

    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        if not inputs or MEDIA_COLUMN not in inputs[0]:
            return super()._generate_and_score_completions(inputs)  # type: ignore[misc]
        samples = self.native_inputs(inputs)
        self._native_generation = self._native_forward = samples
        try:
            output = super()._generate_and_score_completions(inputs)  # type: ignore[misc]
        finally:
            self._native_generation = self._native_forward = None
        output[INPUTS_KEY] = samples
        return output

    # -- 2. generation ----------------------------------------------------------------------

    def _tokenize_prompts(self, prompts: list) -> Any:
        samples = self._native_generation
        if samples is None:
            return super()._tokenize_prompts(prompts)  # type: ignore[misc]
        if len(samples) != len(prompts):
            raise ValueError(f"{len(prompts)} prompts but {len(samples)} native video inputs")
        fields: dict[str, Any] = gather_tensors(samples)
        fields["mm_token_type_ids"] = [list(s.mm_token_type_ids) for s in samples]
        return [list(s.prompt_ids) for s in samples], None, fields

    # -- 3. log-prob forwards ---------------------------------------------------------------

    def _get_per_token_logps_and_entropies(
        self,
        model: Any,
        input_ids: Any,
        attention_mask: Any,
        logits_to_keep: int,
        batch_size: int | None = None,
        compute_entropy: bool = False,
        compute_aux_loss: bool = False,
        **image_inputs: Any,
    ) -> Any:
        samples = self._native_forward
        parent = super()._get_per_token_logps_and_entropies  # type: ignore[misc]
        if samples is None:
            with self._balanced():
                return parent(
                    model, input_ids, attention_mask, logits_to_keep, batch_size=batch_size,
                    compute_entropy=compute_entropy, compute_aux_loss=compute_aux_loss,
                    **image_inputs,
                )  # fmt: skip
        import torch

        if len(samples) != input_ids.shape[0]:
            raise ValueError(f"{input_ids.shape[0]} rows but {len(samples)} native video inputs")
        size = batch_size or input_ids.shape[0]
        logps, entropies, aux = [], [], []
        for start in range(0, input_ids.shape[0], size):
            chunk = samples[start : start + size]
            ids = input_ids[start : start + size]
            extra = gather_tensors(chunk, ids.device)
            extra["mm_token_type_ids"] = forward_token_types(chunk, ids, logits_to_keep)
            with self._balanced():
                part = parent(
                    _WithInputs(model, extra), ids, attention_mask[start : start + size],
                    logits_to_keep, batch_size=None, compute_entropy=compute_entropy,
                    compute_aux_loss=compute_aux_loss,
                )  # fmt: skip
            logps.append(part[0])
            entropies.append(part[1])
            aux.append(part[2])
        return (
            torch.cat(logps),
            torch.cat(entropies) if compute_entropy else None,
            torch.stack(aux).mean() if compute_aux_loss else None,
        )

    @contextlib.contextmanager
    def _balanced(self) -> Iterator[None]:
        if self.vision_balance is None or not self.balance_vision:
            yield
            return
        with self.vision_balance.active():
            yield

    # -- 4. the loss ------------------------------------------------------------------------

    def _compute_loss(self, model: Any, inputs: dict[str, Any]) -> Any:
        samples = inputs.get(INPUTS_KEY)
        if samples is None:
            return super()._compute_loss(model, inputs)  # type: ignore[misc]
        self._native_forward = samples
        try:
            return super()._compute_loss(model, inputs)  # type: ignore[misc]
        finally:
            self._native_forward = None


class NativeVideoPrompts:
    """The ``set_transform`` of a native-video training set: each accessed row's prompt with
    one ``video`` part per video and one ``image`` part per image, its reward columns, and its
    cached media (:class:`SampleMedia`) under ``media``.

    ``source`` looks media up by cache key (default: the store, opened on first use).
    """

    def __init__(self, store_dir: Path, source: Any = None, passed: Sequence[str] = ()):
        self.store_dir = Path(store_dir)
        self._source = source
        self.passed = tuple(passed)

    def _frames(self, keys: Sequence[str]) -> list[Any]:
        if self._source is None:
            self._source = FrameStore.open(self.store_dir).get_many
        return self._source(list(keys)) if keys else []

    def __call__(self, batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {key: batch[key] for key in self.passed}
        out["prompt"], out[MEDIA_COLUMN] = [], []
        # one read per distinct item of the batch (a group's rows repeat their sample's keys)
        keys = list(dict.fromkeys(k for name in ("video_keys", "image_keys")
                                  for row in batch[name] for k in row))  # fmt: skip
        found = dict(zip(keys, self._frames(keys), strict=True))
        for index in range(len(batch["task_id"])):
            videos = [found[k] for k in batch["video_keys"][index]]
            images = [found[k] for k in batch["image_keys"][index]]
            out["prompt"].append(
                video_messages(
                    batch["prompt"][index], batch["system_prompt"][index], len(videos), len(images)
                )
            )
            out[MEDIA_COLUMN].append(SampleMedia.from_cache(videos, images))
        return out


NATIVE_MODEL_TYPES = ("qwen2_5_vl", "qwen3_vl")
"""Model types (``config.model_type``) that train on native video unless the recipe says not."""

FAMILY_MODEL_TYPES = {"qwen2.5-vl": "qwen2_5_vl", "qwen3-vl": "qwen3_vl"}


def video_mode(choice: str | None, model_type: str | None) -> str:
    """The video path of a run: the recipe's ``trl.video``, else ``native`` for the Qwen-VL
    families and ``frames_as_images`` for other (or not yet known) models.

    Example:
        >>> video_mode(None, "qwen3_vl"), video_mode(None, "llava"), video_mode("native", None)
        ('native', 'frames_as_images', 'native')
    """
    if choice is not None:
        return choice
    return "native" if model_type in NATIVE_MODEL_TYPES else "frames_as_images"
