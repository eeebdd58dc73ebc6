"""Optional decoders (decord, torchcodec) behind ``decode_video(..., decoder=...)``.

Both read frames by index as qwen-vl-utils does with them (frame count and average fps from
the library, uniform indices), then apply the same display orientation and resize as the
PyAV path. One deliberate difference: for torchcodec the container's average frame rate is
used, not torchcodec's content-derived ``average_fps`` (frames / span of timestamps), which
qwen-vl-utils uses and which makes its torchcodec path sample fewer frames than its decord
path for the same file (8 instead of 10 for a 5 s, 150-frame, 30 fps clip at 2 fps).

PyAV still opens the file first, so bad input raises the same
:class:`~videorl_kit.media.errors.MediaError` subclasses whatever the decoder.

Example:
    >>> decode_video_with("nope", None, None, 1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    videorl_kit.media.errors.DecoderUnavailableError: decoder 'nope' is unknown...
"""

from __future__ import annotations

import os
from fractions import Fraction
from pathlib import Path

import numpy as np

from videorl_kit.media.budget import VideoBudgetParams
from videorl_kit.media.errors import DecodeError, DecoderUnavailableError
from videorl_kit.media.geometry import uniform_frame_indices
from videorl_kit.media.orientation import apply_orientation, swaps_axes
from videorl_kit.media.probe import probe_video
from videorl_kit.media.resize import resize_frame

__all__ = ["decode_video_with"]


def _read_decord(path: Path, params: VideoBudgetParams, threads: int):
    try:
        import decord
    except ImportError as exc:
        raise DecoderUnavailableError(f"decoder 'decord' is not installed ({exc})") from None
    from videorl_kit.media.decode import sample_count

    try:
        reader = decord.VideoReader(str(path), num_threads=threads)
        total = len(reader)
        fps = reader.get_avg_fps()
        n_frames = sample_count(path, total, Fraction(fps), params)
        positions = uniform_frame_indices(total, n_frames)
        frames = reader.get_batch(positions).asnumpy()
        starts = reader.get_frame_timestamp(positions)[:, 0]
    except decord.DECORDError as exc:
        raise DecodeError(path, f"decord failed: {exc}") from None
    first = float(reader.get_frame_timestamp(0)[0])
    return frames, total, float(fps), positions, [float(t) - first for t in starts]


def _read_torchcodec(path: Path, params: VideoBudgetParams, threads: int):
    try:
        from torchcodec.decoders import VideoDecoder
    except (ImportError, RuntimeError, OSError) as exc:
        raise DecoderUnavailableError(f"decoder 'torchcodec' cannot load ({exc})") from None
    from videorl_kit.media.decode import sample_count

    try:
        decoder = VideoDecoder(str(path), seek_mode="exact", num_ffmpeg_threads=max(threads, 1))
        metadata = decoder.metadata
        total = int(metadata.num_frames)
        # the header's average rate, as PyAV and decord report it; torchcodec's own
        # ``average_fps`` in exact mode is frames / (last pts - first pts), e.g. 30.2 for a
        # 150-frame 30 fps clip, which changes the frame count
        fps = float(metadata.average_fps_from_header or metadata.average_fps)
        n_frames = sample_count(path, total, Fraction(fps), params)
        positions = uniform_frame_indices(total, n_frames)
        batch = decoder.get_frames_at(indices=positions)
        first = float(decoder.get_frames_at(indices=[0]).pts_seconds[0])
    except (RuntimeError, ValueError) as exc:
        raise DecodeError(path, f"torchcodec failed: {exc}") from None
    frames = batch.data.permute(0, 2, 3, 1).numpy()
    starts = [float(t) - first for t in batch.pts_seconds.tolist()]
    return frames, total, fps, positions, starts


def decode_video_with(decoder: str, path: Path, params: VideoBudgetParams, threads: int):
    """Decode with ``decoder`` ("decord" or "torchcodec"); returns a ``DecodedVideo``.

    Example:
        >>> decode_video_with("decord", Path("clip.mp4"), VideoBudgetParams(), 1)  # doctest: +SKIP
    """
    readers = {"decord": _read_decord, "torchcodec": _read_torchcodec}
    if decoder not in readers:
        raise DecoderUnavailableError(
            f"decoder {decoder!r} is unknown; choose one of {sorted(readers)}"
        )
    from videorl_kit.media.decode import DecodedVideo, decoder_version, output_size

    info = probe_video(path)  # classifies bad input and reads the display orientation
    frames, total, fps, positions, timestamps = readers[decoder](path, params, threads)
    orientation = info.orientation
    coded_h, coded_w = frames.shape[1:3]
    if swaps_axes(orientation) and (coded_h, coded_w) == (info.height, info.width):
        orientation = "identity"  # the library already turned the frames
    display_h, display_w = (coded_w, coded_h) if swaps_axes(orientation) else (coded_h, coded_w)
    out_h, out_w = output_size(path, display_h, display_w, len(positions), params)
    out = np.empty((len(positions), out_h, out_w, 3), dtype=np.uint8)
    for slot, frame in enumerate(frames):
        out[slot] = resize_frame(apply_orientation(frame, orientation), out_h, out_w)
    return DecodedVideo(
        path=os.fspath(path),
        frames=out,
        frame_indices=list(positions),
        timestamps_s=timestamps,
        source_fps=fps,
        source_frames=total,
        duration_s=total / fps,
        height=out_h,
        width=out_w,
        source_height=display_h,
        source_width=display_w,
        orientation=info.orientation,
        decoder=decoder,
        decoder_version=decoder_version(decoder),
    )
