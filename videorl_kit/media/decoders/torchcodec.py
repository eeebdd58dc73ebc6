"""torchcodec (optional, ``pip install 'videorl-kit[torchcodec]'``): frames read by index.

Like decord (:mod:`videorl_kit.media.decoders.decord`), with one deliberate difference from
qwen-vl-utils: the container's average frame rate is used, not torchcodec's content-derived
``average_fps`` (frames / span of timestamps), which makes qwen-vl-utils' torchcodec path
sample fewer frames than its decord path for the same file (8 instead of 10 for a 5 s,
150-frame, 30 fps clip at 2 fps). torchcodec also needs FFmpeg's shared libraries.

Example:
    >>> from videorl_kit.media.decoders import get_decoder
    >>> get_decoder("torchcodec").decode  # loads this module, not torchcodec  # doctest: +ELLIPSIS
    <function decode at ...>
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

from videorl_kit.core.budget import VideoBudget
from videorl_kit.media.budget import sample_count
from videorl_kit.media.decoded import SAMPLER_VERSION, DecodedVideo
from videorl_kit.media.decoders import DecodeOptions, unavailable
from videorl_kit.media.errors import DecodeError
from videorl_kit.media.geometry import uniform_frame_indices
from videorl_kit.media.indexed_decode import IndexedFrames, decode_by_index

__all__ = ["decode", "version"]

INSTALL = "pip install 'videorl-kit[torchcodec]' (and FFmpeg's shared libraries)"


def _video_decoder_class() -> Any:
    try:
        from torchcodec.decoders import VideoDecoder
    except (ImportError, RuntimeError, OSError) as exc:  # OSError: FFmpeg libraries missing
        raise unavailable("torchcodec", exc, INSTALL) from None
    return VideoDecoder


def version() -> str:
    """torchcodec's version and the sampler's (recorded with the frames)."""
    _video_decoder_class()
    import torchcodec

    return f"torchcodec {torchcodec.__version__}; sampler {SAMPLER_VERSION}"


def _read(path: Path, params: VideoBudget, threads: int) -> IndexedFrames:
    video_decoder = _video_decoder_class()
    try:
        decoder = video_decoder(str(path), seek_mode="exact", num_ffmpeg_threads=max(threads, 1))
        metadata = decoder.metadata
        total = int(metadata.num_frames)
        # the header's average rate, as PyAV and decord report it; torchcodec's own
        # ``average_fps`` in exact mode is frames / (last pts - first pts), e.g. 30.2 for a
        # 150-frame 30 fps clip, which changes the frame count
        fps = float(metadata.average_fps_from_header or metadata.average_fps)
        positions = uniform_frame_indices(total, sample_count(path, total, Fraction(fps), params))
        batch = decoder.get_frames_at(indices=positions)
        first = float(decoder.get_frames_at(indices=[0]).pts_seconds[0])
    except (RuntimeError, ValueError) as exc:
        raise DecodeError(path, f"torchcodec failed: {exc}") from None
    frames = batch.data.permute(0, 2, 3, 1).numpy()
    starts = [float(t) - first for t in batch.pts_seconds.tolist()]
    return IndexedFrames(frames, total, fps, positions, starts)


def decode(path: Path, params: VideoBudget, options: DecodeOptions) -> DecodedVideo:
    """Sample and resize ``path``'s frames with torchcodec."""
    return decode_by_index(path, params, options, "torchcodec", version(), _read)
