"""Facts about a video file without decoding it all: ``probe_video``.

Example:
    >>> probe_video("/no/such/clip.mp4")
    Traceback (most recent call last):
    ...
    videorl_kit.media.errors.MissingFileError: /no/such/clip.mp4: file does not exist
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from fractions import Fraction

import av
import av.error

from videorl_kit.media.container import FrameIndex, scan_frame_index, video_container
from videorl_kit.media.errors import DecodeError, NoFramesError
from videorl_kit.media.orientation import (
    Orientation,
    orientation_from_display_matrix,
    orientation_from_rotate_tag,
    swaps_axes,
)

__all__ = ["VideoInfo", "frame_orientation", "probe_video", "source_fps"]

_DEFAULT_FPS = Fraction(24)

_ROTATION_OF: dict[str, int] = {
    "identity": 0,
    "hflip": 0,
    "vflip": 0,
    "cclock": 90,
    "cclock_flip": 90,
    "rotate180": 180,
    "clock": 270,
    "clock_flip": 270,
}


@dataclass(frozen=True)
class VideoInfo:
    """What :func:`probe_video` learns about a video.

    ``width``/``height`` are the *display* size (after the rotation a player applies);
    ``coded_width``/``coded_height`` are the stored frame size. ``rotation`` is the display
    rotation in degrees counter-clockwise (0, 90, 180 or 270) and ``orientation`` the full
    transform including mirroring (see :mod:`videorl_kit.media.orientation`).
    ``frame_count_source`` says where ``source_frames`` came from: ``"header"`` (the
    container's count) or ``"index"`` (counted by demuxing every packet, no decoding).
    """

    path: str
    source_fps: float
    source_frames: int
    duration_s: float
    width: int
    height: int
    coded_width: int
    coded_height: int
    rotation: int
    orientation: Orientation
    codec: str
    frame_count_source: str


def source_fps(stream: av.VideoStream, index: FrameIndex | None = None) -> Fraction:
    """Return the stream's average frame rate as an exact fraction.

    The container's average rate (what decord reports, so qwen-vl-utils sees the same
    number), else the guessed rate, else 24 (the default transformers assumes). With an
    ``index``, a header rate more than 10% away from the measured rate (frames / duration)
    is replaced by the measured one: AVI files with dropped frames declare the nominal rate
    but store far fewer frames over the same duration.

    Example:
        >>> source_fps.__name__
        'source_fps'
    """
    header = next(
        (
            Fraction(r)
            for r in (stream.average_rate, stream.guessed_rate)
            if r is not None and r > 0
        ),
        None,
    )
    measured = None
    if index is not None and index.frame_count > 1 and not index.ordinal_only:
        duration = index.duration(header or _DEFAULT_FPS)
        if duration > 0:
            measured = index.frame_count / duration
    if header is not None and (measured is None or abs(measured - header) <= header / 10):
        return header
    return measured or header or _DEFAULT_FPS


def frame_orientation(frame: av.VideoFrame, stream: av.VideoStream) -> Orientation:
    """Return the display orientation of a decoded frame (display matrix, else ``rotate`` tag).

    Example:
        >>> frame_orientation.__name__
        'frame_orientation'
    """
    for side_data in frame.side_data:
        if side_data.type.name == "DISPLAYMATRIX":
            return orientation_from_display_matrix(bytes(side_data))
    return orientation_from_rotate_tag(stream.metadata.get("rotate"))


def _first_frame(container: av.container.InputContainer, stream: av.VideoStream) -> av.VideoFrame:
    try:
        for frame in container.decode(stream):
            return frame
    except av.error.FFmpegError as exc:
        raise DecodeError(container.name, f"cannot decode the first frame ({exc})") from None
    raise NoFramesError(container.name, "the video stream contains no decodable frame")


def probe_video(path: str | os.PathLike[str], *, exact: bool = False) -> VideoInfo:
    """Return fps, frame count, duration, display size, rotation and codec of a video.

    The frame count comes from the container header when it has one (MP4/MOV); otherwise,
    or with ``exact=True``, every packet is demuxed and counted (no decoding; the file is
    read once). The first frame is decoded to read the display matrix.

    Raises:
        MediaError: the subclass that says why the file cannot be read (see
            :mod:`videorl_kit.media.errors`).

    Example:
        >>> info = probe_video("clip.mp4")  # doctest: +SKIP
        >>> info.source_fps, info.source_frames, info.duration_s, info.width  # doctest: +SKIP
        (30.0, 150, 5.0, 320)
    """
    with video_container(path) as (container, stream):
        codec = stream.codec_context.name
        coded_width, coded_height = stream.codec_context.width, stream.codec_context.height
        declared = int(stream.frames or 0)
        first = _first_frame(container, stream)
        orientation = frame_orientation(first, stream)
        coded_width, coded_height = first.width or coded_width, first.height or coded_height
        index: FrameIndex | None = None
        if exact or declared <= 0:
            container.seek(0)
            index = scan_frame_index(container, stream)
        fps = source_fps(stream, index)
        if index is not None and index.frame_count:
            frames, count_source = index.frame_count, "index"
            duration = float(index.duration(fps))
        else:
            frames, count_source = declared, "header"
            duration = _header_duration(stream, container, frames, fps)
    width, height = (
        (coded_height, coded_width) if swaps_axes(orientation) else (coded_width, coded_height)
    )
    return VideoInfo(
        path=os.fspath(path),
        source_fps=float(fps),
        source_frames=frames,
        duration_s=duration,
        width=width,
        height=height,
        coded_width=coded_width,
        coded_height=coded_height,
        rotation=_ROTATION_OF[orientation],
        orientation=orientation,
        codec=codec,
        frame_count_source=count_source,
    )


def _header_duration(
    stream: av.VideoStream, container: av.container.InputContainer, frames: int, fps: Fraction
) -> float:
    if stream.duration and stream.time_base:
        return float(stream.duration * stream.time_base)
    if frames and fps:
        return float(frames / fps)
    return float(container.duration or 0) / av.time_base
