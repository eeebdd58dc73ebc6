"""What decoders that read frames by index share: the steps around the library's read.

decord and torchcodec read frames by index as qwen-vl-utils does with them: the library
gives the frame count and average frame rate,
:func:`~videorl_kit.media.budget.sample_count` and
:func:`~videorl_kit.media.geometry.uniform_frame_indices` choose the frames, the library
reads them. :func:`decode_by_index` wraps such a read (an :data:`IndexedRead`) with what every
decoder of the kit does alike: PyAV opens the file first (:func:`probe_video`), so bad input
raises the same :class:`~videorl_kit.media.errors.MediaError` subclasses whatever the decoder,
and the frames get the display orientation and the resize of the PyAV path. A file whose
structure shows it was cut short (:func:`~videorl_kit.media.cut.cut_short`) keeps the frames the
library read, with ``truncation`` and a warning saying so.

Example (a "library" that reads every frame as mid grey):
    >>> import tempfile
    >>> from fractions import Fraction
    >>> from videorl_kit.media.budget import sample_count
    >>> from videorl_kit.media.geometry import uniform_frame_indices
    >>> from videorl_kit.synth.encode import write_mp4
    >>> clip = Path(tempfile.mkdtemp()) / "clip.mp4"
    >>> write_mp4(clip, [np.full((64, 96, 3), 128, np.uint8)] * 10, fps=5)
    >>> def read_grey(path, params, threads):
    ...     positions = uniform_frame_indices(10, sample_count(path, 10, Fraction(5), params))
    ...     frames = np.full((len(positions), 64, 96, 3), 128, np.uint8)
    ...     return IndexedFrames(frames, 10, 5.0, positions, [p / 5 for p in positions])
    >>> video = decode_by_index(clip, VideoBudget(), DecodeOptions(), "grey", "grey 1",
    ...                         read_grey)
    >>> video.frame_indices, video.frames.shape, video.decoder
    ([0, 3, 6, 9], (4, 56, 84, 3), 'grey')
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from videorl_kit.core.budget import VideoBudget
from videorl_kit.media.budget import output_size
from videorl_kit.media.cut import cut_short
from videorl_kit.media.decoded import DecodedVideo
from videorl_kit.media.decoders import DecodeOptions
from videorl_kit.media.orientation import apply_orientation, swaps_axes
from videorl_kit.media.probe import probe_video
from videorl_kit.media.resize import resize_frame

__all__ = ["IndexedFrames", "IndexedRead", "decode_by_index"]


@dataclass(frozen=True)
class IndexedFrames:
    """What a library read: the chosen frames (coded orientation) and the source's facts."""

    frames: np.ndarray  # uint8 (T, H, W, 3) as the library returns them
    total_frames: int
    fps: float
    positions: list[int]  # the source frame behind each of the T frames
    timestamps_s: list[float]  # their times, from the first frame


IndexedRead = Callable[[Path, VideoBudget, int], IndexedFrames]
"""``read(path, params, threads)``: choose the frames to sample and read them."""


def decode_by_index(
    path: Path,
    params: VideoBudget,
    options: DecodeOptions,
    name: str,
    version: str,
    read: IndexedRead,
) -> DecodedVideo:
    """Probe ``path`` with PyAV, ``read`` its frames, orient and resize them."""
    info = probe_video(path)  # classifies bad input and reads the display orientation
    got = read(path, params, options.threads)
    orientation = info.orientation
    coded_h, coded_w = got.frames.shape[1:3]
    if swaps_axes(orientation) and (coded_h, coded_w) == (info.height, info.width):
        orientation = "identity"  # the library already turned the frames
    display_h, display_w = (coded_w, coded_h) if swaps_axes(orientation) else (coded_h, coded_w)
    out_h, out_w = output_size(path, display_h, display_w, len(got.positions), params)
    out = np.empty((len(got.positions), out_h, out_w, 3), dtype=np.uint8)
    for slot, frame in enumerate(got.frames):
        out[slot] = resize_frame(apply_orientation(frame, orientation), out_h, out_w)
    cut = cut_short(path)
    truncation = f"file is cut short: {cut}; {name} read the frames before the cut" if cut else None
    return DecodedVideo(
        path=os.fspath(path),
        frames=out,
        frame_indices=list(got.positions),
        timestamps_s=list(got.timestamps_s),
        source_fps=got.fps,
        source_frames=got.total_frames,
        duration_s=got.total_frames / got.fps,
        height=out_h,
        width=out_w,
        source_height=display_h,
        source_width=display_w,
        orientation=info.orientation,
        decoder=name,
        decoder_version=version,
        truncation=truncation,
        warnings=(truncation,) if truncation else (),
    )
