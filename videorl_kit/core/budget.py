"""Video and image budgets: the one definition of their fields and rules.

A spec's ``budget.video`` / ``budget.image``, the decoders, the cache key and the token
calculator all use these two models. ``patch`` is the resize factor: 28 for Qwen2/2.5-VL
(14 px patches, 2x2 merge), 32 for Qwen3-VL (16 px patches, 2x2 merge); no other model
family resizes this way, so no other factor is accepted.

:func:`as_video_budget` and :func:`as_image_budget` also take a budget written as a dict
(a stored ``budget_json``) or any object with the same attributes.

Example:
    >>> b = as_video_budget({"fps": 2.0, "min_frames": 4, "max_frames": 32,
    ...                      "min_pixels": 3136, "max_pixels": 200704, "patch": 28})
    >>> b.total_pixels, b.temporal_patch
    (None, 2)
    >>> as_image_budget({"min_pixels": 3136, "max_pixels": 1003520, "patch": 28}).patch
    28
    >>> VideoBudget(min_frames=40, max_frames=8)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for VideoBudget
      Value error, min_frames: 40 exceeds max_frames (8) ...
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, model_validator

from videorl_kit.core.strict_model import StrictModel

PatchFactor = Literal[28, 32]
"""The resize factors of the supported processors: 28 (Qwen2/2.5-VL), 32 (Qwen3-VL)."""


class VideoBudget(StrictModel):
    """Frame sampling and pixel budget for videos (qwen-vl-utils semantics).

    Frame counts are rounded to ``temporal_patch``; ``total_pixels`` caps the pixels of the
    whole clip (``None``: qwen-vl-utils' default).

    Example:
        >>> VideoBudget(fps=1.0, max_frames=16).max_frames
        16
    """

    fps: float = Field(2.0, gt=0, le=60, description="Frames sampled per second of video.")
    min_frames: int = Field(4, ge=1, description="Lower bound on sampled frames.")
    max_frames: int = Field(32, ge=1, description="Upper bound on sampled frames.")
    min_pixels: int = Field(3136, ge=1, description="Lower bound on pixels per frame.")
    max_pixels: int = Field(200704, ge=1, description="Upper bound on pixels per frame.")
    total_pixels: int | None = Field(
        None, ge=1, description="Upper bound on pixels summed over all frames (None: no bound)."
    )
    patch: PatchFactor = Field(28, description="Resize factor: 28 (Qwen2/2.5-VL), 32 (Qwen3-VL).")
    temporal_patch: int = Field(2, ge=1, description="Frames merged into one temporal patch.")

    @model_validator(mode="after")
    def _ordered_bounds(self) -> VideoBudget:
        # "field: message" aims a spec's error at that field's line (spec.loader)
        if self.min_frames > self.max_frames:
            raise ValueError(
                f"min_frames: {self.min_frames} exceeds max_frames ({self.max_frames})"
            )
        if self.min_pixels > self.max_pixels:
            raise ValueError(
                f"min_pixels: {self.min_pixels} exceeds max_pixels ({self.max_pixels})"
            )
        if self.total_pixels is not None and self.total_pixels < self.min_pixels * self.min_frames:
            raise ValueError(
                f"total_pixels: {self.total_pixels} cannot fit min_frames ({self.min_frames}) "
                f"frames of min_pixels ({self.min_pixels})"
            )
        return self


class ImageBudget(StrictModel):
    """Pixel budget for images (joint image-video tasks use both budgets).

    Example:
        >>> ImageBudget().max_pixels
        1003520
    """

    min_pixels: int = Field(3136, ge=1, description="Lower bound on pixels.")
    max_pixels: int = Field(1003520, ge=1, description="Upper bound on pixels.")
    patch: PatchFactor = Field(28, description="Resize factor: 28 (Qwen2/2.5-VL), 32 (Qwen3-VL).")

    @model_validator(mode="after")
    def _ordered_bounds(self) -> ImageBudget:
        if self.min_pixels > self.max_pixels:
            raise ValueError(
                f"min_pixels: {self.min_pixels} exceeds max_pixels ({self.max_pixels})"
            )
        return self


_VIDEO_REQUIRED = ("fps", "min_frames", "max_frames", "min_pixels", "max_pixels", "patch")
_IMAGE_REQUIRED = ("min_pixels", "max_pixels", "patch")


def _fields(budget: Any, model: type[StrictModel], required: tuple[str, ...]) -> dict[str, Any]:
    """The budget's values by field; a dict must name every required field."""
    if not isinstance(budget, Mapping):
        return {name: getattr(budget, name) for name in model.model_fields if hasattr(budget, name)}
    missing = [name for name in required if name not in budget]
    if missing:
        kind = "video" if model is VideoBudget else "image"
        raise ValueError(f"{kind} budget is missing {missing}")
    return dict(budget)


def as_video_budget(budget: Any) -> VideoBudget:
    """``budget`` (a :class:`VideoBudget`, a dict or any object with its attributes) as a
    :class:`VideoBudget`.

    A dict must give ``fps, min_frames, max_frames, min_pixels, max_pixels, patch``
    (``total_pixels`` defaults to ``None`` and ``temporal_patch`` to 2), so that a stored
    budget never silently takes today's defaults. Raises ``ValueError`` (a pydantic
    ``ValidationError`` for a value out of range or an unknown key).

    Example:
        >>> as_video_budget(VideoBudget(fps=1.0)).fps
        1.0
    """
    if isinstance(budget, VideoBudget):
        return budget
    return VideoBudget(**_fields(budget, VideoBudget, _VIDEO_REQUIRED))


def as_image_budget(budget: Any) -> ImageBudget:
    """``budget`` (an :class:`ImageBudget`, a dict or a similar object) as an
    :class:`ImageBudget`; a dict must give ``min_pixels, max_pixels, patch``.

    Example:
        >>> as_image_budget({"min_pixels": 4096, "max_pixels": 65536, "patch": 32}).patch
        32
    """
    if isinstance(budget, ImageBudget):
        return budget
    return ImageBudget(**_fields(budget, ImageBudget, _IMAGE_REQUIRED))
