"""Visual-token calculator: frames, pixels and tokens a budget gives a video or image.

Uses the same arithmetic as the Qwen2.5-VL / Qwen3-VL processors (via
:mod:`videorl_kit.media.geometry`), so the numbers match what a model will see.

Example:
    >>> from videorl_kit.core.budget import VideoBudget
    >>> est = estimate_video(VideoBudget(), duration_s=10, width=640, height=360, source_fps=30)
    >>> est.frames, est.total_tokens == est.frames // 2 * est.tokens_per_temporal_patch
    (20, True)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from videorl_kit.core.budget import ImageBudget, VideoBudget
from videorl_kit.media import geometry
from videorl_kit.media.budget import budget_frame_count, budget_frame_size, budget_image_size


@dataclass(frozen=True)
class VideoEstimate:
    """What one video becomes under a budget."""

    duration_s: float
    source_width: int
    source_height: int
    source_fps: float
    frames: int
    height: int
    width: int
    tokens_per_temporal_patch: int
    tokens_per_frame: float
    total_tokens: int

    def as_dict(self) -> dict[str, Any]:
        """Plain-data form for JSON output."""
        return asdict(self)


@dataclass(frozen=True)
class ImageEstimate:
    """What one image becomes under a budget."""

    source_width: int
    source_height: int
    height: int
    width: int
    total_tokens: int

    def as_dict(self) -> dict[str, Any]:
        """Plain-data form for JSON output."""
        return asdict(self)


def estimate_video(
    budget: VideoBudget, *, duration_s: float, width: int, height: int, source_fps: float = 30.0
) -> VideoEstimate:
    """Frames, resized frame size and visual tokens for a video of the given shape.

    Example:
        >>> from videorl_kit.core.budget import VideoBudget
        >>> estimate_video(VideoBudget(max_frames=8), duration_s=60, width=1280, height=720).frames
        8
    """
    total_frames = max(1, round(duration_s * source_fps))
    frames = budget_frame_count(budget, total_frames, source_fps)
    new_h, new_w = budget_frame_size(budget, height, width, frames)
    total = geometry.visual_tokens(
        frames, new_h, new_w, factor=budget.patch, temporal_patch=budget.temporal_patch
    )
    per_patch = (new_h // budget.patch) * (new_w // budget.patch)
    return VideoEstimate(
        duration_s=float(duration_s),
        source_width=width,
        source_height=height,
        source_fps=float(source_fps),
        frames=frames,
        height=new_h,
        width=new_w,
        tokens_per_temporal_patch=per_patch,
        tokens_per_frame=per_patch / budget.temporal_patch,
        total_tokens=total,
    )


def estimate_image(budget: ImageBudget, *, width: int, height: int) -> ImageEstimate:
    """Resized size and visual tokens for one image.

    Example:
        >>> from videorl_kit.core.budget import ImageBudget
        >>> estimate_image(ImageBudget(), width=448, height=448).total_tokens
        256
    """
    new_h, new_w = budget_image_size(budget, height, width)
    tokens = geometry.image_visual_tokens(new_h, new_w, factor=budget.patch)
    return ImageEstimate(width, height, new_h, new_w, tokens)
