"""A budget applied to one file: how many frames, how large (every decoder uses these).

The budgets (:mod:`videorl_kit.core.budget`) are defined in core and the
arithmetic (qwen-vl-utils') in :mod:`videorl_kit.media.geometry`; the decoders and the token
calculator (:mod:`videorl_kit.spec.budget`) apply a budget through these functions only.
``sample_count`` and ``output_size`` report a failure as a
:class:`~videorl_kit.media.errors.MediaError` that names the file.

Example:
    >>> from videorl_kit.core.budget import ImageBudget, VideoBudget
    >>> sample_count("a.mp4", 150, Fraction(30), VideoBudget())
    10
"""

from __future__ import annotations

import os
from fractions import Fraction

from videorl_kit.core.budget import ImageBudget, VideoBudget
from videorl_kit.media import geometry
from videorl_kit.media.errors import BudgetTooSmallError

__all__ = [
    "budget_frame_count", "budget_frame_size", "budget_image_size", "output_size", "sample_count"
]  # fmt: skip


def budget_frame_count(budget: VideoBudget, frame_count: int, source_fps: float) -> int:
    """Frames to sample from a video of ``frame_count`` frames at ``source_fps`` under
    ``budget`` (qwen-vl-utils' ``smart_nframes``); ``ValueError`` when it cannot.

    Example:
        >>> budget_frame_count(VideoBudget(), 300, 30.0)
        20
    """
    return geometry.video_frame_count(
        frame_count,
        source_fps,
        fps=budget.fps,
        min_frames=budget.min_frames,
        max_frames=budget.max_frames,
        temporal_patch=budget.temporal_patch,
    )


def budget_frame_size(
    budget: VideoBudget, height: int, width: int, n_frames: int
) -> tuple[int, int]:
    """Resized ``(height, width)`` of the frames of an ``n_frames`` clip under ``budget``;
    ``ValueError`` when it cannot.

    Example:
        >>> budget_frame_size(VideoBudget(), 1080, 1920, 32)
        (336, 588)
    """
    return geometry.video_frame_size(
        height,
        width,
        n_frames,
        min_pixels=budget.min_pixels,
        max_pixels=budget.max_pixels,
        total_pixels=budget.total_pixels,
        factor=budget.patch,
        temporal_patch=budget.temporal_patch,
    )


def budget_image_size(budget: ImageBudget, height: int, width: int) -> tuple[int, int]:
    """Resized ``(height, width)`` of an image under ``budget``; ``ValueError`` when it cannot.

    Example:
        >>> budget_image_size(ImageBudget(), 720, 1280)
        (728, 1288)
    """
    return geometry.smart_resize(
        height, width, factor=budget.patch, min_pixels=budget.min_pixels,
        max_pixels=budget.max_pixels,
    )  # fmt: skip


def sample_count(
    path: str | os.PathLike[str], frame_count: int, fps: Fraction, params: VideoBudget
) -> int:
    """:func:`budget_frame_count`, with a failure as a MediaError naming the file.

    Example:
        >>> sample_count("a.mp4", 150, Fraction(30), VideoBudget())
        10
    """
    try:
        return budget_frame_count(params, frame_count, float(fps))
    except ValueError as exc:
        raise BudgetTooSmallError(path, str(exc)) from None


def output_size(
    path: str | os.PathLike[str], height: int, width: int, n_frames: int, params: VideoBudget
) -> tuple[int, int]:
    """:func:`budget_frame_size`, with a failure as a MediaError naming the file.

    Example:
        >>> output_size("a.mp4", 240, 320, 10, VideoBudget())
        (252, 308)
    """
    try:
        return budget_frame_size(params, height, width, n_frames)
    except ValueError as exc:
        raise BudgetTooSmallError(path, str(exc)) from None
