"""What decoding produces: :class:`DecodedVideo` and :class:`DecodedImage`.

Every video decoder (:mod:`videorl_kit.media.decoders`) returns a :class:`DecodedVideo`;
images decode to a :class:`DecodedImage`. ``SAMPLER_VERSION`` names the frame selection and
resize rules that all decoders share; each decoder puts it in its version string, which is
part of every cache key.

Example:
    >>> import numpy as np
    >>> video = DecodedVideo(path="clip.mp4", frames=np.zeros((4, 28, 28, 3), np.uint8),
    ...     frame_indices=[0, 10, 20, 29], timestamps_s=[0.0, 1.0, 2.0, 2.9], source_fps=10.0,
    ...     source_frames=30, duration_s=3.0, height=28, width=28, source_height=28,
    ...     source_width=28, orientation="identity", decoder="pyav", decoder_version="av 1")
    >>> video.num_frames, round(video.sample_fps, 3)
    (4, 1.333)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from videorl_kit.media.orientation import Orientation

__all__ = ["SAMPLER_VERSION", "DecodedImage", "DecodedVideo"]

SAMPLER_VERSION = "qwen-vl-utils-0.0.14/1"
"""Version of the frame selection + resize rules (:mod:`videorl_kit.media.geometry` follows
qwen-vl-utils 0.0.14); part of every cache key, through each decoder's version string and the
store's ``sampler_version`` column. Bump it whenever the frames produced for the same file
and budget could change."""


@dataclass(frozen=True, eq=False)
class DecodedVideo:
    """Sampled, resized frames of one video plus the timing facts a model needs.

    ``frames`` is uint8 ``(T, height, width, 3)``; ``frame_indices`` are the source frames
    (presentation order) behind each of the T frames and ``timestamps_s`` their times in
    seconds from the first frame. ``source_fps``/``source_frames``/``duration_s`` describe
    the whole source; ``source_height``/``source_width`` its displayed size.
    """

    path: str
    frames: np.ndarray
    frame_indices: list[int]
    timestamps_s: list[float]
    source_fps: float
    source_frames: int
    duration_s: float
    height: int
    width: int
    source_height: int
    source_width: int
    orientation: Orientation
    decoder: str
    decoder_version: str
    truncation: str | None = None
    warnings: tuple[str, ...] = ()

    @property
    def truncated(self) -> bool:
        """True when the frames were sampled from the readable part of a cut-short file
        (``truncation`` says why the file looks cut)."""
        return self.truncation is not None

    @property
    def num_frames(self) -> int:
        """T, the number of sampled frames (a multiple of the temporal patch)."""
        return int(self.frames.shape[0])

    @property
    def sample_fps(self) -> float:
        """Sampled frames per second of source: ``T / source_frames * source_fps``."""
        return self.num_frames / self.source_frames * self.source_fps


@dataclass(frozen=True, eq=False)
class DecodedImage:
    """One image as uint8 ``frames`` of shape ``(1, height, width, 3)``."""

    path: str
    frames: np.ndarray
    height: int
    width: int
    source_height: int
    source_width: int
    decoder: str
    decoder_version: str
