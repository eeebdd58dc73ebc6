"""Chat messages of a cached sample, for the training backends.

:func:`frame_messages` shows videos as frames, one image per frame: both training backends use
it when a model gets videos as images, TRL 1.16's GRPO (it has no video path) and OpenRLHF's
stock image path (``openrlhf.video: frames_as_images``), so the same recipe trains on the same
prompts whichever backend runs it. Each frame comes after a text item with its timestamp;
several videos are numbered; the sample's images follow, then the rendered task prompt.
:func:`video_messages` keeps one video part per video (OpenRLHF's native-video path). The
system message's content is a list of parts like the user's, so every row of every task has
one schema.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from videorl_kit.store import CachedFrames


def timestamp_text(seconds: float) -> str:
    """The text item placed before a frame shown as an image (Qwen3-VL's own video marker).

    Example:
        >>> timestamp_text(2.5)
        '<2.5 seconds>'
    """
    return f"<{seconds:.1f} seconds>"


def frame_messages(
    row: dict[str, Any], videos: list[CachedFrames], images: list[CachedFrames]
) -> tuple[list[dict[str, Any]], list[np.ndarray]]:
    """The chat messages of one sample and the pictures they show, in placeholder order.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> video = NS(timestamps_s=[0.0, 0.5], frames=np.zeros((2, 28, 28, 3), np.uint8))
        >>> messages, pictures = frame_messages(
        ...     {"prompt": "How many?", "system_prompt": None}, [video], [])
        >>> [part.get("text", part["type"]) for part in messages[0]["content"]], len(pictures)
        (['<0.0 seconds>', 'image', '<0.5 seconds>', 'image', 'How many?'], 2)
    """
    content: list[dict[str, Any]] = []
    pictures: list[np.ndarray] = []
    for number, video in enumerate(videos, start=1):
        if len(videos) > 1:
            content.append({"type": "text", "text": f"Video {number}:"})
        for seconds, frame in zip(video.timestamps_s, video.frames, strict=True):
            content += [{"type": "text", "text": timestamp_text(seconds)}, {"type": "image"}]
            pictures.append(frame)
    for image in images:
        content.append({"type": "image"})
        pictures.append(image.frames[0])
    return sample_messages(row, content), pictures


def video_messages(row: dict[str, Any], n_videos: int, n_images: int) -> list[dict[str, Any]]:
    """The chat messages of one sample with one video part per video, then its images.

    Example:
        >>> video_messages({"prompt": "How many?", "system_prompt": None}, 1, 0)
        [{'role': 'user', 'content': [{'type': 'video'}, {'type': 'text', 'text': 'How many?'}]}]
    """
    content: list[dict[str, Any]] = [{"type": "video"} for _ in range(n_videos)]
    content += [{"type": "image"} for _ in range(n_images)]
    return sample_messages(row, content)


def sample_messages(row: dict[str, Any], media: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The system turn (if the sample has one) and the user turn: ``media`` parts, then the
    rendered prompt.

    Example:
        >>> [m["role"] for m in sample_messages({"prompt": "Q", "system_prompt": "Be brief."}, [])]
        ['system', 'user']
    """
    messages: list[dict[str, Any]] = []
    if row.get("system_prompt"):
        system = [{"type": "text", "text": row["system_prompt"]}]
        messages.append({"role": "system", "content": system})
    content = [*media, {"type": "text", "text": row["prompt"] or ""}]
    messages.append({"role": "user", "content": content})
    return messages
