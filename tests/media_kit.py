"""Real media files for the tests, encoded with PyAV: the one test kit for media.

Every video frame is a flat colour that encodes the frame index (:func:`index_code`) with a
small square moving across it, so consecutive frames differ in content and
:func:`read_index` recovers the index from a decoded, resized or rotated frame (its median
colour): a test can check that the *right* source frames were chosen, not only how many.
``seed`` changes the square's colour, so videos made with different seeds have different
content hashes (different cache keys) and still read back their indices.

Importable by the tests, by the scripts they run in subprocesses and by Ray workers.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

LEVEL = 16  # colour step per code digit; survives lossy compression (error < LEVEL / 2)


def index_code(index: int) -> tuple[int, int, int]:
    """RGB colour encoding ``index`` (0 <= index < 4096) as three base-16 digits."""
    digits = (index // 256, (index // 16) % 16, index % 16)
    return tuple(8 + LEVEL * d for d in digits)  # type: ignore[return-value]


def read_index(frame: np.ndarray) -> int:
    """Recover the index from a frame (H, W, 3) drawn by :func:`draw_frame`, any orientation."""
    colour = np.median(frame.reshape(-1, 3), axis=0)
    digits = [round(float(c - 8) / LEVEL) for c in colour]
    return digits[0] * 256 + digits[1] * 16 + digits[2]


def draw_frame(index: int, n_frames: int, width: int, height: int, seed: int = 0) -> np.ndarray:
    """The RGB picture of frame ``index``: the code colour with a moving square."""
    frame = np.empty((height, width, 3), dtype=np.uint8)
    frame[:] = index_code(index)
    side = max(2, min(height // 4, width // 8))
    travel = max(1, width - side)
    x = int(travel * index / max(1, n_frames - 1))
    y = (height - side) // 2
    frame[y : y + side, x : x + side] = (255, 255 - (37 * seed) % 256, 255 - (91 * seed) % 256)
    return frame


@dataclass
class MadeVideo:
    path: Path
    n_frames: int
    fps: float
    width: int
    height: int
    times_s: list[float]  # presentation time of each frame, from 0


def make_video(
    path: Path,
    n_frames: int,
    fps: float = 30,
    size: tuple[int, int] = (160, 120),
    codec: str = "libx264",
    rotation: int | None = None,
    vfr: bool = False,
    *,
    seed: int = 0,
    gop: int | None = None,
    faststart: bool = False,
    bframes: bool = True,
    keyframe_flags: bool = True,
    container_options: dict[str, str] | None = None,
) -> MadeVideo:
    """Encode ``n_frames`` frames of ``size`` (width, height) to ``path`` with PyAV.

    ``rotation`` sets the display matrix (degrees counter-clockwise); ``vfr`` spaces the
    first half of the frames at ``1/fps`` and the second half at ``1/(3 fps)``; ``gop``
    sets the keyframe interval; ``faststart`` moves the MP4 index to the front;
    ``keyframe_flags=False`` clears the keyframe flag of every packet;
    ``container_options`` go to the muxer (e.g. Matroska's ``live``).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    width, height = size
    options = dict(container_options or {})
    if faststart:
        options["movflags"] = "faststart"
    rate = Fraction(30000, 1001) if fps == 29.97 else Fraction(fps).limit_denominator(1001)
    time_base = Fraction(1, 30000)
    times: list[float] = []
    with av.open(str(path), mode="w", options=options) as container:
        stream = container.add_stream(codec, rate=rate)
        stream.width, stream.height = width, height
        stream.pix_fmt = "yuvj420p" if codec == "mjpeg" else "yuv420p"
        codec_options = {"crf": "12", "preset": "ultrafast" if width * height > 2e6 else "fast"}
        if not bframes:
            codec_options["bf"] = "0"  # FFmpeg's max_b_frames; libx264 has no "bframes" option
        if gop is not None:
            codec_options.update(g=str(gop), keyint_min=str(gop), sc_threshold="0")
        if codec == "libx264":
            stream.options = codec_options
        if rotation is not None:
            stream.set_display_rotation(rotation)
        stream.codec_context.time_base = time_base

        def mux(packets: list[av.Packet]) -> None:
            for packet in packets:
                packet.is_keyframe = packet.is_keyframe and keyframe_flags
                container.mux(packet)

        ticks = 0
        for index in range(n_frames):
            picture = draw_frame(index, n_frames, width, height, seed)
            frame = av.VideoFrame.from_ndarray(picture, format="rgb24")
            frame.pts, frame.time_base = ticks, time_base
            times.append(float(ticks * time_base))
            step = 1 / rate if not vfr or index < n_frames // 2 else 1 / (3 * rate)
            ticks += int(step / time_base)
            mux(stream.encode(frame))
        mux(stream.encode())
    return MadeVideo(path, n_frames, float(rate), width, height, times)


def make_image(path: Path, *, width: int = 80, height: int = 60, seed: int = 0) -> Path:
    """A PNG of random pixels (PyAV's image encoder); ``seed`` changes the content."""
    path.parent.mkdir(parents=True, exist_ok=True)
    image = np.random.default_rng(seed).integers(0, 255, size=(height, width, 3), dtype=np.uint8)
    with av.open(str(path), "w", format="image2") as container:
        stream = container.add_stream("png", rate=1)
        stream.width, stream.height, stream.pix_fmt = width, height, "rgb24"
        for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
            container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def make_audio_only(path: Path, seconds: float = 0.5) -> Path:
    """A file with a sine tone and no video: WAV for ``.wav``, else AAC in its container."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), mode="w") as container:
        codec = "pcm_s16le" if path.suffix == ".wav" else "aac"
        stream = container.add_stream(codec, rate=16000)
        samples = (np.sin(np.arange(int(16000 * seconds)) / 5) * 8000).astype(np.int16)
        frame = av.AudioFrame.from_ndarray(samples[np.newaxis], format="s16", layout="mono")
        frame.sample_rate = 16000
        for packet in stream.encode(frame):
            container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def truncate_copy(source: Path, target: Path, fraction: float) -> Path:
    """The first ``fraction`` of ``source``'s bytes (at least one) written to ``target``."""
    data = source.read_bytes()
    target.write_bytes(data[: max(1, int(len(data) * fraction))])
    return target


def make_avi_with_dropped_frames(path: Path, n_frames: int = 20, fps: int = 10) -> list[int]:
    """An MJPEG AVI whose frames 1, 2, 5, 6, 9, 10, ... are dropped (empty chunks).

    The header still declares ``n_frames`` frames at ``fps``, as capture software writes
    it; FFmpeg's demuxer skips the empty chunks, so only the kept frames are readable, with
    timestamps that jump over the gaps. Returns the kept frame numbers.
    """
    kept = []
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream("mjpeg", rate=fps)
        stream.width, stream.height = 96, 64
        stream.pix_fmt = "yuvj420p"
        stream.codec_context.time_base = Fraction(1, fps)
        for index in range(n_frames):
            frame = av.VideoFrame.from_ndarray(draw_frame(index, n_frames, 96, 64), "rgb24")
            frame.pts = index
            frame.time_base = Fraction(1, fps)
            for packet in stream.encode(frame):
                if index % 4 in (1, 2):
                    empty = av.Packet(b"")
                    empty.stream = stream
                    empty.pts, empty.dts = packet.pts, packet.dts
                    empty.time_base = packet.time_base
                    container.mux(empty)
                else:
                    kept.append(index)
                    container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return kept
