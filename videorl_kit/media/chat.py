"""Chat messages that show a sample's frames: the one prompt layout of training and evaluation.

:func:`frame_messages` shows videos as frames, one image per frame, each after a text item
with its timestamp (Qwen3-VL's own marker); several videos are numbered; the sample's images
follow, then the rendered task prompt. TRL's GRPO (it has no video path), OpenRLHF's stock
image path (``openrlhf.video: frames_as_images``) and the evaluator's models without a video
processor all use it, so a model sees the same prompt in training and in evaluation.
:func:`video_messages` keeps one video part per video (OpenRLHF's native-video path, and
evaluation with a video processor). The system message's content is a list of parts like
the user's, so every row of every task has one schema.

A video is anything with ``frames`` (uint8 ``T×H×W×3``) and ``timestamps_s``: a cached
:class:`~videorl_kit.store.reader.CachedFrames`, a decoded
:class:`~videorl_kit.media.decoded.DecodedVideo`; an image is an ``H×W×3`` array.

Example:
    >>> from types import SimpleNamespace as NS
    >>> video = NS(timestamps_s=[0.0, 0.5], frames=np.zeros((2, 28, 28, 3), np.uint8))
    >>> messages, pictures = frame_messages("How many?", None, [video], [])
    >>> [part.get("text", part["type"]) for part in messages[0]["content"]], len(pictures)
    (['<0.0 seconds>', 'image', '<0.5 seconds>', 'image', 'How many?'], 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

__all__ = ["frame_messages", "timestamp_text", "video_messages"]


class Frames(Protocol):
    """A video's frames and the time of each (seconds)."""

    frames: np.ndarray
    timestamps_s: Sequence[float]


def timestamp_text(seconds: float) -> str:
    """The text item placed before a frame shown as an image (Qwen3-VL's own video marker).

    Example:
        >>> timestamp_text(2.5)
        '<2.5 seconds>'
    """
    return f"<{seconds:.1f} seconds>"


def frame_messages(
    prompt: str, system: str | None, videos: Sequence[Frames], images: Sequence[np.ndarray]
) -> tuple[list[dict[str, Any]], list[np.ndarray]]:
    """The chat messages of one sample, videos shown frame by frame, and the pictures they
    show, in placeholder order.

    Example:
        >>> image = np.zeros((28, 28, 3), np.uint8)
        >>> messages, pictures = frame_messages("Q", "Be brief.", [], [image])
        >>> [m["role"] for m in messages], messages[1]["content"][0], len(pictures)
        (['system', 'user'], {'type': 'image'}, 1)
    """
    content: list[dict[str, Any]] = []
    pictures: list[np.ndarray] = []
    for number, video in enumerate(videos, start=1):
        if len(videos) > 1:
            content.append({"type": "text", "text": f"Video {number}:"})
        for seconds, frame in zip(video.timestamps_s, video.frames, strict=True):
            content += [{"type": "text", "text": timestamp_text(seconds)}, {"type": "image"}]
            pictures.append(frame)
    content += [{"type": "image"} for _ in images]
    pictures += images
    return _messages(prompt, system, content), pictures


def video_messages(
    prompt: str, system: str | None, n_videos: int, n_images: int
) -> list[dict[str, Any]]:
    """The chat messages of one sample with one video part per video, then its images.

    Example:
        >>> video_messages("How many?", None, 1, 0)
        [{'role': 'user', 'content': [{'type': 'video'}, {'type': 'text', 'text': 'How many?'}]}]
    """
    content: list[dict[str, Any]] = [{"type": "video"} for _ in range(n_videos)]
    content += [{"type": "image"} for _ in range(n_images)]
    return _messages(prompt, system, content)


def _messages(prompt: str, system: str | None, media: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The system turn (if any) and the user turn: ``media`` parts, then the prompt."""
    messages: list[dict[str, Any]] = []
    if system:
        messages.append({"role": "system", "content": [{"type": "text", "text": system}]})
    messages.append({"role": "user", "content": [*media, {"type": "text", "text": prompt or ""}]})
    return messages
