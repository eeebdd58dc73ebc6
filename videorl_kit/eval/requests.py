"""What a backend is asked to answer: :class:`GenerationRequest`, built from the cache.

A request holds the rendered prompt (the same :func:`~videorl_kit.spec.prompt.render_prompt`
training uses), the optional system turn, the cached frames of each video with the timing
metadata a Qwen-VL processor needs (source fps and the selected frame indices, so Qwen3-VL
writes the right ``<t seconds>`` markers), cached images, the sampling parameters and a
per-sample seed. Robustness variants are applied here: ``no_visual`` drops all media,
``shuffled_frames`` permutes each video's frames (seeded per sample) but keeps their
timestamps in order, so the model sees the right times on the wrong frames.

Example:
    >>> sample_seed(0, "video-mme", "001-1") == sample_seed(0, "video-mme", "001-1")
    True
    >>> sample_seed(0, "video-mme", "001-1") == sample_seed(1, "video-mme", "001-1")
    False
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from videorl_kit.media.chat import frame_messages, video_messages
from videorl_kit.media.processor_inputs import video_metadata_dict
from videorl_kit.spec.eval_section import GenerationParams, Variant
from videorl_kit.store.commit import sql_in
from videorl_kit.store.reader import CachedFrames, FrameStore
from videorl_kit.store.schema import SAMPLES_TABLE
from videorl_kit.store.tables import StoreTables


def sample_seed(run_seed: int, task_id: str, sample_id: str) -> int:
    """A 63-bit seed for one sample: the same whatever the order or batch it runs in."""
    digest = hashlib.sha256(f"{run_seed}\0{task_id}\0{sample_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


@dataclass(frozen=True)
class VideoInput:
    """One cached video: uint8 frames ``T×H×W×3``, ``VideoMetadata`` keyword arguments,
    each frame's time (seconds, shown before the frame when frames go in as images) and,
    under ``shuffled_frames``, the cached frame shown at each position."""

    frames: np.ndarray
    metadata: dict[str, Any]
    cache_key: str
    timestamps_s: tuple[float, ...]
    frame_order: tuple[int, ...] | None = None

    @property
    def sampled_fps(self) -> float:
        """Frames per second of the sampled frames (what Qwen2.5-VL's processor calls fps).

        Example:
            >>> meta = {"fps": 30.0, "total_num_frames": 300, "frames_indices": [0, 150]}
            >>> VideoInput(np.zeros((2, 4, 4, 3), np.uint8), meta, "k", (0.0, 5.0)).sampled_fps
            0.2
        """
        total = max(int(self.metadata["total_num_frames"]), 1)
        return len(self.frames) / total * float(self.metadata["fps"])


@dataclass(frozen=True)
class GenerationRequest:
    """One sample to answer."""

    task_id: str
    sample_id: str
    prompt: str
    system: str | None
    problem_type: str
    options: list[str] | None
    generation: GenerationParams
    seed: int
    videos: tuple[VideoInput, ...] = ()
    images: tuple[np.ndarray, ...] = ()
    media_keys: tuple[str, ...] = field(default=())

    def chat(
        self, *, frames_as_images: bool = False
    ) -> tuple[list[dict[str, Any]], list[np.ndarray]]:
        """Chat messages and the pictures they show, laid out as in training
        (:mod:`videorl_kit.media.chat`): one video part per video, or with
        ``frames_as_images`` (models without a video processor) every frame as an image after
        its timestamp; then the images and the prompt.

        Example:
            >>> request = GenerationRequest("t", "s", "Why?", None, "open_ended", None,
            ...     GenerationParams(), 0)
            >>> request.chat()
            ([{'role': 'user', 'content': [{'type': 'text', 'text': 'Why?'}]}], [])
        """
        if frames_as_images:
            return frame_messages(self.prompt, self.system, self.videos, self.images)
        messages = video_messages(self.prompt, self.system, len(self.videos), len(self.images))
        return messages, list(self.images)


def apply_variant(request: GenerationRequest, variant: Variant) -> GenerationRequest:
    """The request under a robustness variant (``random_choice`` needs no request change).

    Example:
        >>> frames = np.arange(4, dtype=np.uint8).reshape(4, 1, 1, 1).repeat(3, axis=3)
        >>> video = VideoInput(frames, {"fps": 1.0, "total_num_frames": 4}, "k", (0, 1, 2, 3))
        >>> request = GenerationRequest("t", "s", "?", None, "boolean", None,
        ...     GenerationParams(), 7, videos=(video,))
        >>> apply_variant(request, "no_visual").videos
        ()
        >>> shuffled = apply_variant(request, "shuffled_frames").videos[0].frames[:, 0, 0, 0]
        >>> sorted(shuffled.tolist()), shuffled.tolist() != [0, 1, 2, 3]
        ([0, 1, 2, 3], True)
    """
    if variant == "no_visual":
        return replace(request, videos=(), images=(), media_keys=())
    if variant == "shuffled_frames":
        rng = np.random.default_rng(request.seed)
        videos = []
        for video in request.videos:
            order = rng.permutation(len(video.frames))
            while len(order) > 1 and np.array_equal(order, np.arange(len(order))):
                order = rng.permutation(len(order))
            videos.append(
                replace(video, frames=video.frames[order], frame_order=tuple(order.tolist()))
            )
        return replace(request, videos=tuple(videos))
    return request


@dataclass(frozen=True)
class CachedSample:
    """A ``samples`` row of one sample: status and the cache keys of its media."""

    status: str
    skip_reason: str | None
    video_keys: tuple[str, ...]
    image_keys: tuple[str, ...]

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> CachedSample:
        """The fields the evaluator needs of a ``samples`` row (stored or just built).

        Example:
            >>> CachedSample.from_row({"status": "ready", "skip_reason": None,
            ...     "video_keys": ["k1"], "image_keys": None}).video_keys
            ('k1',)
        """
        return cls(
            row["status"],
            row["skip_reason"],
            tuple(row["video_keys"] or ()),
            tuple(row["image_keys"] or ()),
        )


class StoreMedia:
    """Cached frames of evaluated samples, read from a store built for their specs."""

    def __init__(self, store_dir: str | Path):
        self.tables = StoreTables.open(store_dir)
        self.frames = FrameStore(self.tables)

    def sample_rows(self, task_ids: Sequence[str]) -> dict[tuple[str, str], CachedSample]:
        """``(task_id, sample_id) -> CachedSample`` of the given tasks, as the store's
        ``samples`` table holds them (the last ``build_cache`` of their specs)."""
        table = self.tables.table(SAMPLES_TABLE).to_table(
            columns=["task_id", "sample_id", "status", "skip_reason", "video_keys", "image_keys"],
            filter=sql_in("task_id", list(task_ids)),
        )
        return {
            (row["task_id"], row["sample_id"]): CachedSample.from_row(row)
            for row in table.to_pylist()
        }

    def load(self, cached: CachedSample) -> tuple[tuple[VideoInput, ...], tuple[np.ndarray, ...]]:
        """The videos (with metadata) and images of one sample."""
        items: list[CachedFrames] = self.frames.get_many([*cached.video_keys, *cached.image_keys])
        videos = tuple(
            VideoInput(
                item.frames, video_metadata_dict(item), item.cache_key, tuple(item.timestamps_s)
            )
            for item in items[: len(cached.video_keys)]
        )
        images = tuple(item.frames[0] for item in items[len(cached.video_keys) :])
        return videos, images
