"""Frame and pixel budgets as the media layer sees them.

The spec's ``VideoBudget``/``ImageBudget`` pydantic models, their ``model_dump()`` dicts and
any object with the same attributes are all accepted and normalised into the frozen
dataclasses below, so this package does not import the spec package.

Example:
    >>> b = as_video_budget({"fps": 2.0, "min_frames": 4, "max_frames": 32,
    ...                      "min_pixels": 3136, "max_pixels": 200704, "patch": 28})
    >>> b.total_pixels, b.temporal_patch
    (None, 2)
    >>> as_image_budget({"min_pixels": 3136, "max_pixels": 1003520, "patch": 28}).patch
    28
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from fractions import Fraction
from typing import Any

from videorl_kit.media import geometry
from videorl_kit.media.errors import BudgetTooSmallError

__all__ = [
    "ImageBudgetParams",
    "VideoBudgetParams",
    "as_image_budget",
    "as_video_budget",
    "output_size",
    "sample_count",
]


@dataclass(frozen=True)
class VideoBudgetParams:
    """How many frames to sample from a video and how large each may be.

    ``patch`` is the resize factor (patch size x spatial merge: 28 for Qwen2/2.5-VL, 32 for
    Qwen3-VL); ``total_pixels`` caps the pixels of the whole clip (``None``: qwen-vl-utils'
    default).

    Example:
        >>> VideoBudgetParams(fps=1.0, max_frames=16).max_frames
        16
    """

    fps: float = 2.0
    min_frames: int = 4
    max_frames: int = 32
    min_pixels: int = 3136
    max_pixels: int = 200704
    total_pixels: int | None = None
    patch: int = 28
    temporal_patch: int = 2

    def __post_init__(self) -> None:
        if not self.fps > 0:
            raise ValueError(f"budget fps must be > 0, got {self.fps}")
        if self.min_frames < 0 or self.max_frames < 1 or self.temporal_patch < 1:
            raise ValueError(
                "budget needs min_frames >= 0, max_frames >= 1 and temporal_patch >= 1, got "
                f"{self.min_frames}, {self.max_frames}, {self.temporal_patch}"
            )
        if self.min_pixels < 1 or self.max_pixels < self.min_pixels or self.patch < 1:
            raise ValueError(
                "budget needs 1 <= min_pixels <= max_pixels and patch >= 1, got "
                f"min_pixels={self.min_pixels}, max_pixels={self.max_pixels}, patch={self.patch}"
            )
        if self.total_pixels is not None and self.total_pixels < 1:
            raise ValueError(f"budget total_pixels must be >= 1, got {self.total_pixels}")


@dataclass(frozen=True)
class ImageBudgetParams:
    """Pixel range of one image and its resize factor.

    Example:
        >>> ImageBudgetParams().max_pixels
        1003520
    """

    min_pixels: int = 3136
    max_pixels: int = 1003520
    patch: int = 28

    def __post_init__(self) -> None:
        if self.min_pixels < 1 or self.max_pixels < self.min_pixels or self.patch < 1:
            raise ValueError(
                "image budget needs 1 <= min_pixels <= max_pixels and patch >= 1, got "
                f"min_pixels={self.min_pixels}, max_pixels={self.max_pixels}, patch={self.patch}"
            )


_VIDEO_REQUIRED = ("fps", "min_frames", "max_frames", "min_pixels", "max_pixels", "patch")
_IMAGE_REQUIRED = ("min_pixels", "max_pixels", "patch")


def _collect(budget: Any, cls: type, required: tuple[str, ...], kind: str) -> dict[str, Any]:
    names = [f.name for f in fields(cls)]
    if isinstance(budget, Mapping):
        unknown = sorted(set(budget) - set(names))
        if unknown:
            raise ValueError(f"{kind} budget has unknown keys {unknown}; expected {names}")
        values = dict(budget)
    else:
        values = {name: getattr(budget, name) for name in names if hasattr(budget, name)}
    missing = [name for name in required if name not in values]
    if missing:
        raise ValueError(f"{kind} budget is missing {missing}")
    return values


def as_video_budget(budget: Any) -> VideoBudgetParams:
    """Return ``budget`` (a dict, a spec ``VideoBudget`` or any object with its attributes)
    as :class:`VideoBudgetParams`.

    ``fps, min_frames, max_frames, min_pixels, max_pixels, patch`` are required;
    ``total_pixels`` defaults to ``None`` and ``temporal_patch`` to 2.

    Raises:
        ValueError: a required field is missing, a dict has unknown keys, or a value is out of
            range.

    Example:
        >>> as_video_budget(VideoBudgetParams(fps=1.0)).fps
        1.0
    """
    if isinstance(budget, VideoBudgetParams):
        return budget
    return VideoBudgetParams(**_collect(budget, VideoBudgetParams, _VIDEO_REQUIRED, "video"))


def as_image_budget(budget: Any) -> ImageBudgetParams:
    """Return ``budget`` (a dict, a spec ``ImageBudget`` or a similar object) as
    :class:`ImageBudgetParams`.

    Example:
        >>> as_image_budget({"min_pixels": 4096, "max_pixels": 65536, "patch": 32}).patch
        32
    """
    if isinstance(budget, ImageBudgetParams):
        return budget
    return ImageBudgetParams(**_collect(budget, ImageBudgetParams, _IMAGE_REQUIRED, "image"))


# -- a video budget applied to one file (every decoder uses these) -----------------------------


def sample_count(
    path: str | os.PathLike[str], frame_count: int, fps: Fraction, params: VideoBudgetParams
) -> int:
    """Frames to sample (``video_frame_count``), with budget failures as a MediaError.

    Example:
        >>> sample_count("a.mp4", 150, Fraction(30), VideoBudgetParams())
        10
    """
    try:
        return geometry.video_frame_count(
            frame_count,
            float(fps),
            fps=params.fps,
            min_frames=params.min_frames,
            max_frames=params.max_frames,
            temporal_patch=params.temporal_patch,
        )
    except ValueError as exc:
        raise BudgetTooSmallError(path, str(exc)) from None


def output_size(
    path: str | os.PathLike[str], height: int, width: int, n_frames: int, params: VideoBudgetParams
) -> tuple[int, int]:
    """Resized ``(height, width)`` for frames of a displayed size, as a MediaError on failure.

    Example:
        >>> output_size("a.mp4", 240, 320, 10, VideoBudgetParams())
        (252, 308)
    """
    try:
        return geometry.video_frame_size(
            height,
            width,
            n_frames,
            min_pixels=params.min_pixels,
            max_pixels=params.max_pixels,
            total_pixels=params.total_pixels,
            factor=params.patch,
            temporal_patch=params.temporal_patch,
        )
    except ValueError as exc:
        raise BudgetTooSmallError(path, str(exc)) from None
