"""Every forward runs the vision tower once per modality, so ranks stay in step under ZeRO-3.

Under DeepSpeed ZeRO-3 (and FSDP) a module's parameters are gathered from all ranks when the
module runs: every rank must run the same modules in the same order. A Qwen-VL forward runs
the vision tower once for the batch's images and once for its videos, only for the
modalities present; a micro-batch of videos alone, of images alone or of text alone would run
it fewer times than its neighbour's, and the ranks would wait on each other (or pair the wrong
gathers). The rule the kit applies, the peer's (EasyVideoR1's patched Qwen3-VL forward):

* each forward runs the tower for images and for videos, in that order; a modality the batch
  lacks runs on a dummy input of zeros (one temporal patch of ``merge × merge`` patches);
* the dummy outputs (every tensor they hold, Qwen3-VL's DeepStack features included) enter
  the language model's input embeddings as ``0 · mean``: every tower parameter takes part in
  the forward and the backward and receives an exact zero gradient from the dummy, and the
  logits are unchanged.

:func:`balance_vision` installs two forward pre-hooks on a loaded Qwen2.5-VL / Qwen3-VL: one
on the multimodal model records which modalities the forward carries, one on its language
model runs the dummies just before the language model, after the real tower calls, so every
rank's sequence of module calls is: embeddings, tower, tower, language model. The hooks act
only while :meth:`VisionBalance.active` is entered (the TRL backend enters it around its
log-prob forwards, not around generation, whose parameters ZeRO-3 gathers whole).

Example:
    >>> balance_vision(object()) is None   # not a Qwen-VL: nothing installed
    True
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["VisionBalance", "balance_vision"]

MODALITIES = ("image", "video")
_PIXELS = {"image": "pixel_values", "video": "pixel_values_videos"}


def _vision_model(model: Any) -> Any:
    """The multimodal module of ``model`` that runs the tower (has ``visual`` and
    ``language_model``), or None."""
    for candidate in (model, getattr(model, "model", None)):
        if candidate is not None and all(
            hasattr(candidate, name)
            for name in ("visual", "language_model", "get_image_features", "get_video_features")
        ):
            return candidate
    return None


def _tensors(value: Any) -> Iterator[Any]:
    """Every floating-point tensor inside a model output (nested tuples, lists, dicts)."""
    import torch

    if isinstance(value, torch.Tensor):
        if value.is_floating_point():
            yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _tensors(item)


class VisionBalance:
    """The hooks of :func:`balance_vision` on one model; they act inside :meth:`active`."""

    def __init__(self, inner: Any):
        self.inner = inner
        self._active = 0
        self._present: set[str] = set()
        self.dummy_calls = 0  # dummy tower runs so far (for tests and logs)
        weight = inner.visual.patch_embed.proj.weight
        self._patch_width = int(weight[0].numel())  # channels × temporal patch × patch²
        self._merge = int(inner.config.vision_config.spatial_merge_size)
        self._handles = [
            inner.register_forward_pre_hook(self._record, with_kwargs=True),
            inner.language_model.register_forward_pre_hook(self._dummies, with_kwargs=True),
        ]

    @contextlib.contextmanager
    def active(self, on: bool = True) -> Iterator[None]:
        """Balance the forwards run inside the block (a no-op block when ``on`` is False)."""
        self._active += int(on)
        try:
            yield
        finally:
            self._active -= int(on)

    def remove(self) -> None:
        """Take the hooks off the model."""
        for handle in self._handles:
            handle.remove()

    def _record(self, module: Any, args: Any, kwargs: dict[str, Any]) -> None:
        encoded = kwargs.get("mm_encoder_outputs") or {}
        self._present = {
            m for m in MODALITIES if kwargs.get(_PIXELS[m]) is not None or encoded.get(m)
        }

    def _dummy(self, modality: str) -> Any:
        import torch

        weight = self.inner.visual.patch_embed.proj.weight
        grid = torch.tensor([[1, self._merge, self._merge]], device=weight.device)
        pixels = torch.zeros(
            self._merge * self._merge, self._patch_width, dtype=weight.dtype, device=weight.device
        )
        features = getattr(self.inner, f"get_{modality}_features")
        self.dummy_calls += 1
        return features(pixels, grid, return_dict=True)

    def _dummies(self, module: Any, args: Any, kwargs: dict[str, Any]) -> Any:
        if not self._active:
            return None
        missing = [m for m in MODALITIES if m not in self._present]
        embeds = kwargs.get("inputs_embeds")
        if not missing or embeds is None:
            return None
        term = sum(
            (0.0 * t.float().mean() for m in missing for t in _tensors(dict(self._dummy(m)))),
            start=embeds.new_zeros((), dtype=embeds.float().dtype),
        )
        return args, {**kwargs, "inputs_embeds": embeds + term.to(embeds.dtype)}


def balance_vision(model: Any) -> VisionBalance | None:
    """Install the balancing hooks on a Qwen-VL ``model`` (see the module docstring); None
    for a model without a Qwen-style vision tower."""
    inner = _vision_model(model)
    if inner is None or not hasattr(getattr(inner.visual, "patch_embed", None), "proj"):
        return None
    return VisionBalance(inner)
