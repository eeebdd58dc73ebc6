"""The default video decoder, PyAV: seeks, and decodes only the frames it needs.

It picks frames like qwen-vl-utils (same count, same uniform positions, same output size;
see :mod:`videorl_kit.media.geometry`) and returns them with the timing metadata Qwen3-VL
needs. Decisions, each tested:

* **Reading.** The stream's packets are indexed first (demux only, no
  decoding) for an exact frame count, timestamps and keyframes; then only the needed frames
  are decoded, seeking to the keyframe before a target when that skips enough frames
  (``seek=False`` decodes sequentially; both give identical frames). While it decodes
  towards a target, the H.264 decoder skips non-reference pictures (``skip_frame=NONREF``)
  except those of the targets themselves: no other picture is predicted from them, so the
  kept frames are bit-identical, and B-frame-heavy files decode about twice as fast.
  Once the packets of a run's last target are sent, the decoder is drained instead of fed
  more packets (often the next GOP's keyframe) to push out the pictures it holds back for
  reordering. The file is opened once for the index and the decoding when the stream
  starts with a keyframe (the plan seeks back to it); any other way back to the start
  reopens the file, since a seek there can land late (MPEG-PS) or be refused (Matroska
  without a seek index: ``Operation not permitted``).
* **Variable frame rate.** Frames are chosen by time: position ``p`` of the uniform grid over
  ``N`` frames means the time ``p / (N - 1)`` of the way through the video and picks the
  frame whose timestamp is nearest. For constant frame rate this is frame ``p`` exactly
  (what qwen-vl-utils picks); for VFR it is the frame on screen then. ``timestamps_s`` are
  the chosen frames' own presentation times, relative to the first frame. ``source_fps`` is
  the container's average rate unless it disagrees with the timestamps by more than 10%
  (AVI files whose timestamps skip dropped frames); then it is frames / duration.
* **Rotation.** The display matrix (or legacy ``rotate`` tag) is applied, so frames look as
  a player shows them, and the size budget applies to the displayed shape. (decord and
  qwen-vl-utils ignore rotation: for rotated files their frames are sideways.)
* **Short videos.** A 1-frame video yields the frame repeated to fill the temporal patch
  (``frame_indices == [0, 0]``); qwen-vl-utils raises for it.
* **Truncated files.** If the frames stop well before the duration the header declares (more
  than 2 frame intervals + 1%), or reading stops with an error, ``TruncatedVideoError`` is
  raised. With ``allow_truncated=True`` the readable frames are sampled instead and
  ``truncation``/``warnings`` say so. Fewer frames than declared whose timestamps still span
  the whole duration (AVI captures with dropped frames) only add a warning. FFmpeg stops
  quietly at the cut of most containers, so the file's own structure is checked too
  (:func:`videorl_kit.media.cut.cut_short`: an Ogg page, Matroska segment, RIFF chunk, MP4
  box or MPEG packet that runs past the end of the file). A cut file whose header declares
  more frames, or (Matroska) a longer duration, than the frames before the cut is truncated
  as above. One whose header declares nothing to measure the cut by (Ogg, MPEG streams) has
  its readable frames sampled, always, with ``truncation`` naming the cut and a warning: the
  store caches them and records why (its ``truncation`` column).
* **Frames that never show.** Packets the demuxer marks discarded (MP4 samples outside the
  edit list) are not frames. If indexed frames still never come out of the decoder (a last
  packet it cannot decode), the frames that do decode are counted in one more pass and the
  sampling is done among them; ``source_frames`` is their count and a warning says so.
* **Untrustworthy timestamps.** Frames are matched to the index by timestamp and must come
  out of the decoder in increasing order; when they do not (B-frames in AVI, which has no
  presentation timestamps) the video is decoded again and frames are counted in output
  order, which is display order. A warning records it.
* **Resize.** Pillow's antialiased bicubic filter on float planes (no torch). Sizes equal
  qwen-vl-utils'; pixel values are within 1 level of its torchvision resize (see
  :mod:`videorl_kit.media.resize`). Frames are resized one at a time as they are decoded, so
  a 4000x3000 source never needs more than one full-size frame in memory.

Example:
    >>> import tempfile
    >>> from videorl_kit.core.budget import VideoBudget
    >>> from videorl_kit.synth.encode import write_mp4
    >>> clip = Path(tempfile.mkdtemp()) / "clip.mp4"
    >>> write_mp4(clip, [np.full((96, 128, 3), 8 * i, np.uint8) for i in range(30)], fps=10)
    >>> video = decode(clip, VideoBudget(max_pixels=50176), DecodeOptions())
    >>> video.frames.shape, video.frame_indices, video.timestamps_s
    ((6, 84, 140, 3), [0, 6, 12, 17, 23, 29], [0.0, 0.6, 1.2, 1.7, 2.3, 2.9])
    >>> version().startswith("av ")
    True
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import av.error
import numpy as np

from videorl_kit.core.budget import VideoBudget
from videorl_kit.core.errors import VideoRLKitError
from videorl_kit.media.budget import output_size, sample_count
from videorl_kit.media.container import FrameIndex, ThreadType, scan_frame_index, video_container
from videorl_kit.media.cut import cut_short
from videorl_kit.media.decoded import SAMPLER_VERSION, DecodedVideo
from videorl_kit.media.decoders import DecodeOptions
from videorl_kit.media.errors import DecodeError, NoFramesError, TruncatedVideoError
from videorl_kit.media.orientation import Orientation, apply_orientation, swaps_axes
from videorl_kit.media.probe import frame_orientation, source_fps
from videorl_kit.media.resize import resize_frame
from videorl_kit.media.sampling import ReadSegment, plan_reads, select_frames

__all__ = ["decode", "version"]

_MAX_DECODE_ERRORS = 16

NONREF_SKIP_CODECS = frozenset({"h264"})
"""Decoders whose ``skip_frame=NONREF`` drops only pictures that nothing references (H.264:
``nal_ref_idc == 0``). HEVC is left out: its "non-reference" NAL types may still be
referenced by pictures of a higher temporal sub-layer."""


def version() -> str:
    """PyAV's version, its libavcodec's and the sampler's (recorded with the frames)."""
    libavcodec = ".".join(map(str, av.library_versions["libavcodec"]))
    return f"av {av.__version__}; libavcodec {libavcodec}; sampler {SAMPLER_VERSION}"


class _FrameSink:
    """Orients, resizes and stores decoded frames into their output slots."""

    def __init__(self, path: Path, chosen: list[int], params: VideoBudget) -> None:
        self.path = path
        self.params = params
        self.slots: dict[int, list[int]] = {}
        for slot, position in enumerate(chosen):
            self.slots.setdefault(position, []).append(slot)
        self.n_frames = len(chosen)
        self.frames: np.ndarray | None = None
        self.orientation: Orientation = "identity"
        self.source_size = (0, 0)

    def keep(self, position: int, frame: av.VideoFrame, stream: av.VideoStream) -> None:
        rgb = frame.to_ndarray(format="rgb24")
        if self.frames is None:
            self.orientation = frame_orientation(frame, stream)
            height, width = rgb.shape[:2]
            if swaps_axes(self.orientation):
                height, width = width, height
            self.source_size = (height, width)
            out_h, out_w = output_size(self.path, height, width, self.n_frames, self.params)
            self.frames = np.empty((self.n_frames, out_h, out_w, 3), dtype=np.uint8)
        out_h, out_w = self.frames.shape[1:3]
        resized = resize_frame(apply_orientation(rgb, self.orientation), out_h, out_w)
        for slot in self.slots[position]:
            self.frames[slot] = resized


def _decoded_frames(
    container: av.container.InputContainer,
    stream: av.VideoStream,
    errors: list[str],
    keep_pts: frozenset[int] | None = None,
    drain_after: frozenset[int] | None = None,
) -> Iterator[av.VideoFrame]:
    """Yield decoded frames from the current position, skipping packets that fail.

    With ``keep_pts`` (and a decoder in :data:`NONREF_SKIP_CODECS`), packets whose pts is
    not in it are decoded with ``skip_frame=NONREF``: the decoder drops them if no other
    picture references them, so they produce no frame. A packet without pts continues the
    picture before it (e.g. its second field) and keeps that packet's setting.

    With ``drain_after``, once a packet of every pts in it has been sent (plus any pts-less
    packets that continue the last picture), no further packet is sent: the decoder is
    drained of the pictures it holds back for reordering, and the generator ends. Those
    pictures are already complete, so draining yields them bit-identical, without decoding
    the next packets (often the next GOP's keyframe) just to push them out. The decoder
    must then be reset by a seek before it decodes again.
    """
    codec = stream.codec_context
    skipping = keep_pts is not None and codec.name in NONREF_SKIP_CODECS
    kept = keep_pts or frozenset()
    unsent = set(drain_after) if drain_after else None
    mode = "DEFAULT"
    codec.skip_frame = mode  # a previous read may have left NONREF set
    packets = container.demux(stream)
    while True:
        try:
            packet = next(packets)
        except StopIteration:
            return
        except av.error.FFmpegError as exc:  # a read error: end of readable data
            errors.append(f"read error: {exc}")
            with contextlib.suppress(av.error.FFmpegError):
                yield from stream.codec_context.decode(None)  # flush buffered frames
            return
        if unsent is not None and not unsent and packet.pts is not None:
            try:  # every wanted picture has been sent: drain instead of decoding on
                yield from codec.decode(None)
            except av.error.FFmpegError as exc:
                errors.append(f"decode error while draining: {exc}")
            return
        if packet.size == 0 and (packet.pts is not None or packet.dts is not None):
            continue  # a null frame (repeat the previous picture); sending it would flush
        if unsent and packet.pts is not None:
            unsent.discard(packet.pts)
        if skipping and packet.pts is not None:
            wanted = "DEFAULT" if packet.pts in kept else "NONREF"
            if wanted != mode:
                codec.skip_frame = mode = wanted
        try:
            frames = packet.decode()
        except av.error.FFmpegError as exc:
            errors.append(f"decode error: {exc}")
            if len(errors) > _MAX_DECODE_ERRORS:
                raise DecodeError(container.name, f"too many decode errors: {errors[:3]}") from None
            continue
        yield from frames


class _PlanFailed(VideoRLKitError):
    """Frames could not be identified by timestamp; fall back to a plainer strategy."""


class _FramePositions:
    """Maps decoded frames to index positions by timestamp, checking they arrive in order.

    Decoders output pictures in display order, so positions must increase; when they do not
    (e.g. AVI with packed B-frames, whose timestamps are in decode order) the timestamps are
    not trustworthy and the caller falls back to counting frames in output order.
    """

    def __init__(self, index: FrameIndex) -> None:
        self.position_of_pts = {pts: position for position, pts in enumerate(index.pts)}
        self.previous = -1

    def restart(self) -> None:
        self.previous = -1

    def __call__(self, frame: av.VideoFrame) -> int:
        position = self.position_of_pts.get(frame.pts)
        if position is None:
            raise _PlanFailed(f"decoded a frame with unindexed pts {frame.pts}")
        if position <= self.previous:
            raise _PlanFailed(f"decoder output timestamps out of order at pts {frame.pts}")
        self.previous = position
        return position


class _Source:
    """The open container being decoded, and a dependable way back to its first frame.

    :meth:`restart` reopens the file rather than seeking back: a fresh demuxer always
    starts at the first packet, while a seek to the start can land late (MPEG-PS) or be
    refused outright (Matroska files whose blocks carry no keyframe flag have no seek
    index, and FFmpeg answers ``Operation not permitted``).
    """

    def __init__(self, path: Path, threads: int, thread_type: ThreadType | None) -> None:
        self.path, self.threads, self.thread_type = path, threads, thread_type
        self._stack = contextlib.ExitStack()
        self._open()

    def _open(self) -> None:
        self._stack.close()
        opened = video_container(self.path, threads=self.threads, thread_type=self.thread_type)
        self.container, self.stream = self._stack.enter_context(opened)
        self.fresh = True  # nothing read since opening

    def __enter__(self) -> _Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def scan(self) -> FrameIndex:
        """Index the stream (:func:`scan_frame_index`), which reads it to the end."""
        self.fresh = False
        return scan_frame_index(self.container, self.stream)

    def restart(self) -> None:
        """Position at the first packet: reopen unless nothing was read yet."""
        if not self.fresh:
            self._open()

    def seek(self, pts: int) -> None:
        """Seek to the keyframe at or before ``pts``; :class:`_PlanFailed` if refused."""
        self.fresh = False
        try:
            self.container.seek(pts, stream=self.stream, backward=True)
        except av.error.FFmpegError as exc:
            raise _PlanFailed(f"the demuxer refused a seek to pts {pts} ({exc})") from None

    def frames(
        self,
        errors: list[str],
        keep_pts: frozenset[int] | None = None,
        drain_after: frozenset[int] | None = None,
    ) -> Iterator[av.VideoFrame]:
        """Decoded frames from the current position (see :func:`_decoded_frames`)."""
        self.fresh = False
        return _decoded_frames(self.container, self.stream, errors, keep_pts, drain_after)


def _read_with_plan(
    source: _Source,
    index: FrameIndex,
    segments: list[ReadSegment],
    keep: Callable[[int, av.VideoFrame], None],
    errors: list[str],
    skip_nonreference: bool = True,
) -> None:
    positions = _FramePositions(index)
    keep_pts = (
        frozenset(index.pts[t] for segment in segments for t in segment.targets)
        if skip_nonreference
        else None
    )
    if not source.fresh and segments[0].seek_to is None and index.keyframes[:1] == (0,):
        # the index scan read the file to its end: seeking back to the first keyframe
        # spares a reopen; if it lands wrong, frames go missing and the plan fails over
        # to a sequential read from a reopened file
        segments = [ReadSegment(0, segments[0].targets), *segments[1:]]
    frames: Iterator[av.VideoFrame] | None = None
    floor = 0  # after a seek, frames before the keyframe may reference data we skipped
    done: set[int] = set()
    for number, segment in enumerate(segments):
        if segment.seek_to is not None or frames is None:
            if segment.seek_to is not None:
                source.seek(index.pts[segment.seek_to])
                floor = segment.seek_to
            else:
                source.restart()
            positions.restart()
            # the segments decoded by this one run of packets: up to the next seek
            run = [segment]
            for later in segments[number + 1 :]:
                if later.seek_to is not None:
                    break
                run.append(later)
            drain_after = frozenset(index.pts[t] for later in run for t in later.targets)
            frames = source.frames(errors, keep_pts, drain_after)
        remaining = set(segment.targets) - done
        last = max(segment.targets)
        for frame in frames:
            position = positions(frame)
            if position < floor:
                continue
            if position in remaining:
                keep(position, frame)
                done.add(position)
                remaining.discard(position)
            if not remaining or position >= last:
                break
        if remaining:
            raise _PlanFailed(f"frames {sorted(remaining)[:5]} were not produced")


def _output_frames(
    source: _Source, index: FrameIndex, errors: list[str], *, by_timestamp: bool
) -> Iterator[tuple[int, av.VideoFrame]]:
    """Decode from the start; yield each frame the decoder outputs with its index position.

    Frames are identified by timestamp (``by_timestamp``; :class:`_PlanFailed` when the
    timestamps are out of order) or by their order of output, skipping null frames, which
    produce no output.
    """
    source.restart()
    positions = _FramePositions(index)
    pictures = [p for p in range(index.frame_count) if p not in index.null_frames]
    for ordinal, frame in enumerate(source.frames(errors)):
        if by_timestamp:
            yield positions(frame), frame
        elif ordinal < len(pictures):
            yield pictures[ordinal], frame
        else:
            return  # more pictures than packets: nothing left to identify


def _read_sequential(
    source: _Source,
    index: FrameIndex,
    wanted: set[int],
    keep: Callable[[int, av.VideoFrame], None],
    errors: list[str],
    *,
    by_timestamp: bool,
) -> set[int]:
    """Decode from the start and keep the wanted positions; returns the ones never seen."""
    remaining = set(wanted)
    for position, frame in _output_frames(source, index, errors, by_timestamp=by_timestamp):
        if position in remaining:
            keep(position, frame)
            remaining.discard(position)
        if not remaining:
            break
    return remaining


def _decodable_positions(source: _Source, index: FrameIndex, *, by_timestamp: bool) -> list[int]:
    """The index positions whose frames the decoder really outputs (one full decode).

    A null frame counts when the picture it repeats decodes.
    """
    try:
        seen = {p for p, _ in _output_frames(source, index, [], by_timestamp=by_timestamp)}
    except _PlanFailed:
        seen = {p for p, _ in _output_frames(source, index, [], by_timestamp=False)}
    return [p for p in range(index.frame_count) if index.picture_position(p) in seen]


def _truncation_reason(index: FrameIndex, fps: Fraction) -> str | None:
    """Why the stream looks cut short, or ``None``.

    A header count above the frames present is only truncation when the frames also stop
    early in time: AVI files routinely declare dropped frames that the timestamps skip.
    """
    if index.read_error:
        return f"reading stopped after {index.frame_count} frames: {index.read_error}"
    covered = index.duration(fps)
    declared = index.declared_duration
    if declared is not None and covered + 2 / fps + declared / 100 < declared:
        return (
            f"file is truncated: frames cover {float(covered):.3f} s of the declared "
            f"{float(declared):.3f} s ({index.frame_count} of {index.declared_frames or '?'} "
            "frames present)"
        )
    if declared is None and index.missing_frames:
        return (
            f"file is truncated: the header declares {index.declared_frames} frames but only "
            f"{index.frame_count} are present"
        )
    return None


def _cut_measured(index: FrameIndex, fps: Fraction) -> str | None:
    """For a file that is cut short: what its header declares beyond the frames before the
    cut, or ``None`` when it declares nothing to measure the cut by."""
    present = index.frame_count + index.discarded
    if index.declared_frames and present < index.declared_frames:
        return f"the header declares {index.declared_frames} frames, {present} are before the cut"
    covered, declared = index.duration(fps), index.segment_duration
    if declared is not None and covered + 2 / fps + declared / 100 < declared:
        return (
            f"the header declares {float(declared):.3f} s, the frames before the cut cover "
            f"{float(covered):.3f} s"
        )
    return None


def _cut_reason(cut: str, index: FrameIndex, fps: Fraction) -> str:
    """The ``truncation`` text of a file whose structure shows a cut (``cut``)."""
    measured = _cut_measured(index, fps)
    if measured is not None:
        return f"file is truncated: {cut}; {measured}"
    return (
        f"file is cut short: {cut}; nothing in it says how long it was, so the "
        f"{index.frame_count} frames before the cut ({float(index.duration(fps)):.3f} s) "
        "are sampled"
    )


@dataclass
class _Sampled:
    """One sampling attempt: the chosen frames (ranks among ``candidates``) and their pixels."""

    candidates: list[int]
    chosen: list[int]
    sink: _FrameSink
    missing: set[int]


def decode(path: Path, params: VideoBudget, options: DecodeOptions) -> DecodedVideo:
    """Decode ``path``, sample frames and resize them by ``params``; see the module notes."""
    with _Source(path, options.threads, options.thread_type) as source:
        index = source.scan()
        fps = source_fps(source.stream, index)
        warnings = list(index.warnings)
        if index.frame_count == len(index.null_frames):
            if index.read_error:
                raise TruncatedVideoError(path, f"no frame could be read ({index.read_error})")
            raise NoFramesError(path, "the video stream contains no frames")
        truncation = _truncation_reason(index, fps)
        cut = None if truncation else cut_short(path)
        unmeasured = False
        if cut is not None:
            truncation, unmeasured = _cut_reason(cut, index, fps), not _cut_measured(index, fps)
        if truncation and not unmeasured and not options.allow_truncated:
            raise TruncatedVideoError(path, truncation)
        if truncation:
            warnings.append(truncation)
        elif index.missing_frames:
            warnings.append(
                f"the header declares {index.declared_frames} frames; {index.frame_count} are "
                "stored and their timestamps span the whole duration (dropped frames)"
            )
        times = (
            [Fraction(i) / fps for i in range(index.frame_count)]
            if index.ordinal_only
            else index.times()
        )
        errors: list[str] = []
        by_timestamp = not index.ordinal_only

        def sample(candidates: list[int]) -> _Sampled:
            """Choose frames among the index positions ``candidates`` and read them."""
            n_frames = sample_count(path, len(candidates), fps, params)
            chosen = select_frames([times[p] for p in candidates], n_frames)
            pictures = [index.picture_position(candidates[c]) for c in chosen]
            sink = _FrameSink(path, pictures, params)

            def keep(position: int, frame: av.VideoFrame) -> None:
                sink.keep(position, frame, source.stream)

            missing = _read_frames(
                source, index, set(pictures), keep, errors, warnings, options.seek,
                by_timestamp, options.skip_nonreference,
            )  # fmt: skip
            return _Sampled(candidates, chosen, sink, missing)

        sampled = sample(list(range(index.frame_count)))
        if sampled.missing:
            # some indexed frames never come out of the decoder (e.g. a last packet it
            # drops): sample again among the frames that really decode
            decodable = _decodable_positions(source, index, by_timestamp=by_timestamp)
            if 0 < len(decodable) < index.frame_count:
                warnings.append(
                    f"the container holds {index.frame_count} frames but only "
                    f"{len(decodable)} decode; frames are sampled from those {len(decodable)}"
                )
                sampled = sample(decodable)
    sink, missing = sampled.sink, sampled.missing
    if missing or sink.frames is None:
        detail = f"; errors: {errors[:3]}" if errors else ""
        raise DecodeError(
            path,
            f"could not decode source frames {sorted(missing)[:8]} of {index.frame_count}{detail}",
        )
    if errors:
        warnings.append(f"{len(errors)} decode error(s) skipped: {errors[:3]}")
    shown = [times[p] for p in sampled.candidates]
    out_h, out_w = sink.frames.shape[1:3]
    return DecodedVideo(
        path=os.fspath(path),
        frames=sink.frames,
        frame_indices=list(sampled.chosen),
        timestamps_s=[float(shown[i] - shown[0]) for i in sampled.chosen],
        source_fps=float(fps),
        source_frames=len(shown),
        duration_s=float(index.duration(fps)),
        height=out_h,
        width=out_w,
        source_height=sink.source_size[0],
        source_width=sink.source_size[1],
        orientation=sink.orientation,
        decoder="pyav",
        decoder_version=version(),
        truncation=truncation,
        warnings=tuple(warnings),
    )


def _read_frames(
    source: _Source,
    index: FrameIndex,
    wanted: set[int],
    keep: Callable[[int, av.VideoFrame], None],
    errors: list[str],
    warnings: list[str],
    seek: bool,
    by_timestamp: bool,
    skip_nonreference: bool = True,
) -> set[int]:
    """Seek plan (skipping unused non-reference pictures), else sequential by timestamp,
    else sequential by output order; the sequential reads decode every picture. Returns
    the wanted positions no read produced."""
    if seek and by_timestamp:
        try:
            segments = plan_reads(sorted(wanted), index.keyframes)
            _read_with_plan(source, index, segments, keep, errors, skip_nonreference)
            return set()
        except _PlanFailed as exc:
            warnings.append(f"seeking failed ({exc}); decoded sequentially")
    if by_timestamp:
        try:
            return _read_sequential(source, index, wanted, keep, errors, by_timestamp=True)
        except _PlanFailed as exc:
            warnings.append(f"frame timestamps unusable ({exc}); frames identified by order")
    return _read_sequential(source, index, wanted, keep, errors, by_timestamp=False)
