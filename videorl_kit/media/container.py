"""Opening media files with PyAV and indexing a video stream's frames without decoding them.

``open_video`` turns every way a file can fail to open into a :class:`MediaError` subclass
that names the file and the reason. ``scan_frame_index`` demuxes the video stream once
(reading packets, not decoding them) to learn the exact frame count, every frame's
presentation timestamp and where the keyframes are: the facts the sampler and the seeking
decoder need. Container headers alone are not reliable for this: ``stream.frames`` is 0 for
Matroska/WebM/MPEG-TS, and a header cannot reveal a truncated file.

Example:
    >>> open_video("/no/such/clip.mp4")
    Traceback (most recent call last):
    ...
    videorl_kit.media.errors.MissingFileError: /no/such/clip.mp4: file does not exist
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Literal

import av
import av.error

from videorl_kit.media.errors import (
    EmptyFileError,
    MissingFileError,
    NotAVideoError,
    NoVideoStreamError,
    TruncatedVideoError,
)

ThreadType = Literal["SLICE", "FRAME", "AUTO"]

__all__ = [
    "FrameIndex",
    "ThreadType",
    "check_media_file",
    "open_video",
    "scan_frame_index",
    "video_container",
]

# First bytes of containers FFmpeg reads; a file that starts like one of these but does not
# open is damaged (usually cut short), not "not a video".
_SIGNATURES: tuple[tuple[int, bytes, str], ...] = (
    (4, b"ftyp", "MP4/MOV"),
    (4, b"moov", "MP4/MOV"),
    (4, b"mdat", "MP4/MOV"),
    (4, b"free", "MP4/MOV"),
    (4, b"wide", "MP4/MOV"),
    (0, b"\x1a\x45\xdf\xa3", "Matroska/WebM"),
    (0, b"RIFF", "RIFF (AVI/WAV)"),
    (0, b"OggS", "Ogg"),
    (0, b"FLV", "FLV"),
    (0, b"\x00\x00\x01\xba", "MPEG-PS"),
    (0, b"\x30\x26\xb2\x75", "ASF/WMV"),
)


def check_media_file(path: str | os.PathLike[str]) -> Path:
    """Return ``path`` as a :class:`Path` after checking it is an existing, non-empty file.

    Raises:
        MissingFileError: nothing exists at the path, or it is a directory.
        EmptyFileError: the file has zero bytes.

    Example:
        >>> check_media_file("/no/such/clip.mp4")
        Traceback (most recent call last):
        ...
        videorl_kit.media.errors.MissingFileError: /no/such/clip.mp4: file does not exist
    """
    file = Path(path)
    if not file.exists():
        raise MissingFileError(file, "file does not exist")
    if not file.is_file():
        raise MissingFileError(file, "path is a directory, not a file")
    if file.stat().st_size == 0:
        raise EmptyFileError(file, "file is empty (0 bytes)")
    return file


def _describe_open_failure(file: Path, exc: Exception) -> Exception:
    with open(file, "rb") as handle:
        head = handle.read(64)
    for offset, magic, kind in _SIGNATURES:
        if head[offset : offset + len(magic)] == magic:
            return TruncatedVideoError(
                file,
                f"starts like a {kind} file but FFmpeg cannot read it; it is truncated or "
                f"its index is missing/corrupt ({exc})",
            )
    looks_like_text = bool(head) and all(32 <= b < 127 or b in (9, 10, 13) for b in head)
    kind = "a text file" if looks_like_text else "not a media file FFmpeg can read"
    return NotAVideoError(file, f"{kind} ({exc})")


def _usable_video_streams(container: av.container.InputContainer) -> list[av.VideoStream]:
    streams = []
    for stream in container.streams.video:
        # cover art in audio files is a one-picture "video" stream marked attached_pic
        if stream.disposition & av.stream.Disposition.attached_pic:
            continue
        streams.append(stream)
    return streams


def open_video(
    path: str | os.PathLike[str],
) -> tuple[av.container.InputContainer, av.VideoStream]:
    """Open ``path`` and return ``(container, first video stream)``; the caller closes it.

    Raises:
        MissingFileError, EmptyFileError: see :func:`check_media_file`.
        TruncatedVideoError: the file starts like a known container but cannot be opened
            (typically an MP4 cut before its ``moov`` index).
        NotAVideoError: the bytes are not a media container (e.g. text named ``.mp4``).
        NoVideoStreamError: the container has no video stream (e.g. audio only).

    Example:
        >>> open_video("/no/such/clip.mp4")
        Traceback (most recent call last):
        ...
        videorl_kit.media.errors.MissingFileError: /no/such/clip.mp4: file does not exist
    """
    file = check_media_file(path)
    try:
        container = av.open(str(file), mode="r", metadata_errors="ignore")
    except (av.error.FFmpegError, UnicodeDecodeError) as exc:
        raise _describe_open_failure(file, exc) from None
    streams = _usable_video_streams(container)
    if not streams:
        found = [s.type for s in container.streams]
        container.close()
        summary = ", ".join(f"{found.count(t)} {t}" for t in sorted(set(found))) or "none"
        raise NoVideoStreamError(file, f"no video stream (streams found: {summary})")
    return container, streams[0]


@contextmanager
def video_container(
    path: str | os.PathLike[str], *, threads: int = 1, thread_type: ThreadType | None = None
) -> Iterator[tuple[av.container.InputContainer, av.VideoStream]]:
    """Context manager around :func:`open_video` that sets decoder threads and closes.

    ``threads=0`` lets FFmpeg choose (one per core); the default of 1 suits process pools.
    ``thread_type`` is FFmpeg's: ``"SLICE"`` (parts of one picture in parallel),
    ``"FRAME"`` (several pictures in flight) or ``"AUTO"`` (both); by default ``"AUTO"``
    for more than one thread. Both are bit-exact; slice threads add no CPU time and no
    latency, frame threads delay every output by the thread count.

    Example:
        >>> with video_container("/no/such/clip.mp4") as (container, stream):
        ...     pass
        Traceback (most recent call last):
        ...
        videorl_kit.media.errors.MissingFileError: /no/such/clip.mp4: file does not exist
    """
    container, stream = open_video(path)
    try:
        stream.codec_context.thread_count = threads
        stream.codec_context.thread_type = thread_type or ("AUTO" if threads != 1 else "SLICE")
        yield container, stream
    finally:
        container.close()


@dataclass(frozen=True)
class FrameIndex:
    """The frames of one video stream, in presentation order, learned by demuxing.

    ``pts`` are sorted presentation timestamps in ``time_base`` units; ``keyframes`` are the
    positions (indices into ``pts``) of keyframes. ``null_frames`` are positions whose packet
    is empty: AVI's way of saying "show the previous picture again"; they count as frames
    (as in decord) but decode to the picture before them. ``declared_frames`` and
    ``declared_duration`` come from the header (0 / ``None`` when unknown);
    ``segment_duration`` is a Matroska segment's declared duration (``None`` for other
    formats, whose container durations FFmpeg estimates from the packets). ``ordinal_only``
    is set when timestamps are missing or repeated, so frames can only be identified by their
    order of output from the decoder.

    Example:
        >>> idx = FrameIndex(pts=(0, 512, 1024), keyframes=(0,), time_base=Fraction(1, 15360),
        ...                  durations=(512, 512, 512), declared_frames=3)
        >>> idx.frame_count, idx.times_s()
        (3, [0.0, 0.03333333333333333, 0.06666666666666667])
    """

    pts: tuple[int, ...]
    keyframes: tuple[int, ...]
    time_base: Fraction
    durations: tuple[int, ...]
    declared_frames: int = 0
    declared_duration: Fraction | None = None
    segment_duration: Fraction | None = None
    null_frames: frozenset[int] = frozenset()
    ordinal_only: bool = False
    read_error: str | None = None
    corrupt_packets: int = 0
    discarded: int = 0
    warnings: tuple[str, ...] = field(default=())

    @property
    def frame_count(self) -> int:
        """Number of frames found."""
        return len(self.pts)

    def times(self) -> list[Fraction]:
        """Exact presentation times of the frames, relative to the first frame, in seconds."""
        if not self.pts:
            return []
        first = self.pts[0]
        return [(p - first) * self.time_base for p in self.pts]

    def times_s(self) -> list[float]:
        """:meth:`times` as floats."""
        return [float(t) for t in self.times()]

    def duration(self, fallback_fps: Fraction) -> Fraction:
        """Time from the first frame's start to the last frame's end, in seconds."""
        if not self.pts:
            return Fraction(0)
        last = self.durations[-1] * self.time_base if self.durations[-1] > 0 else 1 / fallback_fps
        return (self.pts[-1] - self.pts[0]) * self.time_base + last

    @property
    def missing_frames(self) -> int:
        """Frames the header declares but the stream does not contain (0 when unknown).

        Discarded packets are not missing: the header counts them, but they are never shown.
        """
        return max(0, self.declared_frames - self.discarded - self.frame_count)

    def picture_position(self, position: int) -> int:
        """The position whose decoded picture frame ``position`` shows (skips null frames).

        Example:
            >>> idx = FrameIndex(pts=(0, 1, 2), keyframes=(0,), time_base=Fraction(1, 10),
            ...                  durations=(1, 1, 1), null_frames=frozenset({1, 2}))
            >>> [idx.picture_position(p) for p in range(3)]
            [0, 0, 0]
        """
        while position in self.null_frames and position > 0:
            position -= 1
        while position in self.null_frames and position < self.frame_count - 1:
            position += 1  # leading null frames show the first real picture
        return position


def scan_frame_index(container: av.container.InputContainer, stream: av.VideoStream) -> FrameIndex:
    """Demux every packet of ``stream`` (no decoding) and return its :class:`FrameIndex`.

    Leaves the container at its end; reopen (or seek) before decoding. A read error part way
    through is recorded in ``read_error`` rather than raised, so a truncated file still
    reports the frames it has.

    Example:
        >>> import av  # doctest: +SKIP
        >>> container, stream = open_video("clip.mp4")  # doctest: +SKIP
        >>> scan_frame_index(container, stream).frame_count  # doctest: +SKIP
        150
    """
    entries: list[tuple[int, int, bool, bool]] = []  # (pts, duration, keyframe, null)
    missing_pts = 0
    corrupt = discarded = 0
    read_error: str | None = None
    try:
        for packet in container.demux(stream):
            if packet.size == 0 and packet.pts is None and packet.dts is None:
                continue  # the flush packet demux yields at end of stream
            if packet.is_corrupt:
                corrupt += 1
                continue
            if packet.is_discard:
                discarded += 1
                continue
            pts = packet.pts if packet.pts is not None else packet.dts
            if pts is None:
                missing_pts += 1
                pts = entries[-1][0] + 1 if entries else 0
            null = packet.size == 0
            entries.append((pts, packet.duration or 0, bool(packet.is_keyframe) and not null, null))
    except av.error.FFmpegError as exc:
        read_error = str(exc)
    entries.sort(key=lambda e: e[0])
    pts = tuple(e[0] for e in entries)
    ordinal_only = missing_pts > 0 or len(set(pts)) != len(pts)
    warnings: list[str] = []
    if ordinal_only:
        warnings.append("frame timestamps are missing or repeated; frames identified by order")
    if corrupt:
        warnings.append(f"{corrupt} corrupt packet(s) skipped")
    if discarded:
        warnings.append(
            f"{discarded} packet(s) the container marks discarded (outside its edit list) are "
            f"never shown; frames are sampled from the {len(entries)} shown"
        )
    time_base = Fraction(stream.time_base) if stream.time_base else Fraction(1, 90000)
    declared_duration = stream.duration * time_base if stream.duration else None
    # Matroska declares its duration for the whole segment only, in its header (other
    # formats' container durations are FFmpeg's estimates from the packets it found)
    segment_duration = (
        Fraction(container.duration, 1_000_000)
        if container.duration and "matroska" in container.format.name
        else None
    )
    return FrameIndex(
        pts=pts,
        keyframes=tuple(i for i, e in enumerate(entries) if e[2]),
        time_base=time_base,
        durations=tuple(e[1] for e in entries),
        declared_frames=int(stream.frames or 0),
        declared_duration=declared_duration,
        segment_duration=segment_duration,
        null_frames=frozenset(i for i, e in enumerate(entries) if e[3]),
        ordinal_only=ordinal_only,
        read_error=read_error,
        corrupt_packets=corrupt,
        discarded=discarded,
        warnings=tuple(warnings),
    )
